"""Shared chain replays: the chains of a plan regenerated together, so that each replays
only what the others before it did not.

A chain (plan.chain_region) is replayed at its own use, from the values resident there.
In a training step's backward a layer's activations are read one after another, and
each one's chain replays the same forward prefix again (the norm, the projections) up
to its own value: the small Llama SGD step at 8x256 under half of jit's device peak
replays 340 ops to regenerate 52 values, 138 of them distinct. ``jax.checkpoint``
replays a layer's forward once and lets its backward read the replayed values.

The same here, within the plan's own terms: a chain's regeneration may move earlier,
to the op where another chain of the same span is regenerated (its ``before`` then
precedes its ``use``, as a reload's prefetch does), and the chains regenerated before
one op run in program order. A chain regenerated there after another one stops at
that one's value (it is resident then: ``Away``), so each replays only its own part,
and the values wait, resident, for their uses. That costs memory (a value held from
the shared point to its use), so each move is measured on the model with every other
step and kept only where the plan still fits its budget and replays less.
"""
from __future__ import annotations

from bladec.runtime.planning.trace import Budget
from bladec.runtime.planning.plan import (CostModel, Eviction, Plan, Program, build_trace,
                                          valid_trace)
from bladec.runtime.planning.trace import Step, simulate

# earlier regeneration points tried per chain, nearest first: a value moved further
# back is held longer, and what a move saves is replayed near its use anyway
POINTS = 6


def replay_seconds(program: Program, trace: list[Step], cost: CostModel,
                   priced: dict[int, tuple[Step, int, int]] | None = None) -> float:
    """What the trace's recomputes cost by the cost model: each replayed op's FLOPs and
    the bytes it writes (its chain's price, plan.chain_region). ``priced``: each
    recompute step's sums kept from an earlier call on traces sharing its steps
    (plan.op_chunk makes a regeneration's step once), by id with the step itself."""
    costs = program.op_costs
    priced = {} if priced is None else priced
    flops = nbytes = 0
    for step in trace:
        if step.kind == "regen" and step.method == "recompute":
            known = priced.get(id(step))
            if known is None or known[0] is not step:
                index = program.op_index
                f = b = 0
                for op in step.region:
                    i = index.get(id(op))
                    if i is not None:
                        f += costs[i][0]
                        b += costs[i][1]
                known = priced[id(step)] = (step, f, b)
            flops += known[1]
            nbytes += known[2]
    return cost.recompute(flops, nbytes)


def replayed_ops(trace: list[Step]) -> int:
    """How many ops the trace's recomputes run: what sharing lowers."""
    return sum(len(s.region) for s in trace if s.kind == "regen" and s.method == "recompute")


def share(program: Program, sizes: dict[str, int], budget: Budget, plan: Plan,
          cost: CostModel) -> Plan:
    """``plan`` with its chains regenerated together where that replays less and every
    step still fits ``budget`` (module text); ``plan`` itself where nothing does."""
    if not program.op_costs or not any(e.how == "chain" for e in plan.evictions):
        return plan
    events = [e.copy() for e in plan.evictions]
    chains = [e for e in events if e.how == "chain"]
    priced: dict[int, tuple[Step, int, int]] = {}
    best = _trial(program, sizes, budget, events, cost, priced)
    if best is None:   # in program order it does not fit: the greedy order stays
        return plan
    for e in sorted(chains, key=lambda e: (e.before, e.order)):
        points = sorted({c.before for c in chains
                         if c is not e and e.after < c.before < e.before}, reverse=True)
        home = e.before
        for point in points[:POINTS]:
            e.before = point
            found = _trial(program, sizes, budget, events, cost, priced, below=best[0])
            if found is not None:
                best = found
                break
            e.before = home
    # each refused move was undone, and the orders are a function of the events
    _order(events, chains, program)
    return Plan(best[1], best[2], events)


def _trial(program: Program, sizes: dict[str, int], budget: Budget,
           events: list[Eviction], cost: CostModel,
           priced: dict[int, tuple[Step, int, int]], below: float | None = None
           ) -> tuple | None:
    """The events' plan with the chains before each op in program order: (its replay
    price, trace, measure), or None where it does not fit or is not valid (measured
    only up to its first step over the budget), or where its price is not under
    ``below``: the price is summed first (the regions' sums are kept in ``priced``), so
    that a move that replays no less is not measured at all (on an imported GPT-2 at
    8x64, measuring was most of the planner's time: simulate and valid_trace over the
    whole trace for each of a plan's hundred moves)."""
    _order(events, [e for e in events if e.how == "chain"], program)
    trace = build_trace(program, events)
    price = replay_seconds(program, trace, cost, priced)
    if below is not None and not price < below:
        return None
    allowed = budget.allowed(trace)
    measure = simulate(trace, sizes, program.inputs, program.outputs, program.donated,
                       bound=budget.limit if allowed is None else allowed)
    if not budget.fits(measure, allowed) or not valid_trace(trace, program):
        return None
    return price, trace, measure


def _order(events: list[Eviction], chains: list[Eviction], program: Program) -> None:
    """Number the chains so that those before one op run in program order (a value's
    chain then stops at the values regenerated just before it)."""
    producer = program.producer
    first = len(events)   # after every other regeneration's order
    for rank, e in enumerate(sorted(chains, key=lambda c: producer[c.value])):
        e.order = first + rank

