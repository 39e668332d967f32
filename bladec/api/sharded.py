"""``bladec.jit`` on globally sharded ``jax.Array``\\ s (DESIGN sections 11 and 12).

Arguments placed with a ``NamedSharding`` over a mesh of several devices make the
listing a sharded one: the mesh is the arrays' (its axes, sizes and device order), each
such argument's type is split as its ``PartitionSpec`` says, and every other argument
(host arrays, numbers, single-device arrays) is replicated. ``out_shardings`` (as for
``jax.jit``: one sharding for every output, or a pytree of them, ``None`` for "as
computed") are constraints on the outputs. The listing then goes through ``propagate``
and ``redistribute`` before the pipeline, and runs on the mesh backend: planned per
device (a ``mem_limit`` is per device), the arrays held as global ``jax.Array``\\ s, the
outputs returned split as their types say. On a ``jax.distributed`` cluster the
arguments are the processes' global arrays, each process holding its own shards.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Mesh, Module, Value
from bladec.passes import DEFAULT_PIPELINE, Pass, parse_pipeline
from bladec.passes.propagate import PropagatePass
from bladec.passes.redistribute import RedistributePass
from bladec.runtime.engine import Engine, optimize
from bladec.types import Sharding


@dataclass(frozen=True)
class Spmd:
    """The mesh of a call's sharded arguments and each leaf's split (None: replicated)."""
    jmesh: Any                                 # jax.sharding.Mesh
    specs: tuple[Sharding | None, ...]

    @property
    def mesh(self) -> Mesh:
        return Mesh(tuple((a, int(self.jmesh.shape[a])) for a in self.jmesh.axis_names))

    @property
    def key(self) -> tuple:
        return (self.mesh.axes, tuple(d.id for d in self.jmesh.devices.flat), self.specs)


def _sharding(spec: Any, rank: int) -> Sharding:
    """A ``PartitionSpec`` as a sharded type's per-dim axes (missing trailing dims whole)."""
    dims = tuple(spec) + (None,) * (rank - len(spec))
    return tuple(() if s is None else (s,) if isinstance(s, str) else tuple(s)
                 for s in dims)


def spmd_of(leaves: list[Any]) -> Spmd | None:
    """The mesh the leaves are split over, if any leaf is a ``jax.Array`` with a
    ``NamedSharding`` over more than one device (all such leaves on one mesh)."""
    import jax
    from jax.sharding import NamedSharding
    jmesh = None
    specs: list[Sharding | None] = []
    for i, x in enumerate(leaves):
        s = getattr(x, "sharding", None) if isinstance(x, jax.Array) else None
        if not isinstance(s, NamedSharding) or s.mesh.size == 1:
            specs.append(None)
            continue
        if jmesh is None:
            jmesh = s.mesh
        elif s.mesh != jmesh:
            raise BladecError(f"argument leaf {i} is placed on another mesh than the earlier "
                              f"sharded arguments ({dict(s.mesh.shape)} against "
                              f"{dict(jmesh.shape)}); a bladec.jit call runs on one mesh")
        specs.append(_sharding(s.spec, x.ndim))
    return None if jmesh is None else Spmd(jmesh, tuple(specs))


