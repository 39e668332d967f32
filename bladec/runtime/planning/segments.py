"""A plan's trace cut into compiled segments, evictions and reloads: what the executor runs.

Segments are maximal runs of ops (recomputed ones included) with no eviction or reload
between them, each one compiled function; where the backend keeps a recompute inside an
executable (one memory, the order held), an eviction to recompute a value the segment
made cuts nothing (:func:`split`). Values whose last use is in a segment are
freed after it, and donated to it so XLA may reuse their buffers for its outputs; a
value evicted by reload is offloaded once (a second eviction reuses the host copy).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Container, Iterable, Sequence

from bladec.ir import Op
from bladec.ops.registry import remade
from bladec.ops.loop import LOOPS, with_bodies
from bladec.runtime.backends.backend import Backend, Segment, made_from, spec_bytes
from bladec.runtime.planning.plan import Plan
from bladec.runtime.planning.trace import last_uses, outside_reads


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
    uncut: int = 0            # evictions to recompute that cut no segment (split)
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
          cut_after_loops: bool = False, uncut: bool = True) -> PreparedRun:
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

    # a segment's tail, run at the start of the next (_sunk): where the backend holds
    # the listing's order (in XLA's own, the compiler places the ops itself)
    sink = getattr(backend, "enforce_order", False) and not xla_order
    # evictions to recompute that cut nothing: where the backend holds the order and keeps
    # a recompute inside one executable (JaxBackend.recomputes_inside), a value made in
    # the segment and evicted to be made again dies there at its last read, as XLA's
    # buffer assignment frees any value, and its recompute runs later in the same
    # segment (what that saves and when it is undone: wholestep.WholeStep._checked);
    # ``uncut=False``: every eviction cuts, as where the backend does not keep them
    inside = uncut and getattr(backend, "recomputes_inside", False) and not xla_order
    moved: list[Op] = []
    moved_indices: list[int] = []
    plain: list[bool] = []   # per op of ``ops``: from an op step (not a region's)
    unreturned: set[str] = set()   # made by a segment that did not return it

    def close(end: int, ahead: int | None = None) -> None:
        nonlocal start_pos
        if not ops:
            return
        sunk: list[Op] = []
        reads: set[str] = set()
        blocked = _blocked(trace, ahead) if ahead is not None else {}
        if sink and ahead is not None:   # (after the last segment there is no next)
            sunk = _sunk(ops, plain, end, last, keep, carried, set(blocked), shapes, dtypes)
            if sunk:
                del ops[len(ops) - len(sunk):]
                moved_indices[:] = indices[len(indices) - len(sunk):]
                del indices[len(indices) - len(sunk):]
                gone = {r for op in sunk for r in op.result_names}
                made[:] = [n for n in made if n not in gone]
                reads = set(made_from([n for op in sunk for n in op.operands], carried))
        ops[:0] = _rederived(ops, carried)
        inputs = outside_reads(ops, shapes)
        if whole_step and graph_inputs:
            rank = {n: i for i, n in enumerate(graph_inputs)}
            inputs.sort(key=lambda n: rank.get(n, len(rank)))
        # (a carried value is never returned: each later segment that reads it makes it
        # again, so returned it would be held as a whole array besides)
        # nor one the cut after it drops, to make again later (it would be allocated for
        # the whole segment only to be dropped)
        outputs = [n for n in dict.fromkeys(made) if n in keep or n in reads
                   or (last.get(n, -1) > end and n not in carried
                       and not (sink and blocked.get(n, "reload") != "reload"))]
        unreturned.difference_update(outputs)   # (a name made again, returned now)
        unreturned.update(n for n in made if n not in outputs)
        free = [n for n in inputs if (n not in keep or n in donated)
                and last.get(n, -1) <= end and n not in reads]
        fn = _segment_fn(ops, inputs, outputs, free, shapes, dtypes, backend, xla_order,
                         whole_step)
        run.steps.append(SegmentStep(fn, inputs, outputs, free, list(ops), list(indices),
                                     (start_pos, pos)))
        run.segments += 1
        ops.clear()
        made.clear()
        indices.clear()
        plain.clear()
        start_pos = pos
        moved.extend(sunk)

    def take(op_list: list[Op], from_step: bool) -> None:
        if moved:   # the previous segment's tail first: it ran before these in the trace
            ops.extend(moved)
            plain.extend([True] * len(moved))
            made.extend(r for op in moved for r in op.result_names)
            indices.extend(moved_indices)
            moved.clear()
            moved_indices.clear()
        ops.extend(op_list)
        plain.extend([from_step] * len(op_list))

    for t, step in enumerate(trace):
        if step.kind == "op":
            take([step.op], True)
            made.extend(step.op.result_names)
            indices.append(step.index)
            pos += 1
            if cut_after_loops and step.op.name in LOOPS:
                close(t)
        elif step.kind == "regen" and step.method == "recompute":
            take(step.region, False)
            made.append(step.value)
            run.recomputes += 1
            run.recomputed_ops += len(step.region)
            pos += len(step.region)
        elif inside and step.kind == "evict" and step.method != "reload" and \
                (step.value in carried or step.value in made):
            run.uncut += 1   # (made before this segment: its cut frees it, as before)
            continue
        else:
            close(t - 1, ahead=t)
            if step.kind == "evict" and (step.value in carried or step.value in unreturned):
                pass   # never made outside its readers, or not returned: nothing to drop
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
    take([], False)   # a tail moved past the last cut
    close(len(trace) - 1)
    if sink:
        _remade_across(run, keep, carried, shapes, dtypes, backend, xla_order)
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


SUNK_OPS = 16   # the longest tail of a segment _sunk moves to the next


def _blocked(trace: list, at: int) -> dict[str, str]:
    """The values evicted from trace position ``at`` up to the next op or recompute, with
    how (a tail moved past them could find them gone)."""
    out: dict[str, str] = {}
    for step in trace[at:]:
        if step.kind == "op" or (step.kind == "regen" and step.method == "recompute"):
            break
        if step.kind == "evict":
            out[step.value] = step.method
    return out


def _sunk(ops: list[Op], plain: list[bool], end: int, last: dict[str, int], keep: set[str],
          carried: dict[str, Op], blocked: set[str], shapes: dict[str, tuple[int, ...]],
          dtypes: dict[str, str]) -> list[Op]:
    """The tail of a segment closed at a cut (``end``: its last trace position) that
    holds less run at the start of the next segment: the longest-gaining of the last
    SUNK_OPS ops (each from an op step, no loop, reading and making nothing evicted at
    the cut), by the bytes of its results the segment would return less the bytes it
    reads that would cross the cut only for it.

    XLA allocates an executable's outputs for the whole of its run, where the planner's
    model counts a value from the op that makes it: a segment that ends by making a
    large value for the next (the scores of the next attention block, 24.5 MiB at 8x448
    on the small Llama step, from two 0.9 MiB operands) held it beside its own peak,
    17-24 MiB over the model. Made at the start of the next segment, it is allocated
    where the model counts it."""
    def nbytes(n: str) -> int:
        return 0 if n in carried or n not in shapes else spec_bytes(shapes[n], dtypes[n])

    best, best_gain = 0, 0
    results: set[str] = set()
    reads: set[str] = set()
    for k in range(1, min(SUNK_OPS, len(ops)) + 1):
        op = ops[-k]
        leaves = made_from(op.operands, carried)
        if not plain[-k] or op.regions or op.name in LOOPS \
                or any(n in blocked for n in [*op.result_names, *leaves]):
            break
        results.update(op.result_names)
        reads.update(leaves)
        returned = sum(nbytes(r) for r in results if r in keep or last.get(r, -1) > end)
        crossing = sum(nbytes(n) for n in reads - results
                       if n not in keep and last.get(n, -1) <= end)
        if returned - crossing > best_gain:
            best, best_gain = k, returned - crossing
    return ops[len(ops) - best:] if best else []


REMADE_OPS = 48   # the most ops of a value's making that _remade_across copies


def _remade_across(run: PreparedRun, keep: set[str], carried: dict[str, Op],
                   shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str],
                   backend: Backend, xla_order: bool) -> None:
    """Where a segment returns a value only for the next segment, and returning it
    raises the higher of the two segments' device figures, the next segment makes the
    value again from what both hold instead (the ops that made it, copied to its start)
    and the first does not return it.

    XLA allocates an executable's outputs for the whole of its run. A segment that
    recomputes a layer's attention probabilities (dot, scale, mask, max, sub, exp:
    each [8,4,448,448] f32, 24.5 MiB, on the small Llama step at 8x448) and returns
    them for the next one held them beside the chain's own two temporaries, 24.5 MiB
    over the planner's model, and no cut placement removed it (the segment reads the
    incoming gradient of the same shape, which it must hold while it recomputes).
    Made again at the start of the next segment from the query and key it holds anyway
    (0.9 MiB each), the value costs a second recompute but no byte more than the model
    counts. Decided per pair of segments by :func:`_xla_figure` of both ways."""
    steps = run.steps
    at = [i for i, s in enumerate(steps) if isinstance(s, SegmentStep)]
    nbytes = {n: spec_bytes(shapes[n], dtypes[n]) for n in shapes}
    held = _held_at(run, nbytes)
    for k in range(len(at) - 1):
        i, j = at[k], at[k + 1]
        if any(isinstance(s, ReloadStep) for s in steps[i + 1:j]):
            continue
        s, t = steps[i], steps[j]
        gone = {s2.value for s2 in steps[i + 1:j] if isinstance(s2, EvictStep)}
        dropped = {u.value for u in steps[j:] if isinstance(u, EvictStep)}
        later = {n for u in steps[j + 1:] if isinstance(u, SegmentStep) for n in u.inputs}
        s_made = {r for op in s.ops for r in op.result_names}
        for n in list(s.outputs):
            if n in keep or n in carried or n not in t.inputs or n in gone \
                    or n in dropped:
                continue
            chain = _making(s, n, nbytes, carried)
            if chain is None or len(chain) > REMADE_OPS:
                continue
            made = {r for op in chain for r in op.result_names}
            if any(r in s.outputs for r in made if r != n):
                continue   # (the next segment would make a returned value again)
            leaves = list(dict.fromkeys(m for op in chain for m in op.operands
                                        if m not in made and m not in carried))
            if any(m in gone or (m not in s.inputs and m not in s_made) for m in leaves):
                continue
            # what it is made from and the first segment does not hand on: handed on
            # now (returned, or not freed), and freed by the next segment after it
            crossing = [m for m in leaves if m in s.free or
                        (m in s_made and m not in s.outputs)]
            before = max(held[i] + _xla_figure(s, shapes, dtypes, nbytes),
                         held[j] + _xla_figure(t, shapes, dtypes, nbytes))
            s_outputs = [o for o in s.outputs if o != n] + \
                [m for m in crossing if m in s_made]
            s2 = _rebuilt(s, _live(s.ops, s_outputs), s_outputs,
                          [m for m in s.free if m not in crossing], shapes, dtypes,
                          backend, xla_order)
            t_ops = chain + t.ops
            t_inputs = outside_reads(t_ops, shapes)
            t_outputs = t.outputs + ([n] if n in later and n not in t.outputs else [])
            t_free = [m for m in t.free if m != n] + \
                [m for m in crossing if m not in later and m not in t.free]
            t2 = _rebuilt(t, t_ops, t_outputs, t_free, shapes, dtypes, backend, xla_order,
                          t_inputs)
            moved = sum(nbytes[m] for m in crossing) - nbytes[n]
            after = max(held[i] + _xla_figure(s2, shapes, dtypes, nbytes),
                        held[j] + moved + _xla_figure(t2, shapes, dtypes, nbytes))
            if after < before:
                steps[i], steps[j] = s, t = s2, t2
                held[j] += moved
                s_made = {r for op in s.ops for r in op.result_names}
                run.recomputes += 1
                run.recomputed_ops += len(chain)


def _held_at(run: PreparedRun, nbytes: dict[str, int]) -> dict[int, int]:
    """The bytes the runtime holds when each segment step starts, over those held
    before the first (a constant, which the comparisons of :func:`_remade_across`
    do not need)."""
    held, out = 0, {}
    for i, step in enumerate(run.steps):
        if isinstance(step, SegmentStep):
            out[i] = held
        held = held_after(step, nbytes, held)
    return out


def held_after(step: SegmentStep | EvictStep | ReloadStep, sizes: dict[str, int],
               held: int, host: dict[str, int] | None = None) -> int:
    """The bytes the runtime holds after ``step`` given ``held`` before it: a segment's
    outputs less what it frees, an evicted value gone, a reloaded one back. An
    eviction's host copy joins ``host`` where given (a reload's is dropped by the
    caller, after it has counted it)."""
    if isinstance(step, SegmentStep):
        return held + sum(sizes[n] for n in step.outputs) - sum(sizes[n] for n in step.free)
    if isinstance(step, EvictStep):
        if step.copy and host is not None:
            host[step.value] = sizes[step.value]
        return held - sizes.get(step.value, 0)
    return held + sizes.get(step.value, 0)


def donated_into(outputs: Iterable[str], donated: Iterable[str], made: Container[str],
                 aval: Callable[[str], tuple]) -> dict[str, str]:
    """The donated argument whose buffer each output is written into, by JAX's rule:
    each output, in order, takes the first donated argument left of its ``aval``
    (shape and dtype); an output the segment does not make (an argument returned as
    it is) takes none, nor does one with no argument of its aval left."""
    pool: dict[tuple, list[str]] = {}
    for n in donated:
        pool.setdefault(aval(n), []).append(n)
    into: dict[str, str] = {}
    for n in outputs:
        left = pool.get(aval(n)) if n in made else None
        if left:
            into[n] = left.pop(0)
    return into


def _making(step: SegmentStep, name: str, nbytes: dict[str, int],
            carried: dict[str, Op]) -> list[Op] | None:
    """The ops of ``step`` that make ``name`` again, in order: back from it through
    each operand of at least a quarter of its bytes (or made inside its readers), the
    smaller ones read as they are (they cross the cut in its place); None where one is
    a loop, has regions or makes more bytes than ``name`` (what is made again must
    be the largest of its making, or the copy moves more than it saves)."""
    need = {name}
    out: list[Op] = []
    for op in reversed(step.ops):
        if not need.intersection(op.result_names):
            continue
        if op.regions or op.name in LOOPS \
                or any(nbytes.get(r, 0) > nbytes[name] for r in op.result_names):
            return None
        out.append(op)
        need.update(m for m in op.operands
                    if m in carried or 4 * nbytes.get(m, 0) >= nbytes[name])
    return out[::-1]


def _live(ops: list[Op], outputs: list[str]) -> list[Op]:
    """``ops`` less those whose results nothing reads (the ops that made a value no
    longer returned, where nothing else needed it)."""
    need = set(outputs)
    out: list[Op] = []
    for op in reversed(ops):
        if op.regions or need.intersection(op.result_names):
            out.append(op)
            need.update(op.operands)
    return out[::-1]


def _rebuilt(step: SegmentStep, ops: list[Op], outputs: list[str], free: list[str],
             shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str], backend: Backend,
             xla_order: bool, inputs: list[str] | None = None) -> SegmentStep:
    """``step`` with other ops, outputs or frees (its executable made anew, compiled
    lazily like any other)."""
    inputs = step.inputs if inputs is None else inputs
    fn = _segment_fn(ops, inputs, outputs, free, shapes, dtypes, backend, xla_order)
    return SegmentStep(fn, inputs, outputs, list(free), list(ops), list(step.op_indices),
                       step.positions)


def _segment_fn(ops: list[Op], inputs: list[str], outputs: list[str], free: list[str],
                shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str],
                backend: Backend, xla_order: bool, whole_step: bool = False) -> Segment:
    """The backend's executable of ``ops`` (``free``: the inputs donated to it)."""
    specs = {id(op): [(shapes[r], dtypes[r]) for r in op.result_names]
             for op in with_bodies(ops)}
    args = [(shapes[n], dtypes[n]) for n in inputs]
    donate = tuple(i for i, n in enumerate(inputs) if n in free)
    return backend.segment(list(ops), inputs, outputs, specs, args, donate, xla_order,
                           whole_step=whole_step)


