"""Gathers and scatters of slices at computed start indices, in XLA's general form.

``gather`` and ``scatter_add`` (bladec/ops/indexing/row.py) are the row forms an embedding
needs; what else JAX emits for indexing is this form: ``jnp.take_along_axis`` (the
cross-entropy of a language model), ``x[rows, cols]``, ``.at[...].set/add/mul/min/max``
and the gradients of ``top_k`` and of strided slices. The attributes are XLA's dimension
numbers; the index vector is the last dim of the indices. A slice size of -1 means the
whole operand dim, so that a dynamic dim can be sliced whole.

Out-of-range start indices: ``mode = "clip"`` clamps them into range (also what ``promise``,
JAX's promise of in-range indices, runs as); ``mode = "fill"`` gives the whole slice the
``fill`` value (a gather; default NaN for floats, the lowest value for integers, as JAX)
or drops the whole update (a scatter).

Adjoints: a gather's is a scatter-add of the same dimension numbers and mode, a scatter's
updates are read back by a gather (a dynamic update window is read as a whole operand
dim, -1, which needs the two dims to be one symbol).
"""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder, dims_of
from bladec.ir import Op, TensorType
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.symbolic.expr import const

INDEX_DTYPES = ("i32", "i64")
MODES = ("clip", "fill", "promise")
SCATTER_KINDS = ("set", "add", "mul", "min", "max")


def _indices(ctx: ShapeCtx, i: int, vector: int) -> list:
    """The batch dims of the indices (operand i), whose last dim holds ``vector`` entries."""
    idx = ctx.operands[i]
    if ctx.dtypes[i] not in INDEX_DTYPES:
        raise ctx.fail(f"indices (operand {i}) must be i32 or i64, got {ctx.dtypes[i]}")
    if not idx:
        raise ctx.fail(f"indices (operand {i}) need rank at least 1 (the index vector last)")
    ctx.equal(idx[-1], vector, f"the index vector (last dim of operand {i})")
    if ctx.attr("mode", "clip") not in MODES:
        raise ctx.fail(f"mode must be one of {', '.join(MODES)}")
    return list(idx[:-1])


def _dims(ctx: ShapeCtx, name: str, rank: int) -> list[int]:
    dims = ctx.ints(name, [])
    if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
        raise ctx.fail(f"'{name}' {dims} must be distinct dims in 0..{rank - 1}")
    return dims


def _batching(ctx: ShapeCtx, x: list, batch: list, operand_name: str, index_name: str) -> list:
    ob = _dims(ctx, operand_name, len(x))
    ib = _dims(ctx, index_name, len(batch))
    if len(ob) != len(ib):
        raise ctx.fail(f"'{operand_name}' and '{index_name}' differ in length")
    for o, i in zip(ob, ib):
        ctx.equal(x[o], batch[i], f"batching dim {o} of the operand and {i} of the indices")
    return ob


def _gather(ctx: ShapeCtx) -> list[RuleResult]:
    x = ctx.operands[0]
    smap = _dims(ctx, "start_index_map", len(x))
    batch = _indices(ctx, 1, len(smap))
    collapsed = _dims(ctx, "collapsed_slice_dims", len(x))
    ob = _batching(ctx, x, batch, "operand_batching_dims", "start_indices_batching_dims")
    sizes = ctx.ints("slice_sizes")
    if len(sizes) != len(x):
        raise ctx.fail(f"'slice_sizes' has {len(sizes)} entries for an operand of rank {len(x)}")
    full = []
    for d, n in enumerate(sizes):
        if n == -1:
            full.append(x[d])
        elif n < 0:
            raise ctx.fail(f"slice size {n} of dim {d} is negative (-1 means the whole dim)")
        else:
            ctx.at_least(x[d], n, f"dim {d} holds a slice of {n}")
            full.append(const(n))
        if (d in collapsed or d in ob) and n != 1:
            raise ctx.fail(f"dim {d} is collapsed or batching: its slice size must be 1")
    kept = [full[d] for d in range(len(x)) if d not in collapsed and d not in ob]
    offset = _dims(ctx, "offset_dims", len(batch) + len(kept))
    if len(offset) != len(kept) or offset != sorted(offset):
        raise ctx.fail(f"'offset_dims' must list {len(kept)} ascending result dims")
    rest = iter(batch)
    slices = iter(kept)
    out = [next(slices) if j in offset else next(rest) for j in range(len(batch) + len(kept))]
    return [(out, ctx.dtypes[0])]


