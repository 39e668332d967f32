"""One ``bladec run``: inputs from a file or made up, one call of the engine, a report.

The engine (engine.py) does the work; this module is what the command line adds to it:
reading inputs from an .npz (or random ones for ``--dims``), and the report's text and
JSON. The CLI only prints.
"""
from __future__ import annotations

import math
import pickle
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from bladec.errors import BladecError, BladecWarning
from bladec.ir import Module
from bladec.passes import Pass
from bladec.progress import SILENT, Progress
from bladec.runtime.backends.backend import NumpyBackend, numpy_dtype
from bladec.runtime.engine import Engine
from bladec.runtime.execution import CompileCount, loads_text
from bladec.runtime.executor import Executor, Report, unoptimized
from bladec.runtime.backends import machine
from bladec.runtime.store.listings import ListingCache
from bladec.runtime.planning.trace import Step
from bladec.units import format_dims, format_size

__all__ = ["RunResult", "run_listing"]


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    report: Report
    original_timeline: list[int]
    device: str
    unpadded_binding: dict[str, int] | None = None  # the inputs' own, when padded
    device_peak_bytes: int | None = None  # the device's own statistics (GPU), else None
    original_trace: list[Step] | None = None  # the unoptimized listing's steps (timeline)
    plan_trace: list[Step] | None = None      # the steps the run executed (timeline)
    accounting: str = ""   # what the peak counts: the backend's accounting

    def summary(self) -> dict[str, Any]:
        r = self.report
        return {
            "binding": r.binding, "unpadded_binding": self.unpadded_binding,
            "version": r.version, "limit": r.limit, "peak_bytes": r.peak_bytes,
            "model_peak_bytes": r.model_peak_bytes,
            "unoptimized_model_peak_bytes": max(self.original_timeline, default=0),
            "planned_model_peak_bytes": r.planned_peak_bytes,
            "held_peak_bytes": r.held_peak_bytes, "host_peak_bytes": r.host_peak_bytes,
            "device_peak_bytes": self.device_peak_bytes,
            "segment_memory": r.segment_memory,
            "evictions": r.evictions, "reloads": r.reloads, "recomputes": r.recomputes,
            "segments": r.segments, "compilations": r.compilations,
            "cache_loads": r.cache_loads,
            "compile_seconds": r.compile_seconds, "seconds": r.seconds,
            "segment_seconds": r.segment_seconds, "device": self.device,
            "outputs": {k: list(v.shape) for k, v in self.outputs.items()},
        }

    def text(self) -> str:
        s = self.summary()
        lim = format_size(s["limit"]) if s["limit"] is not None else "none"
        binding = "binding: " + ", ".join(f"{k}={v}" for k, v in s["binding"].items())
        if s["unpadded_binding"]:
            binding += " (padded from " + ", ".join(
                f"{k}={v}" for k, v in s["unpadded_binding"].items()) + ")"
        if s["version"] and s["version"] != "main":
            binding += f"; order: @{s['version']} (a schedule version)"
        lines = [
            binding,
            f"limit: {lim}",
            f"peak: {format_size(s['peak_bytes'])} ({s['peak_bytes']} bytes: "
            f"{self.accounting})",
            f"model peak: {format_size(s['model_peak_bytes'])} (without eviction "
            f"{format_size(s['planned_model_peak_bytes'])}; original order "
            f"{format_size(s['unoptimized_model_peak_bytes'])})",
            f"host copies: {format_size(s['host_peak_bytes'])} at most",
            "allocator peak (the device's own statistics): " + (
                format_size(s["device_peak_bytes"]) if s["device_peak_bytes"] is not None
                else "not reported by this device"),
            f"evictions: {s['evictions']}, reloads: {s['reloads']}, "
            f"recomputes: {s['recomputes']}",
            f"segments: {s['segments']}, compilations: {s['compilations']} "
            f"({s['compile_seconds']:.3f} s{loads_text(s['cache_loads'])}), "
            f"time: {s['seconds']:.3f} s on {s['device']}",
        ]
        return "\n".join(lines)

    def save_outputs(self, path: str) -> None:
        np.savez(path, **{k.lstrip("%"): v for k, v in self.outputs.items()})


