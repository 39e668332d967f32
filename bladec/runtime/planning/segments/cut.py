"""A plan's trace cut into segments (:func:`split`): maximal runs of ops with no eviction
or reload between them, a segment's tail that would cross the cut only for itself sunk
into the next, what a recompute reads carried."""
from __future__ import annotations

from typing import Sequence

from bladec.ir import Op
from bladec.ops.registry import remade
from bladec.ops.loop import LOOPS
from bladec.runtime.backends.backend import Backend, made_from, spec_bytes
from bladec.runtime.planning.plan import Plan
from bladec.runtime.planning.trace import last_uses, outside_reads
from bladec.runtime.planning.segments.remake import remade_across
from bladec.runtime.planning.segments.steps import (EvictStep, PreparedRun, ReloadStep,
                                                    SegmentStep, segment_fn)


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
        fn = segment_fn(ops, inputs, outputs, free, shapes, dtypes, backend, xla_order,
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
        remade_across(run, keep, carried, shapes, dtypes, backend, xla_order)
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
