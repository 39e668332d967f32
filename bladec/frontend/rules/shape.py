"""Primitives that move data: broadcasts, reshapes, transposes, slices, pads, iotas.

- A ``reshape`` that only adds or drops size-1 dims becomes ``broadcast_in_dim`` (adding)
  and a ``reduce {kind = "max"}`` over the size-1 dims (dropping; the max of one element
  is that element, bit for bit), because those ops carry the other dims through their
  shape rules, where a ``reshape`` only equates element counts. ``squeeze`` likewise.
- ``slice`` (and ``split``) of a tensor whose dynamic dims are kept whole stays a
  ``slice`` (their limit ``WHOLE``); one that cuts a dynamic dim becomes a ``gather`` of
  the sliced dim (moved to the front by ``transpose``) with ``iota``-made indices; ``pad``
  becomes a ``concatenate`` with ``constant`` blocks.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import (
    KNOWN_MAX_ELEMENTS,
    JaxImportError,
    Lit,
    Translator,
    is_one,
    is_symbolic,
    same_dim,
    same_shape,
)
from bladec.ops.shape import WHOLE


@rule("broadcast_in_dim")
def _broadcast_in_dim(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                      outs: Outs) -> Result:
    x = ins[0]
    if isinstance(x, Lit):
        return tr.constant(x.value, shape, x.dtype)
    dims = [int(d) for d in p["broadcast_dimensions"]]
    have = tr.shapes[x]
    if same_shape(have, shape) and dims == list(range(len(shape))):
        return x
    out = tr.broadcast_dims(x, shape, dims, dtype)
    tr.broadcasts[out] = (x, dims)
    if (dims == list(range(len(have))) and same_shape(have, shape[:len(have)])
            and all(not is_symbolic(d) and int(d) == 1 for d in shape[len(have):])):
        tr.expanded[out] = x
    return out


@rule("reshape")
def _reshape(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
             outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    dims = p.get("dimensions")
    if dims is not None and list(dims) != list(range(len(tr.shapes[x]))):
        # a transposing reshape: the operand's dims in this order, then the reshape
        have = tr.shapes[x]
        perm = [int(d) for d in dims]
        x = tr.emit("transpose", [x], [have[d] for d in perm], dtype, {"perm": perm})
    return reshape_to(tr, x, shape, dtype)


def reshape_to(tr: Translator, x: str, shape: Sequence, dtype: str) -> str:
    have = tr.shapes[x]
    if same_shape(have, shape):
        return x
    keep_in = [i for i, d in enumerate(have) if not is_one(d)]
    keep_out = [i for i, d in enumerate(shape) if not is_one(d)]
    if same_shape([have[i] for i in keep_in], [shape[i] for i in keep_out]):
        # only size-1 dims come and go: keep the other dims visible to the analysis
        tr.decomposed["reshape (size-1 dims)"] += 1
        if len(keep_in) != len(have):
            x = tr.emit("reduce", [x], [have[i] for i in keep_in], dtype,
                          {"dims": [i for i in range(len(have)) if i not in keep_in],
                           "kind": "max"})
        if len(keep_out) != len(shape):
            x = tr.emit("broadcast_in_dim", [x], shape, dtype, {"dims": keep_out})
        return x
    return _regroup(tr, x, shape, dtype) or tr.emit("reshape", [x], shape, dtype)


def _regroup(tr: Translator, x: str, shape: Sequence, dtype: str) -> str | None:
    """A reshape that keeps a prefix and a suffix of dims and merges (``merge_dims``) or
    splits (``split_dim``, at most one dynamic part) the dims between, or both; None for
    any other reshape (left to ``reshape``, whose rule only equates element counts)."""
    have, want = list(tr.shapes[x]), list(shape)
    p = 0
    while p < min(len(have), len(want)) and same_dim(have[p], want[p]):
        p += 1
    q = 0
    while q < min(len(have), len(want)) - p and same_dim(have[-1 - q], want[-1 - q]):
        q += 1
    mid_in, mid_out = have[p:len(have) - q], want[p:len(want) - q]
    dynamic_parts = sum(1 for n in mid_out if is_symbolic(n))
    if not mid_in or not mid_out or (len(mid_out) > 1 and dynamic_parts > 1):
        return None
    if len(mid_in) > 1:
        merged = have[:p] + [math.prod(mid_in)] + have[len(have) - q:]
        x = tr.emit("merge_dims", [x], merged, dtype, {"dim": p, "count": len(mid_in)})
        tr.decomposed["reshape (merge)"] += 1
    if len(mid_out) > 1:
        sizes = [-1 if is_symbolic(n) else int(n) for n in mid_out]
        x = tr.emit("split_dim", [x], want, dtype, {"dim": p, "sizes": sizes})
        tr.decomposed["reshape (split)"] += 1
    return x


@rule("squeeze")
def _squeeze(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
             outs: Outs) -> Result:
    return reshape_to(tr, tr.materialize(ins[0]), shape, dtype)


@rule("expand_dims")
def _expand_dims(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    return reshape_to(tr, tr.materialize(ins[0]), shape, dtype)


@rule("transpose")
def _transpose(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
               outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    perm = [int(d) for d in p["permutation"]]
    if perm == list(range(len(perm))):
        return x
    return tr.emit("transpose", [x], shape, dtype, {"perm": perm})



@rule("concatenate")
def _concatenate(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    xs = [tr.materialize(x) for x in ins]
    if len(xs) == 1:
        return xs[0]
    out = tr.emit("concatenate", xs, shape, dtype, {"dim": int(p["dimension"])})
    if all(x in tr.known for x in xs) and \
            sum(tr.known[x].size for x in xs) <= KNOWN_MAX_ELEMENTS:
        tr.known[out] = np.concatenate([tr.known[x] for x in xs], int(p["dimension"]))
    return out


@rule("iota")
def _iota(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    return tr.emit("iota", [], shape, dtype, {"dim": int(p["dimension"])})



def pad_dim(tr: Translator, x: str, j: int, lo: Any, hi: Any, value: Any) -> str:
    """x with ``lo`` and ``hi`` elements of ``value`` around dim j (a concatenate)."""
    have = list(tr.shapes[x])
    dtype = tr.types[x].dtype
    parts = []
    for n in (lo, None, hi):
        if n is None:
            parts.append(x)
        elif is_symbolic(n) or int(n) > 0:
            block = list(have)
            block[j] = n
            parts.append(tr.broadcast_to(value, block))
    if len(parts) == 1:
        return x
    total = list(have)
    total[j] = have[j] + lo + hi
    return tr.emit("concatenate", parts, total, dtype, {"dim": j})



@rule("slice")
def _slice(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    start = [int(s) for s in p["start_indices"]]
    limit = list(p["limit_indices"])
    strides = [int(s) for s in (p.get("strides") or [1] * len(start))]
    return slice_to(tr, x, start, limit, strides, shape, dtype)


def slice_to(tr: Translator, x: str, start, limit, strides, shape, dtype) -> str:
    have = tr.shapes[x]
    if not any(is_symbolic(d) for d in list(have) + list(limit)):
        attrs: dict[str, Any] = {"start": start, "limit": [int(v) for v in limit]}
        if any(s != 1 for s in strides):
            attrs["strides"] = strides
        if same_shape(have, shape):
            return x
        return tr.emit("slice", [x], shape, dtype, attrs)
    whole = [start[j] == 0 and strides[j] == 1 and same_dim(limit[j], have[j])
             for j in range(len(have))]
    if all(w or not (is_symbolic(have[j]) or is_symbolic(limit[j]))
           for j, w in enumerate(whole)):
        # the dynamic dims kept whole: a slice of the static ones, the others passed
        # through (a gather would move the sliced dim to the front and back)
        attrs = {"start": start, "limit": [WHOLE if w and is_symbolic(have[j]) else
                                           int(limit[j]) for j, w in enumerate(whole)]}
        if any(s != 1 for s in strides):
            attrs["strides"] = strides
        return tr.emit("slice", [x], shape, dtype, attrs)
    # a dynamic dim cut: gather each sliced dim, moved to the front
    tr.decomposed["slice"] += 1
    for j in range(len(have)):
        full = start[j] == 0 and strides[j] == 1 and same_dim(limit[j], have[j])
        if full:
            continue
        x = take_dim(tr, x, j, start[j], strides[j], shape[j], dtype)
    return x


def take_dim(tr: Translator, x: str, j: int, start: int, stride: int, n: Any, dtype: str) -> str:
    """Elements start, start+stride, ... (n of them) of dim j of x."""
    have = list(tr.shapes[x])
    rank = len(have)
    perm = [j] + [i for i in range(rank) if i != j]
    if j != 0:
        x = tr.emit("transpose", [x], [have[i] for i in perm], dtype, {"perm": perm})
    ids = tr.emit("iota", [], [n], "i32", {"dim": 0})
    if stride != 1:
        ids = tr.emit("mul", [ids, tr.constant(stride, [n], "i32")], [n], "i32")
    if start != 0:
        ids = tr.emit("add", [ids, tr.constant(start, [n], "i32")], [n], "i32")
    moved = [n] + [have[i] for i in perm[1:]]
    x = tr.emit("gather", [x, ids], moved, dtype)
    if j != 0:
        inv = [perm.index(i) for i in range(rank)]
        x = tr.emit("transpose", [x], [moved[i] for i in inv], dtype, {"perm": inv})
    return x


@rule("split")
def _split(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    axis = int(p["axis"])
    have = tr.shapes[x]
    results = []
    offset: Any = 0
    for out_shape, out_dtype in outs:
        size = out_shape[axis]
        start = [0] * len(have)
        limit = list(have)
        if is_symbolic(offset):
            raise JaxImportError("cannot import 'split' at a symbolic offset")
        start[axis] = int(offset)
        limit[axis] = offset + size
        results.append(slice_to(tr, x, start, limit, [1] * len(have), out_shape, out_dtype))
        offset = offset + size
    tr.decomposed["split"] += 1
    return results


def interleave(tr: Translator, x: str, j: int, m: int, value: Any) -> str:
    """``m`` elements of ``value`` between neighbours along dim j (a pad's interior): each
    element gets m padding after it (a concatenate along a new dim, merged by a reshape),
    and the last m are cut off."""
    have = list(tr.shapes[x])
    n = have[j]
    if not is_symbolic(n) and int(n) == 0:
        return x
    dtype = tr.types[x].dtype
    tr.decomposed["pad (interior)"] += 1
    split = have[:j + 1] + [1] + have[j + 1:]
    x = tr.emit("broadcast_in_dim", [x], split, dtype,
                {"dims": [i if i <= j else i + 1 for i in range(len(have))]})
    block = tr.broadcast_to(value, have[:j + 1] + [m] + have[j + 1:])
    x = tr.emit("concatenate", [x, block], have[:j + 1] + [1 + m] + have[j + 1:], dtype,
                {"dim": j + 1})
    merged = have[:j] + [n * (1 + m)] + have[j + 1:]
    x = tr.emit("reshape", [x], merged, dtype)
    limit = list(merged)
    limit[j] = n * (1 + m) - m
    return slice_to(tr, x, [0] * len(have), limit, [1] * len(have), limit, dtype)


@rule("pad")
def _pad(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    x, value = ins
    x = tr.materialize(x)
    config = [(int(lo), int(hi), int(mid)) for lo, hi, mid in p["padding_config"]]
    tr.decomposed["pad"] += 1
    for j, (lo, hi, mid) in enumerate(config):
        if mid:
            x = interleave(tr, x, j, mid, value)
        have = list(tr.shapes[x])
        if lo < 0 or hi < 0:  # negative padding cuts
            start = [0] * len(have)
            limit = list(have)
            start[j] = max(-lo, 0)
            limit[j] = have[j] - max(-hi, 0)
            cut = list(have)
            cut[j] = limit[j] - start[j]
            x = slice_to(tr, x, start, limit, [1] * len(have), cut, dtype)
            lo, hi = max(lo, 0), max(hi, 0)
            have = cut
        x = pad_dim(tr, x, j, lo, hi, value)
    return x



@rule("rev")
def _rev(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    dims = [int(d) for d in p["dimensions"]]
    return tr.emit("reverse", [x], shape, dtype, {"dims": dims}) if dims else x


@rule("stack")
def _stack(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    """``jnp.stack``: each operand gets a size-1 dim at ``axis``, then one concatenate."""
    axis = int(p["axis"]) % len(shape)
    one = list(shape)
    one[axis] = 1
    keep = [d for d in range(len(shape)) if d != axis]
    parts = [tr.emit("broadcast_in_dim", [tr.materialize(x, one[:axis] + one[axis + 1:])], one,
                     dtype, {"dims": keep}) for x in ins]
    tr.decomposed["stack"] += 1
    return parts[0] if len(parts) == 1 else tr.emit("concatenate", parts, shape, dtype,
                                                    {"dim": axis})
