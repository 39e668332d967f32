"""A sharded listing as one ``jax.shard_map`` program over a ``jax.sharding.Mesh``.

Inside the map every value is a device's own block (its local shape); ops that are not
collectives run on blocks through the same lowerings as everywhere (bladec/emit/lower.py),
and each collective becomes JAX's: ``shard_slice`` a ``lax.dynamic_slice_in_dim`` at
``lax.axis_index``, ``all_gather`` a tiled ``lax.all_gather``, ``all_to_all`` a
``lax.all_to_all`` (toward a later dim over a split of that dim: XLA's own program;
over two devices, one ``lax.ppermute`` of the half that leaves: toward an earlier dim
of a matrix from 64 KiB blocks, and from 512 KiB blocks of any rank toward dim 0 or
toward a later dim),
``all_permute`` one ``lax.ppermute`` over every mesh axis, and a ``reshard`` left in the
listing the ops the ``redistribute`` pass writes for it. Runs of gathers (or slices) of
one dim become one collective over their axes. Where a reshard's plan moves part of an
axis, the whole map runs over the refined mesh (the same devices, composite axes cut
into sub-axes) and every type is written over it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from bladec.emit.loop import run_loop
from bladec.emit.lower import run_op
from bladec.ir import Func, Mesh, Op, TensorType, walk
from bladec.ops.loop import LOOPS
from bladec.passes.redistribute import expand, plan
from bladec.sharding import local_shape, parts, permutation, refined, spec, splits, to_fine
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


def run_blocks(mesh: Mesh, ops: list[Op], outputs: list[str], types: dict[str, TensorType],
               local: Callable[[str], tuple[int, ...]]) -> Callable[[dict[str, Any]], None]:
    """A function that runs ``ops`` inside a shard_map on one device's blocks, reading
    and writing ``env`` (value name to block); ``local`` gives a value's block shape.
    ``outputs``: the values read after the ops (a collective run is fused only where
    its intermediates are read by nothing else). The shard_map is over
    ``lowering_mesh(mesh, ops, types)``."""
    from jax import lax
    from bladec.runtime.backends.kernel import JaxKernels
    K = JaxKernels()
    mesh, ops, types = _expanded(mesh, ops, types)
    runs = _fused_runs(ops, outputs)

    def body(env: dict[str, Any]) -> None:
        for op in ops:
            if op.name.startswith(("remat.", "schedule.")):
                continue  # markers of the runtime's plan; nothing to compute
            run = runs.get(id(op))
            if run == []:
                continue  # inside a run: its first op did it
            operands = [env[o] for o in op.operands]
            if run:  # the first of a run: one collective over all its axes
                env[run[-1].results[0].name] = _fused(
                    mesh, run, operands[0], spec(types[op.operands[0]]),
                    spec(types[run[-1].results[0].name]))
            elif op.name == "all_reduce":
                env[op.results[0].name] = lax.psum(operands[0], types[op.operands[0]].partial)
            elif op.name == "dim_size":  # the global size: the block's times its ways
                t, d = types[op.operands[0]], int(op.attrs["dim"])
                ways = splits(mesh, spec(t))[d % t.rank]
                env[op.results[0].name] = K.np.asarray(operands[0].shape[d] * ways,
                                                       dtype=K.dtype(op.results[0].type.dtype))
            elif op.name in _COLLECTIVES:
                src = spec(types[op.operands[0]])
                env[op.results[0].name] = _COLLECTIVES[op.name](
                    mesh, op, operands[0], src, spec(types[op.results[0].name]))
            else:
                out = [(local(r.name), r.type.dtype) for r in op.results]
                results = run_loop(K, op, operands, out, region) if op.name in LOOPS \
                    else run_op(K, op, operands, out)
                for r, value in zip(op.results, results):
                    env[r.name] = value

    def region(inner: list[Op], ins: list[str], outs: list[str]) -> Callable[..., list]:
        """A loop's region on the blocks one step sees (its collectives JAX's too)."""
        run = run_blocks(mesh, inner, outs, types, local)

        def fn(*args: Any) -> list:
            env = dict(zip(ins, args))
            run(env)
            return [env[o] for o in outs]
        return fn
    return body


def sharded_program(func: Func, mesh: Mesh, shapes: dict[str, tuple[int, ...]]) -> ShardedProgram:
    """``shapes``: every value's global shape (the analysis under a binding)."""
    import jax
    types = func.value_types()
    inputs = [a.name for a in func.args]
    outputs = func.outputs()
    jmesh = jax_mesh(mesh)
    mapped = spmd_function(mesh, jmesh, func.ops, inputs, outputs, types, shapes)
    in_specs = [partition_spec(spec(types[n])) for n in inputs]
    out_specs = [partition_spec(spec(types[n])) for n in outputs]
    return ShardedProgram(jax.jit(mapped), jmesh, in_specs, out_specs, inputs, outputs)


