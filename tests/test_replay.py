"""Consolidation re-measures its what-ifs by the window that changed (runtime/replay.py).
That is only a speedup if every what-if gets the figures a measure from scratch gives it
(simulate, valid_trace, the budget): checked here refresh by refresh against that
reference, on random what-ifs made by hand and on the consolidation's own, and plan by
plan against the planner that measures every what-if from scratch.
"""
from __future__ import annotations

import random
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from bladec.parse import parse_module
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.runtime import consolidate as consolidation, policy
from bladec.runtime.backend import NumpyBackend
from bladec.runtime.budget import Budget
from bladec.runtime.executor import Executor
from bladec.runtime.plan import Eviction, build_trace, valid_trace
from bladec.runtime.replay import Replay
from bladec.runtime.trace import Step

from randlisting import generate

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _bound(module, dims: dict[str, int]):
    ex = Executor(run_pipeline(module, parse_pipeline(DEFAULT_PIPELINE)), NumpyBackend())
    bound = ex._bound(ex.bind({n: ex.shapes_for(dims)[n] for n in ex.inputs}, dims))
    bound.program = replace(bound.version.program, sites=ex._sites(bound.version, bound.shapes))
    return ex, bound


def _sample(name: str, dims: dict[str, int]):
    return _bound(parse_module((SAMPLES / name).read_text(), name), dims)


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
            before = state.replay.windows if hasattr(state, "replay") else 0
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


CASES = [("attention.mlir", {"S0": 4, "S1": 256}, (0.9, 0.7, 0.55, 0.45)),
         ("mlp-train.mlir", {"S0": 4, "S1": 64}, (0.9, 0.7, 0.55, 0.45)),
         ("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.55,)),
         pytest.param("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.9, 0.7, 0.45),
                      marks=pytest.mark.slow)]


@pytest.mark.parametrize("name,dims,fractions", CASES)
def test_consolidation_refreshes_as_the_reference(name: str, dims: dict[str, int],
                                                  fractions: tuple[float, ...],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ex, bound = _sample(name, dims)
    checked = _Checked(monkeypatch)
    margins = {3: 1000, len(bound.program.ops) // 2: 50_000}
    for fraction in fractions:
        for margin in ({}, margins):
            limit = int(bound.planned_peak * fraction)
            fast, slow = _both_ways(bound.program, bound.sizes, limit, ex.cost, margin,
                                    monkeypatch)
            assert _key(fast) == _key(slow), (fraction, margin)
    assert checked.valid > 10 and checked.windows > 0, (checked.valid, checked.windows)


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
    ex, bound = _sample(name, dims)
    valid = windows = 0
    for seed in range(12):
        margins = {} if seed % 2 else {1: 4096, len(bound.program.ops) // 3: 1 << 16}
        budget = Budget(int(bound.planned_peak * (1.5 if seed % 3 else 0.8)), margins)
        v, w = _what_ifs(bound.program, bound.sizes, budget, seed, 60)
        valid, windows = valid + v, windows + w
    assert valid > 100 and windows > 100, (valid, windows)


def test_random_graphs_plan_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random listings (tests/randlisting.py) at a few limits: every consolidation
    refresh as the reference, and the same plans as the from-scratch planner."""
    checked = _Checked(monkeypatch)
    plans = 0
    for seed in range(40):
        listing = generate(seed)
        module = parse_module(listing.text, f"<seed {seed}>")
        binding = listing.bindings(random.Random(seed), 1)[0]
        ex, bound = _bound(module, binding)
        if not bound.program.evictable:
            continue
        lower = max(bound.program.lower_bounds(bound.sizes))
        for fraction in (0.7, 0.4, 0.1):
            limit = lower + int((bound.planned_peak - lower) * fraction)
            fast, slow = _both_ways(bound.program, bound.sizes, limit, ex.cost, {},
                                    monkeypatch)
            assert _key(fast) == _key(slow), (seed, fraction)
            plans += fast is not None and bool(fast.evictions)
    assert plans > 10 and checked.valid > 0, (plans, checked.valid)


@pytest.mark.slow
@pytest.mark.parametrize("dims,limits", [
    ({"S0": 16, "S1": 512}, (18_581_078_184, 13_531_193_432, 11_000_000_000)),
    ({"S0": 4, "S1": 512}, ()), ({"S0": 16, "S1": 128}, ())])
def test_paper_step_consolidates_as_the_reference(dims: dict[str, int],
                                                  limits: tuple[int, ...],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper-size training step: every refresh of several consolidations checked,
    and the plans equal to the from-scratch planner's."""
    ex, bound = _sample("llama-train-paper.mlir", dims)
    checked = _Checked(monkeypatch)
    limits = limits or tuple(int(bound.planned_peak * f) for f in (0.8, 0.6, 0.5))
    for limit in limits:
        fast, slow = _both_ways(bound.program, bound.sizes, limit, ex.cost, {}, monkeypatch)
        assert _key(fast) == _key(slow), limit
    assert checked.windows > 100
