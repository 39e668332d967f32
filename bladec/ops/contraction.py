"""Contractions: ``dot`` (matrix product) and ``dot_general`` (batched, any dims)."""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder
from bladec.ir import DTYPE_BYTES, FLOAT_DTYPES, Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register


def _accumulated(ctx: ShapeCtx) -> str:
    """The result's element type: the operands', or a wider float declared for the result
    (bf16 operands summed into f32, as XLA's ``preferred_element_type``)."""
    have, declared = ctx.dtypes[0], ctx.declared[0].dtype
    if have in FLOAT_DTYPES and declared in FLOAT_DTYPES and \
            DTYPE_BYTES[declared] >= DTYPE_BYTES[have]:
        return declared
    return have


def _dot(ctx: ShapeCtx) -> list[RuleResult]:
    a, b = ctx.operands
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2):
        raise ctx.fail(f"operands must have rank 1 or 2, got {len(a)} and {len(b)}")
    if ctx.dtypes[0] != ctx.dtypes[1]:
        raise ctx.fail(f"operands differ in element type ({ctx.dtypes[0]}, {ctx.dtypes[1]})")
    ctx.equal(a[-1], b[0], "contracting dims (last of operand 0, first of operand 1)")
    return [(a[:-1] + b[1:], _accumulated(ctx))]


def _dot_general(ctx: ShapeCtx) -> list[RuleResult]:
    a, b = ctx.operands
    lb, rb = ctx.ints("lhs_batch"), ctx.ints("rhs_batch")
    lc, rc = ctx.ints("lhs_contract"), ctx.ints("rhs_contract")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ctx.fail("batch and contracting dim lists must pair up between the operands")
    lb, lc = [ctx.axis(d, len(a)) for d in lb], [ctx.axis(d, len(a)) for d in lc]
    rb, rc = [ctx.axis(d, len(b)) for d in rb], [ctx.axis(d, len(b)) for d in rc]
    if len(set(lb + lc)) != len(lb + lc) or len(set(rb + rc)) != len(rb + rc):
        raise ctx.fail("a dim is listed twice among batch and contracting dims")
    if ctx.dtypes[0] != ctx.dtypes[1]:
        raise ctx.fail(f"operands differ in element type ({ctx.dtypes[0]}, {ctx.dtypes[1]})")
    for i, j in zip(lb, rb):
        ctx.equal(a[i], b[j], f"batch dims {i} and {j}")
    for i, j in zip(lc, rc):
        ctx.equal(a[i], b[j], f"contracting dims {i} and {j}")
    free_a = [d for i, d in enumerate(a) if i not in lb and i not in lc]
    free_b = [d for j, d in enumerate(b) if j not in rb and j not in rc]
    return [([a[i] for i in lb] + free_a + free_b, _accumulated(ctx))]


def _contraction_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """The result is [batch, a's free dims, b's free dims]; each operand's cotangent is
    the cotangent contracted with the other operand over the other's free dims, then
    transposed into the operand's dim order."""
    g = gs[0]
    x, y = op.operands
    ra, rb_ = b.type(x).rank, b.type(y).rank
    if g is None:
        return [None, None]
    if op.name == "dot":
        lb, rb, lc, rc = [], [], [ra - 1], [0]
    else:
        lb, rb = [d % ra for d in op.attrs.get("lhs_batch", ())], \
            [d % rb_ for d in op.attrs.get("rhs_batch", ())]
        lc, rc = [d % ra for d in op.attrs["lhs_contract"]], \
            [d % rb_ for d in op.attrs["rhs_contract"]]
    free_a = [i for i in range(ra) if i not in lb and i not in lc]
    free_b = [j for j in range(rb_) if j not in rb and j not in rc]
    nb, nfa, nfb = len(lb), len(free_a), len(free_b)
    batch = list(range(nb))
    # a wider result (bf16 operands, f32 sums): the cotangent in the operands' type, each
    # operand's cotangent summed in the wider type and then rounded to the operand's
    wide = b.type(g).dtype
    g = b.convert(g, b.type(x).dtype)
    g_free_a = [nb + k for k in range(nfa)]
    g_free_b = [nb + nfa + k for k in range(nfb)]
    by_rc = [lc[k] for k in sorted(range(len(rc)), key=lambda k: rc[k])]
    by_lc = [rc[k] for k in sorted(range(len(lc)), key=lambda k: lc[k])]
    # dx: g with y over b's free dims; either operand order, the one whose result is
    # already in x's dim order where there is one (a transpose of [B, H, S, S] saved)
    dx = _contract_into(b, ra, wide, [
        ((g, y, batch, rb, g_free_b, free_b), lb + free_a + by_rc),
        ((y, g, rb, batch, free_b, g_free_b), lb + by_rc + free_a)])
    dy = _contract_into(b, rb_, wide, [
        ((x, g, lb, batch, free_a, g_free_a), rb + by_lc + free_b),
        ((g, x, batch, lb, g_free_a, free_a), rb + free_b + by_lc)])
    return [b.convert(dx, b.type(x).dtype), b.convert(dy, b.type(y).dtype)]


def _contract_into(b: Builder, rank: int, dtype: str, options: list[tuple[tuple, list[int]]]
                   ) -> str:
    """The first option whose result dims (``src``: which operand dim each is) need no
    transpose, else the first one transposed."""
    args, src = next(((a, s) for a, s in options if s == list(range(rank))), options[0])
    return b.transpose(b.dot_general(*args, dtype), [src.index(i) for i in range(rank)])


_ACCUMULATE_DOC = (" The result's element type is the operands' or a wider float type, in "
                   "which the products are summed (bf16 operands into an f32 result).")
register(OpDef("dot", "`dot(%a, %b)`: matrix product of a [M, K] (or [K]) and b [K, N] (or [K])."
               + _ACCUMULATE_DOC,
               _dot, 2, 2, adjoint=_contraction_adjoint))
register(OpDef("dot_general", "`dot_general(%a, %b) {lhs_batch = [...], rhs_batch = [...], "
               "lhs_contract = [...], rhs_contract = [...]}`: result dims are the batch dims, "
               "then a's free dims, then b's free dims (XLA's convention)." + _ACCUMULATE_DOC,
               _dot_general, 2, 2,
               attrs={k: "ints" for k in ("lhs_batch", "rhs_batch", "lhs_contract", "rhs_contract")},
               required=frozenset({"lhs_contract", "rhs_contract"}),
               adjoint=_contraction_adjoint))
