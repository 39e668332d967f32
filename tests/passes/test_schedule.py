"""The ``schedule`` pass: the paper's worked example, the samples, schedule versions (its
properties over random graphs are test_schedule_random.py's).

- Listing 1 (DESIGN.md section 5): the dot that produces %3 and the broadcast producing
  %1 compete; their memory impacts are 4*10996*S1 and 4*49152*S1 bytes, ``compare``
  decides, and the big broadcast goes after the dot.
- On every sample: the scheduled listing's peak is at most the original's for 20
  bindings inside the declared ranges.
- Schedule versions: where one order can not suit every binding (diamond.mlir), the pass
  keeps a few orders and the one with the lowest peak runs; each is a topological order
  of the same ops, and for every binding the best of them matches the exact-shape oracle.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from bladec.analysis.memory import exact_peak, exact_sizes
from bladec.analysis.optimal import optimal_order
from bladec.analysis.report import analysis_report
from bladec.analysis.version import versions
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.passes.schedule import (ListScheduler, SchedulePass, exact_order, reorder,
                                    symbolic_scheduler)
from bladec.printer import format_module
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import sym
from bladec.symbolic.shapes import analyze_shapes

from tests.support.paths import SAMPLES
from tests.support.schedulecase import (compute_ops, load, names, random_binding,
                                        topological_problem, versioned_peak)

LISTING1 = SAMPLES / "listing1.mlir"


# -- the paper's worked example (DESIGN.md section 5) -----------------------------------

@pytest.fixture(scope="module")
def listing1():
    module = load(LISTING1)
    return module, analyze_shapes(module)


def _index(sched: ListScheduler) -> dict[str, int]:
    return {op.results[0].name: i for i, op in enumerate(sched.ops)}


def test_listing1_dot_and_broadcast_compete(listing1):
    module, info = listing1
    sched = symbolic_scheduler(module.main, info, log=True)
    at = _index(sched)
    placed: set[int] = set()
    # The backward walk: %1084, %1085, then %4's reduce, each ready when placed.
    for name in ("%1084", "%1085", "%4"):
        i = at[name]
        assert sched.pending[i] == 0, f"{name} is not ready"
        sched.place(i)
        placed.add(i)
    ready = sorted(i for i, n in enumerate(sched.pending) if n == 0 and i not in placed)
    dot, bcast = at["%3"], at["%1"]
    assert ready == sorted([dot, bcast])
    assert sched.ops[dot].name == "dot" and sched.ops[bcast].name == "broadcast"
    S1 = sym("S1")
    # Forward sense, bytes: the dot allocates %3 (11008*S1) and frees %2 (12*S1);
    # the broadcast allocates %1 (4096*S0 = 49152*S1) and frees nothing.
    assert sched.impact(dot) == 4 * 10996 * S1
    assert sched.impact(bcast) == 4 * 49152 * S1
    assert info.compare(sched.impact(dot), sched.impact(bcast)) is Order.LT
    # The broadcast has the bigger impact: placed now, i.e. LATER than the dot.
    for candidates in ([dot, bcast], [bcast, dot]):
        assert sched.choose(candidates) == (bcast, "compare")


def test_listing1_full_schedule_puts_the_dot_before_the_broadcast(listing1):
    module, info = listing1
    sched = symbolic_scheduler(module.main, info, log=True)
    ops = sched.run()
    assert topological_problem(module.main, ops) is None
    order = names(ops)
    assert order.index("%3") < order.index("%1")
    # The full walk places the big broadcast first of all (latest in the schedule), by a
    # symbolic comparison against the other outputs' impacts.
    first = sched.decisions[0]
    assert names([first.chosen]) == ["%1"] and first.how == "compare"
    assert order[-1] == "%1"
    # The pass keeps that order, and so does the oracle for any S1.
    out = names(compute_ops(SchedulePass().apply(module).main))
    assert out == order
    for s1 in (1, 7, 1000):
        sizes = exact_sizes(info, {"S1": s1})
        assert names(exact_order(module.main, sizes)) == order


def test_topological_checker_rejects_bad_orders(listing1):
    module, _ = listing1
    ops = compute_ops(module.main)
    assert topological_problem(module.main, ops) is None
    assert "before its definition" in topological_problem(module.main, ops[::-1])
    assert "not the same ops" in topological_problem(module.main, ops[1:])


# -- samples ----------------------------------------------------------------------------

SAMPLE_FILES = sorted(SAMPLES.glob("*.mlir"))


def sample_bindings(info, n: int, seed: int) -> list[dict[str, int]]:
    ranges = {}
    for s in info.free:
        lo, hi = info.ranges.get(s, (1, None))
        ranges[s] = (max(lo, 1), hi if hi is not None else max(lo, 4096))
    rng = random.Random(seed)
    corners = [{s: lo for s, (lo, _) in ranges.items()}, {s: hi for s, (_, hi) in ranges.items()}]
    return corners + [random_binding(rng, ranges) for _ in range(n - 2)]


def test_new_samples_are_present():
    have = {p.name for p in SAMPLE_FILES}
    assert {"branches.mlir", "diamond.mlir", "mlp-train.mlir", "attention.mlir"} <= have
    sizes = {p.name: len(compute_ops(load(p).main)) for p in SAMPLE_FILES}
    assert 10 <= sizes["branches.mlir"] <= 14
    assert sizes["diamond.mlir"] <= 14
    assert 30 <= sizes["mlp-train.mlir"] <= 60
    assert 30 <= sizes["attention.mlir"] <= 60


# the paper-size listings take a minute between them, the sharded small Llama 21 s, its
# unsharded twin 3.4 s (llama-loss-small and the sharded MLP stay in `make test`): `make
# bench` runs them
SLOW_SAMPLES = ("llama-train-paper.mlir", "llama-train-paper-adam.mlir",
              "llama-train-small-sharded.mlir",
              "llama-train-small.mlir")   # issue 36: 3.4 s; llama-loss-small stays


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow)
                                  if p.name in SLOW_SAMPLES else p for p in SAMPLE_FILES],
                         ids=lambda p: p.name)
def test_sample_schedule_never_raises_the_peak(path: Path):
    module = load(path)
    scheduled = SchedulePass().apply(module)
    info = analyze_shapes(module)
    assert topological_problem(module.main, compute_ops(scheduled.main)) is None
    if not info.free:  # a static listing (samples/reshard.mlir): its peak is a number
        assert int(analysis_report(scheduled)["peak"]) <= int(analysis_report(module)["peak"])
        return
    for dims in sample_bindings(info, 20, seed=len(path.name)):
        before = analysis_report(module, dims)
        after = analysis_report(scheduled, dims)
        assert after["peak_bytes"] <= before["peak_bytes"], dims
        assert after["lower_bound_bytes"] == before["lower_bound_bytes"]


@pytest.mark.parametrize("name", ["branches.mlir", "mlp-train.mlir"])
def test_sample_schedule_lowers_the_peak_everywhere(name: str):
    """Where the listing's order is poor, the schedule is strictly better at every binding."""
    module = load(SAMPLES / name)
    scheduled = SchedulePass().apply(module)
    info = analyze_shapes(module)
    for dims in sample_bindings(info, 20, seed=7):
        before = analysis_report(module, dims)["peak_bytes"]
        after = analysis_report(scheduled, dims)["peak_bytes"]
        assert after < before, dims


