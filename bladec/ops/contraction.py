"""Contractions: ``dot`` (matrix product) and ``dot_general`` (batched, any dims)."""
from __future__ import annotations

from bladec.ops import OpDef, RuleResult, ShapeCtx, register


def _dot(ctx: ShapeCtx) -> list[RuleResult]:
    a, b = ctx.operands
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2):
        raise ctx.fail(f"operands must have rank 1 or 2, got {len(a)} and {len(b)}")
    if ctx.dtypes[0] != ctx.dtypes[1]:
        raise ctx.fail(f"operands differ in element type ({ctx.dtypes[0]}, {ctx.dtypes[1]})")
    ctx.equal(a[-1], b[0], "contracting dims (last of operand 0, first of operand 1)")
    return [(a[:-1] + b[1:], ctx.dtypes[0])]


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
    return [([a[i] for i in lb] + free_a + free_b, ctx.dtypes[0])]


register(OpDef("dot", "`dot(%a, %b)`: matrix product of a [M, K] (or [K]) and b [K, N] (or [K]).",
               _dot, 2, 2))
register(OpDef("dot_general", "`dot_general(%a, %b) {lhs_batch = [...], rhs_batch = [...], "
               "lhs_contract = [...], rhs_contract = [...]}`: result dims are the batch dims, "
               "then a's free dims, then b's free dims (XLA's convention).", _dot_general, 2, 2,
               attrs={k: "ints" for k in ("lhs_batch", "rhs_batch", "lhs_contract", "rhs_contract")},
               required=frozenset({"lhs_contract", "rhs_contract"})))
