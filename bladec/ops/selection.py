"""Ops that order or pick by value: arg max/min, sorts, top-k, cumulative scans.

A mixture-of-experts layer routes each token to its top-k experts; a classifier's accuracy
is an ``argmax``; an autoregressive mask or a position count is a cumulative sum. Each
is one op with JAX's semantics on both backends (ties go to the lower index; sorts are
stable and put NaNs last).
"""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder, dims_of, make_type
from bladec.ir import FLOAT_DTYPES, Op, TensorType
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import _no_gradient
from bladec.symbolic.expr import const

INDEX_DTYPES = ("i32", "i64")
CUMULATIVE_KINDS = ("sum", "prod", "max", "min", "logsumexp")


def _arg(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    if not src:
        raise ctx.fail("the operand is a scalar: there is no dim to search")
    d = ctx.axis(int(ctx.attr("dim")), len(src))
    if src[d].is_const and src[d].const == 0:
        raise ctx.fail(f"dim {d} is empty: there is no element to pick")
    if ctx.declared[0].dtype not in INDEX_DTYPES:
        raise ctx.fail(f"the result must be i32 or i64, declared {ctx.declared[0].dtype}")
    if ctx.dtypes[0] == "i1":
        raise ctx.fail("needs a number type, got i1")
    return [([x for i, x in enumerate(src) if i != d], ctx.declared[0].dtype)]


def _cumulative(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    if not src:
        raise ctx.fail("the operand is a scalar: there is no dim to scan")
    ctx.axis(int(ctx.attr("dim")), len(src))
    kind = ctx.attr("kind", "sum")
    if kind not in CUMULATIVE_KINDS:
        raise ctx.fail(f"kind must be one of {', '.join(CUMULATIVE_KINDS)}")
    if kind == "logsumexp" and ctx.dtypes[0] not in ("f16", "bf16", "f32", "f64"):
        raise ctx.fail(f"kind logsumexp needs a float type, got {ctx.dtypes[0]}")
    if ctx.dtypes[0] == "i1" and kind in ("sum", "prod"):
        raise ctx.fail(f"kind {kind} is not defined on i1")
    return [(list(src), ctx.dtypes[0])]


def _sort(ctx: ShapeCtx) -> list[RuleResult]:
    first = ctx.operands[0]
    if not first:
        raise ctx.fail("the operands are scalars: there is no dim to sort")
    ctx.axis(int(ctx.attr("dim", -1)), len(first))
    keys = int(ctx.attr("num_keys", 1))
    if not 1 <= keys <= len(ctx.operands):
        raise ctx.fail(f"num_keys must be 1 to {len(ctx.operands)}, got {keys}")
    for i, dims in enumerate(ctx.operands[1:], start=1):
        if len(dims) != len(first):
            raise ctx.fail(f"operand {i} has rank {len(dims)}, operand 0 has rank {len(first)}")
        for j, (a, b) in enumerate(zip(first, dims)):
            ctx.equal(a, b, f"dim {j} of operands 0 and {i}")
    if len(ctx.declared) != len(ctx.operands):
        raise ctx.fail(f"defines one result per operand ({len(ctx.operands)}), "
                       f"got {len(ctx.declared)}")
    return [(list(dims), dtype) for dims, dtype in zip(ctx.operands, ctx.dtypes)]


def _top_k(ctx: ShapeCtx) -> list[RuleResult]:
    src = ctx.operands[0]
    k = int(ctx.attr("k"))
    if not src:
        raise ctx.fail("the operand is a scalar: there is no dim to pick from")
    if k < 0:
        raise ctx.fail(f"k must be at least 0, got {k}")
    ctx.at_least(src[-1], k, "the last dim holds at least k elements")
    if ctx.declared[1].dtype not in INDEX_DTYPES:
        raise ctx.fail(f"the indices (result 1) must be i32 or i64, declared "
                       f"{ctx.declared[1].dtype}")
    out = list(src[:-1]) + [const(k)]
    return [(out, ctx.dtypes[0]), (out, ctx.declared[1].dtype)]


def _log_n(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """A comparison sort: n log2 n comparisons per sorted row."""
    n = 1
    shape = shapes[op.operands[0]]
    d = int(op.attrs.get("dim", -1)) % len(shape)
    for s in shape:
        n *= s
    return n * max(1, shape[d].bit_length()) * len(op.operands)


# -- adjoints. argmax/argmin give indices: no gradient (``_no_gradient``).
G = list[Optional[str]]


def _cumulative_adjoint(b: Builder, op: Op, gs: G) -> G:
    """A running sum's cotangent is the running sum of g in the other direction: x_j
    reaches every y_i from j on. The other kinds write dy_i/dx_j for every pair of scan
    positions (``_pairwise``: n x n per row, as the reverse of a scan has no cheaper form
    in the ops there are) and sum g_i times it over i."""
    g, x = gs[0], op.operands[0]
    if g is None:
        return [None]
    if op.attrs.get("kind", "sum") == "sum":
        return [b.emit("cumulative", [g], b.type(x), {
            "dim": op.attrs["dim"], "kind": "sum",
            "reverse": not op.attrs.get("reverse", False)})]
    return [_pairwise(b, op, g)]


def _pairwise(b: Builder, op: Op, g: str) -> str:
    """dx_j = sum over the i that x_j reaches (i >= j; i <= j reversed) of g_i w(i, j), on
    a second scan axis: axis d is i, axis d + 1 is j. w(i, j) is
    - max, min: 1 where x_j is the element y_i holds: the last j up to i (the first from
      i on, reversed) where x equals the running value (on ties of equal elements all goes
      to one, where JAX splits by its scan's tree);
    - prod: the product of the x_k that y_i multiplies, but x_j (a running product of x
      with x_j set to 1: exact where x has zeros, unlike y_i / x_j);
    - logsumexp: exp(x_j - y_i), at most 1 on the pairs that count."""
    x, y = op.operands[0], op.results[0].name
    kind, rev = op.attrs.get("kind", "sum"), bool(op.attrs.get("reverse", False))
    xt = b.type(x)
    d = int(op.attrs["dim"]) % xt.rank
    dims = dims_of(xt)
    wide = dims[:d + 1] + [dims[d]] + dims[d + 1:]
    wide_i, wide_f = make_type(wide, "i32"), make_type(wide, xt.dtype)
    along_i = [k if k <= d else k + 1 for k in range(xt.rank)]  # j is the new axis
    along_j = [k if k < d else k + 1 for k in range(xt.rank)]   # i is the new axis
    i_at, j_at = b.emit("iota", [], wide_i, {"dim": d}), b.emit("iota", [], wide_i, {"dim": d + 1})
    reached = b.compare(i_at, j_at, "LE" if rev else "GE")
    if kind in ("max", "min"):
        index = TensorType(xt.dims, "i32", xt.binds)
        holds = b.select(b.compare(x, y, "EQ"), b.emit("iota", [], index, {"dim": d}),
                         b.const(2 ** 31 - 1 if rev else -1, index))
        pos = b.emit("cumulative", [holds], index,
                     {"dim": d, "kind": "min" if rev else "max", "reverse": rev})
        reached = b.compare(b.broadcast(pos, along_i, wide_i), j_at, "EQ")
        weight = b.const(1.0, wide_f)
    elif kind == "prod":
        xs = b.broadcast(x, along_i, wide_f)  # x_k on the scan axis, for each j
        but_j = b.select(b.compare(i_at, j_at, "EQ"), b.const(1.0, xs), xs)
        weight = b.emit("cumulative", [but_j], wide_f, {"dim": d, "kind": "prod",
                                                         "reverse": rev})
    else:  # logsumexp
        weight = b.unary("exp", b.sub(b.broadcast(x, along_j, wide_f),
                                      b.broadcast(y, along_i, wide_f)))
    share = b.mul(b.broadcast(g, along_i, wide_f), weight)
    return b.reduce_sum(b.select(reached, share, b.const(0.0, share)), [d])


def _sort_adjoint(b: Builder, op: Op, gs: G) -> G:
    """Each float operand's cotangent is its result's put back in the original order. The
    order is an iota sorted along with the keys (the same stable sort, so ties keep the
    forward's permutation); sorting the cotangents by that permutation inverts it."""
    float_ops = [i for i, n in enumerate(op.operands)
                 if b.type(n).dtype in FLOAT_DTYPES and gs[i] is not None]
    if not float_ops:
        return [None] * len(op.operands)
    dim, keys = int(op.attrs.get("dim", -1)), int(op.attrs.get("num_keys", 1))
    first = b.type(op.operands[0])
    index = TensorType(first.dims, "i32", first.binds)
    iota = b.emit("iota", [], index, {"dim": dim % first.rank})
    key_ops = op.operands[:keys]
    perm = b.emit_results("sort", key_ops + [iota], [b.type(k) for k in key_ops] + [index],
                          {"dim": dim, "num_keys": keys})[-1]
    cots = [c for c in (gs[i] for i in float_ops) if c is not None]
    back = b.emit_results("sort", [perm] + cots, [index] + [b.type(c) for c in cots],
                          {"dim": dim, "num_keys": 1})[1:]
    out: G = [None] * len(op.operands)
    for i, c in zip(float_ops, back):
        out[i] = c
    return out


def _top_k_adjoint(b: Builder, op: Op, gs: G) -> G:
    """Each value's cotangent goes to the element it was taken from: a one-hot of the
    indices against an iota over the last dim (rows x k x n), summed over k."""
    g, x, idx = gs[0], op.operands[0], op.results[1].name
    if g is None:
        return [None]
    gt, xt = b.type(g), b.type(x)
    r = gt.rank
    wide = dims_of(gt) + [dims_of(xt)[-1]]
    wide_i, wide_f = make_type(wide, b.type(idx).dtype), make_type(wide, xt.dtype)
    at = b.broadcast(idx, list(range(r)), wide_i)
    hit = b.compare(at, b.emit("iota", [], wide_i, {"dim": r}), "EQ")
    spread = b.broadcast(g, list(range(r)), wide_f)
    return [b.reduce_sum(b.select(hit, spread, b.const(0.0, spread)), [r - 1])]


register(OpDef("argmax", "`argmax(%x) {dim = 1} -> tensor<?xi32>`: the index of the largest "
               "element along `dim`, which the result drops (i32 or i64); the first one on "
               "ties; a NaN counts as the largest.", _arg, attrs={"dim": "int"},
               required=frozenset({"dim"}), adjoint=_no_gradient))
register(OpDef("argmin", "`argmin(%x) {dim = 1} -> tensor<?xi32>`: the index of the smallest "
               "element along `dim`, which the result drops (i32 or i64); the first one on "
               "ties; a NaN counts as the smallest.", _arg, attrs={"dim": "int"},
               required=frozenset({"dim"}), adjoint=_no_gradient))
register(OpDef("cumulative", "`cumulative(%x) {dim = 1, kind = \"sum\", reverse = false}`: "
               "the running sum (or prod, max, min, logsumexp) along `dim`, from the last "
               "element with `reverse = true`; the result has x's shape and type "
               "(`jnp.cumsum`, `lax.cummax`, ...).",
               _cumulative,
               attrs={"dim": "int", "kind": "str", "reverse": "bool"},
               required=frozenset({"dim"}), adjoint=_cumulative_adjoint))
register(OpDef("sort", "`%k, %v = sort(%keys, %values) {dim = 1, num_keys = 1}`: the operands "
               "(of one shape) reordered along `dim` by the first `num_keys` of them, "
               "lexicographically, stably, ascending, NaNs last; one result per operand "
               "(`jnp.sort`, `jnp.argsort` with an iota as values).", _sort, 1, None, None,
               attrs={"dim": "int", "num_keys": "int"}, flops=_log_n,
               adjoint=_sort_adjoint))
register(OpDef("top_k", "`%v, %i = top_k(%x) {k = 2} -> tensor<?x2>, tensor<?x2xi32>`: the "
               "k largest elements along the last dim, in descending order, and their "
               "indices (the lower index first on ties), as `lax.top_k`.", _top_k,
               num_results=2, attrs={"k": "int"}, required=frozenset({"k"}), flops=_log_n,
               adjoint=_top_k_adjoint))
