"""Special functions, rounding and the remainder: the elementwise ops of loss functions.

Exact GELU is ``x * erfc(-x/sqrt 2) / 2``, softplus is ``log1p(exp(-|x|)) + max(x, 0)``,
label smoothing and quantization round; each is its own op (not a composition of the core
ops) so that both backends compute what JAX computes, to its precision: ``1 - erf(x)``
loses every digit of ``erfc(x)`` for large x, and ``log(1 + x)`` those of ``log1p(x)``
for small x. Shapes are those of the operands, as for every elementwise op.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from bladec.adjoint import Adjoint, Builder
from bladec.ir import FLOAT_DTYPES, Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import _same_shape

ROUND_MODES = ("away_from_zero", "to_nearest_even")


def _float_unary(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.dtypes[0] not in FLOAT_DTYPES:
        raise ctx.fail(f"needs a float type, got {ctx.dtypes[0]}")
    return [(_same_shape(ctx), ctx.dtypes[0])]


def _round(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.attr("mode", ROUND_MODES[0]) not in ROUND_MODES:
        raise ctx.fail(f"mode must be one of {', '.join(ROUND_MODES)}")
    return _float_unary(ctx)


def _rem(ctx: ShapeCtx) -> list[RuleResult]:
    if ctx.dtypes[0] == "i1":
        raise ctx.fail("is not defined on i1")
    return [(_same_shape(ctx), ctx.dtypes[0])]


# -- adjoints: g is the result's cotangent, x the operand, y the result. Each writes the
# derivative JAX's own rule uses, in ops the listing language has.
G = list[Optional[str]]


def _pointwise(slope: Callable[[Builder, str, str], str]) -> Adjoint:
    """g * slope(x, y) for a unary op."""
    def rule(b: Builder, op: Op, gs: G) -> G:
        if gs[0] is None:
            return [None]
        return [b.mul(gs[0], slope(b, op.operands[0], op.results[0].name))]
    return rule


def _gauss(b: Builder, x: str, factor: float) -> str:
    """factor * exp(-x^2): the slope of erf (factor 2/sqrt(pi)) and of erfc (its negation)."""
    return b.scale(b.unary("exp", b.neg(b.mul(x, x))), factor)


def _piecewise_constant(b: Builder, op: Op, gs: G) -> G:
    """floor, ceil, round: zero almost everywhere, which JAX also gives (not a delta at the
    steps); a zero cotangent is no cotangent."""
    return [None]


def _rem_adjoint(b: Builder, op: Op, gs: G) -> G:
    """a rem b = a - b * trunc(a / b): g for a, -g * trunc(a / b) for b (trunc as floor
    of the non-negative and ceil of the negative quotients)."""
    g, (x, z) = gs[0], op.operands
    if g is None:
        return [None, None]
    q = b.div(x, z)
    trunc = b.select(b.compare(q, b.const(0.0, q), "LT"), b.unary("ceil", q), b.unary("floor", q))
    return [g, b.neg(b.mul(g, trunc))]


def _trigamma(b: Builder, x: str) -> str:
    """The derivative of digamma, which no op computes: for x >= 1/2 the recurrence
    psi1(z) = psi1(z + 1) + 1/z^2 six times (each step only where z < 6), then the
    asymptotic series at z >= 6 (its first dropped term is below 1e-9); for x < 1/2 the
    reflection psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)."""
    one = b.const(1.0, x)
    low = b.compare(x, b.const(0.5, x), "LT")
    z = b.select(low, b.sub(one, x), x)
    acc = b.const(0.0, x)
    for _ in range(6):
        below = b.compare(z, b.const(6.0, x), "LT")
        acc = b.add(acc, b.select(below, b.div(one, b.mul(z, z)), b.const(0.0, x)))
        z = b.select(below, b.add(z, one), z)
    inv = b.div(one, z)
    inv2 = b.mul(inv, inv)
    # 1/z + 1/(2z^2) + 1/(6z^3) - 1/(30z^5) + 1/(42z^7) - 1/(30z^9), Horner in 1/z^2
    poly = b.const(-1 / 30, x)
    for c in (1 / 42, -1 / 30, 1 / 6):
        poly = b.add(b.mul(poly, inv2), b.const(c, x))
    series = b.add(b.mul(inv, b.add(one, b.mul(inv2, poly))), b.scale(inv2, 0.5))
    psi1 = b.add(acc, series)
    sin = b.unary("sin", b.scale(x, math.pi))
    reflected = b.sub(b.div(b.const(math.pi ** 2, x), b.mul(sin, sin)), psi1)
    return b.select(low, reflected, psi1)


_SLOPES: dict[str, Adjoint] = {
    "erf": _pointwise(lambda b, x, y: _gauss(b, x, 2 / math.sqrt(math.pi))),
    "erfc": _pointwise(lambda b, x, y: _gauss(b, x, -2 / math.sqrt(math.pi))),
    # x = erf(y), so dy/dx = 1 / erf'(y) = sqrt(pi)/2 * exp(y^2)
    "erf_inv": _pointwise(lambda b, x, y: b.scale(b.unary("exp", b.mul(y, y)),
                                                  math.sqrt(math.pi) / 2)),
    "lgamma": _pointwise(lambda b, x, y: b.unary("digamma", x)),
    "digamma": _pointwise(lambda b, x, y: _trigamma(b, x)),
    "log1p": _pointwise(lambda b, x, y: b.div(b.const(1.0, x), b.add(x, b.const(1.0, x)))),
    "expm1": _pointwise(lambda b, x, y: b.add(y, b.const(1.0, y))),
    "floor": _piecewise_constant, "ceil": _piecewise_constant,
}

FUNCTIONS = {
    "erf": "the error function", "erfc": "the complementary error function 1 - erf(x), "
    "accurate where erf(x) is near 1", "erf_inv": "the inverse error function (x in -1..1)",
    "lgamma": "log |Gamma(x)|", "digamma": "the derivative of lgamma",
    "log1p": "log(1 + x), accurate for small x", "expm1": "e^x - 1, accurate for small x",
    "floor": "the largest integer <= x", "ceil": "the smallest integer >= x",
}
for _name, _what in FUNCTIONS.items():
    register(OpDef(_name, f"`{_name}(%x)`: elementwise {_what}; x has a float type; the "
                   "result has its shape and type.", _float_unary,
                   adjoint=_SLOPES.get(_name)))
register(OpDef("round", "`round(%x) {mode = \"to_nearest_even\"}`: elementwise rounding to "
               "an integer value (in x's float type); ties go away from zero (`away_from_zero`, "
               "the default, as XLA's round) or to the even neighbour (`to_nearest_even`, "
               "as `jnp.round`).", _round, attrs={"mode": "str"},
               adjoint=_piecewise_constant))
register(OpDef("rem", "`rem(%a, %b)`: elementwise remainder of a truncated division, with "
               "the sign of a (C's fmod, `lax.rem`); on integers a rem 0 is a, as in XLA; "
               "a and b have equal shapes and element types; not on i1.", _rem, 2, 2,
               adjoint=_rem_adjoint))
