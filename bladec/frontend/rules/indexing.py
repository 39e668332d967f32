"""Gathers and scatters.

``gather``/``scatter-add`` in the embedding form (``table[ids]`` and its gradient
``zeros.at[ids].add(u)``) become the listing's ``gather``/``scatter_add``, whose shape
rules relate the most dims; at constant indices they become slices and pads. Every other
form (``take_along_axis``, ``x[rows, cols]``, ``.at[...].set/add/mul/min/max``, the
gradients of ``top_k`` and of strided slices) is ``gather_slices``/``scatter_slices``,
XLA's general form with the same dimension numbers.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.rules.shape import pad_dim, reshape_to, slice_to
from bladec.frontend.translate import (
    JaxImportError,
    Lit,
    Translator,
    is_one,
    is_symbolic,
    same_dim,
    same_shape,
)


@rule("gather")
def _gather(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
            outs: Outs) -> Result:
    table, ids = (tr.materialize(x) for x in ins)
    dn = p["dimension_numbers"]
    tshape, ishape = tr.shapes[table], tr.shapes[ids]
    r, k = len(tshape), len(ishape)
    sizes = tuple(p["slice_sizes"])
    batching = tuple(getattr(dn, "operand_batching_dims", ()))
    if (k >= 1 and is_one(ishape[-1]) and len(dn.start_index_map) == 1
            and tuple(dn.collapsed_slice_dims) == tuple(dn.start_index_map) and not batching
            and len(dn.offset_dims) == r - 1):
        a = int(dn.start_index_map[0])
        if same_shape(sizes, tuple(tshape[:a]) + (1,) + tuple(tshape[a + 1:])):
            return _take_along(tr, table, drop_index_dim(tr, ids), a,
                                    [int(d) for d in dn.offset_dims], shape, dtype)
    if (k == 1 and ids in tr.known and not batching
            and tuple(dn.offset_dims) == tuple(range(len(shape)))):
        return _static_gather(tr, table, tr.known[ids], dn, sizes, shape, dtype)
    return _general_gather(tr, table, ids, p, shape, dtype)


def _take_along(tr: Translator, x: str, ids: str, a: int, offset_dims: list[int], shape: Sequence,
                dtype: str) -> str:
    """``jnp.take(x, ids, axis=a)`` with JAX's result dim order (``offset_dims``)."""
    have = list(tr.shapes[x])
    order = [a] + [j for j in range(len(have)) if j != a]
    if a != 0:
        tr.decomposed["gather (axis > 0)"] += 1
        x = tr.emit("transpose", [x], [have[j] for j in order], dtype, {"perm": order})
    batch = list(tr.shapes[ids])
    rows = batch + [have[j] for j in order[1:]]
    if len(shape) == len(rows) and offset_dims == list(range(len(batch), len(rows))):
        return tr.emit("gather", [x, ids], shape, dtype)
    g = tr.emit("gather", [x, ids], rows, dtype)
    positions = [i for i in range(len(shape)) if i not in offset_dims]
    perm = [0] * len(shape)
    for i, pos in enumerate(positions):
        perm[pos] = i
    for i, pos in enumerate(offset_dims):
        perm[pos] = len(batch) + i
    return tr.emit("transpose", [g], shape, dtype, {"perm": perm})


def _static_gather(tr: Translator, x: str, index: np.ndarray, dn: Any, sizes: Sequence,
                   shape: Sequence, dtype: str) -> str:
    """A gather at constant start indices: a slice, then the collapsed dims dropped."""
    have = tr.shapes[x]
    start = [0] * len(have)
    for i, d in enumerate(dn.start_index_map):
        start[d] = int(index.reshape(-1)[i])
        if not is_symbolic(have[d]) and not is_symbolic(sizes[d]):  # XLA clamps
            start[d] = max(0, min(start[d], int(have[d]) - int(sizes[d])))
    limit = [st + n for st, n in zip(start, sizes)]
    tr.decomposed["gather (constant indices)"] += 1
    cut = slice_to(tr, x, start, limit, [1] * len(have), list(sizes), dtype)
    return reshape_to(tr, cut, shape, dtype)


