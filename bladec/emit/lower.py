"""Each op of the registry as array code, written once over a NumPy-like namespace.

``K`` is a backend's kernel set: ``K.np`` is ``numpy`` or ``jax.numpy``, and the few
operations whose spelling differs between the two (``dot_general``, ``scatter_add``,
random numbers, dtypes) are methods of ``K``. Result shapes come from the runtime, which
knows every dim once the symbols are bound, so reshapes and broadcasts are exact.

Where NumPy and JAX differ on an input (an index out of range, an integer to a negative
power, a negative axis), the lowering spells out JAX's meaning so that both backends
accept the same listings and compute the same values; where JAX has no meaning for an
input the verifier refuses the listing (bladec/ops).
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np

from bladec.errors import BladecError
from bladec.ir import FLOAT_DTYPES, INT_RANGES, Op
from bladec.ops.shape import WHOLE

Shape = tuple[int, ...]
OutSpec = list[tuple[Shape, str]]


class Kernels(Protocol):
    np: Any

    def dtype(self, name: str) -> Any: ...
    def dot_general(self, a: Any, b: Any, op: Op, accumulate: str) -> Any: ...
    def scatter_add(self, base: Any, ids: Any, updates: Any) -> Any: ...
    def rng_uniform(self, seed: int, shape: Shape, dtype: Any) -> Any: ...
    def materialize(self, x: Any) -> Any: ...


Lowering = Callable[[Kernels, Op, list, OutSpec], Any]
LOWERINGS: dict[str, Lowering] = {}


def lowering(*names: str) -> Callable[[Lowering], Lowering]:
    def deco(fn: Lowering) -> Lowering:
        for n in names:
            LOWERINGS[n] = fn
        return fn
    return deco


_UNARY = {"neg": "negative", "exp": "exp", "log": "log", "sqrt": "sqrt", "tanh": "tanh",
          "abs": "abs", "sin": "sin", "cos": "cos", "square": "square"}
_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
           "max": "maximum", "min": "minimum", "pow": "power",
           "bit_and": "bitwise_and", "bit_or": "bitwise_or", "bit_xor": "bitwise_xor"}
_COMPARE = {"EQ": "equal", "NE": "not_equal", "LT": "less", "LE": "less_equal",
            "GT": "greater", "GE": "greater_equal"}


@lowering(*_UNARY)
def _unary(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _UNARY[op.name])(a[0])


@lowering(*_BINARY)
def _binary(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _BINARY[op.name])(a[0], a[1])


@lowering("div")
def _div(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Integers as XLA divides them: truncated toward zero, a/0 is -1 (all ones when
    unsigned). A true division in floats would round large values (in f32 on JAX, f64
    on NumPy) and turn a/0 into inf."""
    x, y = a
    if out[0][1] not in INT_RANGES or out[0][1] == "i1":
        return K.np.divide(x, y)
    zero = y == 0
    safe = K.np.where(zero, K.np.ones_like(y), y)
    q = K.np.floor_divide(x, safe)
    r = x - q * safe
    q = K.np.where((r != 0) & ((x < 0) != (safe < 0)), q + 1, q)  # floor to truncation
    return K.np.where(zero, K.np.full_like(x, INT_RANGES[out[0][1]][1] if
                                            INT_RANGES[out[0][1]][0] == 0 else -1), q)


