"""Consolidation re-measures its what-ifs by the window that changed (runtime/planning/consolidation/replay.py).
That is only a speedup if every what-if gets the figures a measure from scratch gives it
(simulate, valid_trace, the budget): checked here refresh by refresh against that
reference, on random what-ifs made by hand and on the consolidation's own, and plan by
plan against the planner that measures every what-if from scratch.
"""
from __future__ import annotations

import json
import random
from functools import partial

import pytest

from bladec.parse import parse_module
from bladec.runtime.planning import policy
from bladec.runtime.planning.consolidation import consolidate as consolidation
from bladec.runtime.planning.trace import Budget
from bladec.runtime.planning.plan import Eviction, build_trace, valid_trace
from bladec.runtime.planning.consolidation.replay import Replay
from bladec.runtime.planning.trace import Step

from tests.support import planrecord


def _sample(name: str, dims: dict[str, int]):
    return planrecord.bound(parse_module((planrecord.SAMPLES / name).read_text(), name), dims)


def _sig(trace: list[Step]) -> list[tuple]:
    return [(s.kind, s.index, s.value, s.method, tuple(map(id, s.region))) for s in trace]


def _assert_as_reference(replay: Replay, program, sizes, budget, trace) -> bool:
    """The replay's figures for ``trace`` are the reference's; True when it is valid."""
    ref = Replay(program, sizes, budget)
    ref.reference(trace)
    assert _sig(replay.trace) == _sig(trace)
    assert replay.ok == ref.ok
    if not valid_trace(trace, program):
        return False
    assert replay.memory == ref.memory and replay.peak == ref.peak
    assert replay.span == ref.span and replay.op_at == ref.op_at
    assert replay.allowed == ref.allowed and replay.fits == ref.fits
    return True


class _Checked:
    """Wraps consolidation's refresh: every what-if is measured both ways."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.states = self.valid = self.windows = 0
        fast = consolidation._State.refresh

        def refresh(state, touched=()):
            before = state.replay.windows
            ok = fast(state, touched)
            self.windows += state.replay.windows - before
            trace = build_trace(state.program, state.events)
            self.valid += _assert_as_reference(state.replay, state.program, state.sizes,
                                               state.budget, trace)
            self.states += 1
            return ok
        monkeypatch.setattr(consolidation._State, "refresh", refresh)


def _key(plan) -> tuple | None:
    return None if plan is None else (
        [(e.value, e.how, e.after, e.use, e.before, e.order) for e in plan.evictions],
        _sig(plan.trace), plan.measure)


def _both_ways(program, sizes, limit: int, cost, margins, monkeypatch) -> tuple:
    """try_plan with the windowed consolidation and with the from-scratch one."""
    fast = policy.try_plan(program, sizes, limit, cost, True, margins)
    with monkeypatch.context() as patch:
        patch.setattr(policy, "consolidate_plan",
                      partial(consolidation.consolidate, incremental=False))
        slow = policy.try_plan(program, sizes, limit, cost, True, margins)
    return fast, slow


RECORD = json.loads(planrecord.RECORD.read_text())


@pytest.mark.parametrize("group", ["quick", pytest.param("slow", marks=pytest.mark.slow)])
def test_plans_as_recorded_and_every_refresh_as_the_reference(
        group: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case of tests/support/planrecord.py (samples with and without margins, random
    listings, in the slow group the paper-size step at three bindings): try_plan makes
    the plan recorded by the planner before the replay, and so does the from-scratch
    consolidation; every refresh of both is checked against the reference."""
    checked = _Checked(monkeypatch)
    seen = set()
    for name, ex, b, limits, margins in planrecord.cases(group == "slow"):
        recorded = RECORD[f"{group}: {name}"]
        seen.add(f"{group}: {name}")
        assert [limit for limit, _ in recorded] == limits, name
        for limit, want in recorded:
            fast, scratch = _both_ways(b.program, b.sizes, limit, ex.cost, margins,
                                       monkeypatch)
            assert planrecord.key(fast) == want, (name, limit)
            assert _key(fast) == _key(scratch), (name, limit)
    assert seen == {k for k in RECORD if k.startswith(group)}
    print(f"{group}: {len(seen)} cases, {checked.states} refreshes checked ({checked.valid} "
          f"valid), {checked.windows} replayed by windows")
    assert checked.valid > 200 and checked.windows > 100, (checked.valid, checked.windows)


def _random_events(rng: random.Random, program, count: int) -> list[Eviction]:
    """Evictions of the program's candidates at random points, reloaded or recomputed,
    some before their use (prefetches): many of the traces are invalid on purpose."""
    events = []
    for value, use, points in rng.sample(program.evictable, min(count, len(program.evictable))):
        after = rng.choice(points)[0]
        how = "recompute" if program.sites[(value, use)].region is not None \
            and rng.random() < 0.5 else "reload"
        before = rng.randint(after + 1, use) if rng.random() < 0.3 else use
        events.append(Eviction(value, how, after, use, before, rng.randint(0, 9)))
    return events


def _what_ifs(program, sizes, budget: Budget, seed: int, steps: int) -> tuple[int, int]:
    """Random changes to random events, each measured through a consolidation state
    (chunks rewoven, the window replayed) and checked against the reference; a change
    is kept when the state fits, else undone (as consolidate does) or, now and then,
    kept anyway (the replay then starts from an invalid or over-budget trace)."""
    rng = random.Random(seed)
    events = _random_events(rng, program, rng.randint(1, 8))
    state = consolidation._State(program, sizes, budget, events)
    valid = 0
    for _ in range(steps):
        if not events:
            break
        e = rng.choice(events)
        points = [p for p, _ in next(pts for v, u, pts in program.evictable
                                     if (v, u) == (e.value, e.use))]
        old = (e.after, e.before, e.how, e.order)
        move = rng.random()
        if move < 0.4:
            e.after = rng.choice(points)
        elif move < 0.7:
            e.before = rng.randint(min(e.after + 1, e.use), e.use)
        elif move < 0.85:
            e.order = rng.randint(0, 9)
        elif program.sites[(e.value, e.use)].region is not None:
            e.how = "recompute" if e.how == "reload" else "reload"
        saved = state.saved()
        ok = state.refresh((old[0], old[1], e.after, e.before))
        valid += _assert_as_reference(state.replay, program, sizes, budget,
                                      build_trace(program, events))
        if not ok and rng.random() < 0.8:
            e.after, e.before, e.how, e.order = old
            state.restore(saved)
    return valid, state.replay.windows


@pytest.mark.parametrize("name,dims", [("attention.mlir", {"S0": 4, "S1": 256}),
                                       ("mlp-train.mlir", {"S0": 4, "S1": 64})])
def test_random_what_ifs_replay_as_the_reference(name: str, dims: dict[str, int]) -> None:
    _, bound = _sample(name, dims)
    valid = windows = 0
    for seed in range(12):
        margins = {} if seed % 2 else {1: 4096, len(bound.program.ops) // 3: 1 << 16}
        budget = Budget(int(bound.planned_peak * (1.5 if seed % 3 else 0.8)), margins)
        v, w = _what_ifs(bound.program, bound.sizes, budget, seed, 60)
        valid, windows = valid + v, windows + w
    assert valid > 100 and windows > 100, (valid, windows)