@rule("scatter-add")
def _scatter_add(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    base, ids, upd = (tr.materialize(x) for x in ins)
    dn = p["dimension_numbers"]
    bshape, ishape = tr.shapes[base], tr.shapes[ids]
    r, k = len(bshape), len(ishape)
    ok = (k >= 1 and is_one(ishape[-1]) and tuple(dn.inserted_window_dims) == (0,)
          and tuple(dn.scatter_dims_to_operand_dims) == (0,)
          and not tuple(getattr(dn, "operand_batching_dims", ()))
          and tuple(dn.update_window_dims) == tuple(range(k - 1, k - 1 + r - 1)))
    if ok:
        return tr.emit("scatter_add", [base, drop_index_dim(tr, ids), upd], shape,
                         dtype)
    ushape = tr.shapes[upd]
    if (k == 1 and ids in tr.known and not tuple(dn.inserted_window_dims)
            and not tuple(getattr(dn, "operand_batching_dims", ()))
            and tuple(dn.update_window_dims) == tuple(range(r)) and len(ushape) == r):
        # the gradient of a slice at constant indices: pad the update, add it
        tr.decomposed["scatter-add (constant indices)"] += 1
        index = tr.known[ids].reshape(-1)
        x = upd
        for i, d in enumerate(dn.scatter_dims_to_operand_dims):
            lo = int(index[i])
            if not is_symbolic(bshape[d]) and not is_symbolic(ushape[d]):  # XLA clamps
                lo = max(0, min(lo, int(bshape[d]) - int(ushape[d])))
            x = pad_dim(tr, x, int(d), lo, bshape[d] - lo - ushape[d], Lit(0, dtype))
        return tr.emit("add", [base, x], shape, dtype)
    return _general_scatter(tr, "add", [base, ids, upd], p, shape, dtype)



def drop_index_dim(tr: Translator, ids: str) -> str:
    if ids in tr.expanded:
        return tr.expanded[ids]
    have = tr.shapes[ids]
    return reshape_to(tr, ids, have[:-1], tr.types[ids].dtype)


_MODES = {"CLIP": "clip", "FILL_OR_DROP": "fill", "PROMISE_IN_BOUNDS": "promise",
          "ONE_HOT": None}
_SCATTERS = {"scatter": "set", "scatter-mul": "mul", "scatter_mul": "mul",
             "scatter-min": "min", "scatter_min": "min", "scatter-max": "max",
             "scatter_max": "max"}


def _mode(tr: Translator, p: Params) -> str:
    mode = p.get("mode")
    name = getattr(mode, "name", str(mode)) if mode is not None else "FILL_OR_DROP"
    if _MODES.get(name) is None:
        raise JaxImportError(f"cannot import {tr.primitive} with mode {name}")
    return _MODES[name]


def _general_gather(tr: Translator, x: str, ids: str, p: Params, shape: Shape,
                    dtype: str) -> str:
    dn = p["dimension_numbers"]
    have = tr.shapes[x]
    sizes = []
    for d, n in enumerate(p["slice_sizes"]):
        if is_symbolic(n):
            if not same_dim(n, have[d]):
                raise JaxImportError(f"cannot import a gather whose slice size {n} of a "
                                     f"dynamic dim is not the whole dim ({have[d]})")
            sizes.append(-1)
        else:
            sizes.append(int(n))
    attrs: dict[str, Any] = {
        "offset_dims": [int(d) for d in dn.offset_dims],
        "collapsed_slice_dims": [int(d) for d in dn.collapsed_slice_dims],
        "start_index_map": [int(d) for d in dn.start_index_map],
        "operand_batching_dims": [int(d) for d in getattr(dn, "operand_batching_dims", ())],
        "start_indices_batching_dims": [int(d) for d in
                                        getattr(dn, "start_indices_batching_dims", ())],
        "slice_sizes": sizes, "mode": _mode(tr, p)}
    if attrs["mode"] == "fill" and p.get("fill_value") is not None:
        attrs["fill"] = float(p["fill_value"]) if dtype.startswith(("f", "bf")) \
            else int(p["fill_value"])
    tr.decomposed["gather (general)"] += 1
    return tr.emit("gather_slices", [x, ids], shape, dtype, attrs)


def _general_scatter(tr: Translator, kind: str, ins: list, p: Params, shape: Shape,
                     dtype: str) -> str:
    base, ids, upd = ins
    dn = p["dimension_numbers"]
    attrs: dict[str, Any] = {
        "update_window_dims": [int(d) for d in dn.update_window_dims],
        "inserted_window_dims": [int(d) for d in dn.inserted_window_dims],
        "scatter_dims_to_operand_dims": [int(d) for d in dn.scatter_dims_to_operand_dims],
        "operand_batching_dims": [int(d) for d in getattr(dn, "operand_batching_dims", ())],
        "scatter_indices_batching_dims": [int(d) for d in
                                          getattr(dn, "scatter_indices_batching_dims", ())],
        "kind": kind, "mode": _mode(tr, p)}
    tr.decomposed[f"scatter-{kind} (general)"] += 1
    return tr.emit("scatter_slices", [base, ids, upd], shape, dtype, attrs)


@rule(*_SCATTERS)
def _scatter(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
             outs: Outs) -> Result:
    base, ids = (tr.materialize(x) for x in ins[:2])
    upd = tr.materialize(ins[2], tr.shape(ins[2]))
    return _general_scatter(tr, _SCATTERS[tr.primitive], [base, ids, upd], p, shape, dtype)


def _start_vector(tr: Translator, starts: list) -> str:
    """Scalar start indices (values or literals) as one i32 index vector ``[k]``."""
    parts = []
    for s in starts:
        if isinstance(s, Lit):
            parts.append(tr.constant(int(s.value), (1,), "i32"))
            continue
        if tr.dtype(s) != "i32":
            s = tr.emit("convert", [s], (), "i32", {"dtype": "i32"})
        parts.append(tr.emit("broadcast_in_dim", [s], (1,), "i32", {"dims": []}))
    if len(parts) == 1:
        return parts[0]
    return tr.emit("concatenate", parts, (len(parts),), "i32", {"dim": 0})


@rule("dynamic_slice")
def _dynamic_slice(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                   outs: Outs) -> Result:
    """``lax.dynamic_slice``: starts clamped into range, as XLA does; at literal starts a
    slice, else a ``gather_slices`` of one slice in clip mode."""
    x, *starts = ins
    x = tr.materialize(x)
    have = tr.shapes[x]
    sizes = list(p["slice_sizes"])
    if all(isinstance(s, Lit) for s in starts) and not any(
            is_symbolic(d) for d in list(have) + sizes):
        start = [min(max(int(s.value), 0), int(d) - int(n))
                 for s, d, n in zip(starts, have, sizes)]
        return slice_to(tr, x, start, [a + int(n) for a, n in zip(start, sizes)],
                        [1] * len(have), shape, dtype)
    attrs = {"offset_dims": list(range(len(have))), "collapsed_slice_dims": [],
             "start_index_map": list(range(len(have))),
             "slice_sizes": [-1 if is_symbolic(n) else int(n) for n in sizes], "mode": "clip"}
    if any(is_symbolic(n) and not same_dim(n, d) for n, d in zip(sizes, have)):
        raise JaxImportError("cannot import a dynamic_slice of a dynamic size smaller than "
                             "its dim")
    tr.decomposed["dynamic_slice"] += 1
    return tr.emit("gather_slices", [x, _start_vector(tr, starts)], shape, dtype, attrs)


@rule("dynamic_update_slice")
def _dynamic_update_slice(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                          outs: Outs) -> Result:
    """``lax.dynamic_update_slice``: a ``scatter_slices`` (kind set) of one window in clip
    mode (XLA clamps the start so that the update fits)."""
    x, upd, *starts = ins
    x = tr.materialize(x)
    upd = tr.materialize(upd, tr.shape(upd))
    rank = len(tr.shapes[x])
    attrs = {"update_window_dims": list(range(rank)), "inserted_window_dims": [],
             "scatter_dims_to_operand_dims": list(range(rank)), "kind": "set", "mode": "clip"}
    tr.decomposed["dynamic_update_slice"] += 1
    return tr.emit("scatter_slices", [x, _start_vector(tr, starts), upd], shape, dtype, attrs)
