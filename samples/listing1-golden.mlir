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

// Listing 1 of the paper (samples/listing1.mlir, verbatim above) and its canonical
// printed form: one space after each comma in a type, comments dropped, two-space indent.
// With --strict-whitespace a pattern starts right after the colon, so indentation counts.
// The undefined shape operand %new_shape (warned about once) is written as the attribute
// {shape = "%new_shape"}, which parses without a warning: the second stage is silent.
//
// RUN: bladec optimize -p none %s | filecheck %s --match-full-lines --strict-whitespace
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s --match-full-lines --strict-whitespace
//
// CHECK:func.func @main(%arg0: tensor<?, [@S0]>, %arg1: tensor<12x11008>) {
// CHECK-NEXT:  %1 = broadcast(%arg1) -> tensor<4096x?, [@C4096, @S0]>
// CHECK-NEXT:  %2 = dynamic_reshape(%arg0) {shape = "%new_shape"} -> tensor<?x12, [@S1, @C12]>
// CHECK-NEXT:  %3 = dot(%2, %arg1) -> tensor<?x11008, [@S1, @C11008]>
// CHECK-NEXT:  %4 = reduce(%3) -> tensor<?, [@S1]>
// CHECK-NEXT:  %1084 = broadcast(%4) -> tensor<11008x?, [@C11008, @S1]>
// CHECK-NEXT:  %1085 = broadcast(%arg0) -> tensor<1024x?, [@C1024, @S0]>
// CHECK-NEXT:}
// CHECK-NEXT:func.func @symbolic_shape_graph() {
// CHECK-NEXT:  SymbolicDim @S0
// CHECK-NEXT:  SymbolicDim @S1
// CHECK-NEXT:  @S0 = Mul @C12, @S1
// CHECK-NEXT:}
// CHECK-NOT:{{.+}}
