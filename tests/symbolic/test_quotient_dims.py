"""Quotient and bound dims (bladec/symbolic/atoms.py, issue 33): FloorDiv, CeilDiv, Mod,
Min and Max relations in the shape graph; their canonical forms, ranges, bindings, the
comparisons over them, the round trip of the listing, and the errors."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.symbolic.atoms import AtomTable, apply, canonical, interval
from bladec.symbolic.compare import Order, compare
from bladec.symbolic.expr import SymbolicExpr, const, sym
from bladec.symbolic.shapes import analyze_shapes

S0, S1 = sym("S0"), sym("S1")


def _listing(relations: str, decls: str = "SymbolicDim @S0 {min = 4, max = 100}",
             dims: str = "[@S0, @S2]") -> str:
    return (f"func.func @main(%x: tensor<?x?, {dims}>) {{\n"
            f"  %y = tanh(%x) -> tensor<?x?, {dims}>\n  return %y\n}}\n"
            f"func.func @symbolic_shape_graph() {{\n  {decls}\n  SymbolicDim @S2\n"
            f"{relations}}}\n")


def _info(relations: str, **kw):
    return analyze_shapes(parse_module(_listing(relations, **kw), "q.mlir"))


# -- each kind, from the listing ------------------------------------------------------------

@pytest.mark.parametrize("kind, want", [
    ("FloorDiv", lambda s: s // 4), ("CeilDiv", lambda s: -(-s // 4)),
    ("Min", lambda s: min(s, 4)), ("Max", lambda s: max(s, 4))])
def test_each_kind_binds_from_its_operand(kind, want):
    info = _info(f"  @S2 = {kind} @S0, @C4\n")
    assert "S2" in info.atoms or "S2" in info.subst
    for s0 in (4, 5, 7, 8, 99, 100):
        assert info.bind({"S0": s0})["S2"] == want(s0)


def test_mod_is_written_with_floordiv():
    info = _info("  @S2 = Mod @S0, @C4\n", decls="SymbolicDim @S0 {min = 5, max = 100}")
    assert [a.kind for a in info.atoms.values()] == ["FloorDiv"]
    for s0 in (5, 6, 7, 9, 99):   # (S2 is a dim: at least 1, so S0 % 4 != 0 here)
        if s0 % 4:
            assert info.bind({"S0": s0})["S2"] == s0 % 4
    with pytest.raises(BladecError, match="outside its range"):
        info.bind({"S0": 8})      # mod 0 as a dim


def test_min_the_ranges_decide_is_its_operand():
    info = _info("  @S2 = Min @S0, @C200\n")   # S0 <= 100 < 200
    assert info.atoms == {} and info.subst["S2"] == S0


def test_the_same_quotient_twice_is_one_symbol():
    info = _info("  SymbolicDim @S3\n  @S2 = FloorDiv @S0, @C4\n  @S3 = CeilDiv @S0, @C4\n"
                 "  SymbolicDim @S4\n  @S4 = FloorDiv @S0, @C4\n")
    assert info.subst["S4"] == sym("S2")
    assert len([a for a in info.atoms.values()]) == 2   # floor and ceil differ


def test_exact_quotient_folds():
    info = analyze_shapes(parse_module(
        "func.func @main(%x: tensor<?, [@S1]>) {\n  %y = tanh(%x) -> tensor<?, [@S1]>\n"
        "  return %y\n}\nfunc.func @symbolic_shape_graph() {\n  SymbolicDim @S0\n"
        "  SymbolicDim @S1\n  SymbolicDim @S2\n  @S2 = Mul @C8, @S0\n"
        "  @S1 = FloorDiv @S2, @C4\n}\n"))
    assert info.atoms == {} and info.subst["S1"] == 2 * S0


def test_strided_window_extent_is_a_quotient():
    text = ("func.func @main(%x: tensor<1x?x1, [@C1, @S0, @C1]>, %k: tensor<1x3x1>) {\n"
            "  %y = conv(%x, %k) {lhs_spec = [0, 2, 1], rhs_spec = [0, 2, 1], "
            "out_spec = [0, 2, 1], strides = [2], padding = [0, 0]} -> tensor<1x?x1>\n"
            "  return %y\n}\nfunc.func @symbolic_shape_graph() {\n"
            "  SymbolicDim @S0 {min = 3, max = 50}\n}\n")
    module = parse_module(text)
    info = analyze_shapes(module)
    (atom,) = info.atoms.values()
    assert atom.kind == "FloorDiv"
    for s0 in (3, 4, 5, 50):
        full = info.bind({"S0": s0})
        assert info.dims["%y"][1].evaluate(full) == (s0 - 3) // 2 + 1


# -- binding ----------------------------------------------------------------------------------

def test_a_given_quotient_that_disagrees_is_named():
    info = _info("  @S2 = FloorDiv @S0, @C4\n")
    assert info.bind({"S0": 9, "S2": 2})["S2"] == 2
    with pytest.raises(BladecError, match=r"S0=9, S2=3 breaks the relation S2 = floordiv"):
        info.bind({"S0": 9, "S2": 3})


def test_a_quotient_below_its_range_is_refused():
    info = _info("  @S2 = FloorDiv @S0, @C8\n", decls="SymbolicDim @S0 {min = 1, max = 100}")
    assert info.bind({"S0": 16})["S2"] == 2
    with pytest.raises(BladecError, match="outside its range"):
        info.bind({"S0": 7})    # a dim of 0


# -- the listing: round trip and errors ------------------------------------------------------

def test_parse_print_round_trip():
    text = _listing("  SymbolicDim @S3\n  @S2 = FloorDiv @S0, @C4\n  @S3 = Min @C8, @S2, @S0\n"
                    "  SymbolicDim @S4\n  @S4 = Mod @S0, @C3\n  SymbolicDim @S5\n"
                    "  @S5 = CeilDiv @S0, @S2\n  SymbolicDim @S6\n  @S6 = Max @S2, @C2\n")
    module = parse_module(text)
    again = parse_module(format_module(module))
    assert again.shape_graph.relations == module.shape_graph.relations
    assert format_module(again) == format_module(module)


def test_analysis_writes_back_what_it_reads():
    text = _listing("  SymbolicDim @S3\n  @S2 = FloorDiv @S0, @C4\n  @S3 = Min @C8, @S2\n",
                    decls="SymbolicDim @S0 {min = 1, max = 100}", dims="[@S0, @S3]")
    once = format_module(run_pipeline(parse_module(text), parse_pipeline("analyze")))
    assert "= FloorDiv @" in once and "= Min @" in once  # (min(9, floordiv(S0 + 4, 4)) - 1)
    twice = format_module(run_pipeline(parse_module(once), parse_pipeline("analyze")))
    assert twice == once
    a, b = analyze_shapes(parse_module(text)), analyze_shapes(parse_module(once))
    for s0 in (4, 31, 32, 33, 100):
        x, y = a.bind({"S0": s0}), b.bind({"S0": s0})
        assert x["S3"] == y["S3"] == min(8, s0 // 4)
    with pytest.raises(BladecError, match="outside its range"):
        b.bind({"S0": 3})           # S2 = floordiv(3, 4) = 0 is no dim


@pytest.mark.parametrize("relations, message", [
    ("  @S2 = FloorDiv @S0\n", r"q.mlir:8:\d+: error: 'FloorDiv' takes 2 operands, got 1"),
    ("  @S2 = Min @S0\n", "'Min' takes at least 2 operands, got 1"),
    ("  @S2 = Div @S0, @C4\n", "unknown relation 'Div' .*FloorDiv, CeilDiv, Mod, Min, Max"),
    ("  @S2 = FloorDiv @S0, @C0\n", r"q.mlir:8:\d+: error: floordiv by 0, which may be below 1"),
])
def test_errors_are_located(relations, message):
    with pytest.raises(BladecError, match=message) as exc:
        _info(relations)
    assert exc.value.loc.line == 8


# -- canonical forms and comparisons: sound at every binding ---------------------------------

_SYMS = ["S0", "S1"]
poly = st.builds(
    lambda terms, c: sum((k * sym(s) for s, k in terms), const(c)),
    st.lists(st.tuples(st.sampled_from(_SYMS), st.integers(-3, 5)), max_size=3),
    st.integers(-6, 12))


def _ranges(lo0, span0, lo1, span1):
    return {"S0": (lo0, lo0 + span0), "S1": (lo1, lo1 + span1)}


def _points(ranges, n=40, seed=0):
    rng = random.Random(seed)
    return [{s: rng.randint(lo, hi) for s, (lo, hi) in ranges.items()} for _ in range(n)]


def _with_atoms(table: AtomTable, point: dict[str, int]) -> dict[str, int]:
    out = dict(point)
    for name, atom in table.defs.items():
        out[name] = atom.value(out)
    return out


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["FloorDiv", "CeilDiv", "Mod", "Min", "Max"]), a=poly,
       b=st.one_of(st.integers(1, 9).map(const), poly),
       r=st.tuples(st.integers(1, 6), st.integers(0, 20), st.integers(1, 6), st.integers(0, 20)))
def test_canonical_form_has_the_same_value(kind, a, b, r):
    """The canonical form (divided-out terms, shifts, decided min/max) equals the
    operation at every point of the ranges, and each atom stays within its range."""
    ranges = _ranges(*r)
    table = AtomTable(iter(f"S{i}" for i in range(100, 200)).__next__)
    box = dict(ranges)
    try:
        e = canonical(kind, a, b, box, table.name_of)
    except BladecError:
        lo, _ = interval(b, ranges)
        assert kind != "Min" and kind != "Max"
        return
    atom_ranges = table.ranges(ranges)
    for point in _points(ranges):
        x, y = a.evaluate(point), b.evaluate(point)
        if kind in ("FloorDiv", "CeilDiv", "Mod"):
            assert y >= 1
        want = {"FloorDiv": lambda: x // y, "CeilDiv": lambda: -(-x // y),
                "Mod": lambda: x % y, "Min": lambda: min(x, y), "Max": lambda: max(x, y)}[kind]()
        full = _with_atoms(table, point)
        assert e.evaluate(full) == want
        for name, (lo, hi) in atom_ranges.items():
            assert lo <= full[name] and (hi is None or full[name] <= hi)


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["FloorDiv", "Min", "Max"]), a=poly, b=poly, c=poly, d=poly,
       r=st.tuples(st.integers(1, 6), st.integers(0, 20), st.integers(1, 6), st.integers(0, 20)))
def test_a_claimed_order_holds_at_every_binding(kind, a, b, c, d, r):
    """``compare`` over expressions with atoms, given the atoms' derived ranges, is never
    wrong at any binding of the operands within their ranges."""
    ranges = _ranges(*r)
    table = AtomTable(iter(f"S{i}" for i in range(100, 200)).__next__)
    try:
        q = canonical(kind, a, const(3) if kind == "FloorDiv" else b, dict(ranges),
                      table.name_of)
    except BladecError:
        return
    box = {**ranges, **table.ranges(ranges)}
    left, right = q * c + d, q + c * d
    order = compare(left, right, box)
    ok = {Order.LT: lambda u, v: u < v, Order.LE: lambda u, v: u <= v,
          Order.EQ: lambda u, v: u == v, Order.GE: lambda u, v: u >= v,
          Order.GT: lambda u, v: u > v, Order.UNKNOWN: lambda u, v: True}[order]
    for point in _points(ranges):
        full = _with_atoms(table, point)
        assert ok(left.evaluate(full), right.evaluate(full)), (order, point)


def test_min_compares_where_the_ranges_decide():
    table = AtomTable(iter(f"S{i}" for i in range(100, 200)).__next__)
    ranges = {"S0": (1, 100)}
    m = canonical("Min", S0, const(8), dict(ranges), table.name_of)
    box = {**ranges, **table.ranges(ranges)}
    assert compare(m, const(8), box).le          # min(S0, 8) <= 8 by its range
    assert compare(m, const(9), box) is Order.LT
    assert compare(m, S0, box) is Order.UNKNOWN  # true, but not from ranges: never wrong


def test_apply_refuses_a_divisor_below_one():
    with pytest.raises(BladecError, match="divisor of a dimension must be positive"):
        apply("FloorDiv", 4, 0)
    assert isinstance(SymbolicExpr.lift(3), SymbolicExpr)


def test_cli_analyze_binds_and_refuses_to_solve_for_a_quotient(tmp_path):
    from tests.support.clirunner import make_runner
    from bladec.cli import main
    path = tmp_path / "q.mlir"
    path.write_text(_listing("  @S2 = FloorDiv @S0, @C4\n"))
    runner = make_runner()
    result = runner.invoke(main, ["analyze", str(path), "--dims", "S0=13"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "S2 = floordiv(S0, 4)" in result.stdout
    assert "peak: 8*S0*S2  = 312 B" in result.stdout    # 8 * 13 * floordiv(13, 4)
    result = runner.invoke(main, ["analyze", str(path), "--mem-limit", "1KiB", "--solve", "S2"])
    assert result.exit_code == 1
    assert "S2 = floordiv(S0, 4) follows from its operands: solve for one of them (S0)" \
        in result.stderr


def test_an_operand_without_a_lower_bound_is_refused():
    table = AtomTable(iter(f"S{i}" for i in range(100, 200)).__next__)
    with pytest.raises(BladecError, match=r"min\(S0 - S1, 5\) has no lower bound"):
        canonical("Min", S0 - S1, const(5), {"S0": (1, 9)}, table.name_of)
    # a quotient by a constant takes the negative terms out
    q = canonical("FloorDiv", S0 - S1, const(5), {"S0": (1, 9)}, table.name_of)
    (name, atom), = table.defs.items()
    assert q == sym(name) - S1 and str(atom) == "floordiv(S0 + 4*S1, 5)"
