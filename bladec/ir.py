"""The typed IR of a listing: Module, Func, Op, Value, TensorType, and the shape graph.

Values are referred to by name (``"%3"``) from operands, because listings are SSA and a
name is what a user sees; a function's defining ops are found through
:meth:`Func.producers`. Source locations are kept for diagnostics but never take part
in equality, so ``parse(print(ir)) == ir`` compares meaning, not layout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

DTYPE_BYTES: dict[str, int] = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2,
    "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u32": 4, "u8": 1, "i1": 1,
}
DEFAULT_DTYPE = "f32"
FLOAT_DTYPES = frozenset({"f64", "f32", "f16", "bf16"})
# The values each integer element type holds (i1 is a truth value: 0 or 1).
INT_RANGES: dict[str, tuple[int, int]] = {
    "i64": (-2 ** 63, 2 ** 63 - 1), "i32": (-2 ** 31, 2 ** 31 - 1),
    "i16": (-2 ** 15, 2 ** 15 - 1), "i8": (-2 ** 7, 2 ** 7 - 1), "u32": (0, 2 ** 32 - 1),
    "u8": (0, 255), "i1": (0, 1),
}
SHAPE_GRAPH = "symbolic_shape_graph"  # the function that holds SymbolicDim and relations


@dataclass(frozen=True)
class Loc:
    """A position in a source file (1-based line and column)."""
    file: str = "<input>"
    line: int = 1
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Loc("<generated>", 0, 0)


@dataclass(frozen=True)
class SymRef:
    """An ``@name`` reference used as an attribute value."""
    name: str

    def __str__(self) -> str:
        return "@" + self.name


Attr = Union[int, float, str, bool, SymRef, tuple]


@dataclass(frozen=True)
class TensorType:
    """``tensor<DIMSxDTYPE, [@B0, @B1, ...]>``.

    ``dims`` holds an int per static dim and None per ``?``. ``binds`` is None when the
    listing gave no bracket list, else one name per dim: ``S0`` (a symbol) or ``C12``
    (a constant, whose dim must be 12).
    """
    dims: tuple[int | None, ...]
    dtype: str = DEFAULT_DTYPE
    binds: tuple[str, ...] | None = None
    # Over the module's mesh (``{y, _, (x, z)}``): per dim, the mesh axes that split it,
    # major first; None for an unsharded type (replicated on every device of a mesh).
    # ``dims`` are always the global dims; bladec/sharding.py gives the local ones.
    sharding: tuple[tuple[str, ...], ...] | None = None
    # Mesh axes over which each device holds a partial sum (``{x, _, +y}``): the value is
    # the sum of the blocks of the devices along them, until an ``all_reduce``.
    partial: tuple[str, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    def with_binds(self, binds: tuple[str, ...] | None) -> "TensorType":
        return TensorType(self.dims, self.dtype, binds, self.sharding, self.partial)

    def with_sharding(self, sharding: tuple[tuple[str, ...], ...] | None,
                      partial: tuple[str, ...] = ()) -> "TensorType":
        return TensorType(self.dims, self.dtype, self.binds, sharding, partial)


@dataclass(frozen=True)
class Value:
    name: str
    type: TensorType
    donated: bool = False  # a function argument the caller gives up: freed at its last use


@dataclass
class Op:
    """One operation: ``%r0, %r1 = name(%a, %b) {attrs} -> types region {...}``."""
    name: str
    operands: list[str]
    results: list[Value]
    attrs: dict[str, Attr] = field(default_factory=dict)
    regions: dict[str, list["Op"]] = field(default_factory=dict)
    loc: Loc = field(default=NOWHERE, compare=False)
    operand_locs: list[Loc] = field(default_factory=list, compare=False, repr=False)

    def operand_loc(self, i: int) -> Loc:
        return self.operand_locs[i] if i < len(self.operand_locs) else self.loc

    @property
    def result_names(self) -> list[str]:
        return [r.name for r in self.results]


@dataclass
class SymbolDecl:
    """``SymbolicDim @S0 {min = 1, max = 4096}``."""
    name: str
    min: int = 1
    max: int | None = None
    loc: Loc = field(default=NOWHERE, compare=False)


@dataclass
class Relation:
    """``@S0 = Mul @C12, @S1`` (kind ``Mul`` or ``Add`` over symbols and constants; or
    ``FloorDiv``, ``CeilDiv``, ``Mod`` of two, ``Min``, ``Max`` of two or more)."""
    lhs: str
    kind: str
    args: list[str]
    loc: Loc = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"@{self.lhs} = {self.kind} " + ", ".join("@" + a for a in self.args)


@dataclass
class ShapeGraph:
    """The ``func.func @symbolic_shape_graph()`` of a listing."""
    decls: list[SymbolDecl] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    loc: Loc = field(default=NOWHERE, compare=False)


@dataclass
class Func:
    name: str
    args: list[Value]
    ops: list[Op]
    returns: list[str] | None = None
    loc: Loc = field(default=NOWHERE, compare=False)
    return_loc: Loc = field(default=NOWHERE, compare=False)

    def producers(self) -> dict[str, Op]:
        """Map from each value name defined by a top-level op to that op."""
        return {r.name: op for op in self.ops for r in op.results}

    def value_types(self) -> dict[str, TensorType]:
        """Every value's type: arguments, results, and the values regions define (a
        loop's body; a recompute region redefines a value with its own type), so that a
        pass naming a new value avoids them all."""
        types = {a.name: a.type for a in self.args}
        for op in walk(self.ops):
            for r in op.results:
                types[r.name] = r.type
        return types

    def outputs(self) -> list[str]:
        """The returned values, or, without ``return``, the op results nobody uses."""
        if self.returns is not None:
            return list(self.returns)
        used = {name for op in walk(self.ops) for name in op.operands}
        return [r.name for op in self.ops for r in op.results if r.name not in used]


@dataclass(frozen=True)
class Mesh:
    """``mesh {x = 4, y = 2}``: named device axes with sizes, major first (the devices
    are numbered row-major over the axes, as ``jax.make_mesh`` lays them out)."""
    axes: tuple[tuple[str, int], ...]
    loc: Loc = field(default=NOWHERE, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.axes)

    def size(self, axis: str) -> int:
        return dict(self.axes)[axis]

    @property
    def devices(self) -> int:
        out = 1
        for _, n in self.axes:
            out *= n
        return out


@dataclass
class Module:
    funcs: list[Func] = field(default_factory=list)
    shape_graph: ShapeGraph | None = None
    file: str = field(default="<input>", compare=False)
    mesh: Mesh | None = None  # the devices that sharded types split over (DESIGN section 12)

    @property
    def main(self) -> Func:
        """The function the passes work on: ``@main``, else the only one (verify.py
        refuses a listing of several functions with none named ``@main``)."""
        for f in self.funcs:
            if f.name == "main":
                return f
        return self.funcs[0]


def fresh_name(name: str, taken: set[str], sep: str = "_") -> str:
    """``name``, else ``name{sep}1``, ``name{sep}2``, ...: the first not in ``taken``, which
    it then joins (passes that add values, and the importer, name them this way)."""
    out, n = name, 0
    while out in taken:
        n += 1
        out = f"{name}{sep}{n}"
    taken.add(out)
    return out


def walk(ops: list[Op]) -> Iterator[Op]:
    """Every op in ``ops`` and, depth first, in their regions."""
    stack = list(reversed(ops))
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(list(op.regions.values())):
            stack.extend(reversed(region))
