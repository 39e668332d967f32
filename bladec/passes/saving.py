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
backward keeps anyway, or made by an op with no operands (a constant, an iota) or by a
broadcast of such values (recomputed too). The value is a candidate when ``impact >= 0``
is proved for every binding within the declared ranges and ``impact > 0`` is possible
(:mod:`bladec.symbolic.compare` answers ``>`` or ``>=``: never more memory, less for
some shapes; a broadcast of a per-row sum to [B, H, S, S] frees as much as it holds only
at S = 1); where the sign is unknown or depends on the binding, or the impact is 0
everywhere, it is saved, as by default. Values are considered from the last forward one
to the first, and each choice updates what the backward keeps.

A local test can not see where the step's peak is: recomputing a value moves the
moment it is live to its use in the backward, which can be the moment of the peak. So
``save=auto`` starts from the default's choices (broadcasts and constants re-emitted)
and takes each further choice only where the model peak of the whole step (DESIGN
section 4, with XLA's loop fusion of recomputed elementwise chains counted:
:func:`fused_peak`) stays at or under the default's at every corner of the declared
ranges (:func:`corners`); and the choices stand only where together they lower that
peak at some corner, else the default's graph is returned: recomputing costs time, so
it must buy memory. The model is not XLA: on the attention block the choices that tie
one by one (the GELU's ``tanh`` chain) are those that lower XLA's device peak.
"""
from __future__ import annotations

from itertools import product
from typing import Callable

from bladec.analysis.memory import exact_peak, exact_sizes
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
                    cheap: frozenset[str] = CHEAP, max_ops: int = MAX_OPS,
                    guard: bool = False) -> Func:
    """``func`` (its first ``forward_ops`` ops the forward, the rest the backward) with the
    forward values chosen above recomputed in the backward instead of saved: from ops
    in ``cheap``, at most ``max_ops`` of them per value. ``guard``: first the default's
    choices (:data:`PER_USE` ops, one each), then each further one only where it keeps
    the model peak at or under the current one at every corner of the ranges."""
    info = analyze_shapes(Module([func], module.shape_graph, module.file), func)
    fwd, bwd = func.ops[:forward_ops], func.ops[forward_ops:]
    made = {r.name: op for op in fwd for r in op.results}
    order = {r.name: i for i, op in enumerate(fwd) for r in op.results}
    args = {a.name for a in func.args} | set(func.outputs())
    read = {n for op in bwd for n in op.operands if n in made}
    kept = set(read)
    plan: dict[str, list[Op]] = {}

    def build(plan: dict[str, list[Op]]) -> Func:
        return Func(func.name, list(func.args), fwd + _rewrite(bwd, plan, func),
                    func.returns, func.loc, func.return_loc)

    def choose(cheap: frozenset[str], max_ops: int,
               judge: Callable[[dict[str, list[Op]]], bool] | None) -> None:
        for value in sorted(read, key=order.__getitem__, reverse=True):
            if value in args or value in plan:
                continue
            grown = _subgraph(value, made, args, kept - {value}, info, cheap, max_ops)
            if grown is None or (judge is not None and not judge({**plan, value: grown[0]})):
                continue
            plan[value] = grown[0]
            kept.discard(value)
            kept.update(grown[1])

    if not guard:
        choose(cheap, max_ops, None)
        return build(plan) if plan else func
    choose(PER_USE, 1, None)
    default = build(plan) if plan else func
    sizes = [_Sizes(exact_sizes(info, b)) for b in corners(module)]
    best = [fused_peak(default, forward_ops, s) for s in sizes]

    def lower(trial: dict[str, list[Op]]) -> bool:
        new = build(trial)
        peaks = [fused_peak(new, forward_ops, s) for s in sizes]
        return all(p <= q for p, q in zip(peaks, best))
    chosen = len(plan)
    choose(cheap, max_ops, lower)
    if len(plan) == chosen:
        return default
    # choices that tie one by one can lower the peak together (two values live at its
    # moment); where together they lower it at no corner they cost time for nothing
    new = build(plan)
    if all(fused_peak(new, forward_ops, s) >= q for s, q in zip(sizes, best)):
        return default
    return new


def fused_peak(func: Func, forward_ops: int, sizes: dict[str, int]) -> int:
    """The model peak of a training step (its first ``forward_ops`` ops the forward)
    with the backward's recomputed values that XLA fuses away counted as nothing
    (:func:`_fused`): what ``save=auto`` compares. ``sizes``: bytes by value, a
    recomputed clone (``%v.r0``) sized as its original where ``sizes`` lacks it."""
    made = {r.name for op in func.ops[:forward_ops] for r in op.results}
    return exact_peak(func, _Fusing(_Sizes(sizes), _fused(func.ops[forward_ops:], made)))


def _fused(bwd: list[Op], forward: set[str]) -> set[str]:
    """The recomputed values XLA never allocates: made by a cheap op (elementwise, a
    broadcast, a constant) and read by one op, itself cheap, into whose loop fusion XLA
    folds them (the chain that recomputes a GELU's ``tanh`` is one kernel there, and a
    broadcast cloned per use is folded into its one reader)."""
    made = {r.name: op for op in bwd for r in op.results}
    readers: dict[str, list[Op]] = {}
    for op in bwd:
        for n in set(op.operands):
            readers.setdefault(n, []).append(op)
    out = set()
    for name, op in made.items():
        if name in forward or op.name not in CHEAP or not _is_clone(name):
            continue
        users = readers.get(name, [])
        if len(users) == 1 and users[0].name in CHEAP:
            out.add(name)
    return out


def _is_clone(name: str) -> bool:
    base, sep, k = name.rpartition(".r")
    return bool(sep and base and k.isdigit())


class _Fusing:
    """Sizes with the values :func:`_fused` finds counted as nothing."""

    def __init__(self, sizes: dict[str, int], fused: set[str]) -> None:
        self.sizes, self.fused = sizes, fused

    def __getitem__(self, name: str) -> int:
        return 0 if name in self.fused else self.sizes[name]


class _Sizes(dict):
    """Bytes by value name, a recomputed clone (``%v.r0``) sized as its original."""

    def __missing__(self, name: str) -> int:
        base, sep, k = name.rpartition(".r")
        if not sep or not k.isdigit():
            raise KeyError(name)
        return self[base]


UNBOUNDED = 4096  # where a symbol declares no max, the corner the guard evaluates there
CORNERS = 4       # up to this many symbols, every corner of the ranges; more: two


def corners(module: Module) -> list[dict[str, int]]:
    """Bindings at the corners of the declared ranges: every symbol at its min or its
    max (:data:`UNBOUNDED` where it has none); with more than :data:`CORNERS` symbols,
    all at their min and all at their max."""
    decls = module.shape_graph.decls if module.shape_graph is not None else []
    ends = [(d.min, d.max if d.max is not None else max(d.min, UNBOUNDED)) for d in decls]
    names = [d.name for d in decls]
    if len(decls) > CORNERS:
        return [dict(zip(names, (lo for lo, _ in ends))),
                dict(zip(names, (hi for _, hi in ends)))]
    return [dict(zip(names, pick)) for pick in product(*ends)]


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
        free = [n for n in inputs if n in made and made[n].name in cheap
                and _free(made[n], made, args, kept)]
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


def _free(op: Op, made: dict[str, Op], args: set[str], kept: set[str]) -> bool:
    """Whether recomputing ``op`` holds nothing more: it reads nothing (a constant, an
    iota), or it only spreads (:data:`PER_USE`) values that are there anyway (a graph
    input, a value the backward keeps, a constant): the broadcast of a bias or of a
    scalar that the default re-emits in the backward as well."""
    if not op.operands:
        return True
    return op.name in PER_USE and all(
        n in args or n in kept or (n in made and not made[n].operands) for n in op.operands)


def _rewrite(bwd: list[Op], plan: dict[str, list[Op]], func: Func) -> list[Op]:
    """The backward with each planned value's ops cloned just before its first use there
    (once: later uses read the clone), the uses renamed to the clones. Broadcasts and
    constants (:data:`PER_USE`) are cloned again for each op that reads them, backward
    or recomputed: XLA fuses such an op into a single consumer and never allocates it,
    but keeps one with two consumers apart from them as a buffer of its own (seen in its
    buffer assignment of the Llama step: a [B, H, S, S] broadcast per layer; and of the
    convolutions' step, a zero broadcast read by a recomputed ReLU and its adjoint)."""
    taken = set(func.value_types()) | {a.name for a in func.args}
    env: dict[str, str] = {}
    out: list[Op] = []

    def fresh(name: str) -> str:
        k = 0
        while f"{name}.r{k}" in taken:
            k += 1
        taken.add(f"{name}.r{k}")
        return f"{name}.r{k}"

    def read(name: str, inside: dict[str, Op], per_use: dict[str, str]) -> str:
        """``name`` as the op being emitted reads it (``per_use``: that op's clones of
        broadcasts and constants): a clone, made here if ``name`` is recomputed (a
        planned value, or a value ``inside`` the planned subgraph being emitted), or
        the forward value itself."""
        if name in env or name in per_use:
            return env.get(name) or per_use[name]
        if name in plan and name not in inside:
            inside = {r.name: op for op in plan[name] for r in op.results}
        op = inside.get(name)
        if op is None:
            return name
        mine: dict[str, str] = {}
        operands = [read(n, inside, mine) for n in op.operands]
        result = fresh(op.results[0].name)
        out.append(Op(op.name, operands, [Value(result, op.results[0].type)],
                      dict(op.attrs), loc=op.loc))
        (per_use if op.name in PER_USE else env)[name] = result
        return result

    for op in bwd:
        mine: dict[str, str] = {}
        operands = [read(n, {}, mine) for n in op.operands]
        out.append(Op(op.name, operands, list(op.results), dict(op.attrs), dict(op.regions),
                      op.loc))
    return out
