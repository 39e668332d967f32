"""Shape analysis: contradictions, declared ranges and unsolvable equations kept as facts.
(Split from test_shapes.py, which holds the paper's example and each op family's relations.)"""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import format_expr

from tests.support.shapecase import FACT, S0, S1, S2, S3, analyze, error_of


# -- contradictions --------------------------------------------------------------------------

def test_contradicting_relations_in_the_graph():
    err = error_of("""
        func.func @main(%a: tensor<?, [@S0]>) {
          %1 = neg(%a) -> tensor<?, [@S0]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0
          SymbolicDim @S1
          @S0 = Mul @C12, @S1
          @S0 = Mul @C13, @S1
        }
    """)
    assert err.loc.line == 8
    assert str(err).startswith("<input>:8:")
    assert "contradiction" in str(err)


def test_graph_relations_with_a_negative_solution():
    # S3 = S2 + 5 and S2 = 2*S3 give S2 = -10: no positive size.
    err = error_of("""
        func.func @main(%a: tensor<?, [@S2]>) {
          %1 = neg(%a) -> tensor<?, [@S3]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S2
          SymbolicDim @S3
          @S3 = Add @S2, @C5
          @S2 = Mul @C2, @S3
        }
    """)
    assert err.loc.line == 8


def test_dim_equated_to_two_constants_via_ops():
    err = error_of("""
        func.func @main(%a: tensor<?x8, [@S0, @C8]>) {
          %1 = neg(%a) -> tensor<4x8>
          %2 = neg(%a) -> tensor<5x8>
        }
    """)
    assert err.loc.line == 3
    assert "'neg'" in str(err)


def test_add_against_a_constant_after_the_symbol_is_forced():
    err = error_of("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<8>, %c: tensor<4>) {
          %1 = neg(%a) -> tensor<?, [@S0]>
          %2 = add(%a, %b) -> tensor<?, [@S0]>
          %3 = add(%a, %c) -> tensor<?, [@S0]>
        }
    """)
    assert err.loc.line == 4
    assert "'add'" in str(err) and "4" in str(err)


def test_constant_outside_the_declared_range():
    err = error_of("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<8>) {
          %1 = add(%a, %b) -> tensor<8>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {max = 4}
        }
    """)
    assert err.loc.line == 2
    assert "outside" in str(err)


def test_contradiction_found_through_a_fact():
    # The reshape leaves S0*S1 = S2*S3; the adds make it 6 = 1*S3 and then S3 = 5.
    err = error_of("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>, %b: tensor<2x3>, %c: tensor<1x5>) {
          %1 = reshape(%a) -> tensor<?x?, [@S2, @S3]>
          %2 = add(%a, %b) -> tensor<2x3>
          %3 = add(%1, %c) -> tensor<1x5>
        }
    """)
    assert err.loc.line == 4


# -- ranges ----------------------------------------------------------------------------------

def test_declared_ranges_appear_in_info():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
          %1 = neg(%a) -> tensor<?x?, [@S0, @S1]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {min = 2, max = 64}
          SymbolicDim @S1
        }
    """)
    assert info.ranges == {"S0": (2, 64), "S1": (1, None)}
    assert info.compare(S0, 1) is Order.GT
    assert info.compare(S0, 64) is Order.LE
    with pytest.raises(BladecError, match="outside its range"):
        info.bind({"S0": 65, "S1": 1})
    with pytest.raises(BladecError, match="outside its range"):
        info.bind({"S0": 1, "S1": 1})


