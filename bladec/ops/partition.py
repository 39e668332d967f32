"""Sharding rules of the ops that work along some dims and pass the others through.

XLA's SPMD partitioner runs a slice, a sort, a scan, a window, a convolution or a gather
on blocks wherever the dims the op works along are whole on every device: the other dims
("passthrough" dims) keep their split, with no communication. These are the same rules
for bladec's ops, beside those of bladec/ops/collective.py (which merges them into its
table, so that the verifier and the ``propagate`` pass share them):

- an op that works along some dims of same-rank operands (slice, reverse, sort, top_k,
  cumulative, argmax/argmin, reduce_window, select_and_scatter_add, split_dim,
  merge_dims) keeps the other dims' splits; the dims it works along must be whole;
- ``dim_size`` reads the global size of any operand, split or partial (each device knows
  the global shape; the lowering multiplies its block's size by the dim's ways), so it
  never makes a split value whole;
- ``gather_slices`` (``jnp.take_along_axis``, ``x[rows, cols]``) keeps the operand's
  batching dims split alike with the indices' batching dims (a cross-entropy's
  log-probabilities and labels stay split over the batch), the indices' other batch
  dims split (each device gathers its own indices from a whole table), and operand dims
  sliced whole (-1); ``scatter_slices`` (its adjoint, and ``.at[...]``) keeps batching
  dims split alike on base, indices and updates;
- ``conv`` keeps the input's batch dim and the kernel's output features split;
- ``threefry`` is elementwise on its counters (the key whole).

:data:`RULES` maps an op to ``(op, operand types) -> (result sharding, partial axes)``;
:data:`DEMANDS` maps it to the operand layouts it runs on (the layouts ``propagate``
brings the operands to: what they have, with the worked-along dims made whole).
"""
from __future__ import annotations

from typing import Callable

from bladec.errors import BladecError
from bladec.ir import Op, TensorType
from bladec.ops.shape import WHOLE
from bladec.sharding import spec
from bladec.types import Sharding, format_sharding

Layout = tuple[Sharding, tuple[str, ...]]
# ops that are linear in their one operand: a partial sum stays one through them
LINEAR = frozenset({"slice", "reverse", "split_dim", "merge_dims", "gather_slices"})


def _attr_ints(op: Op, name: str, default: list[int] | None = None) -> list[int]:
    v = op.attrs.get(name, default if default is not None else [])
    return [int(x) for x in v]


def _d(op: Op, rank: int, key: str = "dim", default: int | None = None) -> int:
    return int(op.attrs.get(key, default) if default is not None else op.attrs[key]) % rank


def _window_dims(op: Op, rank: int) -> set[int]:
    """Dims a window op works along: any window, stride, padding or dilation there."""
    window = _attr_ints(op, "window", [1] * rank)
    pads = _attr_ints(op, "padding", [0] * (2 * rank))
    out = set()
    for j in range(rank):
        moved = [window[j]] + [_attr_ints(op, n, [1] * rank)[j] for n in
                               ("strides", "base_dilation", "window_dilation")]
        if any(v != 1 for v in moved) or pads[2 * j] or pads[2 * j + 1]:
            out.add(j)
    return out


def _slice_dims(op: Op, t: TensorType) -> set[int]:
    """A dim sliced whole (from 0 to its static size or to ``WHOLE``, stride 1) is passed
    through; a dynamic dim sliced to a number is worked along."""
    start, limit = op.attrs["start"], op.attrs["limit"]
    strides = op.attrs.get("strides", (1,) * len(start))
    return {j for j in range(t.rank) if start[j] != 0 or strides[j] != 1
            or (limit[j] != WHOLE and (t.dims[j] is None or limit[j] != t.dims[j]))}


# per op: (the operand dims it works along, result dim -> operand dim or None)
Shape = Callable[[Op, list[TensorType]], tuple[set[int], list[int | None]]]


def _same(acted: Callable[[Op, TensorType], set[int]]) -> Shape:
    def shape(op: Op, ins: list[TensorType]) -> tuple[set[int], list[int | None]]:
        return acted(op, ins[0]), list(range(ins[0].rank))
    return shape


