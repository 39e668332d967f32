"""A process's slab of a global array: the part its own devices hold.

On a ``jax.distributed`` cluster every process holds the blocks of its own devices
only (DESIGN section 12). ``bladec run --coordinator`` reads each input from the
process's own file as that part, and writes each output as it: the slab, the box of
the global array that the process's devices' blocks cover. With JAX's row-major device
order a process's devices hold a box (a batch split over an axis whose process holds
a range of coordinates is a range of rows; a replicated or an in-process split dim is
whole); a sharding whose blocks do not make one box is refused, naming the input.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from bladec.errors import BladecError


def _bounds(index: tuple, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(s.start or 0, shape[d] if s.stop is None else s.stop)
            for d, s in enumerate(index)]


def box(sharding: Any, shape: tuple[int, ...], what: str = "the array") -> tuple[slice, ...]:
    """The global index range this process's devices hold of an array of ``shape``."""
    shape = tuple(int(n) for n in shape)
    blocks = {tuple(_bounds(i, shape)) for i in
              sharding.addressable_devices_indices_map(shape).values()}
    if not shape:
        return ()
    lo = [min(b[d][0] for b in blocks) for d in range(len(shape))]
    hi = [max(b[d][1] for b in blocks) for d in range(len(shape))]
    covered = sum(math.prod(e - s for s, e in b) for b in blocks)
    if covered != math.prod(h - l for l, h in zip(lo, hi)):
        raise BladecError(f"{what}: this process's devices hold blocks that are not one "
                          "box of the array (its devices are not a range of the split "
                          "axes' coordinates); reorder the mesh axes")
    return tuple(slice(a, b) for a, b in zip(lo, hi))


def global_shape(sharding: Any, local: tuple[int, ...], what: str) -> tuple[int, ...]:
    """The global shape whose slab on this process has shape ``local``: each dim times
    how many of its blocks the process holds out of all (counted on an array of one
    element per block)."""
    per = sharding.mesh.shape
    spec = tuple(sharding.spec) + (None,) * (len(local) - len(sharding.spec))
    ways = [math.prod(per[a] for a in ((s,) if isinstance(s, str) else (s or ())))
            for s in spec]
    unit = box(sharding, tuple(ways), what)
    out = []
    for d, (n, k, s) in enumerate(zip(local, ways, unit)):
        held = s.stop - s.start
        if n % held:
            raise BladecError(f"{what}: dim {d} of this process's slab ({n}) is not a "
                              f"multiple of the {held} blocks of {k} it holds")
        out.append(n // held * k)
    return tuple(out)


def place(sharding: Any, shape: tuple[int, ...], slab: np.ndarray, what: str) -> Any:
    """The global array of ``shape`` whose part on this process's devices is ``slab``
    (no other process's data is read or made)."""
    import jax
    start = [s.start for s in box(sharding, shape, what)]

    def block(index: tuple) -> np.ndarray:
        return slab[tuple(slice(a - o, b - o) for (a, b), o in
                          zip(_bounds(index, shape), start))]
    return jax.make_array_from_callback(tuple(shape), sharding, block)


def fetch(array: Any) -> np.ndarray:
    """This process's slab of a global array, from its own devices' blocks."""
    shape = tuple(array.shape)
    where = box(array.sharding, shape)
    out = np.empty(tuple(s.stop - s.start for s in where), dtype=array.dtype)
    for shard in array.addressable_shards:
        span = _bounds(shard.index, shape)
        out[tuple(slice(a - s.start, b - s.start) for (a, b), s in zip(span, where))] = \
            np.asarray(shard.data)
    return out
