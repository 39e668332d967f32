"""Executing a prepared run: dispatch its steps, hold and free the arrays, measure.

The executor's stages (binding.py, planner.py, fitting.py) work out per binding and
limit what to run (a :class:`PreparedRun`: segments compiled, evictions, reloads,
checked against the device accounting); :func:`execute` runs it. Segments, offloads and reloads are queued without
waiting for each other (the backend orders them by their data) unless ``profile`` asks
for each segment's time. What the run holds is counted from the arrays themselves, so the
device peak in the :class:`Report` is measured, and must equal the plan's accounting.
A prepared run's arrays have the same shapes at every call (its binding fixes them), so
the first run counts them and later runs dispatch only (:func:`dispatch_steps`), with
the figures the first one measured: under a limit the host work per segment is the
calls and frees alone (benchmarks/bench_dispatch.py --limit).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from bladec.runtime.backends.backend import Backend
from bladec.runtime.planning.segments import EvictStep, PreparedRun, SegmentStep


PEAK_COUNTS = {False: "device", True: "device and host copies (one memory)"}


@dataclass
class Report:
    """One run's figures: what the device held (measured here), what the plan was, and
    what preparing it cost (compilations, filled in by the executor)."""
    peak_bytes: int = 0            # the device peak (accounting.py): what a limit promises
    peak_counts: str = "device"    # what peak_bytes counts (PEAK_COUNTS): on a CPU device
                                   # the host copies too, which share its memory
    model_peak_bytes: int = 0      # the per-op memory model over the executed trace
    planned_peak_bytes: int = 0    # the model over the same order with nothing evicted
    held_peak_bytes: int = 0       # bytes of the arrays the runtime held, between segments
    host_peak_bytes: int = 0       # bytes of host copies of offloaded values
    segment_memory: list[dict[str, int]] = field(default_factory=list)  # per segment run
    limit: int | None = None
    evictions: int = 0
    reloads: int = 0
    recomputes: int = 0
    recomputed_ops: int = 0        # ops the recomputes ran (a chain replays several)
    segments: int = 0
    executables: int = 0           # distinct compiled functions the segments ran
    compilations: int = 0
    cache_loads: int = 0           # of them, loaded from a persistent compilation cache
    compile_seconds: float = 0.0   # lowering and compiling them, within ``seconds``
    seconds: float = 0.0
    segment_seconds: list[float] = field(default_factory=list)  # only with profile=True
    binding: dict[str, int] = field(default_factory=dict)
    version: str = ""              # the function run: main or one of its schedule versions
    timeline: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


@dataclass
class CompileCount:
    """A backend's compile counters at one moment (:meth:`of`), or what they grew by
    since (:meth:`since`): how a report counts the compilations of its run, wherever
    they happened (planning before the call, the call, a refused limit)."""
    compilations: int
    seconds: float
    loads: int   # of the compilations, loads from a persistent compilation cache

    @classmethod
    def of(cls, backend: Backend) -> "CompileCount":
        return cls(backend.compilations, backend.compile_seconds, backend.cache_loads)

    def since(self, backend: Backend) -> "CompileCount":
        now = CompileCount.of(backend)
        return CompileCount(now.compilations - self.compilations, now.seconds - self.seconds,
                            now.loads - self.loads)

    def add_to(self, report: Report) -> None:
        report.compilations += self.compilations
        report.compile_seconds += self.seconds
        report.cache_loads += self.loads


def loads_text(loads: int) -> str:
    """What a report adds to its compile time where some compilations were loads from
    the persistent compilation cache (bladec run keeps one by default)."""
    return f"; {loads} loaded from the compilation cache" if loads else ""


@dataclass(frozen=True)
class Measured:
    """What a prepared run's first execution counted from its arrays."""
    peak_bytes: int
    held_peak_bytes: int
    host_peak_bytes: int
    segment_memory: tuple[tuple[int, int, int], ...]   # held, output, temp per segment

    def add_to(self, report: Report) -> None:
        report.peak_bytes = self.peak_bytes
        report.held_peak_bytes = self.held_peak_bytes
        report.host_peak_bytes = self.host_peak_bytes
        report.segment_memory.extend(
            {"held_bytes": held, "output_bytes": out, "temp_bytes": temp}
            for held, out, temp in self.segment_memory)


