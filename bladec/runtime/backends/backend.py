"""Array backends behind one small interface: compile a segment, measure, free, offload.

``JaxBackend`` (jax_backend.py) is the real one: a segment (ops between two runtime
decision points) becomes one ``jax.jit`` function, so XLA fuses inside it, compiled once
per shape signature. ``NumpyBackend`` runs the same lowering eagerly with no
compilation, which keeps large differential test suites fast. Each backend must agree
bitwise with itself between optimized and unoptimized runs in its bitwise mode; the two
need not agree with each other.

Every segment says how much memory it takes beside the arrays the runtime holds
(:class:`SegmentMemory`): for JAX, the compiled executable's own memory analysis; for
NumPy, the arrays its interpretation allocates. The executor adds them up into the
device peak that a limit promises (DESIGN.md section 4).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from bladec.analysis.liveness import body_peak, is_loop
from bladec.emit.loop import numpy_scan, numpy_while, run_loop
from bladec.emit.lower import OutSpec, run_op
from bladec.ir import DTYPE_BYTES, Op
from bladec.ops.registry import remade
from bladec.ops.loop import with_bodies

ArgSpec = tuple[tuple[int, ...], str]   # an argument's shape and dtype name
_NP_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "i64": "int64",
              "i32": "int32", "i16": "int16", "i8": "int8", "u32": "uint32", "u8": "uint8",
              "i1": "bool"}


# Bytes per second copied between the device and the host where a backend measures
# nothing (the planner's CostModel default; JaxBackend measures its own).
DEFAULT_COPY_BANDWIDTH = 8e9


def numpy_dtype(name: str) -> Any:
    if name == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_NP_DTYPES[name])


@dataclass(frozen=True)
class SegmentMemory:
    """What running a segment allocates beside its arguments: its outputs that do not
    reuse a donated argument's buffer, and its temporaries."""
    output_bytes: int
    temp_bytes: int


class Segment(Protocol):
    def __call__(self, args: list) -> list: ...
    def memory(self) -> SegmentMemory: ...   # JAX compiles the segment to know


class Backend(Protocol):
    name: str
    accounting: str          # what its device figure counts, as messages and reports say
    compilations: int
    compile_seconds: float   # wall time spent lowering and compiling, over its life
    cache_loads: int         # of the compilations, executables loaded from a persistent
                             # compilation cache instead of compiled

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec], args: list[ArgSpec],
                donate: tuple[int, ...] = (), xla_order: bool = False,
                whole_step: bool = False) -> Segment:
        """``xla_order``: let the compiler schedule the segment's ops itself where the
        backend otherwise holds them in the listing's order (JaxBackend.enforce_order);
        backends that hold no order ignore it. ``whole_step``: the plan has no cut, so
        this segment is the whole step: compiled with ``jax.jit``'s own options
        (JaxBackend.compile_options are for the segments of cut plans), except in
        bitwise mode, where every executable takes the same options (XLA:CPU's two
        fusion emitters round some ops differently, and plans must agree bit for bit)."""
    def put(self, array: np.ndarray) -> Any: ...
    def fetch(self, x: Any) -> np.ndarray: ...
    def nbytes(self, x: Any) -> int: ...
    def delete(self, x: Any) -> None: ...
    def offload(self, x: Any) -> Any: ...
    def reload(self, h: Any) -> Any: ...


