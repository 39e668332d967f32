"""Four small training losses as a JAX user writes them: the function kinds of the
training benchmark (benchmarks/bench_training.py) and of the save/amp/wrt tests.

- ``mlp``: a tanh MLP with a softmax cross-entropy over a dynamic batch;
- ``attention``: a pre-LayerNorm causal self-attention block with a GELU MLP over a
  dynamic batch and sequence (the [B, H, S, S] scores are where its memory is);
- ``conv``: two 3x3 convolutions with ReLU and average pooling, then a linear
  classifier;
- ``gather``: an MLP whose loss picks each row's target log-probability with
  ``take_along_axis``.

Each loss takes the parameters (a dict) first, as ``jax.value_and_grad`` differentiates
them, then the data. :func:`spec` gives ``bladec.frontend.trace`` arguments for the
forward listing (batch and sequence symbolic), :func:`args` concrete inputs. Nothing here
is tuned to bladec: the code is what the JAX documentation's examples look like.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

Params = dict[str, Any]
D, HEADS, FF = 128, 4, 512      # the attention block's width, heads and MLP width
IN, HIDDEN, CLASSES = 64, 512, 16  # the MLPs'
IMAGE, CH = 16, 32                 # the convolutions' image side and channels


def _layer_norm(x: jax.Array, g: jax.Array, b: jax.Array) -> jax.Array:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b


def _cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    logp = jax.nn.log_softmax(logits)
    onehot = labels[:, None] == jnp.arange(logits.shape[-1])[None, :]
    return -jnp.sum(jnp.where(onehot, logp, 0.0)) / logits.shape[0]


def mlp_loss(p: Params, x: jax.Array, labels: jax.Array) -> jax.Array:
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    h = jnp.tanh(h @ p["w2"] + p["b2"])
    return _cross_entropy(h @ p["w3"] + p["b3"], labels)


def attention_loss(p: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    s = x.shape[1]
    h = _layer_norm(x, p["ln1_g"], p["ln1_b"])
    q = jnp.einsum("bsd,dhe->bhse", h, p["wq"])
    k = jnp.einsum("bsd,dhe->bhse", h, p["wk"])
    v = jnp.einsum("bsd,dhe->bhse", h, p["wv"])
    scores = jnp.einsum("bhse,bhte->bhst", q, k) / np.sqrt(D // HEADS)
    causal = jnp.arange(s)[:, None] >= jnp.arange(s)[None, :]
    scores = jnp.where(causal[None, None], scores, -1e9)
    att = jnp.einsum("bhst,bhte->bhse", jax.nn.softmax(scores, axis=-1), v)
    x = x + jnp.einsum("bhse,hed->bsd", att, p["wo"])
    h = _layer_norm(x, p["ln2_g"], p["ln2_b"])
    x = x + jax.nn.gelu(h @ p["w_up"] + p["b_up"]) @ p["w_down"]
    return jnp.mean((x - y) ** 2)


_NHWC = ("NHWC", "HWIO", "NHWC")


def _pool(x: jax.Array) -> jax.Array:
    window = (1, 2, 2, 1)
    return jax.lax.reduce_window(x, 0.0, jax.lax.add, window, window, "VALID") / 4.0


def conv_loss(p: Params, images: jax.Array, labels: jax.Array) -> jax.Array:
    y = jax.lax.conv_general_dilated(images, p["k1"], (1, 1), "SAME", dimension_numbers=_NHWC)
    y = _pool(jax.nn.relu(y + p["c1"]))
    y = jax.lax.conv_general_dilated(y, p["k2"], (1, 1), "SAME", dimension_numbers=_NHWC)
    y = _pool(jax.nn.relu(y + p["c2"]))
    return _cross_entropy(y.reshape(y.shape[0], -1) @ p["w"], labels)


def gather_loss(p: Params, x: jax.Array, labels: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    logp = jax.nn.log_softmax(h @ p["w2"] + p["b2"])
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


@dataclass(frozen=True)
class Block:
    """One function kind: its loss, parameter shapes, and data by (batch, sequence)."""
    name: str
    loss: Callable[..., jax.Array]
    params: dict[str, tuple[int, ...]]
    data: Callable[[Any, Any], tuple[tuple, ...]]  # (batch, seq) -> ((shape, dtype), ...)
    data_names: tuple[str, ...]
    sequence: bool = False   # whether the data have a sequence dim


def _f32(*shape: Any) -> tuple:
    return shape, np.float32


BLOCKS = {
    "mlp": Block("mlp", mlp_loss,
                 {"w1": (IN, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, HIDDEN),
                  "b2": (HIDDEN,), "w3": (HIDDEN, CLASSES), "b3": (CLASSES,)},
                 lambda b, s: (_f32(b, IN), ((b,), np.int32)), ("x", "labels")),
    "attention": Block("attention", attention_loss,
                       {"ln1_g": (D,), "ln1_b": (D,), "wq": (D, HEADS, D // HEADS),
                        "wk": (D, HEADS, D // HEADS), "wv": (D, HEADS, D // HEADS),
                        "wo": (HEADS, D // HEADS, D), "ln2_g": (D,), "ln2_b": (D,),
                        "w_up": (D, FF), "b_up": (FF,), "w_down": (FF, D)},
                       lambda b, s: (_f32(b, s, D), _f32(b, s, D)), ("x", "y"), True),
    "conv": Block("conv", conv_loss,
                  {"k1": (3, 3, 3, CH), "c1": (CH,), "k2": (3, 3, CH, CH), "c2": (CH,),
                   "w": ((IMAGE // 4) ** 2 * CH, CLASSES)},
                  lambda b, s: (_f32(b, IMAGE, IMAGE, 3), ((b,), np.int32)),
                  ("images", "labels")),
    "gather": Block("gather", gather_loss,
                    {"w1": (IN, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, CLASSES),
                     "b2": (CLASSES,)},
                    lambda b, s: (_f32(b, IN), ((b,), np.int32)), ("x", "labels")),
}
MAX_BATCH, MAX_SEQ = 4096, 1024


def init_params(block: Block, seed: int = 0) -> Params:
    """Normal weights scaled by 1/sqrt(fan-in); LayerNorm gains one, biases zero."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in block.params.items():
        if len(shape) == 1:
            out[name] = (np.ones if name.endswith("_g") else np.zeros)(shape, np.float32)
        else:
            fan_in = int(np.prod(shape[:-1])) if name != "wo" else shape[0] * shape[1]
            out[name] = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    return out


