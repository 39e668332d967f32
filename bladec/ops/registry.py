"""The op registry itself: OpDef, the shape-rule context and ``register``; the op
families (the other modules of this folder) register into it, and ``bladec.ops``
imports them all."""
from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from bladec.adjoint import Adjoint
from bladec.errors import BladecError
from bladec.ir import DTYPE_BYTES, Attr, Op, SymRef, TensorType
from bladec.symbolic.expr import SymbolicExpr, product
from bladec.types import MAX_DIM

Dims = list[SymbolicExpr]
# A result as the rule sees it: its dims (None: whatever the declared type says) and
# its dtype (None: whatever the declared type says).
RuleResult = tuple[list[SymbolicExpr] | None, str | None]
# An op's FLOPs once every shape is known: (op, value -> concrete shape) -> count.
FlopRule = Callable[[Op, dict[str, tuple[int, ...]]], int]

VARIADIC = -1  # an op's result count that its shape rule checks (``scan``)
ATTR_KINDS = ("int", "ints", "float", "number", "str", "bool", "symrefs")


class RelationSink(Protocol):
    """Where a shape rule's equalities go (the verifier checks, the analysis solves)."""

    def equal(self, a: SymbolicExpr, b: SymbolicExpr, op: Op, what: str) -> None: ...

    def at_least(self, a: SymbolicExpr, bound: int, op: Op, what: str) -> None: ...


@dataclass
class ShapeCtx:
    """What a shape rule may look at: the op, operand dims and dtypes, declared results."""
    op: Op
    operands: list[Dims]
    dtypes: list[str]
    declared: list[TensorType]
    declared_dims: list[Dims]
    sink: RelationSink
    # Dims of the values the op's regions define, by name (a loop's rule relates its
    # body's arguments and yielded values to its operands and results); empty otherwise.
    values: dict[str, Dims] = field(default_factory=dict)

    def attr(self, name: str, default: Attr | None = None) -> Attr | None:
        return self.op.attrs.get(name, default)

    def ints(self, name: str, default: Sequence[int] | None = None) -> list[int]:
        value = self.op.attrs.get(name, default)
        return list(value) if value is not None else []

    def equal(self, a: SymbolicExpr | int, b: SymbolicExpr | int, what: str) -> None:
        self.sink.equal(SymbolicExpr.lift(a), SymbolicExpr.lift(b), self.op, what)

    def at_least(self, a: SymbolicExpr, bound: int, what: str) -> None:
        self.sink.at_least(a, bound, self.op, what)

    def quotient(self, kind: str, a: SymbolicExpr, b: SymbolicExpr | int
                 ) -> SymbolicExpr | None:
        """``kind(a, b)`` (``FloorDiv``, ``Min``, ...: symbolic/atoms.py) where the sink
        can name quotient and bound dims (the shape analysis), else None."""
        make = getattr(self.sink, "atom", None)
        return None if make is None else make(kind, a, SymbolicExpr.lift(b), self.op)

    def fail(self, message: str) -> BladecError:
        return BladecError(f"'{self.op.name}': {message}", self.op.loc)

    def axis(self, value: int, rank: int, what: str = "dimension") -> int:
        """A dimension index checked against ``rank`` (negative counts from the end)."""
        if not -rank <= value < rank:
            raise self.fail(f"{what} {value} out of range for rank {rank}")
        return value % rank


@dataclass(frozen=True)
class OpDef:
    name: str
    doc: str
    rule: Callable[[ShapeCtx], list[RuleResult]]
    min_operands: int = 1
    max_operands: int | None = 1
    num_results: int | None = 1  # None: one result per operand (``sort``); VARIADIC: any
    attrs: dict[str, str] = field(default_factory=dict)  # name -> kind, see ATTR_KINDS
    required: frozenset[str] = frozenset()
    recomputable: bool = True  # False for ops whose result can not be produced twice
    # What running needs beyond the shape rule: Listing 1 states a broadcast that can
    # not run, and `optimize` must still take it, so only `run` applies these checks.
    run_rule: Callable[[ShapeCtx], None] | None = None
    # FLOPs for the remat cost model where one per element of the larger side (the
    # default of ``bladec.runtime.planning.planner.flops_of``) is far off: ``dim_size`` reads no
    # element, a window reduction reads each element once per window it falls in.
    flops: FlopRule | None = None
    # Reverse mode (the ``grad`` pass): operand cotangents from result cotangents, written
    # with the builder of bladec/adjoint.py; None: the op has no adjoint (an error where
    # a gradient must flow through it).
    adjoint: Adjoint | None = None
    # A cheap expanding op: its result repeats its operands' elements or is a function of
    # the index alone (broadcast, splat constant, iota), so XLA fuses it into the op that
    # reads it. Where the JAX backend holds the listing's order, such an op is made again
    # inside each reader's part of the executable (its small operands pass the barrier,
    # not its result: backends/backend.py ``interpret``), and the planner sizes its
    # result by its operands (``expanded_sizes``).
    expanding: bool = False
    # An elementwise op (the result's element i from the operands' elements i alone):
    # made inside its readers as the expanding ops are where every operand is made from
    # nothing (``remade``: the causal mask, a compare of two iotas, is then never held).
    elementwise: bool = False

    def check_signature(self, op: Op) -> None:
        """Arity, result count and attribute presence/kinds: everything not about shapes."""
        n = len(op.operands)
        hi = self.max_operands
        if n < self.min_operands or (hi is not None and n > hi):
            want = (f"{self.min_operands}" if hi == self.min_operands else
                    f"at least {self.min_operands}" if hi is None else
                    f"{self.min_operands} to {hi}")
            raise BladecError(f"'{op.name}' takes {want} operand(s), got {n}", op.loc)
        want_results = n if self.num_results is None else self.num_results
        if want_results != VARIADIC and len(op.results) != want_results:
            raise BladecError(f"'{op.name}' defines {want_results} result(s), "
                              f"got {len(op.results)}", op.loc)
        for name in sorted(self.required - op.attrs.keys()):
            raise BladecError(f"'{op.name}' needs attribute '{name}'", op.loc)
        for name, value in op.attrs.items():
            kind = self.attrs.get(name)
            if kind is None:
                known = ", ".join(sorted(self.attrs)) or "none"
                raise BladecError(f"'{op.name}' has no attribute '{name}' (known: {known})", op.loc)
            if not _attr_is(value, kind):
                raise BladecError(f"'{op.name}' attribute '{name}' must be {_KIND_TEXT[kind]}, "
                                  f"got {value!r}", op.loc)
            # every list of integers is of dims, positions, sizes or steps along dims
            huge = next((v for v in value if abs(v) > MAX_DIM), None) if kind == "ints" \
                else None
            if huge is not None:
                raise BladecError(f"'{op.name}' attribute '{name}': {huge} is beyond the "
                                  f"dimension limit ({MAX_DIM})", op.loc)
        if "dtype" in op.attrs and op.attrs["dtype"] not in DTYPE_BYTES:
            raise BladecError(f"'{op.name}': unknown dtype '{op.attrs['dtype']}'", op.loc)


