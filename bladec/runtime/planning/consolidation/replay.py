"""A plan's trace with its measure and validity, kept current by replaying only the
windows of steps that a change touches.

Consolidation (consolidate.py) asks hundreds of what-ifs per plan, and nearly all of them
move one eviction or one reload to another cut point: the new trace has the same steps,
and differs from the old one only where a step moved (and where its regeneration moved
among the others before its op). Measuring it from scratch
(:func:`~bladec.runtime.planning.trace.simulate` and :func:`~bladec.runtime.planning.plan.valid_trace`,
about 10 ms on the paper-size step) spends most of the time on steps that did not change.
:class:`Replay` measures the same figures (the same :func:`~bladec.runtime.planning.trace.held_until`
rule, the same memory entries, the same validity) and, for such a change, replays only
the *windows*: each run of changed steps, from the cut before it to the first cut after it.

Why that is exact: outside the windows the steps are the same, at the same positions,
and each window holds the same steps as before (checked). A value's hold (its last use,
or the end of the segment that reads it as an argument) moves only when its last use is
in a window, and then stays in that window, whose ends are segment ends. So the steps
outside the windows run as before, as long as the state each window hands on (the
resident values and their bytes, the evicted and offloaded ones) is the one the old trace
handed on there: that is checked at the cut that ends the window, and the whole trace is
replayed when it differs. The state after every cut is kept for that (a *checkpoint*;
cuts are few). tests/runtime/planning/test_replay.py checks every figure against the
reference.

Validity is replayed the same way, knowing that a value is resident in the valid-trace
sense when it is an input or made by an op before the step, and not evicted since: a
regeneration earlier than the op that defines its value would break that, so it sends
the whole trace to :func:`valid_trace` (no plan makes one).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple

from bladec.analysis.liveness import body_peak
from bladec.ir import Op
from bladec.runtime.planning.trace import Budget
from bladec.runtime.planning.plan import Program, valid_trace
from bladec.runtime.planning.trace import Measure, Step, free, region_profile, simulate


class Checkpoint(NamedTuple):
    """The state after a cut step: the model's resident values and bytes (as
    :func:`simulate` keeps them), and the values evicted and offloaded (as
    :func:`valid_trace` sees them)."""
    resident: frozenset[str]
    total: int
    evicted: frozenset[str]
    offloaded: frozenset[str]


class _Region(NamedTuple):
    """What a recompute step's region means to the replay, worked out once per region:
    the memory entries it adds over the bytes before it, the bytes it leaves (its
    value), what it reads from outside (for last uses) and what must be resident."""
    profile: list[int]
    kept: int
    external: list[str]
    needs: list[str]


class Replay:
    """The measure, validity and layout of the current trace of one program and binding;
    :meth:`load` measures a trace from scratch, :meth:`update` a changed one (by windows
    when it can). Every field is replaced, never changed in place, so :meth:`snapshot`
    and :meth:`restore` undo a what-if by reference."""

    _FIELDS = ("trace", "memory", "peak", "span", "op_at", "allowed", "fits", "valid",
               "last", "made", "held", "checkpoints")

    def __init__(self, program: Program, sizes: dict[str, int], budget: Budget) -> None:
        self.program, self.sizes, self.budget = program, sizes, budget
        self.inputs = frozenset(program.inputs)
        self.pinned = (self.inputs - program.donated) | program.outputs
        self.base = sum(sizes[n] for n in program.inputs)
        # before the first step: the donated inputs freeable, nothing evicted
        self.start = Checkpoint(frozenset(program.donated), self.base, frozenset(),
                                frozenset())
        self.known = program.defined
        self.body = [body_peak(op, sizes.__getitem__, 0, max) for op in program.ops]
        self.defined_by = {r: i for i, op in enumerate(program.ops) for r in op.result_names}
        # per op: its results' bytes, the results it may free at once (not pinned), what
        # it reads that valid_trace checks, and whether one of those is made later
        self.made_bytes = [sum(sizes[r] for r in op.result_names) for op in program.ops]
        self.unpinned = [tuple(r for r in op.result_names if r not in self.pinned)
                         for op in program.ops]
        self.checked = [frozenset(n for n in op.operands if n in self.known)
                        for op in program.ops]
        # the values each op is the last op to read: what an op step may hold up (a value
        # read by a later op is not freed in a window that ends before that op)
        last_reader = {n: i for i, op in enumerate(program.ops) for n in op.operands}
        self.last_read: list[list[str]] = [[] for _ in program.ops]
        for n, i in last_reader.items():
            self.last_read[i].append(n)
        self.early = [any(n not in self.inputs and self.defined_by[n] >= i
                          for n in self.checked[i]) for i in range(len(program.ops))]
        self.regions: dict[tuple[str, tuple[int, ...]], _Region] = {}
        self.trace: list[Step] | None = None
        self.memory: list[int] = []
        self.peak = self.base
        self.span: list[tuple[int, int]] = []
        self.op_at: dict[int, int] = {}
        self.allowed: list[int] | None = None
        self.fits = self.valid = False
        self.last: dict[str, int] = {}    # each value's last use in the trace
        self.made: dict[str, int] = {}    # the step that last makes it
        self.held: dict[str, int] = {}    # where it is freed (trace.held_until)
        self.checkpoints: dict[int, Checkpoint] | None = None   # after each cut step
        self.windows = 0     # how many updates replayed windows only (for tests)

    # -- the state --------------------------------------------------------------------
    def snapshot(self) -> tuple:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def restore(self, saved: tuple) -> None:
        for f, v in zip(self._FIELDS, saved):
            setattr(self, f, v)

    @property
    def measure(self) -> Measure:
        return Measure(self.memory, self.peak, self.base)

    @property
    def ok(self) -> bool:
        return self.fits and self.valid

    # -- measuring ----------------------------------------------------------------------
    def load(self, trace: list[Step]) -> None:
        """Measure ``trace`` from its first step."""
        self.trace = trace
        self.memory, self.span, self.op_at = [], [], {}
        self.last, self.made, self.held, self.checkpoints = {}, {}, {}, {}
        if not self._replay(trace, 0, len(trace) - 1, self.start, 0) or not self.valid:
            return self.reference(trace)
        self.peak = max(self.memory, default=self.base)
        self.allowed = self.budget.allowed(trace)
        self.fits = self.budget.fits(self.measure, self.allowed)

    def reference(self, trace: list[Step]) -> None:
        """Measure ``trace`` with :func:`simulate` and :func:`valid_trace` themselves, for
        the traces the replay does not model (a regeneration before the op that defines
        its value) and for invalid ones (whose figures the planner still reads when they
        are its starting point). The next update starts from scratch again."""
        program = self.program
        measure = simulate(trace, self.sizes, program.inputs, program.outputs,
                           program.donated)
        self.trace, self.memory, self.peak = trace, measure.memory, measure.peak
        self.span, self.op_at, pos = [], {}, 0
        for t, step in enumerate(trace):
            n = (0 if step.kind == "evict" else 1 if step.kind == "op"
                 or step.method == "reload" else len(step.region))
            self.span.append((pos, pos + n))
            pos += n
            if step.kind == "op":
                self.op_at[step.index] = t
        self.allowed = self.budget.allowed(trace)
        self.fits = self.budget.fits(measure, self.allowed)
        # (not asked when the budget fails already, as the planner always did)
        self.valid = self.fits and valid_trace(trace, program)
        self.checkpoints = None

    def update(self, trace: list[Step]) -> None:
        """Measure ``trace``, a change of the current one, by the windows that changed
        when the two have the same steps (else from scratch)."""
        old = self.trace
        if old is None or len(trace) != len(old) or self.checkpoints is None \
                or not (self.fits and self.valid):
            return self.load(trace)
        windows = _windows(old, trace)
        if windows is None:
            return self.load(trace)
        if not windows:
            self.trace = trace
            return
        saved = self.snapshot()
        memory, span, before = self.memory, self.span, self.checkpoints
        self.trace = trace
        self.op_at, self.last, self.made = dict(self.op_at), dict(self.last), dict(self.made)
        self.held = dict(self.held)
        self.checkpoints = dict(before)
        for w0, end in windows:
            for t in [t for t in before if w0 <= t <= end]:
                del self.checkpoints[t]
        new_memory: list[int] = []
        new_span: list[tuple[int, int]] = []
        fits = True
        # what each position allows changes only inside the windows, whose steps keep
        # their memory entries' count (checked below) and are followed by the same op
        allowed = None if self.allowed is None else list(self.allowed)
        done = 0   # steps (and their memory entries) spliced so far
        for w0, end in windows:
            a, b = span[w0][0], span[end][1]
            start = self.checkpoints[w0 - 1] if w0 > 0 else self.start
            self.memory, self.span = [], []
            if not self._replay(trace, w0, end, start, a):
                self.restore(saved)
                return self.load(trace)
            if not self.valid:
                return  # an invalid what-if is undone by the caller: its figures do not matter
            if len(self.memory) != b - a or (end in before
                                             and self.checkpoints.get(end) != before[end]):
                self.restore(saved)
                return self.load(trace)
            if allowed is not None:
                allowed[a:b] = self.budget.allowed(trace, w0, end + 1)
                fits = fits and all(m <= x for m, x in zip(self.memory, allowed[a:b]))
            else:
                fits = fits and max(self.memory, default=0) <= self.budget.limit
            new_memory += memory[span[done][0]:a]   # (windows are disjoint, in order)
            new_memory += self.memory
            new_span += span[done:w0]
            new_span += self.span
            done = end + 1
        self.memory = new_memory + memory[len(new_memory):]
        self.span = new_span + span[done:]
        self.peak = max(self.memory, default=self.base)
        self.allowed = allowed
        self.fits = fits
        self.windows += 1

    def _region(self, step: Step) -> _Region:
        key = (step.value or "", tuple(map(id, step.region)))
        found = self.regions.get(key)
        if found is None:
            found = self.regions[key] = _measure_region(step, self.sizes, self.known)
        return found

    def _replay(self, trace: list[Step], w0: int, end: int, start: Checkpoint,
                mpos: int) -> bool:
        """Replay steps w0..end from ``start`` (the state after the cut before w0), which
        begins a segment: records their memory entries (from position ``mpos``), spans,
        op positions, last uses, makes, holds and checkpoints, and whether they are valid
        (when the earlier steps are). False when a value is regenerated before the op
        that defines it (the validity replay does not model that)."""
        sizes, inputs, defined_by = self.sizes, self.inputs, self.defined_by
        op_at, append_span = self.op_at, self.span.append
        early, checked, last_read = self.early, self.checked, self.last_read
        # 1. one walk: segments, last uses, makes, validity, the layout
        reads: dict[str, int] = {}
        made: dict[str, int] = {}
        cuts: list[int] = []    # the window's cut steps: its segments lie between them
        evicted, offloaded = set(start.evicted), set(start.offloaded)
        valid = True
        cur = len(self.program.ops)   # the next op's index: a step may read what is before it
        for pos in range(w0, len(trace)):
            if trace[pos].kind == "op":
                cur = trace[pos].index
                break
        for pos in range(w0, end + 1):
            step = trace[pos]
            kind = step.kind
            value = step.value
            if kind == "evict":
                append_span((mpos, mpos))
                cuts.append(pos)
                if valid:
                    if value in evicted or (value not in inputs
                                            and defined_by.get(value, cur) >= cur):
                        valid = False
                    else:
                        evicted.add(value)
                        if step.method == "reload":
                            offloaded.add(value)
                continue
            if kind == "regen":
                if value not in inputs and defined_by.get(value, cur) >= cur:
                    return False
                made[value] = pos
                if step.method == "reload":
                    append_span((mpos, mpos + 1))
                    mpos += 1
                    cuts.append(pos)
                    if valid and (value not in evicted or value not in offloaded):
                        valid = False
                    evicted.discard(value)
                    continue
            if kind == "op":
                cur = step.index
                op_at[cur] = pos
                append_span((mpos, mpos + 1))
                mpos += 1
                for n in last_read[cur]:
                    reads[n] = pos
                if valid and (early[cur] or (evicted and not evicted.isdisjoint(checked[cur]))):
                    valid = False
                for r in step.results:
                    made[r] = pos
                if evicted:
                    evicted.difference_update(step.results)
                cur += 1
                continue
            region = self._region(step)
            append_span((mpos, mpos + len(region.profile)))
            mpos += len(region.profile)
            for n in region.external:
                reads[n] = pos
            if valid:
                for n in region.needs:
                    if n in evicted or (n not in inputs and defined_by[n] >= cur):
                        valid = False
                        break
            evicted.discard(value)
        self.valid = valid
        if not valid:
            return True
        # 2. last uses and holds of what the window reads (trace.held_until's rule)
        last, made_at, held = self.last, self.made, self.held
        for v, pos in made.items():
            if made_at.get(v, -1) <= end:
                made_at[v] = pos
        pinned = self.pinned
        dies: dict[int, list[str]] = {}
        for v, pos in reads.items():
            if last.get(v, -1) > end:
                continue   # read again after the window: its hold is unchanged
            last[v] = pos
            at = made_at.get(v)
            if at is not None:
                # read in the segment between the cuts around pos: an argument of it
                # when made before it, held to its last step
                i = bisect_left(cuts, pos)
                if at <= (cuts[i - 1] if i else w0 - 1):
                    pos = cuts[i] - 1 if i < len(cuts) else end
            held[v] = pos
            if v not in pinned:
                dies.setdefault(pos, []).append(v)
        # 3. the memory entries (trace.simulate's walk, from the checkpoint)
        resident = set(start.resident)
        total = start.total
        memory = self.memory
        append = memory.append
        body, made_bytes, unpinned = self.body, self.made_bytes, self.unpinned
        checkpoints = self.checkpoints
        evicted, offloaded = set(start.evicted), set(start.offloaded)
        for pos in range(w0, end + 1):
            step = trace[pos]
            kind = step.kind
            if kind == "op":
                i = step.index
                resident.update(step.results)
                total += made_bytes[i]
                if evicted:
                    evicted.difference_update(step.results)
                append(total + body[i])
                dying = dies.get(pos)
                if dying:
                    total -= free(dying, resident, sizes)
                for r in unpinned[i]:
                    if held.get(r, -1) <= pos and r in resident:
                        resident.discard(r)
                        total -= sizes[r]
                continue
            value = step.value
            if kind == "evict":
                if value in resident:
                    resident.discard(value)
                    total -= sizes[value]
                evicted.add(value)
                if step.method == "reload":
                    offloaded.add(value)
            elif step.method == "reload":
                resident.add(value)
                total += sizes[value]
                evicted.discard(value)
                append(total)
            else:
                region = self._region(step)
                for p in region.profile:
                    append(total + p)
                total += region.kept
                resident.add(value)
                evicted.discard(value)
                total -= free(dies.get(pos, ()), resident, sizes)
                continue
            checkpoints[pos] = Checkpoint(frozenset(resident), total, frozenset(evicted),
                                          frozenset(offloaded))
        return True


def _windows(old: list[Step], new: list[Step]) -> list[tuple[int, int]] | None:
    """The windows (first and last step) where two traces of the same length differ:
    each run of changed steps, widened back to the cut before it and on to the first cut
    after it (or the trace's ends); runs whose windows meet are one. None when a window
    does not hold the same steps in both traces."""
    n = len(old)
    lo = 0
    while lo < n and (old[lo] is new[lo] or _same(old[lo], new[lo])):
        lo += 1
    if lo == n:
        return []
    hi = n - 1
    while old[hi] is new[hi] or _same(old[hi], new[hi]):
        hi -= 1
    windows: list[tuple[int, int]] = []
    t = lo
    while t <= hi:
        w0 = t        # a changed step: its window starts after the cut before it
        while w0 > 0 and not _is_cut(new[w0 - 1]):
            w0 -= 1
        end = t       # and ends at the first cut after the run, unchanged and the same
        while end < n and not (_is_cut(new[end]) and end > t and (
                old[end] is new[end] or _same(old[end], new[end]))):
            end += 1
        end = min(end, n - 1)
        if windows and w0 <= windows[-1][1]:
            w0 = windows.pop()[0]
        windows.append((w0, end))
        t = end + 1
        while t <= hi and (old[t] is new[t] or _same(old[t], new[t])):
            t += 1
    for w0, end in windows:
        if _signature(old[w0:end + 1]) != _signature(new[w0:end + 1]):
            return None
    return windows


def _is_cut(step: Step) -> bool:
    return step.kind == "evict" or (step.kind == "regen" and step.method == "reload")


def _same(a: Step, b: Step) -> bool:
    """Whether two steps of two traces of one program are the same step (op steps are
    shared by every trace; the others are made anew by each build)."""
    return (a.kind == b.kind != "op" and a.value == b.value and a.method == b.method
            and len(a.region) == len(b.region)
            and all(x is y for x, y in zip(a.region, b.region)))


def _signature(steps: list[Step]) -> tuple[int, list[tuple]]:
    """To tell whether two windows hold the same steps: how many ops (they come in
    order, so two windows between the same steps with as many hold the same ones), and
    the other steps, sorted."""
    others = sorted((s.kind, s.value or "", s.method or "", tuple(map(id, s.region)))
                    for s in steps if s.kind != "op")
    return len(steps) - len(others), others


def _measure_region(step: Step, sizes: dict[str, int], known: frozenset[str]) -> _Region:
    """A recompute region's memory entries over the bytes before it, as
    :func:`simulate` counts them (they do not depend on what is resident), and what it
    reads: from outside the region (its uses), and what must be resident to run it (as
    :func:`valid_trace` checks)."""
    region: list[Op] = step.region
    profile, kept = region_profile(region, step.value or "", sizes)
    inner = {r for op in region for r in op.result_names}
    external = [n for op in region for n in op.operands if n not in inner]
    needs: list[str] = []
    made: set[str] = set()
    for op in region:
        needs.extend(n for n in op.operands if n in known and n not in made)
        made.update(op.result_names)
    return _Region(profile, kept, external, needs)
