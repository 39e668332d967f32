"""An execution trace: ops, evictions and regenerations in the order the runtime runs them.

The planner (policy.py) builds a trace for one binding; the executor runs it; and
:func:`simulate` measures it with the memory model of DESIGN.md section 4, applied to
the trace: a value is resident from the step that makes it (an op, a reload, a
recompute) until its last use in the trace or until it is evicted; graph inputs
always, outputs from their definition on.

One refinement makes the model closer to the device: the executor runs the trace as
compiled segments, cut at every eviction and reload, and a segment's arguments stay on
the device until the segment ends. So a value made before a segment and last used inside
it is resident until the segment's last step (:func:`held_until`), not only until the
op that last reads it. A trace with no eviction is one segment, and the rule changes
nothing there. (XLA also allocates an executable's outputs before it runs; the model
leaves that to the executor's margins, see accounting.py.) Where the backend keeps a
recompute inside one executable (one memory, the order held), an eviction to recompute
a value the segment made cuts nothing (segments.split): the rule then holds a value
read across such an eviction longer than the executable does (XLA frees it at its last
read), so it errs high there. The planner keeps this
measurement within its budget; the executor then checks the compiled segments' own
figures (accounting.py).

The budget (:class:`Budget`): how many bytes a plan may use at each step of its trace.
The user's limit is one number, but the per-op model (above) is only an estimate of
what the device holds: inside a compiled segment XLA allocates every output up front,
keeps the segment's arguments until it ends, and adds temporaries of its own. The
executor measures that difference per segment from the compiled executables and hands
it back to the planner as a *margin* per compute op: the planner then keeps the model
below ``limit - margin`` at the steps of that op, and below ``limit`` elsewhere. Margins
only grow, so the closed loop (plan, compile, measure, tighten) ends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Container, Iterable

from bladec.analysis.liveness import body_peak
from bladec.ir import Op


@dataclass
class Step:
    """``kind`` is "op", "evict" or "regen"; ``method`` is "reload" or "recompute"."""
    kind: str
    op: Op | None = None
    value: str | None = None
    method: str | None = None
    region: list[Op] = field(default_factory=list)
    index: int = -1  # the compute op's index for "op" steps
    results: tuple[str, ...] = ()  # the op's result names, read once (the planner's hot path)
    # a recompute's region as the walks read it, worked out once per step (the planner's
    # regeneration steps are made once per region, plan.op_chunk, and walked in
    # thousands of traces): what it reads from outside (region_reads), and its memory
    # profile for one binding's sizes (region_profile)
    reads: list[str] | None = field(default=None, repr=False, compare=False)
    profiled: tuple | None = field(default=None, repr=False, compare=False)
    # an op step of a program's own (plan.Program.op_steps): the operands whose last
    # reader in the program it is, all a walk in program order needs to find last uses
    finals: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    # what plan.valid_trace needs resident to run the step, for one program's names
    needs: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.op is not None and not self.results:
            self.results = tuple(self.op.result_names)


def step_reads(step: Step) -> list[str]:
    """What a recompute step's region reads from outside (cached on the step)."""
    if step.reads is None:
        step.reads = region_reads(step.region)
    return step.reads


def step_profile(step: Step, sizes: dict[str, int]) -> tuple[list[int], int]:
    """A recompute step's :func:`region_profile` for ``sizes`` (cached on the step)."""
    cached = step.profiled
    if cached is None or cached[0] is not sizes:
        cached = step.profiled = (sizes, *region_profile(step.region, step.value or "", sizes))
    return cached[1], cached[2]


def region_reads(region: list[Op]) -> list[str]:
    """The operands of ``region``'s ops that no op of it makes, in the order read."""
    inner = {r for op in region for r in op.result_names}
    return [n for op in region for n in op.operands if n not in inner]


def outside_reads(ops: list[Op], arrays: Container[str]) -> list[str]:
    """The ``arrays`` that ``ops`` read before one of them defines it, each once, in the
    order first read: what a segment or a recompute region takes from outside. Not
    :func:`region_reads`: a segment of a trace may read a value and then make it again
    (a recompute), and the value it read is still an input."""
    inputs: dict[str, None] = {}
    defined: set[str] = set()
    for op in ops:
        for n in op.operands:
            if n in arrays and n not in defined:
                inputs.setdefault(n)
        defined.update(op.result_names)
    return list(inputs)


@dataclass
class Measure:
    memory: list[int]      # bytes after each op of the trace (regions included), before frees
    peak: int
    inputs: int
    until_at: int = -1     # the entry of op ``until``'s step, where simulate was asked


def last_uses(trace: list[Step]) -> dict[str, int]:
    """The trace position of each value's last use (by an op or a recompute region)."""
    last: dict[str, int] = {}
    for pos, step in enumerate(trace):
        if step.kind == "op":
            for n in step.op.operands if step.finals is None else step.finals:
                last[n] = pos
        elif step.kind == "regen" and step.method == "recompute":
            for n in step_reads(step):
                last[n] = pos
    return last


