"""Lowerings of the ops that order or pick by value (bladec/ops/selection.py).

JAX has each as one ``lax`` call; on NumPy they are written so that ties and NaNs come
out as JAX has them: stable sorts (NaNs last), the lower index first on ties.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.emit.lower import Kernels, OutSpec, lowering
from bladec.ir import Op

_ACCUMULATE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
               "logsumexp": np.logaddexp}
_LAX_CUMULATIVE = {"sum": "cumsum", "prod": "cumprod", "max": "cummax", "min": "cummin",
                   "logsumexp": "cumlogsumexp"}


def _on_jax(K: Kernels) -> bool:
    return K.np.__name__.startswith("jax")


@lowering("argmax", "argmin")
def _arg(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    fn = K.np.argmax if op.name == "argmax" else K.np.argmin
    return fn(a[0], axis=int(op.attrs["dim"]) % a[0].ndim)


@lowering("cumulative")
def _cumulative(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x = a[0]
    axis = int(op.attrs["dim"]) % x.ndim
    kind = op.attrs.get("kind", "sum")
    reverse = bool(op.attrs.get("reverse", False))
    if _on_jax(K):
        import jax.lax
        return getattr(jax.lax, _LAX_CUMULATIVE[kind])(x, axis=axis, reverse=reverse)
    if reverse:
        x = np.flip(x, axis)
    y = _ACCUMULATE[kind].accumulate(x, axis=axis, dtype=x.dtype)
    return np.flip(y, axis) if reverse else y


@lowering("sort")
def _sort(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    axis = int(op.attrs.get("dim", -1)) % a[0].ndim
    keys = int(op.attrs.get("num_keys", 1))
    if _on_jax(K):
        import jax.lax
        return tuple(jax.lax.sort(tuple(a), dimension=axis, is_stable=True, num_keys=keys))
    if keys == 1:
        order = np.argsort(a[0], axis=axis, kind="stable")
    else:  # lexsort sorts by its last key first
        moved = [np.moveaxis(k, axis, -1) for k in a[:keys]]
        order = np.moveaxis(np.lexsort(moved[::-1], axis=-1), -1, axis)
    return tuple(np.take_along_axis(x, order, axis=axis) for x in a)


@lowering("top_k")
def _top_k(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x = a[0]
    k = int(op.attrs["k"])
    if _on_jax(K):
        import jax.lax
        return tuple(jax.lax.top_k(x, k))
    # descending and stable: sort a key that reverses the order (~x has no overflow)
    key = -x if np.issubdtype(x.dtype, np.floating) or x.dtype == K.dtype("bf16") else ~x
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order