def run_listing(module: Module, passes: list[Pass] | None, limit: int | None = None,
                dims: dict[str, int] | None = None, inputs_path: str | None = None,
                seed: int = 0, backend: str = "jax", bitwise: bool = False,
                pad: dict[str, int] | None = None, pad_multiple: int | None = None,
                profile: bool = True, listings: ListingCache | None = None,
                progress: Progress = SILENT) -> RunResult:
    """What ``bladec run`` does, through the engine (engine.py): read or make the inputs,
    call the engine once, fetch the outputs, and report.

    ``passes``: the pipeline; None runs the default one unless the listing is already
    optimized (engine.optimize). ``pad``: zero-pad the inputs so that each named free
    symbol (``{"S1": 64}``) becomes the next multiple of its number, at most the
    symbol's declared maximum: fewer distinct shapes, fewer compilations (the listing
    must mask the padding itself); the outputs keep the padded shapes, as the report's
    binding says. ``pad_multiple``: the same multiple for every free symbol not in
    ``pad``. ``profile``: time each segment (``Report.segment_seconds``), waiting for each.
    ``listings``: optimized listings kept across processes (listings.py).
    ``progress``: told of each pass, the binding prepared, each executable compiled.
    """
    engine = Engine(module, passes=passes, backend=backend, bitwise=bitwise, pad=pad,
                    pad_multiple=pad_multiple, cut_padding=False, listings=listings,
                    progress=progress)
    executor = engine.executor
    counted = CompileCount.of(engine.backend)   # planning before the call compiles too
    one_memory = executor.in_machine_memory and not engine.multiples
    if inputs_path:
        inputs = _load_inputs(inputs_path, executor)
        if one_memory:
            shapes = {n: np.shape(inputs[n]) for n in executor.inputs}
            _check_host_memory(executor, executor.bind(shapes, dims), shapes, limit)
    else:  # --dims may give any symbols that determine the rest (ShapeInfo.bind)
        if (limit is not None or one_memory) and not engine.multiples:
            # plan first: a limit that can not be met, or a run this machine can not
            # hold, is refused before gigabytes of random inputs are drawn (the plan is
            # cached for the run)
            shapes = executor.shapes_for(dict(dims or {}))
            shapes = {n: shapes[n] for n in executor.inputs}
            binding = executor.bind(shapes, dims)
            executor.prepare(binding, limit)
            if one_memory:
                _check_host_memory(executor, binding, shapes, limit)
        inputs = _random_inputs(executor, dict(dims or {}), seed)
    unpadded = None
    if engine.multiples:
        unpadded = engine.binding({n: np.shape(a) for n, a in inputs.items()
                                   if n in executor.inputs}, dims)
    before_call = counted.since(engine.backend)
    outputs, report = engine.call(inputs, limit, dims, profile=profile)
    before_call.add_to(report)   # the run's compilations, wherever they happened
    report.seconds += before_call.seconds
    outputs = {n: engine.backend.fetch(x) for n, x in outputs.items()}
    original = Executor(unoptimized(module), NumpyBackend())
    original_plan = original.plan(report.binding, None)
    device = _device_name(backend)
    peak_of = getattr(engine.backend, "device_peak_bytes", None)
    return RunResult(outputs, report, original_plan.measure.memory, device,
                     unpadded if unpadded != report.binding else None,
                     peak_of() if peak_of else None, original_plan.trace,
                     executor.prepare(report.binding, limit).plan.trace,  # cached: the one run
                     engine.backend.accounting)


# What reading a file that is not a sound .npz can raise (numpy, zipfile, zlib, pickle).
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error,
                pickle.UnpicklingError, KeyError, NotImplementedError)


