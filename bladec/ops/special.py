"""Special functions, rounding and the remainder: the elementwise ops of loss functions.

Exact GELU is ``x * erfc(-x/sqrt 2) / 2``, softplus is ``log1p(exp(-|x|)) + max(x, 0)``,
label smoothing and quantization round; each is its own op (not a composition of the core
ops) so that both backends compute what JAX computes, to its precision: ``1 - erf(x)``
loses every digit of ``erfc(x)`` for large x, and ``log(1 + x)`` those of ``log1p(x)``
for small x. Shapes are those of the operands, as for every elementwise op.
"""
from __future__ import annotations

from bladec.ir import FLOAT_DTYPES
from bladec.ops import OpDef, RuleResult, ShapeCtx, register
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


FUNCTIONS = {
    "erf": "the error function", "erfc": "the complementary error function 1 - erf(x), "
    "accurate where erf(x) is near 1", "erf_inv": "the inverse error function (x in -1..1)",
    "lgamma": "log |Gamma(x)|", "digamma": "the derivative of lgamma",
    "log1p": "log(1 + x), accurate for small x", "expm1": "e^x - 1, accurate for small x",
    "floor": "the largest integer <= x", "ceil": "the smallest integer >= x",
}
for _name, _what in FUNCTIONS.items():
    register(OpDef(_name, f"`{_name}(%x)`: elementwise {_what}; x has a float type; the "
                   "result has its shape and type.", _float_unary))
register(OpDef("round", "`round(%x) {mode = \"to_nearest_even\"}`: elementwise rounding to "
               "an integer value (in x's float type); ties go away from zero (`away_from_zero`, "
               "the default, as XLA's round) or to the even neighbour (`to_nearest_even`, "
               "as `jnp.round`).", _round, attrs={"mode": "str"}))
register(OpDef("rem", "`rem(%a, %b)`: elementwise remainder of a truncated division, with "
               "the sign of a (C's fmod, `lax.rem`); on integers a rem 0 is a, as in XLA; "
               "a and b have equal shapes and element types; not on i1.", _rem, 2, 2))
