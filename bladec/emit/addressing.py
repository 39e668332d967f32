"""Lowerings of ``gather_slices`` and ``scatter_slices`` (bladec/ops/indexing/addressing.py).

On JAX they are ``lax.gather`` and ``lax.scatter*`` with the same dimension numbers. On
NumPy each result element's operand position is spelled out as index arrays (starts plus
offsets within the slice, batching dims paired with the indices' own positions), which
costs index memory in proportion to the result, and is exact.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.emit.lower import Kernels, OutSpec, lowering
from bladec.ir import Op

_LAX_MODE = {"clip": "clip", "fill": "fill", "promise": "promise_in_bounds"}
_SCATTER = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul", "min": "scatter_min",
            "max": "scatter_max"}
_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _ints(op: Op, name: str) -> tuple[int, ...]:
    return tuple(int(d) for d in op.attrs.get(name, ()))


def _fill_value(dtype: Any) -> Any:
    """JAX's default fill of an out-of-range gather: NaN, or the lowest integer."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return True
    if np.issubdtype(dt, np.integer):
        return np.iinfo(dt).min
    return np.nan


def _positions(shape: tuple[int, ...], idx: np.ndarray, smap: tuple[int, ...],
               sizes: list[int], ob: tuple[int, ...], ib: tuple[int, ...],
               clip: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """Per operand dim, an index array of shape ``batch + sizes``; and where a start index
    was out of range (before clamping)."""
    batch = idx.shape[:-1]
    nb, r = len(batch), len(shape)
    starts = [np.zeros(batch, np.int64) for _ in range(r)]
    bad = np.zeros(batch, bool)
    for k, d in enumerate(smap):
        s = idx[..., k].astype(np.int64)
        hi = shape[d] - sizes[d]
        bad |= (s < 0) | (s > hi)
        starts[d] = np.clip(s, 0, max(hi, 0)) if clip else np.where((s < 0) | (s > hi), 0, s)
    for o, i in zip(ob, ib):
        view = [1] * nb
        view[i] = batch[i]
        starts[o] = np.broadcast_to(np.arange(batch[i]).reshape(view), batch)
    full = tuple(batch) + tuple(sizes)
    out = []
    for d in range(r):
        within = np.arange(sizes[d]).reshape([1] * (nb + d) + [sizes[d]] + [1] * (r - d - 1))
        out.append(np.broadcast_to(starts[d].reshape(batch + (1,) * r) + within, full))
    return out, bad


@lowering("gather_slices")
def _gather(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x, idx = a
    sizes = [x.shape[d] if n == -1 else n for d, n in enumerate(_ints(op, "slice_sizes"))]
    mode = op.attrs.get("mode", "clip")
    collapsed, ob = _ints(op, "collapsed_slice_dims"), _ints(op, "operand_batching_dims")
    if K.np.__name__.startswith("jax"):
        import jax.lax
        dn = jax.lax.GatherDimensionNumbers(
            offset_dims=_ints(op, "offset_dims"), collapsed_slice_dims=collapsed,
            start_index_map=_ints(op, "start_index_map"), operand_batching_dims=ob,
            start_indices_batching_dims=_ints(op, "start_indices_batching_dims"))
        fill = op.attrs.get("fill")
        return jax.lax.gather(x, idx, dn, tuple(sizes), mode=_LAX_MODE[mode],
                              fill_value=fill if mode == "fill" else None)
    pos, bad = _positions(x.shape, idx, _ints(op, "start_index_map"), sizes, ob,
                          _ints(op, "start_indices_batching_dims"), mode != "fill")
    g = x[tuple(pos)]
    nb = idx.ndim - 1
    if mode == "fill":
        fill = op.attrs.get("fill", _fill_value(x.dtype))
        g = np.where(bad.reshape(bad.shape + (1,) * x.ndim), np.asarray(fill, x.dtype), g)
    drop = [nb + d for d in sorted(set(collapsed) | set(ob))]
    g = g.reshape([n for j, n in enumerate(g.shape) if j not in drop])
    offset = _ints(op, "offset_dims")
    rank = g.ndim
    batch_src, slice_src = iter(range(nb)), iter(range(nb, rank))
    perm = [next(slice_src) if j in offset else next(batch_src) for j in range(rank)]
    return np.transpose(g, perm)


@lowering("scatter_slices")
def _scatter(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    base, idx, upd = a
    kind = op.attrs.get("kind", "set")
    mode = op.attrs.get("mode", "clip")
    window = _ints(op, "update_window_dims")
    inserted, ob = _ints(op, "inserted_window_dims"), _ints(op, "operand_batching_dims")
    if K.np.__name__.startswith("jax"):
        import jax.lax
        dn = jax.lax.ScatterDimensionNumbers(
            update_window_dims=window, inserted_window_dims=inserted,
            scatter_dims_to_operand_dims=_ints(op, "scatter_dims_to_operand_dims"),
            operand_batching_dims=ob,
            scatter_indices_batching_dims=_ints(op, "scatter_indices_batching_dims"))
        return getattr(jax.lax, _SCATTER[kind])(base, idx, upd, dn, mode=_LAX_MODE[mode])
    scatter_axes = [j for j in range(upd.ndim) if j not in window]
    u = np.moveaxis(upd, scatter_axes + list(window), range(upd.ndim))
    base_window = [d for d in range(base.ndim) if d not in inserted and d not in ob]
    sizes = [1] * base.ndim
    for j, d in zip(window, base_window):
        sizes[d] = upd.shape[j]
    nb = idx.ndim - 1
    u = u.reshape(u.shape[:nb] + tuple(sizes))
    pos, bad = _positions(base.shape, idx, _ints(op, "scatter_dims_to_operand_dims"), sizes,
                          ob, _ints(op, "scatter_indices_batching_dims"), mode != "fill")
    if mode != "fill":  # clamped into range: every window lands
        bad = np.zeros_like(bad)
    keep = np.broadcast_to(~bad.reshape(bad.shape + (1,) * base.ndim), u.shape)
    result = np.array(base, copy=True)
    where = tuple(p[keep] for p in pos)
    if kind == "set":
        result[where] = u[keep]
    else:
        _UFUNC[kind].at(result, where, u[keep])
    return result


@lowering("reverse")
def _reverse(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x = a[0]
    return K.np.flip(x, axis=tuple(int(d) % x.ndim for d in op.attrs["dims"]))
