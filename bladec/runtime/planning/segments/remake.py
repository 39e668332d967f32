"""A value a segment returns only for the next one made again at the start of the next
from what both hold, where an estimate of both segments as XLA allocates them says the
higher of the two falls (one more recompute, no executable more)."""
from __future__ import annotations

from bladec.ir import Op
from bladec.ops.registry import remade
from bladec.ops.loop import LOOPS
from bladec.runtime.backends.backend import Backend, spec_bytes
from bladec.runtime.planning.trace import outside_reads
from bladec.runtime.planning.segments.steps import (EvictStep, PreparedRun, ReloadStep,
                                                    SegmentStep, donated_into, held_after,
                                                    segment_fn)


REMADE_OPS = 48   # the most ops of a value's making that remade_across copies


def remade_across(run: PreparedRun, keep: set[str], carried: dict[str, Op],
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
    before the first (a constant, which the comparisons of :func:`remade_across`
    do not need)."""
    held, out = 0, {}
    for i, step in enumerate(run.steps):
        if isinstance(step, SegmentStep):
            out[i] = held
        held = held_after(step, nbytes, held)
    return out


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
    fn = segment_fn(ops, inputs, outputs, free, shapes, dtypes, backend, xla_order)
    return SegmentStep(fn, inputs, outputs, list(free), list(ops), list(step.op_indices),
                       step.positions)


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
