"""A sharded listing as one ``jax.shard_map`` program over a ``jax.sharding.Mesh``.

Inside the map every value is a device's own block (its local shape); ops that are not
collectives run on blocks through the same lowerings as everywhere (bladec/emit/lower.py),
and each collective becomes JAX's: ``shard_slice`` a ``lax.dynamic_slice_in_dim`` at
``lax.axis_index``, ``all_gather`` a tiled ``lax.all_gather``, ``all_to_all`` a tiled
``lax.all_to_all``, ``all_permute`` one ``lax.ppermute`` over every mesh axis, and a
``reshard`` left in the listing the normal form of the ``redistribute`` pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from bladec.emit.lower import run_op
from bladec.ir import Func, Mesh, Op
from bladec.passes.redistribute import normal_form
from bladec.sharding import local_shape, permutation, spec
from bladec.types import Sharding


@dataclass
class ShardedProgram:
    """``fn`` maps global arrays placed as ``in_specs`` say to outputs placed as ``out_specs``."""
    fn: Callable[..., Any]
    mesh: Any                 # jax.sharding.Mesh
    in_specs: list[Any]       # PartitionSpec per argument
    out_specs: list[Any]      # PartitionSpec per output
    inputs: list[str]
    outputs: list[str]


def partition_spec(sharding: Sharding) -> Any:
    from jax.sharding import PartitionSpec
    return PartitionSpec(*[None if not axes else axes[0] if len(axes) == 1 else axes
                           for axes in sharding])


def jax_mesh(mesh: Mesh) -> Any:
    """The first ``mesh.devices`` devices, row-major over the axes."""
    import jax
    import numpy as np
    have = jax.devices()
    if len(have) < mesh.devices:
        from bladec.errors import BladecError
        raise BladecError(f"the mesh needs {mesh.devices} devices, JAX has {len(have)} "
                          f"({have[0].platform}); on CPU set XLA_FLAGS="
                          f"--xla_force_host_platform_device_count={mesh.devices}")
    grid = np.array(have[:mesh.devices]).reshape([n for _, n in mesh.axes])
    return jax.sharding.Mesh(grid, mesh.names)


def sharded_program(func: Func, mesh: Mesh, shapes: dict[str, tuple[int, ...]]) -> ShardedProgram:
    """``shapes``: every value's global shape (the analysis under a binding)."""
    import jax
    from bladec.runtime.jax_backend import JaxKernels
    K = JaxKernels()
    types = func.value_types()
    inputs = [a.name for a in func.args]
    outputs = func.outputs()

    def local(name: str) -> tuple[int, ...]:
        return local_shape(mesh, types[name], shapes[name])

    def body(*args: Any) -> tuple:
        env = dict(zip(inputs, args))
        for op in func.ops:
            if op.name.startswith(("remat.", "schedule.")):
                continue  # plans for the one-device runtime; nothing to run here
            operands = [env[o] for o in op.operands]
            if op.name in _COLLECTIVES:
                src = spec(types[op.operands[0]])
                env[op.results[0].name] = _COLLECTIVES[op.name](
                    mesh, op, operands[0], src, spec(op.results[0].type))
            else:
                out = [(local(r.name), r.type.dtype) for r in op.results]
                for r, value in zip(op.results, run_op(K, op, operands, out)):
                    env[r.name] = value
        return tuple(env[o] for o in outputs)

    jmesh = jax_mesh(mesh)
    in_specs = [partition_spec(spec(types[n])) for n in inputs]
    out_specs = [partition_spec(spec(types[n])) for n in outputs]
    # check_vma off: after a permute JAX can not tell that a value is the same on the
    # devices its spec replicates it over; the sharding rules of bladec/ops say so.
    mapped = jax.shard_map(body, mesh=jmesh, in_specs=tuple(in_specs),
                           out_specs=tuple(out_specs), check_vma=False)
    return ShardedProgram(jax.jit(mapped), jmesh, in_specs, out_specs, inputs, outputs)


def _slice(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    from jax import lax
    d, axis = op.attrs["dim"], op.attrs["axis"]
    size = x.shape[d] // mesh.size(axis)
    return lax.dynamic_slice_in_dim(x, lax.axis_index(axis) * size, size, axis=d)


def _gather(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    from jax import lax
    d = op.attrs["dim"]
    return lax.all_gather(x, src[d][-1], axis=d, tiled=True)


def _all_to_all(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    from jax import lax
    d, e = op.attrs["src"], op.attrs["dst"]
    return lax.all_to_all(x, src[d][-1], split_axis=e, concat_axis=d, tiled=True)


def _permute(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    from jax import lax
    pairs = [(a, b) for a, b in permutation(mesh, src, dst) if a != b]
    if not pairs:
        return x
    return lax.ppermute(x, mesh.names, permutation(mesh, src, dst))


def _reshard(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    """The ``redistribute`` pass's program, for a listing run without it."""
    for step in normal_form(mesh, src, dst):
        x = _COLLECTIVES[step.op](mesh, Op(step.op, [], [], step.attrs), x, src, step.sharding)
        src = step.sharding
    return x


_COLLECTIVES: dict[str, Callable[[Mesh, Op, Any, Sharding, Sharding], Any]] = {
    "shard_slice": _slice, "all_gather": _gather, "all_to_all": _all_to_all,
    "all_permute": _permute, "reshard": _reshard,
}