def _xla_figure(step: SegmentStep, shapes: dict[str, tuple[int, ...]],
                dtypes: dict[str, str], nbytes: dict[str, int]) -> int:
    """A segment's bytes beside what the runtime holds, as XLA allocates them: its
    outputs for the whole run, except one written into a donated argument of its shape
    read for the last time before the output is made (JAX pairs each output with the
    first such argument left), and the most bytes of its other results alive at once,
    each from the op that makes it to its last read. Values made inside their readers
    (``registry.remade``) are not arrays. Only for comparing two ways of one cut."""
    inner = remade(step.ops, set(step.outputs))
    made: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, op in enumerate(step.ops):
        for n in op.operands:
            last[n] = i
        for r in op.result_names:
            made.setdefault(r, i)
    outputs = list(dict.fromkeys(step.outputs))
    into = donated_into(outputs, [n for n in step.inputs if n in step.free], made,
                        lambda n: (shapes[n], dtypes[n]))
    outs = sum(nbytes[n] for n in outputs if n in made
               and (n not in into or last.get(into[n], -1) >= made[n]))
    returned = set(step.outputs)
    delta = [0] * (len(step.ops) + 1)
    for r, i in made.items():
        if r in returned or r in inner or r not in nbytes:
            continue
        delta[i] += nbytes[r]
        delta[max(last.get(r, i), i) + 1] -= nbytes[r]
    live = most = 0
    for d in delta[:-1]:
        live += d
        most = max(most, live)
    return outs + most
