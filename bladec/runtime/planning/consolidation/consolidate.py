"""Consolidation of a plan: fewer cut points, same budget.

Every eviction and every reload cuts the run into one more compiled segment, so once the
planner (policy.py) fits the budget, the plan is tidied: reloads that a recompute can
replace cheaply become recomputes, evictions that later choices made unnecessary are
dropped, and cut points are shared: an eviction may move to another ``remat.evict``
point of the same span, and a reload may run earlier than the ``remat.regenerate`` that
asks for it (a prefetch), as long as every step still fits.
"""
from __future__ import annotations

from itertools import chain
from typing import Iterable

from bladec.runtime.planning.trace import Budget
from bladec.runtime.planning.plan import (Away, CostModel, Eviction, Plan, Program, build_trace, cut_points,
                                 event_index, op_chunk, plan_of)
from bladec.runtime.planning.consolidation.replay import Replay
from bladec.runtime.planning.trace import Measure, Step


class _State:
    """The events of a plan with their trace and its measure, for cheap what-ifs.

    ``incremental``: re-measure a changed trace by the windows that changed
    (replay.py); else from scratch every time, as :func:`simulate` and
    :func:`valid_trace` do (the reference the replay is checked against)."""

    def __init__(self, program: Program, sizes: dict[str, int], budget: Budget,
                 events: list[Eviction], incremental: bool = True) -> None:
        self.program, self.sizes, self.budget = program, sizes, budget
        self.events = events
        self.incremental = incremental
        self.replay = Replay(program, sizes, budget)
        self.refresh()

    # what _move and consolidate read of the current trace
    @property
    def trace(self) -> list[Step]:
        return self.replay.trace

    @property
    def measure(self) -> Measure:
        return self.replay.measure

    @property
    def span(self) -> list[tuple[int, int]]:
        """The memory entries of each trace step."""
        return self.replay.span

    @property
    def op_at(self) -> dict[int, int]:
        """Each compute op's trace position."""
        return self.replay.op_at

    @property
    def allowed(self) -> list[int] | None:
        return self.replay.allowed

    def saved(self) -> tuple:
        """What :meth:`refresh` derives from the events, to put back with :meth:`restore`
        when a what-if is undone (cheaper than deriving it again)."""
        return self.replay.snapshot()

    def restore(self, saved: tuple) -> None:
        self.replay.restore(saved)

    def refresh(self, touched: Iterable[int] = ()) -> bool:
        """Measure the events' trace; whether it is valid and within the budget.
        ``touched``: the ops whose evictions or regenerations changed since the last
        refresh, when only those did: their steps are woven again (op_chunk) into the
        current trace, the others kept (build_trace weaves them all)."""
        if not self.incremental:
            self.replay.reference(build_trace(self.program, self.events))
            return self.replay.ok
        if not touched or self.replay.trace is None:
            self.replay.update(build_trace(self.program, self.events))
            return self.replay.ok
        after, before = event_index(self.events)
        old, op_at = self.trace, self.op_at
        pieces: list[list[Step]] = []
        pos = 0
        # a chain's region depends on the other evictions: every chain is woven again
        chains = [e.before for e in self.events if e.how == "chain"]
        away = Away(self.events) if chains else None
        for i in sorted(set(touched).union(chains)):
            start = end = op_at[i]
            while start > 0 and old[start - 1].kind == "regen":
                start -= 1
            end += 1
            while end < len(old) and old[end].kind == "evict":
                end += 1
            pieces.append(old[pos:start])
            pieces.append(op_chunk(self.program, i, before.get(i, ()), after.get(i, ()),
                                   away))
            pos = end
        pieces.append(old[pos:])
        self.replay.update(list(chain.from_iterable(pieces)))
        return self.replay.ok

    def step_of(self, e: Eviction, kind: str) -> int:
        """The trace position of the eviction ("evict") or regeneration ("regen") of e:
        the first such step of its value among the evictions after op ``e.after`` or
        the regenerations before op ``e.before``."""
        trace = self.trace
        if kind == "evict":
            t = self.op_at[e.after] + 1
            while t < len(trace) and trace[t].kind == "evict":
                if trace[t].value == e.value:
                    return t
                t += 1
        else:
            first = at = self.op_at[e.before]
            while first > 0 and trace[first - 1].kind == "regen":
                first -= 1
            for t in range(first, at):
                if trace[t].value == e.value:
                    return t
        raise AssertionError(f"{kind} of {e.value} is not in the trace")

    def fits_with(self, lo: int, hi: int, extra: int) -> bool:
        """Whether trace steps lo..hi-1 stay within the budget with ``extra`` more bytes."""
        if lo >= hi:
            return True
        a, b = self.span[lo][0], self.span[hi - 1][1]
        return self.budget.room(self.measure, self.allowed, a, b) >= extra

    def reads(self, lo: int, hi: int, value: str) -> bool:
        """Whether a step in lo..hi-1 reads ``value`` (an op or a recompute region)."""
        for step in self.trace[lo:hi]:
            if step.kind == "op" and value in step.op.operands:
                return True
            if step.kind == "regen" and any(value in op.operands for op in step.region):
                return True
        return False


def consolidate(program: Program, sizes: dict[str, int], budget: Budget, plan: Plan,
                cost: CostModel, incremental: bool = True) -> Plan:
    """The plan with fewer evictions and cut points, every step still within ``budget``.
    ``incremental``: as for :class:`_State` (the plans are the same either way)."""
    events = [e.copy() for e in plan.evictions]
    state = _State(program, sizes, budget, events, incremental)
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
        if not state.refresh((e.after, e.before)):
            e.how = "reload"
            state.restore(saved)
    # 2. evictions that later choices made unnecessary
    for e in sorted(events, key=lambda e: -e.order):
        t0, t1 = state.step_of(e, "evict"), state.step_of(e, "regen")
        if not state.fits_with(t0, t1, sizes[e.value]):
            continue
        events.remove(e)
        saved = state.saved()
        if not state.refresh((e.after, e.before)):
            events.append(e)
            state.restore(saved)
            # last in the list now: its eviction is last among those after its op
            state.refresh((e.after,))
    # 3. share cut points: empty the least used ones into the others, in passes over
    #    the cuts (least used first) until a pass empties none
    order = len(events)
    changed = True
    while changed:
        changed = False
        counts = cut_points(events)
        for b in sorted(counts, key=lambda b: (counts[b], b)):
            cuts = cut_points(events)
            if b not in cuts:
                continue   # emptied into another since the pass began
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
                continue
            for e, after, before, o in saved:
                e.after, e.before, e.order = after, before, o
            state.restore(derived)
    return plan_of(program, sizes, events)   # as the planner's other paths make theirs


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
            touched = (old, e.after, e.before)   # (its regeneration's order changes)
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
            touched = (old, c)
        old_order, e.order = e.order, order
        saved = state.saved()
        if state.refresh(touched):
            return True
        if part == "evict":
            e.after = old
        else:
            e.before = old
        e.order = old_order
        state.restore(saved)
    return False
