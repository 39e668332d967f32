"""Bit-level ops on integers, and the Threefry-2x32 block function behind JAX's random bits.

Dropout in a training step draws its mask with ``jax.random.bernoulli(key, p, shape)``:
JAX computes the bits with Threefry-2x32 (a counter-based generator: the bits at position
n are a pure function of the key and n) and turns them into floats with a shift, an ``or``
and a bitcast. These ops let the listing say the same, so that both backends draw the
bits JAX draws, bit for bit. Being pure functions of their operands, the bits can be
recomputed by remat like any other op: a dropout mask need not be kept for the backward.
"""
from __future__ import annotations

import math

from bladec.ir import DTYPE_BYTES, INT_RANGES, Op
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import _no_gradient, _same_shape

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