def _scatter(ctx: ShapeCtx) -> list[RuleResult]:
    base, _, updates = ctx.operands
    smap = _dims(ctx, "scatter_dims_to_operand_dims", len(base))
    batch = _indices(ctx, 1, len(smap))
    inserted = _dims(ctx, "inserted_window_dims", len(base))
    ob = _batching(ctx, base, batch, "operand_batching_dims", "scatter_indices_batching_dims")
    window = _dims(ctx, "update_window_dims", len(updates))
    if window != sorted(window):
        raise ctx.fail("'update_window_dims' must be ascending")
    base_window = [d for d in range(len(base)) if d not in inserted and d not in ob]
    if len(window) != len(base_window):
        raise ctx.fail(f"'update_window_dims' has {len(window)} dims; the operand has "
                       f"{len(base_window)} dims neither inserted nor batching")
    scatter_dims = [j for j in range(len(updates)) if j not in window]
    if len(scatter_dims) != len(batch):
        raise ctx.fail(f"updates have {len(scatter_dims)} scatter dims, the indices "
                       f"{len(batch)} batch dims")
    for j, b in zip(scatter_dims, batch):
        ctx.equal(updates[j], b, f"scatter dim {j} of the updates")
    kind = ctx.attr("kind", "set")
    if kind not in SCATTER_KINDS:
        raise ctx.fail(f"kind must be one of {', '.join(SCATTER_KINDS)}")
    if ctx.dtypes[2] != ctx.dtypes[0]:
        raise ctx.fail(f"updates are {ctx.dtypes[2]}, operand 0 is {ctx.dtypes[0]}")
    if ctx.dtypes[0] == "i1" and kind in ("add", "mul"):
        raise ctx.fail(f"kind {kind} is not defined on i1")
    return [(list(base), ctx.dtypes[0])]


# -- adjoints: a gather's transpose is a scatter-add of the same dimension numbers, and
# the updates of a scatter are read back by a gather of them (as JAX transposes them).

G = list[Optional[str]]


def _ints(op: Op, name: str) -> tuple[int, ...]:
    return tuple(int(d) for d in op.attrs.get(name, ()))


def _scatter_back(b: Builder, base: str, idx: str, updates: str, gather: Op, kind: str) -> str:
    """``scatter_slices`` into ``base`` at the windows ``gather`` read, in its mode: a
    clamped start lands where the gather read, a start out of range (``fill``) is dropped,
    as the gather gave the fill there, which has no gradient."""
    return b.emit("scatter_slices", [base, idx, updates], b.type(base), {
        "update_window_dims": _ints(gather, "offset_dims"),
        "inserted_window_dims": _ints(gather, "collapsed_slice_dims"),
        "scatter_dims_to_operand_dims": _ints(gather, "start_index_map"),
        "operand_batching_dims": _ints(gather, "operand_batching_dims"),
        "scatter_indices_batching_dims": _ints(gather, "start_indices_batching_dims"),
        "kind": kind, "mode": gather.attrs.get("mode", "clip")})


def _gather_back(b: Builder, x: str, idx: str, scatter: Op, like: str) -> str:
    """The windows of ``x`` that ``scatter`` wrote, in the shape of its updates ``like``
    (zero for a window it dropped). A slice size is the update window's: a dynamic one
    is read as the whole operand dim (-1), which needs the two dims to be one symbol."""
    window = _ints(scatter, "update_window_dims")
    skipped = set(_ints(scatter, "inserted_window_dims")) | set(
        _ints(scatter, "operand_batching_dims"))
    xd, ud = dims_of(b.type(x)), dims_of(b.type(like))
    sizes = [1] * len(xd)
    for j, d in zip(window, [d for d in range(len(xd)) if d not in skipped]):
        size, sym = ud[j]
        if size is not None:
            sizes[d] = size
        elif sym is not None and sym == xd[d][1]:
            sizes[d] = -1
        else:
            raise b.fail(scatter, f"a dynamic update window dim ({j}) not known to span "
                         f"operand dim {d} whole has no adjoint")
    mode = scatter.attrs.get("mode", "clip")
    attrs = {"offset_dims": window, "collapsed_slice_dims": _ints(scatter,
                                                                  "inserted_window_dims"),
             "start_index_map": _ints(scatter, "scatter_dims_to_operand_dims"),
             "operand_batching_dims": _ints(scatter, "operand_batching_dims"),
             "start_indices_batching_dims": _ints(scatter, "scatter_indices_batching_dims"),
             "slice_sizes": tuple(sizes), "mode": mode}
    if mode == "fill":
        attrs["fill"] = 0.0
    t = b.type(like)
    return b.emit("gather_slices", [x, idx], TensorType(t.dims, b.type(x).dtype, t.binds),
                  attrs)


def _gather_slices_adjoint(b: Builder, op: Op, gs: G) -> G:
    """Each slice's cotangent added back where it was read (overlapping slices and
    repeated indices accumulate); the indices have none."""
    if gs[0] is None:
        return [None, None]
    x, idx = op.operands
    return [_scatter_back(b, b.const(0.0, x), idx, gs[0], op, "add"), None]


