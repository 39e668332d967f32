"""A plan's trace cut into compiled segments, evictions and reloads: what the executor runs.

Segments are maximal runs of ops (recomputed ones included) with no eviction or reload
between them, each one compiled function. Values whose last use is in a segment are
freed after it, and donated to it so XLA may reuse their buffers for its outputs; a
value evicted by reload is offloaded once (a second eviction reuses the host copy).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from bladec.ir import Op
from bladec.ops.registry import remade
from bladec.ops.loop import LOOPS, with_bodies
from bladec.runtime.backends.backend import Backend, Segment
from bladec.runtime.planning.plan import Plan
from bladec.runtime.planning.trace import last_uses


@dataclass
class SegmentStep:
    """Run ``fn`` on ``inputs``, bind ``outputs``, then free ``free`` (donated to it).
    ``op_indices``: the compute ops it runs (a recompute counts as the op it precedes);
    ``positions``: the memory positions of the plan's trace it covers."""
    fn: Segment
    inputs: list[str]
    outputs: list[str]
    free: list[str]
    ops: list[Op]
    op_indices: list[int]
    positions: tuple[int, int]


@dataclass
class EvictStep:
    """Take ``value`` off the device; ``copy``: offload it first (no host copy yet)."""
    value: str
    copy: bool


@dataclass
class ReloadStep:
    """Copy ``value`` back; ``drop``: the host copy is not needed again."""
    value: str
    drop: bool


Step = SegmentStep | EvictStep | ReloadStep


@dataclass
class PreparedRun:
    """A plan for one binding and limit, ready to dispatch, with the device accounting
    it was checked with (``device``, a :class:`bladec.runtime.planning.accounting.DeviceAccount`)."""
    plan: Plan
    steps: list[Step] = field(default_factory=list)
    evictions: int = 0
    reloads: int = 0
    recomputes: int = 0
    recomputed_ops: int = 0   # the ops the recomputes run
    segments: int = 0
    device: object = None
    xla_order: bool = False   # the compiler scheduled the ops (Fitter._in_xla_order)
    measured: object = None   # execution.Measured: the figures its first run counted

    def segment_steps(self) -> list[SegmentStep]:
        return [s for s in self.steps if isinstance(s, SegmentStep)]

    def segment_ops(self) -> list[list[Op]]:
        return [s.ops for s in self.segment_steps()]


