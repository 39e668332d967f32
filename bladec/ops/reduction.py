"""Reductions over a set of dims."""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder
from bladec.ir import Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register

REDUCE_KINDS = ("sum", "max", "min", "prod")


def _reduce(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    if ctx.attr("dims") is None:
        # Listing 1 writes `reduce(%3)`: the dims dropped are the trailing ones.
        dropped = len(src) - ctx.declared[0].rank
        if dropped < 0:
            raise ctx.fail("result has higher rank than the operand; give 'dims'")
        dims = list(range(len(src) - dropped, len(src)))
    else:
        dims = [ctx.axis(d, len(src)) for d in ctx.ints("dims")]
        if len(set(dims)) != len(dims):   # after negative entries count from the end
            raise ctx.fail("'dims' has repeated entries")   # (XLA's reduce refuses them)
        dims.sort()
    kind = ctx.attr("kind", "sum")
    if kind not in REDUCE_KINDS:
        raise ctx.fail(f"kind must be one of {', '.join(REDUCE_KINDS)}")
    if kind in ("max", "min"):  # sum and prod of nothing are 0 and 1; max and min have none
        for d in dims:
            if src[d].is_const and src[d].const == 0:
                raise ctx.fail(f"a {kind} over dim {d}, of size 0, has no value")
    return [([d for i, d in enumerate(src) if i not in dims], ctx.dtypes[0])]


def _reduce_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """sum: the cotangent broadcast back. max and min: shared among the entries equal to
    the result (JAX's rule for ties). prod: g * y / x, which needs x non-zero."""
    g, x, y = gs[0], op.operands[0], op.results[0].name
    if g is None:
        return [None]
    t = b.type(x)
    dims = op.attrs.get("dims")
    dims = set(range(b.type(y).rank, t.rank)) if dims is None else {d % t.rank for d in dims}
    kept = [i for i in range(t.rank) if i not in dims]
    spread = b.broadcast(g, kept, t)
    kind = op.attrs.get("kind", "sum")
    if kind == "sum":
        return [spread]
    if kind == "prod":
        return [b.div(b.mul(spread, b.broadcast(y, kept, t)), x)]
    hit = b.convert(b.compare(x, b.broadcast(y, kept, t), "EQ"), t.dtype)
    share = b.div(g, b.reduce_sum(hit, sorted(dims)))
    return [b.mul(b.broadcast(share, kept, t), hit)]


register(OpDef("reduce", "`reduce(%x) {dims = [...], kind = \"sum\"}`: reduce the given dims "
               "(kind sum, max, min or prod; default sum; max and min need every reduced dim "
               "non-empty); without `dims`, the trailing dims that the result type drops.", _reduce,
               attrs={"dims": "ints", "kind": "str"}, adjoint=_reduce_adjoint))
