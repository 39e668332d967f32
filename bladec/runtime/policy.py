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
refused when that is not positive. When no candidate covers an over-limit step, the
limit can not be met and the smallest limit that can is searched.

Every eviction and every reload cuts the run into one more compiled segment (section 7),
so the plan is then consolidated: evictions that later choices made unnecessary are
dropped, and the cut points are shared where the limit allows: an eviction may move to
another ``remat.evict`` point of the same span, and a reload may run earlier than the
``remat.regenerate`` that asks for it (a prefetch), as long as every step still fits.
Recomputes need no cut: their region's ops run inside the next segment.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property

from bladec.errors import BladecError
from bladec.ir import Op
from bladec.runtime.trace import Measure, Step, simulate
from bladec.units import format_size


@dataclass(frozen=True)
class CostModel:
    """Bytes per second copied to or from the host (and written by a recomputed op), and
    FLOPs per second recomputed. ``JaxBackend`` measures its own copy bandwidth."""
    copy_bandwidth: float = 8e9
    flop_rate: float = 5e10

    def reload(self, nbytes: int, offloaded: bool = False) -> float:
        """Offload and copy back; only the copy back when the host holds a copy already."""
        return (1 if offloaded else 2) * nbytes / self.copy_bandwidth

    def recompute(self, flops: int, nbytes: int = 0) -> float:
        return flops / self.flop_rate + nbytes / self.copy_bandwidth


@dataclass
class RematSite:
    """A ``remat.regenerate`` of the listing: before compute op ``use``, value ``value``."""
    value: str
    use: int
    region: list[Op] | None
    region_inputs: list[str]   # operands kept alive only for the recompute
    external: list[str] = field(default_factory=list)  # every operand from outside the region
    flops: int = 0
    nbytes: int = 0            # bytes the region's ops write


@dataclass
class Eviction:
    """``value`` is evicted after compute op ``after`` and regenerated (``how``: "reload"
    or "recompute") before op ``before``: its next use ``use``, or earlier (a prefetch)."""
    value: str
    how: str
    after: int
    use: int
    before: int = -1
    order: int = 0   # among the regenerations before one op: reloads, then by this

    def __post_init__(self) -> None:
        if self.before < 0:
            self.before = self.use

    def copy(self) -> "Eviction":
        return Eviction(self.value, self.how, self.after, self.use, self.before, self.order)


@dataclass
class Plan:
    trace: list[Step]
    measure: Measure
    evictions: list[Eviction] = field(default_factory=list)

    @property
    def peak(self) -> int:
        return self.measure.peak

    @property
    def cuts(self) -> int:
        """Distinct points where the run leaves compiled code: evictions and reloads."""
        return len(_cuts(self.evictions))


@dataclass
class Program:
    """What the planner needs from an optimized listing, independent of the binding."""
    ops: list[Op]
    inputs: list[str]
    outputs: set[str]
    candidates: dict[int, list[str]]       # after compute op i -> evictable values
    sites: dict[tuple[str, int], RematSite]  # (value, use) -> regeneration branches
    uses: dict[str, list[int]]

    @cached_property
    def op_steps(self) -> list[Step]:
        """One trace step per compute op, in order."""
        return [Step("op", op, index=i) for i, op in enumerate(self.ops)]

    @cached_property
    def evictable(self) -> list[tuple[str, int, list[tuple[int, int]]]]:
        """Each ``(value, use, points)``: ``value`` is needed again by op ``use`` and a
        ``remat.regenerate`` brings it back there; ``points`` are the ops ``i`` after
        which it is a candidate with that next use, in increasing order, each with its
        rank in the order the planner visits the candidates (latest op first), which
        breaks ties between equally good evictions."""
        groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
        rank = 0
        for i in sorted(self.candidates, reverse=True):
            for value in self.candidates[i]:
                use = self.next_use(value, i)
                if use is not None and (value, use) in self.sites:
                    groups.setdefault((value, use), []).append((i, rank))
                rank += 1
        return [(value, use, points[::-1]) for (value, use), points in groups.items()]

    def next_use(self, value: str, after: int) -> int | None:
        uses = self.uses.get(value, ())
        j = bisect_right(uses, after)  # uses are in op order
        return uses[j] if j < len(uses) else None


def base_trace(program: Program) -> list[Step]:
    return list(program.op_steps)


