"""Ops that read what the runtime knows about a value rather than its elements.

A training step divides by the number of elements it averaged (``jnp.mean`` over a
dynamic batch): JAX writes that count as ``dim_as_value``, a symbolic dim used as a
number. In a listing the count is read off a value that has the dim, so the op stays an
ordinary data-flow op the analysis, the scheduler and remat need no special case for.
"""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder
from bladec.ir import Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import _no_gradient

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
