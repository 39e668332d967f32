"""Which tensors to evict, where, and how to bring them back, for one binding.

Once the symbols are bound every size is a number, so the whole run is planned at entry
(and cached per binding). The plan starts from the listing's order with nothing evicted;
while some step of the simulated trace is over the limit, it adds the eviction that
covers that step at the best price, in the spirit of DTR and DELTA: a candidate listed by
a ``remat.evict`` before the step, whose next use comes after it, ranked by regeneration
cost per byte freed per step away (reload: two copies over the host link, one when an
earlier eviction already left a copy on the host; recompute: the region's FLOPs and the
bytes it writes). A recompute whose region reads values that would otherwise be dead
keeps them alive until it runs: it is weighed by the bytes it frees net of those, and
refused when that is not positive. Where the host copies share the device's memory (a
CPU device: ``CostModel.one_memory``) a reload frees nothing a limit counts, and only
recomputes are candidates. Where that does not fit, the plan is made again with chains
instead of the listing's regions (plan.chain_region: recomputed from the nearest
resident values through what is evicted or dead, so nothing is tied down; a chain is
priced by its ops' FLOPs and bytes per byte it frees, and evicting a value a chosen
chain stops at adds that value's recompute to the chain's price). When no candidate
covers an over-limit step, the limit can not be met and the smallest limit that can is
searched.

Every eviction and every reload cuts the run into one more compiled segment (section 7),
so the plan is then consolidated: evictions that later choices made unnecessary are
dropped, and the cut points are shared where the limit allows: an eviction may move to
another ``remat.evict`` point of the same span, and a reload may run earlier than the
``remat.regenerate`` that asks for it (a prefetch), as long as every step still fits.
Recomputes need no cut: their region's ops run inside the next segment. Last, chains
of the same span are regenerated together where that replays less and still fits
(consolidation/sharing.py): each then replays only what the ones before it did not.

The limit the planner keeps is a :class:`~bladec.runtime.planning.trace.Budget`: the user's
limit, less per-op margins where the executor found the compiled segments needing more
device memory than the model says (fitting.py closes that loop).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Callable

from bladec.runtime.planning.limit import LimitError
from bladec.runtime.planning.trace import Budget
from bladec.runtime.planning.consolidation.consolidate import consolidate as consolidate_plan
from bladec.runtime.planning.consolidation.sharing import share
from bladec.runtime.planning.plan import (Away, CostModel, Eviction, Plan, Program,  # noqa: F401
                                 RematSite, base_trace, build_trace, chain_region,
                                 cut_points)
from bladec.runtime.planning.trace import Measure, Step, position_ops, simulate, walk


def plan_run(program: Program, sizes: dict[str, int], limit: int | None,
             cost: CostModel = CostModel(), consolidate: bool = True,
             margins: dict[int, int] | None = None) -> Plan:
    """A trace whose simulated memory fits ``limit`` (less ``margins[op]`` at op ``op``),
    or LimitError naming the smallest limit the model can meet."""
    plan = try_plan(program, sizes, limit, cost, consolidate, margins)
    if plan is not None:
        return plan
    unconstrained = simulate(base_trace(program), sizes, program.inputs, program.outputs,
                          program.donated).peak
    lo, hi = 0, unconstrained
    while lo < hi:  # the smallest limit the planner meets, for the message
        mid = (lo + hi) // 2
        if _fitted(program, sizes, Budget(mid), cost) is not None:
            hi = mid
        else:
            lo = mid + 1
    raise LimitError(limit or 0, lo, f"without eviction the model's peak is {unconstrained} "
                     "bytes")


def try_plan(program: Program, sizes: dict[str, int], limit: int | None,
             cost: CostModel = CostModel(), consolidate: bool = True,
             margins: dict[int, int] | None = None) -> Plan | None:
    """:func:`plan_run` without the search for a limit that works: None if none fits."""
    if limit is None:
        trace = base_trace(program)
        return Plan(trace, simulate(trace, sizes, program.inputs, program.outputs,
                          program.donated))
    budget = Budget(limit, margins)
    plan = _fitted(program, sizes, budget, cost)
    if plan is not None and consolidate and plan.evictions:
        plan = share(program, sizes, budget,
                     consolidate_plan(program, sizes, budget, plan, cost), cost)
    return plan


def _fitted(program: Program, sizes: dict[str, int], budget: Budget,
            cost: CostModel) -> Plan | None:
    """The first greedy plan that fits: the listing's recomputes (cheap, but each ties
    down what its region reads), with reloads; then, where a host copy frees something
    (not in one memory, ``CostModel.one_memory``), reloads alone, which fit whatever
    can fit; in one memory, chains (plan.chain_region), which tie nothing down: a chain
    whose checkpoint is evicted later reaches further back, so they go as low as
    replaying the whole step from its inputs."""
    plan = _greedy(program, sizes, budget, cost)
    if plan is None and not cost.one_memory:
        plan = _greedy(program, sizes, budget, cost, False)
    if plan is None and cost.one_memory and program.op_costs:
        plan = _greedy(program, sizes, budget, cost, chains=True)
    return plan


def _greedy(program: Program, sizes: dict[str, int], budget: Budget,
            cost: CostModel, recompute: bool = True, chains: bool = False) -> Plan | None:
    chosen: list[Eviction] = []
    trace = base_trace(program)
    measure = simulate(trace, sizes, program.inputs, program.outputs,
                          program.donated)
    allowed = budget.allowed(trace)
    if budget.fits(measure, allowed):
        return Plan(trace, measure)
    evicted: set[tuple[int, str]] = set()
    for _ in range(10 * len(program.ops) + 10):
        over = _first_over(trace, measure, budget, allowed)
        if over is None:
            return Plan(trace, measure, chosen)
        k, pos = over
        found = _best_option(program, sizes, cost, k, evicted, chosen, recompute, chains)
        if found is None:
            return None
        option, points = found
        option.order = len(chosen)
        trace, measure, allowed = _place(program, sizes, budget, chosen, option, points, k,
                                         pos)
        chosen.append(option)
        evicted.add((option.after, option.value))
    return None


def _place(program: Program, sizes: dict[str, int], budget: Budget, chosen: list[Eviction],
           option: Eviction, points: list[int], k: int, pos: int
           ) -> tuple[list[Step], Measure, list[int] | None]:
    """Where to put ``option``'s eviction among its open ``points`` (op indices it may
    follow): its own first, then the others, the first that brings op k within the
    budget, else the one that lowers it most. The point matters beyond the bytes: the
    eviction cuts a segment there, and a value made just before a cut and read just
    after it is the next segment's argument, held until that segment ends.

    Returns the new trace, its measure up to its first step over the budget (whole
    where none is: all the greedy reads of it) and the budget per position."""
    allowed_k = budget.limit - budget.margins.get(k, 0)
    order = [option.after] + [p for p in points if p != option.after]
    trace = build_trace(program, chosen + [option])
    # only op k's bytes decide: the first trial is measured up to op k (and on to its
    # first step over the budget, all the greedy reads of the trace if it stays), the
    # others differ from it only in where op k's segment starts (_segment_bytes)
    measure, allowed = _bounded(program, sizes, budget, trace, until=k)
    at_first = measure.memory[measure.until_at]
    best = (at_first, order[0])
    if at_first > allowed_k and len(order) > 1:
        held = _segment_bytes(program, sizes, trace, option, chosen, k)
        base = at_first - held(option.after)
        for i in order[1:]:
            at_k = base + held(i)
            if at_k <= allowed_k:
                best = (at_k, i)
                break
            if at_k < best[0]:
                best = (at_k, i)
    if best[1] != option.after:
        option.after = best[1]
        trace = build_trace(program, chosen + [option])
        measure, allowed = _bounded(program, sizes, budget, trace)
    return trace, measure, allowed


def _bounded(program: Program, sizes: dict[str, int], budget: Budget, trace: list[Step],
             until: int | None = None) -> tuple[Measure, list[int] | None]:
    """``trace``'s measure up to its first step over the budget (and at least to op
    ``until``), and the budget per position it was measured against."""
    allowed = budget.allowed(trace)
    return simulate(trace, sizes, program.inputs, program.outputs, program.donated,
                    until=until, bound=budget.limit if allowed is None else allowed), allowed


def _segment_bytes(program: Program, sizes: dict[str, int], trace: list[Step],
                   option: Eviction, chosen: list[Eviction], k: int) -> Callable[[int], int]:
    """For the trace with ``option`` evicted after any op i, the bytes held at op k's
    step only because op k's segment holds its arguments, as a function of i.

    Moving the eviction changes nothing else at op k: ``option.value`` is away over op
    k from every point, and a cut only decides which segment op k runs in. The segment
    starts at the later of the chosen evictions' and reloads' last cut before op k and
    the cut after op i; a value not pinned, made before that start and last read in
    the segment before op k is its argument, held to its end (trace.held_until). So
    every point is measured from one walk of one trace, with positions in it."""
    walked = walk(trace)
    begin: dict[int, int] = {}   # op j -> first position of a segment cut just before j
    pending = None
    for pos, step in enumerate(trace):
        if step.kind == "op":
            begin[step.index] = pos if pending is None else pending
            pending = None
            if step.index == k:
                pos_k = pos
                break   # no later point is open: every point is before op k
        elif step.kind == "regen" and step.method == "recompute" and pending is None:
            pending = pos
    chosen_start = max((c for c in cut_points(chosen) if c <= k), default=0)
    floor = begin[chosen_start]
    pinned = (set(program.inputs) - program.donated) | program.outputs
    # the values that can be arguments of op k's segment: last read in it before op k
    reach = [(walked.made[v], at, sizes[v]) for v, at in walked.last.items()
             if floor <= at < pos_k and v in walked.made and v != option.value
             and v not in pinned]

    def held(i: int) -> int:
        start = max(begin[i + 1], floor)
        return sum(size for made, at, size in reach if made < start <= at)
    return held


def _first_over(trace: list[Step], measure: Measure, budget: Budget,
                allowed: list[int] | None) -> tuple[int, int] | None:
    """(compute op index, memory position) of the first over-budget step of the trace
    (``allowed``: the budget's, per position); a regeneration's positions count as the
    op it precedes (-1: none follows)."""
    over = budget.first_over(measure, allowed)
    return None if over is None else (position_ops(trace)[over], over)


def _best_option(program: Program, sizes: dict[str, int], cost: CostModel, k: int,
                 evicted: set[tuple[int, str]], chosen: list[Eviction],
                 recompute: bool, chains: bool = False
                 ) -> tuple[Eviction, list[int]] | None:
    """The cheapest eviction that makes op k's step lighter: after some op i < k; with
    the other ops it may follow instead (its open points). ``chains``: recompute by
    chains (plan.chain_region) instead of the listing's regions.

    Called once per eviction the planner adds, over every candidate before op k: what
    it asks of the plan so far (which spans are away, what a recompute reads) is indexed
    once per call, so each candidate costs a few lookups."""
    # what a chosen recompute reads must be there when it runs
    protected = {n for e in chosen if e.how == "recompute"
                 for n in program.sites[(e.value, e.use)].external}
    offloaded = {e.value for e in chosen if e.how == "reload"}
    away = {(e.value, e.use) for e in chosen}
    spans: dict[str, list[tuple[int, int]]] = {}
    for e in chosen:
        spans.setdefault(e.value, []).append((e.after, e.before))
    chains = chains and recompute and bool(program.op_costs)
    evicted_values = {v for _, v in evicted}
    gone = Away(chosen)
    # a chain evicted over op j stops at values resident there; evicting one of them
    # makes the chain reach further back (it costs that value's recompute again), and
    # what a chain can not recompute (kept alive for it) must stay
    stopped: dict[str, list[int]] = {}
    for e in chosen:
        if e.how == "chain":
            found = chain_region(program, e.value, e.before, gone.at(e.before, e))
            protected.update(found.kept)
            for n in found.stops:
                stopped.setdefault(n, []).append(e.before)
    last = Eviction("", "chain", -1, -1, order=len(chosen))  # the next one: after all
    producer, chainable = program.producer, program.chainable
    best: tuple[tuple[float, int], Eviction] | None = None
    for value, use, points in program.evictable:
        if use <= k or value in protected or (value, use) in away:
            continue  # not needed over op k, needed by a chosen recompute, or away already
        size = sizes[value]
        if size == 0:
            continue
        open_points = points[:bisect_left(points, (k, -1))]
        if open_points and value in evicted_values:   # (few are: most keep every point)
            open_points = [p for p in open_points if (p[0], value) not in evicted]
        if not open_points:
            continue
        site = program.sites[(value, use)]
        how, seconds, freed = "reload", cost.reload(size, value in offloaded), \
            cost.reload_frees(size)
        if recompute and not chains and site.region is not None \
                and not _away_at(spans, site.external, use):
            # the values it keeps alive are weighed against what it frees
            net = size - sum(sizes[n] for n in site.region_inputs)
            t = cost.recompute(site.flops, site.nbytes)
            if net > 0 and (freed == 0 or t / net < seconds / freed):
                how, seconds, freed = "recompute", t, net
        if chains and value in producer and chainable[producer[value]]:
            found = chain_region(program, value, use, gone.at(use, last))
            net = size - sum(sizes[n] for n in found.kept)
            t = cost.recompute(found.flops, found.nbytes)
            # the chosen chains that stop at it over its span reach back through it
            t += t * sum(1 for j in stopped.get(value, ()) if open_points[0][0] < j <= use)
            if found.ok and net > 0 and (freed == 0 or t / net < seconds / freed):
                how, seconds, freed = "chain", t, net
        elif value in stopped:
            continue   # a chain stops at it, and could not go through it
        if freed == 0:
            continue   # one memory: a host copy saves nothing, and no recompute frees
        # the cost is the same from every point, the steps away are not: the earliest
        # point scores best (with a free regeneration all score 0 and the latest is first)
        i, rank = open_points[-1] if seconds == 0 else open_points[0]
        key = (seconds / (freed * (use - i)), rank)
        if best is None or key < best[0]:
            best = (key, (Eviction(value, how, i, use), [p for p, _ in open_points]))
    return best[1] if best else None


def _away_at(spans: dict[str, list[tuple[int, int]]], names: list[str], use: int) -> bool:
    """Whether any of ``names`` is evicted over op ``use`` (``spans``: value -> the
    (after, before) of its evictions in the plan so far)."""
    return any(a < use <= b for n in names for a, b in spans.get(n, ()))