def _arg(op: Op, ins: list[TensorType]) -> tuple[set[int], list[int | None]]:
    d = _d(op, ins[0].rank)
    return {d}, [j for j in range(ins[0].rank) if j != d]


def _top_k(op: Op, ins: list[TensorType]) -> tuple[set[int], list[int | None]]:
    r = ins[0].rank
    return {r - 1}, [*range(r - 1), None]


def _split_dim(op: Op, ins: list[TensorType]) -> tuple[set[int], list[int | None]]:
    """Blocks of dim d are contiguous: the split goes to its first (major) new dim."""
    r, d = ins[0].rank, _d(op, ins[0].rank)
    n = len(op.attrs["sizes"])
    return set(), [*range(d), d, *([None] * (n - 1)), *range(d + 1, r)]


def _merge_dims(op: Op, ins: list[TensorType]) -> tuple[set[int], list[int | None]]:
    """Only the major merged dim may be split (its blocks are contiguous runs)."""
    r, d, n = ins[0].rank, _d(op, ins[0].rank), int(op.attrs["count"])
    return set(range(d + 1, d + n)), [*range(d), d, *range(d + n, r)]


SHAPES: dict[str, Shape] = {
    "slice": _same(_slice_dims),
    "reverse": _same(lambda op, t: {int(d) % t.rank for d in op.attrs["dims"]}),
    "sort": _same(lambda op, t: {_d(op, t.rank, "dim", -1)}),
    "cumulative": _same(lambda op, t: {_d(op, t.rank)}),
    "reduce_window": _same(lambda op, t: _window_dims(op, t.rank)),
    "select_and_scatter_add": _same(lambda op, t: _window_dims(op, t.rank)),
    "argmax": _arg, "argmin": _arg, "top_k": _top_k,
    "split_dim": _split_dim, "merge_dims": _merge_dims,
}


def _passthrough_rule(op: Op, operands: list[TensorType]) -> tuple:
    acted, result = SHAPES[op.name](op, operands)
    src = spec(operands[0])
    split = sorted(d for d in acted if src[d])
    if split:
        raise BladecError(f"'{op.name}' works along dim {split[0]}, which is split "
                          f"{format_sharding(src)}; gather it first", op.loc)
    for i, t in enumerate(operands[1:], start=1):
        if spec(t) != src:
            raise BladecError(f"'{op.name}': operand {i} is split {format_sharding(spec(t))}, "
                              f"operand 0 {format_sharding(src)}", op.loc)
    partial = tuple(operands[0].partial)
    if any(t.partial for t in operands) and op.name not in LINEAR:
        raise BladecError(f"'{op.name}' of partial sums is not their sum's: all_reduce first",
                          op.loc)
    return tuple(() if d is None else src[d] for d in result), partial


def _passthrough_demand(op: Op, ins: list[TensorType]) -> list[Layout]:
    acted, _ = SHAPES[op.name](op, ins)
    src = spec(ins[0])
    want = tuple(() if d in acted else axes for d, axes in enumerate(src))
    part = tuple(sorted(ins[0].partial)) if op.name in LINEAR else ()
    return [(want, part)] + [(want, ()) for _ in ins[1:]]


# -- sizes -------------------------------------------------------------------------------

def _dim_size_rule(op: Op, operands: list[TensorType]) -> tuple:
    """The global size, on every device: a replicated scalar, whatever the operand's split."""
    return (), ()


def _as_is(op: Op, ins: list[TensorType]) -> list[Layout]:
    return [(spec(t), tuple(sorted(t.partial))) for t in ins]


# -- gathers and scatters of slices --------------------------------------------------------

def _gather_parts(op: Op, x: TensorType, idx: TensorType):
    """Per result dim: ``("x", d)`` (an operand dim passed through), ``("i", j)`` (an
    indices batch dim); and the operand dims that must be whole."""
    ob = _attr_ints(op, "operand_batching_dims")
    ib = _attr_ints(op, "start_indices_batching_dims")
    collapsed = _attr_ints(op, "collapsed_slice_dims")
    smap = _attr_ints(op, "start_index_map")
    sizes = _attr_ints(op, "slice_sizes")
    offset = _attr_ints(op, "offset_dims")
    kept = [d for d in range(x.rank) if d not in collapsed and d not in ob]
    batch = list(range(idx.rank - 1))
    whole = {d for d in range(x.rank) if d not in ob and (d in smap or sizes[d] != -1)}
    rest, slices = iter(batch), iter(kept)
    result = [("x", next(slices)) if j in offset else ("i", next(rest))
              for j in range(len(batch) + len(kept))]
    return result, whole, dict(zip(ob, ib))