def test_branches_schedule_is_optimal():
    """branches.mlir is small enough for the DP: the schedule is optimal at every binding."""
    module = load(SAMPLES / "branches.mlir")
    scheduled = SchedulePass().apply(module)
    info = analyze_shapes(module)
    for dims in sample_bindings(info, 10, seed=3):
        sizes = exact_sizes(info, dims)
        peak, _ = optimal_order(module.main, sizes)
        assert versioned_peak(scheduled, sizes) == peak, dims


def test_diamond_is_decided_by_the_fallback():
    """The two towers' impacts can not be ordered symbolically; the fallback picks one."""
    module = load(SAMPLES / "diamond.mlir")
    info = analyze_shapes(module)
    sched = symbolic_scheduler(module.main, info, log=True)
    order = names(sched.run())
    towers = [d for d in sched.decisions
              if {names([op])[0] for op, _ in d.candidates} == {"%a3", "%b3"}]
    assert len(towers) == 1 and towers[0].how == "fallback"
    a3, b3 = (t for _, t in sorted(towers[0].candidates, key=lambda c: names([c[0]])))
    assert info.compare(a3, b3) is Order.UNKNOWN
    # Each tower runs in one piece: no interleaving.
    a = [order.index(n) for n in ("%a1", "%a2", "%a3")]
    b = [order.index(n) for n in ("%b1", "%b2", "%b3")]
    assert max(a) < min(b) or max(b) < min(a)
    # So the right tower to run first depends on the binding, and the oracle follows it.
    first = {}
    for dims in ({"S0": 4000, "S1": 100}, {"S0": 100, "S1": 4000}):
        sizes = exact_sizes(info, dims)
        o = names(exact_order(module.main, sizes))
        first[dims["S0"] > dims["S1"]] = "a" if o.index("%a1") < o.index("%b1") else "b"
    assert first == {True: "a", False: "b"}


def test_diamond_gets_one_version_per_tower_order():
    """So the pass keeps both orders, and the runtime's choice matches the oracle."""
    module = load(SAMPLES / "diamond.mlir")
    info = analyze_shapes(module)
    scheduled = SchedulePass().apply(module)
    orders = versions(scheduled)
    assert [f.name for f in orders] == ["main", "main.v1"]
    firsts = {[n for n in names(f.ops) if n[1] in "ab"][0][:2] for f in orders}
    assert firsts == {"%a", "%b"}
    for dims in sample_bindings(info, 20, seed=5):
        sizes = exact_sizes(info, dims)
        oracle = exact_peak(module.main, sizes, exact_order(module.main, sizes))
        assert versioned_peak(scheduled, sizes) <= oracle, dims
    # One order only (the paper's Algorithm 1) can not: it loses at some binding.
    single = SchedulePass(versions="1").apply(module)
    assert versions(single) == [single.main]
    assert any(exact_peak(single.main, exact_sizes(info, d)) >
               exact_peak(module.main, exact_sizes(info, d),
                          exact_order(module.main, exact_sizes(info, d)))
               for d in sample_bindings(info, 20, seed=5))


