"""The JAX backend: segments compiled with ``jax.jit``, arrays held on the device.

A segment's memory beside its arguments is read from its compiled executable
(``memory_analysis()``: outputs not aliased to donated arguments, and temporaries), so
the executor can check a plan against XLA's own accounting before running it.
Arguments whose last use is a segment are donated to it, so XLA may write an output
into their buffers.
"""
from __future__ import annotations

import math
import os
import time
import types
import warnings
from functools import cached_property
from typing import Any, Callable

import numpy as np

from bladec.emit.lower import OutSpec
from bladec.errors import BladecError
from bladec.ir import Func, Op, walk
from bladec.ops.loop import with_bodies
from bladec.progress import SILENT, Progress
from bladec.runtime.backends.backend import (DEFAULT_COPY_BANDWIDTH, ArgSpec, SegmentMemory,
                                            interpret, numpy_dtype, segment_key)
from bladec.runtime.backends.cache import count_cache_loads, unkept, use_compilation_cache
from bladec.runtime.backends.compilelog import compile_log
from bladec.runtime.backends.allocator import keep_freed_memory_in_process, release_freed_memory
from bladec.runtime.backends.kernel import _BarrierJaxKernels, _JaxKernels, _OrderedJaxKernels
from bladec.runtime.backends.mappings import mapping_count, resident
from bladec.runtime.backends.xlaoption import (FUSION_EMITTERS_VARIABLE, KEEP_BARRIERS,
                                               bitwise_options, gpu_options,
                                               legacy_cpu_emitters)
from bladec.runtime.store.executables import ExecutableStore, Figures, figures_of