def interpret(K: Any, ops: list[Op], inputs: list[str], outputs: list[str],
               specs: dict[str, OutSpec]) -> Callable[..., list]:
    """The segment as a Python function of its inputs (traced by JAX, or run by NumPy);
    a value is dropped after its last use inside, so NumPy frees it there. Kernels with
    an ``after(operands, previous)`` hook see each op's operands with the previous op's
    results, to hold the ops in this order (the JAX backend's enforced order); an op
    that reads nothing (a constant, an iota) has no operands to hold back, so its
    results go through the kernels' ``made_after(results, previous)`` instead.

    Under that hook a cheap expanding op (``OpDef.expanding``: a broadcast, a splat
    constant, an iota) whose result the segment does not return is not made where the
    listing puts it: each op that reads it makes it again from its operands after the
    barrier, inside its own part of the executable, where XLA fuses it. Made in its
    place, behind the barrier, it was a whole array: on the small Llama step at 8x448
    each broadcast or constant of the attention scores' shape held 24.5 MiB that the
    fused step never allocates."""
    after = getattr(K, "after", None)
    made_after = getattr(K, "made_after", None)
    # (not loops' bodies' ops, nor one the segment returns)
    deferred = remade(ops, set(outputs)) if after is not None else {}
    last = _last_reads(ops, outputs, deferred)

    def body(inner: list[Op], ins: list[str], outs: list[str]) -> Callable[..., list]:
        return interpret(K, inner, ins, outs, specs)

    def fn(*args: Any) -> list:
        env = dict(zip(inputs, args))
        previous: list = []
        for i, op in enumerate(ops):
            if op.result_names and op.result_names[0] in deferred:
                continue
            reads = made_from(op.operands, deferred) if deferred else op.operands
            operands = [env[n] for n in reads if n in env]
            if after is not None and previous:
                operands = after(operands, previous)
            if deferred:
                local = dict(zip([n for n in reads if n in env], operands))
                operands = [_remake(K, n, local, deferred, specs, made_after, previous)
                            for n in op.operands if n in local or n in deferred]
            if is_loop(op):
                results = run_loop(K, op, operands, specs[id(op)], body)
            else:
                results = run_op(K, op, operands, specs[id(op)])
            results = _in_place(op, results, made_after, previous)
            env.update(zip(op.result_names, results))
            previous = list(results)
            for n in last.get(i, ()):
                env.pop(n, None)
        return [env[n] for n in outputs]
    return fn


def _in_place(op: Op, results: list, made_after: Any, previous: list) -> list:
    """``op``'s results, held after the previous op's where ``op`` reads nothing (the
    kernels' ``made_after``): nothing else holds it in the listing's order."""
    if made_after is not None and previous and not op.operands:
        return made_after(results, previous)
    return results


def made_from(names: list[str], deferred: dict[str, Op]) -> list[str]:
    """``names`` with each deferred value replaced by what it is made from, in order,
    once each."""
    out: dict[str, None] = {}
    for n in names:
        if n in deferred:
            out.update(dict.fromkeys(made_from(deferred[n].operands, deferred)))
        else:
            out[n] = None
    return list(out)


def _remake(K: Any, name: str, local: dict[str, Any], deferred: dict[str, Op],
            specs: dict, made_after: Any, previous: list) -> Any:
    """The value ``name`` for one reader: from ``local`` (its operands after the
    barrier), or a deferred op made again from them (one that reads nothing after the
    previous op's results, as :meth:`made_after` does in place)."""
    if name in local:
        return local[name]
    op = deferred[name]
    args = [_remake(K, n, local, deferred, specs, made_after, previous)
            for n in op.operands if n in local or n in deferred]
    value = _in_place(op, run_op(K, op, args, specs[id(op)]), made_after, previous)
    local[name] = value[0]
    return value[0]


def segment_key(ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec], args: list[ArgSpec], donate: tuple[int, ...]
                ) -> tuple:
    """What a segment computes, without its values' names: each op's name, attributes,
    result shapes and dtypes, and operands as positions (the k-th argument, the j-th
    value made inside), with the arguments' shapes, the outputs and the donation. Two
    segments with one key are one function of their arguments (:func:`interpret` reads
    names only to wire the ops), so they share one executable: a model's repeated
    layers, cut alike, compile once."""
    where: dict[str, tuple] = {n: ("arg", k) for k, n in enumerate(inputs)}
    made = 0
    body = []
    for op in ops:
        if op.regions:  # ops carry no regions inside a segment; keyed by identity if so
            return ("op", id(op), tuple(inputs), tuple(outputs), tuple(args), donate)
        refs = tuple(where.get(n, ("absent",)) for n in op.operands)
        body.append((op.name, repr(sorted(op.attrs.items())), refs,
                     tuple(tuple(spec) for spec in specs[id(op)])))
        for r in op.result_names:
            where[r] = ("made", made)
            made += 1
    return (tuple(body), tuple(where.get(n, ("absent",)) for n in outputs), tuple(args),
            tuple(donate))


