"""Training steps whose sizes are not polynomials (issue 33), beside tests/corpus.py.

- ``vit_conv``: a ViT whose patch embedding is a strided VALID convolution over images of
  any height and width (not multiples of the patch): the patch grid is
  ``floordiv(H, 4) x floordiv(W, 4)``, and a fixed table of 8 sinusoidal row positions
  sliced to the grid's rows is ``min(8, floordiv(H, 4))`` long. (A learned table would
  have a gradient padded by ``8 - min(8, hp)`` zero rows, a dim that may be 0, which the
  listing's positive symbols do not express.)
- ``moe_capacity``: a top-2 mixture of experts over ``T = B*S`` tokens, each expert taking
  at most ``ceil(1.25*k*T/E)`` of them (``floordiv(10*B*S + 15, 16)``), dispatched by
  one-hot positions as in GShard/Switch.

JAX's gradient of the kernel of a strided convolution over a size that the stride does
not divide builds a padding from the symbolic size, which ``jax.export`` refuses (JAX
0.10: "padding argument to conv_general_dilated should be ... pairs"); so the image is
first cropped to whole patches, as the VALID convolution would drop the rest anyway.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from tests.support.corpus import F32, I32, Step, _init, _shapes, attention, cross_entropy, layer_norm, sgd

D, FF = 16, 32
PATCH, POS_ROWS, CLASSES = 4, 8, 5
_NHWC = ("NHWC", "HWIO", "NHWC")

VITC_SHAPES = {"patch": (PATCH, PATCH, 3, D), "cls": (1, 1, D),
               "ln_g": (D,), "ln_b": (D,), "q": (D, D), "k": (D, D), "v": (D, D), "o": (D, D),
               "fc": (D, FF), "proj": (FF, D), "head": (D, CLASSES)}


def vit_conv_loss(p, images, labels):
    b, h, w, _ = images.shape
    hp, wp = h // PATCH, w // PATCH
    images = images[:, :hp * PATCH, :wp * PATCH]                 # whole patches
    y = jax.lax.conv_general_dilated(images, p["patch"], (PATCH, PATCH), "VALID",
                                     dimension_numbers=_NHWC)    # [B, hp, wp, D]
    table = jnp.sin(jnp.arange(POS_ROWS, dtype=F32)[:, None]
                    / 10.0 ** (jnp.arange(D, dtype=F32) / D))     # fixed row positions
    y = y + table[:hp].mean(0)                                    # [min(8, hp), D] rows
    x = y.reshape(b, hp * wp, D)
    x = jnp.concatenate([jnp.broadcast_to(p["cls"], (b, 1, D)), x], axis=1)
    x = x + attention(layer_norm(x, p["ln_g"], p["ln_b"]), layer_norm(x, p["ln_g"], p["ln_b"]),
                      p, "")
    x = x + jax.nn.gelu(x @ p["fc"]) @ p["proj"]
    return cross_entropy(x[:, 0] @ p["head"], labels)


def vit_conv_step(p, images, labels):
    loss, g = jax.value_and_grad(vit_conv_loss)(p, images, labels)
    return loss, sgd(p, g)


def _vit_conv_make(dims, seed):
    rng = np.random.default_rng(seed + 11)
    p = _init(VITC_SHAPES, seed)
    p["ln_g"] = np.ones(D, np.float32)
    return (p, rng.standard_normal((dims["B"], dims["H"], dims["W"], 3)).astype(np.float32),
            rng.integers(0, CLASSES, (dims["B"],)).astype(np.int32))


EXPERTS, TOPK = 4, 2
MOEC_SHAPES = {"router": (D, EXPERTS), "w_in": (EXPERTS, D, FF), "w_out": (EXPERTS, FF, D),
               "head": (D, 1)}


def moe_capacity_loss(p, x, y):
    b, s, _ = x.shape
    t = b * s
    capacity = (5 * TOPK * t + 4 * EXPERTS - 1) // (4 * EXPERTS)  # ceil(1.25*k*T/E)
    tokens = x.reshape(t, D)
    gates = jax.nn.softmax(tokens @ p["router"], -1)             # [T, E]
    top, idx = jax.lax.top_k(gates, TOPK)
    top = top / top.sum(-1, keepdims=True)
    chosen = jax.nn.one_hot(idx, EXPERTS, dtype=F32)              # [T, K, E]
    routed = chosen.sum(1)                                        # [T, E]
    weight = jnp.einsum("tk,tke->te", top, chosen)
    slot = jnp.cumsum(routed, axis=0) - 1.0                       # place in the expert's queue
    kept = routed * (slot < capacity)                             # beyond capacity: dropped
    dispatch = kept[..., None] * jax.nn.one_hot(slot.astype(I32), capacity, dtype=F32)
    expert_in = jnp.einsum("tec,td->ecd", dispatch, tokens)       # [E, C, D]
    h = jax.nn.silu(jnp.einsum("ecd,edf->ecf", expert_in, p["w_in"]))
    expert_out = jnp.einsum("ecf,efd->ecd", h, p["w_out"])
    out = jnp.einsum("tec,te,ecd->td", dispatch, weight, expert_out)
    pred = ((tokens + out) @ p["head"])[:, 0]
    return jnp.mean((pred - y.reshape(t)) ** 2)


def moe_capacity_step(p, x, y):
    loss, g = jax.value_and_grad(moe_capacity_loss)(p, x, y)
    return loss, sgd(p, g)


def _moe_capacity_make(dims, seed):
    rng = np.random.default_rng(seed + 12)
    return (_init(MOEC_SHAPES, seed),
            rng.standard_normal((dims["B"], dims["S"], D)).astype(np.float32),
            rng.standard_normal((dims["B"], dims["S"])).astype(np.float32))


def capacity(b: int, s: int) -> int:
    """The expert capacity the step computes, in plain integers."""
    return math.ceil(1.25 * TOPK * b * s / EXPERTS)


def quotient_steps() -> dict[str, Step]:
    B, H, W = export.symbolic_shape("B, H, W", constraints=(f"H >= {PATCH}", f"W >= {PATCH}"))
    B2, S = export.symbolic_shape("B, S")
    steps = [
        Step("vit_conv", vit_conv_step,
             (_shapes(VITC_SHAPES), jax.ShapeDtypeStruct((B, H, W, 3), F32),
              jax.ShapeDtypeStruct((B,), I32)),
             {"B": (1, 8), "H": (PATCH, 48), "W": (PATCH, 48)}, _vit_conv_make,
             ({"B": 2, "H": 9, "W": 13}, {"B": 3, "H": 39, "W": 6}),
             {"B": 4, "H": 30, "W": 23}, {"B": 8, "H": 47, "W": 45}),
        Step("moe_capacity", moe_capacity_step,
             (_shapes(MOEC_SHAPES), jax.ShapeDtypeStruct((B2, S, D), F32),
              jax.ShapeDtypeStruct((B2, S), F32)),
             {"B": (1, 16), "S": (1, 64)}, _moe_capacity_make,
             ({"B": 2, "S": 5}, {"B": 3, "S": 9}), {"B": 8, "S": 24}, {"B": 16, "S": 64}),
    ]
    return {s.name: s for s in steps}


def vit_conv_spec():
    """The import spec of ``vit_conv`` (``bladec import corpus_quotient:vit_conv_spec``)."""
    return quotient_steps()["vit_conv"].spec()


def moe_capacity_spec():
    return quotient_steps()["moe_capacity"].spec()


def patch_rows(x, w):
    """An input of ``4*Hp`` rows (a compound size in the spec), grouped by 4."""
    hp = x.shape[0] // 4
    return jnp.tanh(x.reshape(hp, 4, x.shape[1]).sum(1) @ w).mean() * hp
