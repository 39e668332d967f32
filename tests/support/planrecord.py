"""Plans recorded by an earlier planner, to check that a faster one makes the same.

    python -m tests.support.planrecord [--slow] > tests/runtime/planning/consolidation/recorded_plans.json

run from the repository root, with ``PYTHONPATH=TREE`` to record what the bladec tree TREE's
``try_plan`` makes for each case: the samples and random listings of
tests/runtime/planning/consolidation/test_replay.py at several limits, with and without margins
(``--slow``: also the paper-size step, a minute more). The record beside test_replay.py
was made by commit 65ec1a3, before consolidation replayed windows, and made again when
the schedule pass began to keep optimal orders as versions (issue 37), which changed the
optimized listings of attention.mlir and of most random listings.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
from typing import Iterator

from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.planning import policy
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor

from tests.support.paths import SAMPLES, TESTS
from tests.support.randlisting import generate

RECORD = TESTS / "runtime" / "planning" / "consolidation" / "recorded_plans.json"
# (sample, binding, limits: fractions of the planned peak, or with "lower", fractions of
# the way from the largest per-op lower bound to it, where the peak is mostly unavoidable;
# whether also with margins)
QUICK = [("attention.mlir", {"S0": 4, "S1": 256}, (0.9, 0.7, 0.55, 0.45), True),
         ("mlp-train.mlir", {"S0": 4, "S1": 64}, (0.9, 0.7, 0.55, 0.45), True),
         ("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.55,), False)]
SLOW = [("llama-train-small.mlir", {"S0": 2, "S1": 64}, (0.9, 0.7, 0.55, 0.45), True),
        ("llama-train-paper.mlir", {"S0": 16, "S1": 512}, (0.65, 0.4733, 0.3848), False),
        ("llama-train-paper.mlir", {"S0": 4, "S1": 512}, ("lower", 0.5, 0.15), False),
        ("llama-train-paper.mlir", {"S0": 16, "S1": 128}, ("lower", 0.5, 0.15), False)]
RANDOM_SEEDS = range(40)


# the orders the plans were recorded on: the default pipeline's before the schedule's
# local search (polish) joined its candidates; a record of the planner, not of the schedule
PIPELINE = "analyze,schedule{polish=0},remat"


def bound(module, dims: dict[str, int]):
    """The executor of ``module`` after :data:`PIPELINE`, and its binding ``dims`` with
    the remat sites sized (what try_plan takes)."""
    ex = Executor(run_pipeline(module, parse_pipeline(PIPELINE)), NumpyBackend())
    b = ex._bound(ex.bind({n: ex.shapes_for(dims)[n] for n in ex.inputs}, dims))
    ex._priced(b)   # the remat sites sized, as the closed loop does
    return ex, b


def cases(slow: bool) -> Iterator[tuple[str, object, dict[str, int], list[int], dict]]:
    """(case name, executor, bound binding, limits, margins) for each case."""
    for name, dims, fractions, with_margins in SLOW if slow else QUICK:
        ex, b = bound(parse_module((SAMPLES / name).read_text(), name), dims)
        limits = _limits(b, fractions)
        margins = {3: 1000, len(b.program.ops) // 2: 50_000}
        for margin in ({}, margins) if with_margins else ({},):
            yield f"{name} {dims} {sorted(margin.items())}", ex, b, limits, margin
    if slow:
        return
    for seed in RANDOM_SEEDS:
        listing = generate(seed)
        module = parse_module(listing.text, f"<seed {seed}>")
        dims = listing.bindings(random.Random(seed), 1)[0]
        ex, b = bound(module, dims)
        if b.program.evictable:
            yield f"seed {seed} {dims}", ex, b, _limits(b, ("lower", 0.7, 0.4, 0.1)), {}


def _limits(b, fractions: tuple) -> list[int]:
    if fractions[0] != "lower":
        return [int(b.planned_peak * f) for f in fractions]
    lower = max(b.program.lower_bounds(b.sizes))
    return [lower + int((b.planned_peak - lower) * f) for f in fractions[1:]]


def key(plan) -> dict | None:
    """What must not move: the evictions in order, the cuts and the measure."""
    if plan is None:
        return None
    memory = hashlib.sha256(json.dumps(plan.measure.memory).encode()).hexdigest()[:16]
    return {"evictions": [[e.value, e.how, e.after, e.use, e.before, e.order]
                          for e in plan.evictions],
            "cuts": plan.cuts, "peak": plan.measure.peak, "memory": memory,
            "trace": len(plan.trace)}


def plans(slow: bool) -> dict[str, list]:
    out: dict[str, list] = {}
    for name, ex, b, limits, margins in cases(slow):
        out[name] = [[limit, key(policy.try_plan(b.program, b.sizes, limit, ex.cost, True,
                                                 margins))] for limit in limits]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slow", action="store_true")
    args = ap.parse_args()
    record = {"quick": plans(False)}   # (keys: "quick: CASE" or "slow: CASE")
    if args.slow:
        record["slow"] = plans(True)
    # one case a line, so that a change of plan shows as a one-line diff
    lines = [f"  {json.dumps(group + ': ' + name)}: {json.dumps(value)}"
             for group, named in record.items() for name, value in sorted(named.items())]
    print("{\n" + ",\n".join(lines) + "\n}")


if __name__ == "__main__":
    main()
