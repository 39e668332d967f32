// A runnable variant of Listing 1 of the paper. Listing 1's broadcasts have no `dims`,
// and %1 broadcasts the [12, 11008] matrix to [4096, S0], which no broadcast can do; here
// %1 broadcasts %arg0 to [1024, S0], each broadcast says which dims it keeps, and the three
// large results are reduced and returned, so that they are not all outputs held to the end.
func.func @main(%arg0: tensor<?,[@S0]>, %arg1: tensor<12x11008>) {
  %1 = broadcast(%arg0) {dims = [1]} -> tensor<1024x?, [@C1024, @S0]>
  %2 = dynamic_reshape(%arg0, %new_shape) -> tensor<?x12,[@S1, @C12]>
  %3 = dot(%2, %arg1) -> tensor<?x11008, [@S1, @C11008]>
  %4 = reduce(%3) {dims = [1]} -> tensor<?, [@S1]>
  %1084 = broadcast(%4) {dims = [1]} -> tensor<11008x?, [@C11008, @S1]>
  %1085 = broadcast(%arg0) {dims = [1]} -> tensor<1024x?, [@C1024, @S0]>
  %5 = reduce(%1) {dims = [0]} -> tensor<?, [@S0]>
  %6 = reduce(%1084) {dims = [0]} -> tensor<?, [@S1]>
  %7 = reduce(%1085) {dims = [0]} -> tensor<?, [@S0]>
  return %5, %6, %7
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
  SymbolicDim @S1
  @S0 = Mul @C12, @S1
}
