"""The greedy planner measures where to put an eviction from one walk of one trace
(policy._segment_bytes) instead of simulating a trace per point. That is only a speedup
if every point gets the bytes a full simulation gives it: checked here point by point,
and plan by plan against a reference planner that simulates every trial.
"""
from __future__ import annotations

import pytest

from bladec.parse import parse_module
from bladec.runtime.planning import policy
from bladec.runtime.planning.plan import Eviction, build_trace
from bladec.runtime.planning.trace import simulate

from tests.support import planrecord
from tests.support.paths import SAMPLES

SMALL = (0.9, 0.7, 0.55, 0.45)   # fractions of the planned peak
CASES = [  # the small Llama step (~10 s per fraction): `make bench` (issue 36)
         pytest.param("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.55,),
                      marks=pytest.mark.slow),
         pytest.param("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.8, 0.45),
                      marks=pytest.mark.slow),
         ("attention.mlir", {"S0": 4, "S1": 256}, SMALL),
         ("mlp-train.mlir", {"S0": 4, "S1": 64}, SMALL),
         ("branches.mlir", {"S0": 8, "S1": 256}, SMALL),   # nothing to place
         ("diamond.mlir", {"S0": 64, "S1": 64}, SMALL)]


def _bound(name: str, dims: dict[str, int]):
    return planrecord.bound(parse_module((SAMPLES / name).read_text(), name), dims)


def _simulated_place(program, sizes, budget, chosen, option, points, k, pos):
    """The reference: every point's trace simulated up to op k, the trace chosen
    measured whole (policy._place measures it only up to its first step over the
    budget, together with the first point's)."""
    allowed = budget.limit - budget.margins.get(k, 0)
    best = None
    for i in [option.after] + [p for p in points if p != option.after]:
        option.after = i
        at_k = simulate(build_trace(program, chosen + [option]), sizes, program.inputs,
                        program.outputs, program.donated, until=k).memory[-1]
        if at_k <= allowed:
            best = (at_k, i)
            break
        if best is None or at_k < best[0]:
            best = (at_k, i)
    option.after = best[1]
    trace = build_trace(program, chosen + [option])
    return trace, simulate(trace, sizes, program.inputs, program.outputs,
                           program.donated), budget.allowed(trace)


def _key(plan):
    return None if plan is None else (
        [(e.value, e.how, e.after, e.before) for e in plan.evictions], plan.measure.memory)


@pytest.mark.parametrize("name,dims,fractions",
                         [c for c in CASES if "branches.mlir" not in str(c)])
def test_every_point_measures_as_simulated(name: str, dims: dict[str, int],
                                           fractions: tuple[float, ...],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call the greedy makes: the bytes at op k for every open point, both ways."""
    ex, bound = _bound(name, dims)
    program, sizes = bound.program, bound.sizes
    checked = 0

    def checking_place(program_, sizes_, budget, chosen, option, points, k, pos):
        nonlocal checked
        start = option.after
        trial = Eviction(option.value, option.how, start, option.use)
        held = policy._segment_bytes(program, sizes, build_trace(program, chosen + [trial]),
                                     trial, chosen, k)
        first = simulate(build_trace(program, chosen + [trial]), sizes, program.inputs,
                         program.outputs, program.donated, until=k).memory[-1]
        for i in points:
            trial.after = i
            exact = simulate(build_trace(program, chosen + [trial]), sizes, program.inputs,
                             program.outputs, program.donated, until=k).memory[-1]
            assert first - held(start) + held(i) == exact, (name, k, option.value, i)
            checked += 1
        return fast_place(program_, sizes_, budget, chosen, option, points, k, pos)

    fast_place = policy._place
    monkeypatch.setattr(policy, "_place", checking_place)
    for fraction in fractions:
        policy.try_plan(program, sizes, int(bound.planned_peak * fraction), ex.cost)
    assert checked > 0


@pytest.mark.parametrize("name,dims,fractions", CASES)
def test_plans_equal_the_simulating_planner(name: str, dims: dict[str, int],
                                            fractions: tuple[float, ...],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ex, bound = _bound(name, dims)
    margins = {3: 1000, len(bound.program.ops) // 2: 50_000}
    for fraction in fractions:
        for margin in ({}, margins):
            limit = int(bound.planned_peak * fraction)
            fast = policy.try_plan(bound.program, bound.sizes, limit, ex.cost, True, margin)
            with monkeypatch.context() as patch:
                patch.setattr(policy, "_place", _simulated_place)
                slow = policy.try_plan(bound.program, bound.sizes, limit, ex.cost, True,
                                       margin)
            assert _key(fast) == _key(slow), (fraction, margin)



@pytest.mark.parametrize("name,dims", [("attention.mlir", {"S0": 4, "S1": 256}),
                                       ("mlp-train.mlir", {"S0": 4, "S1": 64})])
def test_a_bounded_measure_is_the_whole_ones_prefix(name: str, dims: dict[str, int],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate's ``bound`` (and ``until`` with it), as policy._place asks them, on
    every trace the greedy makes: the whole measure's entries up to the first one over
    the bound (and on to op ``until``'s), or all of them where none is over."""
    ex, bound = _bound(name, dims)
    program, sizes = bound.program, bound.sizes
    seen = {"over": 0, "whole": 0}
    fast_place = policy._place

    def checking_place(program_, sizes_, budget, chosen, option, points, k, pos):
        trace, measure, allowed = fast_place(program_, sizes_, budget, chosen, option,
                                             points, k, pos)
        whole = simulate(trace, sizes, program.inputs, program.outputs, program.donated)
        bounds = [budget.limit] * len(whole.memory) if allowed is None else allowed
        over = next((p for p, (m, b) in enumerate(zip(whole.memory, bounds)) if m > b), None)
        for until in (None, k):
            got = simulate(trace, sizes, program.inputs, program.outputs, program.donated,
                           until=until, bound=budget.limit if allowed is None else allowed)
            at_k = None if until is None else next(
                p for p, s in zip(_entries(trace), trace) if s.kind == "op" and s.index == k)
            if over is None:
                assert got.memory == whole.memory
            else:
                end = over if at_k is None else max(over, at_k)
                assert got.memory == whole.memory[:end + 1]
            if at_k is not None:
                assert got.until_at == at_k
        seen["whole" if over is None else "over"] += 1
        return trace, measure, allowed

    monkeypatch.setattr(policy, "_place", checking_place)
    for fraction in SMALL:
        for margin in ({}, {3: 1000, len(program.ops) // 2: 50_000}):
            policy.try_plan(program, sizes, int(bound.planned_peak * fraction), ex.cost,
                            True, margin)
    assert seen["over"] > 0 and seen["whole"] > 0


def _entries(trace) -> list[int]:
    """The last memory entry of each step of ``trace`` (simulate's layout)."""
    out, n = [], 0
    for s in trace:
        n += 0 if s.kind == "evict" else 1 if s.kind == "op" or s.method == "reload" \
            else len(s.region)
        out.append(n - 1)
    return out
