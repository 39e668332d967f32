"""Array backends behind one small interface: compile a segment, measure, free, offload.

``JaxBackend`` is the real one: a segment (ops between two runtime decision points)
becomes one ``jax.jit`` function, so XLA fuses inside it, compiled once per shape
signature. ``NumpyBackend`` runs the same lowering eagerly with no compilation, which
keeps large differential test suites fast. Each backend must agree bitwise with itself
between optimized and unoptimized runs; the two need not agree with each other.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Protocol

import numpy as np

from bladec.emit.lower import OutSpec, run_op
from bladec.ir import Op

Segment = Callable[[list], list]
_NP_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "i64": "int64",
              "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool"}


def numpy_dtype(name: str) -> Any:
    if name == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_NP_DTYPES[name])


class Backend(Protocol):
    name: str
    compilations: int
    compile_seconds: float   # wall time spent lowering and compiling, over its life

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[str, OutSpec]) -> Segment: ...
    def put(self, array: np.ndarray) -> Any: ...
    def fetch(self, x: Any) -> np.ndarray: ...
    def nbytes(self, x: Any) -> int: ...
    def delete(self, x: Any) -> None: ...
    def offload(self, x: Any) -> Any: ...
    def reload(self, h: Any) -> Any: ...


def interpret(K: Any, ops: list[Op], inputs: list[str], outputs: list[str],
               specs: dict[str, OutSpec]) -> Callable[..., list]:
    """The segment as a Python function of its inputs (traced by JAX, or run by NumPy)."""
    def fn(*args: Any) -> list:
        env = dict(zip(inputs, args))
        for op in ops:
            results = run_op(K, op, [env[n] for n in op.operands if n in env], specs[id(op)])
            env.update(zip(op.result_names, results))
        return [env[n] for n in outputs]
    return fn


class _NumpyKernels:
    np = np

    @staticmethod
    def materialize(x: Any) -> Any:
        """A C-ordered result: NumPy's sums depend on the layout of their operands, and a
        reloaded copy is always contiguous, so every result is made so."""
        return np.require(x, requirements="C")

    @staticmethod
    def dtype(name: str) -> Any:
        return numpy_dtype(name)

    @staticmethod
    def dot_general(a: Any, b: Any, op: Op) -> Any:
        if a.dtype == numpy_dtype("bf16"):  # einsum has no bf16 loop; JAX sums in f32 too
            f32 = np.float32
            return np.asarray(_einsum(np.einsum, a.astype(f32), b.astype(f32), op)).astype(a.dtype)
        return np.asarray(_einsum(np.einsum, a, b, op))

    @staticmethod
    def scatter_add(base: Any, ids: Any, updates: Any) -> Any:
        """JAX's ``base.at[ids].add(updates)``: ids from -rows to -1 count from the end,
        updates at other ids out of range are dropped (np.add.at would raise)."""
        out = np.array(base, copy=True)
        rows = base.shape[0]
        keep = (ids >= -rows) & (ids < rows)
        np.add.at(out, ids[keep], updates[keep])
        return out

    @staticmethod
    def rng_uniform(seed: int, shape: tuple, dtype: Any) -> Any:
        return np.random.default_rng(seed).random(shape).astype(dtype)


def _einsum(einsum: Callable, a: Any, b: Any, op: Op) -> Any:
    """dot_general as an einsum: batch dims, then a's free dims, then b's free dims."""
    lb, rb = list(op.attrs.get("lhs_batch", ())), list(op.attrs.get("rhs_batch", ()))
    lc, rc = list(op.attrs["lhs_contract"]), list(op.attrs["rhs_contract"])
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la = [""] * a.ndim
    lbl = [""] * b.ndim
    for i, j in zip(lb + lc, rb + rc):
        la[i % a.ndim] = lbl[j % b.ndim] = next(letters)
    for i in range(a.ndim):
        la[i] = la[i] or next(letters)
    for j in range(b.ndim):
        lbl[j] = lbl[j] or next(letters)
    batch = [la[i % a.ndim] for i in lb]
    free_a = [la[i] for i in range(a.ndim) if i not in [x % a.ndim for x in lb + lc]]
    free_b = [lbl[j] for j in range(b.ndim) if j not in [x % b.ndim for x in rb + rc]]
    spec = f"{''.join(la)},{''.join(lbl)}->{''.join(batch + free_a + free_b)}"
    return einsum(spec, a, b)


class NumpyBackend:
    name = "numpy"

    def __init__(self) -> None:
        self.compilations = 0
        self.compile_seconds = 0.0

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec]) -> Segment:
        fn = interpret(_NumpyKernels, ops, inputs, outputs, specs)
        return lambda args: fn(*args)

    def put(self, array: np.ndarray) -> Any:
        return array

    def fetch(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def nbytes(self, x: Any) -> int:
        return int(x.nbytes)

    def delete(self, x: Any) -> None:
        pass  # NumPy frees when the last reference goes; the runtime drops its own

    def offload(self, x: Any) -> Any:
        return np.array(x, copy=True)

    def reload(self, h: Any) -> Any:
        return np.array(h, copy=True)


class _JaxKernels:
    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp
        self.jax = jax
        self.np = jnp

    @staticmethod
    def dtype(name: str) -> Any:
        return numpy_dtype(name)

    def dot_general(self, a: Any, b: Any, op: Op) -> Any:
        lb, rb = tuple(op.attrs.get("lhs_batch", ())), tuple(op.attrs.get("rhs_batch", ()))
        lc, rc = tuple(op.attrs["lhs_contract"]), tuple(op.attrs["rhs_contract"])
        return self.jax.lax.dot_general(a, b, ((lc, rc), (lb, rb)),
                                        precision=self.jax.lax.Precision.HIGHEST)

    @staticmethod
    def scatter_add(base: Any, ids: Any, updates: Any) -> Any:
        return base.at[ids].add(updates)

    def materialize(self, x: Any) -> Any:
        return x

    def rng_uniform(self, seed: int, shape: tuple, dtype: Any) -> Any:
        return self.jax.random.uniform(self.jax.random.key(seed), shape, dtype)


class _BarrierJaxKernels(_JaxKernels):
    """Every op result behind ``lax.optimization_barrier``: no XLA pass can rewrite
    across ops (the algebraic simplifier would turn a reduce of a broadcast into a
    multiply, or a divide by a broadcast into a multiply by a reciprocal, but only when
    both ops land in one segment), so each op computes what it computes alone and the
    results do not depend on where a plan cuts the graph. The simplifier stays on within
    each op: with it off (as before), XLA took 30 s instead of 4 s to compile the 546-op
    Llama training step."""

    def materialize(self, x: Any) -> Any:
        return self.jax.lax.optimization_barrier(x)


class JaxBackend:
    """Segments compiled with ``jax.jit``, cached per (ops, shapes); counts compilations.

    ``fuse=False`` (the default) compiles each segment with XLA's fusion pass off and
    every op's result behind an optimization barrier (:class:`_BarrierJaxKernels`), so
    every op is its own kernel whatever segment it lands in: a plan that splits the graph
    differently computes bit for bit the same (XLA contracts ``a*b + c`` into an FMA
    inside a fused loop, which changes the last bit, and guarding values with an opaque
    identity instead does not stop XLA from moving elementwise ops past broadcasts and
    then rewriting a divide as a multiply). ``fuse=True`` lets XLA fuse for speed;
    results then agree only to rounding across different plans.
    """
    name = "jax"

    def __init__(self, fuse: bool = False, keep_freed_memory: bool | None = None) -> None:
        self.fuse = fuse
        if keep_freed_memory is None:
            keep_freed_memory = os.environ.get("BLADEC_KEEP_FREED_MEMORY", "1") != "0"
        self.keeps_freed_memory = keep_freed_memory and keep_freed_memory_in_process()
        import jax
        self.jax = jax
        self.K = _JaxKernels() if fuse else _BarrierJaxKernels()
        self.compilations = 0
        self.compile_seconds = 0.0
        self._cache: dict[tuple, Any] = {}
        device = jax.devices()[0]
        from jax.sharding import SingleDeviceSharding
        self._device = SingleDeviceSharding(device, memory_kind="device")
        kinds = {m.kind for m in device.addressable_memories()}
        self._host = (SingleDeviceSharding(device, memory_kind="pinned_host")
                      if "pinned_host" in kinds else None)
        self._platform = device.platform
        self._stats_device = device

    def device_peak_bytes(self) -> int | None:
        """The device's own peak bytes in use (``memory_stats()['peak_bytes_in_use']``,
        GPUs report it), or None where the device keeps no statistics (CPU)."""
        stats = self._stats_device.memory_stats()
        peak = (stats or {}).get("peak_bytes_in_use")
        return int(peak) if peak is not None else None

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec]) -> Segment:
        key = (tuple(id(op) for op in ops), tuple(inputs), tuple(outputs),
               tuple(tuple(specs[id(op)]) for op in ops))
        compiled = self._cache.get(key)
        if compiled is None:
            fn = interpret(self.K, ops, inputs, outputs, specs)

            compiled = self._cache[key] = _LazyCompiled(self, fn)
        return compiled

    def executables(self) -> list[Any]:
        """The XLA executables compiled so far (``as_text()`` gives the optimized HLO)."""
        return [c.executable for c in self._cache.values() if c.executable is not None]

    def put(self, array: np.ndarray) -> Any:
        return self.jax.device_put(array, self._device)

    def fetch(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def nbytes(self, x: Any) -> int:
        return int(x.nbytes)

    def delete(self, x: Any) -> None:
        if not x.is_deleted():
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
        pay for fresh memory; later ones show the steady state, as the runs will)."""
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


