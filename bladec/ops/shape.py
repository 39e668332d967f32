"""Ops that move or create data without arithmetic: broadcasts, reshapes, slices, constants.

Reshapes with structure: splitting one dim and merging consecutive dims.

A ``reshape`` only equates element counts, so after ``[B, S, 16] -> [B, S, 2, 8]`` the
analysis knows ``B*S*16 = X*Y*16`` and not that X is B; the head split of every attention
layer would need a hint. ``split_dim`` and ``merge_dims`` say which dims they touch, so
their shape rules carry the others through and relate the touched ones.

Ops that read what the runtime knows about a value rather than its elements.

A training step divides by the number of elements it averaged (``jnp.mean`` over a
dynamic batch): JAX writes that count as ``dim_as_value``, a symbolic dim used as a
number. In a listing the count is read off a value that has the dim, so the op stays an
ordinary data-flow op the analysis, the scheduler and remat need no special case for.
"""
from __future__ import annotations

import math
from typing import Optional

from bladec.adjoint import Builder, dims_of, make_type
from bladec.ir import FLOAT_DTYPES, INT_RANGES, Op, TensorType
from bladec.ops.elementwise import _no_gradient
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, numel, register
from bladec.symbolic.expr import const, product


SEED_MAX = 2 ** 63 - 1  # seeds are non-negative 64-bit integers, as both backends take them


