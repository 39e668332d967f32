"""What the backward keeps from the forward: ``grad{save=auto}``.

By default the backward reads the forward values it needs, so each of them is live from
its definition in the forward to its last use in the backward, across the point between
the two where the memory of a training step peaks. Many of those values are cheap to
make again: a broadcast of a per-token scalar to every hidden unit (64 times its
operand), a ``tanh`` or ``logistic`` of a value the backward reads anyway, a constant.
As in the min-cut partitioner of PyTorch's AOTAutograd, cheap ops (elementwise, data
movement, constants) may be recomputed in the backward and expensive ones (contractions,
reductions, gathers) are saved; unlike it, the choice is made once for every binding of
the symbolic dims, by the sign of a symbolic memory impact under the declared ranges.

For each forward value the backward reads, grow a subgraph of cheap ops upward from its
producer (at most :data:`MAX_OPS`) until recomputing it from the subgraph's inputs holds
fewer bytes than saving it does:

    impact = bytes(value) - bytes(inputs that would be held only for the recompute)

where an input costs nothing if it is a graph input (resident anyway), a value the
backward keeps anyway, or made by an op with no operands (a constant, an iota: recomputed
too). The value is recomputed when ``impact >= 0`` is proved for every binding within
the declared ranges and ``impact > 0`` is possible (:mod:`bladec.symbolic.compare`
answers ``>`` or ``>=``: never more memory, less for some shapes; a broadcast of a
per-row sum to [B, H, S, S] frees as much as it holds only at S = 1); where the sign is
unknown or depends on the binding, or the impact is 0 everywhere, it is saved, as by
default. Values are considered from the last
forward one to the first, and each choice updates what the backward keeps.
"""
from __future__ import annotations

from bladec.ir import Func, Module, Op, Value
from bladec.ops.elementwise import BINARY, UNARY
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import SymbolicExpr
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

CHEAP = frozenset(UNARY) | frozenset(BINARY) | {
    "integer_pow", "compare", "select", "convert", "broadcast", "broadcast_in_dim",
    "broadcast_like", "reshape", "dynamic_reshape", "transpose", "concatenate", "slice", "constant", "iota",
    "stop_gradient"}
MAX_OPS = 6  # the most ops recomputed for one value
# Ops that only spread or fill values: never worth keeping for the backward (what they
# make is at least as large as what they read), re-emitted there even with save=all.
# ``broadcast_like`` is the importer's broadcast to a dynamic shape (its reference only
# lends its dims), which samples/llama-loss-small.mlir uses since it was imported again.
PER_USE = frozenset({"broadcast", "broadcast_in_dim", "broadcast_like", "constant", "iota"})


def recompute_cheap(module: Module, func: Func, forward_ops: int,
                    cheap: frozenset[str] = CHEAP, max_ops: int = MAX_OPS) -> Func:
    """``func`` (its first ``forward_ops`` ops the forward, the rest the backward) with the
    forward values chosen above recomputed in the backward instead of saved: from ops
    in ``cheap``, at most ``max_ops`` of them per value."""
    info = analyze_shapes(Module([func], module.shape_graph, module.file), func)
    fwd, bwd = func.ops[:forward_ops], func.ops[forward_ops:]
    made = {r.name: op for op in fwd for r in op.results}
    order = {r.name: i for i, op in enumerate(fwd) for r in op.results}
    args = {a.name for a in func.args} | set(func.outputs())
    read = {n for op in bwd for n in op.operands if n in made}
    kept = set(read)
    plan: dict[str, list[Op]] = {}
    for value in sorted(read, key=order.__getitem__, reverse=True):
        if value in args:
            continue
        grown = _subgraph(value, made, args, kept - {value}, info, cheap, max_ops)
        if grown is not None:
            ops, held = grown
            plan[value] = ops
            kept.discard(value)
            kept.update(held)
    if not plan:
        return func
    return Func(func.name, list(func.args), fwd + _rewrite(bwd, plan, func), func.returns,
                func.loc, func.return_loc)


def _subgraph(value: str, made: dict[str, Op], args: set[str], kept: set[str],
              info: ShapeInfo, cheap: frozenset[str], max_ops: int
              ) -> tuple[list[Op], list[str]] | None:
    """The ops that recompute ``value`` at a positive impact for every binding, in forward
    order, and the values they hold; None if there are none within ``max_ops`` ops (the
    constants and iotas they read come along uncounted)."""
    top = made[value]
    if top.name not in cheap or len(top.results) != 1:
        return None
    ops, counted = [top], 1
    while True:
        inside = {r.name for op in ops for r in op.results}
        inputs = list(dict.fromkeys(n for op in ops for n in op.operands if n not in inside))
        free = [n for n in inputs if n in made and not made[n].operands
                and made[n].name in cheap]
        if free:
            ops.extend(made[n] for n in free)
            continue
        held = [n for n in inputs if n not in args and n not in kept]
        impact: SymbolicExpr = info.nbytes(value)
        for n in held:
            impact = impact - info.nbytes(n)
        if info.compare(impact, 0) in (Order.GT, Order.GE):
            rank = {id(op): i for i, op in enumerate(made.values())}
            return sorted(ops, key=lambda op: rank[id(op)]), held
        grow = [n for n in held if made.get(n) is not None and made[n].name in cheap]
        if not grow or counted >= max_ops:
            return None
        biggest = grow[0]  # the largest held value where the comparison can tell
        for n in grow[1:]:
            if info.compare(info.nbytes(n), info.nbytes(biggest)) is Order.GT:
                biggest = n
        ops.append(made[biggest])
        counted += 1


def _rewrite(bwd: list[Op], plan: dict[str, list[Op]], func: Func) -> list[Op]:
    """The backward with each planned value's ops cloned just before its first use there
    (once: later uses read the clone), the uses renamed to the clones. Broadcasts and
    constants (:data:`PER_USE`) are cloned again for each backward op that reads them:
    XLA fuses such an op into a single consumer and never allocates it, but keeps one
    with two consumers apart from them as a buffer of its own (seen in its buffer
    assignment of the Llama step: a [B, H, S, S] broadcast per layer)."""
    taken = set(func.value_types()) | {a.name for a in func.args}
    env: dict[str, str] = {}
    per_use: dict[str, str] = {}
    out: list[Op] = []

    def fresh(name: str) -> str:
        k = 0
        while f"{name}.r{k}" in taken:
            k += 1
        taken.add(f"{name}.r{k}")
        return f"{name}.r{k}"

    def resolve(name: str) -> str:
        if name in env or name in per_use:
            return env.get(name) or per_use[name]
        if name in plan:
            for op in plan[name]:
                if op.results[0].name in env or op.results[0].name in per_use:
                    continue
                operands = [resolve(n) for n in op.operands]
                results = [Value(fresh(r.name), r.type) for r in op.results]
                out.append(Op(op.name, operands, results, dict(op.attrs), loc=op.loc))
                (per_use if op.name in PER_USE else env).update(
                    zip(op.result_names, (r.name for r in results)))
            return resolve(name)
        return name

    for op in bwd:
        per_use.clear()
        operands = [resolve(n) for n in op.operands]
        out.append(Op(op.name, operands, list(op.results), dict(op.attrs), dict(op.regions),
                      op.loc))
    return out