def test_versions_are_rebuilt_not_stacked():
    """Scheduling a versioned listing again (even after remat) gives the same versions."""
    module = load(SAMPLES / "diamond.mlir")
    once = SchedulePass().apply(module)
    from bladec.passes.remat import RematPass
    again = SchedulePass().apply(RematPass().apply(once))
    assert format_module(again) == format_module(once)


# -- known problems (bladec/passes/schedule.py), kept as strict xfails --------------------

GE_LISTING = """
func.func @main(%tok: tensor<?x64, [@S1, @C64]>, %img: tensor<?x128, [@S0, @C128]>, %wt: tensor<64x512>, %wi: tensor<128x512>) {
  %t1 = dot(%tok, %wt) -> tensor<?x512, [@S1, @C512]>
  %i1 = dot(%img, %wi) -> tensor<?x512, [@S0, @C512]>
  %t2 = tanh(%t1) -> tensor<?x512, [@S1, @C512]>
  %i2 = logistic(%i1) -> tensor<?x512, [@S0, @C512]>
  %t3 = reduce(%t2) {dims = [0], kind = "sum"} -> tensor<512>
  %i3 = reduce(%i2) {dims = [0], kind = "max"} -> tensor<512>
  %j = add(%t3, %i3) -> tensor<512>
  return %j
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 256}
  SymbolicDim @S1 {min = 16, max = 4096}
}
"""


def test_choose_uses_a_proved_ge():
    module = parse_module(GE_LISTING)
    info = analyze_shapes(module)
    sched = symbolic_scheduler(module.main, info)
    at = _index(sched)
    for name in ("%j", "%t3"):
        sched.place(at[name])
    i3, t2 = at["%i3"], at["%t2"]
    # Placing %t2 now costs nothing (0); placing %i3 frees %i2 (2048 - 2048*S0 <= 0).
    assert info.compare(sched.impact(t2), sched.impact(i3)) is Order.GE
    assert sched.choose([i3, t2]) == (t2, "compare")


def test_ge_listing_is_scheduled_optimally():
    """Before a proved >= counted as a decision, %i2 stayed resident across the %t branch."""
    module = parse_module(GE_LISTING)
    info = analyze_shapes(module)
    order = names(compute_ops(SchedulePass().apply(module).main))
    assert order != ["%i1", "%i2", "%t1", "%t2", "%i3", "%t3", "%j"]
    sizes = exact_sizes(info, {"S0": 256, "S1": 4096})
    scheduled = versioned_peak(SchedulePass().apply(module), sizes)
    best, _ = optimal_order(module.main, sizes)
    assert best <= scheduled < best + 2048 * 256  # no longer %i2 (2048*S0 bytes) too many


ORDER_LISTING = """
func.func @main(%b: tensor<?x16, [@S1, @C16]>, %v: tensor<16>) {
  %0 = exp(%b) -> tensor<?x16, [@S1, @C16]>
  %1 = reduce(%v) {dims = [0], kind = "sum"} -> tensor<f32>
  %2 = concatenate(%0, %0, %b) {dim = 1} -> tensor<?x48, [@S1, @C48]>
  return %1, %2
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S1 {min = 1, max = 512}
}
"""


@pytest.mark.xfail(strict=True, reason="SchedulePass keeps its input order when the "
                   "scheduler's order is not provably no worse, so the output depends on "
                   "the input order: here the scheduler computes the scalar output %1 "
                   "first and holds it across the peak (4 bytes more than %0, %2, %1)")
def test_pass_output_does_not_depend_on_the_input_order():
    module = parse_module(ORDER_LISTING)
    ops = module.main.ops
    outs = set()
    for perm in ([0, 1, 2], [1, 0, 2], [0, 2, 1]):
        func = reorder(module.main, [ops[i] for i in perm])
        shuffled = Module([func], module.shape_graph, module.file)
        outs.add(tuple(names(SchedulePass().apply(shuffled).main.ops)))
    assert len(outs) == 1, outs


def test_pass_output_for_the_order_listing():
    """What the xfail above sees: two outputs, the better one only when it was the input."""
    module = parse_module(ORDER_LISTING)
    info = analyze_shapes(module)
    ops = module.main.ops
    raw = names(symbolic_scheduler(module.main, info).run())
    assert raw == ["%1", "%0", "%2"]
    better = reorder(module.main, [ops[0], ops[2], ops[1]])
    kept = SchedulePass().apply(Module([better], module.shape_graph, module.file))
    assert names(kept.main.ops) == ["%0", "%2", "%1"]
    sizes = exact_sizes(info, {"S1": 100})
    raw_ops = symbolic_scheduler(module.main, info).run()
    assert exact_peak(better, sizes) + 4 == exact_peak(module.main, sizes, raw_ops)