def position_ops(trace: list[Step], lo: int = 0, hi: int | None = None) -> list[int]:
    """The compute op each memory position of ``trace`` belongs to, as :func:`simulate`
    lays the positions out: an op's step is its own; a reload or a recompute region's ops
    belong to the op they precede (-1 when no op follows). An op's own step is the last
    position that belongs to it. ``lo``, ``hi``: only the positions of steps lo..hi-1
    (the op that the last of them precede may come after them)."""
    out: list[int] = []
    pending = 0
    hi = len(trace) if hi is None else hi
    for step in trace[lo:hi]:
        if step.kind == "op":
            out.extend([step.index] * (pending + 1))
            pending = 0
        elif step.kind == "regen":
            pending += 1 if step.method == "reload" else len(step.region)
    if pending:
        after = next((trace[j].index for j in range(hi, len(trace))
                      if trace[j].kind == "op"), -1)   # (no copy of the trace's tail)
        out += [after] * pending
    return out


@dataclass
class Walk:
    """What one walk over a trace finds: each value's last use and the step that made it
    (an op, a reload or a recompute; graph inputs are not made in the trace), as trace
    positions, and the segments: the runs of ops and recomputes between evictions and
    reloads, each by its first and last position (``segment_of`` a position: -1 for an
    eviction or a reload, which run between segments)."""
    last: dict[str, int]
    made: dict[str, int]
    segment_of: list[int]
    first: list[int]
    final: list[int]


def walk(trace: list[Step]) -> Walk:
    """One walk over ``trace``: the planner measures thousands of candidate traces per
    binding (policy.py, consolidate.py), so this and :func:`simulate` are its hot path."""
    segment_of: list[int] = []
    first: list[int] = []
    final: list[int] = []
    made: dict[str, int] = {}
    last: dict[str, int] = {}
    cut = True
    for pos, step in enumerate(trace):
        kind = step.kind
        if kind == "evict" or (kind == "regen" and step.method == "reload"):
            segment_of.append(-1)
            cut = True
            if kind == "regen":
                made[step.value] = pos
            continue
        if cut:
            first.append(pos)
            final.append(pos)
            cut = False
        else:
            final[-1] = pos
        segment_of.append(len(first) - 1)
        if kind == "op":
            # (a program's op step names only the operands it reads last: the trace
            # runs the program's ops in order, so no later op step reads the others)
            for n in step.op.operands if step.finals is None else step.finals:
                last[n] = pos
            for r in step.results:
                made[r] = pos
        else:  # a recompute: what its region reads from outside
            for n in step_reads(step):
                last[n] = pos
            made[step.value] = pos
    return Walk(last, made, segment_of, first, final)


def held_until(trace: list[Step]) -> dict[str, int]:
    """The trace position up to which each value read in the trace stays resident: its
    last use, or, when that use is in a later segment than the step that made the value
    (it is that segment's argument), the segment's last step."""
    w = walk(trace)
    last = w.last   # extended in place (no key is added)
    for value, pos in last.items():
        seg = w.segment_of[pos]
        # graph inputs are not extended: kept ones stay anyway, and a donated one's
        # buffer is the executable's to reuse for an output once it is read
        if seg >= 0:
            at = w.made.get(value)
            if at is not None and at < w.first[seg]:
                last[value] = w.final[seg]
    return last


