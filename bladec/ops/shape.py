"""Ops that move or create data without arithmetic: broadcasts, reshapes, slices, constants."""
from __future__ import annotations

from bladec.ops import OpDef, RuleResult, ShapeCtx, numel, register


def _broadcast_in_dim(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    out = list(ctx.declared_dims[0])
    if ctx.attr("dims") is None:  # Listing 1's form: the result type says it all
        return [(None, ctx.dtypes[0])]
    dims = ctx.ints("dims")
    if len(dims) != len(src):
        raise ctx.fail(f"'dims' has {len(dims)} entries for an operand of rank {len(src)}")
    if len(set(dims)) != len(dims):
        raise ctx.fail("'dims' has repeated entries")
    for i, d in enumerate(dims):
        d = ctx.axis(d, len(out), "dims entry")
        if not (src[i].is_const and src[i].const == 1):
            out[d] = src[i]
    return [(out, ctx.dtypes[0])]


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


def _slice(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    start, limit = ctx.ints("start"), ctx.ints("limit")
    strides = ctx.ints("strides", [1] * len(src))
    if not len(start) == len(limit) == len(strides) == len(src):
        raise ctx.fail(f"'start', 'limit' and 'strides' need {len(src)} entries each")
    out = []
    for j, (lo, hi, step) in enumerate(zip(start, limit, strides)):
        if lo < 0 or hi < lo or step < 1:
            raise ctx.fail(f"bad slice {lo}:{hi}:{step} in dim {j}")
        ctx.at_least(src[j], hi, f"dim {j} sliced up to {hi}")
        out.append(-(-(hi - lo) // step))
    from bladec.symbolic.expr import const
    return [([const(n) for n in out], ctx.dtypes[0])]


def _declared(ctx: ShapeCtx) -> list[RuleResult]:
    return [(None, None)]


def _iota(ctx: ShapeCtx) -> list[RuleResult]:
    ctx.axis(int(ctx.attr("dim")), ctx.declared[0].rank)
    return [(None, None)]


_BROADCAST_DOC = ("the result type gives the shape; operand dim i becomes result dim "
                  "`dims[i]` (an operand dim of 1 is expanded)")
register(OpDef("broadcast_in_dim", f"`broadcast_in_dim(%x) {{dims = [...]}}`: {_BROADCAST_DOC}.",
               _broadcast_in_dim, attrs={"dims": "ints"}, required=frozenset({"dims"})))
register(OpDef("broadcast", "`broadcast(%x) [{dims = [...]}]`: as broadcast_in_dim; without "
               "`dims` (as in the paper's Listing 1) no relation is derived and execution "
               "aligns trailing dims as NumPy does.", _broadcast_in_dim, attrs={"dims": "ints"}))
register(OpDef("reshape", "`reshape(%x) -> T`: same elements, row-major, in the shape of T; "
               "the element counts are equal.", _reshape))
register(OpDef("dynamic_reshape", "`dynamic_reshape(%x, %shape) -> T`: as reshape; %shape "
               "names the target shape at run time and may be left undefined (a warning): the "
               "result type is the target shape. bladec writes an undefined %shape as "
               "`dynamic_reshape(%x) {shape = \"%shape\"}`, which parses without a warning "
               "(the attribute only keeps the name).", _reshape, 1, 2, attrs={"shape": "str"}))
register(OpDef("transpose", "`transpose(%x) {perm = [...]}`: result dim i is operand dim perm[i].",
               _transpose, attrs={"perm": "ints"}, required=frozenset({"perm"})))
register(OpDef("concatenate", "`concatenate(%a, %b, ...) {dim = D}`: join along D; other dims "
               "equal; the result's dim D is the sum.", _concatenate, 1, None,
               attrs={"dim": "int"}, required=frozenset({"dim"})))
register(OpDef("slice", "`slice(%x) {start = [...], limit = [...], strides = [...]}`: static "
               "window; the operand dim must be at least `limit`.", _slice,
               attrs={"start": "ints", "limit": "ints", "strides": "ints"},
               required=frozenset({"start", "limit"})))
register(OpDef("iota", "`iota() {dim = D} -> T`: T filled with its index along D.", _iota, 0, 0,
               attrs={"dim": "int"}, required=frozenset({"dim"})))
register(OpDef("constant", "`constant() {value = V} -> T`: T filled with V.", _declared, 0, 0,
               attrs={"value": "number"}, required=frozenset({"value"})))
register(OpDef("rng_uniform", "`rng_uniform() {seed = N} -> T`: uniform random numbers in "
               "[0, 1); never recomputed (a second draw would differ).", _declared, 0, 0,
               attrs={"seed": "int"}, required=frozenset({"seed"}), recomputable=False))
