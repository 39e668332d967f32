// One SGD training step of a two-layer MLP (64 -> 512 -> 64, SiLU) on a regression
// target, written out by hand: forward, squared-error loss, backward, update. Batch @S0
// and sequence @S1 are symbolic; @S2 = @S0 * @S1 counts the tokens (the rows).
//
// The listing is in the order a tracer emits it: every constant and every broadcast of a
// constant is hoisted to the top, and the backward pass computes the weight gradients
// before the activation gradients. The hoisted [tokens x 512] broadcasts are resident
// through the whole forward pass; a good schedule sinks each broadcast to its use and
// frees the forward activations as early as the backward pass allows.
//
// A second order is kept as a schedule version (@main.v1), better for some bindings.
//
// RUN: bladec optimize -p analyze,schedule %s | filecheck %s
// RUN: bladec optimize -p analyze,schedule %s | bladec optimize -p schedule - | filecheck %s
//
// No hoisted constant or broadcast stays at the top:
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    schedule.versions() {funcs = [@main.v1]}
// CHECK-NEXT:    %x2 = reshape(%x)
// CHECK-NOT:     %oneb =
// CHECK:         %hb = add(%h, %b1b)
// The SiLU derivative factor is formed while %hb and %sg are live anyway, before the
// second layer, so both die in the forward pass:
// CHECK:         %t3 = mul(%sg, %t2)
// CHECK:         %o = dot(%a, %w2)
// The targets are reshaped where they are needed, the broadcasts where they are used:
// CHECK:         %y2 = reshape(%y)
// CHECK-NEXT:    %d = sub(%ob, %y2)
// CHECK:         %twob = broadcast_in_dim(%two) {dims = []}
// CHECK-NEXT:    %dob = mul(%d, %twob)
// CHECK:         %lrw2 = broadcast_in_dim(%lr) {dims = []}
// CHECK-NEXT:    %u2 = mul(%dw2, %lrw2)
// CHECK:         %lrw1 = broadcast_in_dim(%lr) {dims = []}
// CHECK-NEXT:    %u1 = mul(%dw1, %lrw1)
// CHECK:         return %loss, %w1n, %b1n, %w2n, %b2n
func.func @main(%x: tensor<?x?x64, [@S0, @S1, @C64]>, %y: tensor<?x?x64, [@S0, @S1, @C64]>, %w1: tensor<64x512>, %b1: tensor<512>, %w2: tensor<512x64>, %b2: tensor<64>) {
  // Constants, hoisted.
  %two = constant() {value = 2.0} -> tensor<f32>
  %one = constant() {value = 1.0} -> tensor<f32>
  %lr = constant() {value = 0.01} -> tensor<f32>
  %twob = broadcast_in_dim(%two) {dims = []} -> tensor<?x64, [@S2, @C64]>
  %oneb = broadcast_in_dim(%one) {dims = []} -> tensor<?x512, [@S2, @C512]>
  %lrw1 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x512>
  %lrb1 = broadcast_in_dim(%lr) {dims = []} -> tensor<512>
  %lrw2 = broadcast_in_dim(%lr) {dims = []} -> tensor<512x64>
  %lrb2 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  // Forward.
  %x2 = reshape(%x) -> tensor<?x64, [@S2, @C64]>
  %y2 = reshape(%y) -> tensor<?x64, [@S2, @C64]>
  %h = dot(%x2, %w1) -> tensor<?x512, [@S2, @C512]>
  %b1b = broadcast_in_dim(%b1) {dims = [1]} -> tensor<?x512, [@S2, @C512]>
  %hb = add(%h, %b1b) -> tensor<?x512, [@S2, @C512]>
  %sg = logistic(%hb) -> tensor<?x512, [@S2, @C512]>
  %a = mul(%hb, %sg) -> tensor<?x512, [@S2, @C512]>
  %o = dot(%a, %w2) -> tensor<?x64, [@S2, @C64]>
  %b2b = broadcast_in_dim(%b2) {dims = [1]} -> tensor<?x64, [@S2, @C64]>
  %ob = add(%o, %b2b) -> tensor<?x64, [@S2, @C64]>
  // Loss: sum of squared errors.
  %d = sub(%ob, %y2) -> tensor<?x64, [@S2, @C64]>
  %sq = mul(%d, %d) -> tensor<?x64, [@S2, @C64]>
  %loss = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  // Backward: d loss / d ob = 2 d.
  %dob = mul(%d, %twob) -> tensor<?x64, [@S2, @C64]>
  %db2 = reduce(%dob) {dims = [0], kind = "sum"} -> tensor<64>
  %at = transpose(%a) {perm = [1, 0]} -> tensor<512x?, [@C512, @S2]>
  %dw2 = dot(%at, %dob) -> tensor<512x64>
  %w2t = transpose(%w2) {perm = [1, 0]} -> tensor<64x512>
  %da = dot(%dob, %w2t) -> tensor<?x512, [@S2, @C512]>
  // SiLU': sg * (1 + hb * (1 - sg)).
  %oms = sub(%oneb, %sg) -> tensor<?x512, [@S2, @C512]>
  %t1 = mul(%hb, %oms) -> tensor<?x512, [@S2, @C512]>
  %t2 = add(%oneb, %t1) -> tensor<?x512, [@S2, @C512]>
  %t3 = mul(%sg, %t2) -> tensor<?x512, [@S2, @C512]>
  %dhb = mul(%da, %t3) -> tensor<?x512, [@S2, @C512]>
  %db1 = reduce(%dhb) {dims = [0], kind = "sum"} -> tensor<512>
  %dw1 = dot_general(%x2, %dhb) {lhs_contract = [0], rhs_contract = [0]} -> tensor<64x512>
  // SGD.
  %u1 = mul(%dw1, %lrw1) -> tensor<64x512>
  %w1n = sub(%w1, %u1) -> tensor<64x512>
  %ub1 = mul(%db1, %lrb1) -> tensor<512>
  %b1n = sub(%b1, %ub1) -> tensor<512>
  %u2 = mul(%dw2, %lrw2) -> tensor<512x64>
  %w2n = sub(%w2, %u2) -> tensor<512x64>
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