def args(block: Block, batch: int, seq: int = 1, seed: int = 0) -> tuple:
    """(params, *data) as numpy arrays: normal floats, labels in range."""
    rng = np.random.default_rng(seed + 1)
    data = []
    for shape, dtype in block.data(batch, seq):
        if dtype == np.int32:
            data.append(rng.integers(0, CLASSES, shape).astype(np.int32))
        else:
            data.append(rng.standard_normal(shape).astype(dtype))
    return (init_params(block, seed), *data)


def spec(block: Block) -> dict[str, Any]:
    """``bladec.frontend.trace`` keyword arguments for the forward loss: batch ``B`` (and
    sequence ``S``) symbolic with their ranges, the parameters named ``%params.<name>``."""
    b, s = export.symbolic_shape("B, S")
    data = [jax.ShapeDtypeStruct(shape, dtype)
            for shape, dtype in block.data(b, s if block.sequence else 1)]
    params = {k: jax.ShapeDtypeStruct(v, np.float32) for k, v in block.params.items()}
    ranges = {"B": (1, MAX_BATCH)}
    if block.sequence:
        ranges["S"] = (1, MAX_SEQ)
    return {"fn": block.loss, "arg_specs": (params, *data),
            "arg_names": ["params", *block.data_names], "output_names": ["loss"],
            "ranges": ranges, "stop_gradients": True}
