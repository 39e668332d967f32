"""Elementwise ops: operands of one shape in, one result of that shape out.

Operands must have equal shapes (no implicit broadcasting, as in StableHLO): write a
``broadcast_in_dim`` to expand. Each equal dim becomes a relation in the analysis.
"""
from __future__ import annotations

from bladec.ir import FLOAT_DTYPES
from bladec.ops import OpDef, RuleResult, ShapeCtx, register


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


for _name, _what in UNARY.items():
    register(OpDef(_name, f"`{_name}(%x)`: elementwise {_what}; result has the shape and type "
                   f"of x.{_types_doc(_name)}", _arith))
for _name, _what in BINARY.items():
    register(OpDef(_name, f"`{_name}(%a, %b)`: elementwise {_what}; a and b have equal shapes "
                   f"and element types.{_types_doc(_name)}", _arith, 2, 2))
register(OpDef("integer_pow", "`integer_pow(%x) {exponent = N}`: elementwise x^N, by repeated "
               "squaring (at most two multiplies per bit of N); N < 0 needs a float type.",
               _integer_pow,
               attrs={"exponent": "int"}, required=frozenset({"exponent"})))
register(OpDef("compare", "`compare(%a, %b) {direction = \"LT\"}`: elementwise comparison "
               "(EQ, NE, LT, LE, GT, GE); the result is i1.", _compare, 2, 2,
               attrs={"direction": "str"}, required=frozenset({"direction"})))
register(OpDef("select", "`select(%pred, %a, %b)`: elementwise pred ? a : b; pred is i1.",
               _select, 3, 3))
register(OpDef("convert", "`convert(%x) {dtype = \"f16\"}`: elementwise change of element "
               "type; without `dtype` the declared result type says it. A float to an integer "
               "type truncates and saturates at the type's ends (NaN becomes 0), as in XLA.",
               _convert, attrs={"dtype": "str"}))
