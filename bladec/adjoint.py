"""What an op's adjoint rule writes with: a builder of backward ops over typed values.

Reverse mode (the ``grad`` pass, bladec/passes/grad.py) asks each op of the registry for
the cotangents of its operands given the cotangents of its results. The rule sits next to
the op's shape rule (``OpDef.adjoint``) and is small because it speaks through this
builder: each method emits one op of the listing language with a fresh result name and
a result type built from the types already there, so the backward ops are ordinary
listing ops, every dynamic dim stays symbolic and the analysis derives the relations of
the new values as it does for any listing.

A type is built dim by dim from existing types; a dim keeps its bound symbol (``@S3``)
where the source type has one, and a static dim its constant (``@C64``). Where a dynamic
dim has no bound symbol the new type has no bracket list, and the analysis gives its
``?`` dims fresh symbols that the op's shape rule then relates.
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

from bladec.errors import BladecError
from bladec.ir import FLOAT_DTYPES, Attr, Loc, Op, TensorType, Value

Dim = tuple[Optional[int], Optional[str]]  # (static size or None, bound symbol or None)


def dims_of(t: TensorType) -> list[Dim]:
    """Each dim of ``t`` with its binding (a static dim is bound to its constant)."""
    binds = t.binds or (None,) * t.rank
    return [(d, b if b is not None else (f"C{d}" if d is not None else None))
            for d, b in zip(t.dims, binds)]


def make_type(dims: Sequence[Dim], dtype: str) -> TensorType:
    """A type from (size, binding) pairs: bound where every dim has a binding."""
    binds = tuple(b for _, b in dims)
    full = all(b is not None for b in binds) and binds
    return TensorType(tuple(d for d, _ in dims), dtype, binds if full else None)  # type: ignore


class Builder:
    """Emits backward ops into ``ops``: fresh names (``%b0``, ``%b1``, ...), never one in
    ``taken``; every op gets ``loc``, the forward op it differentiates, so that a
    diagnostic about a backward op names the forward op it came from."""

    def __init__(self, types: dict[str, TensorType], taken: set[str]) -> None:
        self.types = types
        self.taken = taken
        self.ops: list[Op] = []
        self.loc = Loc()
        self._next = 0

    def fresh(self, hint: str = "b") -> str:
        while True:
            name = f"%{hint}{self._next}"
            self._next += 1
            if name not in self.taken:
                self.taken.add(name)
                return name

    def type(self, name: str) -> TensorType:
        return self.types[name]

    def emit(self, opname: str, operands: Sequence[str], type: TensorType,
             attrs: dict[str, Attr] | None = None, result: str | None = None) -> str:
        name = result or self.fresh()
        self.taken.add(name)
        self.types[name] = type
        self.ops.append(Op(opname, list(operands), [Value(name, type)], dict(attrs or {}),
                           loc=self.loc))
        return name

    def emit_results(self, opname: str, operands: Sequence[str], types: Sequence[TensorType],
                     attrs: dict[str, Attr] | None = None) -> list[str]:
        """An op with several results (``sort``): one fresh name per type, in order."""
        names = [self.fresh() for _ in types]
        self.types.update(zip(names, types))
        self.ops.append(Op(opname, list(operands), [Value(n, t) for n, t in zip(names, types)],
                           dict(attrs or {}), loc=self.loc))
        return names

    def fail(self, op: Op, why: str) -> BladecError:
        return BladecError(f"'{op.name}': {why}", op.loc)

    # -- one op each; the result type follows from the operands' ---------------------

    def unary(self, opname: str, x: str) -> str:
        return self.emit(opname, [x], self.type(x))

    def binary(self, opname: str, a: str, b: str) -> str:
        return self.emit(opname, [a, b], self.type(a))

    def add(self, a: str, b: str) -> str:
        return self.binary("add", a, b)

    def sub(self, a: str, b: str) -> str:
        return self.binary("sub", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.binary("mul", a, b)

    def div(self, a: str, b: str) -> str:
        return self.binary("div", a, b)

    def neg(self, a: str) -> str:
        return self.unary("neg", a)

    def const(self, value: float | int, like: str | TensorType, dtype: str | None = None) -> str:
        """``value`` filling the shape of ``like`` (a value or a type)."""
        t = like if isinstance(like, TensorType) else self.type(like)
        if dtype is not None:
            t = TensorType(t.dims, dtype, t.binds)
        return self.emit("constant", [], t, {"value": value})

    def scale(self, x: str, factor: float | int) -> str:
        """``x * factor`` with the factor as a constant of x's shape (exactly x for 1)."""
        return x if factor == 1 else self.mul(x, self.const(float(factor), x))

    def compare(self, a: str, b: str, direction: str) -> str:
        t = self.type(a)
        return self.emit("compare", [a, b], TensorType(t.dims, "i1", t.binds),
                         {"direction": direction})

    def select(self, pred: str, a: str, b: str) -> str:
        return self.emit("select", [pred, a, b], self.type(a))

    def convert(self, x: str, dtype: str) -> str:
        t = self.type(x)
        if t.dtype == dtype:
            return x
        return self.emit("convert", [x], TensorType(t.dims, dtype, t.binds), {"dtype": dtype})

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        perm = list(perm)
        if perm == sorted(perm):
            return x
        dims = dims_of(self.type(x))
        return self.emit("transpose", [x], make_type([dims[p] for p in perm],
                                                     self.type(x).dtype), {"perm": tuple(perm)})

    def reshape(self, x: str, type: TensorType) -> str:
        if self.type(x).dims == type.dims and None not in type.dims:
            return x
        return self.emit("reshape", [x], type)

    def reduce_sum(self, x: str, axes: Sequence[int]) -> str:
        axes = sorted(set(axes))
        if not axes:
            return x
        t = self.type(x)
        kept = [d for i, d in enumerate(dims_of(t)) if i not in axes]
        return self.emit("reduce", [x], make_type(kept, t.dtype),
                         {"dims": tuple(axes), "kind": "sum"})

    def reduce_max(self, x: str) -> str:
        """The largest element of ``x`` (a scalar; ``x`` itself if it is one)."""
        t = self.type(x)
        if not t.rank:
            return x
        return self.emit("reduce", [x], TensorType((), t.dtype),
                         {"dims": tuple(range(t.rank)), "kind": "max"})

    def broadcast(self, x: str, dims: Sequence[int], type: TensorType) -> str:
        """``broadcast_in_dim``: operand dim i becomes dim ``dims[i]`` of ``type``."""
        if list(dims) == list(range(type.rank)) and self.type(x).dims == type.dims \
                and None not in type.dims:
            return x
        return self.emit("broadcast_in_dim", [x], type, {"dims": tuple(dims)})

    def dot_general(self, a: str, b: str, lb: Sequence[int], rb: Sequence[int],
                    lc: Sequence[int], rc: Sequence[int], dtype: str | None = None) -> str:
        """``dtype``: the result's (the sums'), by default the operands'."""
        da, db = dims_of(self.type(a)), dims_of(self.type(b))
        free_a = [d for i, d in enumerate(da) if i not in lb and i not in lc]
        free_b = [d for j, d in enumerate(db) if j not in rb and j not in rc]
        out = make_type([da[i] for i in lb] + free_a + free_b, dtype or self.type(a).dtype)
        return self.emit("dot_general", [a, b], out, {
            "lhs_batch": tuple(lb), "rhs_batch": tuple(rb),
            "lhs_contract": tuple(lc), "rhs_contract": tuple(rc)})

    def unbroadcast(self, g: str, operand: str, dims: Sequence[int]) -> str:
        """The cotangent of ``broadcast_in_dim(operand) {dims}`` from the result's ``g``:
        the sum over every result dim the operand does not supply, and over each operand
        dim of size 1 that was expanded; then in the operand's dim order and shape."""
        src = self.type(operand)
        rank = self.type(g).rank
        dims = [d % rank for d in dims]
        ones = {i for i, d in enumerate(src.dims) if d == 1}
        summed = [k for k in range(rank) if k not in dims] + [dims[i] for i in ones]
        out = self.reduce_sum(g, summed)
        kept = sorted((dims[i], i) for i in range(len(dims)) if i not in ones)
        # ``out`` holds the kept operand dims in result order; put them in operand order
        order = [i for _, i in kept]
        out = self.transpose(out, [order.index(i) for i in sorted(order)])
        if ones:
            out = self.reshape(out, src)
        return out


