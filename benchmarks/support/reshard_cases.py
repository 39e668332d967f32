"""The redistribution cases of ``benchmarks/bench_reshard.py`` (issue 34): axis swaps,
moves between dims, moves of part of an axis, the flattened 1-D layout of a 2-D mesh to
and from its 2-D layout, gathers and slices, mixed rank-3 changes, dims of unequal size
whose small dim bounds the intermediate splits, and symbolic (dynamic) dims.

A case is ``(name, kind, mesh, shape, src, dst, dynamic)``: ``shape`` the global f32 shape
at full size; ``dynamic`` the dims the listing leaves symbolic (``?``: the plan must
keep every intermediate split a divisor of what the two ends require, whatever the
binding). bladec's sharded types need every split to divide its dim (as ``shard_map``
does); dims that the mesh does not divide (XLA pads them) are not among the cases.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from bladec.ir import Func, Mesh, Op, TensorType, Value
from bladec.passes.redistribute import Step
from bladec.sharding import splits
from bladec.types import Sharding

X4Y2 = Mesh((("x", 4), ("y", 2)))
X2Y4 = Mesh((("x", 2), ("y", 4)))
X2Y2Z2 = Mesh((("x", 2), ("y", 2), ("z", 2)))
X8 = Mesh((("x", 8),))


class Case(NamedTuple):
    name: str
    kind: str
    mesh: Mesh
    shape: tuple[int, ...]
    src: Sharding
    dst: Sharding
    dynamic: tuple[int, ...] = ()


def _s(*dims: str | tuple[str, ...] | None) -> Sharding:
    return tuple(() if d is None else (d,) if isinstance(d, str) else tuple(d) for d in dims)


M2 = (512, 512)          # 1 MiB of f32
M3 = (64, 64, 64)        # 1 MiB
L3 = (128, 128, 128)     # 8 MiB

CASES: list[Case] = [
    # axis swaps
    Case("swap 4x2", "swap", X4Y2, M2, _s("x", "y"), _s("y", "x")),
    Case("swap 2x4", "swap", X2Y4, M2, _s("x", "y"), _s("y", "x")),
    Case("swap 4x2 rank 3", "swap", X4Y2, M3, _s("x", "y", None), _s("y", "x", None)),
    Case("swap 4x2 rank 3, 8 MiB", "swap", X4Y2, L3, _s(None, "x", "y"), _s(None, "y", "x")),
    Case("swap in one dim", "swap", X4Y2, M2, _s(("x", "y"), None), _s(("y", "x"), None)),
    Case("swap 2x2x2", "swap", X2Y2Z2, M3, _s("x", "y", "z"), _s("z", "y", "x")),
    Case("swap 2x2x2 two axes", "swap", X2Y2Z2, M3, _s("x", "y", None), _s("y", "x", None)),
    # moves between dims
    Case("move x 0->1", "move", X4Y2, M2, _s("x", None), _s(None, "x")),
    Case("move x 1->0", "move", X4Y2, M2, _s(None, "x"), _s("x", None)),
    Case("move (x,y) 0->1", "move", X4Y2, M2, _s(("x", "y"), None), _s(None, ("x", "y"))),
    Case("move x 0->2 rank 3", "move", X2Y2Z2, M3, _s("x", None, None), _s(None, None, "x")),
    Case("move 1-D mesh", "move", X8, M2, _s("x", None), _s(None, "x")),
    Case("move 1-D mesh rank 3, 8 MiB", "move", X8, L3, _s("x", None, None),
         _s(None, None, "x")),
    Case("move x rank 3", "move", X4Y2, M3, _s("x", "y", None), _s(None, "y", "x")),
    # part of an axis moves (plans over sub-axes)
    Case("sub-axis {x,_}->{y,x}", "sub-axis", X4Y2, M2, _s("x", None), _s("y", "x")),
    Case("sub-axis {y,x}->{x,_}", "sub-axis", X4Y2, M2, _s("y", "x"), _s("x", None)),
    Case("sub-axis {x,_,y}->{y,_,x}", "sub-axis", X4Y2, M3, _s("x", None, "y"),
         _s("y", None, "x")),
    Case("sub-axis {_,x,y}->{_,_,x}", "sub-axis", X4Y2, M3, _s(None, "x", "y"),
         _s(None, None, "x")),
    Case("sub-axis 2x4 {x,_}->{y,x}", "sub-axis", X2Y4, M2, _s("y", None), _s("x", "y")),
    # the flattened (1-D) layout of a 2-D mesh to and from its 2-D layout
    Case("1-D to 2-D", "1-D/2-D", X4Y2, M2, _s(("x", "y"), None), _s("x", "y")),
    Case("2-D to 1-D", "1-D/2-D", X4Y2, M2, _s("x", "y"), _s(("x", "y"), None)),
    Case("1-D to 2-D transposed", "1-D/2-D", X4Y2, M2, _s(None, ("x", "y")), _s("y", "x")),
    Case("1-D to 2-D 2x2x2", "1-D/2-D", X2Y2Z2, M3, _s(("x", "y", "z"), None, None),
         _s("x", ("y", "z"), None)),
    Case("1-D to 2-D 2x4", "1-D/2-D", X2Y4, M2, _s(("x", "y"), None), _s("y", "x")),
    # gathers and slices
    Case("gather all", "gather", X4Y2, M2, _s("x", "y"), _s(None, None)),
    Case("gather part", "gather", X2Y2Z2, M3, _s(("x", "y"), "z", None), _s(None, "z", None)),
    Case("slice all", "gather", X4Y2, M2, _s(None, None), _s("y", "x")),
    # mixed rank-3 changes (XLA replicates some: DESIGN section 12's example first)
    Case("mixed {y,_,x}->{_,(x,y),_}", "mixed", X4Y2, M3, _s("y", None, "x"),
         _s(None, ("x", "y"), None)),
    Case("mixed 8 MiB", "mixed", X4Y2, L3, _s("y", None, "x"), _s(None, ("x", "y"), None)),
    Case("mixed {x,y,z}->{z,x,y}", "mixed", X2Y2Z2, M3, _s("x", "y", "z"), _s("z", "x", "y")),
    Case("mixed {x,_,y}->{y,x,_}", "mixed", X4Y2, M3, _s("x", None, "y"), _s("y", "x", None)),
    Case("mixed {(x,y),z,_}->{_,x,(z,y)}", "mixed", X2Y2Z2, M3, _s(("x", "y"), "z", None),
         _s(None, "x", ("z", "y"))),
    # unequal dims: the small dim bounds the intermediate splits
    Case("swap 8x32768", "unequal", X4Y2, (8, 32768), _s("x", "y"), _s("y", "x")),
    Case("move 4x65536", "unequal", X4Y2, (4, 65536), _s("x", None), _s(None, "x")),
    Case("mixed 2x128x1024", "unequal", X2Y2Z2, (2, 128, 1024), _s("x", "y", "z"),
         _s(None, "z", ("x", "y"))),
    # symbolic dims (a dynamic batch)
    Case("dynamic swap", "dynamic", X4Y2, M2, _s("x", "y"), _s("y", "x"), (0,)),
    Case("dynamic move", "dynamic", X4Y2, M2, _s("x", None), _s(None, "x"), (0,)),
    Case("dynamic mixed", "dynamic", X2Y2Z2, M3, _s("x", "y", "z"), _s("z", "x", "y"), (0,)),
    Case("dynamic 1-D to 2-D", "dynamic", X4Y2, M2, _s(("x", "y"), None), _s("x", "y"),
         (0, 1)),
]


def small(case: Case) -> tuple[int, ...]:
    """A small shape of the case (``make test``): each dim the least multiple of what
    both ends split it into, times 2, within the full dim."""
    return tuple(min(n, 2 * math.lcm(a, b)) for n, a, b in zip(
        case.shape, splits(case.mesh, case.src), splits(case.mesh, case.dst)))


def typed(case: Case, shape: tuple[int, ...], sharding: Sharding) -> TensorType:
    dims = tuple(None if i in case.dynamic else n for i, n in enumerate(shape))
    binds = tuple(f"S{i}" if i in case.dynamic else f"C{n}" for i, n in enumerate(shape))
    return TensorType(dims, "f32", binds, sharding)


def reshard_func(case: Case, shape: tuple[int, ...]) -> Func:
    """The listing of the case: one reshard (bladec's plan, sub-axes allowed)."""
    t0, t1 = typed(case, shape, case.src), typed(case, shape, case.dst)
    return Func("main", [Value("%a", t0)], [Op("reshard", ["%a"], [Value("%b", t1)])], ["%b"])


def steps_func(case: Case, shape: tuple[int, ...], steps: list[Step]) -> Func:
    """The listing of given collectives over the listing's mesh (whole axes): what the
    plan without sub-axes writes, held against the plan with them."""
    ops, prev = [], "%a"
    for i, step in enumerate(steps):
        name = "%b" if i == len(steps) - 1 else f"%t{i}"
        ops.append(Op(step.op, [prev], [Value(name, typed(case, shape, step.sharding))],
                      dict(step.attrs)))
        prev = name
    return Func("main", [Value("%a", typed(case, shape, case.src))], ops, [prev])
