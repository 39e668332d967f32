"""Elementwise primitives: arithmetic, comparisons, logic, selects and conversions.

JAX's implicit broadcasting of scalars and size-1 dims is made explicit
(:meth:`Translator.broadcast_to`). Decompositions: ``select_n(p, f, t)`` is
``select(p, t, f)``; ``clamp`` is ``max`` then ``min``; ``and``/``or``/``xor``/``not`` on booleans
are ``min``/``max``/``compare NE``/``compare EQ false`` (on integers ``and``/``or``/``xor``
are the bitwise ops); ``is_finite`` is ``x - x == 0``; ``sign`` is two
selects.
"""
from __future__ import annotations

import numpy as np

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import JaxImportError, Lit, Translator, np_dtype

UNARY = {"neg": "neg", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "tanh": "tanh", "logistic": "logistic", "abs": "abs", "sin": "sin", "cos": "cos",
         "square": "square", "copy": "copy", "copy_p": "copy", "erf": "erf", "erfc": "erfc",
         "erf_inv": "erf_inv", "lgamma": "lgamma", "digamma": "digamma", "log1p": "log1p",
         "expm1": "expm1", "floor": "floor", "ceil": "ceil"}
BINARY = {"add": "add", "add_any": "add", "sub": "sub", "mul": "mul", "div": "div",
          "max": "max", "min": "min", "pow": "pow", "rem": "rem"}
COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


@rule(*UNARY)
def _unary(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    return tr.emit(UNARY[tr.primitive], [tr.materialize(ins[0])], shape, dtype)


@rule(*BINARY)
def _binary(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
            outs: Outs) -> Result:
    a, b = (tr.broadcast_to(x, shape) for x in ins)
    if tr.dtype(a) != tr.dtype(b):  # pow with an integer exponent
        b = tr.emit("convert", [b], shape, tr.dtype(a), {"dtype": tr.dtype(a)})
    return tr.emit(BINARY[tr.primitive], [a, b], shape, dtype)


@rule(*COMPARE)
def _compare(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
             outs: Outs) -> Result:
    a, b = (tr.broadcast_to(x, shape) for x in ins)
    return tr.emit("compare", [a, b], shape, "i1", {"direction": COMPARE[tr.primitive]})


@rule("round")
def _round(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    """``rounding_method`` 0 is away from zero (``lax.round``'s default), 1 to nearest
    even (``jnp.round``)."""
    mode = "to_nearest_even" if int(p.get("rounding_method", 0)) == 1 else "away_from_zero"
    return tr.emit("round", [tr.materialize(ins[0])], shape, dtype, {"mode": mode})


@rule("integer_pow")
def _integer_pow(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    y = int(p["y"])
    if y == 1:
        return x
    return tr.emit("integer_pow", [x], shape, dtype, {"exponent": y})



@rule("and")
def _and(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    return _logical(tr, "min", "bit_and", ins, shape, dtype)


@rule("or")
def _or(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
        outs: Outs) -> Result:
    return _logical(tr, "max", "bit_or", ins, shape, dtype)


@rule("xor")
def _xor(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    if dtype == "i1":
        a, b = (tr.broadcast_to(x, shape) for x in ins)
        tr.decomposed["xor"] += 1
        return tr.emit("compare", [a, b], shape, "i1", {"direction": "NE"})
    return _logical(tr, "", "bit_xor", ins, shape, dtype)


def _logical(tr: Translator, boolean: str, bitwise: str, ins: list, shape: Shape,
             dtype: str) -> str:
    """On booleans ``min``/``max`` (counted as decompositions), on integers the bitwise op."""
    a, b = (tr.broadcast_to(x, shape) for x in ins)
    if dtype != "i1":
        return tr.emit(bitwise, [a, b], shape, dtype)
    tr.decomposed[bitwise[len("bit_"):]] += 1
    return tr.emit(boolean, [a, b], shape, dtype)


@rule("shift_left", "shift_right_logical")
def _shift(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    a, b = (tr.broadcast_to(x, shape) for x in ins)
    return tr.emit(tr.primitive, [a, b], shape, dtype)


@rule("bitcast_convert_type")
def _bitcast(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
             outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    if len(tr.shape(x)) != len(shape):
        raise JaxImportError("bitcast_convert_type between types of different widths "
                             "(it adds or drops a dim) is not translated")
    return tr.emit("bitcast", [x], shape, dtype, {"dtype": dtype})


@rule("not")
def _not(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    if dtype != "i1":
        raise JaxImportError(f"cannot import bitwise 'not' on {dtype} (only booleans)")
    tr.decomposed["not"] += 1
    x = tr.materialize(ins[0])
    false = tr.constant(0, shape, "i1")
    return tr.emit("compare", [x, false], shape, "i1", {"direction": "EQ"})


@rule("is_finite")
def _is_finite(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
               outs: Outs) -> Result:
    """x - x is 0 exactly when x is finite (inf - inf and nan - nan are nan)."""
    x = tr.materialize(ins[0])
    tr.decomposed["is_finite"] += 1
    d = tr.emit("sub", [x, x], shape, tr.dtype(x))
    zero = tr.constant(0, shape, tr.dtype(x))
    return tr.emit("compare", [d, zero], shape, "i1", {"direction": "EQ"})


@rule("sign")
def _sign(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    """1 where x > 0, -1 where x < 0, else x itself (0, -0.0 and nan stay)."""
    x = tr.materialize(ins[0])
    tr.decomposed["sign"] += 1
    zero = tr.constant(0, shape, dtype)
    pos = tr.emit("compare", [x, zero], shape, "i1", {"direction": "GT"})
    neg = tr.emit("compare", [x, zero], shape, "i1", {"direction": "LT"})
    minus = tr.emit("select", [neg, tr.constant(-1, shape, dtype), x], shape, dtype)
    return tr.emit("select", [pos, tr.constant(1, shape, dtype), minus], shape, dtype)


@rule("clamp")
def _clamp(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    lo, x, hi = (tr.broadcast_to(v, shape) for v in ins)
    tr.decomposed["clamp"] += 1
    y = tr.emit("max", [x, lo], shape, dtype)
    return tr.emit("min", [y, hi], shape, dtype)


@rule("select_n")
def _select_n(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
              outs: Outs) -> Result:
    pred, *cases = ins
    if len(cases) == 1:
        return tr.broadcast_to(cases[0], shape)
    if len(cases) != 2:
        raise JaxImportError(f"cannot import select_n with {len(cases)} cases (only 2)")
    pred = tr.broadcast_to(pred, shape)
    if tr.dtype(pred) != "i1":  # an integer selector: case 1 where it is non-zero
        zero = tr.constant(0, shape, tr.dtype(pred))
        pred = tr.emit("compare", [pred, zero], shape, "i1", {"direction": "NE"})
    false, true = (tr.broadcast_to(c, shape) for c in cases)
    return tr.emit("select", [pred, true, false], shape, dtype)


@rule("convert_element_type")
def _convert_element_type(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                          outs: Outs) -> Result:
    x = ins[0]
    if isinstance(x, Lit):
        value = np.asarray(x.value, np_dtype(x.dtype)).astype(np_dtype(dtype)).item()
        return Lit(value, dtype, x.shape)
    if tr.dtype(x) == dtype:
        return x
    return tr.emit("convert", [x], shape, dtype, {"dtype": dtype})