def spmd_function(mesh: Mesh, jmesh: Any, ops: list[Op], inputs: list[str],
                  outputs: list[str], types: dict[str, TensorType],
                  shapes: dict[str, tuple[int, ...]]) -> Callable[..., tuple]:
    """``ops`` as one ``shard_map`` over ``jmesh``: each device runs them on its blocks
    (``shapes``: global shapes, each value split as its type says) and returns its
    blocks of ``outputs``. The whole program (:func:`sharded_program`) and each segment
    of the mesh runtime (runtime/mesh_backend.py) are built this way."""
    import jax
    run = run_blocks(mesh, ops, outputs, types,
                     lambda name: local_shape(mesh, types[name], shapes[name]))

    def body(*args: Any) -> tuple:
        env = dict(zip(inputs, args))
        run(env)
        return tuple(env[o] for o in outputs)

    used = lowering_mesh(mesh, ops, types)
    inner = jmesh
    if used != mesh:  # the same devices, some axes cut into sub-axes
        inner = jax.sharding.Mesh(jmesh.devices.reshape([n for _, n in used.axes]),
                                  used.names)

    def placed(name: str) -> Any:
        return partition_spec(to_fine(mesh, spec(types[name])) if used != mesh
                              else spec(types[name]))
    in_specs = tuple(placed(n) for n in inputs)
    out_specs = tuple(placed(n) for n in outputs)
    # check_vma off: after a permute JAX can not tell that a value is the same on the
    # devices its spec replicates it over; the sharding rules of bladec/ops say so.
    mapped = jax.shard_map(body, mesh=inner, in_specs=in_specs, out_specs=out_specs,
                           check_vma=False)
    if used == mesh:
        return mapped
    coarse = [jax.sharding.NamedSharding(jmesh, partition_spec(spec(types[n])))
              for n in outputs]

    def on_mesh(*args: Any) -> tuple:
        """The outputs placed over ``jmesh`` again (the same devices hold the same
        blocks: no data moves), so that callers see the listing's mesh."""
        return tuple(jax.lax.with_sharding_constraint(o, c)
                     for o, c in zip(mapped(*args), coarse))
    return on_mesh


def _fused_runs(ops: list[Op], outputs: list[str]) -> dict[int, list[Op]]:
    """Consecutive gathers of one dim (or slices of one dim), each the only use of the
    one before, as one collective over several axes: on many devices each collective
    has a fixed cost (a rendezvous of every device) beside the bytes it moves. Maps the
    first op of a run to the run and every later op to an empty list."""
    users: dict[str, int] = {}
    for op in ops:
        for o in op.operands:
            users[o] = users.get(o, 0) + 1
    read_after = set(outputs)
    out: dict[int, list[Op]] = {}
    run: list[Op] = []

    def close() -> None:
        if len(run) > 1:
            out[id(run[0])] = list(run)
            out.update({id(o): [] for o in run[1:]})
        run.clear()
    for op in ops:
        if run and (op.name == run[-1].name and op.attrs.get("dim") == run[-1].attrs["dim"]
                    and op.operands[0] == run[-1].results[0].name
                    and users.get(op.operands[0]) == 1 and op.operands[0] not in read_after):
            run.append(op)
            continue
        close()
        if op.name in ("all_gather", "shard_slice"):
            run.append(op)
    close()
    return out


def _fused(mesh: Mesh, run: list[Op], x: Any, src: Sharding, dst: Sharding) -> Any:
    """A run of gathers (or slices) of one dim from ``src`` to ``dst``."""
    return (_gather if run[0].name == "all_gather" else _slice)(mesh, run[0], x, src, dst)


def _names(axes: tuple[str, ...]) -> Any:
    return axes[0] if len(axes) == 1 else tuple(axes)