@lowering("pow")
def _pow(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Integers to a negative power are ``trunc(1 / x^-y)``: 1 for x = 1, +-1 for x = -1,
    else 0 (NumPy refuses them, and JAX's integer power gives no usable value)."""
    x, y = a
    if INT_RANGES.get(out[0][1], (0, 0))[0] == 0:  # floats, and integers with no negatives
        return K.np.power(x, y)
    negative = y < 0
    whole = K.np.power(x, K.np.where(negative, K.np.zeros_like(y), y))
    one = K.np.ones_like(x)
    odd = (y % 2) != 0
    inverse = K.np.where(x == 1, one, K.np.where(x == -1, K.np.where(odd, -one, one),
                                                 K.np.zeros_like(x)))
    return K.np.where(negative, inverse, whole)


@lowering("rsqrt")
def _rsqrt(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.reciprocal(K.np.sqrt(a[0]))


@lowering("logistic")
def _logistic(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    one = K.np.ones((), a[0].dtype)
    return K.np.reciprocal(one + K.np.exp(K.np.negative(a[0])))


@lowering("copy")
def _copy(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.array(a[0], copy=True)


@lowering("stop_gradient")
def _stop_gradient(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """A copy, through the backend's own stop where it has one (JAX: so that
    differentiating a listing's lowering, as the adjoint tests do, stops there too)."""
    stop = getattr(K, "stop_gradient", None)
    x = K.np.array(a[0], copy=True)
    return stop(x) if stop is not None else x


@lowering("integer_pow")
def _integer_pow(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """x^n by repeated squaring, as ``lax.integer_pow`` does (the same multiplies in the
    same order, so both backends round alike): at most two multiplies per bit of n, where
    n multiplies one by one hung on n = 10^12 (and JAX's tracing on 10^6)."""
    n = int(op.attrs["exponent"])
    if n == 0:
        return K.np.ones_like(a[0])
    x, acc, k = a[0], None, abs(n)
    while k:
        if k & 1:
            acc = x if acc is None else acc * x
        k >>= 1
        if k:
            x = x * x
    return acc if n > 0 else K.np.reciprocal(acc)


@lowering("compare")
def _compare(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _COMPARE[op.attrs["direction"]])(a[0], a[1])


@lowering("select")
def _select(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.where(a[0], a[1], a[2])


@lowering("convert")
def _convert(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return _cast(K, a[0], out[0][1])


def _cast(K: Kernels, x: Any, dtype: str) -> Any:
    """``x`` as ``dtype``; a float to an integer type as XLA converts it: truncated,
    saturated at the type's ends, NaN to 0 (NumPy's cast of an out-of-range float is
    undefined: -1.0 to u8 gives 255 there, 0 in JAX)."""
    want = K.dtype(dtype)
    if dtype not in INT_RANGES or dtype == "i1" or not any(
            x.dtype == K.dtype(f) for f in FLOAT_DTYPES):
        return x.astype(want)
    lo, hi = INT_RANGES[dtype]
    inside = (x > float(lo)) & (x < float(hi))  # float(hi) rounds up to 2^31, 2^63: outside
    whole = K.np.where(inside, x, K.np.zeros_like(x)).astype(want)
    info = K.np.iinfo(whole.dtype)  # what the backend made of `want` (JAX: i64 as i32)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    return K.np.where(x >= float(hi), K.np.full_like(whole, hi),
                      K.np.where(x <= float(lo), K.np.full_like(whole, lo), whole))


@lowering("broadcast", "broadcast_in_dim")
def _broadcast(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    shape = out[0][0]
    x = a[0]
    dims = op.attrs.get("dims")
    if dims is None:  # NumPy's rule: trailing dims line up
        _check_broadcast(op, tuple(x.shape), tuple(shape))
        return K.np.broadcast_to(x, shape)
    dims = [d % len(shape) for d in dims]
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = K.np.transpose(x, order) if order != list(range(len(dims))) else x
    return K.np.broadcast_to(K.np.reshape(x, tuple(expanded)), shape)


def _check_broadcast(op: Op, have: Shape, want: Shape) -> None:
    """The run-time half of the verifier's check (``run_rule`` of ``broadcast``): with the
    symbols bound, each operand dim is 1 or the result's, else a located error."""
    fits = len(have) <= len(want) and all(
        h in (1, w) for h, w in zip(reversed(have), reversed(want)))
    if not fits:
        raise BladecError(f"'{op.name}': operand shape {list(have)} can not broadcast to "
                          f"{list(want)}: without 'dims', trailing dims line up and each "
                          "operand dim must be 1 or equal to the result's", op.loc)


@lowering("reshape", "dynamic_reshape")
def _reshape(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.reshape(a[0], out[0][0])


@lowering("transpose")
def _transpose(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.transpose(a[0], tuple(op.attrs["perm"]))


@lowering("concatenate")
def _concatenate(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.concatenate(a, axis=int(op.attrs["dim"]))


@lowering("slice")
def _slice(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    start, limit = op.attrs["start"], op.attrs["limit"]
    strides = op.attrs.get("strides", (1,) * len(start))
    return a[0][tuple(slice(s, None if e == WHOLE else e, k)
                      for s, e, k in zip(start, limit, strides))]


@lowering("iota")
def _iota(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    shape, dtype = out[0]
    d = int(op.attrs["dim"]) % len(shape)
    idx = K.np.arange(shape[d], dtype=K.dtype(dtype))
    view = [1] * len(shape)
    view[d] = shape[d]
    return K.np.broadcast_to(K.np.reshape(idx, tuple(view)), shape)


@lowering("constant")
def _constant(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """The value as a Python number of the element type's kind (the verifier checked its
    range): jnp.full refuses a 30-digit integer as bf16, and NumPy reads it as int64."""
    shape, dtype = out[0]
    value = op.attrs["value"]
    value = float(value) if dtype in FLOAT_DTYPES else bool(value) if dtype == "i1" \
        else int(value)
    return K.np.full(shape, value, dtype=K.dtype(dtype))


@lowering("rng_uniform")
def _rng(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    shape, dtype = out[0]
    return K.rng_uniform(int(op.attrs["seed"]), shape, K.dtype(dtype))


@lowering("dot")
def _dot(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Products summed in the result's element type (``accumulate``), which may be a wider
    float than the operands' (bf16 operands, f32 result: the ``amp`` pass's contractions)."""
    lhs, rhs = a
    contract = Op("dot_general", [], [], {"lhs_contract": (lhs.ndim - 1,), "rhs_contract": (0,)})
    return K.dot_general(lhs, rhs, contract, out[0][1])


@lowering("dot_general")
def _dot_general(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Dims counted from the end (``-1``) as their positions: lax.dot_general takes only
    non-negative ones."""
    ranks = {"lhs": a[0].ndim, "rhs": a[1].ndim}
    attrs = {k: tuple(d % ranks[k[:3]] for d in v) for k, v in op.attrs.items()}
    return K.dot_general(a[0], a[1], Op(op.name, [], [], attrs, loc=op.loc), out[0][1])


_REDUCERS = {"sum": "sum", "max": "max", "min": "min", "prod": "prod"}


@lowering("reduce")
def _reduce(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x = a[0]
    dims = op.attrs.get("dims")
    if dims is None:
        dims = tuple(range(len(out[0][0]), x.ndim))
    axis = tuple(d % x.ndim for d in dims)
    kind = op.attrs.get("kind", "sum")
    if kind in ("max", "min") and any(x.shape[d] == 0 for d in axis):
        # an empty max or min is its identity, as XLA's reduce has it (NumPy and jnp
        # refuse it); only for empty axes, so that no other result changes
        return getattr(K.np, _REDUCERS[kind])(x, axis=axis, initial=_identity(kind, x.dtype))
    return getattr(K.np, _REDUCERS[kind])(x, axis=axis)


def _identity(kind: str, dtype: Any) -> Any:
    """The identity of max (the lowest value of ``dtype``) or min (the highest)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return kind == "min"
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


@lowering("gather")
def _gather(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """JAX's ``table[ids]``: an id from -rows to -1 counts from the end, and an id still
    out of range is clamped to the first or last row (NumPy would raise; jnp.take's
    default would fill with NaN)."""
    table, ids = a
    ids = K.np.where(ids < 0, ids + table.shape[0], ids)
    return K.np.take(table, ids, axis=0, mode="clip")


@lowering("scatter_add")
def _scatter_add(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.scatter_add(a[0], a[1], a[2])


@lowering("reshard", "all_gather", "shard_slice", "all_to_all", "all_permute", "all_reduce")
def _collective(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """On whole arrays (one device, or the NumPy backend) a collective is the identity:
    it changes which device holds which block, not the array. bladec/emit/shard.py
    runs them as collectives on a mesh."""
    return a[0]


def run_op(K: Kernels, op: Op, args: list, out: OutSpec) -> list:
    """Evaluate one op; results are cast to their declared element types."""
    result = LOWERINGS[op.name](K, op, args, out)
    results = list(result) if isinstance(result, tuple) else [result]
    fixed = []
    for value, (shape, dtype) in zip(results, out):
        if value.dtype != K.dtype(dtype):
            value = _cast(K, value, dtype)
        fixed.append(K.materialize(value))
    return fixed

