"""Sharded types over a device mesh: local sizes, type rules, and which device holds what.

A sharded type (DESIGN section 12) splits each dim over an ordered list of mesh axes,
major first, the way ``jax.sharding.PartitionSpec`` does: dim ``d`` with axes ``(x, y)``
is cut into ``|x|*|y|`` blocks and the device at mesh coordinates ``(i, j)`` holds block
``i*|y| + j``. Axes no dim uses replicate the array. Every op of a sharded listing runs
on the local blocks (``jax.shard_map``); bladec/ops/collective.py says which ops may
see split values and how the collectives change the split.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

from bladec.errors import BladecError
from bladec.ir import Loc, Mesh, Module, Op, TensorType, Value
from bladec.types import Sharding, format_sharding


def spec(t: TensorType) -> Sharding:
    """The sharding of ``t``, with an unsharded type as its all-replicated sharding."""
    return t.sharding if t.sharding is not None else ((),) * t.rank


def splits(mesh: Mesh, sharding: Sharding) -> list[int]:
    """Per dim, how many blocks it is cut into."""
    return [math.prod(mesh.size(a) for a in axes) for axes in sharding]


def ways(mesh: Mesh, sharding: Sharding) -> int:
    """How many distinct blocks the devices hold: the global size over the local size."""
    return math.prod(splits(mesh, sharding))


def local_shape(mesh: Mesh | None, t: TensorType, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The block a device holds of a value of global ``shape`` (divisibility checked)."""
    if mesh is None or t.sharding is None:
        return tuple(shape)
    return tuple(n // k for n, k in zip(shape, splits(mesh, t.sharding)))


def check_type(mesh: Mesh | None, t: TensorType, what: str, loc: Loc) -> None:
    """Axes exist (each once, checked by the parser), static dims divide evenly."""
    if t.sharding is None:
        return
    for a in t.partial:
        if mesh is not None and a not in mesh.names:
            raise BladecError(f"{what}: mesh axis '{a}' is not in the mesh "
                              f"({', '.join(mesh.names)})", loc)
    if mesh is None:
        raise BladecError(f"{what} has a sharded type but the listing declares no mesh "
                          "(add 'mesh {x = 4, ...}')", loc)
    for j, axes in enumerate(t.sharding):
        for a in axes:
            if a not in mesh.names:
                raise BladecError(f"{what}: mesh axis '{a}' is not in the mesh "
                                  f"({', '.join(mesh.names)})", loc)
        k = math.prod(mesh.size(a) for a in axes)
        d = t.dims[j]
        if d is not None and d % k:
            raise BladecError(f"{what}: dim {j} ({d}) is split {k} ways "
                              f"({format_sharding((axes,))[1:-1]}) and must be a multiple "
                              f"of {k}", loc)


# -- which device holds which block --------------------------------------------------

def devices(mesh: Mesh) -> list[dict[str, int]]:
    """Every device's mesh coordinates, in device order (row-major over the axes)."""
    return [dict(zip(mesh.names, c))
            for c in itertools.product(*(range(n) for _, n in mesh.axes))]


def all_shardings(mesh: Mesh, rank: int) -> list[Sharding]:
    """Every way to split ``rank`` dims over the mesh: each axis unused or on one dim,
    in every order within a dim (what the redistribution tests and benchmark range over)."""
    out = set()
    for assign in itertools.product(range(-1, rank), repeat=len(mesh.names)):
        per = [[a for a, d in zip(mesh.names, assign) if d == j] for j in range(rank)]
        for orders in itertools.product(*[list(itertools.permutations(p)) for p in per]):
            out.add(tuple(orders))
    return sorted(out)


def block_of(mesh: Mesh, sharding: Sharding, coords: dict[str, int]) -> tuple[int, ...]:
    """The block index, per dim, that the device at ``coords`` holds."""
    out = []
    for axes in sharding:
        index = 0
        for a in axes:
            index = index * mesh.size(a) + coords[a]
        out.append(index)
    return tuple(out)


def permutation(mesh: Mesh, src: Sharding, dst: Sharding) -> list[tuple[int, int]]:
    """``(from, to)`` device pairs (row-major device numbers) that turn ``src`` into
    ``dst``: the k-th holder of a block under ``src`` sends it to the k-th device that
    holds it under ``dst``. Needs the same number of blocks per dim on both sides."""
    if splits(mesh, src) != splits(mesh, dst):
        raise ValueError("a permutation keeps every dim's number of blocks")
    holders: dict[tuple[int, ...], list[int]] = {}
    for n, coords in enumerate(devices(mesh)):
        holders.setdefault(block_of(mesh, src, coords), []).append(n)
    pairs = []
    for n, coords in enumerate(devices(mesh)):
        pairs.append((holders[block_of(mesh, dst, coords)].pop(0), n))
    return pairs


def whole_arrays(module: Module) -> Module:
    """The listing as one device runs it: no mesh, every type unsplit, each collective
    the identity it is on whole arrays (the reference a sharded run must equal)."""
    def retype(v: Value) -> Value:
        return Value(v.name, v.type.with_sharding(None, ()), v.donated)

    def ops(block: list[Op]) -> list[Op]:
        return [replace(op, results=[retype(r) for r in op.results],
                        regions={k: ops(b) for k, b in op.regions.items()}) for op in block]
    funcs = [replace(f, args=[retype(a) for a in f.args], ops=ops(f.ops)) for f in module.funcs]
    return replace(module, funcs=funcs, mesh=None)


# -- sub-axes: a mesh axis cut into factors ------------------------------------------

def _factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def parts(mesh: Mesh, axis: str) -> tuple[str, ...]:
    """The sub-axes of ``axis`` in :func:`refined`, major first (the axis itself where
    its size is prime or 1, or where it is already a sub-axis)."""
    if axis not in mesh.names:
        return (axis,)
    k = len(_factors(mesh.size(axis)))
    return (axis,) if k <= 1 else tuple(f"{axis}.{i}" for i in range(k))


def refined(mesh: Mesh) -> Mesh:
    """``mesh`` with every axis of composite size cut into its prime factors, major
    first: ``{x:4, y:2}`` is ``{x.0:2, x.1:2, y:2}``. The devices keep their numbers
    (row-major over the axes either way), and a split over ``x`` is the split over
    ``(x.0, x.1)``; the sub-axes let a redistribution move part of an axis (XLA's
    partitioner does so). A listing never names them ('.' is not in an axis name)."""
    axes: list[tuple[str, int]] = []
    for a, n in mesh.axes:
        fs = _factors(n)
        axes += [(a, n)] if len(fs) <= 1 else [(f"{a}.{i}", f) for i, f in enumerate(fs)]
    return Mesh(tuple(axes), mesh.loc)


def to_fine(mesh: Mesh, sharding: Sharding) -> Sharding:
    """``sharding`` over ``mesh`` written over :func:`refined` (sub-axes kept)."""
    return tuple(tuple(p for a in axes for p in parts(mesh, a)) for axes in sharding)


def to_coarse(mesh: Mesh, sharding: Sharding) -> Sharding | None:
    """A sharding over :func:`refined` written over ``mesh`` itself, or None where a dim
    holds part of an axis (or its sub-axes out of order)."""
    whole = {p: a for a in mesh.names for p in parts(mesh, a) if p != a}
    out = []
    for axes in sharding:
        dim, i = [], 0
        while i < len(axes):
            a = whole.get(axes[i])
            if a is None:
                dim.append(axes[i])
                i += 1
                continue
            ps = parts(mesh, a)
            if tuple(axes[i:i + len(ps)]) != ps:
                return None
            dim.append(a)
            i += len(ps)
        out.append(tuple(dim))
    return tuple(out)
