"""One ``bladec run``: optimize, bind, plan, execute, and report (the CLI only prints)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Module
from bladec.passes import Pass, run_pipeline
from bladec.runtime.backend import JaxBackend, NumpyBackend
from bladec.runtime.executor import Executor, Report, unoptimized
from bladec.units import format_size


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    report: Report
    original_timeline: list[int]
    device: str

    def summary(self) -> dict[str, Any]:
        r = self.report
        return {
            "binding": r.binding, "limit": r.limit, "peak_bytes": r.peak_bytes,
            "unoptimized_peak_bytes": max(self.original_timeline, default=0),
            "planned_peak_bytes": r.planned_peak_bytes, "held_peak_bytes": r.held_peak_bytes,
            "evictions": r.evictions, "reloads": r.reloads, "recomputes": r.recomputes,
            "segments": r.segments, "compilations": r.compilations, "seconds": r.seconds,
            "segment_seconds": r.segment_seconds, "device": self.device,
            "outputs": {k: list(v.shape) for k, v in self.outputs.items()},
        }

    def text(self) -> str:
        s = self.summary()
        lim = format_size(s["limit"]) if s["limit"] is not None else "none"
        lines = [
            "binding: " + ", ".join(f"{k}={v}" for k, v in s["binding"].items()),
            f"limit: {lim}",
            f"peak (tracked): {format_size(s['peak_bytes'])} ({s['peak_bytes']} bytes)",
            f"peak without eviction: {format_size(s['planned_peak_bytes'])}; "
            f"original order: {format_size(s['unoptimized_peak_bytes'])}",
            f"evictions: {s['evictions']}, reloads: {s['reloads']}, "
            f"recomputes: {s['recomputes']}",
            f"segments: {s['segments']}, compilations: {s['compilations']}, "
            f"time: {s['seconds']:.3f} s on {s['device']}",
        ]
        return "\n".join(lines)

    def save_outputs(self, path: str) -> None:
        np.savez(path, **{k.lstrip("%"): v for k, v in self.outputs.items()})

    def write_timeline(self, path: str) -> None:
        from bladec.runtime.timeline import write_timeline
        write_timeline(path, self.original_timeline, self.report.timeline, self.report.limit)


def run_listing(module: Module, passes: list[Pass], limit: int | None = None,
                dims: dict[str, int] | None = None, inputs_path: str | None = None,
                seed: int = 0, backend: str = "jax", fuse: bool = False,
                pad_multiple: int | None = None) -> RunResult:
    optimized = run_pipeline(module, passes)
    make = (lambda: JaxBackend(fuse=fuse)) if backend == "jax" else NumpyBackend
    executor = Executor(optimized, make())
    if inputs_path:
        inputs = _load_inputs(inputs_path, executor.inputs)
    else:
        missing = [s for s in executor.info.free if s not in (dims or {})]
        if missing and not all(s in (dims or {}) for s in executor.info.free):
            raise BladecError(f"random inputs need every free symbol; give --dims "
                              f"{','.join(f'{s}=N' for s in missing)}")
        inputs = executor.random_inputs(dict(dims or {}), seed)
        dims = None
    if pad_multiple:
        inputs = _pad(executor, inputs, pad_multiple)
        dims = None
    outputs, report = executor.run(inputs, limit, dims)
    original = Executor(unoptimized(module), NumpyBackend())
    sizes_timeline = original.plan(report.binding, None).measure.memory
    device = _device_name(backend)
    return RunResult(outputs, report, sizes_timeline, device)


def _load_inputs(path: str, names: list[str]) -> dict[str, np.ndarray]:
    try:
        data = np.load(path)
    except (OSError, ValueError) as exc:
        raise BladecError(f"cannot read inputs from {path}: {exc}") from None
    out = {}
    for name in names:
        key = name.lstrip("%")
        if key not in data:
            raise BladecError(f"{path} has no array '{key}' for input {name} "
                              f"(it has: {', '.join(data.files) or 'nothing'})")
        out[name] = data[key]
    return out


def _pad(executor: Executor, inputs: dict[str, np.ndarray], multiple: int
         ) -> dict[str, np.ndarray]:
    """Zero-pad every input dim that is a plain free symbol up to a multiple."""
    out = {}
    for name, array in inputs.items():
        widths = []
        for j, expr in enumerate(executor.info.dims[name]):
            plain = len(expr.symbols) == 1 and expr == expr.lift(0) + _sym_of(expr)
            size = array.shape[j]
            target = -(-size // multiple) * multiple if plain else size
            widths.append((0, target - size))
        out[name] = np.pad(array, widths) if any(w for _, w in widths) else array
    return out


def _sym_of(expr: Any) -> Any:
    from bladec.symbolic.expr import sym
    return sym(next(iter(expr.symbols)))


def _device_name(backend: str) -> str:
    if backend != "jax":
        return "numpy (cpu)"
    import jax
    d = jax.devices()[0]
    return f"{d.platform}:{d.id} ({getattr(d, 'device_kind', '')})"