def _scatter_slices_adjoint(b: Builder, op: Op, gs: G) -> G:
    """By kind, with g the result's cotangent and ``picked`` its windows at the updates:
    add: g to the base, picked to the updates. set: g with the written windows zeroed to
    the base (overwritten), picked to the updates (every duplicate of an index gets its
    window's: exact for unique indices, where JAX's is too). mul: g times the updates'
    product to the base; picked times the base to the updates (JAX's rule, exact for
    unique indices, the only case JAX differentiates). min/max: as JAX, the cotangent
    split evenly among the base element and the updates that equal the result there."""
    g = gs[0]
    if g is None:
        return [None, None, None]
    base, idx, updates = op.operands
    kind = op.attrs.get("kind", "set")
    if kind == "add":
        return [g, None, _gather_back(b, g, idx, op, updates)]
    if kind == "set":
        cleared = _scatter_like(b, op, g, b.const(0.0, updates), "set")
        return [cleared, None, _gather_back(b, g, idx, op, updates)]
    if kind == "mul":
        to_base = _scatter_like(b, op, g, updates, "mul")
        return [to_base, None, _gather_back(b, b.mul(g, base), idx, op, updates)]
    out = op.result_names[0]
    won = b.compare(updates, _gather_back(b, out, idx, op, updates), "EQ")
    kept = b.compare(base, out, "EQ")
    one, zero = b.const(1.0, updates), b.const(0.0, updates)
    wins = _scatter_like(b, op, b.const(0.0, base), b.select(won, one, zero), "add")
    count = b.add(wins, b.select(kept, b.const(1.0, base), b.const(0.0, base)))
    # count >= 1 wherever a base element or update is kept; elsewhere its share is 0
    share = b.div(g, b.binary("max", count, b.const(1.0, base)))
    to_base = b.select(kept, share, b.const(0.0, base))
    return [to_base, None, b.select(won, _gather_back(b, share, idx, op, updates), zero)]


def _scatter_like(b: Builder, op: Op, base: str, updates: str, kind: str) -> str:
    """``op`` again (its dims and mode) onto ``base`` with ``updates``, of kind ``kind``."""
    attrs = dict(op.attrs)
    attrs["kind"] = kind
    return b.emit("scatter_slices", [base, op.operands[1], updates], b.type(base), attrs)


register(OpDef("gather_slices", "`gather_slices(%x, %idx) {offset_dims = [...], "
               "collapsed_slice_dims = [...], start_index_map = [...], operand_batching_dims "
               "= [...], start_indices_batching_dims = [...], slice_sizes = [...], mode = "
               "\"clip\"}`: XLA's gather: for each index vector (the last dim of idx), the "
               "slice of x of `slice_sizes` (-1: the whole dim) starting there; collapsed and "
               "batching dims are dropped; result dims are idx's batch dims with the slices' "
               "dims at `offset_dims`.", _gather, 2, 2,
               attrs={"offset_dims": "ints", "collapsed_slice_dims": "ints",
                      "start_index_map": "ints", "operand_batching_dims": "ints",
                      "start_indices_batching_dims": "ints", "slice_sizes": "ints",
                      "mode": "str", "fill": "number"},
               required=frozenset({"offset_dims", "start_index_map", "slice_sizes"}),
               adjoint=_gather_slices_adjoint))
register(OpDef("scatter_slices", "`scatter_slices(%base, %idx, %updates) {update_window_dims "
               "= [...], inserted_window_dims = [...], scatter_dims_to_operand_dims = [...], "
               "operand_batching_dims = [...], scatter_indices_batching_dims = [...], kind = "
               "\"add\", mode = \"fill\"}`: XLA's scatter: base with each window of updates "
               "combined (set, add, mul, min or max) into the slice starting at its index "
               "vector; repeated indices accumulate (which `set` wins is unspecified, as in "
               "XLA).", _scatter, 3, 3,
               attrs={"update_window_dims": "ints", "inserted_window_dims": "ints",
                      "scatter_dims_to_operand_dims": "ints", "operand_batching_dims": "ints",
                      "scatter_indices_batching_dims": "ints", "kind": "str", "mode": "str"},
               required=frozenset({"update_window_dims", "scatter_dims_to_operand_dims"}),
               adjoint=_scatter_slices_adjoint))


def _reverse(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    dims = [ctx.axis(d, len(src)) for d in ctx.ints("dims")]
    if len(set(dims)) != len(dims):
        raise ctx.fail("'dims' has repeated entries")
    return [(list(src), ctx.dtypes[0])]


def _reverse_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """Reversing is its own inverse: the cotangent reversed along the same dims."""
    if gs[0] is None:
        return [None]
    return [b.emit("reverse", [gs[0]], b.type(op.operands[0]), {"dims": op.attrs["dims"]})]


register(OpDef("reverse", "`reverse(%x) {dims = [0, 1]}`: x with the order of the elements "
               "along each of `dims` reversed (`lax.rev`, `jnp.flip`; the kernel flip in a "
               "convolution's gradient).", _reverse, attrs={"dims": "ints"},
               required=frozenset({"dims"}), adjoint=_reverse_adjoint))