def _broadcast_in_dim(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    out = list(ctx.declared_dims[0])
    if ctx.attr("dims") is None:  # Listing 1's form: the result type says it all
        return [(None, ctx.dtypes[0])]
    dims = ctx.ints("dims")
    if len(dims) != len(src):
        raise ctx.fail(f"'dims' has {len(dims)} entries for an operand of rank {len(src)}")
    dims = [ctx.axis(d, len(out), "dims entry") for d in dims]
    if len(set(dims)) != len(dims):   # after negative entries count from the end
        raise ctx.fail("'dims' has repeated entries")
    for i, d in enumerate(dims):
        if not (src[i].is_const and src[i].const == 1):
            out[d] = src[i]
    return [(out, ctx.dtypes[0])]


def _broadcast_runs(ctx: ShapeCtx) -> None:
    """Without ``dims``, execution aligns trailing dims as NumPy does: each operand dim
    must be 1 or the result's dim (Listing 1's ``12x11008`` to ``4096x?`` is neither)."""
    if ctx.attr("dims") is not None:
        return
    src, out = ctx.operands[0], ctx.declared_dims[0]
    if len(src) > len(out):
        raise ctx.fail(f"an operand of rank {len(src)} can not broadcast to rank {len(out)}")
    for i in range(1, len(src) + 1):
        s, o = src[-i], out[-i]
        diff = s - o
        if not (s.is_const and s.const == 1) and diff.is_const and diff.const != 0:
            raise ctx.fail(f"operand dim {len(src) - i} ({s}) can not broadcast to result "
                           f"dim {len(out) - i} ({o}): without 'dims', trailing dims line "
                           "up and each operand dim must be 1 or equal to the result's")


def _reshape(ctx: ShapeCtx) -> list[RuleResult]:
    ctx.equal(numel(ctx.operands[0]), numel(ctx.declared_dims[0]), "element count")
    return [(None, ctx.dtypes[0])]


def _transpose(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    perm = ctx.ints("perm")
    if sorted(perm) != list(range(len(src))):
        raise ctx.fail(f"'perm' {perm} is not a permutation of 0..{len(src) - 1}")
    return [([src[p] for p in perm], ctx.dtypes[0])]


def _concatenate(ctx: ShapeCtx) -> list[RuleResult]:
    first = ctx.operands[0]
    axis = ctx.axis(int(ctx.attr("dim")), len(first))
    total = first[axis]
    for i, dims in enumerate(ctx.operands[1:], start=1):
        if len(dims) != len(first):
            raise ctx.fail(f"operand {i} has rank {len(dims)}, operand 0 has rank {len(first)}")
        if ctx.dtypes[i] != ctx.dtypes[0]:
            raise ctx.fail(f"operand {i} is {ctx.dtypes[i]}, operand 0 is {ctx.dtypes[0]}")
        for j, (a, b) in enumerate(zip(first, dims)):
            if j != axis:
                ctx.equal(a, b, f"dim {j} of operands 0 and {i}")
        total = total + dims[axis]
    out = list(first)
    out[axis] = total
    return [(out, ctx.dtypes[0])]


# a slice's limit that keeps its dim whole (start 0, stride 1), whatever the dim's size:
# the only way a slice leaves a dynamic dim as it is (the sliced dims are static)
WHOLE = -1


def _slice(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    start, limit = ctx.ints("start"), ctx.ints("limit")
    strides = ctx.ints("strides", [1] * len(src))
    if not len(start) == len(limit) == len(strides) == len(src):
        raise ctx.fail(f"'start', 'limit' and 'strides' need {len(src)} entries each")
    out = []
    for j, (lo, hi, step) in enumerate(zip(start, limit, strides)):
        if hi == WHOLE and lo == 0 and step == 1:
            out.append(src[j])      # kept whole: a dynamic dim passes through
            continue
        if lo < 0 or hi < lo or step < 1:
            raise ctx.fail(f"bad slice {lo}:{hi}:{step} in dim {j}")
        ctx.at_least(src[j], hi, f"dim {j} sliced up to {hi}")
        out.append(const(-(-(hi - lo) // step)))
    return [(out, ctx.dtypes[0])]


def _constant(ctx: ShapeCtx) -> list[RuleResult]:
    """The value must be one the element type holds: NumPy refuses ``-1`` as u8 and JAX
    wraps it; an integer type gets a finite number in its range (a fraction truncates,
    as in both backends); a float type takes any number (too large rounds to inf)."""
    value, dtype = ctx.attr("value"), ctx.declared[0].dtype
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        if isinstance(value, float) and not math.isfinite(value):
            raise ctx.fail(f"value {value} is not a number of type {dtype}")
        whole = int(value)
        if not lo <= whole <= hi or (dtype == "i1" and whole != value):
            shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}..."
            raise ctx.fail(f"value {shown} is outside the range of {dtype} [{lo}, {hi}]")
    return [(None, None)]


def _iota(ctx: ShapeCtx) -> list[RuleResult]:
    ctx.axis(int(ctx.attr("dim")), ctx.declared[0].rank)
    if ctx.declared[0].dtype == "i1":
        raise ctx.fail("the result can not be i1 (an index is not a truth value)")
    return [(None, None)]


def _rng_uniform(ctx: ShapeCtx) -> list[RuleResult]:
    dtype = ctx.declared[0].dtype
    if dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"the result must have a float type (numbers in [0, 1)), got {dtype}")
    seed = ctx.attr("seed")
    if not 0 <= seed <= SEED_MAX:
        shown = str(seed) if len(str(seed)) <= 24 else f"{str(seed)[:20]}..."
        raise ctx.fail(f"seed {shown} is outside [0, 2^63 - 1]")
    return [(None, None)]


# -- adjoints ---------------------------------------------------------------------------
G = list[Optional[str]]


def _broadcast_adjoint(b: Builder, op: Op, gs: G) -> G:
    x, g = op.operands[0], gs[0]
    if g is None:
        return [None]
    rank, src_rank = op.results[0].type.rank, b.type(x).rank
    dims = op.attrs.get("dims", tuple(range(rank - src_rank, rank)))  # trailing alignment
    return [b.unbroadcast(g, x, dims)]


def _reshape_adjoint(b: Builder, op: Op, gs: G) -> G:
    return [b.reshape(gs[0], b.type(op.operands[0])) if gs[0] else None] + \
        [None] * (len(op.operands) - 1)  # the shape operand of dynamic_reshape


def _transpose_adjoint(b: Builder, op: Op, gs: G) -> G:
    perm = list(op.attrs["perm"])
    return [b.transpose(gs[0], [perm.index(i) for i in range(len(perm))]) if gs[0] else None]


def _rows(b: Builder, g: str, axis: int, ids: str) -> str:
    """The entries of ``g`` along ``axis`` picked by ``ids`` (a gather of rows, with the
    axis moved to the front and back): exact, and the other dims may be dynamic."""
    rank = b.type(g).rank
    perm = [axis] + [k for k in range(rank) if k != axis]
    front = b.transpose(g, perm)
    picked = make_type(dims_of(b.type(ids)) + dims_of(b.type(front))[1:], b.type(g).dtype)
    return b.transpose(b.emit("gather", [front, ids], picked), [perm.index(k) for k in range(rank)])


def _positions(b: Builder, count: int, start: int, stride: int = 1) -> str:
    """``start + stride * iota(count)`` as i32 ids."""
    t = TensorType((count,), "i32", (f"C{count}",))
    ids = b.emit("iota", [], t, {"dim": 0})
    if stride != 1:
        ids = b.mul(ids, b.const(stride, t))
    return b.add(ids, b.const(start, t)) if start else ids


def _concatenate_adjoint(b: Builder, op: Op, gs: G) -> G:
    g = gs[0]
    if g is None:
        return [None] * len(op.operands)
    axis = int(op.attrs["dim"]) % b.type(g).rank
    sizes = [b.type(x).dims[axis] for x in op.operands]
    if None in sizes:
        raise b.fail(op, "no adjoint for a concatenation along a dynamic dim (the pieces' "
                     "offsets are not known when the listing is compiled)")
    out: G = []
    offset = 0
    for x, n in zip(op.operands, sizes):
        if b.type(x).dtype not in FLOAT_DTYPES:
            out.append(None)
        elif len(op.operands) == 1:
            out.append(g)
        else:
            out.append(_rows(b, g, axis, _positions(b, n, offset)))
        offset += n
    return out


def _slice_adjoint(b: Builder, op: Op, gs: G) -> G:
    """The cotangent in place in a zero tensor of the operand's shape: one scatter-add per
    sliced dim (each with that dim moved to the front), so dynamic operand dims stay."""
    g, x = gs[0], op.operands[0]
    if g is None:
        return [None]
    src = dims_of(b.type(x))
    start, limit = op.attrs["start"], op.attrs["limit"]
    strides = op.attrs.get("strides", (1,) * len(start))
    cur = g
    for j, (lo, hi, step) in enumerate(zip(start, limit, strides)):
        if lo == 0 and step == 1 and (hi == WHOLE or src[j][0] == hi):
            continue
        rank = len(src)
        perm = [j] + [k for k in range(rank) if k != j]
        front = b.transpose(cur, perm)
        base = b.const(0.0, make_type([src[j]] + dims_of(b.type(front))[1:], b.type(g).dtype))
        count = b.type(front).dims[0]
        placed = b.emit("scatter_add", [base, _positions(b, count, lo, step), front],
                        b.type(base))
        cur = b.transpose(placed, [perm.index(k) for k in range(rank)])
    return [cur]


_BROADCAST_DOC = ("the result type gives the shape; operand dim i becomes result dim "
                  "`dims[i]` (an operand dim of 1 is expanded)")
register(OpDef("broadcast_in_dim", f"`broadcast_in_dim(%x) {{dims = [...]}}`: {_BROADCAST_DOC}.",
               _broadcast_in_dim, attrs={"dims": "ints"}, required=frozenset({"dims"}),
               adjoint=_broadcast_adjoint, expanding=True))
register(OpDef("broadcast", "`broadcast(%x) [{dims = [...]}]`: as broadcast_in_dim; without "
               "`dims` (as in the paper's Listing 1) no relation is derived and execution "
               "aligns trailing dims as NumPy does (`run` refuses operand dims that are "
               "neither 1 nor the result's).", _broadcast_in_dim, attrs={"dims": "ints"},
               run_rule=_broadcast_runs, adjoint=_broadcast_adjoint, expanding=True))
register(OpDef("reshape", "`reshape(%x) -> T`: same elements, row-major, in the shape of T; "
               "the element counts are equal.", _reshape, adjoint=_reshape_adjoint))
register(OpDef("dynamic_reshape", "`dynamic_reshape(%x, %shape) -> T`: as reshape; %shape "
               "names the target shape at run time and may be left undefined (a warning): the "
               "result type is the target shape. bladec writes an undefined %shape as "
               "`dynamic_reshape(%x) {shape = \"%shape\"}`, which parses without a warning "
               "(the attribute only keeps the name).", _reshape, 1, 2, attrs={"shape": "str"},
               adjoint=_reshape_adjoint))
register(OpDef("transpose", "`transpose(%x) {perm = [...]}`: result dim i is operand dim perm[i].",
               _transpose, attrs={"perm": "ints"}, required=frozenset({"perm"}),
               adjoint=_transpose_adjoint))
register(OpDef("concatenate", "`concatenate(%a, %b, ...) {dim = D}`: join along D; other dims "
               "equal; the result's dim D is the sum.", _concatenate, 1, None,
               attrs={"dim": "int"}, required=frozenset({"dim"}),
               adjoint=_concatenate_adjoint))
register(OpDef("slice", "`slice(%x) {start = [...], limit = [...], strides = [...]}`: static "
               "window; the operand dim must be at least `limit`. A limit of -1 (with start 0, "
               "stride 1) keeps the dim whole, whatever its size: a dynamic dim passes "
               "through, so a window of the other dims needs no gather.", _slice,
               attrs={"start": "ints", "limit": "ints", "strides": "ints"},
               required=frozenset({"start", "limit"}), adjoint=_slice_adjoint))
register(OpDef("iota", "`iota() {dim = D} -> T`: T filled with its index along D (T not i1).",
               _iota, 0, 0,
               attrs={"dim": "int"}, required=frozenset({"dim"}), expanding=True))
register(OpDef("constant", "`constant() {value = V} -> T`: T filled with V, a value of T's "
               "element type (in range for an integer type; a fraction truncates).", _constant,
               0, 0, attrs={"value": "number"}, required=frozenset({"value"}),
               expanding=True))
register(OpDef("rng_uniform", "`rng_uniform() {seed = N} -> T`: uniform random numbers in "
               "[0, 1) of a float type T, from a seed in [0, 2^63 - 1]; never recomputed (a "
               "second draw would differ).", _rng_uniform, 0, 0,
               attrs={"seed": "int"}, required=frozenset({"seed"}), recomputable=False))


def _split_dim(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    if not src:
        raise ctx.fail("the operand is a scalar: there is no dim to split")
    d = ctx.axis(int(ctx.attr("dim")), len(src))
    sizes = ctx.ints("sizes")
    if not sizes or sum(1 for n in sizes if n == -1) > 1 or any(n < -1 for n in sizes):
        raise ctx.fail(f"'sizes' {sizes} must be non-negative, with at most one -1")
    decl = ctx.declared_dims[0]
    if len(decl) != len(src) - 1 + len(sizes):
        raise ctx.fail(f"result must have rank {len(src) - 1 + len(sizes)}")
    parts = [decl[d + i] if n == -1 else const(n) for i, n in enumerate(sizes)]
    ctx.equal(src[d], product(parts), f"dim {d} = the product of 'sizes'")
    return [(list(src[:d]) + parts + list(src[d + 1:]), ctx.dtypes[0])]


def _merge_dims(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    d = ctx.axis(int(ctx.attr("dim")), len(src)) if src else 0
    n = int(ctx.attr("count"))
    if n < 1 or d + n > len(src):
        raise ctx.fail(f"'count' {n} from dim {d} does not fit rank {len(src)}")
    return [(list(src[:d]) + [product(src[d:d + n])] + list(src[d + n:]), ctx.dtypes[0])]




def _split_dim_adjoint(b: Builder, op: Op, gs: G) -> G:
    """The split dims merged back: the inverse reshape, still saying which dims it touches."""
    x = op.operands[0]
    if gs[0] is None:
        return [None]
    d = int(op.attrs["dim"]) % b.type(x).rank
    return [b.emit("merge_dims", [gs[0]], b.type(x),
                   {"dim": d, "count": len(op.attrs["sizes"])})]


def _merge_dims_adjoint(b: Builder, op: Op, gs: G) -> G:
    """The merged dim split back into x's: a ``split_dim`` where at most one of them is
    dynamic (its size the -1), else a plain reshape to x's type, whose bound dims keep
    the relation."""
    x = op.operands[0]
    if gs[0] is None:
        return [None]
    xt = b.type(x)
    d = int(op.attrs["dim"]) % xt.rank
    parts = xt.dims[d:d + int(op.attrs["count"])]
    if sum(1 for p in parts if p is None) > 1:
        return [b.emit("reshape", [gs[0]], xt)]
    return [b.emit("split_dim", [gs[0]], xt,
                   {"dim": d, "sizes": tuple(-1 if p is None else p for p in parts)})]


register(OpDef("split_dim", "`split_dim(%x) {dim = 2, sizes = [2, 8]}`: a reshape that "
               "splits dim `dim` into dims of `sizes` (at most one -1: the declared size), "
               "the other dims unchanged.", _split_dim, attrs={"dim": "int", "sizes": "ints"},
               required=frozenset({"dim", "sizes"}), adjoint=_split_dim_adjoint))
register(OpDef("merge_dims", "`merge_dims(%x) {dim = 0, count = 2}`: a reshape that merges "
               "`count` consecutive dims from `dim` into one (their product), the other dims "
               "unchanged.", _merge_dims, attrs={"dim": "int", "count": "int"},
               required=frozenset({"dim", "count"}), adjoint=_merge_dims_adjoint))


SIZE_DTYPES = ("i32", "i64")


def _dim_size(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    if not src:
        raise ctx.fail("the operand is a scalar: it has no dim to read")
    ctx.axis(int(ctx.attr("dim")), len(src))
    dtype = ctx.declared[0].dtype
    if dtype not in SIZE_DTYPES:
        raise ctx.fail(f"the result must be i32 or i64, declared {dtype}")
    return [([], dtype)]


def _no_flops(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    return 0


register(OpDef("dim_size", "`dim_size(%x) {dim = 0} -> tensor<i32>`: the size of one dim "
               "of x as a scalar (i32 or i64), read from x's shape, not its elements: "
               "JAX's `dim_as_value`, e.g. the divisor of `jnp.mean` over a dynamic batch.",
               _dim_size, attrs={"dim": "int"}, required=frozenset({"dim"}), flops=_no_flops,
               adjoint=_no_gradient))


def _broadcast_like(ctx: ShapeCtx) -> list[RuleResult]:
    """Each result dim is a reference operand's dim (``source``/``axis``), else x's (by
    ``dims``, as broadcast_in_dim maps them), else the declared (static) size."""
    x, refs = ctx.operands[0], ctx.operands[1:]
    source, axis = ctx.ints("source"), ctx.ints("axis")
    dims = ctx.ints("dims", [])
    rank = ctx.declared[0].rank
    if len(source) != rank or len(axis) != rank:
        raise ctx.fail(f"'source' and 'axis' need one entry per result dim ({rank})")
    if len(dims) != len(x):
        raise ctx.fail(f"'dims' needs one distinct entry per operand dim ({len(x)})")
    dims = [ctx.axis(d, rank, "dims entry") for d in dims]
    if len(set(dims)) != len(dims):   # after negative entries count from the end
        raise ctx.fail(f"'dims' needs one distinct entry per operand dim ({len(x)})")
    out = list(ctx.declared_dims[0])
    for k, d in enumerate(dims):
        if not (x[k].is_const and x[k].const == 1):
            out[d] = x[k]
    for i, (s, a) in enumerate(zip(source, axis)):
        if s < 0:
            continue
        if s >= len(refs):
            raise ctx.fail(f"source {s} of result dim {i}: there are {len(refs)} references")
        ref = refs[s]
        a = ctx.axis(a, len(ref), f"axis of result dim {i}")
        if i in [d % rank for d in dims] and out[i] is not ctx.declared_dims[0][i]:
            ctx.equal(out[i], ref[a], f"result dim {i} from x and from reference {s}")
        out[i] = ref[a]
    return [(out, ctx.dtypes[0])]


def _broadcast_like_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """x's cotangent as for ``broadcast_in_dim`` with the same ``dims``; the references
    give only their shapes, so they get none."""
    rest: list[Optional[str]] = [None] * (len(op.operands) - 1)
    if gs[0] is None:
        return [None] + rest
    dims = [int(d) for d in op.attrs.get("dims", ())]
    return [b.unbroadcast(gs[0], op.operands[0], dims)] + rest


register(OpDef("broadcast_like", "`broadcast_like(%x, %ref) {dims = [], source = [0, 0], "
               "axis = [1, 1]} -> tensor<?x?>`: x broadcast as by `broadcast_in_dim` (x's "
               "dim k becomes result dim `dims[k]`), into a result whose dim i is the dim "
               "`axis[i]` of reference operand `source[i]` (the operands after x; -1: the "
               "declared static size). What a constant or a broadcast of a scalar to a "
               "dynamic shape (`jnp.ones((s, s))`, `jnp.zeros_like(x)`) is imported as, so "
               "that the analysis relates its dims to the inputs' without hints; only the "
               "references' shapes are read.", _broadcast_like, 1, None,
               attrs={"dims": "ints", "source": "ints", "axis": "ints"},
               required=frozenset({"source", "axis"}), adjoint=_broadcast_like_adjoint))