def _last_reads(ops: list[Op], outputs: list[str], deferred: dict[str, Op] | None = None
                ) -> dict[int, list[str]]:
    """Op index -> the values (not outputs) whose last read is that op (a deferred
    value's reads are of what it is made from: :func:`interpret`)."""
    keep = set(outputs)
    last: dict[str, int] = {}
    for i, op in enumerate(ops):
        for n in made_from(op.operands, deferred or {}):
            last[n] = i
        for r in op.result_names:
            last.setdefault(r, i)
    out: dict[int, list[str]] = {}
    for n, i in last.items():
        if n not in keep:
            out.setdefault(i, []).append(n)
    return out


def spec_bytes(shape: tuple[int, ...], dtype: str) -> int:
    return int(np.prod(shape, dtype=np.int64)) * DTYPE_BYTES[dtype]


def interpreted_memory(ops: list[Op], inputs: list[str], outputs: list[str],
                       specs: dict[int, OutSpec]) -> SegmentMemory:
    """What :func:`interpret` allocates when run eagerly, beside its arguments: its
    outputs, and the most bytes alive at once of outputs made so far and other results
    not yet dropped (each is dropped after its last read); the part over the outputs
    is reported as temporaries, so that outputs plus temporaries is that most."""
    size = {r: spec_bytes(*spec) for op in with_bodies(ops)
            for r, spec in zip(op.result_names, specs[id(op)])}
    last = _last_reads(ops, outputs)
    live = peak = 0
    for i, op in enumerate(ops):
        live += sum(size[r] for r in op.result_names)
        peak = max(peak, live + body_peak(op, size.__getitem__, 0, max))
        live -= sum(size[n] for n in last.get(i, ()) if n in size)
    out = sum(size[n] for n in dict.fromkeys(outputs) if n in size)
    return SegmentMemory(out, max(peak - out, 0))


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
    def dot_general(a: Any, b: Any, op: Op, accumulate: str) -> Any:
        """bf16 and f16 operands are summed in f32 (einsum has no bf16 loop; JAX sums in
        f32 too), then rounded to the result type ``accumulate``."""
        if a.dtype in (numpy_dtype("bf16"), np.float16):
            f32 = np.float32
            return np.asarray(_einsum(np.einsum, a.astype(f32), b.astype(f32), op)
                              ).astype(numpy_dtype(accumulate))
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
        """JAX's draw (``jax.random.uniform`` from ``jax.random.key(seed)``, in the
        dtype asked for), made on the host CPU: both backends give the same numbers, as
        for every other op."""
        import jax
        with jax.default_device(jax.devices("cpu")[0]):
            return np.asarray(jax.random.uniform(jax.random.key(seed), shape, dtype))

    @staticmethod
    def scan(step: Callable, carry: list, xs: list, reverse: bool, ys: OutSpec
             ) -> tuple[list, list]:
        return numpy_scan(np, numpy_dtype, step, carry, xs, reverse, ys)

    @staticmethod
    def while_loop(cond: Callable, body: Callable, carry: list) -> list:
        return numpy_while(cond, body, carry)


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
    # no XLA here: a segment's figure is what its kernels allocate, run op by op
    accounting = ("held arrays plus what each segment's NumPy kernels allocate while it "
                  "runs (its outputs and the intermediates alive at once, op by op)")

    def __init__(self) -> None:
        self.compilations = 0
        self.compile_seconds = 0.0
        self.cache_loads = 0

    def segment(self, ops: list[Op], inputs: list[str], outputs: list[str],
                specs: dict[int, OutSpec], args: list[ArgSpec],
                donate: tuple[int, ...] = (), xla_order: bool = False,
                whole_step: bool = False) -> Segment:
        return _NumpySegment(interpret(_NumpyKernels, ops, inputs, outputs, specs),
                             interpreted_memory(ops, inputs, outputs, specs))

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


class _NumpySegment:
    def __init__(self, fn: Callable[..., list], memory: SegmentMemory) -> None:
        self.fn, self._memory = fn, memory

    def __call__(self, args: list) -> list:
        return self.fn(*args)

    def memory(self) -> SegmentMemory:
        return self._memory

