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
CASES = [("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.55,)),  # ~10 s per fraction
         pytest.param("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.8, 0.45),
                      marks=pytest.mark.slow),
         ("attention.mlir", {"S0": 4, "S1": 256}, SMALL),
         ("mlp-train.mlir", {"S0": 4, "S1": 64}, SMALL),
         ("branches.mlir", {"S0": 8, "S1": 256}, SMALL),   # nothing to place
         ("diamond.mlir", {"S0": 64, "S1": 64}, SMALL)]


def _bound(name: str, dims: dict[str, int]):
    return planrecord.bound(parse_module((SAMPLES / name).read_text(), name), dims)


def _simulated_place(program, sizes, budget, chosen, option, points, k, pos):
    """The reference: every point's trace simulated up to op k."""
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
    return trace, simulate(trace, sizes, program.inputs, program.outputs, program.donated)


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

