"""benchmarks/bench_analysis.py: its workload on a small graph, and (slow) its goals."""
from __future__ import annotations

import signal

import pytest

from bladec.analysis.memory import exact_peak, exact_sizes, exact_timeline
from bladec.parse import parse_module
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import sym
from bladec.verify import verify

from benchmarks import bench_analysis as bench
from tests.support.paths import ROOT

S0, S1 = sym("S0"), sym("S1")


def test_small_graph_workload():
    text = bench.generate_listing(500)
    module = parse_module(text)
    assert abs(len(module.main.ops) - 500) <= bench.OPS_PER_LAYER
    assert verify(module) == []
    a = bench.analyze_listing(text)
    assert a.seconds < 5.0                                # CPU seconds
    info = a.info
    assert info.free == ["S0", "S1"]
    assert info.facts == []
    assert info.ranges == {"S0": (1, 64), "S1": (1, 8192)}
    # every bare ? was solved: the attention scores are [S0, 4, S1, S1]
    assert info.dims["%l3_s"] == [S0, 4, S1, S1]
    assert info.dims["%l3_x2"] == [S0 * S1, 64]
    assert info.dims["%l3_h"] == [S0 * S1, 256]
    assert info.nbytes("%l3_s") == 16 * S0 * S1 * S1
    # the symbolic peak is a max of steps, and it is exact at any binding
    assert 1 <= len(a.peak) <= 4
    for b in ({"S0": 1, "S1": 1}, {"S0": 8, "S1": 512}, {"S0": 64, "S1": 8192}):
        sizes = exact_sizes(info, b)
        assert max(p.evaluate(b) for p in a.peak) == exact_peak(module.main, sizes)
        assert [s.evaluate(b) for s in a.steps] == exact_timeline(module.main, sizes).steps
    # impacts are bytes allocated - bytes freed: the resident memory before op i plus
    # op i's results is step i
    ops = [op for op in module.main.ops if not op.name.startswith("remat.")]
    alloc = [sum((info.nbytes(r.name) for r in op.results), 0 * S0) for op in ops]
    inputs = a.steps[0] - alloc[0]
    assert inputs == sum((info.nbytes(x.name) for x in module.main.args), 0 * S0)
    resident = inputs
    for i in range(len(ops)):
        assert a.steps[i] == resident + alloc[i], i
        resident = resident + a.impacts[i]


def test_comparison_workload_is_mostly_decided():
    a = bench.analyze_listing(bench.generate_listing(500))
    pairs = bench.comparison_pairs(a, n=2000)
    assert len(pairs) == 2000
    rate, cmp = bench.comparison_rate(pairs, a.info.ranges, seconds=0.05)
    assert rate > 0
    assert cmp.calls >= 2000 and cmp.hits == 0          # uncached: every call does the work
    assert cmp.decided + cmp.unknown == cmp.calls
    assert cmp.decision_rate > 0.5
    # a decided answer is right at the ends of the ranges
    for x, y in pairs[:300]:
        order = a.info.compare(x, y)
        for b in ({"S0": 1, "S1": 1}, {"S0": 64, "S1": 8192}, {"S0": 3, "S1": 17}):
            vx, vy = x.evaluate(b), y.evaluate(b)
            assert {Order.LT: vx < vy, Order.LE: vx <= vy, Order.EQ: vx == vy,
                    Order.GE: vx >= vy, Order.GT: vx > vy,
                    Order.UNKNOWN: True}[order], (x, y, order, b)


def test_decision_rates_of_the_samples():
    rates = bench.decision_rates([ROOT / "samples" / "listing1.mlir"])
    calls, decided, pair_calls, pair_decided = rates["listing1.mlir"]
    assert calls > 0 and decided == calls                # every Listing 1 step is ordered
    assert pair_calls == 36 and pair_decided == 36


@pytest.mark.slow
def test_benchmark_comparison_goal(capsys):
    """>= 100,000 uncached comparisons/s on the step and impact pairs of 1k and 10k ops."""
    rates = {}
    for n in (1000, 10_000):
        a = bench.analyze_listing(bench.generate_listing(n))
        rates[n], _ = bench.comparison_rate(bench.comparison_pairs(a), a.info.ranges, 1.0)
    with capsys.disabled():
        print("\ncompare: " + ", ".join(f"{r:,.0f}/s ({n}-op graph)" for n, r in rates.items()))
    assert min(rates.values()) >= bench.GOAL_COMPARISONS_PER_S


class _Timeout(Exception):
    pass


@pytest.mark.slow
def test_benchmark_analysis_goal(capsys):
    """A 10,000-op graph is parsed and analyzed (shapes, timeline, peak) in < 5 s."""
    text = bench.generate_listing(10_000)

    def expire(signum, frame):
        raise _Timeout(f"10k-op analysis not done in {3 * bench.GOAL_ANALYSIS_S:.0f} s")
    # give up at 3x the goal in CPU time (a quadratic analysis would take minutes)
    old = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, 3 * bench.GOAL_ANALYSIS_S)
    try:
        a = bench.analyze_listing(text)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    with capsys.disabled():
        print(f"\nanalysis of {a.n_ops} ops: {a.seconds:.2f} s CPU ({a.wall_s:.2f} s wall)")
    assert a.n_ops >= 10_000
    assert a.seconds < bench.GOAL_ANALYSIS_S
