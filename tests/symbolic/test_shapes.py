"""The symbolic shape analysis (DESIGN.md section 3): the paper's worked example and the
relations of each op family. Contradictions, ranges and facts: test_shape_facts.py."""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import const, sym
from bladec.symbolic.shapes import analyze_shapes

from tests.support.shapecase import (LISTING1, LISTING1_NO_GRAPH, S0, S1, S2, analyze, canon,
    error_of)


# -- the paper's worked example ------------------------------------------------------------

@pytest.mark.parametrize("text", [LISTING1, LISTING1_NO_GRAPH], ids=["with-graph", "no-graph"])
def test_listing1_derives_s0_is_12_s1(text):
    assert ("symbolic_shape_graph" in text) == (text is LISTING1)
    info = analyze_shapes(parse_module(text))
    assert info.subst["S0"] == 12 * sym("S1")
    assert info.free == ["S1"]
    assert info.facts == []
    assert info.relations() == ["S0 = 12*S1"]
    assert info.numel("%1084") == 11008 * S1
    assert info.numel("%1085") == 12288 * S1
    assert info.compare(info.numel("%1084"), info.numel("%1085")) is Order.LT
    assert info.compare(info.numel("%1085"), info.numel("%1084")) is Order.GT
    # every dim is in canonical form over the free symbol
    assert info.dims["%arg0"] == [12 * S1]
    assert info.dims["%1"] == [const(4096), 12 * S1]
    assert info.dims["%3"] == [S1, const(11008)]
    assert info.nbytes("%1084") == 4 * 11008 * S1


# -- relations from each op family ---------------------------------------------------------

def test_elementwise_chain_unifies_all_dims():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>, %c: tensor<?, [@S2]>, %d: tensor<?, [@S3]>) {
          %1 = add(%a, %b) -> tensor<?, [@S4]>
          %2 = mul(%1, %c) -> tensor<?>
          %3 = sub(%2, %d) -> tensor<?, [@S5]>
          %4 = neg(%3) -> tensor<?>
        }
    """)
    assert len(info.free) == 1
    (root,) = info.free
    assert root in {f"S{i}" for i in range(6)}
    for v in ("%a", "%b", "%c", "%d", "%1", "%2", "%3", "%4"):
        assert info.dims[v] == [sym(root)], v
    for s in ("S0", "S1", "S2", "S3", "S4", "S5"):
        assert canon(info, s) == sym(root)
    assert info.facts == []


def test_elementwise_keeps_independent_dims_apart():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>, %b: tensor<?x?, [@S2, @S3]>) {
          %1 = add(%a, %b) -> tensor<?x?>
        }
    """)
    assert len(info.free) == 2
    assert canon(info, "S0") == canon(info, "S2")
    assert canon(info, "S1") == canon(info, "S3")
    assert canon(info, "S0") != canon(info, "S1")
    assert info.dims["%1"] == info.dims["%a"]


def test_dot_equates_contracting_dims():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>, %b: tensor<?x?, [@S2, @S3]>) {
          %1 = dot(%a, %b) -> tensor<?x?, [@S4, @S5]>
        }
    """)
    assert canon(info, "S1") == canon(info, "S2")
    assert canon(info, "S4") == canon(info, "S0")
    assert canon(info, "S5") == canon(info, "S3")
    assert len(info.free) == 3
    assert info.dims["%1"] == [canon(info, "S0"), canon(info, "S3")]


def test_dot_contracting_dim_against_a_constant():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>, %w: tensor<64x32>) {
          %1 = dot(%a, %w) -> tensor<?x?>
        }
    """)
    assert info.subst["S1"] == 64
    assert info.dims["%1"] == [S0, const(32)]
    assert info.free == ["S0"]


def test_dot_general_batch_and_contracting_dims():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?x?, [@S0, @S1, @S2]>, %b: tensor<?x?x?, [@S3, @S4, @S5]>) {
          %1 = dot_general(%a, %b) {lhs_batch = [0], rhs_batch = [0], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x?>
        }
    """)
    assert canon(info, "S0") == canon(info, "S3")      # batch
    assert canon(info, "S2") == canon(info, "S4")      # contracting
    assert canon(info, "S1") != canon(info, "S5")
    assert len(info.free) == 4
    # result: batch dims, then a's free dims, then b's free dims
    assert info.dims["%1"] == [canon(info, "S0"), canon(info, "S1"), canon(info, "S5")]


def test_reshape_element_count_solves_the_new_dim():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?x64, [@S0, @S1, @C64]>) {
          %1 = reshape(%a) -> tensor<?x64, [@S2, @C64]>
          %2 = reshape(%a) -> tensor<?x64>
        }
    """)
    assert info.subst["S2"] == S0 * S1
    assert info.dims["%2"] == [S0 * S1, const(64)]
    assert info.free == ["S0", "S1"]
    assert "S2 = S0*S1" in info.relations()


def test_reshape_element_count_with_constants():
    _, info = analyze("""
        func.func @main(%a: tensor<?x12, [@S1, @C12]>) {
          %1 = reshape(%a) -> tensor<?, [@S0]>
          %2 = reshape(%1) -> tensor<?x4x3>
        }
    """)
    assert info.subst["S0"] == 12 * S1
    assert info.dims["%2"] == [S1, const(4), const(3)]


