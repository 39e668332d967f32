"""``bladec run`` of a sharded listing: one shard_map program on a mesh of JAX devices.

Memory is per device (DESIGN sections 4 and 12): a device holds its blocks of the inputs,
and while the program runs, its blocks of the outputs and XLA's temporaries (the
executable's ``memory_analysis``, which XLA reports per device for an SPMD program).
That sum is the device peak a ``--mem-limit`` is held against. The program is one XLA
executable, so there is no segment boundary for the one-device runtime's evictions:
a limit below the peak is refused, naming the peak.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.analysis.memory import exact_sizes, exact_timeline
from bladec.errors import BladecError
from bladec.ir import Module
from bladec.passes import Pass
from bladec.passes.redistribute import RedistributePass
from bladec.runtime.engine import optimize
from bladec.runtime.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.units import format_size


@dataclass
class ShardedResult:
    outputs: dict[str, np.ndarray]
    binding: dict[str, int]
    mesh: dict[str, int]
    device: str
    limit: int | None
    input_bytes: int          # per device: its blocks of the inputs
    output_bytes: int         # per device, from XLA
    temp_bytes: int           # per device, from XLA
    alias_bytes: int
    model_peak_bytes: int     # the per-op model's per-device peak, for comparison
    compile_seconds: float
    seconds: list[float] = field(default_factory=list)

    @property
    def peak_bytes(self) -> int:
        return self.input_bytes + self.output_bytes + self.temp_bytes - self.alias_bytes

    def summary(self) -> dict[str, Any]:
        return {
            "binding": self.binding, "mesh": self.mesh, "devices": int(np.prod(
                list(self.mesh.values()))), "limit": self.limit,
            "peak_bytes": self.peak_bytes, "per_device": True,
            "input_bytes": self.input_bytes, "output_bytes": self.output_bytes,
            "temp_bytes": self.temp_bytes, "alias_bytes": self.alias_bytes,
            "model_peak_bytes": self.model_peak_bytes,
            "compile_seconds": self.compile_seconds,
            "seconds": float(np.median(self.seconds)), "device": self.device,
            "outputs": {k: list(v.shape) for k, v in self.outputs.items()},
        }

    def text(self) -> str:
        s = self.summary()
        mesh = ", ".join(f"{a} = {n}" for a, n in self.mesh.items())
        lim = format_size(self.limit) if self.limit is not None else "none"
        return "\n".join([
            "binding: " + ", ".join(f"{k}={v}" for k, v in self.binding.items()),
            f"mesh: {{{mesh}}} ({s['devices']} devices: {self.device})",
            f"limit per device: {lim}",
            f"peak per device: {format_size(self.peak_bytes)} ({self.peak_bytes} bytes: "
            f"input blocks {self.input_bytes} + XLA outputs {self.output_bytes} + "
            f"temporaries {self.temp_bytes} - aliased {self.alias_bytes})",
            f"model peak per device: {format_size(self.model_peak_bytes)}",
            f"compilation: {self.compile_seconds:.3f} s, time: {s['seconds'] * 1e3:.3f} ms "
            f"(median of {len(self.seconds)})",
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
    """Optimize, bind, compile one shard_map program, check the limit, run, report.

    With a ``cluster`` every process holds the same inputs (the same file or seed) and
    places only its own devices' blocks; every process gets the whole outputs."""
    import jax
    from bladec.emit.shard import jax_mesh, sharded_program
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
    if inputs_path:
        inputs = load_inputs(inputs_path, host)
    else:
        inputs = random_inputs(host, dict(dims or {}), seed)
    binding = host.bind({n: np.shape(a) for n, a in inputs.items()}, dims)
    shapes = host.shapes_for(binding)
    shown = host.info.bind(binding)
    shown = {s: v for s, v in shown.items() if s in host.info.declared or s in binding}
    for name in host.inputs:
        if tuple(np.shape(inputs[name])) != shapes[name]:
            raise BladecError(f"input {name} has shape {np.shape(inputs[name])}, the binding "
                              f"gives {shapes[name]}")
    func = optimized.main
    prog = sharded_program(func, mesh, shapes)
    placed = [jax.make_array_from_callback(
                  shapes[n], jax.sharding.NamedSharding(prog.mesh, s),
                  lambda index, x=inputs[n]: x[index])
              for n, s in zip(prog.inputs, prog.in_specs)]
    start = time.perf_counter()
    compiled = prog.fn.lower(*placed).compile()
    compile_seconds = time.perf_counter() - start
    mem = compiled.memory_analysis()
    sizes = exact_sizes(host.info, {s: binding[s] for s in host.info.free if s in binding})
    input_bytes = sum(sizes[n] for n in prog.inputs)
    model_peak = max(exact_timeline(func, sizes).steps, default=input_bytes)
    result = ShardedResult({}, shown, dict(mesh.axes), jax.devices()[0].platform, limit,
                           input_bytes, int(mem.output_size_in_bytes),
                           int(mem.temp_size_in_bytes), int(mem.alias_size_in_bytes),
                           model_peak, compile_seconds)
    if limit is not None and result.peak_bytes > limit:
        raise BladecError(f"the per-device peak of this sharded program is "
                          f"{format_size(result.peak_bytes)} ({result.peak_bytes} bytes), above "
                          f"--mem-limit {format_size(limit)}; one XLA program has no points "
                          f"to evict at, so the smallest limit that works is its peak")
    outs: tuple = ()
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        outs = jax.block_until_ready(compiled(*placed))
        result.seconds.append(time.perf_counter() - start)
    if cluster is not None:
        from jax.experimental.multihost_utils import process_allgather
        outs = tuple(process_allgather(o, tiled=True) for o in outs)
    result.outputs = {n: np.asarray(o) for n, o in zip(prog.outputs, outs)}
    return result
