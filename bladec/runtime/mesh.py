"""``bladec run`` of a sharded listing: shard_map programs on a mesh of JAX devices.

Memory is per device (DESIGN sections 4 and 12). The listing runs through the
one-device runtime's executor on the mesh backend (mesh_backend.py): each segment is
its own shard_map program, arrays stay split between segments, and the device peak
a ``--mem-limit`` is held against is a device's blocks of the arrays held plus, while
a segment runs, XLA's per-device outputs and temporaries for it. With no limit, or
one the whole step fits, the step is one program; under a lower limit the remat plan
evicts (reloads, recomputes) per device, and a limit no plan meets is refused naming
the smallest that works.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Module
from bladec.passes import Pass
from bladec.passes.redistribute import RedistributePass
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.engine import optimize
from bladec.runtime.execution import Report, loads_text
from bladec.runtime.executor import Executor
from bladec.runtime.backends.mesh_backend import MeshBackend, value_types
from bladec.runtime.slab import fetch, global_shape, place
from bladec.units import format_size


@dataclass
class ShardedResult:
    outputs: dict[str, np.ndarray]
    binding: dict[str, int]
    mesh: dict[str, int]
    device: str
    report: Report            # the executor's, every byte per device
    input_bytes: int          # per device: its blocks of the inputs
    seconds: list[float] = field(default_factory=list)
    process_input_bytes: int = 0   # what this process read and placed of the inputs
    process: int | None = None     # on a cluster: this process's index (its slabs)

    @property
    def peak_bytes(self) -> int:
        return self.report.peak_bytes

    def summary(self) -> dict[str, Any]:
        r = self.report
        return {
            "binding": self.binding, "mesh": self.mesh, "devices": int(np.prod(
                list(self.mesh.values()))), "limit": r.limit,
            "peak_bytes": r.peak_bytes, "per_device": True,
            "input_bytes": self.input_bytes, "model_peak_bytes": r.model_peak_bytes,
            "process_input_bytes": self.process_input_bytes, "process": self.process,
            "segments": r.segments, "evictions": r.evictions, "reloads": r.reloads,
            "recomputes": r.recomputes, "host_peak_bytes": r.host_peak_bytes,
            "segment_memory": r.segment_memory, "compilations": r.compilations,
            "cache_loads": r.cache_loads, "compile_seconds": r.compile_seconds,
            "seconds": float(np.median(self.seconds)), "device": self.device,
            "outputs": {k: list(v.shape) for k, v in self.outputs.items()},
        }

    def text(self) -> str:
        s, r = self.summary(), self.report
        mesh = ", ".join(f"{a} = {n}" for a, n in self.mesh.items())
        lim = format_size(r.limit) if r.limit is not None else "none"
        top = max(r.segment_memory, key=lambda f: sum(f.values()), default=None)
        at = (f": held {top['held_bytes']} + XLA outputs {top['output_bytes']} + "
              f"temporaries {top['temp_bytes']} at its fullest segment") if top else ""
        return "\n".join([
            "binding: " + ", ".join(f"{k}={v}" for k, v in self.binding.items()),
            f"mesh: {{{mesh}}} ({s['devices']} devices: {self.device})",
            f"limit per device: {lim}",
            f"peak per device: {format_size(r.peak_bytes)} ({r.peak_bytes} bytes{at}; "
            f"input blocks {self.input_bytes})",
            f"model peak per device: {format_size(r.model_peak_bytes)}",
            *([f"process {self.process}: read and placed {self.process_input_bytes} bytes "
               "of inputs (its devices' slabs); its outputs are its slabs"]
              if self.process is not None else []),
            f"evictions: {r.evictions}, reloads: {r.reloads}, recomputes: {r.recomputes}, "
            f"host copies at most {format_size(r.host_peak_bytes)} per device",
            f"segments: {r.segments} (shard_map programs), compilations: {r.compilations} "
            f"({r.compile_seconds:.3f} s{loads_text(r.cache_loads)}), "
            f"time: {s['seconds'] * 1e3:.3f} ms (median of {len(self.seconds)})",
        ])

    def save_outputs(self, path: str) -> None:
        np.savez(path, **{k.lstrip("%"): v for k, v in self.outputs.items()})


@dataclass(frozen=True)
class Cluster:
    """``jax.distributed`` for a run on several processes: every process runs the same
    command with its own ``process_id``; each brings ``devices / processes`` devices."""
    coordinator: str
    processes: int
    process_id: int


MAX_CPU_DEVICES = 256  # more virtual CPU devices than this is a typo, not a test mesh


def ensure_devices(count: int, cluster: Cluster | None = None) -> None:
    """Ask JAX for ``count`` CPU devices in all if its backends are not started yet (the
    ``jax_num_cpu_devices`` option; ``XLA_FLAGS=--xla_force_host_platform_device_count``
    does the same from outside), and join the cluster. A started backend keeps what it
    has; ``jax_mesh`` then names what is missing."""
    import jax
    local = count if cluster is None else -(-count // cluster.processes)
    if local > MAX_CPU_DEVICES:
        return  # jax_mesh says how many devices the mesh needs and how many there are
    try:
        if jax.config.jax_num_cpu_devices < local:
            jax.config.update("jax_num_cpu_devices", local)
        if cluster is not None:  # CPU collectives across processes go through gloo
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except RuntimeError:
        pass
    if cluster is not None:
        try:
            jax.distributed.initialize(cluster.coordinator, cluster.processes,
                                       cluster.process_id)
        except (RuntimeError, ValueError) as exc:
            raise BladecError(f"cannot join the cluster at {cluster.coordinator} as process "
                              f"{cluster.process_id} of {cluster.processes}: {exc}") from None


def run_sharded(module: Module, passes: list[Pass] | None, limit: int | None = None,
                dims: dict[str, int] | None = None, inputs_path: str | None = None,
                seed: int = 0, repeats: int = 5, cluster: Cluster | None = None
                ) -> ShardedResult:
    """Optimize, bind, plan under the per-device limit, run the segments, report.

    With a ``cluster`` each process reads and writes only its own devices' part of every
    array (slab.py): the ``inputs_path`` file holds this process's slab of each input (a
    replicated input whole, a batch split over processes its rows), and the outputs are
    this process's slabs. Random inputs (no file) are made from the seed on every
    process alike, and each places its own blocks."""
    import jax
    from bladec.emit.shard import jax_mesh
    from bladec.runtime.session import _load_inputs as load_inputs
    from bladec.runtime.session import _random_inputs as random_inputs
    mesh = module.mesh
    assert mesh is not None
    # a reshard left in the listing runs as the redistribute pass writes it
    # (``passes`` None: the default pipeline, or none when the listing is optimized)
    optimized = RedistributePass().apply(optimize(module, passes))
    ensure_devices(mesh.devices, cluster)
    jax_mesh(mesh)  # enough devices? before any input is made
    host = Executor(optimized, NumpyBackend())  # binding, shapes and inputs, as `run` does
    types = value_types([op for f in optimized.funcs for op in f.ops],
                        {a.name: a.type for a in optimized.main.args})
    backend = MeshBackend(mesh, types)
    slabs = cluster is not None and bool(inputs_path)
    if inputs_path:
        inputs = load_inputs(inputs_path, host)
    else:
        inputs = random_inputs(host, dict(dims or {}), seed)
    given = {n: tuple(np.shape(a)) for n, a in inputs.items()}
    if slabs:
        given = {n: global_shape(backend.sharding(n), given[n], f"input {n}")
                 for n in host.inputs}
    binding = host.bind(given, dims)
    shapes = host.shapes_for(binding)
    shown = host.info.bind(binding)
    shown = {s: v for s, v in shown.items() if s in host.info.declared or s in binding}
    for name in host.inputs:
        if given[name] != shapes[name]:
            raise BladecError(f"input {name} has shape {given[name]}"
                              f"{' (global)' if slabs else ''}, the binding gives "
                              f"{shapes[name]}")
    executor = Executor(optimized, backend)
    executor.prepare(binding, limit)   # refused (a limit, an extent) before anything is placed
    if slabs:
        placed = {n: place(backend.sharding(n), shapes[n], np.asarray(inputs[n]),
                           f"input {n}") for n in executor.inputs}
    else:
        placed = {n: backend.place(n, np.asarray(inputs[n])) for n in executor.inputs}
    read = sum(np.asarray(inputs[n]).nbytes for n in executor.inputs)
    input_bytes = sum(backend.nbytes(x) for x in placed.values())
    seconds = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        outs, report = executor.run_arrays(placed, limit, dims=binding)
        jax.block_until_ready(list(outs.values()))
        seconds.append(time.perf_counter() - start)
    # over every repeat: the backend is this run's own
    report.compilations, report.compile_seconds = backend.compilations, backend.compile_seconds
    report.cache_loads = backend.cache_loads
    got = {n: fetch(o) if cluster is not None else np.asarray(o) for n, o in outs.items()}
    return ShardedResult(got, shown, dict(mesh.axes), jax.devices()[0].platform, report,
                         input_bytes, seconds, read,
                         jax.process_index() if cluster is not None else None)
