"""bladec/symbolic/binding.py: partial bindings completed from the relations, and the
bindings the schedule pass samples (every one satisfies the relations)."""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.analysis.version import corners, log_grid
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.symbolic.binding import basis, bounds, complete, sample
from bladec.symbolic.shapes import analyze_shapes

from tests.support.paths import ROOT
from tests.support.relationcase import FIXED_PRODUCT, FIXED_SUM, QUOTIENT, SQUARE


def info_of(text: str):
    return analyze_shapes(parse_module(text, "<t>"))


def holds(info, full: dict[str, int]) -> bool:
    return all(e.evaluate(full) == v for s, e in info.subst.items() for v in [full[s]]) and \
        all(f.evaluate(full) == 0 for f in info.facts)


def test_quotient_derives_the_third_symbol_from_any_two():
    info = info_of(QUOTIENT)
    assert info.facts and not info.subst
    assert info.bind({"S0": 8, "S1": 64}) == {"S0": 8, "S1": 64, "S2": 16}
    assert info.bind({"S0": 8, "S2": 16})["S1"] == 64
    with pytest.raises(BladecError, match=r"S0=8, S1=63 breaks the relation "
                                          r"S0\*S1 = 32\*S2: no integer S2"):
        info.bind({"S0": 8, "S1": 63})
    with pytest.raises(BladecError, match=r"S0=8, S1=64, S2=17 breaks the relation"):
        info.bind({"S0": 8, "S1": 64, "S2": 17})
    with pytest.raises(BladecError, match="no value for symbol.*S0, S1"):
        info.bind({"S2": 16})


def test_fixed_product_and_sum():
    info = info_of(FIXED_PRODUCT)
    assert info.bind({"S0": 16}) == {"S0": 16, "S1": 16}
    assert info.bind({"S1": 4})["S0"] == 64
    with pytest.raises(BladecError, match="S0=3 breaks the relation S0\\*S1 = 256"):
        info.bind({"S0": 3})
    assert bounds(info)["S0"] == (1, 256)
    info = info_of(FIXED_SUM)
    assert info.bind({"S0": 3})["S1"] == 7 and info.bind({"S1": 3})["S0"] == 7
    assert bounds(info)["S0"] == (1, 9)          # S1 = 10 - S0 >= 1
    with pytest.raises(BladecError, match=r"S1 = -S0 \+ 10 = -3, outside its range"):
        info.bind({"S0": 13})


def test_listing1_solves_the_free_symbol_from_the_derived_one():
    info = analyze_shapes(parse_module((ROOT / "samples" / "listing1.mlir").read_text(), "l1"))
    assert info.free == ["S1"]
    assert info.bind({"S0": 1200}) == {"S0": 1200, "S1": 100}
    with pytest.raises(BladecError, match="S0=1201 breaks the relation S0 = 12\\*S1"):
        info.bind({"S0": 1201})
    with pytest.raises(BladecError, match="S0=1200, S1=50 breaks the relation S0 = 12\\*S1"):
        info.bind({"S0": 1200, "S1": 50})


def test_a_root_of_higher_degree():
    info = info_of(SQUARE)
    assert info.subst["S1"].degree("S0") == 2
    assert info.bind({"S1": 4096})["S0"] == 64
    with pytest.raises(BladecError, match="no integer S0"):
        info.bind({"S1": 63})


@pytest.mark.parametrize("text", [QUOTIENT, FIXED_PRODUCT, FIXED_SUM, SQUARE])
def test_sampled_bindings_satisfy_every_relation(text):
    info = info_of(text)
    pts = corners(info) + log_grid(info)
    assert len(corners(info)) >= 2 and len(log_grid(info)) >= 8
    b = bounds(info)
    for p in pts:
        full = info.bind(p)  # raises if a relation or range is broken
        assert holds(info, full)
        assert all(b[s][0] <= v <= b[s][1] for s, v in full.items() if s in b)


def test_basis_leaves_one_symbol_per_fact_to_solve():
    assert basis(info_of(QUOTIENT)) == ["S0", "S1"]
    assert basis(info_of(FIXED_PRODUCT)) == ["S0"]
    assert basis(info_of(FIXED_SUM)) == ["S0"]


def test_a_point_without_an_integer_solution_moves_nearby():
    info = info_of(QUOTIENT)
    # S0*S1 = 1 has no S2; the nearest multiples of 8 have one (8*8 = 32*2)
    assert sample(info, [{"S0": 1, "S1": 1}]) == [{"S0": 8, "S1": 8, "S2": 2}]


def test_executor_binds_a_fact_from_the_input_shapes():
    ex = Executor(parse_module(QUOTIENT, "<t>"), NumpyBackend())
    assert ex.bind({"%a": (8, 64)}) == {"S0": 8, "S1": 64, "S2": 16}
    with pytest.raises(BladecError, match="%a"):
        ex.bind({"%a": (8, 63)})


def test_complete_checks_extra_equations_too():
    info = info_of(FIXED_SUM)
    assert complete(info, {"S0": 2})["S1"] == 8


def test_no_solution_in_the_ranges_is_located_at_the_op():
    text = """func.func @main(%a: tensor<?xf32, [@S0]>, %b: tensor<?xf32, [@S1]>) {
  %1 = concatenate(%a, %b) {dim = 0} -> tensor<1xf32>
}
"""
    with pytest.raises(BladecError, match="leave S0 no value") as err:
        info_of(text)
    assert err.value.loc.line == 2


def test_no_integer_solution_is_located_at_the_op():
    """2*S0 = 2*S1 + 1 has real solutions, no integer one: the analysis says so where
    the equation is stated (its symbols' coefficients share 2, its constant does not),
    at the op that made the last relation."""
    text = """func.func @main(%a: tensor<?xf32, [@S0]>, %b: tensor<?xf32, [@S1]>, %c: tensor<1xf32>) {
  %1 = concatenate(%a, %a) {dim = 0} -> tensor<?xf32, [@S2]>
  %2 = concatenate(%b, %b, %c) {dim = 0} -> tensor<?xf32, [@S2]>
  return %1
}
"""
    module = parse_module(text, "<t>")
    with pytest.raises(BladecError, match="it makes 2\\*S0 - 2\\*S1 - 1 = 0, which no "
                                          "integers solve") as err:
        run_pipeline(module, parse_pipeline("analyze,schedule,remat"))
    assert err.value.loc.line == 3
