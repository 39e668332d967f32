"""Windowed ops: convolutions, pooling and the gradient of max pooling.

``conv`` is XLA's general convolution (``lax.conv_general_dilated``): dimension numbers
name, for each operand and the result, which dim is the batch, the feature and each
spatial dim; padding, strides, lhs (input) and rhs (kernel) dilation, feature groups
(depthwise convolutions) and batch groups (the kernel gradient of grouped convolutions)
as XLA has them. ``reduce_window`` is pooling; ``select_and_scatter_add`` adds each
window's source value at the window's largest operand element (the gradient of max
pooling). A spatial dim of size ``((in - 1) * lhs_dilation + 1 + lo + hi - ((k - 1) *
rhs_dilation + 1)) / stride + 1`` is a polynomial of the symbols only with stride 1: with
a larger stride over a dynamic dim the result's dim is taken as declared, unrelated to
the operands (JAX's own dim is then a floor division, which the importer refuses).

Each has an adjoint (as JAX's transposes, written with these same ops); where a stride
above 1 runs over a dynamic dim the transposed padding needs sizes there are not, and the
adjoint is a located error, as is one of a dilated max or min window (JAX has none).
"""
from __future__ import annotations

from typing import Optional

from bladec.adjoint import Builder, dims_of, make_type
from bladec.ir import Op, TensorType
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.symbolic.expr import SymbolicExpr, const

WINDOW_KINDS = ("sum", "max", "min")


def _n(ctx: ShapeCtx, name: str, rank: int, default: int) -> list[int]:
    vals = ctx.ints(name, [default] * rank)
    if len(vals) != rank:
        raise ctx.fail(f"'{name}' has {len(vals)} entries, expected {rank}")
    return vals


def _pads(ctx: ShapeCtx, rank: int) -> list[tuple[int, int]]:
    flat = ctx.ints("padding", [0] * (2 * rank))
    if len(flat) != 2 * rank:
        raise ctx.fail(f"'padding' has {len(flat)} entries, expected {2 * rank} (lo, hi per dim)")
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(rank)]