def out_specs(out_shardings: Any, count: int) -> list[Sharding | None]:
    """``out_shardings`` (one ``NamedSharding``/``PartitionSpec`` for all outputs, or a
    pytree with one per output, ``None`` for "as computed") per output, in order."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    def leaf(x: Any) -> bool:
        return x is None or isinstance(x, (NamedSharding, PartitionSpec))
    if out_shardings is None:
        return [None] * count
    flat = jax.tree_util.tree_leaves(out_shardings, is_leaf=leaf)
    if leaf(out_shardings):
        flat = [out_shardings] * count
    if len(flat) != count or not all(leaf(x) for x in flat):
        raise BladecError(f"out_shardings has {len(flat)} entries for {count} outputs; give "
                          "one sharding for all or a pytree of the outputs' structure")
    return [None if x is None else x.spec if isinstance(x, NamedSharding) else x
            for x in flat]


def shard_module(module: Module, inputs: list[str], spmd: Spmd, outputs: list[str],
                 wanted: list[Any]) -> Module:
    """The imported listing on ``spmd``'s mesh: the arguments split as the leaves are,
    the outputs constrained to ``wanted`` (PartitionSpecs or None)."""
    func = module.main
    split = dict(zip(inputs, spmd.specs))
    args = [Value(a.name, a.type.with_sharding(split[a.name]) if split.get(a.name)
                  else a.type, a.donated) for a in func.args]
    want = {}
    for name, spec in zip(outputs, wanted):
        if spec is None:
            continue
        rank = next((r.type.rank for op in func.ops for r in op.results if r.name == name),
                    None)
        if rank is None:
            raise BladecError(f"out_shardings: output {name.lstrip('%')} is an argument "
                              "returned as it is; it keeps the argument's sharding")
        s = _sharding(spec, rank)
        if want.setdefault(name, s) != s:
            raise BladecError(f"out_shardings: output {name.lstrip('%')} is asked for twice "
                              "with different shardings")
    ops = [replace(op, results=[Value(r.name, r.type.with_sharding(want[r.name]), r.donated)
                                if r.name in want else r for r in op.results])
           for op in func.ops]
    return replace(module, funcs=[replace(func, args=args, ops=ops)] + module.funcs[1:],
                   mesh=spmd.mesh)


def spmd_engine(imported: Any, spmd: Spmd, options: Any) -> Engine:
    """The engine of an imported listing called with sharded arguments, on their mesh:
    the listing split as the leaves are, ``propagate`` and ``redistribute`` first, then
    the pipeline; the mesh backend plans per device. ``options``: the ``Jitted``'s."""
    from bladec.runtime.backends.mesh_backend import MeshBackend, value_types
    if options.backend != "jax" or options.pad or options.bitwise:
        raise BladecError("sharded arguments run on the jax backend, without pad or bitwise")
    passes: list[Pass] | str | None = options.passes
    wanted = out_specs(options.out_shardings, len(imported.output_names))
    module = shard_module(imported.module, list(imported.input_names), spmd,
                          list(imported.output_names), wanted)
    chosen = parse_pipeline(DEFAULT_PIPELINE if passes is None else passes) \
        if passes is None or isinstance(passes, str) else list(passes)
    if not any(p.name == "propagate" for p in chosen):
        chosen = [PropagatePass(), *chosen]
    optimized = RedistributePass().apply(optimize(module, chosen))
    types = value_types([op for f in optimized.funcs for op in f.ops],
                        {a.name: a.type for a in optimized.main.args})
    backend = MeshBackend(spmd.mesh, types, spmd.jmesh)
    return Engine(optimized, passes=[], backend=backend)


def named(leaves: list[Any]) -> bool:
    """Whether a leaf is placed with a ``NamedSharding`` (6 us for 25 leaves: checked on
    every call until one is, so that a later call with sharded arguments is never served
    by an unsharded call's hot path)."""
    from jax.sharding import NamedSharding
    return any(type(getattr(x, "sharding", None)) is NamedSharding for x in leaves)


def splits(leaves: list[Any]) -> tuple:
    """Per leaf, its sharding where it is a device array (another split is another
    trace: a sharded listing's types hold the splits)."""
    return tuple(getattr(x, "sharding", None) for x in leaves)


def placed(engine: Engine, arrays: dict[str, Any]) -> dict[str, Any]:
    """The call's arrays on the engine's mesh: the sharded ones as they are (their
    sharding is the listing's), the rest replicated over the mesh."""
    import jax
    backend = engine.backend
    out = {}
    for name, x in arrays.items():
        want = backend.sharding(name)
        if isinstance(x, jax.Array) and x.sharding.is_equivalent_to(want, x.ndim):
            out[name] = x
        elif isinstance(x, jax.Array) and not x.is_fully_addressable:
            raise BladecError(f"argument {name.lstrip('%')} is split otherwise than when "
                              "the function was traced")
        else:
            out[name] = backend.place(name, np.asarray(x))
    return out