def build_trace(program: Program, chosen: list[Eviction]) -> list[Step]:
    """The compute ops with the chosen evictions and their regenerations woven in: after
    an op its evictions; before an op the reloads, then the recomputes."""
    after: dict[int, list[Eviction]] = {}
    before: dict[int, list[Eviction]] = {}
    for e in chosen:
        after.setdefault(e.after, []).append(e)
        before.setdefault(e.before, []).append(e)
    trace: list[Step] = []
    for i, step in enumerate(program.op_steps):  # shared by every trace: nobody writes them
        if i in before:
            for e in sorted(before[i], key=lambda e: (e.how != "reload", e.order)):
                region = program.sites[(e.value, e.use)].region if e.how == "recompute" else None
                trace.append(Step("regen", value=e.value, method=e.how, region=list(region or [])))
        trace.append(step)
        if i in after:
            trace.extend(Step("evict", value=e.value, method=e.how) for e in after[i])
    return trace


def plan_run(program: Program, sizes: dict[str, int], limit: int | None,
             cost: CostModel = CostModel(), consolidate: bool = True) -> Plan:
    """A trace whose simulated peak fits ``limit``, or BladecError naming what would fit."""
    # recompute is cheaper but ties its inputs down; reload alone fits whatever can fit
    plan = _greedy(program, sizes, limit, cost) or _greedy(program, sizes, limit, cost, False)
    if plan is not None:
        if consolidate and plan.evictions and limit is not None:
            plan = _consolidate(program, sizes, limit, plan, cost)
        return plan
    unconstrained = simulate(base_trace(program), sizes, program.inputs, program.outputs).peak
    lo, hi = 0, unconstrained
    while lo < hi:  # the smallest limit the planner meets, for the message
        mid = (lo + hi) // 2
        if _greedy(program, sizes, mid, cost, False) is not None:
            hi = mid
        else:
            lo = mid + 1
    raise BladecError(f"no plan fits the limit of {format_size(limit or 0)} ({limit} bytes) for "
                      f"this binding; the smallest limit that works is {format_size(lo)} "
                      f"({lo} bytes; without eviction the peak is {unconstrained} bytes)")


def _greedy(program: Program, sizes: dict[str, int], limit: int | None,
            cost: CostModel, recompute: bool = True) -> Plan | None:
    chosen: list[Eviction] = []
    trace = base_trace(program)
    measure = simulate(trace, sizes, program.inputs, program.outputs)
    if limit is None or measure.peak <= limit:
        return Plan(trace, measure)
    evicted: set[tuple[int, str]] = set()
    for _ in range(10 * len(program.ops) + 10):
        over = _first_over(trace, measure, limit)
        if over is None:
            return Plan(trace, measure, chosen)
        k, _ = over
        option = _best_option(program, sizes, cost, k, evicted, chosen, recompute)
        if option is None:
            return None
        option.order = len(chosen)
        chosen.append(option)
        evicted.add((option.after, option.value))
        trace = build_trace(program, chosen)
        measure = simulate(trace, sizes, program.inputs, program.outputs)
    return None


def _first_over(trace: list[Step], measure: Measure, limit: int) -> tuple[int, int] | None:
    """(compute op index, memory position) of the first over-limit step of the trace."""
    pos = 0
    for t, step in enumerate(trace):
        n = 1 if step.kind == "op" or (step.kind == "regen" and step.method == "reload") \
            else len(step.region) if step.kind == "regen" else 0
        for _ in range(n):
            if measure.memory[pos] > limit:
                return (step.index if step.kind == "op" else _next_op(trace, t)), pos
            pos += 1
    return None


def _next_op(trace: list[Step], t: int) -> int:
    for s in trace[t + 1:]:
        if s.kind == "op":
            return s.index
    return len(trace)


