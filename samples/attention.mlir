// One multi-head self-attention block (hidden 256, 4 heads of 64), forward and backward,
// with a squared-error loss against a target: the gradients of the four projection
// weights. Batch @S0 and sequence @S1 are symbolic; @S2 = @S0 * @S1 counts the tokens.
// The attention scores are [batch x heads x seq x seq], so the memory is quadratic in
// @S1 and the order in which the score-sized temporaries die decides the peak.
//
// The listing is in a tracer's order: the scale broadcast to the score shape is hoisted
// to the top, the targets are reshaped up front, the backward pass computes the value
// gradient (which needs the probabilities) last and the weight gradients at the end.
//
// The list scheduler's order for this block is worse than the listing's: walking back
// from the outputs it places the loss (which frees a [tokens x 256] tensor) last, which
// keeps %diff resident across the whole backward pass, and it computes the value
// gradient after the softmax backward, which keeps %dctx resident across the score-sized
// peak. Its symbolic peak is not provably at most the listing's, so the pass keeps the
// listing's order unchanged (benchmarks/bench_schedule.py measures this).
//
// Orders found with exact sizes are kept as schedule versions (@main.v1 to v3): the
// list scheduler's at one end of the ranges, and optimal orders (the exact search over
// the sets of ops executed, for graphs this small), each better than the others for some
// bindings; the runtime runs the lowest of them per binding.
//
// RUN: bladec optimize -p analyze,schedule %s | filecheck %s
// RUN: bladec optimize -p analyze,schedule %s | bladec optimize -p schedule - | filecheck %s
//
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    schedule.versions() {funcs = [@main.v1, @main.v2, @main.v3]}
// CHECK-NEXT:    %scale = constant() {value = 0.125} -> tensor<f32>
// CHECK-NEXT:    %scb = broadcast_in_dim(%scale) {dims = []} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
// CHECK:         %p = div(%e, %denb)
// CHECK-NEXT:    %ctx = dot_general(%p, %vt)
// CHECK:         %sq = mul(%diff, %diff)
// CHECK-NEXT:    %loss = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
// CHECK-NEXT:    %dout = add(%diff, %diff)
// CHECK:         %dss = mul(%ds, %scb)
// CHECK-NEXT:    %dq = dot_general(%dss, %kt)
// CHECK:         %dwv = dot_general(%x2, %dv2)
// CHECK-NEXT:    return %loss, %dwq, %dwk, %dwv, %dwo
func.func @main(%x: tensor<?x?x256, [@S0, @S1, @C256]>, %y: tensor<?x?x256, [@S0, @S1, @C256]>, %wq: tensor<256x256>, %wk: tensor<256x256>, %wv: tensor<256x256>, %wo: tensor<256x256>) {
  %scale = constant() {value = 0.125} -> tensor<f32>
  %scb = broadcast_in_dim(%scale) {dims = []} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %y2 = reshape(%y) -> tensor<?x256, [@S2, @C256]>
  %x2 = reshape(%x) -> tensor<?x256, [@S2, @C256]>
  // Projections, split into heads.
  %q = dot(%x2, %wq) -> tensor<?x256, [@S2, @C256]>
  %k = dot(%x2, %wk) -> tensor<?x256, [@S2, @C256]>
  %v = dot(%x2, %wv) -> tensor<?x256, [@S2, @C256]>
  %q4 = reshape(%q) -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %k4 = reshape(%k) -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %v4 = reshape(%v) -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %qt = transpose(%q4) {perm = [0, 2, 1, 3]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  %kt = transpose(%k4) {perm = [0, 2, 1, 3]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  %vt = transpose(%v4) {perm = [0, 2, 1, 3]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  // Scores and a numerically stable softmax over the keys.
  %s = dot_general(%qt, %kt) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %ss = mul(%s, %scb) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %mx = reduce(%ss) {dims = [3], kind = "max"} -> tensor<?x4x?, [@S0, @C4, @S1]>
  %mxb = broadcast_in_dim(%mx) {dims = [0, 1, 2]} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %sh = sub(%ss, %mxb) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %e = exp(%sh) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %den = reduce(%e) {dims = [3], kind = "sum"} -> tensor<?x4x?, [@S0, @C4, @S1]>
  %denb = broadcast_in_dim(%den) {dims = [0, 1, 2]} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %p = div(%e, %denb) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %ctx = dot_general(%p, %vt) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  %ctxt = transpose(%ctx) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %ctx2 = reshape(%ctxt) -> tensor<?x256, [@S2, @C256]>
  %out = dot(%ctx2, %wo) -> tensor<?x256, [@S2, @C256]>
  // Loss: sum of squared errors.
  %diff = sub(%out, %y2) -> tensor<?x256, [@S2, @C256]>
  %sq = mul(%diff, %diff) -> tensor<?x256, [@S2, @C256]>
  %loss = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  // Backward through the output projection.
  %dout = add(%diff, %diff) -> tensor<?x256, [@S2, @C256]>
  %dwo = dot_general(%ctx2, %dout) {lhs_contract = [0], rhs_contract = [0]} -> tensor<256x256>
  %wot = transpose(%wo) {perm = [1, 0]} -> tensor<256x256>
  %dctx2 = dot(%dout, %wot) -> tensor<?x256, [@S2, @C256]>
  %dctx4 = reshape(%dctx2) -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %dctx = transpose(%dctx4) {perm = [0, 2, 1, 3]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  // Backward through the softmax: ds = p * (dp - sum_j(p * dp)).
  %dp = dot_general(%dctx, %vt) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %pdp = mul(%p, %dp) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %rs = reduce(%pdp) {dims = [3], kind = "sum"} -> tensor<?x4x?, [@S0, @C4, @S1]>
  %rsb = broadcast_in_dim(%rs) {dims = [0, 1, 2]} -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %dpm = sub(%dp, %rsb) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %ds = mul(%p, %dpm) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %dss = mul(%ds, %scb) -> tensor<?x4x?x?, [@S0, @C4, @S1, @S1]>
  %dq = dot_general(%dss, %kt) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  %dk = dot_general(%dss, %qt) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [2], rhs_contract = [2]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  %dv = dot_general(%p, %dctx) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [2], rhs_contract = [2]} -> tensor<?x4x?x64, [@S0, @C4, @S1, @C64]>
  // Back to tokens, and the projection weight gradients.
  %dqt = transpose(%dq) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %dkt = transpose(%dk) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %dvt = transpose(%dv) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x64, [@S0, @S1, @C4, @C64]>
  %dq2 = reshape(%dqt) -> tensor<?x256, [@S2, @C256]>
  %dk2 = reshape(%dkt) -> tensor<?x256, [@S2, @C256]>
  %dv2 = reshape(%dvt) -> tensor<?x256, [@S2, @C256]>
  %dwq = dot_general(%x2, %dq2) {lhs_contract = [0], rhs_contract = [0]} -> tensor<256x256>
  %dwk = dot_general(%x2, %dk2) {lhs_contract = [0], rhs_contract = [0]} -> tensor<256x256>
  %dwv = dot_general(%x2, %dv2) {lhs_contract = [0], rhs_contract = [0]} -> tensor<256x256>
  return %loss, %dwq, %dwk, %dwv, %dwo
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 32}
  SymbolicDim @S1 {min = 16, max = 2048}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
