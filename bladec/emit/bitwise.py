"""Lowerings of the shifts and of Threefry-2x32 (bladec/ops/elementwise.py; ``bit_and``,
``bit_or`` and ``bit_xor`` lower as the other binary ops do, emit/lower.py).

Written once over ``K.np`` (NumPy or ``jax.numpy``): unsigned 32-bit additions wrap in
both, so the same code draws the same bits on both backends as JAX's own
``threefry2x32`` does. Shifts by an amount outside ``[0, bits)`` give 0, as in XLA (NumPy
and the hardware would take the amount modulo the width).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.emit.lower import Kernels, OutSpec, lowering
from bladec.ir import Op

# Threefry-2x32's rotation distances (Salmon et al., SC 2011), applied in groups of four
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


@lowering("shift_left", "shift_right_logical")
def _shift(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    x, s = a
    bits = x.dtype.itemsize * 8
    inside = (s >= 0) & (s < bits)
    s = K.np.where(inside, s, K.np.zeros_like(s))
    moved = K.np.left_shift(x, s) if op.name == "shift_left" else K.np.right_shift(x, s)
    return K.np.where(inside, moved, K.np.zeros_like(x))


@lowering("bitcast")
def _bitcast(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    return a[0].view(K.dtype(out[0][1]))


def _rotl(K: Kernels, x: Any, r: int) -> Any:
    return K.np.bitwise_or(K.np.left_shift(x, np.uint32(r)),
                           K.np.right_shift(x, np.uint32(32 - r)))


@lowering("threefry")
def _threefry(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    key, x0, x1 = a
    u32 = K.dtype("u32")
    ks = [key[0], key[1], K.np.bitwise_xor(K.np.bitwise_xor(key[0], key[1]),
                                           np.uint32(_PARITY))]
    with np.errstate(over="ignore"):
        x0, x1 = x0 + ks[0], x1 + ks[1]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 = x0 + x1
                x1 = K.np.bitwise_xor(_rotl(K, x1, r), x0)
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0.astype(u32), x1.astype(u32)