_KIND_TEXT = {"int": "an integer", "ints": "a list of integers", "float": "a number",
              "number": "a number", "str": "a string", "bool": "true or false",
              "symrefs": "a list of @names"}


def _attr_is(value: Attr, kind: str) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if kind == "int":
        return is_int
    if kind == "ints":
        return isinstance(value, tuple) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)
    if kind in ("float", "number"):
        return is_int or isinstance(value, float)
    if kind == "str":
        return isinstance(value, str)
    if kind == "symrefs":
        return isinstance(value, tuple) and all(isinstance(v, SymRef) for v in value)
    return isinstance(value, bool)


REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in REGISTRY:
        raise ValueError(f"op {opdef.name} registered twice")
    REGISTRY[opdef.name] = opdef
    return opdef


def lookup(op: Op) -> OpDef:
    try:
        return REGISTRY[op.name]
    except KeyError:
        raise BladecError(f"unknown op '{op.name}'", op.loc) from None


def apply_rule(opdef: OpDef, ctx: ShapeCtx) -> None:
    """Run an op's shape rule and hold its results against the declared result types."""
    results = opdef.rule(ctx)
    for i, (dims, dtype) in enumerate(results):
        declared = ctx.declared[i]
        name = ctx.op.results[i].name
        if dtype is not None and dtype != declared.dtype:
            raise ctx.fail(f"result {name} must have element type {dtype}, "
                           f"declared {declared.dtype}")
        if dims is None:
            continue
        if len(dims) != declared.rank:
            raise ctx.fail(f"result {name} must have rank {len(dims)}, declared {declared.rank}")
        for j, (want, have) in enumerate(zip(dims, ctx.declared_dims[i])):
            ctx.equal(have, want, f"dim {j} of {name}")


def remade(ops: Iterable[Op], keep: Container[str] = ()) -> dict[str, Op]:
    """Result name -> op, in order, for the ops that a backend fusing them into their
    readers makes again inside each reader (JaxBackend.enforce_order; backends/backend.py
    ``interpret``, planning/segments.py): the cheap expanding ops (``OpDef.expanding``),
    and the elementwise ops whose operands are all made from nothing (a splat constant,
    an iota, or such an op of them: the causal mask). Not a loop, an op of several
    results, nor one whose result is in ``keep`` (what the caller must return as an
    array). One rule for the planner's model (analysis/memory.py ``expanded_sizes``),
    the cut plan and the executable, so that what the model sizes by its operands is
    never an array on the device.

    A broadcast of a scalar counts as made from nothing: exact padding's masks compare
    an iota with the broadcast true size (a scalar input), and made as arrays they held
    [B,H,S,S] booleans and their selects' operands in every segment that read them.
    An elementwise op of at most one dim is held all the same (made once): its bytes are
    one dim's, and made again it is a chain of ops behind every reader's barrier, which
    XLA can neither merge nor fuse (exact padding's rank-1 masks, broadcast in their
    readers)."""
    ops = list(ops)
    defined = {r for op in ops for r in op.result_names}
    out: dict[str, Op] = {}
    nothing: set[str] = set()   # of those, the ones made from no value (or a scalar)
    for op in ops:
        if op.regions or len(op.result_names) != 1 or op.result_names[0] in keep:
            continue
        opdef = REGISTRY.get(op.name)
        if opdef is None:
            continue
        expanding = opdef.expanding
        from_nothing = all(n in nothing for n in op.operands) or _of_scalar(op)
        if op.name == "broadcast_like":
            # a broadcast whose other operands lend only their shape: made in its readers
            # where those are not values the ops make (an input's shape: reading a made
            # value would hold it to the last reader)
            expanding = not any(n in defined for n in op.operands[1:])
            from_nothing = expanding and (op.operands[0] in nothing or _of_scalar(op))
        if expanding or (opdef.elementwise and op.operands and from_nothing
                         and op.results[0].type.rank > 1):
            out[op.result_names[0]] = op
            if from_nothing:
                nothing.add(op.result_names[0])
    return out


def _of_scalar(op: Op) -> bool:
    """A broadcast of a rank-0 operand (no dims of it to map)."""
    return op.name in ("broadcast_in_dim", "broadcast_like") and bool(op.operands) \
        and list(op.attrs.get("dims", [None])) == []


def numel(dims: Dims) -> SymbolicExpr:
    return product(dims)

