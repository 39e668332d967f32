"""Elementwise ops: operands of one shape in, one result of that shape out.

Operands must have equal shapes (no implicit broadcasting, as in StableHLO): write a
``broadcast_in_dim`` to expand. Each equal dim becomes a relation in the analysis.
"""
from __future__ import annotations

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


_binary = _unary


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
UNARY = {
    "neg": "-x", "exp": "e^x", "log": "natural logarithm", "sqrt": "square root",
    "rsqrt": "1/sqrt(x)", "tanh": "hyperbolic tangent", "logistic": "1/(1+e^-x)",
    "abs": "|x|", "sin": "sine", "cos": "cosine", "square": "x*x", "copy": "x",
}
BINARY = {
    "add": "a+b", "sub": "a-b", "mul": "a*b", "div": "a/b", "max": "max(a, b)",
    "min": "min(a, b)", "pow": "a^b",
}

for _name, _what in UNARY.items():
    register(OpDef(_name, f"`{_name}(%x)`: elementwise {_what}; result has the shape and type of x.",
                   _unary))
for _name, _what in BINARY.items():
    register(OpDef(_name, f"`{_name}(%a, %b)`: elementwise {_what}; a and b have equal shapes "
                   "and element types.", _binary, 2, 2))
register(OpDef("integer_pow", "`integer_pow(%x) {exponent = N}`: elementwise x^N.", _unary,
               attrs={"exponent": "int"}, required=frozenset({"exponent"})))
register(OpDef("compare", "`compare(%a, %b) {direction = \"LT\"}`: elementwise comparison "
               "(EQ, NE, LT, LE, GT, GE); the result is i1.", _compare, 2, 2,
               attrs={"direction": "str"}, required=frozenset({"direction"})))
register(OpDef("select", "`select(%pred, %a, %b)`: elementwise pred ? a : b; pred is i1.",
               _select, 3, 3))
register(OpDef("convert", "`convert(%x) {dtype = \"f16\"}`: elementwise change of element "
               "type; without `dtype` the declared result type says it.", _convert,
               attrs={"dtype": "str"}))
