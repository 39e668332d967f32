"""Row gather and scatter-add along dim 0: the embedding lookup and its gradient."""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder
from bladec.ir import Op, TensorType
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register

INDEX_DTYPES = ("i32", "i64")


def _check_ids(ctx: ShapeCtx, i: int) -> None:
    if ctx.dtypes[i] not in INDEX_DTYPES:
        raise ctx.fail(f"indices (operand {i}) must be i32 or i64, got {ctx.dtypes[i]}")


def _gather(ctx: ShapeCtx) -> list[RuleResult]:
    table, ids = ctx.operands
    _check_ids(ctx, 1)
    if not table:
        raise ctx.fail("the table (operand 0) needs rank at least 1")
    empty = [d.is_const and d.const == 0 for d in ids]
    if table[0].is_const and table[0].const == 0 and not any(empty):
        raise ctx.fail("the table (operand 0) has no rows to pick from")
    return [(list(ids) + list(table[1:]), ctx.dtypes[0])]


def _scatter_add(ctx: ShapeCtx) -> list[RuleResult]:
    base, ids, updates = ctx.operands
    _check_ids(ctx, 1)
    want = list(ids) + list(base[1:])
    if len(updates) != len(want):
        raise ctx.fail(f"updates must have rank {len(want)} (indices dims + operand dims "
                       f"after the first), got {len(updates)}")
    for j, (u, w) in enumerate(zip(updates, want)):
        ctx.equal(u, w, f"dim {j} of updates")
    if ctx.dtypes[2] != ctx.dtypes[0]:
        raise ctx.fail(f"updates are {ctx.dtypes[2]}, operand 0 is {ctx.dtypes[0]}")
    if ctx.dtypes[0] == "i1":
        raise ctx.fail("can not add truth values (i1); convert them to a number type first")
    return [(list(base), ctx.dtypes[0])]


def _rows_of(b: Builder, table: str) -> int | None:
    return b.type(table).dims[0] if b.type(table).rank else None


def _gather_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """Each picked row's cotangent added back at the row it was read from (repeated ids
    accumulate). The ids are first read as the gather reads them (from the end if
    negative, then clamped), since the scatter-add would drop an id out of range; with a
    dynamic row count that can not be written, and rows read through an out-of-range
    id get no gradient."""
    table, ids = op.operands
    if gs[0] is None:
        return [None, None]
    rows = _rows_of(b, table)
    if rows:
        zero = b.const(0, ids)
        wrapped = b.select(b.compare(ids, zero, "LT"), b.add(ids, b.const(rows, ids)), ids)
        ids = b.binary("max", b.binary("min", wrapped, b.const(rows - 1, ids)), zero)
    zeros = b.const(0.0, table)
    return [b.emit("scatter_add", [zeros, ids, gs[0]], b.type(table)), None]


def _scatter_add_adjoint(b: Builder, op: Op, gs: list[Optional[str]]) -> list[Optional[str]]:
    """The base's cotangent passes through; each update's is the row it was added at, and
    zero where its id is out of range (the update was dropped; with a dynamic row count
    that test can not be written and such an update gets its clamped row's)."""
    g, ids, updates = gs[0], op.operands[1], op.operands[2]
    if g is None:
        return [None, None, None]
    picked = b.emit("gather", [g, ids], b.type(updates))
    rows = _rows_of(b, g)
    if rows is None:
        return [g, None, picked]
    low = b.compare(ids, b.const(-rows, ids), "GE")
    inside = b.select(low, b.compare(ids, b.const(rows, ids), "LT"), low)
    rank = b.type(ids).rank
    kept = b.broadcast(inside, list(range(rank)), TensorType(
        b.type(updates).dims, "i1", b.type(updates).binds))
    return [g, None, b.select(kept, picked, b.const(0.0, updates))]


register(OpDef("gather", "`gather(%table, %ids)`: rows of table picked by integer ids; "
               "result dims are ids' dims then table's dims after the first. As JAX's "
               "`table[ids]`: ids from -rows to -1 count from the end, others out of range "
               "are clamped to the first or last row.", _gather, 2, 2, adjoint=_gather_adjoint))
register(OpDef("scatter_add", "`scatter_add(%base, %ids, %updates)`: base with each update "
               "row added at row ids[...] (repeated ids accumulate). As JAX's "
               "`base.at[ids].add(updates)`: ids from -rows to -1 count from the end, updates "
               "at other ids out of range are dropped; not on i1.", _scatter_add, 3, 3,
               adjoint=_scatter_add_adjoint))
