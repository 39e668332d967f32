"""Reshapes with structure: splitting one dim and merging consecutive dims.

A ``reshape`` only equates element counts, so after ``[B, S, 16] -> [B, S, 2, 8]`` the
analysis knows ``B*S*16 = X*Y*16`` and not that X is B; the head split of every attention
layer would need a hint. ``split_dim`` and ``merge_dims`` say which dims they touch, so
their shape rules carry the others through and relate the touched ones.
"""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder
from bladec.ir import Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.symbolic.expr import const, product


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


G = list[Optional[str]]


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
