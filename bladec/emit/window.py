"""Lowerings of the windowed ops (bladec/ops/window.py).

JAX runs ``lax.conv_general_dilated`` and ``lax.reduce_window``; ``select_and_scatter_add``
is the VJP of a max-pooling ``reduce_window`` (what JAX differentiates it to). NumPy
moves the dims to (batch, feature, spatial...), dilates and pads explicitly and takes the
windows as strided views (``sliding_window_view``): exact, at the memory of the windows.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from bladec.emit.lower import Kernels, OutSpec, lowering
from bladec.ir import Op

_IDENTITY = {"sum": 0, "max": -np.inf, "min": np.inf}
_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}


def _on_jax(K: Kernels) -> bool:
    return K.np.__name__.startswith("jax")


def _ints(op: Op, name: str, n: int, default: int) -> tuple[int, ...]:
    return tuple(int(v) for v in op.attrs.get(name, (default,) * n))


def _pairs(op: Op, n: int) -> list[tuple[int, int]]:
    flat = _ints(op, "padding", 2 * n, 0)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]


def _identity(kind: str, dtype: Any) -> Any:
    dt = np.dtype(dtype)
    if kind == "sum":
        return dt.type(0)
    if np.issubdtype(dt, np.integer):
        return np.iinfo(dt).min if kind == "max" else np.iinfo(dt).max
    return dt.type(_IDENTITY[kind])


def _dilate_pad(x: np.ndarray, axes: list[int], dil: list[int], pads: list[tuple[int, int]],
                fill: Any) -> np.ndarray:
    """x with (dil - 1) fill elements between neighbours and lo/hi fill around (negative
    padding cuts), along each of ``axes``."""
    for a, d, (lo, hi) in zip(axes, dil, pads):
        if d > 1 and x.shape[a] > 0:
            shape = list(x.shape)
            shape[a] = (x.shape[a] - 1) * d + 1
            y = np.full(shape, fill, x.dtype)
            index = [slice(None)] * x.ndim
            index[a] = slice(None, None, d)
            y[tuple(index)] = x
            x = y
        cut = [slice(None)] * x.ndim
        cut[a] = slice(max(-lo, 0), x.shape[a] - max(-hi, 0))
        x = x[tuple(cut)]
        width = [(0, 0)] * x.ndim
        width[a] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width, constant_values=fill)
    return x


def _windows(x: np.ndarray, axes: list[int], window: list[int], strides: list[int],
             dil: list[int]) -> np.ndarray:
    """Strided windows along ``axes``; the window dims are appended (in axes order)."""
    spans = [(k - 1) * d + 1 for k, d in zip(window, dil)]
    v = sliding_window_view(x, spans, axis=axes)
    index = [slice(None)] * x.ndim + [slice(None, None, d) for d in dil]
    for a, s in zip(axes, strides):
        index[a] = slice(None, None, s)
    return v[tuple(index)]


@lowering("conv")
def _conv(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    lhs, rhs = a
    r = lhs.ndim
    sp = r - 2
    ls, rs, os = (tuple(int(v) for v in op.attrs[n]) for n in ("lhs_spec", "rhs_spec",
                                                               "out_spec"))
    strides, ld, rd = (_ints(op, n, sp, 1) for n in ("strides", "lhs_dilation", "rhs_dilation"))
    pads = _pairs(op, sp)
    fg, bg = int(op.attrs.get("feature_groups", 1)), int(op.attrs.get("batch_groups", 1))
    if _on_jax(K):
        import jax.lax
        dn = jax.lax.ConvDimensionNumbers(ls, rs, os)
        return jax.lax.conv_general_dilated(lhs, rhs, strides, pads, ld, rd, dn, fg, bg)
    x = np.transpose(lhs, ls)          # N, C, spatial...
    k = np.transpose(rhs, rs)          # O, I, spatial...
    wide = np.float32 if x.dtype.itemsize < 4 else x.dtype
    x, k = x.astype(wide), k.astype(wide)
    axes = list(range(2, r))
    x = _dilate_pad(x, axes, list(ld), pads, 0)
    k = _dilate_pad(k, axes, list(rd), [(0, 0)] * sp, 0)
    win = _windows(x, axes, list(k.shape[2:]), list(strides), [1] * sp)  # N,C,out...,k...
    letters = "abcdefgh"[:sp]
    kl = "ijklmnop"[:sp]
    spec = f"nc{letters}{kl},oc{kl}->no{letters}"
    n, c, o = x.shape[0], x.shape[1], k.shape[0]
    if bg > 1:  # batch group g pairs lhs batch slice g with output features slice g
        nb, ob = n // bg, o // bg
        parts = [np.einsum(spec, win[g * nb:(g + 1) * nb], k[g * ob:(g + 1) * ob])
                 for g in range(bg)]
        y = np.concatenate(parts, axis=1)
    else:
        cg, og = c // fg, o // fg
        parts = [np.einsum(spec, win[:, g * cg:(g + 1) * cg], k[g * og:(g + 1) * og])
                 for g in range(fg)]
        y = np.concatenate(parts, axis=1) if fg > 1 else parts[0]
    return np.transpose(y, np.argsort(os)).astype(lhs.dtype)


@lowering("reduce_window")
def _reduce_window(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x = a[0]
    r = x.ndim
    kind = op.attrs.get("kind", "sum")
    window = _ints(op, "window", r, 1)
    strides, base, dil = (_ints(op, n, r, 1) for n in ("strides", "base_dilation",
                                                        "window_dilation"))
    pads = _pairs(op, r)
    if _on_jax(K):
        import jax.lax
        init = _identity(kind, x.dtype)
        fn = {"sum": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[kind]
        return jax.lax.reduce_window(x, init.item(), fn, window, strides, pads, base, dil)
    axes = list(range(r))
    y = _dilate_pad(x, axes, list(base), pads, _identity(kind, x.dtype))
    win = _windows(y, axes, list(window), list(strides), list(dil))
    return _REDUCE[kind](win, axis=tuple(range(r, 2 * r))).astype(x.dtype)


@lowering("select_and_scatter_add")
def _select_and_scatter_add(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    source, x = a
    r = x.ndim
    window = _ints(op, "window", r, 1)
    strides = _ints(op, "strides", r, 1)
    pads = _pairs(op, r)
    if _on_jax(K):
        import jax
        import jax.lax

        def pool(v: Any) -> Any:
            # a Python scalar init: JAX recognises the max monoid and can differentiate it
            return jax.lax.reduce_window(v, _identity("max", v.dtype).item(), jax.lax.max,
                                         window, strides, pads)
        return jax.vjp(pool, x)[1](source)[0]
    axes = list(range(r))
    padded = _dilate_pad(x, axes, [1] * r, pads, _identity("max", x.dtype))
    win = _windows(padded, axes, list(window), list(strides), [1] * r)
    flat = win.reshape(win.shape[:r] + (-1,))
    pick = np.argmax(flat, axis=-1)                       # the first largest
    offsets = np.unravel_index(pick, window)
    grid = np.indices(pick.shape)
    where = tuple(grid[j] * strides[j] + offsets[j] for j in range(r))
    result = np.zeros(padded.shape, np.float64 if source.dtype.itemsize < 4 else source.dtype)
    np.add.at(result, where, source)
    cut = tuple(slice(max(lo, 0), max(lo, 0) + x.shape[j]) for j, (lo, _) in enumerate(pads))
    return result[cut].astype(x.dtype)
