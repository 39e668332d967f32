"""Peak memory of a schedule, symbolic and exact, and the lower bound (DESIGN.md section 4)."""
from __future__ import annotations

from bladec.analysis.liveness import Liveness, Timeline, body_peak, memory_timeline
from bladec.ir import DTYPE_BYTES, Func, Op
from bladec.ops.registry import remade
from bladec.symbolic.compare import Comparator, max_terms
from bladec.symbolic.expr import SymbolicExpr, const
from bladec.symbolic.shapes import ShapeInfo


def symbolic_timeline(func: Func, info: ShapeInfo, ops: list[Op] | None = None
                      ) -> Timeline[SymbolicExpr]:
    return memory_timeline(Liveness.of(func, ops), info.nbytes, const(0),
                           lambda steps: symbolic_top(steps, info.compare))


def symbolic_top(steps: list[SymbolicExpr], cmp: Comparator) -> SymbolicExpr:
    """The largest of ``steps`` where one provably dominates, else the sum of those no
    other dominates (an upper bound: a loop body's peak inside one op's step is a single
    size, and the timeline has no max of sizes)."""
    terms = max_terms(steps, cmp)
    total = const(0)
    for t in terms:
        total = total + t
    return total


def exact_sizes(info: ShapeInfo, binding: dict[str, int]) -> dict[str, int]:
    """Bytes of every value under a binding of the free symbols (per device where the
    value is sharded: a device holds one of its ``info.ways`` blocks)."""
    full = info.bind(binding)
    out = {}
    for name, dims in info.dims.items():
        n = DTYPE_BYTES[info.dtypes[name]]
        for d in dims:
            n *= d.evaluate(full)
        out[name] = n // info.ways.get(name, 1)
    return out


def expanded_sizes(sizes: dict[str, int], ops: list[Op], keep: set[str]) -> dict[str, int]:
    """``sizes`` with each result the backend makes inside its readers (``remade``: a
    broadcast, a splat constant, an iota, an elementwise op of those made from nothing;
    not one in ``keep``, the graph's outputs) sized by what
    it holds where the backend makes it inside its readers (JaxBackend.enforce_order):
    its operands (their own sizes, so a broadcast of an iota holds one element), or one
    element where it reads nothing. The device holds its operands until its last reader,
    where the model frees them at the op: its size stands for them until then."""
    out = dict(sizes)
    for r, op in remade(ops, keep).items():
        if r not in out:
            continue
        held = sum(out[n] for n in dict.fromkeys(op.operands) if n in out)
        out[r] = min(out[r], held if op.operands else DTYPE_BYTES[op.results[0].type.dtype])
    return out


def exact_timeline(func: Func, sizes: dict[str, int], ops: list[Op] | None = None
                   ) -> Timeline[int]:
    return memory_timeline(Liveness.of(func, ops), sizes.__getitem__, 0, max)


def exact_peak(func: Func, sizes: dict[str, int], ops: list[Op] | None = None) -> int:
    t = exact_timeline(func, sizes, ops)
    return max(t.steps, default=t.inputs)


def peak_terms(timeline: Timeline[SymbolicExpr], cmp: Comparator) -> list[SymbolicExpr]:
    """The symbolic peak: the steps no other step provably dominates (a max of these)."""
    return max_terms(timeline.steps or [timeline.inputs], cmp)


def lower_bound_steps(func: Func, size, zero, top=None):
    """Per op: its operands and results plus the graph inputs; no schedule can do better.

    Inputs and the op's own operands and results must be resident while it runs, even with
    unlimited rematerialization (DESIGN.md section 4).
    """
    live = Liveness.of(func)
    inputs = zero
    for name in live.inputs:
        inputs = inputs + size(name)
    input_set = set(live.inputs)
    steps = []
    for op in live.ops:
        total = inputs
        for name in dict.fromkeys(op.operands):
            if name in live.defined and name not in input_set:
                total = total + size(name)
        for r in op.results:
            total = total + size(r.name)
        if top is not None:  # a loop's regions run inside its step
            total = total + body_peak(op, size, zero, top)
        steps.append(total)
    return steps or [inputs]


def symbolic_lower_bound(func: Func, info: ShapeInfo) -> list[SymbolicExpr]:
    return max_terms(lower_bound_steps(func, info.nbytes, const(0),
                                       lambda steps: symbolic_top(steps, info.compare)),
                     info.compare)


def exact_lower_bound(func: Func, sizes: dict[str, int]) -> int:
    return max(lower_bound_steps(func, sizes.__getitem__, 0, max))