# An adjoint rule: the builder, the forward op, and one cotangent per result (None: the
# result does not reach the loss) give one cotangent per operand (None: no gradient:
# an integer operand, a shape operand, or zero).
Adjoint = Callable[[Builder, Op, list[Optional[str]]], list[Optional[str]]]


def backprop(b: Builder, ops: Sequence[Op], cots: dict[str, list[str]], active: set[str],
             adjoint_of: Callable[[Op], Optional[Adjoint]], what: str) -> None:
    """Reverse mode over ``ops`` (in program order): from the cotangents in ``cots``
    (value -> its parts, summed when read), each op whose results have one and whose
    operands include an ``active`` value (one that can carry a gradient) adds its
    operands' cotangents, written by its adjoint rule (``adjoint_of``: the registry's).
    An op a gradient must pass through without a rule is an error located at it;
    ``what`` names the gradient in it. The grad pass runs this over a function, the
    ``scan`` adjoint over a loop's body."""
    for op in reversed(ops):
        if not any(r.name in cots for r in op.results):
            continue
        if not any(n in active for n in op.operands):
            continue
        rule = adjoint_of(op)
        if rule is None:
            raise BladecError(f"'{op.name}' has no adjoint rule, and the gradient of {what} "
                              f"must pass through it", op.loc)
        b.loc = op.loc
        got = rule(b, op, [total(b, cots, r.name) for r in op.results])
        for name, cot in zip(op.operands, got):
            if cot is not None and name in active:
                cots.setdefault(name, []).append(cot)


def total(b: Builder, cots: dict[str, list[str]], name: str) -> Optional[str]:
    """The cotangent of ``name``: its parts summed (None where it has none)."""
    parts = cots.get(name)
    if not parts:
        return None
    while len(parts) > 1:
        parts[:2] = [b.add(parts[0], parts[1])]
    return parts[0]


def depends_on(ops: Sequence[Op], sources: set[str]) -> set[str]:
    """The float values of ``ops`` that depend on ``sources``: where cotangents can flow."""
    active = set(sources)
    for op in ops:
        if any(n in active for n in op.operands):
            active.update(r.name for r in op.results if r.type.dtype in FLOAT_DTYPES)
    return active


def needed_ops(ops: list[Op], outputs: Iterable[str]) -> list[Op]:
    """The ops of ``ops`` that ``outputs`` depend on, in order (a reverse walk): the
    backward ops a gradient needs, the replayed ops a loop's adjoint keeps."""
    need, kept = set(outputs), []
    for op in reversed(ops):
        if any(r.name in need for r in op.results):
            kept.append(op)
            need.update(op.operands)
    return kept[::-1]