def _gather_slices_rule(op: Op, operands: list[TensorType]) -> tuple:
    x, idx = operands
    result, whole, pairs = _gather_parts(op, x, idx)
    xs, ids = spec(x), spec(idx)
    bad = sorted(d for d in whole if xs[d])
    if bad:
        raise BladecError(f"'gather_slices': operand dim {bad[0]} is indexed or sliced in "
                          f"part, and split {format_sharding(xs)}; gather it first", op.loc)
    if ids[-1]:
        raise BladecError("'gather_slices': the index vector (last dim of the indices) "
                          "must not be split", op.loc)
    for o, i in pairs.items():
        if xs[o] != ids[i]:
            raise BladecError(f"'gather_slices': batching dims {o} of the operand and {i} of "
                              f"the indices are split differently ({format_sharding(xs)} "
                              f"and {format_sharding(ids)})", op.loc)
    if idx.partial:
        raise BladecError("'gather_slices': the indices are partial sums: all_reduce them "
                          "first", op.loc)
    return tuple(xs[d] if kind == "x" else ids[d] for kind, d in result), tuple(x.partial)


def _gather_slices_demand(op: Op, ins: list[TensorType]) -> list[Layout]:
    """The operand keeps its batching and whole-sliced dims' splits; each indices
    batching dim takes its operand dim's split (the more split side wins); the indices'
    other batch dims keep theirs where no operand dim uses the axes."""
    x, idx = ins
    _, whole, pairs = _gather_parts(op, x, idx)
    xs = [() if d in whole else axes for d, axes in enumerate(spec(x))]
    ids = list(spec(idx))
    ids[-1] = ()
    for o, i in pairs.items():
        if len(ids[i]) > len(xs[o]) and not {*ids[i]} & {a for d in xs for a in d}:
            xs[o] = ids[i]
    for o, i in pairs.items():
        ids[i] = xs[o]
    taken = {a for axes in xs for a in axes}
    for j in range(len(ids)):
        if j not in pairs.values():
            ids[j] = tuple(a for a in ids[j] if a not in taken)
    used: set[str] = set()
    for j in range(len(ids)):  # an axis once over the indices
        ids[j] = tuple(a for a in ids[j] if a not in used and not used.add(a))
    part = tuple(sorted(x.partial))
    return [(tuple(xs), part), (tuple(ids), ())]


def _scatter_parts(op: Op, base: TensorType, idx: TensorType, upd: TensorType):
    """Base batching dims, with their indices dims and updates (scatter) dims."""
    ob = _attr_ints(op, "operand_batching_dims")
    ib = _attr_ints(op, "scatter_indices_batching_dims")
    window = _attr_ints(op, "update_window_dims")
    scatter = [j for j in range(upd.rank) if j not in window]
    return [(o, i, scatter[i]) for o, i in zip(ob, ib)]


def _scatter_slices_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Split only along batching dims, alike on base, indices and updates: each device
    then scatters its rows' updates into its rows of the base."""
    base, idx, upd = operands
    triples = _scatter_parts(op, base, idx, upd)
    bs, ids, us = spec(base), spec(idx), spec(upd)
    free_b = [d for d in range(base.rank) if d not in {o for o, _, _ in triples}]
    free_i = [d for d in range(idx.rank) if d not in {i for _, i, _ in triples}]
    free_u = [d for d in range(upd.rank) if d not in {u for _, _, u in triples}]
    if any(bs[d] for d in free_b) or any(ids[d] for d in free_i) or any(us[d] for d in free_u):
        raise BladecError("'scatter_slices': only batching dims may be split (alike on "
                          f"base, indices and updates), got {format_sharding(bs)}, "
                          f"{format_sharding(ids)}, {format_sharding(us)}", op.loc)
    for o, i, u in triples:
        if not bs[o] == ids[i] == us[u]:
            raise BladecError(f"'scatter_slices': batching dims {o}, {i}, {u} of base, "
                              "indices and updates are split differently", op.loc)
    if any(t.partial for t in operands):
        raise BladecError("'scatter_slices' of partial sums: all_reduce them first", op.loc)
    return bs, ()