def split(plan: Plan, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str],
          keep: set[str], backend: Backend, donated: set[str] = frozenset(),
          xla_order: bool = False, graph_inputs: Sequence[str] = (),
          cut_after_loops: bool = False) -> PreparedRun:
    """The plan's trace as steps. ``keep``: values never freed (graph inputs and outputs);
    ``donated``: graph inputs the caller gave up, freed and donated at their last use;
    ``xla_order``: the segments scheduled by the compiler (Backend.segment).
    ``cut_after_loops``: a segment ends after each loop op: XLA:CPU gives the buffers of
    the loops of one executable each an allocation of its own (eight scans in sequence,
    each stacking 1.5 MiB that the next does not read, took 16 MiB of temporaries), so
    chunks of a checkpointed scan (runtime/checkpoint.py) free their residuals only
    between executables."""
    trace = plan.trace
    carried = _carried(trace, keep) if getattr(backend, "enforce_order", False) else {}
    last = _held_by_readers(last_uses(trace), carried)
    run = PreparedRun(plan, xla_order=xla_order)
    whole_step = True   # no eviction (so no reload): one segment, every op, compiled as
                        # jax.jit would compile the step (Backend.segment)
    later_offloads: dict[str, int] = {}   # evictions by reload still ahead, per value
    for step in trace:
        if step.kind == "evict":
            whole_step = False
            if step.method == "reload":
                later_offloads[step.value] = later_offloads.get(step.value, 0) + 1
    on_host: set[str] = set()
    ops: list[Op] = []
    indices: list[int] = []
    made: list[str] = []   # values this segment defines for later steps
    start_pos = pos = 0

    def close(end: int) -> None:
        nonlocal start_pos
        if not ops:
            return
        ops[:0] = _rederived(ops, carried)
        inputs: list[str] = []
        defined: set[str] = set()
        for op in ops:  # read before the segment defines it: from outside
            for n in op.operands:
                if n in shapes and n not in defined and n not in inputs:
                    inputs.append(n)
            defined.update(op.result_names)
        if whole_step and graph_inputs:
            rank = {n: i for i, n in enumerate(graph_inputs)}
            inputs.sort(key=lambda n: rank.get(n, len(rank)))
        # (a carried value is never returned: each later segment that reads it makes it
        # again, so returned it would be held as a whole array besides)
        outputs = [n for n in dict.fromkeys(made)
                   if n in keep or (last.get(n, -1) > end and n not in carried)]
        free = [n for n in inputs if (n not in keep or n in donated)
                and last.get(n, -1) <= end]
        specs = {id(op): [(shapes[r], dtypes[r]) for r in op.result_names]
                 for op in with_bodies(ops)}
        args = [(shapes[n], dtypes[n]) for n in inputs]
        donate = tuple(i for i, n in enumerate(inputs) if n in free)
        fn = backend.segment(list(ops), inputs, outputs, specs, args, donate, xla_order,
                             whole_step=whole_step)
        run.steps.append(SegmentStep(fn, inputs, outputs, free, list(ops), list(indices),
                                     (start_pos, pos)))
        run.segments += 1
        ops.clear()
        made.clear()
        indices.clear()
        start_pos = pos

    for t, step in enumerate(trace):
        if step.kind == "op":
            ops.append(step.op)
            made.extend(step.op.result_names)
            indices.append(step.index)
            pos += 1
            if cut_after_loops and step.op.name in LOOPS:
                close(t)
        elif step.kind == "regen" and step.method == "recompute":
            ops.extend(step.region)
            made.append(step.value)
            run.recomputes += 1
            run.recomputed_ops += len(step.region)
            pos += len(step.region)
        else:
            close(t - 1)
            if step.kind == "evict" and step.value in carried:
                pass   # never made outside its readers: nothing to drop
            elif step.kind == "evict":
                copy = step.method == "reload" and step.value not in on_host
                if step.method == "reload":
                    on_host.add(step.value)
                    later_offloads[step.value] -= 1
                run.steps.append(EvictStep(step.value, copy))
                run.evictions += 1
            else:
                drop = later_offloads.get(step.value, 0) == 0
                if drop:
                    on_host.discard(step.value)
                run.steps.append(ReloadStep(step.value, drop))
                run.reloads += 1
                pos += 1
                start_pos = pos
    close(len(trace) - 1)
    return run


def _carried(trace: list, keep: set[str]) -> dict[str, Op]:
    """The results made inside their readers (``remade``) that no segment returns:
    each segment that reads one makes it again from its operands (``_rederived``),
    inside the reader's part of the executable (backends/backend.py ``interpret``),
    as the planner's model sizes it (analysis/memory.py ``expanded_sizes``). Not a
    graph output (kept), nor a value evicted to be reloaded (the host copy is of the
    whole array), nor one made from a value the plan evicts (a later segment could find
    it gone)."""
    reloaded = {s.value for s in trace if s.kind == "evict" and s.method == "reload"}
    evicted = {s.value for s in trace if s.kind == "evict"}
    ops = [op for s in trace if s.kind in ("op", "regen")
           for op in ([s.op] if s.kind == "op" else s.region or [])]
    carried = remade(ops, keep | reloaded)
    changed = True
    while changed:   # drop those that read an evicted value that is not carried
        changed = False
        for name, op in list(carried.items()):
            if any(n in evicted and n not in carried for n in op.operands):
                del carried[name]
                changed = True
    return carried


def _held_by_readers(last: dict[str, int], carried: dict[str, Op]) -> dict[str, int]:
    """Last uses where a carried value's operands live until its own last reader (a
    later segment makes it from them)."""
    last = dict(last)
    changed = bool(carried)
    while changed:
        changed = False
        for name, op in carried.items():
            for n in op.operands:
                if last.get(name, -1) > last.get(n, -1):
                    last[n] = last[name]
                    changed = True
    return last


def _rederived(ops: list[Op], carried: dict[str, Op]) -> list[Op]:
    """The carried ops that ``ops`` read before defining, with the carried ops they
    read, in an order that makes each before its readers."""
    defined: set[str] = set()
    out: list[Op] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        seen.add(name)
        op = carried[name]
        for m in op.operands:
            if m in carried and m not in seen:
                visit(m)
        out.append(op)

    for op in ops:
        for n in op.operands:
            if n in carried and n not in defined and n not in seen:
                visit(n)
        defined.update(op.result_names)
    return out
