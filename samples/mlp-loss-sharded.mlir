// The forward pass of a two-layer tanh regression on a 4x2 mesh, with a scalar
// squared-error loss: `grad` writes its sharded training graph. The batch @S0 is split
// over x (data parallel); %w1 is stored split over y by rows and moved to a split by
// columns (column parallel) for the first contraction; the hidden units are gathered
// for the second, whose weight %w2 every device holds whole. The loss's sum over the
// split batch leaves partial sums over x, which an all_reduce adds up. (A listing with
// only its inputs split gets these types from `propagate`: `-p propagate,grad`.)
// In the backward each collective's adjoint brings the cotangent back to its operand's
// split: all_gather's is a shard_slice, all_to_all's the inverse all_to_all, after the
// all_reduce (which `grad` has `propagate` insert) of the weight gradient's partial
// sums over the batch; the loss's all_reduce passes the whole cotangent to each part.
//
// RUN: bladec optimize -p grad{wrt=static} %s | filecheck %s
// RUN: bladec optimize -p grad{wrt=static} %s | bladec optimize -p verify - | filecheck %s
//
// CHECK-LABEL: func.func @main(
// CHECK:         %loss = all_reduce(%loss.p) -> tensor<f32>
// CHECK:         %grad_w2 = all_reduce(%{{.*}}) -> tensor<16x4, [@C16, @C4]>
// CHECK:         shard_slice(%{{.*}}) {dim = 1, axis = "y"} -> tensor<?x16, [@S0, @C16], {x, y}>
// CHECK:         all_reduce(%{{.*}}) -> tensor<8x16, [@C8, @C16], {_, y}>
// CHECK:         %grad_w1 = all_to_all(%{{.*}}) {src = 1, dst = 0, count = 1} -> tensor<8x16, {y, _}>
// CHECK:         return %loss, %grad_w1, %grad_w2
mesh {x = 4, y = 2}
func.func @main(%x: tensor<?x8, [@S0, @C8], {x, _}>, %w1: tensor<8x16, {y, _}>, %w2: tensor<16x4>, %t: tensor<?x4, [@S0, @C4], {x, _}>) {
  %w1s = all_to_all(%w1) {src = 0, dst = 1} -> tensor<8x16, {_, y}>
  %h = dot(%x, %w1s) -> tensor<?x16, {x, y}>
  %a = tanh(%h) -> tensor<?x16, {x, y}>
  %ag = all_gather(%a) {dim = 1} -> tensor<?x16, {x, _}>
  %o = dot(%ag, %w2) -> tensor<?x4, {x, _}>
  %d = sub(%o, %t) -> tensor<?x4, {x, _}>
  %s = mul(%d, %d) -> tensor<?x4, {x, _}>
  %loss.p = reduce(%s) {dims = [0, 1]} -> tensor<f32, {+x}>
  %loss = all_reduce(%loss.p) -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 4, max = 4096}
}