def _scatter_slices_demand(op: Op, ins: list[TensorType]) -> list[Layout]:
    """The batching dims take the most split of the three's splits."""
    base, idx, upd = ins
    triples = _scatter_parts(op, base, idx, upd)
    bs, ids, us = ([()] * t.rank for t in ins)
    for o, i, u in triples:
        pick = max((spec(base)[o], spec(idx)[i], spec(upd)[u]), key=len)
        bs[o] = ids[i] = us[u] = pick
    used: list[str] = [a for axes in bs for a in axes]
    if len(used) != len(set(used)):
        bs, ids, us = ([()] * t.rank for t in ins)
    return [(tuple(bs), ()), (tuple(ids), ()), (tuple(us), ())]


# -- convolution, random bits --------------------------------------------------------------

def _conv_dims(op: Op) -> tuple[int, int, int, int]:
    lhs, rhs, out = (_attr_ints(op, k) for k in ("lhs_spec", "rhs_spec", "out_spec"))
    return lhs[0], rhs[0], out[0], out[1]


def _conv_rule(op: Op, operands: list[TensorType]) -> tuple:
    """The batch of the input and the output features of the kernel stay split."""
    x, k = operands
    xb, ko, ob, of = _conv_dims(op)
    xs, ks = spec(x), spec(k)
    grouped = int(op.attrs.get("feature_groups", 1)) != 1 or \
        int(op.attrs.get("batch_groups", 1)) != 1
    if any(xs[d] for d in range(x.rank) if d != xb) or any(ks[d] for d in range(k.rank)
                                                           if d != ko) or \
            (grouped and (xs[xb] or ks[ko])):
        raise BladecError("'conv': only the input's batch dim and the kernel's output "
                          "features may be split (ungrouped)", op.loc)
    if x.partial or k.partial:
        raise BladecError("'conv' of partial sums: all_reduce them first", op.loc)
    want = [()] * op.results[0].type.rank
    want[ob], want[of] = xs[xb], ks[ko]
    return tuple(want), ()


def _conv_demand(op: Op, ins: list[TensorType]) -> list[Layout]:
    x, k = ins
    xb, ko, _, _ = _conv_dims(op)
    grouped = int(op.attrs.get("feature_groups", 1)) != 1 or \
        int(op.attrs.get("batch_groups", 1)) != 1
    xs, ks = [()] * x.rank, [()] * k.rank
    if not grouped:
        xs[xb] = spec(x)[xb]
        ks[ko] = tuple(a for a in spec(k)[ko] if a not in xs[xb])
    return [(tuple(xs), ()), (tuple(ks), ())]


def _threefry_rule(op: Op, operands: list[TensorType]) -> tuple:
    key, hi, lo = operands
    if any(spec(key)) or spec(hi) != spec(lo) or any(t.partial for t in operands):
        raise BladecError("'threefry': the key must be whole and the counters split alike "
                          "(not partial sums)", op.loc)
    return spec(hi), ()


def _threefry_demand(op: Op, ins: list[TensorType]) -> list[Layout]:
    key, hi, lo = ins
    pick = max((spec(hi), spec(lo)), key=lambda s: sum(len(a) for a in s))
    return [(((),) * key.rank, ()), (pick, ()), (pick, ())]


RULES: dict[str, Callable[[Op, list[TensorType]], tuple]] = {
    **{name: _passthrough_rule for name in SHAPES},
    "dim_size": _dim_size_rule, "gather_slices": _gather_slices_rule,
    "scatter_slices": _scatter_slices_rule, "conv": _conv_rule, "threefry": _threefry_rule,
}
DEMANDS: dict[str, Callable[[Op, list[TensorType]], list[Layout]]] = {
    **{name: _passthrough_demand for name in SHAPES},
    "dim_size": _as_is, "gather_slices": _gather_slices_demand,
    "scatter_slices": _scatter_slices_demand, "conv": _conv_demand,
    "threefry": _threefry_demand,
}
