// The forward pass of a one-layer tanh regression, written by hand, with a scalar
// squared-error loss: `grad{wrt=static}` writes its training graph. %x and %y have the
// dynamic batch @S0, so they are data; %w and %bias, of static shape, are trained (plain
// `grad` differentiates by the first input, %x, as jax.grad does).
//
// RUN: bladec optimize -p grad{wrt=static} %s | filecheck %s
// RUN: bladec optimize -p grad{wrt=static} %s | bladec optimize -p verify - | filecheck %s
//
// The forward ops come first, unchanged; %d has two uses in %s, so its cotangent is the
// sum of both; tanh's adjoint reads the forward %t; the weight's gradient is a contraction
// over the batch, which stays a symbol:
// CHECK-LABEL: func.func @main(
// CHECK:         %loss = reduce(%s) {dims = [0, 1]} -> tensor<f32>
// CHECK-NEXT:    %b0 = constant() {value = 1.0} -> tensor<f32>
// CHECK:         %b4 = add(%b2, %b3) -> tensor<?x4, [@S0, @C4]>
// CHECK:         sub(%{{.*}}, %t) -> tensor<?x4, [@S0, @C4]>
// CHECK:         %grad_bias = reduce(%{{.*}}) {dims = [0], kind = "sum"} -> tensor<4, [@C4]>
// CHECK-NEXT:    %grad_w = dot_general(%x, %{{.*}}) {{.*}}lhs_contract = [0], rhs_contract = [0]} -> tensor<8x4, [@C8, @C4]>
// CHECK-NEXT:    return %loss, %grad_w, %grad_bias
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>, %bias: tensor<4>, %y: tensor<?x4, [@S0, @C4]>) {
  %h = dot(%x, %w) -> tensor<?x4>
  %bb = broadcast_in_dim(%bias) {dims = [1]} -> tensor<?x4>
  %a = add(%h, %bb) -> tensor<?x4>
  %t = tanh(%a) -> tensor<?x4>
  %d = sub(%t, %y) -> tensor<?x4>
  %s = mul(%d, %d) -> tensor<?x4>
  %loss = reduce(%s) {dims = [0, 1]} -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
}
