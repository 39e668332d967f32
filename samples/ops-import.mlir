// The ops the JAX importer (bladec import) adds for training steps as users write them:
// a mean over a dynamic batch reads the batch size with dim_size.
//
// RUN: bladec optimize -p none %s | filecheck %s
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
// RUN: bladec run %s --backend numpy --dims S0=3 | filecheck --check-prefix=EXEC %s
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>) {
  %h = dot(%x, %w) -> tensor<?x4, [@S0, @C4]>
  %sq = square(%h) -> tensor<?x4, [@S0, @C4]>
  %sum = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  // jnp.mean divides by 4*B, which JAX hands over as dim_as_value
  %b = dim_size(%x) {dim = 0} -> tensor<i32>
  %four = constant() {value = 4} -> tensor<i32>
  %n = mul(%b, %four) -> tensor<i32>
  %nf = convert(%n) {dtype = "f32"} -> tensor<f32>
  %loss = div(%sum, %nf) -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 64}
}

// CHECK-LABEL: func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>) {
// CHECK:         %b = dim_size(%x) {dim = 0} -> tensor<i32>
// CHECK:         %loss = div(%sum, %nf) -> tensor<f32>
// CHECK-NEXT:    return %loss
// EXEC: binding: S0=3
// EXEC: peak: 320 B
