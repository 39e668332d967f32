"""Each op of the registry as array code, written once over a NumPy-like namespace.

``K`` is a backend's kernel set: ``K.np`` is ``numpy`` or ``jax.numpy``, and the few
operations whose spelling differs between the two (``dot_general``, ``scatter_add``,
random numbers, dtypes) are methods of ``K``. Result shapes come from the runtime, which
knows every dim once the symbols are bound, so reshapes and broadcasts are exact.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np

from bladec.ir import Op

Shape = tuple[int, ...]
OutSpec = list[tuple[Shape, str]]


class Kernels(Protocol):
    np: Any

    def dtype(self, name: str) -> Any: ...
    def dot_general(self, a: Any, b: Any, op: Op) -> Any: ...
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
           "max": "maximum", "min": "minimum", "pow": "power"}
_COMPARE = {"EQ": "equal", "NE": "not_equal", "LT": "less", "LE": "less_equal",
            "GT": "greater", "GE": "greater_equal"}


@lowering(*_UNARY)
def _unary(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _UNARY[op.name])(a[0])


@lowering(*_BINARY)
def _binary(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _BINARY[op.name])(a[0], a[1])


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


@lowering("integer_pow")
def _integer_pow(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    n = int(op.attrs["exponent"])
    result = K.np.ones_like(a[0])
    for _ in range(abs(n)):
        result = result * a[0]
    return result if n >= 0 else K.np.reciprocal(result)


@lowering("compare")
def _compare(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _COMPARE[op.attrs["direction"]])(a[0], a[1])


@lowering("select")
def _select(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.np.where(a[0], a[1], a[2])


@lowering("convert")
def _convert(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return a[0].astype(K.dtype(out[0][1]))


@lowering("broadcast", "broadcast_in_dim")
def _broadcast(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    shape = out[0][0]
    x = a[0]
    dims = op.attrs.get("dims")
    if dims is None:  # NumPy's rule: trailing dims line up
        return K.np.broadcast_to(x, shape)
    dims = [d % len(shape) for d in dims]
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = K.np.transpose(x, order) if order != list(range(len(dims))) else x
    return K.np.broadcast_to(K.np.reshape(x, tuple(expanded)), shape)


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
    return a[0][tuple(slice(s, e, k) for s, e, k in zip(start, limit, strides))]


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
    shape, dtype = out[0]
    return K.np.full(shape, op.attrs["value"], dtype=K.dtype(dtype))


@lowering("rng_uniform")
def _rng(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    shape, dtype = out[0]
    return K.rng_uniform(int(op.attrs["seed"]), shape, K.dtype(dtype))


@lowering("dot")
def _dot(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    lhs, rhs = a
    contract = Op("dot_general", [], [], {"lhs_contract": (lhs.ndim - 1,), "rhs_contract": (0,)})
    return K.dot_general(lhs, rhs, contract)


@lowering("dot_general")
def _dot_general(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.dot_general(a[0], a[1], op)


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
    return K.np.take(a[0], a[1], axis=0)


@lowering("scatter_add")
def _scatter_add(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return K.scatter_add(a[0], a[1], a[2])


def run_op(K: Kernels, op: Op, args: list, out: OutSpec) -> list:
    """Evaluate one op; results are cast to their declared element types."""
    result = LOWERINGS[op.name](K, op, args, out)
    results = list(result) if isinstance(result, tuple) else [result]
    fixed = []
    for value, (shape, dtype) in zip(results, out):
        want = K.dtype(dtype)
        if value.dtype != want:
            value = value.astype(want)
        fixed.append(K.materialize(value))
    return fixed