def test_concatenate_sums_and_equates_other_dims():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S3]>, %b: tensor<?x?, [@S1, @S4]>) {
          %1 = concatenate(%a, %b, %a) {dim = 0} -> tensor<?x?, [@S2, @S5]>
        }
    """)
    assert canon(info, "S2") == 2 * canon(info, "S0") + canon(info, "S1")
    assert canon(info, "S3") == canon(info, "S4") == canon(info, "S5")
    assert len(info.free) == 3


def test_concatenate_with_a_known_total_solves_a_difference():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>) {
          %1 = concatenate(%a, %b) {dim = 0} -> tensor<100>
        }
    """)
    assert len(info.free) == 1
    assert canon(info, "S0") + canon(info, "S1") == 100


def test_transpose_permutes_dims():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?x8, [@S0, @S1, @C8]>) {
          %1 = transpose(%a) {perm = [2, 0, 1]} -> tensor<?x?x?, [@S2, @S3, @S4]>
        }
    """)
    assert info.subst["S2"] == 8
    assert canon(info, "S3") == S0 and canon(info, "S4") == S1
    assert info.dims["%1"] == [const(8), S0, S1]


def test_broadcast_in_dim_maps_operand_dims_and_expands_ones():
    _, info = analyze("""
        func.func @main(%a: tensor<?x1, [@S0, @C1]>) {
          %1 = broadcast_in_dim(%a) {dims = [1, 2]} -> tensor<?x?x?, [@S1, @S2, @S3]>
        }
    """)
    assert canon(info, "S2") == canon(info, "S0")
    assert info.free == ["S0", "S1", "S3"]   # the size-1 dim and the new dim stay free


def test_broadcast_without_dims_derives_nothing():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>) {
          %1 = broadcast(%a) -> tensor<?x?, [@S1, @S2]>
        }
    """)
    assert info.free == ["S0", "S1", "S2"]
    assert info.subst == {}


def test_slice_gives_a_lower_bound():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
          %1 = slice(%a) {start = [0, 2], limit = [16, 10], strides = [1, 4]} -> tensor<16x2>
        }
        func.func @symbolic_shape_graph() {
          SymbolicDim @S0
          SymbolicDim @S1 {min = 20, max = 40}
        }
    """)
    assert info.ranges["S0"] == (16, None)
    assert info.ranges["S1"] == (20, 40)          # a weaker bound does not lower the range
    assert info.compare(S0, 15) is Order.GT
    with pytest.raises(BladecError, match="outside its range"):
        info.bind({"S0": 15, "S1": 20})
    assert info.bind({"S0": 16, "S1": 20}) == {"S0": 16, "S1": 20}


def test_slice_bound_reaches_the_representative():
    _, info = analyze("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>) {
          %1 = add(%a, %b) -> tensor<?>
          %2 = slice(%b) {start = [0], limit = [32]} -> tensor<32>
        }
    """)
    (root,) = info.free
    assert info.ranges[root] == (32, None)


def test_slice_keeps_a_dynamic_dim_whole():
    """A limit of -1 (start 0, stride 1) passes the operand's dim through, symbolic or
    not, and bounds nothing; elsewhere a negative limit is a bad slice."""
    _, info = analyze("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
          %1 = slice(%a) {start = [0, 2], limit = [-1, 10]} -> tensor<?x8>
          %2 = add(%1, %1) -> tensor<?x8>
        }
    """)
    assert info.ranges == {"S0": (1, None), "S1": (10, None)}   # S0 unbounded by it
    assert [str(d) for d in info.dims["%1"]] == ["S0", "8"]
    err = error_of("""
        func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
          %1 = slice(%a) {start = [1, 0], limit = [-1, 4]} -> tensor<?x4>
        }
    """)
    assert "bad slice 1:-1:1 in dim 0" in str(err)


def test_slice_of_a_too_short_dim_is_an_error():
    err = error_of("""
        func.func @main(%a: tensor<?, [@S0]>, %b: tensor<8>) {
          %1 = add(%a, %b) -> tensor<?>
          %2 = slice(%a) {start = [0], limit = [9]} -> tensor<9>
        }
    """)
    assert err.loc.line == 3
    assert "sliced up to 9" in str(err)


def test_gather_and_scatter_add():
    _, info = analyze("""
        func.func @main(%t: tensor<?x?, [@S0, @S1]>, %ids: tensor<?xi32, [@S2]>, %u: tensor<?x?, [@S3, @S4]>) {
          %1 = gather(%t, %ids) -> tensor<?x?, [@S5, @S6]>
          %2 = scatter_add(%t, %ids, %u) -> tensor<?x?, [@S7, @S8]>
        }
    """)
    assert info.free == ["S0", "S1", "S2"]
    assert canon(info, "S5") == S2 and canon(info, "S6") == S1      # ids dims + table[1:]
    assert canon(info, "S3") == S2 and canon(info, "S4") == S1      # updates match
    assert canon(info, "S7") == S0 and canon(info, "S8") == S1      # result is the base


def test_fresh_dims_are_named_after_declared_symbols():
    _, info = analyze("""
        func.func @main(%a: tensor<?x?>, %b: tensor<?, [@S7]>) {
          %1 = neg(%a) -> tensor<?x?>
        }
    """)
    # %a's two ? get fresh names that do not clash with S7
    assert sorted(info.free, key=lambda s: int(s[1:]))[:1] == ["S7"]
    assert len(info.free) == 3
    assert all(int(s[1:]) > 7 for s in info.free if s != "S7")
    assert info.dims["%1"] == info.dims["%a"]
