"""Imported training steps of 1,000-3,000 ops, for timing refusals on them (issue 37).

A GPT-2-style decoder of ``layers`` blocks with Adam, and a Flax BERT-style masked-LM
encoder of ``layers`` blocks with SGD, written in plain JAX and Flax (not bladec's own
models) and traced by the importer with symbolic batch and sequence, as ``bladec.jit``
traces a step whose dims changed. Sizes are small enough for a CPU; what matters for a
refusal is the number of ops, not their sizes.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import export

from bladec.frontend import trace
from bladec.frontend.jax_import import Imported

F32, I32 = jnp.float32, jnp.int32


def _norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * g + b


def _block_shapes(d: int, ff: int) -> dict[str, tuple[int, ...]]:
    return {"ln1_g": (d,), "ln1_b": (d,), "q": (d, d), "k": (d, d), "v": (d, d),
            "o": (d, d), "ln2_g": (d,), "ln2_b": (d,), "fc": (d, ff), "proj": (ff, d)}


def _gpt_loss(p, tokens, labels, heads):
    b, s = tokens.shape
    d = p["wte"].shape[1]
    x = p["wte"][tokens] + p["wpe"][jnp.arange(s)]
    causal = jnp.tril(jnp.ones((s, s), bool))[None, None]
    for blk in p["blocks"]:
        h = _norm(x, blk["ln1_g"], blk["ln1_b"])
        q, k, v = ((h @ blk[n]).reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)
                   for n in ("q", "k", "v"))
        att = jnp.einsum("bhsd,bhtd->bhst", q, k) / math.sqrt(d // heads)
        att = jax.nn.softmax(jnp.where(causal, att, -1e9), -1)
        out = jnp.einsum("bhst,bhtd->bhsd", att, v).transpose(0, 2, 1, 3).reshape(b, s, d)
        x = x + out @ blk["o"]
        h = jax.nn.gelu(_norm(x, blk["ln2_g"], blk["ln2_b"]) @ blk["fc"], approximate=True)
        x = x + h @ blk["proj"]
    logits = _norm(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.take_along_axis(logp, labels[..., None], axis=-1).mean()


def gpt2(layers: int = 2, vocab: int = 1024, d: int = 64, heads: int = 4) -> Imported:
    """A GPT-2-style step with Adam (parameters and moments donated); 2 layers: 1,123
    ops."""
    shapes = {"wte": (vocab, d), "wpe": (512, d), "lnf_g": (d,), "lnf_b": (d,)}
    spec = {**{k: jax.ShapeDtypeStruct(s, F32) for k, s in shapes.items()},
            "blocks": [{k: jax.ShapeDtypeStruct(s, F32)
                        for k, s in _block_shapes(d, 4 * d).items()} for _ in range(layers)]}

    def step(p, m, v, tokens, labels):
        loss, g = jax.value_and_grad(_gpt_loss)(p, tokens, labels, heads)
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        p = jax.tree_util.tree_map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8),
                                   p, m, v)
        return loss, p, m, v

    B, S = export.symbolic_shape("B, S")
    tok = jax.ShapeDtypeStruct((B, S), I32)
    return trace(step, (spec, spec, spec, tok, tok), donate_argnums=(0, 1, 2),
                 ranges={"B": (1, 64), "S": (1, 512)})


def bert(layers: int = 6, vocab: int = 1024, d: int = 64, heads: int = 4) -> Imported:
    """A Flax BERT-style masked LM (padding mask, dropout, post-norm) with SGD; 6 layers:
    3,204 ops. Needs flax."""
    import flax.linen as nn

    class Layer(nn.Module):
        @nn.compact
        def __call__(self, x, keep, train_key):
            k1, k2 = jax.random.split(train_key)
            att = nn.MultiHeadDotProductAttention(num_heads=heads, deterministic=True)(
                x, x, mask=keep[:, None, None, :])
            drop = jax.random.bernoulli(k1, 0.9, att.shape)
            x = nn.LayerNorm()(x + jnp.where(drop, att / 0.9, 0.0))
            h = nn.Dense(d)(nn.gelu(nn.Dense(4 * d)(x)))
            drop = jax.random.bernoulli(k2, 0.9, h.shape)
            return nn.LayerNorm()(x + jnp.where(drop, h / 0.9, 0.0))

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens, lengths, key):
            s = tokens.shape[1]
            keep = jnp.arange(s)[None, :] < lengths[:, None]
            x = nn.Embed(vocab, d)(tokens) + nn.Embed(512, d)(jnp.arange(s))[None]
            for i, k in enumerate(jax.random.split(key, layers)):
                x = Layer(name=f"layer{i}")(x, keep, k)
            return nn.Dense(vocab)(nn.LayerNorm()(x)), keep

    model = Model()
    params = jax.eval_shape(lambda: model.init(jax.random.PRNGKey(0), jnp.zeros((1, 4), I32),
                                               jnp.ones((1,), I32), jax.random.PRNGKey(1)))

    def loss(p, key, tokens, lengths, labels):
        logits, keep = model.apply(p, tokens, lengths, key)
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), labels[..., None], -1)
        return jnp.sum(nll[..., 0] * keep) / jnp.maximum(jnp.sum(keep), 1)

    def step(p, key, tokens, lengths, labels):
        value, g = jax.value_and_grad(loss)(p, key, tokens, lengths, labels)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, p, g)

    B, S = export.symbolic_shape("B, S")
    return trace(step, (params, jax.ShapeDtypeStruct((2,), jnp.uint32),
                        jax.ShapeDtypeStruct((B, S), I32), jax.ShapeDtypeStruct((B,), I32),
                        jax.ShapeDtypeStruct((B, S), I32)),
                 donate_argnums=(0,), ranges={"B": (1, 64), "S": (1, 512)})


STEPS = {"gpt2": gpt2, "bert": bert}


def op_count(imported: Imported) -> int:
    return len(imported.module.main.ops)