def test_lower_bound_carries_over_a_multiple():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>) {
          %1 = neg(%a) -> tensor<?, [@S0]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {min = 100}
          SymbolicDim @S1
          @S0 = Mul @C12, @S1
        }
    """)
    assert info.free == ["S1"]
    assert info.ranges["S1"] == (9, None)     # 12*S1 >= 100


def test_declared_max_of_a_solved_symbol_is_kept():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>) {
          %1 = add(%a, %b) -> tensor<?, [@S0]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0
          SymbolicDim @S1 {max = 64}
        }
    """)
    assert info.free == ["S0"]
    assert info.ranges["S0"] == (1, 64)          # the equal symbol takes the tighter range
    assert info.compare(S0, 64) is Order.LE
    assert info.bind({"S0": 64})["S1"] == 64
    with pytest.raises(BladecError):
        info.bind({info.free[0]: 100})


def test_declared_max_bounds_the_free_symbol_of_a_multiple():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>) {
          %1 = neg(%a) -> tensor<?, [@S0]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {max = 64}
          SymbolicDim @S1
          @S0 = Mul @C12, @S1
        }
    """)
    assert info.ranges["S1"] == (1, 5)           # 12*S1 <= 64
    assert info.bind({"S1": 5})["S0"] == 60
    with pytest.raises(BladecError):
        info.bind({"S1": 6})
    with pytest.raises(BladecError):
        info.bind({"S1": 100})


def test_disjoint_ranges_equated_is_a_contradiction():
    text = """
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>) {
          %1 = add(%a, %b) -> tensor<?, [@S0]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {min = 2, max = 64}
          SymbolicDim @S1 {min = 100, max = 200}
        }
    """
    err = error_of(text)
    assert err.loc.line == 2


def test_slice_past_the_declared_max_is_an_error():
    err = error_of("""
        func.func @main(%a: tensor<?x8, [@S0, @C8]>) {
          %1 = slice(%a) {start = [0, 0], limit = [16, 8]} -> tensor<16x8>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0 {max = 8}
        }
    """)
    assert err.loc.line == 2


def test_a_solved_symbol_stays_positive():
    _, info = analyze("""
        func.func @main(%a: tensor<?x8, [@S0, @C8]>, %b: tensor<?x8>) {
          %1 = concatenate(%a, %b) {dim = 0} -> tensor<100x8>
        }
    """)
    assert info.free == ["S0"]
    assert info.bind({"S0": 99})["S1"] == 1
    with pytest.raises(BladecError):
        info.bind({"S0": 200})


# -- unsolvable equations are facts ----------------------------------------------------------



def test_unsolvable_product_is_kept_as_a_fact_and_bind_checks_it():
    _, info = analyze(FACT)
    assert info.free == ["S0", "S1", "S2", "S3"]
    assert info.subst == {}
    assert len(info.facts) == 1
    assert info.facts[0] in (S0 * S1 - S2 * S3, S2 * S3 - S0 * S1)
    assert info.relations() == [f"{format_expr(info.facts[0])} = 0"]
    assert info.bind({"S0": 2, "S1": 6, "S2": 3, "S3": 4})["S3"] == 4
    with pytest.raises(BladecError, match="breaks the relation"):
        info.bind({"S0": 2, "S1": 6, "S2": 3, "S3": 5})


def test_a_fact_is_retried_when_a_later_op_solves_a_symbol():
    # S0*S1 = S2*S3 is stuck until the add makes S0 = 1; then S1 = S2*S3.
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>, %b: tensor<1x?, [@C1, @S4]>) {
          %1 = reshape(%a) -> tensor<?x?, [@S2, @S3]>
          %2 = add(%a, %b) -> tensor<?x?>
        }
    """)
    assert info.facts == []
    assert info.subst["S0"] == 1
    assert info.subst["S1"] == S2 * S3
    assert info.free == ["S2", "S3"]


def test_a_repeated_fact_is_kept_once():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
          %1 = reshape(%a) -> tensor<?x?, [@S2, @S3]>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0
          SymbolicDim @S1
          SymbolicDim @S2
          SymbolicDim @S3
          SymbolicDim @S4
          @S4 = Mul @S0, @S1
          @S4 = Mul @S2, @S3
        }
    """)
    assert len(info.facts) == 1