def simulate(trace: list[Step], sizes: dict[str, int], inputs: list[str],
             outputs: set[str], donated: frozenset[str] = frozenset(),
             until: int | None = None, bound: int | list[int] | None = None) -> Measure:
    """The model's bytes at each step of ``trace``; ``donated`` inputs are freed at
    their last use (the caller gave them up), the others stay to the end. ``until``: stop
    at compute op ``until``'s step (its bytes are the last entry): the planner's trials
    of where to put an eviction only ask how much op ``until`` then needs. ``bound``:
    stop at the first entry over it (one number, or one per entry as Budget.allowed
    gives them), its last entry then: the greedy planner only asks where its trace
    first goes over the budget, and a measure that never does is whole. With both,
    the measure goes on to op ``until``'s step (its entry: ``until_at``) and then to
    the first entry over ``bound`` (where none was before), so that one walk answers
    both questions.

    The planner's hot path (thousands of calls per plan on the paper-size step), so the
    frees are worked out before the walk: a value is freed at the step of its last use
    (``held_until``), a result nothing reads later at once, never a pinned one (kept inputs
    and outputs)."""
    last = held_until(trace)
    pinned = (set(inputs) - donated) | outputs
    dies: dict[int, list[str]] = {}
    for value, pos in last.items():
        if value not in pinned:
            dies.setdefault(pos, []).append(value)
    base = sum(sizes[n] for n in inputs)
    resident: set[str] = set(donated)  # other inputs are never freed
    total = base
    memory: list[int] = []
    append = memory.append
    size_of = sizes.__getitem__
    flat = bound if isinstance(bound, int) else None
    per = bound if isinstance(bound, list) else None
    at = 0   # entries checked against the bound so far
    over = -1   # the first entry over it
    until_at = -1

    for pos, step in enumerate(trace):
        kind = step.kind
        if kind == "op":
            results = step.results
            for r in results:
                resident.add(r)
                total += sizes[r]
            # a loop's body runs inside its step (analysis/liveness.py's body_peak)
            op = step.op
            append(total + body_peak(op, size_of, 0, max) if op.regions else total)
            if step.index == until:
                until_at = len(memory) - 1
                if bound is None or over >= 0:
                    break
            # free what this step read last, and results nothing reads
            dying = dies.get(pos)
            if dying:
                total -= free(dying, resident, sizes)
            for r in results:
                if last.get(r, -1) <= pos and r not in pinned and r in resident:
                    resident.discard(r)
                    total -= sizes[r]
        elif kind == "evict":
            if step.value in resident:
                resident.discard(step.value)
                total -= sizes[step.value]
            continue
        elif step.method == "reload":
            resident.add(step.value)
            total += sizes[step.value]
            append(total)
        else:  # recompute: run the region's ops, keep only the regenerated value
            profile, kept = step_profile(step, sizes)
            for extra in profile:
                append(total + extra)
            total += kept
            resident.add(step.value)
            # what the region read from outside and nothing later reads is freed
            total -= free(dies.get(pos, ()), resident, sizes)
        if bound is not None and over < 0:
            n = len(memory)
            while at < n:
                if memory[at] > (flat if per is None else per[at]):
                    over = at
                    break
                at += 1
            if over >= 0 and (until is None or until_at >= 0):
                del memory[max(over, until_at) + 1:]
                break
    return Measure(memory, max(memory, default=base), base, until_at)


def free(names: Iterable[str], resident: set[str], sizes: dict[str, int]) -> int:
    """Drop those of ``names`` that are ``resident``; the bytes that frees."""
    freed = 0
    for n in names:
        if n in resident:
            resident.discard(n)
            freed += sizes[n]
    return freed


def region_profile(region: list[Op], value: str, sizes: dict[str, int]
                   ) -> tuple[list[int], int]:
    """A recompute region's memory entries over the bytes before it (one per op: what
    its ops have made and not yet freed), and the bytes it leaves (the regenerated
    ``value``): a temporary is freed once no later op of the region reads it. Neither
    depends on what is resident, so the planner works them out once per region."""
    read_last: dict[str, int] = {}   # each name's last reader inside the region
    for i, op in enumerate(region):
        for n in op.operands:
            read_last[n] = i
    total = 0
    profile: list[int] = []
    temps: list[str] = []
    for i, op in enumerate(region):
        for r in op.result_names:
            temps.append(r)
            total += sizes[r]
        profile.append(total)
        kept = []
        for r in temps:
            if read_last.get(r, -1) > i or r == value:
                kept.append(r)
            else:
                total -= sizes[r]
        temps = kept
    for r in temps:
        if r != value:
            total -= sizes[r]
    return profile, total


class Budget:
    """``limit`` less ``margins[op]`` at the trace steps of compute op ``op`` (a
    regeneration counts as the op it precedes)."""

    def __init__(self, limit: int, margins: dict[int, int] | None = None) -> None:
        self.limit = limit
        self.margins = {k: m for k, m in (margins or {}).items() if m > 0}

    def allowed(self, trace: list[Step], lo: int = 0, hi: int | None = None
                ) -> list[int] | None:
        """Bytes allowed at each memory position of ``trace`` (as ``simulate`` lays them
        out), or None when every position allows ``limit``. ``lo``, ``hi``: only at the
        positions of steps lo..hi-1 (position_ops)."""
        if not self.margins:
            return None
        margins, limit = self.margins, self.limit
        return [limit - (margins.get(k, 0) if k >= 0 else 0)
                for k in position_ops(trace, lo, hi)]

    def first_over(self, measure: Measure, allowed: list[int] | None) -> int | None:
        """The first memory position over its bound, or None."""
        if allowed is None:
            if measure.peak <= self.limit:
                return None
            return next(p for p, m in enumerate(measure.memory) if m > self.limit)
        return next((p for p, (m, a) in enumerate(zip(measure.memory, allowed)) if m > a),
                    None)

    def fits(self, measure: Measure, allowed: list[int] | None) -> bool:
        return self.first_over(measure, allowed) is None

    def room(self, measure: Measure, allowed: list[int] | None, a: int, b: int) -> int:
        """The fewest spare bytes over memory positions a..b-1 (large when empty)."""
        if a >= b:
            return 1 << 62
        if allowed is None:
            return self.limit - max(measure.memory[a:b])
        return min(x - m for m, x in zip(measure.memory[a:b], allowed[a:b]))
