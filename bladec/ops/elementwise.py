"""Elementwise ops: operands of one shape in, one result of that shape out.

Operands must have equal shapes (no implicit broadcasting, as in StableHLO): write a
``broadcast_in_dim`` to expand. Each equal dim becomes a relation in the analysis.

Bit-level ops on integers, and the Threefry-2x32 block function behind JAX's random bits.

Dropout in a training step draws its mask with ``jax.random.bernoulli(key, p, shape)``:
JAX computes the bits with Threefry-2x32 (a counter-based generator: the bits at position
n are a pure function of the key and n) and turns them into floats with a shift, an ``or``
and a bitcast. These ops let the listing say the same, so that both backends draw the
bits JAX draws, bit for bit. Being pure functions of their operands, the bits can be
recomputed by remat like any other op: a dropout mask need not be kept for the backward.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from bladec.adjoint import Adjoint, Builder
from bladec.ir import DTYPE_BYTES, FLOAT_DTYPES, INT_RANGES, Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register


def _same_shape(ctx: ShapeCtx, same_dtype: bool = True) -> list:
    first = ctx.operands[0]
    for i, dims in enumerate(ctx.operands[1:], start=1):
        if len(dims) != len(first):
            raise ctx.fail(f"operand {i} has rank {len(dims)}, operand 0 has rank {len(first)}")
        for j, (a, b) in enumerate(zip(first, dims)):
            ctx.equal(a, b, f"dim {j} of operands 0 and {i}")
        if same_dtype and ctx.dtypes[i] != ctx.dtypes[0]:
            raise ctx.fail(f"operand {i} is {ctx.dtypes[i]}, operand 0 is {ctx.dtypes[0]}")
    return list(first)


def _unary(ctx: ShapeCtx) -> list[RuleResult]:
    return [(_same_shape(ctx), ctx.dtypes[0])]


def _arith(ctx: ShapeCtx) -> list[RuleResult]:
    """The element types an op is defined on, as in StableHLO and ``jax.lax``: NumPy
    would run ``exp`` of an i32 in f64 and JAX in f32, so the two would disagree."""
    dtype = ctx.dtypes[0]
    if ctx.op.name in FLOAT_ONLY and dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"needs a float type, got {dtype}")
    if ctx.op.name in NOT_I1 and dtype == "i1":
        raise ctx.fail("is not defined on i1 (truth values have no negation)")
    return _unary(ctx)


def _integer_pow(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.attr("exponent") < 0 and ctx.dtypes[0] not in FLOAT_DTYPES:
        raise ctx.fail(f"a negative exponent needs a float type, got {ctx.dtypes[0]} "
                       "(1/x^n is not an integer)")
    return _unary(ctx)


def _compare(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.attr("direction") not in COMPARE_DIRECTIONS:
        raise ctx.fail(f"direction must be one of {', '.join(COMPARE_DIRECTIONS)}")
    return [(_same_shape(ctx), "i1")]


def _select(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.dtypes[0] != "i1":
        raise ctx.fail(f"the predicate (operand 0) must be i1, got {ctx.dtypes[0]}")
    dims = _same_shape(ctx, same_dtype=False)
    if ctx.dtypes[1] != ctx.dtypes[2]:
        raise ctx.fail(f"operands 1 and 2 differ in element type ({ctx.dtypes[1]}, {ctx.dtypes[2]})")
    return [(dims, ctx.dtypes[1])]


def _convert(ctx: ShapeCtx) -> list[RuleResult]:
    return [(list(ctx.operands[0]), ctx.attr("dtype"))]


COMPARE_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
FLOAT_ONLY = frozenset({"exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "sin", "cos"})
NOT_I1 = frozenset({"neg", "sub"})
UNARY = {
    "neg": "-x", "exp": "e^x", "log": "natural logarithm", "sqrt": "square root",
    "rsqrt": "1/sqrt(x)", "tanh": "hyperbolic tangent", "logistic": "1/(1+e^-x)",
    "abs": "|x|", "sin": "sine", "cos": "cosine", "square": "x*x", "copy": "x",
}
BINARY = {
    "add": "a+b", "sub": "a-b", "mul": "a*b", "div": "a/b", "max": "max(a, b)",
    "min": "min(a, b)", "pow": "a^b",
}


def _types_doc(name: str) -> str:
    return (" x has a float type." if name in FLOAT_ONLY else
            " Not on i1." if name in NOT_I1 else
            " On integers a/b truncates toward zero and a/0 is -1 (all ones unsigned), as "
            "in XLA." if name == "div" else
            " An integer to a negative power is trunc(1/a^-b): 0 unless a is 1 or -1."
            if name == "pow" else "")


# -- adjoints: g is the result's cotangent, x (a, b) the operands, y the result. Where
# JAX's differentiation rule has a particular form (tanh, pow, max), the same form, so
# that both round alike.
G = list[Optional[str]]


def _unary_adjoint(fn: Callable[[Builder, str, str, str], str]) -> Adjoint:
    def rule(b: Builder, op: Op, gs: G) -> G:
        return [fn(b, gs[0], op.operands[0], op.results[0].name)] if gs[0] else [None]
    return rule


def _sign_times(b: Builder, g: str, x: str, y: str) -> str:
    zero = b.const(0.0, x)
    return b.select(b.compare(x, zero, "GT"), g,
                    b.select(b.compare(x, zero, "LT"), b.neg(g), b.const(0.0, g)))


_UNARY_ADJOINTS: dict[str, Adjoint] = {name: _unary_adjoint(fn) for name, fn in {
    "neg": lambda b, g, x, y: b.neg(g),
    "exp": lambda b, g, x, y: b.mul(g, y),
    "log": lambda b, g, x, y: b.div(g, x),
    "sqrt": lambda b, g, x, y: b.div(g, b.scale(y, 2)),
    "rsqrt": lambda b, g, x, y: b.mul(g, b.mul(b.const(-0.5, x), b.div(y, x))),
    "tanh": lambda b, g, x, y: b.mul(b.add(g, b.mul(g, y)), b.sub(b.const(1.0, y), y)),
    "logistic": lambda b, g, x, y: b.mul(g, b.mul(y, b.sub(b.const(1.0, y), y))),
    "abs": _sign_times,
    "sin": lambda b, g, x, y: b.mul(g, b.unary("cos", x)),
    "cos": lambda b, g, x, y: b.neg(b.mul(g, b.unary("sin", x))),
    "square": lambda b, g, x, y: b.mul(g, b.scale(x, 2)),
    "copy": lambda b, g, x, y: g,
}.items()}


def _binary_adjoint(fa: Callable[[Builder, str, str, str, str], str],
                    fb: Callable[[Builder, str, str, str, str], str]) -> Adjoint:
    def rule(b: Builder, op: Op, gs: G) -> G:
        g, (x, z), y = gs[0], op.operands, op.results[0].name
        return [fa(b, g, x, z, y), fb(b, g, x, z, y)] if g else [None, None]
    return rule


def _chosen(b: Builder, g: str, x: str, other: str, y: str) -> str:
    """max/min: g where x is the result, half of it where both operands are (JAX's
    balanced rule)."""
    share = b.select(b.compare(other, y, "EQ"), b.const(0.5, g), b.const(1.0, g))
    return b.mul(g, b.select(b.compare(x, y, "EQ"), share, b.const(0.0, g)))


def _pow_base(b: Builder, g: str, x: str, z: str, y: str) -> str:
    """d(x^z)/dx = z * x^(z-1), and 0 where z is 0 (also at x = 0)."""
    slope = b.mul(z, b.binary("pow", x, b.sub(z, b.const(1.0, z))))
    return b.mul(g, b.select(b.compare(z, b.const(0.0, z), "EQ"), b.const(0.0, z), slope))


def _pow_exponent(b: Builder, g: str, x: str, z: str, y: str) -> str:
    """d(x^z)/dz = log(x) * x^z, with log(0) read as log(1) (JAX's choice: 0, not nan)."""
    zero = b.compare(x, b.const(0.0, x), "EQ")
    return b.mul(g, b.mul(b.unary("log", b.select(zero, b.const(1.0, x), x)), y))


_BINARY_ADJOINTS: dict[str, Adjoint] = {
    "add": _binary_adjoint(lambda b, g, x, z, y: g, lambda b, g, x, z, y: g),
    "sub": _binary_adjoint(lambda b, g, x, z, y: g, lambda b, g, x, z, y: b.neg(g)),
    "mul": _binary_adjoint(lambda b, g, x, z, y: b.mul(g, z), lambda b, g, x, z, y: b.mul(x, g)),
    "max": _binary_adjoint(lambda b, g, x, z, y: _chosen(b, g, x, z, y),
                           lambda b, g, x, z, y: _chosen(b, g, z, x, y)),
    "min": _binary_adjoint(lambda b, g, x, z, y: _chosen(b, g, x, z, y),
                           lambda b, g, x, z, y: _chosen(b, g, z, x, y)),
    "pow": _binary_adjoint(_pow_base, _pow_exponent),
}


def _div_adjoint(b: Builder, op: Op, gs: G) -> G:
    """g/z for x; for z, -x/z^2 = -(g/z) * y: from x's cotangent and the result the
    forward made anyway, so the backward reads z once (a broadcast z, a softmax's sum,
    then fuses into that one use instead of being kept)."""
    g, (_, z), y = gs[0], op.operands, op.results[0].name
    if g is None:
        return [None, None]
    dx = b.div(g, z)
    return [dx, b.neg(b.mul(dx, y))]


_BINARY_ADJOINTS["div"] = _div_adjoint


def _integer_pow_adjoint(b: Builder, op: Op, gs: G) -> G:
    n, x = int(op.attrs["exponent"]), op.operands[0]
    if gs[0] is None:
        return [None]
    if n == 0:
        return [b.const(0.0, x)]
    lower = b.emit("integer_pow", [x], b.type(x), {"exponent": n - 1}) if n != 1 \
        else b.const(1.0, x)
    return [b.mul(gs[0], b.scale(lower, n))]


def _no_gradient(b: Builder, op: Op, gs: G) -> G:
    """No gradient reaches the operands: an i1 result (piecewise constant), or
    ``stop_gradient``, whose result the backward treats as a constant."""
    return [None] * len(op.operands)


def _select_adjoint(b: Builder, op: Op, gs: G) -> G:
    g = gs[0]
    if g is None:
        return [None, None, None]
    pred, zero = op.operands[0], b.const(0.0, g)
    return [None, b.select(pred, g, zero), b.select(pred, zero, g)]


def _convert_adjoint(b: Builder, op: Op, gs: G) -> G:
    """Back to the operand's float type; an integer operand gets none."""
    x = op.operands[0]
    if gs[0] is None or b.type(x).dtype not in FLOAT_DTYPES:
        return [None]
    return [b.convert(gs[0], b.type(x).dtype)]


for _name, _what in UNARY.items():
    register(OpDef(_name, f"`{_name}(%x)`: elementwise {_what}; result has the shape and type "
                   f"of x.{_types_doc(_name)}", _arith, adjoint=_UNARY_ADJOINTS[_name],
                   elementwise=True))
for _name, _what in BINARY.items():
    register(OpDef(_name, f"`{_name}(%a, %b)`: elementwise {_what}; a and b have equal shapes "
                   f"and element types.{_types_doc(_name)}", _arith, 2, 2,
                   adjoint=_BINARY_ADJOINTS[_name], elementwise=True))
register(OpDef("integer_pow", "`integer_pow(%x) {exponent = N}`: elementwise x^N, by repeated "
               "squaring (at most two multiplies per bit of N); N < 0 needs a float type.",
               _integer_pow, attrs={"exponent": "int"}, required=frozenset({"exponent"}),
               adjoint=_integer_pow_adjoint, elementwise=True))
register(OpDef("compare", "`compare(%a, %b) {direction = \"LT\"}`: elementwise comparison "
               "(EQ, NE, LT, LE, GT, GE); the result is i1.", _compare, 2, 2,
               attrs={"direction": "str"}, required=frozenset({"direction"}),
               adjoint=_no_gradient, elementwise=True))
register(OpDef("stop_gradient", "`stop_gradient(%x)`: x unchanged, and no gradient flows "
               "through it (JAX's `lax.stop_gradient`): the `grad` pass treats it as a constant.",
               _unary, adjoint=_no_gradient))
register(OpDef("select", "`select(%pred, %a, %b)`: elementwise pred ? a : b; pred is i1.",
               _select, 3, 3, adjoint=_select_adjoint, elementwise=True))
register(OpDef("convert", "`convert(%x) {dtype = \"f16\"}`: elementwise change of element "
               "type; without `dtype` the declared result type says it. A float to an integer "
               "type truncates and saturates at the type's ends (NaN becomes 0), as in XLA.",
               _convert, attrs={"dtype": "str"}, adjoint=_convert_adjoint,
               elementwise=True))


UNSIGNED = frozenset(d for d, (lo, _) in INT_RANGES.items() if lo == 0 and d != "i1")
# Additions, rotations and xors per element of one Threefry-2x32 block (20 rounds of 3
# operations on the two words, 6 key injections of 3), for the remat cost model.
THREEFRY_FLOPS = 20 * 3 * 2 + 6 * 3


def _integer(ctx: ShapeCtx) -> list[RuleResult]:
    dims = _same_shape(ctx)
    dtype = ctx.dtypes[0]
    if dtype not in INT_RANGES or dtype == "i1":
        raise ctx.fail(f"needs an integer type (not i1), got {dtype}")
    if ctx.op.name == "shift_right_logical" and dtype not in UNSIGNED:
        raise ctx.fail(f"needs an unsigned type, got {dtype} (convert it first)")
    return [(dims, dtype)]


def _bitcast(ctx: ShapeCtx) -> list[RuleResult]:
    want = str(ctx.attr("dtype"))
    have = ctx.dtypes[0]
    if want not in DTYPE_BYTES or want == "i1" or have == "i1":
        raise ctx.fail(f"bitcast between {have} and {want}: both must be numeric types")
    if DTYPE_BYTES[want] != DTYPE_BYTES[have]:
        raise ctx.fail(f"bitcast from {have} to {want}: the widths differ "
                       f"({DTYPE_BYTES[have]} and {DTYPE_BYTES[want]} bytes)")
    return [(list(ctx.operands[0]), want)]


def _threefry(ctx: ShapeCtx) -> list[RuleResult]:
    key, hi, lo = ctx.operands
    if len(key) != 1:
        raise ctx.fail(f"the key (operand 0) must be a vector of 2 words, got rank {len(key)}")
    ctx.equal(key[0], 2, "the key's length")
    for i, dtype in enumerate(ctx.dtypes):
        if dtype != "u32":
            raise ctx.fail(f"operand {i} must be u32, got {dtype}")
    if len(hi) != len(lo):
        raise ctx.fail(f"the counters have ranks {len(hi)} and {len(lo)}")
    for j, (a, b) in enumerate(zip(hi, lo)):
        ctx.equal(a, b, f"dim {j} of the two counters")
    return [(list(hi), "u32"), (list(hi), "u32")]


def _threefry_flops(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    return THREEFRY_FLOPS * math.prod(shapes[op.operands[1]])


BITWISE = {"bit_and": "and", "bit_or": "or", "bit_xor": "exclusive or",
           "shift_left": "a shifted left by b bits (0 where b is not in [0, bits))",
           "shift_right_logical": "a shifted right by b bits, zeros shifted in (0 where b is "
                                  "not in [0, bits)); unsigned types only"}
for _name, _what in BITWISE.items():
    register(OpDef(_name, f"`{_name}(%a, %b)`: elementwise bitwise {_what}; a and b are "
                   "integers of one type and shape.", _integer, 2, 2, adjoint=_no_gradient))
register(OpDef("bitcast", "`bitcast(%x) {dtype = \"f32\"}`: x's bits read as another type of "
               "the same width (JAX's `bitcast_convert_type`), e.g. u32 to f32.", _bitcast,
               attrs={"dtype": "str"}, required=frozenset({"dtype"}), adjoint=_no_gradient))
register(OpDef("threefry", "`%a, %b = threefry(%key, %hi, %lo)`: the Threefry-2x32 block "
               "function (20 rounds, JAX's `threefry2x32`) under key (u32[2]) of each pair "
               "of counter words (hi, lo: u32 of one shape); two u32 results of that shape. "
               "JAX's 32-bit random bits at row-major position n are `bit_xor(a, b)` of "
               "`threefry(key, 0, n)`.", _threefry, 3, 3, num_results=2,
               flops=_threefry_flops, adjoint=_no_gradient))