def _extent(ctx: ShapeCtx, size: SymbolicExpr, k: SymbolicExpr, lo: int, hi: int, stride: int,
            base: int, dil: int, j: int) -> SymbolicExpr | None:
    """The number of window positions along one dim; None where a stride above 1 divides a
    span that is not a number, outside the shape analysis (which makes it a quotient dim,
    symbolic/atoms.py; elsewhere the result's declared dim stands, unrelated)."""
    if stride < 1 or base < 1 or dil < 1:
        raise ctx.fail(f"strides and dilations must be at least 1 (dim {j})")
    span = (size - 1) * base + 1 + lo + hi - ((k - 1) * dil + 1)
    if span.is_const:
        if span.const < 0:
            raise ctx.fail(f"the window does not fit dim {j} (span {span.const})")
        return const(span.const // stride + 1)
    if stride != 1:   # floordiv(span, stride) + 1, where the analysis names quotients
        q = ctx.quotient("FloorDiv", span, stride)
        return None if q is None else q + 1
    return span + 1


def _spec(ctx: ShapeCtx, name: str, rank: int) -> list[int]:
    spec = ctx.ints(name)
    if sorted(spec) != list(range(rank)):
        raise ctx.fail(f"'{name}' {spec} must be a permutation of 0..{rank - 1}")
    return spec


def _conv(ctx: ShapeCtx) -> list[RuleResult]:
    lhs, rhs = ctx.operands
    if len(lhs) != len(rhs) or len(lhs) < 2:
        raise ctx.fail(f"operands need one rank, at least 2; got {len(lhs)} and {len(rhs)}")
    if ctx.dtypes[0] != ctx.dtypes[1]:
        raise ctx.fail(f"operands differ in element type ({ctx.dtypes[0]}, {ctx.dtypes[1]})")
    r = len(lhs)
    ls, rs, os = (_spec(ctx, n, r) for n in ("lhs_spec", "rhs_spec", "out_spec"))
    sp = r - 2
    strides, ld, rd = (_n(ctx, n, sp, 1) for n in ("strides", "lhs_dilation", "rhs_dilation"))
    pads = _pads(ctx, sp)
    fg, bg = int(ctx.attr("feature_groups", 1)), int(ctx.attr("batch_groups", 1))
    if fg < 1 or bg < 1 or (fg > 1 and bg > 1):
        raise ctx.fail("feature_groups and batch_groups are at least 1, and not both above 1")
    ctx.equal(lhs[ls[1]], rhs[rs[1]] * fg, "input features = kernel input features * groups")
    out = [const(0)] * r
    out[os[0]] = lhs[ls[0]] if bg == 1 else _divide(ctx, lhs[ls[0]], bg, "batch")
    out[os[1]] = rhs[rs[0]]
    for i in range(sp):
        out[os[2 + i]] = _extent(ctx, lhs[ls[2 + i]], rhs[rs[2 + i]], pads[i][0], pads[i][1],
                                 strides[i], ld[i], rd[i], ls[2 + i])
    return [(_declared_where_unknown(ctx, out), ctx.dtypes[0])]


def _declared_where_unknown(ctx: ShapeCtx, out: list) -> list:
    return [ctx.declared_dims[0][j] if e is None else e for j, e in enumerate(out)]


def _divide(ctx: ShapeCtx, e: SymbolicExpr, k: int, what: str) -> SymbolicExpr:
    if e.is_const:
        if e.const % k:
            raise ctx.fail(f"the {what} dim {e.const} is not a multiple of {k}")
        return const(e.const // k)
    raise ctx.fail(f"a dynamic {what} dim ({e}) can not be split into {k} groups")


def _reduce_window(ctx: ShapeCtx) -> list[RuleResult]:
    x = ctx.operands[0]
    r = len(x)
    window = _n(ctx, "window", r, 1)
    strides, base, dil = (_n(ctx, n, r, 1) for n in ("strides", "base_dilation",
                                                        "window_dilation"))
    pads = _pads(ctx, r)
    if ctx.attr("kind", "sum") not in WINDOW_KINDS:
        raise ctx.fail(f"kind must be one of {', '.join(WINDOW_KINDS)}")
    out = [_extent(ctx, x[j], const(window[j]), pads[j][0], pads[j][1], strides[j], base[j],
                   dil[j], j) for j in range(r)]
    return [(_declared_where_unknown(ctx, out), ctx.dtypes[0])]


def _select_and_scatter_add(ctx: ShapeCtx) -> list[RuleResult]:
    source, operand = ctx.operands
    r = len(operand)
    window = _n(ctx, "window", r, 1)
    strides = _n(ctx, "strides", r, 1)
    pads = _pads(ctx, r)
    if len(source) != r:
        raise ctx.fail(f"the source has rank {len(source)}, the operand {r}")
    for j in range(r):
        want = _extent(ctx, operand[j], const(window[j]), pads[j][0], pads[j][1], strides[j],
                       1, 1, j)
        if want is not None:
            ctx.equal(source[j], want, f"dim {j} of the source")
    if ctx.dtypes[0] != ctx.dtypes[1]:
        raise ctx.fail(f"source is {ctx.dtypes[0]}, operand is {ctx.dtypes[1]}")
    return [(list(operand), ctx.dtypes[1])]


def _conv_flops(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """2 per multiply-add: every result element sums kernel-window x input-features terms."""
    out = 1
    for n in shapes[op.result_names[0]]:
        out *= n
    rhs = shapes[op.operands[1]]
    spec = op.attrs["rhs_spec"]
    per = 1
    for d in list(spec)[1:]:
        per *= rhs[d]
    return 2 * out * per


def _window_flops(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """One per window element per result element."""
    out = 1
    for n in shapes[op.result_names[0] if op.name == "reduce_window" else op.operands[0]]:
        out *= n
    per = 1
    for k in op.attrs.get("window", ()):
        per *= int(k)
    return out * per


# -- adjoints ------------------------------------------------------------------------

G = list[Optional[str]]


def _window_attrs(op: Op, r: int) -> tuple[list[int], list[int], list[tuple[int, int]],
                                           list[int], list[int]]:
    """window, strides, padding pairs, base and window dilation of a windowed op."""
    def get(name: str, n: int, default: int) -> list[int]:
        return [int(v) for v in op.attrs.get(name, (default,) * n)]
    flat = get("padding", 2 * r, 0)
    return (get("window", r, 1), get("strides", r, 1),
            [(flat[2 * i], flat[2 * i + 1]) for i in range(r)],
            get("base_dilation", r, 1), get("window_dilation", r, 1))


def _sum_window_transpose(b: Builder, op: Op, g: str, x: str) -> str:
    """The transpose of a windowed sum is a windowed sum of the cotangent (the window is
    all ones, so needs no flip): g spread out by the strides (base dilation), padded so
    that each input element sees every window that held it (a window of span K, padded
    ``lo`` before, holds element i in outputs ``(i + lo - K + 1) / s`` up to ``(i + lo) / s``),
    and stepped by the forward's base dilation. The padding after is ``K - 1 - hi`` when
    the stride is 1, else it takes the static sizes (a strided dynamic dim has none)."""
    xt, gt = b.type(x), b.type(g)
    r = xt.rank
    window, strides, pads, base, dil = _window_attrs(op, r)
    back = []
    for j in range(r):
        span = (window[j] - 1) * dil[j] + 1
        lo = span - 1 - pads[j][0]
        if strides[j] == 1:
            hi = span - 1 - pads[j][1]
        elif xt.dims[j] is not None and gt.dims[j] is not None:
            hi = ((xt.dims[j] - 1) * base[j] + 1 + span - 1
                  - ((gt.dims[j] - 1) * strides[j] + 1) - lo)
        else:
            raise b.fail(op, f"a stride above 1 over dynamic dim {j} has no adjoint")
        if lo < 0 or hi < 0:
            raise b.fail(op, f"padding beyond the window in dim {j} has no adjoint")
        back += [lo, hi]
    return b.emit("reduce_window", [g], xt, {
        "kind": "sum", "window": tuple(window), "strides": tuple(base),
        "padding": tuple(back), "base_dilation": tuple(strides),
        "window_dilation": tuple(dil)})


def _reduce_window_adjoint(b: Builder, op: Op, gs: G) -> G:
    """sum: the transpose above. max: each window's cotangent added at its first largest
    element (``select_and_scatter_add``, as JAX); min: the same on -x, whose largest is
    x's smallest. Max and min with dilations have no adjoint (JAX's neither)."""
    g, x = gs[0], op.operands[0]
    if g is None:
        return [None]
    kind = op.attrs.get("kind", "sum")
    if kind == "sum":
        return [_sum_window_transpose(b, op, g, x)]
    window, strides, pads, base, dil = _window_attrs(op, b.type(x).rank)
    if any(v != 1 for v in base + dil):
        raise b.fail(op, f"a dilated {kind} window has no adjoint")
    chosen = x if kind == "max" else b.neg(x)
    return [b.emit("select_and_scatter_add", [g, chosen], b.type(x), {
        "window": tuple(window), "strides": tuple(strides),
        "padding": tuple(v for p in pads for v in p)})]


def _select_and_scatter_add_adjoint(b: Builder, op: Op, gs: G) -> G:
    """Linear in the source, whose cotangent is g at each window's first largest element
    of x (JAX's ``select_and_gather_add``); x has none (the choice is piecewise constant).
    Written with the ops there are: for each window offset, in row-major order (the order
    in which the first largest is first), the x and g elements at that offset of every
    window, picked by a one-element ``reduce_window`` with the op's strides and the
    padding shifted by the offset (x's padded with -inf as the op pads, g's with 0); a
    running largest x keeps its g where a later offset is not strictly larger."""
    g = gs[0]
    if g is None:
        return [None, None]
    source, x = op.operands
    r = b.type(x).rank
    window, strides, pads, _, _ = _window_attrs(op, r)
    ones = (1,) * r

    def at(v: str, kind: str, offset: tuple[int, ...]) -> str:
        shifted = tuple(p for j in range(r) for p in (pads[j][0] - offset[j],
                                                       pads[j][1] - (window[j] - 1 - offset[j])))
        return b.emit("reduce_window", [v], b.type(source), {
            "kind": kind, "window": ones, "strides": tuple(strides), "padding": shifted})

    best = picked = None
    for flat in range(_product(window)):
        offset, rest = [], flat
        for k in reversed(window):
            offset.insert(0, rest % k)
            rest //= k
        xv, gv = at(x, "max", tuple(offset)), at(g, "sum", tuple(offset))
        if best is None:
            best, picked = xv, gv
            continue
        larger = b.compare(xv, best, "GT")
        best, picked = b.select(larger, xv, best), b.select(larger, gv, picked)
    return [picked, None]


def _product(ns: list[int]) -> int:
    out = 1
    for n in ns:
        out *= n
    return out


def _dilated(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _split_axis(b: Builder, x: str, axis: int, groups: int) -> str:
    """x with ``axis`` (static, a multiple of ``groups``) split into (groups, rest)."""
    dims = dims_of(b.type(x))
    n = dims[axis][0]
    assert n is not None and n % groups == 0
    new = dims[:axis] + [(groups, f"C{groups}"), (n // groups, f"C{n // groups}")] + \
        dims[axis + 1:]
    return b.emit("reshape", [x], make_type(new, b.type(x).dtype))


def _merge_axis(b: Builder, x: str, src: int, dst: int) -> str:
    """x with axis ``src`` merged into axis ``dst`` (of the array without src) as its
    major part; the two are static."""
    rank = b.type(x).rank
    perm = [i for i in range(rank) if i != src]
    perm.insert(dst, src)
    moved = b.transpose(x, perm)
    dims = dims_of(b.type(moved))
    n = dims[dst][0] * dims[dst + 1][0]  # type: ignore[operator]
    new = dims[:dst] + [(n, f"C{n}")] + dims[dst + 2:]
    return b.emit("reshape", [moved], make_type(new, b.type(x).dtype))


def _conv_pads(b: Builder, op: Op, lhs: TensorType, rhs: TensorType, out: TensorType,
               for_rhs: bool) -> list[int]:
    """The padding of the transposed convolution (JAX's ``_conv_general_vjp_*_padding``),
    flat lo, hi per spatial dim. Where the forward stride is 1 it needs no sizes (the
    dims are ``rd - 1 - lo``, ``rd - 1 - hi`` for the input's, ``lo``, ``hi`` for the
    kernel's, rd the dilated kernel span); a larger stride needs static sizes."""
    ls, rs, os = (list(op.attrs[n]) for n in ("lhs_spec", "rhs_spec", "out_spec"))
    sp = len(ls) - 2
    strides, ld, rd = (list(int(v) for v in op.attrs.get(n, (1,) * sp))
                       for n in ("strides", "lhs_dilation", "rhs_dilation"))
    flat = list(int(v) for v in op.attrs.get("padding", (0,) * (2 * sp)))
    pads = []
    for i in range(sp):
        k = rhs.dims[rs[2 + i]]
        if k is None:
            raise b.fail(op, f"a dynamic kernel dim ({rs[2 + i]}) has no adjoint")
        kd, lo, hi = _dilated(k, rd[i]), flat[2 * i], flat[2 * i + 1]
        n, o = lhs.dims[ls[2 + i]], out.dims[os[2 + i]]
        if strides[i] != 1 and (n is None or o is None):
            raise b.fail(op, f"a stride above 1 over dynamic spatial dim {i} has no adjoint")
        if for_rhs:
            after = hi if strides[i] == 1 else \
                _dilated(o, strides[i]) - _dilated(n, ld[i]) + kd - lo - 1  # type: ignore
            pads += [lo, after]
        else:
            before = kd - lo - 1
            after = kd - 1 - hi if strides[i] == 1 else \
                _dilated(n, ld[i]) + kd - 1 - _dilated(o, strides[i]) - before  # type: ignore
            pads += [before, after]
    return pads


def _swap01(spec: list[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _conv_adjoint(b: Builder, op: Op, gs: G) -> G:
    """As JAX's: the input's cotangent is the convolution of g with the kernel flipped in
    space and its features swapped, the forward's strides as input dilation (and its input
    dilation as strides); the kernel's is the convolution of the input with g, the batch
    contracted as the features, the forward's strides as kernel dilation. Feature groups
    move into the flipped kernel's output features (and become batch groups of the
    kernel's convolution); batch groups the other way round."""
    g = gs[0]
    if g is None:
        return [None, None]
    lhs, rhs = op.operands
    lt, rt, gt = b.type(lhs), b.type(rhs), b.type(g)
    ls, rs, os = (list(int(v) for v in op.attrs[n]) for n in ("lhs_spec", "rhs_spec",
                                                              "out_spec"))
    sp = len(ls) - 2
    strides, ld, rd = (tuple(int(v) for v in op.attrs.get(n, (1,) * sp))
                       for n in ("strides", "lhs_dilation", "rhs_dilation"))
    fg, bg = int(op.attrs.get("feature_groups", 1)), int(op.attrs.get("batch_groups", 1))
    # the input's cotangent
    kernel = rhs
    if fg > 1 or bg > 1:
        if rt.dims[rs[0]] is None or rt.dims[rs[1]] is None:
            raise b.fail(op, "grouped features of dynamic size have no adjoint")
        kernel = _merge_axis(b, _split_axis(b, rhs, rs[0], max(fg, bg)), rs[0], rs[1])
    flipped = b.emit("reverse", [kernel], b.type(kernel), {"dims": tuple(rs[2:])})
    back_t = lt
    if bg > 1:  # the result holds the groups in the features: moved to the batch below
        d = dims_of(lt)
        if d[ls[0]][0] is None:
            raise b.fail(op, "batch groups over a dynamic batch have no adjoint")
        d[ls[1]] = (d[ls[1]][0] * bg, f"C{d[ls[1]][0] * bg}")  # type: ignore[operator]
        d[ls[0]] = (d[ls[0]][0] // bg, f"C{d[ls[0]][0] // bg}")  # type: ignore[operator]
        back_t = make_type(d, lt.dtype)
    to_lhs = b.emit("conv", [g, flipped], back_t, {
        "lhs_spec": tuple(os), "rhs_spec": _swap01(rs), "out_spec": tuple(ls),
        "strides": ld, "padding": tuple(_conv_pads(b, op, lt, rt, gt, False)),
        "lhs_dilation": strides, "rhs_dilation": rd, "feature_groups": max(fg, bg),
        "batch_groups": 1})
    if bg > 1:
        to_lhs = _merge_axis(b, _split_axis(b, to_lhs, ls[1], bg), ls[1], ls[0])
    # the kernel's cotangent
    to_rhs = b.emit("conv", [lhs, g], rt, {
        "lhs_spec": _swap01(ls), "rhs_spec": _swap01(os), "out_spec": _swap01(rs),
        "strides": rd, "padding": tuple(_conv_pads(b, op, lt, rt, gt, True)),
        "lhs_dilation": ld, "rhs_dilation": strides, "feature_groups": bg,
        "batch_groups": fg})
    return [to_lhs, to_rhs]


_SPECS = {"lhs_spec": "ints", "rhs_spec": "ints", "out_spec": "ints", "strides": "ints",
          "padding": "ints", "lhs_dilation": "ints", "rhs_dilation": "ints",
          "feature_groups": "int", "batch_groups": "int"}
register(OpDef("conv", "`conv(%x, %k) {lhs_spec = [0, 3, 1, 2], rhs_spec = [3, 2, 0, 1], "
               "out_spec = [0, 3, 1, 2], strides = [1, 1], padding = [1, 1, 1, 1]}`: XLA's "
               "general convolution. Each spec lists the dims of (batch, feature, spatial...) "
               "of x, of (output feature, input feature, spatial...) of k, and of (batch, "
               "feature, spatial...) of the result; `padding` is lo, hi per spatial dim; "
               "optional `lhs_dilation`, `rhs_dilation`, `feature_groups`, `batch_groups` "
               "(default 1).", _conv, 2, 2, attrs=_SPECS,
               required=frozenset({"lhs_spec", "rhs_spec", "out_spec"}), flops=_conv_flops,
               adjoint=_conv_adjoint))
register(OpDef("reduce_window", "`reduce_window(%x) {kind = \"max\", window = [1, 3, 3, 1], "
               "strides = [1, 2, 2, 1], padding = [0, 0, 1, 1, 1, 1, 0, 0]}`: pooling: the "
               "sum, max or min of each window (padding counts as the kind's identity); "
               "optional `base_dilation` and `window_dilation`.", _reduce_window,
               attrs={"kind": "str", "window": "ints", "strides": "ints", "padding": "ints",
                      "base_dilation": "ints", "window_dilation": "ints"},
               required=frozenset({"window"}), flops=_window_flops,
               adjoint=_reduce_window_adjoint))
register(OpDef("select_and_scatter_add", "`select_and_scatter_add(%source, %x) {window = "
               "[...], strides = [...], padding = [...]}`: zeros of x's shape, with each "
               "source element added at the first largest element of its window of x (the "
               "gradient of max pooling).", _select_and_scatter_add, 2, 2,
               attrs={"window": "ints", "strides": "ints", "padding": "ints"},
               required=frozenset({"window"}), flops=_window_flops,
               adjoint=_select_and_scatter_add_adjoint))
