"""The mesh backend: the one-device runtime's segments as ``shard_map`` programs.

A sharded listing runs through the same executor as any other (plans, evictions,
reloads, recomputes, the device accounting of DESIGN section 4), with arrays held as
global ``jax.Array``\\ s split over the mesh as their types say. Each segment is its own
``jax.jit(jax.shard_map(...))`` program over the device's blocks, its collectives
JAX's (bladec/emit/shard.py); between segments the arrays stay split. Every size is
per device: a held array counts its block, and a segment's outputs and temporaries are
XLA's per-device figures for the SPMD program, so a ``--mem-limit`` is a per-device
limit, and the remat plan evicts per device.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from bladec.emit.lower import OutSpec
from bladec.emit.shard import jax_mesh, partition_spec, spmd_function
from bladec.ir import Func, Mesh, Op, TensorType, walk
from bladec.progress import SILENT, Progress
from bladec.runtime.backends.backend import ArgSpec, numpy_dtype, segment_key
from bladec.runtime.backends.jax_backend import LazyCompiled, check_wide_types
from bladec.sharding import spec


class MeshBackend:
    """Segments of a sharded listing, compiled per shape signature as SPMD programs.

    ``types``: every value's type (its sharding), the function's and its recompute
    regions' alike. Inputs come placed (``put`` takes a ``jax.Array`` as it is, and
    places a host array by its value's sharding only through :meth:`place`)."""
    name = "jax-mesh"
    accounting = ("per device: its blocks of the arrays held plus each shard_map "
                  "segment's XLA outputs and temporaries")

    def __init__(self, mesh: Mesh, types: dict[str, TensorType], jmesh: Any = None) -> None:
        import jax
        self.jax = jax
        self.mesh = mesh
        self.types = types
        # ``jmesh``: the arrays' own mesh (bladec.jit on sharded arrays: its device order)
        self.jmesh = jmesh if jmesh is not None else jax_mesh(mesh)
        self.compilations = 0
        self.compile_seconds = 0.0
        self.compile_cpu_seconds = 0.0
        self.cache_loads = 0
        self.progress: Progress = SILENT
        self._cache: dict[tuple, _MeshSegment] = {}

    def check_types(self, func: Func) -> None:
        check_wide_types(self.jax, func)

    def sharding(self, name: str) -> Any:
        return self.jax.sharding.NamedSharding(self.jmesh,
                                               partition_spec(spec(self.types[name])))

    def place(self, name: str, array: np.ndarray) -> Any:
        """A host array as the global array of value ``name``, each device its block."""
        return self.jax.make_array_from_callback(
            tuple(np.shape(array)), self.sharding(name), lambda index: array[index])

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec], args: list[ArgSpec],
                donate: tuple[int, ...] = (), xla_order: bool = False,
                whole_step: bool = False) -> "_MeshSegment":
        splits = tuple(spec(self.types[n]) for n in [*inputs, *outputs])
        key = (segment_key(ops, inputs, outputs, specs, args, tuple(donate)), splits,
               tuple(tuple(spec(r.type)) for op in ops for r in op.results))
        seg = self._cache.get(key)
        if seg is None:
            seg = self._cache[key] = _MeshSegment(self, ops, inputs, outputs, specs, args,
                                                  tuple(donate))
        return seg

    def put(self, x: Any) -> Any:
        if isinstance(x, self.jax.Array):
            return x
        raise TypeError("the mesh backend takes its inputs placed (MeshBackend.place)")

    def fetch(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def nbytes(self, x: Any) -> int:
        """A device's bytes of ``x``: its block (all of it where replicated)."""
        return math.prod(x.sharding.shard_shape(x.shape)) * x.dtype.itemsize

    def delete(self, x: Any) -> None:
        if not x.is_deleted():
            x.delete()

    def offload(self, x: Any) -> Any:
        """Host copies of every device's own block, not of the global array: a value of
        partial sums differs from device to device where its sharding says replicated."""
        blocks = [(s.device, np.asarray(s.data)) for s in x.addressable_shards]
        return x.shape, x.sharding, blocks

    def reload(self, h: Any) -> Any:
        shape, sharding, blocks = h
        return self.jax.make_array_from_single_device_arrays(
            shape, sharding, [self.jax.device_put(b, d) for d, b in blocks])


class _MeshSegment(LazyCompiled):
    """One SPMD program, compiled when first called or asked for its memory (XLA's
    figures for an SPMD program are per device)."""

    def __init__(self, backend: MeshBackend, ops: list[Op], inputs: list[str],
                 outputs: list[str], specs: dict[int, OutSpec], args: list[ArgSpec],
                 donate: tuple[int, ...]) -> None:
        super().__init__(backend, None, args, donate)  # lower() builds the function
        self.ops, self.inputs, self.outputs = ops, inputs, outputs
        shapes = {n: shape for n, (shape, _) in zip(inputs, args)}
        for op in walk(ops):  # a loop's region values too: its steps run on blocks
            if id(op) in specs:
                shapes.update({r: s for r, (s, _) in zip(op.result_names, specs[id(op)])})
        self.shapes = shapes

    def lower(self) -> Any:
        b = self.backend
        jax = b.jax
        mapped = spmd_function(b.mesh, b.jmesh, self.ops, self.inputs, self.outputs,
                               b.types, self.shapes)
        avals = [jax.ShapeDtypeStruct(shape, numpy_dtype(dtype), sharding=b.sharding(n))
                 for n, (shape, dtype) in zip(self.inputs, self.args)]
        return jax.jit(mapped, donate_argnums=self.donate).lower(*avals)

    def options(self) -> dict[str, str]:
        return {}

    def __call__(self, args: list) -> list:
        return list(self.compile()(*args))


def value_types(ops: list[Op], args: dict[str, TensorType]) -> dict[str, TensorType]:
    """Every value's type, recompute regions included (a recomputed value keeps its
    type)."""
    out = dict(args)
    for op in walk(ops):
        out.update({r.name: r.type for r in op.results})
    return out