def execute(prepared: PreparedRun, env: dict[str, Any], backend: Backend, inputs: list[str],
            outputs: list[str], report: Report, profile: bool, one_memory: bool = False
            ) -> dict[str, Any]:
    """Dispatch the steps; the first time, measuring what is held from the arrays
    themselves (the device peak of the report is counted here, and must equal the
    plan's), later with the figures that run counted (``prepared.measured``).
    ``one_memory``: the host copies share the device's memory and count in its peak."""
    measured = prepared.measured
    if isinstance(measured, Measured) and not profile:
        dispatch_steps(prepared, env, backend)
    else:
        measured = prepared.measured = _execute_counting(
            prepared, env, backend, inputs, report.segment_seconds if profile else None,
            one_memory)
    measured.add_to(report)
    return {n: env[n] for n in outputs}


def dispatch_steps(prepared: PreparedRun, env: dict[str, Any], backend: Backend) -> None:
    """The steps alone: calls, frees, offloads and reloads, in the plan's order."""
    host: dict[str, Any] = {}
    for step in prepared.steps:
        if isinstance(step, SegmentStep):
            results = step.fn([env[n] for n in step.inputs])
            freed = [env.pop(n) for n in step.free]   # donated: the segment owns them
            env.update(zip(step.outputs, results))
            for x in freed:
                backend.delete(x)
            del freed
        elif isinstance(step, EvictStep):
            x = env.pop(step.value)
            if step.copy:
                host[step.value] = backend.offload(x)
            backend.delete(x)
        else:
            env[step.value] = backend.reload(
                host.pop(step.value) if step.drop else host[step.value])


def _execute_counting(prepared: PreparedRun, env: dict[str, Any], backend: Backend,
                      inputs: list[str], seconds: list[float] | None, one_memory: bool
                      ) -> Measured:
    """Dispatch the steps, counting what is held from the arrays themselves; with
    ``seconds``, each segment waited for and its time appended there."""
    nbytes = backend.nbytes
    host: dict[str, Any] = {}
    segments: list[tuple[int, int, int]] = []   # held, output, temp bytes per segment
    held = sum(nbytes(env[n]) for n in inputs)
    peak = held_peak = held
    host_bytes = host_peak = 0
    for step in prepared.steps:
        if isinstance(step, SegmentStep):
            memory = step.fn.memory()
            segments.append((held, memory.output_bytes, memory.temp_bytes))
            peak = max(peak, held + memory.output_bytes + memory.temp_bytes
                       + (host_bytes if one_memory else 0))
            args = [env[n] for n in step.inputs]
            freed = [env.pop(n) for n in step.free]  # donated: the segment owns them
            freed_bytes = sum(nbytes(x) for x in freed)
            t = time.perf_counter()
            results = step.fn(args)
            del args
            if seconds is not None:
                for x in results:
                    if hasattr(x, "block_until_ready"):
                        x.block_until_ready()
                seconds.append(time.perf_counter() - t)
            for n, x in zip(step.outputs, results):
                env[n] = x
                held += nbytes(x)
            for x in freed:
                backend.delete(x)
            del freed
            held -= freed_bytes
        elif isinstance(step, EvictStep):
            x = env.pop(step.value)
            if step.copy:
                host[step.value] = backend.offload(x)
                host_bytes += nbytes(x)
            held -= nbytes(x)
            backend.delete(x)
        else:
            x = env[step.value] = backend.reload(
                host.pop(step.value) if step.drop else host[step.value])
            held += nbytes(x)
            # (both copies exist at once: the host's is dropped after the reload)
            peak = max(peak, held + (host_bytes if one_memory else 0))
            if step.drop:
                host_bytes -= nbytes(x)
        held_peak = max(held_peak, held)
        host_peak = max(host_peak, host_bytes)
    return Measured(peak, held_peak, host_peak, tuple(segments))