"""The remat pass: evict points, regeneration branches, the paper's recompute search."""
from __future__ import annotations

import pytest

from bladec.analysis.memory import exact_peak, exact_sizes
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.passes.remat import RematPlanner, rematerialize
from bladec.printer import format_module
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import const, sym
from bladec.symbolic.shapes import analyze_shapes
from bladec.verify import verify

from tests.support.paths import SAMPLES

S1 = sym("S1")

CHAIN = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>, %w: tensor<?x?, [@S1, @S1]>) {
  %a = dot(%x, %w) -> tensor<?x?, [@S0, @S1]>
  %b = exp(%a) -> tensor<?x?, [@S0, @S1]>
  %c = dot(%b, %w) -> tensor<?x?, [@S0, @S1]>
  %d = tanh(%c) -> tensor<?x?, [@S0, @S1]>
  %e = dot(%d, %w) -> tensor<?x?, [@S0, @S1]>
  %f = mul(%e, %b) -> tensor<?x?, [@S0, @S1]>
  %g = add(%f, %a) -> tensor<?x?, [@S0, @S1]>
  return %g
}
"""


def _listing1() -> Module:
    return parse_module((SAMPLES / "listing1.mlir").read_text())


def test_paper_recompute_search_for_percent4() -> None:
    module = _listing1()
    info = analyze_shapes(module)
    planner = RematPlanner(module.main, info)
    consumer = next(i for i, op in enumerate(planner.ops) if op.result_names == ["%1084"])
    trail = planner.recompute_search("%4", consumer)
    # bytes are 4 per f32 element: the paper's -11007*S1, -11*S1, +1*S1 elements
    assert [step.impact for step in trail] == [-11007 * 4 * S1, -11 * 4 * S1, 4 * S1]
    assert [[op.name for op in step.ops] for step in trail] == [
        ["reduce"], ["dot", "reduce"], ["dynamic_reshape", "dot", "reduce"]]
    assert [info.compare(step.impact, const(0)) for step in trail] == [Order.LT, Order.LT,
                                                                        Order.GT]
    region = planner.recompute_region("%4", consumer)
    assert region is not None and [op.name for op in region] == [
        "dynamic_reshape", "dot", "reduce"]


def _optimized(text: str, pipeline: str = "analyze,schedule,remat") -> Module:
    module = parse_module(text)
    verify(module)
    return run_pipeline(module, parse_pipeline(pipeline))


def test_evict_and_regenerate_points() -> None:
    out = _optimized(CHAIN)
    ops = out.main.ops
    names = [op.name for op in ops]
    assert names[0] == "remat.plan"
    evicts = [op.operands for op in ops if op.name == "remat.evict"]
    assert ["%a", "%b"] in evicts
    regens = {op.operands[0]: op for op in ops if op.name == "remat.regenerate"}
    assert set(regens) == {"%a", "%b"}
    # each regenerate sits right before a consumer of its tensor
    for i, op in enumerate(ops):
        if op.name == "remat.regenerate":
            nxt = next(o for o in ops[i + 1:] if o.name != "remat.regenerate")
            assert op.operands[0] in nxt.operands
    body = regens["%b"].regions["recompute"]
    assert [o.name for o in body] == ["exp"] and body[-1].result_names == ["%b"]
    assert regens["%a"].attrs["reload"] is True


@pytest.mark.parametrize("name", [  # the Llama training listings: `make bench` (the small
    # ones since issue 36; llama-loss-small stays)
    pytest.param(p.name, marks=pytest.mark.slow) if p.name.startswith("llama-train-")
    else p.name for p in sorted(SAMPLES.glob("*.mlir"))])
def test_round_trip_and_idempotent_on_samples(name: str) -> None:
    first = format_module(_optimized((SAMPLES / name).read_text()))
    again = parse_module(first)
    verify(again)
    assert format_module(again) == first, name
    assert format_module(run_pipeline(again, parse_pipeline("analyze,schedule,remat"))) \
        == first, name


def test_paper_acceptance_pipe() -> None:
    first = format_module(_optimized((SAMPLES / "listing1.mlir").read_text(), "schedule,remat"))
    assert format_module(_optimized(first)) == first


def test_plan_does_not_change_planned_peak() -> None:
    module = parse_module(CHAIN)
    info = analyze_shapes(module)
    planned = rematerialize(module.main, info)
    for s0, s1 in [(1, 1), (3, 17), (64, 5)]:
        sizes = exact_sizes(info, {"S0": s0, "S1": s1})
        assert exact_peak(planned, sizes) == exact_peak(module.main, sizes)


def test_candidates_are_not_used_by_next_op_and_used_later() -> None:
    out = _optimized(CHAIN)
    compute = [op for op in out.main.ops if not op.name.startswith("remat.")]
    pos = 0
    for op in out.main.ops:
        if op.name == "remat.evict":
            nxt = compute[pos] if pos < len(compute) else None
            for t in op.operands:
                assert nxt is None or t not in nxt.operands
                assert any(t in o.operands for o in compute[pos:])
        elif not op.name.startswith("remat."):
            pos += 1


def test_pruning_drops_candidates_that_cannot_matter() -> None:
    # the broadcast's own operand and result (unavoidable) outweigh every step while
    # %small would be away, so evicting %small can never lower the peak
    text = """