def _load_inputs(path: str, executor: Executor) -> dict[str, np.ndarray]:
    """One array per graph input, by name without '%', from an .npz (``numpy.savez``).

    Whatever the file holds, a problem is a BladecError naming the file: not an .npz (a
    .npy, an empty or broken file), an array missing, an object array (bladec never
    unpickles), an array whose rank is not the input's. Arrays that no input reads are
    not an error (one file may serve several listings), but a BladecWarning names them:
    a stale or misnamed array would otherwise pass unnoticed."""
    try:
        data = np.load(path, allow_pickle=False)
    except _READ_ERRORS as exc:
        raise BladecError(f"cannot read inputs from {path}: not an .npz file "
                          f"({type(exc).__name__}: {exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise BladecError(f"{path} holds one array (a .npy file); --inputs takes an .npz "
                          f"with one array per graph input, by name (numpy.savez)")
    with data:
        out = {}
        for name in executor.inputs:
            key = name.lstrip("%")
            if key not in data.files:
                raise BladecError(f"{path} has no array '{key}' for input {name} "
                                  f"(it has: {', '.join(data.files) or 'nothing'})")
            try:
                array = data[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc):
                    raise BladecError(f"array '{key}' in {path} is an object array; bladec "
                                      f"reads only numeric arrays") from None
                raise BladecError(f"cannot read array '{key}' from {path}: {exc}") from None
            except _READ_ERRORS as exc:
                raise BladecError(f"cannot read array '{key}' from {path}: "
                                  f"{type(exc).__name__}: {exc}") from None
            rank = len(executor.info.dims[name])
            if array.ndim != rank:
                raise BladecError(f"array '{key}' in {path} has shape {array.shape} (rank "
                                  f"{array.ndim}), but input {name} has rank {rank}")
            out[name] = array
        unused = [k for k in data.files if "%" + k not in out]
    if unused:
        warnings.warn(BladecWarning(f"{path}: array(s) {', '.join(unused)} match no graph "
                                    f"input and are ignored (inputs: "
                                    f"{', '.join(executor.inputs)})"), stacklevel=2)
    return out


def _random_inputs(executor: Executor, binding: dict[str, int],
                   seed: int) -> dict[str, np.ndarray]:
    """``executor.random_inputs``, refused with a BladecError when the binding makes them
    larger than NumPy can index or this machine's memory can hold: a mistyped ``--dims``
    (S1=99999999999) should be a message, not a crash or an out-of-memory kill."""
    shapes = executor.shapes_for(binding)
    sizes = _input_sizes(executor, shapes)
    total = sum(count * width for count, width in sizes.values())
    memory = machine.physical_memory()
    biggest = max(executor.inputs, key=lambda n: sizes[n][0] * sizes[n][1], default=None)
    if biggest is not None and (max(c for c, _ in sizes.values()) > np.iinfo(np.intp).max
                                or (memory is not None and total > memory)):
        where = f"this machine's {format_size(memory)} of memory" if memory else "memory"
        raise BladecError(f"random inputs for {_show(binding)} would take {total} bytes "
                          f"({format_size(total)}; input {biggest} has shape "
                          f"{shapes[biggest]}), more than {where}")
    try:
        return executor.random_inputs(binding, seed)
    except MemoryError:
        raise BladecError(f"not enough memory for random inputs of {total} bytes "
                          f"({_show(binding)})") from None


def _input_sizes(executor: Executor, shapes: dict[str, tuple[int, ...]]
                 ) -> dict[str, tuple[int, int]]:
    """Each input's element count and bytes per element, at ``shapes``."""
    return {n: (math.prod(shapes[n]), np.dtype(numpy_dtype(executor.info.dtypes[n])).itemsize)
            for n in executor.inputs}


def _check_host_memory(executor: Executor, binding: dict[str, int],
                       shapes: dict[str, tuple[int, ...]], limit: int | None) -> None:
    """Where the device is this machine's CPU, device and host are one memory: the plan's
    device bytes with its host copies at the same moment, plus the inputs' NumPy arrays
    (held through the run; JAX's CPU ``device_put`` copies them), must fit the memory
    available, or the kernel kills the process without a word (the paper-size step at
    16x512 under 9.1 GB: at 24.3 GB resident on a 24 GiB machine). Refused with a
    BladecError before running instead (a GPU has its own memory, and its allocator
    reports what does not fit). ``shapes``: the inputs'. The plan is cached for the run."""
    device = executor.prepare(binding, limit).device
    held = sum(count * width for count, width in _input_sizes(executor, shapes).values())
    machine.refuse_beyond_available(
        device.with_host_peak + held, device.with_host_peak,
        f"beside the inputs' {format_size(held)} ({_show(binding)})")


def _show(binding: dict[str, int]) -> str:
    return format_dims(binding) or "no symbols"


def _device_name(backend: str) -> str:
    if backend != "jax":
        return "numpy (cpu)"
    import jax
    d = jax.devices()[0]
    return f"{d.platform}:{d.id} ({getattr(d, 'device_kind', '')})"
