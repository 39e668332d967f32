// samples/mlp-train.mlir's training step on a 4x2 mesh: the batch @S0 split over x (data
// parallel), the hidden dim 512 over y (tensor parallel: w1 by columns, w2 by rows, as in
// Megatron-LM). Contractions and sums over a split dim leave partial sums ({..., +x}),
// which all_reduce completes; every output equals the one-device step's.
//
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
mesh {x = 4, y = 2}
func.func @main(%x: tensor<?x?x64, [@S0, @S1, @C64], {x, _, _}>, %y: tensor<?x?x64, [@S0, @S1, @C64], {x, _, _}>, %w1: tensor<64x512, {_, y}>, %b1: tensor<512, {y}>, %w2: tensor<512x64, {y, _}>, %b2: tensor<64>) {
  %two = constant() {value = 2.0} -> tensor<f32>
  %one = constant() {value = 1.0} -> tensor<f32>
  %lr = constant() {value = 0.01} -> tensor<f32>
  %twob = broadcast_in_dim(%two) {dims = []} -> tensor<?x64, [@S2, @C64], {x, _}>
  %oneb = broadcast_in_dim(%one) {dims = []} -> tensor<?x512, [@S2, @C512], {x, y}>
  %lrw1 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x512, {_, y}>
  %lrb1 = broadcast_in_dim(%lr) {dims = []} -> tensor<512, {y}>
  %lrw2 = broadcast_in_dim(%lr) {dims = []} -> tensor<512x64, {y, _}>
  %lrb2 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  // Forward: each device its batch rows and its half of the hidden units.
  %x2 = reshape(%x) -> tensor<?x64, [@S2, @C64], {x, _}>
  %y2 = reshape(%y) -> tensor<?x64, [@S2, @C64], {x, _}>
  %h = dot(%x2, %w1) -> tensor<?x512, [@S2, @C512], {x, y}>
  %b1b = broadcast_in_dim(%b1) {dims = [1]} -> tensor<?x512, [@S2, @C512], {x, y}>
  %hb = add(%h, %b1b) -> tensor<?x512, [@S2, @C512], {x, y}>
  %sg = logistic(%hb) -> tensor<?x512, [@S2, @C512], {x, y}>
  %a = mul(%hb, %sg) -> tensor<?x512, [@S2, @C512], {x, y}>
  %op = dot(%a, %w2) -> tensor<?x64, [@S2, @C64], {x, _, +y}>
  %o = all_reduce(%op) -> tensor<?x64, [@S2, @C64], {x, _}>
  %b2b = broadcast_in_dim(%b2) {dims = [1]} -> tensor<?x64, [@S2, @C64], {x, _}>
  %ob = add(%o, %b2b) -> tensor<?x64, [@S2, @C64], {x, _}>
  // Loss: sum of squared errors over the whole batch.
  %d = sub(%ob, %y2) -> tensor<?x64, [@S2, @C64], {x, _}>
  %sq = mul(%d, %d) -> tensor<?x64, [@S2, @C64], {x, _}>
  %lossp = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32, {+x}>
  %loss = all_reduce(%lossp) -> tensor<f32>
  // Backward.
  %dob = mul(%d, %twob) -> tensor<?x64, [@S2, @C64], {x, _}>
  %db2p = reduce(%dob) {dims = [0], kind = "sum"} -> tensor<64, {_, +x}>
  %db2 = all_reduce(%db2p) -> tensor<64>
  %at = transpose(%a) {perm = [1, 0]} -> tensor<512x?, [@C512, @S2], {y, x}>
  %dw2p = dot(%at, %dob) -> tensor<512x64, {y, _, +x}>
  %dw2 = all_reduce(%dw2p) -> tensor<512x64, {y, _}>
  %w2t = transpose(%w2) {perm = [1, 0]} -> tensor<64x512, {_, y}>
  %da = dot(%dob, %w2t) -> tensor<?x512, [@S2, @C512], {x, y}>
  %oms = sub(%oneb, %sg) -> tensor<?x512, [@S2, @C512], {x, y}>
  %t1 = mul(%hb, %oms) -> tensor<?x512, [@S2, @C512], {x, y}>
  %t2 = add(%oneb, %t1) -> tensor<?x512, [@S2, @C512], {x, y}>
  %t3 = mul(%sg, %t2) -> tensor<?x512, [@S2, @C512], {x, y}>
  %dhb = mul(%da, %t3) -> tensor<?x512, [@S2, @C512], {x, y}>
  %db1p = reduce(%dhb) {dims = [0], kind = "sum"} -> tensor<512, {y, +x}>
  %db1 = all_reduce(%db1p) -> tensor<512, {y}>
  %dw1p = dot_general(%x2, %dhb) {lhs_contract = [0], rhs_contract = [0]} -> tensor<64x512, {_, y, +x}>
  %dw1 = all_reduce(%dw1p) -> tensor<64x512, {_, y}>
  // SGD, each device on its own parameter blocks.
  %u1 = mul(%dw1, %lrw1) -> tensor<64x512, {_, y}>
  %w1n = sub(%w1, %u1) -> tensor<64x512, {_, y}>
  %ub1 = mul(%db1, %lrb1) -> tensor<512, {y}>
  %b1n = sub(%b1, %ub1) -> tensor<512, {y}>
  %u2 = mul(%dw2, %lrw2) -> tensor<512x64, {y, _}>
  %w2n = sub(%w2, %u2) -> tensor<512x64, {y, _}>
  %ub2 = mul(%db2, %lrb2) -> tensor<64>
  %b2n = sub(%b2, %ub2) -> tensor<64>
  return %loss, %w1n, %b1n, %w2n, %b2n
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 16, max = 2048}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}

// CHECK:       mesh {x = 4, y = 2}
// CHECK:         %op = dot(%a, %w2) -> tensor<?x64, [@S2, @C64], {x, _, +y}>
// CHECK-NEXT:    %o = all_reduce(%op) -> tensor<?x64, [@S2, @C64], {x, _}>
// CHECK:         %lossp = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32, {+x}>
// CHECK:         return %loss, %w1n, %b1n, %w2n, %b2n