_BANDWIDTH: dict[str, float] = {}
_MALLOC: list[bool] = []


def keep_freed_memory_in_process() -> bool:
    """glibc: serve big buffers from the heap and keep freed memory in the process.

    By default glibc maps each allocation over its mmap threshold (adaptive, at most
    32 MiB) afresh and unmaps it on free, and trims the heap's top, so a buffer as big
    as a segment's output pays one page fault per 4 KiB on first touch, on every run
    (about 1 ms per MiB on a VM). With the threshold raised and trimming off, freed
    buffers are reused. Process-wide and once; False where there is no glibc. Opt out
    with ``JaxBackend(keep_freed_memory=False)`` or ``BLADEC_KEEP_FREED_MEMORY=0``.
    """
    if not _MALLOC:
        ok = False
        try:
            import ctypes
            libc = ctypes.CDLL("libc.so.6")
            m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
            ok = bool(libc.mallopt(m_mmap_threshold, 1 << 30)
                      and libc.mallopt(m_trim_threshold, (1 << 31) - 1)
                      and libc.mallopt(m_top_pad, 64 << 20))
        except (OSError, AttributeError):
            ok = False
        _MALLOC.append(ok)
    return _MALLOC[0]


class _LazyCompiled:
    """Compiles on the first call, when the argument shapes are known."""

    def __init__(self, backend: "JaxBackend", fn: Callable[..., list]) -> None:
        self.backend = backend
        self.fn = fn
        self.executable: Any = None
        self.temp_bytes = 0

    def __call__(self, args: list) -> list:
        if self.executable is None:
            # the barriers keep algsimp from rewriting across ops (_BarrierJaxKernels)
            options = {} if self.backend.fuse else {"xla_disable_hlo_passes": "fusion"}
            start = time.perf_counter()
            lowered = self.backend.jax.jit(self.fn).lower(*args)
            self.executable = lowered.compile(compiler_options=options)
            self.backend.compile_seconds += time.perf_counter() - start
            self.backend.compilations += 1
            stats = self.executable.memory_analysis()
            self.temp_bytes = int(getattr(stats, "temp_size_in_bytes", 0) or 0)
        return self.executable(*args)


BACKENDS: dict[str, Callable[[], Backend]] = {"jax": JaxBackend, "numpy": NumpyBackend}