class JaxBackend:
    """Segments compiled with ``jax.jit``, cached by what they compute at which shapes
    (:func:`segment_key`: repeated layers cut alike compile once); counts compilations.

    By default XLA fuses inside each segment (fast; what users run): results of plans
    that cut the graph differently then agree only to rounding (XLA contracts ``a*b + c``
    into an FMA inside a fused loop, and fusion boundaries move with the cuts).
    ``enforce_order`` (default: on CPU, or ``BLADEC_ENFORCE_ORDER=1``) holds the ops of a
    segment in the listing's order inside the executable (:class:`_OrderedJaxKernels`):
    without it XLA schedules by itself and bladec's order does not reach the device.
    ``one_memory`` (default: on CPU, unless ``BLADEC_ONE_MEMORY=0``) counts host copies
    in the peak a limit bounds, and plans without reloads (a host copy frees nothing).
    ``bitwise=True`` compiles each segment with XLA's fusion pass off and every op's
    result behind an optimization barrier (:class:`_BarrierJaxKernels`), so every op is
    its own kernel whatever segment it lands in, and every plan computes bit for bit
    what the unoptimized listing computes (guarding values with an opaque identity
    instead does not stop XLA from moving elementwise ops past broadcasts and then
    rewriting a divide as a multiply). The differential tests run in that mode.
    ``recomputes_inside`` (one memory with the order held): an eviction to recompute
    does not cut the plan into another executable (segments.split).
    ``fusion_emitters`` (default: on in one memory, else off; ``BLADEC_CPU_FUSION_EMITTERS``
    says otherwise): on CPU, XLA's MLIR fusion emitters rather than its older LLVM ones
    (:func:`bladec.runtime.backends.xlaoption.legacy_cpu_emitters`) for the segments of a cut plan; the whole step keeps ``jax.jit``'s options (in bitwise
    mode every executable takes the segments' options, so that plans agree bit for bit).
    """
    name = "jax"
    accounting = "held arrays plus each segment's XLA outputs and temporaries"

    def __init__(self, bitwise: bool = False, keep_freed_memory: bool | None = None,
                 enforce_order: bool | None = None, fusion_emitters: bool | None = None,
                 one_memory: bool | None = None) -> None:
        self.bitwise = bitwise
        self.fuse = not bitwise
        self.cache_dir = use_compilation_cache()   # BLADEC_COMPILATION_CACHE, if set
        import jax
        self.jax = jax
        device = jax.devices()[0]
        if keep_freed_memory is None:
            # not on CPU, one memory: what the allocator keeps is the process's growth
            # (the small Llama SGD step at 8x256 under a 200 MiB limit, glibc as it
            # comes: 772 MiB over a JAX-only process kept, 705 MiB not, for 2.8% more
            # CPU time a step; docs/measurements/cpu-memory.md). GLIBC_TUNABLES (README)
            # takes the page faults away for jax.jit and bladec alike.
            keep_freed_memory = os.environ.get(
                "BLADEC_KEEP_FREED_MEMORY", "0" if device.platform == "cpu" else "1") != "0"
        self.keeps_freed_memory = keep_freed_memory and keep_freed_memory_in_process()
        if enforce_order is None:  # measured on CPU only; GPUs keep XLA's own order
            enforce_order = os.environ.get("BLADEC_ENFORCE_ORDER",
                                           "1" if device.platform == "cpu" else "0") != "0"
        self.enforce_order = enforce_order and not bitwise
        # a CPU device's "host" copies are in its own memory: a limit then bounds both
        # (DESIGN.md section 4); one_memory=False (BLADEC_ONE_MEMORY=0) plans as for a
        # device with memory of its own (reloads and all): a model of a GPU's plans
        if one_memory is None:
            one_memory = device.platform == "cpu" and \
                os.environ.get("BLADEC_ONE_MEMORY", "1") != "0"
        self.one_memory = one_memory
        if fusion_emitters is None:   # measured on CPU only (legacy_cpu_emitters)
            # in one memory a plan under a limit recomputes chains in its segments, and
            # those compile faster with XLA's MLIR emitters: the small Llama SGD step at
            # 8x256 under half jit's device peak, 16.5 and 20.1 s of CPU against 24.6
            # and 29.2 s with the LLVM ones, side by side, the steps as fast (543 and
            # 595 ms against 556 and 594; docs/measurements/cpu-memory.md, section 7)
            fusion_emitters = os.environ.get(FUSION_EMITTERS_VARIABLE,
                                             "1" if one_memory else "0") != "0"
        # one memory: hand the allocator's free memory back to the OS once a call has
        # compiled (release_after_compiling); BLADEC_RELEASE_AFTER_COMPILING=0 keeps it
        self.releases_after_compiling = one_memory and not self.keeps_freed_memory and \
            os.environ.get("BLADEC_RELEASE_AFTER_COMPILING", "1") != "0"
        # the XLA options of a plain jax.jit in this mode (for the whole step, in either
        # order: Fitter._in_xla_order), and of the segments of cut plans
        self.jit_options = bitwise_options(device.platform) if bitwise else {}
        if device.platform == "gpu":   # no autotuning beside the held arrays (gpu_options)
            self.jit_options.update(gpu_options())
        self.compile_options = dict(self.jit_options)
        if device.platform == "cpu" and not fusion_emitters and not bitwise:
            # (not in bitwise mode: with the fusion pass off, jaxlib 0.10.2's LLVM
            # emitters drop the copy of a transpose that feeds a dot and read its
            # operand untransposed: wrong results, bitwise_options)
            self.compile_options.update(legacy_cpu_emitters())
        if self.one_memory and self.enforce_order:
            # XLA:CPU's cse_barrier_expander drops the barriers that hold the order, and
            # CSE then merges a recomputed value with the original: the recompute saves
            # nothing (the small Llama SGD step at 8x256: smallest limit 217.6 MiB with
            # the pass, against 218.1 MiB unlimited; 200 MiB met without it, 36
            # recomputes). On CPU, one memory, recomputes are all a limit has. (Their
            # numerics move further from the fused whole step: up to 6e-5 of an
            # output's magnitude against 1e-5 with the pass, tests/test_device.py.)
            self.compile_options.update(KEEP_BARRIERS)
        # a value evicted to be recomputed dies inside the executable that made it, and
        # its recompute stays one (the order held, the barriers kept through CSE): such
        # an eviction cuts no segment (segments.split)
        self.recomputes_inside = self.one_memory and self.enforce_order
        self.K = _BarrierJaxKernels() if bitwise else \
            _OrderedJaxKernels() if self.enforce_order else _JaxKernels()
        self.compilations = 0
        self.compile_seconds = 0.0
        self.cache_loads = 0   # of the compilations, loaded from the persistent cache
        # the process's CPU time over the same calls: on shared cores, where wall time
        # counts other processes' work, the fairer figure to compare compilers by
        self.compile_cpu_seconds = 0.0
        self.progress: Progress = SILENT   # told of each executable compiled
        self._cache: dict[tuple, Any] = {}
        # executables kept across processes by their segment key (executables.py)
        self.store: ExecutableStore | None = None
        from jax.sharding import SingleDeviceSharding
        self._device = SingleDeviceSharding(device, memory_kind="device")
        from jax._src.array import ArrayImpl
        self._array = ArrayImpl     # concrete device arrays (not tracers)
        kinds = {m.kind for m in device.addressable_memories()}
        self._host = (SingleDeviceSharding(device, memory_kind="pinned_host")
                      if "pinned_host" in kinds else None)
        self._platform = device.platform
        self._stats_device = device
        if self.one_memory:
            self.accounting = (f"{self.accounting}, and the host copies of offloaded values "
                               "(on a CPU device they share its memory)")

    def check_types(self, func: Func) -> None:
        check_wide_types(self.jax, func)

    def device_peak_bytes(self) -> int | None:
        """The device's own peak bytes in use (``memory_stats()['peak_bytes_in_use']``,
        GPUs report it), or None where the device keeps no statistics (CPU)."""
        stats = self._stats_device.memory_stats()
        peak = (stats or {}).get("peak_bytes_in_use")
        return int(peak) if peak is not None else None

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec], args: list[ArgSpec],
                donate: tuple[int, ...] = (), xla_order: bool = False,
                whole_step: bool = False) -> "LazyCompiled":
        free = xla_order and self.enforce_order   # otherwise self.K holds no order anyway
        as_jit = free or (whole_step and not self.bitwise)   # (bitwise: all alike)
        key = segment_key(ops, inputs, outputs, specs, args, tuple(donate))
        if as_jit:   # compiled with other options than a cut plan's segments
            key = (key, "xla_order" if free else "whole")
        compiled = self._cache.get(key)
        if compiled is None:
            fn = interpret(_JaxKernels() if free else self.K, ops, inputs, outputs, specs)
            compiled = self._cache[key] = LazyCompiled(
                self, fn, args, tuple(donate),
                self.jit_options if as_jit else self.compile_options, key)
        return compiled

    def release_after_compiling(self) -> bool:
        """After a call that compiled: the allocator's free memory back to the OS where
        that is this backend's choice (one memory, freed memory not kept); whether it
        was given back."""
        return self.releases_after_compiling and release_freed_memory()

    def executables(self) -> list[Any]:
        """The XLA executables compiled so far (``as_text()`` gives the optimized HLO)."""
        return [c.executable for c in self._cache.values() if c.executable is not None]

    def put(self, array: np.ndarray) -> Any:
        """``array`` on the device: a device array already there as it is (what
        ``device_put`` would return, after a Python walk that costs more than a small
        step's dispatch: 0.1-0.3 ms per array on CPU), a host scalar as it is (the
        executable takes it as jax.jit's does), else a copy."""
        if isinstance(array, self._array) and not array.is_deleted() and \
                array.sharding == self._device:
            return array
        if isinstance(array, np.ndarray) and array.ndim == 0:
            return array
        return self.jax.device_put(array, self._device)

    def fetch(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def nbytes(self, x: Any) -> int:
        return math.prod(x.shape) * x.dtype.itemsize   # jax's .nbytes walks more Python

    def delete(self, x: Any) -> None:
        if isinstance(x, self._array) and not x.is_deleted():
            x.delete()

    def offload(self, x: Any) -> Any:
        """A host copy of ``x``, queued behind whatever computes ``x`` (not awaited)."""
        if self._host is not None:
            return self.jax.device_put(x, self._host)
        return np.asarray(x)

    def reload(self, h: Any) -> Any:
        return self.jax.device_put(h, self._device)

    def copy_bandwidth(self) -> float:
        """Bytes per second of one copy to the host or back, measured once per process
        and platform: the best of a few round trips of a 4 MiB array (the first ones
        pay for fresh memory; later ones show the steady state, as the runs will).

        Not on CPU: there the "host" is the same memory, and on shared cores the
        measurement followed the load (9e8, 2e9 and 8e9 B/s in three processes a
        minute apart, load 5), so the planner's reload-or-recompute choices, and with
        them the limits its plans meet and the smallest limit a refusal names, changed
        from process to process: a limit named by one could be refused by the next.
        CPU takes the cost model's default instead (8e9 B/s, what the measurement
        gives on quiet cores), as the NumPy backend does."""
        if self._platform == "cpu":
            return DEFAULT_COPY_BANDWIDTH
        bw = _BANDWIDTH.get(self._platform)
        if bw is None:
            x = self.put(np.ones(1 << 20, np.float32))
            best = float("inf")
            for _ in range(8):
                t = time.perf_counter()
                h = self.offload(x)
                if hasattr(h, "block_until_ready"):
                    h.block_until_ready()
                y = self.reload(h)
                y.block_until_ready()
                best = min(best, time.perf_counter() - t)
                self.delete(y)
                if hasattr(h, "delete"):
                    h.delete()
            self.delete(x)
            bw = _BANDWIDTH[self._platform] = float(f"{2 * x.nbytes / max(best, 1e-9):.1g}")
        return bw


WIDE_DTYPES = frozenset({"f64", "i64"})   # 32-bit in JAX unless its 64-bit mode is on


def check_wide_types(jax: Any, func: Func) -> None:
    """A BladecError at the first value of a 64-bit element type while JAX's 64-bit mode
    is off: JAX would make it 32-bit without a word (its default), so integers past 2^31
    would wrap and the executables would not take the arrays a run gives them. The mode
    is JAX's, process-wide: bladec does not turn it on behind the user's back (it changes
    every dtype JAX picks by default). For every backend that runs on JAX."""
    if jax.config.jax_enable_x64:
        return
    values = [(a, func.loc) for a in func.args] + \
        [(r, op.loc) for op in walk(func.ops) for r in op.results]
    for value, loc in values:
        if value.type.dtype in WIDE_DTYPES:
            raise BladecError(f"'{value.name}' is {value.type.dtype}: 64-bit element types "
                              f"on the jax backend need JAX's 64-bit mode (set "
                              f"JAX_ENABLE_X64=1, or jax.config.update('jax_enable_x64', "
                              f"True)); --backend numpy runs them as they are", loc)

_BANDWIDTH: dict[str, float] = {}


class LazyCompiled:
    """A segment compiled when first called or first asked for its memory (unless the
    backend's store kept its figures: then only to be called); ``donate``:
    the indices of the arguments whose buffers it may take over; ``options``: XLA's
    compiler options; ``key``: what it computes (backend.segment_key), by which the
    backend's store (executables.py), where it has one, keeps it across processes."""

    def __init__(self, backend: Any, fn: Callable[..., list] | None,
                 args: list[ArgSpec], donate: tuple[int, ...],
                 options: dict[str, Any] | None = None, key: tuple | None = None) -> None:
        self.backend = backend
        self.fn = fn
        self.args = args
        self.donate = donate
        self._options = dict(options or {})
        self.key = key
        self.executable: Any = None
        self._memory: SegmentMemory | None = None
        # its figures wanted before it is known to run (Fitter: a limit refused): read
        # from a cheaper compilation (_probed), the executable compiled when first called
        self.figures_only = False

    @property
    def compiled(self) -> bool:
        """Whether its figures cost nothing to read: its executable exists, or the
        backend's store holds them (executables.py)."""
        return self.executable is not None or self._memory is not None \
            or self._stored_memory is not None

    @cached_property
    def _store_key(self) -> str | None:
        """The name the backend's store keeps it under (None: no store, or a key that
        means nothing in another process)."""
        store = getattr(self.backend, "store", None)
        return None if store is None or self.key is None \
            else store.key(self.backend, self.key, self.options())

    @cached_property
    def _stored_memory(self) -> SegmentMemory | None:
        """XLA's figures as the store kept them with the executable, not loading it;
        asked once (a miss stays one: this process compiles it)."""
        figures = self.backend.store.figures(self._store_key) if self._store_key else None
        return None if figures is None else _segment_memory(figures)

    def compile(self) -> Any:
        if self.executable is not None:
            resident().touch(self)
        else:
            backend = self.backend
            start, cpu = time.perf_counter(), time.process_time()
            maps = mapping_count()
            loaded = count_cache_loads()
            kept = self._store_key
            if kept is not None:
                self.executable = backend.store.load(kept)
            stored = self.executable is not None   # a load, as one from JAX's cache
            if not stored:
                with warnings.catch_warnings():
                    # an argument no output can reuse is still freed after the segment
                    warnings.filterwarnings("ignore", "Some donated buffers were not usable")
                    lowered = self.lower()
                    lowering = time.process_time() - cpu
                    self.executable = lowered.compile(compiler_options=self.options())
                    log = compile_log()
                    if log is not None:
                        log.record("run", lowered, time.process_time() - cpu,
                                   time.perf_counter() - start, lowering)
                if kept is not None:   # its figures read once, for the store and memory()
                    figures = figures_of(self.executable)
                    if self._memory is None:
                        self._memory = _segment_memory(figures)
                    if count_cache_loads() == loaded:
                        backend.store.keep(kept, self.executable, figures)
                    else:   # loaded from JAX's own cache: not serializable
                        backend.store.keep_figures(kept, figures)
            after = mapping_count()
            resident().admit(self, None if maps is None or after is None else after - maps)
            backend.compile_seconds += time.perf_counter() - start
            backend.compile_cpu_seconds += time.process_time() - cpu
            backend.compilations += 1
            backend.cache_loads += count_cache_loads() - loaded + stored
            backend.progress.tick()
        return self.executable

    def release(self) -> None:
        """Let go of the executable (and the memory mappings its code holds:
        mappings.py), keeping its memory figures; it compiles again if it runs again.
        JAX's in-memory caches keep every executable compiled from a function while the
        function lives (its lowering is cached by the function, its executable by the
        lowering): the function is renewed, the same code and cells as a new object, so
        that the old one, and with it what JAX cached for it, goes."""
        if self.executable is not None and self._memory is None:
            self._memory = _segment_memory(figures_of(self.executable))
        self.executable = None
        self.fn = _renewed(self.fn)

    def lower(self) -> Any:
        """The jitted function lowered for its arguments on the backend's device."""
        jax = self.backend.jax
        avals = [jax.ShapeDtypeStruct(shape, numpy_dtype(dtype), sharding=self.backend._device)
                 for shape, dtype in self.args]
        return jax.jit(self.fn, donate_argnums=self.donate).lower(*avals)

    def options(self) -> dict[str, Any]:
        return self._options

    def memory(self) -> SegmentMemory:
        """XLA's own figures: outputs not aliased to a donated argument, temporaries
        (from the store where it kept them: the executable is then loaded only to run;
        from a figures-only compilation where :attr:`figures_only` is set)."""
        if self._memory is None:
            stored = self._stored_memory if self.executable is None else None
            if stored is None and self.executable is None and self.figures_only:
                stored = self._probed()
            self._memory = stored or _segment_memory(figures_of(self.compile()))
        return self._memory

    def _probed(self) -> SegmentMemory | None:
        """XLA's figures from a compilation that only reads them (:func:`probe_options`),
        kept in the store as those of the executable that runs, which is compiled at its
        first call; None where the platform has no such options. XLA assigns buffers in
        its HLO passes, before the code generation the options turn down (tests/test_probe.py
        checks the figures alike)."""
        options = probe_options(self.backend, self._options)
        if options is None:
            return None
        backend = self.backend
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings(), unkept():
            warnings.filterwarnings("ignore", "Some donated buffers were not usable")
            lowered = self.lower()
            lowering = time.process_time() - cpu
            probe = lowered.compile(compiler_options=options)
        log = compile_log()
        if log is not None:
            log.record("figures", lowered, time.process_time() - cpu,
                       time.perf_counter() - start, lowering)
        backend.compile_seconds += time.perf_counter() - start
        backend.compile_cpu_seconds += time.process_time() - cpu
        backend.compilations += 1
        backend.progress.tick()
        figures = figures_of(probe)   # (memory_analysis() once: it is not free)
        if self._store_key is not None:
            backend.store.keep_figures(self._store_key, figures)
        self.fn = _renewed(self.fn)   # JAX's caches let go of the probe (see release)
        return _segment_memory(figures)

    def __call__(self, args: list) -> list:
        return self.compile()(*args)




PROBE_OPTIONS = {"xla_backend_optimization_level": 0}


def _renewed(fn: Any) -> Any:
    """``fn`` as a new function object (the same code and cells), so that what JAX cached
    for the old one (its lowerings and their executables) goes with it."""
    if not isinstance(fn, types.FunctionType):
        return fn
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def probe_options(backend: Any, options: dict[str, Any]) -> dict[str, Any] | None:
    """``options`` with LLVM's optimizations off, for a compilation that only reads the
    memory figures, on CPU (the paper step's whole steps: the same figures at 0.55-0.7x of
    the CPU time); None elsewhere (not checked on GPUs)."""
    if getattr(backend, "_platform", None) != "cpu":
        return None
    return {**options, **PROBE_OPTIONS}


def _segment_memory(figures: Figures) -> SegmentMemory:
    """XLA's figures as the device accounting reads them: outputs not written into a
    donated argument's buffer, and temporaries."""
    return SegmentMemory(figures.output - figures.alias, figures.temp)


def whole_graph(ops: list[Op], inputs: list[str], outputs: list[str],
                shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str],
                mode: str = "fused", compiler_options: dict[str, Any] | None = None) -> Any:
    """One executable of ``ops`` as a plain ``jax.jit`` would compile it (``mode``
    "fused"), with the ops held in their order ("ordered", as the backend does on CPU),
    or one kernel per op ("bitwise"): the references the device peak is compared with.
    ``compiler_options``: XLA options besides the mode's own (a test compares two)."""
    import jax
    kernels = {"fused": _JaxKernels, "ordered": _OrderedJaxKernels,
               "bitwise": _BarrierJaxKernels}[mode]()
    specs = {id(op): [(shapes[r], dtypes[r]) for r in op.result_names]
             for op in with_bodies(ops)}
    fn = interpret(kernels, ops, inputs, outputs, specs)
    args = [jax.ShapeDtypeStruct(shapes[n], numpy_dtype(dtypes[n])) for n in inputs]
    options = bitwise_options(jax.devices()[0].platform) if mode == "bitwise" else {}
    return jax.jit(fn).lower(*args).compile(
        compiler_options={**options, **(compiler_options or {})})


def xla_total_bytes(compiled: Any) -> int:
    """XLA's own total for an executable: arguments + outputs + temporaries - aliased."""
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
            - m.alias_size_in_bytes)
