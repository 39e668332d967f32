func.func @main(%arg0: tensor<?,[@S0]>, %arg1: tensor<12x11008>) {
  %1 = broadcast(%arg1) -> tensor<4096x?, [@C4096, @S0]>
  %2 = dynamic_reshape(%arg0, %new_shape) -> tensor<?x12,[@S1, @C12]>
  // The last consumer of %2
  %3 = dot(%2, %arg1) -> tensor<?x11008, [@S1, @C11008]>
  // The last consumer of %3
  %4 = reduce(%3) -> tensor<?, [@S1]>
  %1084 = broadcast(%4) -> tensor<11008x?, [@C11008, @S1]>
  %1085 = broadcast(%arg0) -> tensor<1024x?, [@C1024, @S0]>
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
  SymbolicDim @S1
  @S0 = Mul @C12, @S1
}
