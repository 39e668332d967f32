"""Lowerings of the special functions, rounding and remainder (bladec/ops/special.py).

NumPy has no error or gamma functions; SciPy's (a dependency of JAX) stand in on the NumPy
backend and ``jax.scipy.special`` on JAX. Half-precision inputs are computed in f32 on
NumPy, as XLA computes them, and rounded back by ``run_op``.
"""
from __future__ import annotations

from typing import Any

from bladec.emit.lower import Kernels, OutSpec, lowering
from bladec.ir import INT_RANGES, Op

_SCIPY = {"erf": "erf", "erfc": "erfc", "erf_inv": "erfinv", "lgamma": "gammaln",
          "digamma": "digamma"}
_NUMPY = {"log1p": "log1p", "expm1": "expm1", "floor": "floor", "ceil": "ceil"}


def _special(K: Kernels) -> Any:
    """``scipy.special`` for NumPy, ``jax.scipy.special`` for JAX."""
    if K.np.__name__.startswith("jax"):
        import jax.scipy.special as special
    else:
        import scipy.special as special
    return special


def _wide(K: Kernels, x: Any) -> Any:
    """x in at least f32 on NumPy (SciPy has no f16/bf16 loops); JAX as it is."""
    if K.np.__name__.startswith("jax") or x.dtype.itemsize >= 4:
        return x
    return x.astype(K.np.float32)


@lowering(*_SCIPY)
def _scipy(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(_special(K), _SCIPY[op.name])(_wide(K, a[0]))


@lowering(*_NUMPY)
def _numpy(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return getattr(K.np, _NUMPY[op.name])(a[0])


@lowering("round")
def _round(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Half to even is ``rint``; half away from zero is computed from the truncation,
    exactly (``floor(x + 0.5)`` would round 0.49999997 up in f32)."""
    x = a[0]
    if op.attrs.get("mode", "away_from_zero") == "to_nearest_even":
        return K.np.rint(x)
    t = K.np.trunc(x)
    return K.np.where(K.np.abs(x - t) >= 0.5, t + K.np.sign(x), t)


@lowering("rem")
def _rem(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """fmod; an integer rem 0 is the dividend, as XLA has it (NumPy gives 0 and warns)."""
    x, y = a
    if out[0][1] not in INT_RANGES:
        if K.np.__name__.startswith("jax"):
            return K.np.fmod(x, y)
        import numpy as np
        with np.errstate(invalid="ignore"):  # x rem 0 is NaN, as in XLA, without a warning
            return np.fmod(x, y)
    zero = y == 0
    return K.np.where(zero, x, K.np.fmod(x, K.np.where(zero, K.np.ones_like(y), y)))
