"""Listings whose relations do not solve for one symbol as a polynomial (a quotient kept as
a fact, a fixed product, a fixed sum, a square): the binding tests
(tests/symbolic/test_binding.py) and the command line's (tests/cli/test_relations_cli.py)
share them."""
from __future__ import annotations

# S0*S1 = 32*S2: a reshape whose target dim is a quotient (kept as a fact)
QUOTIENT = """
func.func @main(%a: tensor<?x?xf32, [@S0, @S1]>) {
  %1 = dynamic_reshape(%a, %s) -> tensor<?x32xf32, [@S2, @C32]>
}
"""
# S0*S1 = 256
FIXED_PRODUCT = """
func.func @main(%a: tensor<?x?xf32, [@S0, @S1]>) {
  %1 = reshape(%a) -> tensor<256xf32>
}
"""
# S1 = 10 - S0
FIXED_SUM = """
func.func @main(%a: tensor<?xf32, [@S0]>, %b: tensor<?xf32, [@S1]>) {
  %1 = concatenate(%a, %b) {dim = 0} -> tensor<10xf32, [@S2]>
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
  SymbolicDim @S1
  SymbolicDim @S2
  @S2 = Add @S0, @S1
}
"""
# S1 = S0^2: a square, solved backwards by bisection
SQUARE = """
func.func @main(%a: tensor<?x?xf32, [@S0, @S0]>) {
  %1 = reshape(%a) -> tensor<?xf32, [@S1]>
  return %1
}
"""