func.func @main(%x: tensor<?, [@S0]>) {
  %small = exp(%x) -> tensor<?, [@S0]>
  %t1 = neg(%x) -> tensor<?, [@S0]>
  %t2 = neg(%t1) -> tensor<?, [@S0]>
  %u = add(%small, %t2) -> tensor<?, [@S0]>
  %big = broadcast_in_dim(%u) {dims = [1]} -> tensor<1000x?, [@C1000, @S0]>
  %r = reduce(%big) {dims = [0]} -> tensor<?, [@S0]>
  return %r
}
"""
    out = _optimized(text, "analyze,remat")
    plan = out.main.ops[0]
    assert plan.name == "remat.plan"
    assert plan.attrs == {"evict_points": 0, "candidates": 0, "pruned": 2}
    assert not any(op.name in ("remat.evict", "remat.regenerate") for op in out.main.ops)
    # when a step while %small is away exceeds all unavoidable memory, it is kept
    wide = """
func.func @main(%x: tensor<?, [@S0]>) {
  %small = exp(%x) -> tensor<?, [@S0]>
  %t1 = neg(%x) -> tensor<?, [@S0]>
  %t2 = broadcast_in_dim(%t1) {dims = [1]} -> tensor<2x?, [@C2, @S0]>
  %u = reduce(%t2) {dims = [0]} -> tensor<?, [@S0]>
  %out = add(%small, %u) -> tensor<?, [@S0]>
  return %out
}
"""
    kept = _optimized(wide, "analyze,remat")
    assert kept.main.ops[0].attrs == {"evict_points": 3, "candidates": 3, "pruned": 0}
    evicted = [op.operands for op in kept.main.ops if op.name == "remat.evict"]
    assert evicted == [["%small"]] * 3


@pytest.mark.parametrize("bad, message", [
    ("  remat.regenerate(%a) {reload = false}\n", "needs 'reload = true' or a 'recompute'"),
    ("  remat.regenerate(%a) {reload = true} recompute {\n    %z = exp(%x) -> tensor<4>\n  }\n",
     "must end by defining %a"),
    ("  remat.evict(%nope)\n", "undefined value %nope"),
])
def test_bad_remat_ops_are_errors(bad: str, message: str) -> None:
    from bladec.errors import BladecError
    text = ("func.func @main(%x: tensor<4>) {\n  %a = exp(%x) -> tensor<4>\n" + bad +
            "  %b = neg(%a) -> tensor<4>\n}\n")
    with pytest.raises(BladecError, match=message):
        verify(parse_module(text))


def test_recompute_region_takes_a_constant_along() -> None:
    """A producer with no operands (a constant) joins the region instead of being kept
    alive for it: the broadcast of a constant is recomputed from nothing."""
    text = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>) {
  %c = constant() {value = 2.0} -> tensor<f32>
  %cb = broadcast_in_dim(%c) {dims = []} -> tensor<?x?, [@S0, @S1]>
  %a = mul(%x, %cb) -> tensor<?x?, [@S0, @S1]>
  %big = broadcast_in_dim(%a) {dims = [1, 2]} -> tensor<64x?x?, [@C64, @S0, @S1]>
  %r = reduce(%big) {dims = [0], kind = "max"} -> tensor<?x?, [@S0, @S1]>
  %o = mul(%r, %cb) -> tensor<?x?, [@S0, @S1]>
  return %o
}
"""
    module = parse_module(text)
    info = analyze_shapes(module)
    planner = RematPlanner(module.main, info)
    use = next(i for i, op in enumerate(planner.ops) if op.result_names == ["%o"])
    trail = planner.recompute_search("%cb", use)
    assert [op.name for op in trail[-1].ops] == ["constant", "broadcast_in_dim"]
    assert trail[-1].keep == [] and trail[-1].impact == info.nbytes("%cb")
    regen = next(op for op in _optimized(text, "analyze,remat").main.ops
                 if op.name == "remat.regenerate" and op.operands == ["%cb"])
    assert [o.result_names for o in regen.regions["recompute"]] == [["%c"], ["%cb"]]
    # the attention sample's scale broadcast likewise
    attention = _optimized((SAMPLES / "attention.mlir").read_text())
    regens = [op for op in attention.main.ops
              if op.name == "remat.regenerate" and op.operands == ["%scb"]]
    assert regens and all([o.name for o in r.regions["recompute"]] ==
                          ["constant", "broadcast_in_dim"] for r in regens)
