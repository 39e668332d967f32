"""Random numbers under a key passed in: ``jax.random.bernoulli``/``uniform``/``normal``,
``split`` and ``fold_in`` with threefry keys (JAX's default PRNG).

A key is its data, ``u32[2]``: ``random_wrap``/``random_unwrap`` are the identity. JAX's
threefry draws (``jax_threefry_partitionable``, the default) are counter based: the
32-bit bits at row-major position n of the drawn shape are ``a ^ b`` where ``a, b =
threefry(key, 0, n)``; ``split(key, (k,))`` is the pairs ``(a, b)`` of ``threefry(key, 0,
i)`` for i < k, and ``fold_in(key, d)`` the pair of ``threefry(key, 0, d)``. The counter n
is built from ``iota``s (and ``dim_size`` where the strides are dynamic), so its dims
are the analysis's like every other value's. The floats are made from the bits by the
listing's own shift, ``bit_or`` and ``bitcast``, as JAX makes them: the draws are JAX's,
bit for bit, on both backends. A draw over more than 2^32 elements is not translated
(the counter's high word would not be 0).
"""
from __future__ import annotations

import math
from typing import Any

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.rules.introspection import dim_value
from bladec.frontend.translate import JaxImportError, Lit, Translator, is_symbolic

U32 = "u32"


def _partitionable() -> None:
    import jax
    if not jax.config.jax_threefry_partitionable:
        raise JaxImportError("random bits with jax_threefry_partitionable=False: only the "
                             "partitionable threefry draws (JAX's default) are translated")


def _key(tr: Translator, x: Any, what: str) -> str:
    if isinstance(x, Lit) or tuple(tr.shape(x)) != (2,):
        shape = x.shape if isinstance(x, Lit) else tr.shape(x)
        raise JaxImportError(f"{what} under a key of data shape {tuple(shape)}: only one "
                             "key (u32[2]) at a time is translated, not a batch of keys")
    return x


def _scalar(tr: Translator, d: Any) -> str | Lit:
    """A dim (or a product of dims) as a u32 scalar."""
    if not is_symbolic(d):
        return Lit(int(d), U32)
    v = dim_value(tr, d, "i32")
    return tr.emit("convert", [tr.materialize(v)], (), U32, {"dtype": U32})


def counters(tr: Translator, shape: Shape) -> tuple[str, str]:
    """The high and low words of each element's row-major position in ``shape``."""
    shape = tuple(shape)
    hi = tr.constant(0, shape, U32)
    if not any(is_symbolic(d) for d in shape) and math.prod(int(d) for d in shape) >= 2 ** 32:
        raise JaxImportError(f"a random draw of shape {shape}: 2^32 elements or more")
    if not shape:
        return hi, tr.constant(0, shape, U32)
    lo: str | None = None
    for j in range(len(shape)):
        part = tr.emit("iota", [], shape, U32, {"dim": j})
        stride = math.prod(shape[j + 1:]) if j + 1 < len(shape) else 1
        if is_symbolic(stride) or int(stride) != 1:
            part = tr.emit("mul", [part, tr.broadcast_to(_scalar(tr, stride), shape)],
                           shape, U32)
        lo = part if lo is None else tr.emit("add", [lo, part], shape, U32)
    assert lo is not None
    if not any(is_symbolic(d) for d in shape):
        return hi, lo
    # an iota's dynamic dims are only the analysis's once an elementwise op ties them to a
    # value with the input's dims: the zero high word does
    return hi, tr.emit("add", [lo, hi], shape, U32)


def _pairs(tr: Translator, key: str, shape: Shape, lo: str | None = None) -> str:
    """``threefry(key, 0, n)`` stacked along a new last dim: keys of data ``shape + (2,)``."""
    hi, n = counters(tr, shape) if lo is None else (tr.constant(0, shape, U32), lo)
    a, b = tr.emit_multi("threefry", [key, hi, n], [(shape, U32), (shape, U32)])
    r = len(shape)
    wide = tuple(shape) + (1,)
    parts = [tr.broadcast_dims(x, wide, list(range(r)), U32) for x in (a, b)]
    return tr.emit("concatenate", parts, tuple(shape) + (2,), U32, {"dim": r})


@rule("random_wrap", "random_unwrap")
def _wrap(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    impl = p.get("impl")
    if impl is not None and getattr(impl, "name", "threefry2x32") != "threefry2x32":
        raise JaxImportError(f"random keys of '{impl.name}': only threefry2x32 keys (JAX's "
                             "default) have a translation")
    return ins[0]


@rule("random_bits")
def _random_bits(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    _partitionable()
    key = _key(tr, ins[0], "random bits")
    if int(p["bit_width"]) != 32:
        raise JaxImportError(f"{p['bit_width']}-bit random bits: only 32-bit ones (the "
                             "draws of float32 and int32 values) are translated")
    tr.decomposed["random_bits"] += 1
    hi, n = counters(tr, shape)
    a, b = tr.emit_multi("threefry", [key, hi, n], [(shape, U32), (shape, U32)])
    return tr.emit("bit_xor", [a, b], shape, U32)


@rule("random_split")
def _random_split(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                  outs: Outs) -> Result:
    _partitionable()
    tr.decomposed["random_split"] += 1
    return _pairs(tr, _key(tr, ins[0], "split"), tuple(p["shape"]))


@rule("random_fold_in")
def _random_fold_in(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                    outs: Outs) -> Result:
    _partitionable()
    tr.decomposed["random_fold_in"] += 1
    key = _key(tr, ins[0], "fold_in")
    data = tr.materialize(ins[1], ())
    if tr.dtype(data) != U32:
        data = tr.emit("convert", [data], (), U32, {"dtype": U32})
    return _pairs(tr, key, (), data)