def _slice(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    """Pushes the axes ``dst`` adds to the dim, major first (read from the types, so
    that an axis written whole is its sub-axes over a refined mesh)."""
    from jax import lax
    d = op.attrs["dim"]
    axes = dst[d][len(src[d]):]
    size = x.shape[d] // math.prod(mesh.size(a) for a in axes)
    return lax.dynamic_slice_in_dim(x, lax.axis_index(_names(axes)) * size, size, axis=d)


def _gather(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    """Pops the dim's newest axes, major first: one collective."""
    from jax import lax
    d = op.attrs["dim"]
    return lax.all_gather(x, _names(src[d][len(dst[d]):]), axis=d, tiled=True)


def _all_to_all(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    """Moves d's newest axes onto e. Where d comes before e, dim e is cut into
    ``(g, n/g)`` first and the exchange runs over that new axis, which then joins dim d
    as its major part: XLA writes the received pieces straight into the result (its own
    resharding's program); a tiled all_to_all there concatenates them along e first and
    then copies the whole block into place (one block more of scratch, 0.70x XLA's time
    on a 512x512 move of x:4 from dim 0 to dim 1). Over two devices, from the block
    sizes where it was measured faster, one permute of the half that leaves instead
    (:func:`_exchange`, :func:`_exchange_later`)."""
    from jax import lax
    d, e = op.attrs["src"], op.attrs["dst"]
    axes = src[d][len(dst[d]):]  # major first: the group index is row-major over them
    g = math.prod(mesh.size(a) for a in axes)
    nbytes = x.size * x.dtype.itemsize
    if g == 2 and d > e and (x.ndim == 2 and nbytes >= EXCHANGE_BYTES
                             or e == 0 and nbytes >= LARGE_BLOCK_BYTES):
        return _exchange(x, _names(axes), d, e)
    if g == 2 and d < e and nbytes >= LARGE_BLOCK_BYTES:
        return _exchange_later(x, _names(axes), d, e)
    if d > e:
        return lax.all_to_all(x, _names(axes), split_axis=e, concat_axis=d, tiled=True)
    s = x.shape
    y = x.reshape(s[:e] + (g, s[e] // g) + s[e + 1:])
    y = lax.all_to_all(y, _names(axes), split_axis=e, concat_axis=e, tiled=True)
    y = y.transpose(tuple(range(d)) + (e,) + tuple(i for i in range(d, y.ndim) if i != e))
    return y.reshape(s[:d] + (g * s[d],) + s[d + 1:e] + (s[e] // g,) + s[e + 1:])


# Where the two-device exchange beats XLA:CPU's all_to_all, as measured on 8 CPU
# devices (paired rounds, the same program with either lowering): on matrices from
# 64 KiB blocks ({x, y} to {(x, y), _} on {x:4, y:2}: 0.78x, 0.92x, 0.97x the
# all_to_all's speed at 2, 8 and 32 KiB blocks, 1.03x at 50 KiB, 1.09x at 72 and 98 KiB,
# 1.16x at 128 KiB; issue 34's rank-2 cases 1.08-1.17x), on rank-3 blocks only from
# LARGE_BLOCK_BYTES toward dim 0 (the cases `sub-axis {_,x,y}->{_,_,x}` 0.87x and
# `mixed {x,_,y}->{y,x,_}` 0.95x at 128 KiB; issue 17's 1 MiB rank-3 pairs lower by
# about a tenth). Below, the permute's rendezvous and the join cost more than the
# copies it saves.
EXCHANGE_BYTES = 64 * 1024


def _exchange(x: Any, names: Any, d: int, e: int) -> Any:
    """An all_to_all over two devices as one permute: each keeps its half of dim e,
    sends the other half to its partner and joins the two along dim d in group order.
    XLA:CPU lowers an all_to_all to a tuple of pieces, whose index table is scratch the
    permute does not need (``gather all`` on {x:4, y:2}: 64 B over XLA's own program
    that way, 64 KiB under it this way), and copies both pieces out where the permute
    copies one."""
    from jax import lax
    h = x.shape[e] // 2
    lo, hi = lax.slice_in_dim(x, 0, h, axis=e), lax.slice_in_dim(x, h, 2 * h, axis=e)
    first = lax.axis_index(names) == 0
    got = lax.ppermute(lax.select(first, hi, lo), names, [(0, 1), (1, 0)])
    mine = lax.select(first, lo, hi)
    return lax.concatenate([lax.select(first, mine, got), lax.select(first, got, mine)], d)


# From 512 KiB blocks the data is most of a call's time on XLA:CPU, and an exchange
# (the leaving half cut out and copied across; in _exchange_later the result made in
# one fused pass from the kept half and the received one: 2 passes over the block)
# beats the all_to_all's 3 passes (the pieces cut out, copied across, joined), as
# measured on 8 CPU devices (CPU time, paired rounds, the same program with either
# lowering, 2026-11-28, load 8-12). Toward a later dim (_exchange_later): 0.90-1.02x at
# 128 KiB blocks (the fixed cost of the call is most of the time there), 1.01-1.20x at
# 256 KiB, 1.09-1.32x at 512 KiB, 1.19-1.45x at 1-2 MiB; rank 2 and 3, meshes
# {x:2, y:2, z:2} and {x:4, y:2}. Toward dim 0 of a rank-3 block (_exchange, whose
# halves are then whole rows): 1.07-1.22x from 512 KiB to 4 MiB; toward dim 1 it is not
# faster (1.01x), nor at 128 KiB (0.87x).
LARGE_BLOCK_BYTES = 512 * 1024


def _exchange_later(x: Any, names: Any, d: int, e: int) -> Any:
    """An all_to_all over two devices toward a later dim (``d < e``) as one permute:
    each sends the half of dim e that leaves and makes its result in one pass, the
    kept half and the received one joined along d in group order. The order depends on
    the device, so the join is written as a slice at a device-dependent offset along d
    of (received, kept, received): d is never the last dim here, so the offset moves
    whole rows and XLA fuses the join and the slice into one loop (a select of the two
    orders, or a dynamic offset along the last dim, costs a compare or an index per
    element: slower than XLA's all_to_all)."""
    from jax import lax
    h = x.shape[e] // 2
    me = lax.axis_index(names)
    got = lax.ppermute(lax.dynamic_slice_in_dim(x, (1 - me) * h, h, axis=e), names,
                       [(0, 1), (1, 0)])
    mine = lax.dynamic_slice_in_dim(x, me * h, h, axis=e)
    n = x.shape[d]
    return lax.dynamic_slice_in_dim(lax.concatenate([got, mine, got], d), (1 - me) * n,
                                    2 * n, axis=d)


def _permute(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    from jax import lax
    pairs = permutation(mesh, src, dst)
    if all(a == b for a, b in pairs):
        return x
    return lax.ppermute(x, mesh.names, pairs)


def lowering_mesh(mesh: Mesh, ops: list[Op], types: dict[str, TensorType]) -> Mesh:
    """The mesh the shard_map of ``ops`` runs over: ``mesh``, or its refined mesh where a
    reshard's plan moves part of an axis (its collectives name sub-axes)."""
    for op in walk(ops):  # a loop's regions run inside the same map
        if op.name == "reshard":
            src, dst = spec(types[op.operands[0]]), spec(op.results[0].type)
            if plan(mesh, src, dst, op.results[0].type.dims)[0] != mesh:
                return refined(mesh)
    return mesh


def _expanded(mesh: Mesh, ops: list[Op], types: dict[str, TensorType]
              ) -> tuple[Mesh, list[Op], dict[str, TensorType]]:
    """The mesh to lower over, and every ``reshard`` left in the listing as the
    ``redistribute`` pass writes it, so that its collectives lower (and fuse) as the
    pass's output would; over a refined mesh, every type written over it (an axis as
    its sub-axes)."""
    if not any(op.name == "reshard" for op in ops):
        return mesh, ops, types
    used = lowering_mesh(mesh, ops, types)
    types = dict(types)
    taken = set(types)
    out: list[Op] = []
    for op in ops:
        steps = expand(op, types[op.operands[0]], mesh, taken, sub_axes=True) \
            if op.name == "reshard" else []
        out.extend(steps or [op])
        types.update({r.name: r.type for o in steps for r in o.results})
    if used != mesh:
        types = {n: t.with_sharding(to_fine(mesh, t.sharding),
                                    tuple(p for a in t.partial for p in parts(mesh, a)))
                 if t.sharding is not None else t for n, t in types.items()}
    return used, out, types


def _same(mesh: Mesh, op: Op, x: Any, src: Sharding, dst: Sharding) -> Any:
    """A reshard to the sharding its operand has: the value itself."""
    return x


_COLLECTIVES: dict[str, Callable[[Mesh, Op, Any, Sharding, Sharding], Any]] = {
    "shard_slice": _slice, "all_gather": _gather, "all_to_all": _all_to_all,
    "all_permute": _permute, "reshard": _same,
}
