"""Ops that read what the runtime knows about a value rather than its elements.

A training step divides by the number of elements it averaged (``jnp.mean`` over a
dynamic batch): JAX writes that count as ``dim_as_value``, a symbolic dim used as a
number. In a listing the count is read off a value that has the dim, so the op stays an
ordinary data-flow op the analysis, the scheduler and remat need no special case for.
"""
from __future__ import annotations

from bladec.ir import Op
from bladec.ops import OpDef, RuleResult, ShapeCtx, register

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
               _dim_size, attrs={"dim": "int"}, required=frozenset({"dim"}), flops=_no_flops))
