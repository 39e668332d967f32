"""Repairing a plan whose compiled segment is over the limit, keeping that segment.

The closed loop (fitting.py) checks a plan against its compiled segments' own figures
(accounting.py). When a segment is over the limit, planning again with a margin at its ops
cuts that part of the run differently, so the executable compiled to learn that it is
over never runs: one compilation spent per rejected plan. Often the segment is not
over because of what it computes but because of what the device holds while it runs:
values made earlier and read only after it. Those can leave the device for the
segment's duration (offloaded just before it, reloaded just after) without touching
the segment itself: its ops, arguments, outputs and donations stay the same, so the
repaired plan runs the very executable that was compiled to check it, and the bytes it
holds while it runs drop by what was moved out. :func:`repair` makes that move where it
covers the excess, and the caller checks the repaired plan against the device again.

Only what the listing allows is moved: a value that a ``remat.evict`` lists at the op
before the segment, with a ``remat.regenerate`` (a remat site) at its next use after
it; graph inputs and outputs stay where they are.
"""
from __future__ import annotations

from bladec.runtime.planning.accounting import SegmentFigure
from bladec.runtime.planning.plan import Eviction, Plan, Program, plan_of, valid_trace
from bladec.runtime.planning.segments import EvictStep, PreparedRun, ReloadStep, SegmentStep


def repair(plan: Plan, run: PreparedRun, program: Program, sizes: dict[str, int],
           limit: int) -> Plan | None:
    """``plan`` with values held across the first segment of ``run`` over ``limit``
    moved to the host for that segment's duration, enough to bring its figure
    (``run.device``'s) within ``limit``; None where the movable values do not cover the
    excess (or no segment is over). Among the movable values: the smallest one that
    covers the excess alone, else the largest ones first (fewest copies)."""
    found = _first_over(run, limit)
    if found is None:
        return None
    step, figure, resident = found
    if not step.op_indices:
        return None
    lo, hi = min(step.op_indices), max(step.op_indices)
    if lo == 0 or hi + 1 >= len(program.ops):
        return None   # nothing is held across the first segment nor read after the last
    excess = figure.total - limit
    movable = []
    for value in resident:
        use = program.next_use(value, lo - 1)
        if (use is None or use <= hi or value in program.outputs
                or value in program.inputs or (value, use) not in program.sites
                or value not in program.candidates.get(lo - 1, ())):
            continue
        movable.append((sizes[value], value, use))
    chosen = _cover(movable, excess)
    if chosen is None:
        return None
    events = [e.copy() for e in plan.evictions]
    events += [Eviction(value, "reload", lo - 1, use, hi + 1) for _, value, use in chosen]
    plan = plan_of(program, sizes, events)
    # (a safeguard: the choice above keeps it valid)
    return plan if valid_trace(plan.trace, program) else None


def _first_over(run: PreparedRun, limit: int
                ) -> tuple[SegmentStep, SegmentFigure, list[str]] | None:
    """The first segment over ``limit`` with its figure and the values held when it
    starts that it does not read (in the order they were made), less those that the
    cuts around it already move (reloaded just before it, or evicted just after: the
    repair's own eviction and reload would then meet them on the wrong side)."""
    resident: dict[str, None] = {}
    moved: set[str] = set()   # reloaded since the last segment
    figures = iter(run.device.segments)
    for t, step in enumerate(run.steps):
        if isinstance(step, SegmentStep):
            figure = next(figures, None)
            if figure is None:
                return None
            if figure.total > limit:
                for later in run.steps[t + 1:]:
                    if isinstance(later, SegmentStep):
                        break
                    moved.add(later.value)
                skip = moved | set(step.inputs)
                return step, figure, [n for n in resident if n not in skip]
            for n in step.free:
                resident.pop(n, None)
            resident.update(dict.fromkeys(step.outputs))
            moved = set()
        elif isinstance(step, EvictStep):
            resident.pop(step.value, None)
        elif isinstance(step, ReloadStep):
            resident[step.value] = None
            moved.add(step.value)
    return None


def _cover(movable: list[tuple[int, str, int]], excess: int
           ) -> list[tuple[int, str, int]] | None:
    """The values to move: the smallest that covers ``excess`` alone, else the largest
    first until they do; None when all of them do not."""
    alone = [m for m in movable if m[0] >= excess]
    if alone:
        return [min(alone)]
    chosen, total = [], 0
    for m in sorted(movable, reverse=True):
        chosen.append(m)
        total += m[0]
        if total >= excess:
            return chosen
    return None