def _best_option(program: Program, sizes: dict[str, int], cost: CostModel, k: int,
                 evicted: set[tuple[int, str]], chosen: list[Eviction],
                 recompute: bool) -> Eviction | None:
    """The cheapest eviction that makes op k's step lighter: after some op i < k.

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
    best: tuple[tuple[float, int], Eviction] | None = None
    for value, use, points in program.evictable:
        if use <= k or value in protected or (value, use) in away:
            continue  # not needed over op k, needed by a chosen recompute, or away already
        size = sizes[value]
        if size == 0:
            continue
        open_points = [p for p in points[:bisect_left(points, (k, -1))]
                       if (p[0], value) not in evicted]
        if not open_points:
            continue
        site = program.sites[(value, use)]
        how, seconds, freed = "reload", cost.reload(size, value in offloaded), size
        if recompute and site.region is not None \
                and not _away_at(spans, site.external, use):
            # the values it keeps alive are weighed against what it frees
            net = size - sum(sizes[n] for n in site.region_inputs)
            t = cost.recompute(site.flops, site.nbytes)
            if net > 0 and t / net < seconds / size:
                how, seconds, freed = "recompute", t, net
        # the cost is the same from every point, the steps away are not: the earliest
        # point scores best (with a free regeneration all score 0 and the latest is first)
        i, rank = open_points[-1] if seconds == 0 else open_points[0]
        key = (seconds / (freed * (use - i)), rank)
        if best is None or key < best[0]:
            best = (key, Eviction(value, how, i, use))
    return best[1] if best else None


def _away_at(spans: dict[str, list[tuple[int, int]]], names: list[str], use: int) -> bool:
    """Whether any of ``names`` is evicted over op ``use`` (``spans``: value -> the
    (after, before) of its evictions in the plan so far)."""
    return any(a < use <= b for n in names for a, b in spans.get(n, ()))


# -- consolidation: fewer cut points ------------------------------------------------------
def _cuts(events: list[Eviction]) -> dict[int, int]:
    """Cut point (the index of the compute op after it) -> how many evictions and reloads
    happen there. A recompute needs no cut of its own."""
    out: dict[int, int] = {}
    for e in events:
        out[e.after + 1] = out.get(e.after + 1, 0) + 1
        if e.how == "reload":
            out[e.before] = out.get(e.before, 0) + 1
    return out


class _State:
    """The events of a plan with their trace and its measure, for cheap what-ifs."""

    def __init__(self, program: Program, sizes: dict[str, int], limit: int,
                 events: list[Eviction]) -> None:
        self.program, self.sizes, self.limit = program, sizes, limit
        self.events = events
        self.refresh()

    def saved(self) -> tuple:
        """What :meth:`refresh` derives from the events, to put back with :meth:`restore`
        when a what-if is undone (cheaper than deriving it again)."""
        return self.trace, self.measure, self.span, self.op_at

    def restore(self, saved: tuple) -> None:
        self.trace, self.measure, self.span, self.op_at = saved

    def refresh(self) -> bool:
        self.trace = build_trace(self.program, self.events)
        self.measure = simulate(self.trace, self.sizes, self.program.inputs,
                                self.program.outputs)
        # memory entries of each trace step, and where each op's step is
        self.span: list[tuple[int, int]] = []
        self.op_at: dict[int, int] = {}
        pos = 0
        for t, step in enumerate(self.trace):
            n = (0 if step.kind == "evict" else 1 if step.kind == "op"
                 or step.method == "reload" else len(step.region))
            self.span.append((pos, pos + n))
            pos += n
            if step.kind == "op":
                self.op_at[step.index] = t
        return self.measure.peak <= self.limit and _valid(self.trace, self.program)

    def step_of(self, e: Eviction, kind: str) -> int:
        """The trace position of the eviction ("evict") or regeneration ("regen") of e."""
        for t, step in enumerate(self.trace):
            if step.kind == kind and step.value == e.value:
                if kind == "evict" and self._op_before(t) == e.after:
                    return t
                if kind == "regen" and self._op_after(t) == e.before:
                    return t
        raise AssertionError(f"{kind} of {e.value} is not in the trace")

    def _op_before(self, t: int) -> int:
        while self.trace[t].kind != "op":
            t -= 1
        return self.trace[t].index

    def _op_after(self, t: int) -> int:
        while self.trace[t].kind != "op":
            t += 1
        return self.trace[t].index

    def fits_with(self, lo: int, hi: int, extra: int) -> bool:
        """Whether trace steps lo..hi-1 stay within the limit with ``extra`` more bytes."""
        if lo >= hi:
            return True
        a, b = self.span[lo][0], self.span[hi - 1][1]
        return a >= b or max(self.measure.memory[a:b]) + extra <= self.limit

    def reads(self, lo: int, hi: int, value: str) -> bool:
        """Whether a step in lo..hi-1 reads ``value`` (an op or a recompute region)."""
        for step in self.trace[lo:hi]:
            if step.kind == "op" and value in step.op.operands:
                return True
            if step.kind == "regen" and any(value in op.operands for op in step.region):
                return True
        return False


def _valid(trace: list[Step], program: Program) -> bool:
    """Every op and region runs with its operands resident; evictions and reloads pair."""
    resident = set(program.inputs)
    known = {r for op in program.ops for r in op.result_names} | resident
    offloaded: set[str] = set()
    for step in trace:
        if step.kind == "op":
            if any(n in known and n not in resident for n in step.op.operands):
                return False
            resident.update(step.op.result_names)
        elif step.kind == "evict":
            if step.value not in resident:
                return False
            resident.discard(step.value)
            if step.method == "reload":
                offloaded.add(step.value)
        elif step.method == "reload":
            if step.value in resident or step.value not in offloaded:
                return False
            resident.add(step.value)
        else:
            temps: set[str] = set()
            for op in step.region:
                if any(n in known and n not in resident and n not in temps
                       for n in op.operands):
                    return False
                temps.update(op.result_names)
            resident.add(step.value)
    return True


def _consolidate(program: Program, sizes: dict[str, int], limit: int, plan: Plan,
                 cost: CostModel) -> Plan:
    events = [e.copy() for e in plan.evictions]
    state = _State(program, sizes, limit, events)
    # 1. reloads that a recompute can replace, cheaper and still within the limit (the
    #    planner falls back to reloads only when its recompute choices led nowhere)
    for e in list(events):
        site = program.sites[(e.value, e.use)]
        if e.how != "reload" or site.region is None:
            continue
        offloaded = any(o.value == e.value and o.how == "reload" and o.before <= e.after
                        for o in events if o is not e)
        if cost.recompute(site.flops, site.nbytes) >= cost.reload(sizes[e.value], offloaded):
            continue
        e.how = "recompute"
        saved = state.saved()
        if not state.refresh():
            e.how = "reload"
            state.restore(saved)
    # 2. evictions that later choices made unnecessary
    for e in sorted(events, key=lambda e: -e.order):
        t0, t1 = state.step_of(e, "evict"), state.step_of(e, "regen")
        if not state.fits_with(t0, t1, sizes[e.value]):
            continue
        events.remove(e)
        saved = state.saved()
        if not state.refresh():
            events.append(e)
            state.restore(saved)
    # 3. share cut points: empty the least used ones into the others
    order = len(events)
    changed = True
    while changed:
        changed = False
        cuts = _cuts(events)
        for b in sorted(cuts, key=lambda b: (cuts[b], b)):
            others = sorted((c for c in cuts if c != b), key=lambda c: abs(c - b))
            saved = [(e, e.after, e.before, e.order) for e in events]
            derived = state.saved()
            ok = True
            parts = [(e, "evict") for e in events if e.after + 1 == b] + \
                [(e, "regen") for e in events if e.how == "reload" and e.before == b]
            for e, part in parts:
                if not _move(state, e, part, b, others, order):
                    ok = False
                    break
                order += 1
            if ok and parts:
                changed = True
                break
            for e, after, before, o in saved:
                e.after, e.before, e.order = after, before, o
            state.restore(derived)
    return Plan(state.trace, state.measure, events)


def _move(state: _State, e: Eviction, part: str, b: int, targets: list[int],
          order: int) -> bool:
    """Move the eviction or the reload of ``e`` from cut point b to one of ``targets``."""
    program, size = state.program, state.sizes[e.value]
    for c in targets:
        if part == "evict":
            # another remat.evict point of the same span, before the regeneration
            if not (c < e.before and e.value in program.candidates.get(c - 1, ())
                    and program.next_use(e.value, c - 1) == e.use):
                continue
            t0 = state.step_of(e, "evict")
            if c > b:  # later: resident over the ops in between
                t1 = state.op_at[c - 1] + 1
                if not state.fits_with(t0, t1, size) or state.reads(t0, t1, e.value):
                    continue
            else:      # earlier: nothing in between may read it
                if state.reads(state.op_at[c - 1] + 1, t0, e.value):
                    continue
            old = e.after
            e.after = c - 1
        else:
            # a reload earlier than asked: resident from there on
            if not (e.after + 1 < c < e.before):
                continue
            t1 = state.step_of(e, "regen")
            t0 = state.op_at[c]
            while t0 > 0 and state.trace[t0 - 1].kind == "regen" \
                    and state.trace[t0 - 1].method != "reload":
                t0 -= 1   # before the recomputes there
            if not state.fits_with(t0, t1, size):
                continue
            old = e.before
            e.before = c
        old_order, e.order = e.order, order
        saved = state.saved()
        if state.refresh():
            return True
        if part == "evict":
            e.after = old
        else:
            e.before = old
        e.order = old_order
        state.restore(saved)
    return False
