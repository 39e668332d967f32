"""A corpus of training steps as users write them, for the importer's tests and benchmark.

Each entry is an import spec (``fn``, ``arg_specs``, ``ranges``, ``donate_argnums``: the
parameters and optimizer state a step replaces, as ``jax.jit`` of a training step takes
them) of one ``jax.value_and_grad`` step with an optimizer update, written in plain JAX
(and one in Flax) independently of bladec's own models, at sizes small enough for CI.
``make(binding, seed)`` gives concrete arguments. Dimension variables: ``B`` batch, ``S``
(and ``T``) sequence lengths, ``P`` patches, ``H``/``W`` image height and width.

Bindings: ``bindings`` are where the imported dims are checked against JAX's; ``run`` is
where ``make test`` runs the step under half its peak (large enough that activations,
not the parameters, make the peak, as in real training, so that half is within reach
of the planner without the runtime's search for the smallest limit); ``bench`` is the
larger run of ``make bench``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

F32, BF16, I32 = jnp.float32, jnp.bfloat16, jnp.int32
D, HEADS, V, FF = 16, 2, 32, 32


@dataclass
class Step:
    name: str
    fn: Callable
    arg_specs: tuple
    ranges: dict[str, tuple[int, int]]
    make: Callable[[dict[str, int], int], tuple]   # binding of the dim variables, seed
    bindings: tuple[dict[str, int], ...]
    run: dict[str, int]
    bench: dict[str, int]
    donate_argnums: tuple[int, ...] = (0,)

    def spec(self) -> dict[str, Any]:
        return {"fn": self.fn, "arg_specs": self.arg_specs, "ranges": self.ranges,
                "donate_argnums": self.donate_argnums}


def _spec(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), tree)


def _init(shapes: dict[str, tuple], seed: int, scale: float = 0.3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(s) * scale).astype(np.float32) for k, s in shapes.items()}


# -- shared layers -------------------------------------------------------------------------

def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * g + b


def attention(q_in, kv_in, p, prefix, mask=None):
    """Multi-head attention; ``mask`` [B, 1|S, T] of booleans (True: attend)."""
    b, s, _ = q_in.shape
    t = kv_in.shape[1]
    q = (q_in @ p[prefix + "q"]).reshape(b, s, HEADS, D // HEADS).transpose(0, 2, 1, 3)
    k = (kv_in @ p[prefix + "k"]).reshape(b, t, HEADS, D // HEADS).transpose(0, 2, 1, 3)
    v = (kv_in @ p[prefix + "v"]).reshape(b, t, HEADS, D // HEADS).transpose(0, 2, 1, 3)
    scores = jnp.einsum("bhsd,bhtd->bhst", q, k) / math.sqrt(D // HEADS)
    if mask is not None:
        scores = jnp.where(mask[:, None], scores, -1e9)
    out = jnp.einsum("bhst,bhtd->bhsd", jax.nn.softmax(scores, -1), v)
    return out.transpose(0, 2, 1, 3).reshape(b, s, D) @ p[prefix + "o"]


def adam(params, grads, m, v, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps),
                                    params, m, v)
    return params, m, v


def sgd(params, grads, lr=0.05):
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def cross_entropy(logits, labels):
    """Mean token cross-entropy by ``take_along_axis`` (a gather with batching dims)."""
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.take_along_axis(logp, labels[..., None], axis=-1).mean()


# -- GPT-2-style decoder with Adam ---------------------------------------------------------

GPT_SHAPES = {"wte": (V, D), "wpe": (64, D), "ln1_g": (D,), "ln1_b": (D,), "q": (D, D),
              "k": (D, D), "v": (D, D), "o": (D, D), "ln2_g": (D,), "ln2_b": (D,),
              "fc": (D, FF), "proj": (FF, D), "lnf_g": (D,), "lnf_b": (D,)}


def gpt_loss(p, tokens, labels):
    s = tokens.shape[1]
    x = p["wte"][tokens] + p["wpe"][jnp.arange(s)]             # learned positions
    causal = jnp.tril(jnp.ones((s, s), bool))[None]
    x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]),
                      layer_norm(x, p["ln1_g"], p["ln1_b"]), p, "", causal)
    h = jax.nn.gelu(layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["fc"], approximate=True)
    x = x + h @ p["proj"]
    logits = layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T  # tied embeddings
    return cross_entropy(logits, labels)


def gpt_step(p, m, v, tokens, labels):
    loss, g = jax.value_and_grad(gpt_loss)(p, tokens, labels)
    p, m, v = adam(p, g, m, v)
    return loss, p, m, v


def _gpt_make(dims, seed):
    rng = np.random.default_rng(seed + 1)
    p = _init(GPT_SHAPES, seed)
    for k in ("ln1_g", "ln2_g", "lnf_g"):
        p[k] = np.ones(GPT_SHAPES[k], np.float32)
    zeros = {k: np.zeros_like(a) for k, a in p.items()}
    tok = rng.integers(0, V, (dims["B"], dims["S"])).astype(np.int32)
    lab = rng.integers(0, V, (dims["B"], dims["S"])).astype(np.int32)
    return p, zeros, dict(zeros), tok, lab


# -- BERT-style encoder with a padding mask and dropout (SGD) -----------------------------

BERT_SHAPES = {"wte": (V, D), "ln_g": (D,), "ln_b": (D,), "q": (D, D), "k": (D, D),
               "v": (D, D), "o": (D, D), "fc": (D, FF), "proj": (FF, D), "head": (D, V)}
DROPOUT = 0.1


def dropout(key, x, rate=DROPOUT):
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def bert_loss(p, key, tokens, lengths, labels):
    s = tokens.shape[1]
    k_attn, k_ff = jax.random.split(key)
    keep = jnp.arange(s)[None, :] < lengths[:, None]           # padding mask [B, S]
    pos = jnp.arange(s, dtype=F32)[:, None] / (10.0 ** (jnp.arange(D, dtype=F32) / D))
    x = p["wte"][tokens] + jnp.sin(pos)[None]                   # sinusoidal positions
    x = layer_norm(x + dropout(k_attn, attention(x, x, p, "", keep[:, None, :])),
                   p["ln_g"], p["ln_b"])
    x = x + dropout(k_ff, jax.nn.gelu(x @ p["fc"], approximate=False) @ p["proj"])
    logp = jax.nn.log_softmax(x @ p["head"], -1)
    nll = -jnp.take_along_axis(logp, labels[..., None], -1)[..., 0]
    return jnp.sum(nll * keep) / jnp.maximum(jnp.sum(keep), 1)


def bert_step(p, key, tokens, lengths, labels):
    """The dropout key is an argument (``jax.random.PRNGKey``'s data, u32[2])."""
    loss, g = jax.value_and_grad(bert_loss)(p, key, tokens, lengths, labels)
    return loss, sgd(p, g)


def _bert_make(dims, seed):
    rng = np.random.default_rng(seed + 2)
    p = _init(BERT_SHAPES, seed)
    p["ln_g"] = np.ones(D, np.float32)
    b, s = dims["B"], dims["S"]
    return (p, np.asarray(jax.random.PRNGKey(seed)),
            rng.integers(0, V, (b, s)).astype(np.int32),
            rng.integers(1, s + 1, (b,)).astype(np.int32),
            rng.integers(0, V, (b, s)).astype(np.int32))


# -- ViT over a dynamic number of patches ------------------------------------------------

VIT_SHAPES = {"embed": (12, D), "cls": (1, 1, D), "ln_g": (D,), "ln_b": (D,), "q": (D, D),
              "k": (D, D), "v": (D, D), "o": (D, D), "fc": (D, FF), "proj": (FF, D),
              "head": (D, 5)}


def vit_loss(p, patches, labels):
    b = patches.shape[0]
    x = patches @ p["embed"]                                    # [B, P, D]
    x = jnp.concatenate([jnp.broadcast_to(p["cls"], (b, 1, D)), x], axis=1)
    x = x + attention(layer_norm(x, p["ln_g"], p["ln_b"]), layer_norm(x, p["ln_g"], p["ln_b"]),
                      p, "")
    x = x + jax.nn.gelu(x @ p["fc"]) @ p["proj"]
    logits = x[:, 0] @ p["head"]                                # the class token
    return cross_entropy(logits, labels)


def vit_step(p, patches, labels):
    loss, g = jax.value_and_grad(vit_loss)(p, patches, labels)
    return loss, sgd(p, g)


def _vit_make(dims, seed):
    rng = np.random.default_rng(seed + 3)
    p = _init(VIT_SHAPES, seed)
    p["ln_g"] = np.ones(D, np.float32)
    return (p, rng.standard_normal((dims["B"], dims["P"], 12)).astype(np.float32),
            rng.integers(0, 5, (dims["B"],)).astype(np.int32))


# -- CNN with conv, pooling and batch norm over dynamic height and width -------------------

CNN_SHAPES = {"k1": (3, 3, 3, 8), "bn_g": (8,), "bn_b": (8,), "k2": (3, 3, 8, 8),
              "head": (8, 4)}
_NHWC = ("NHWC", "HWIO", "NHWC")


def cnn_loss(p, images, labels):
    y = jax.lax.conv_general_dilated(images, p["k1"], (1, 1), "SAME", dimension_numbers=_NHWC)
    mu = y.mean(axis=(0, 1, 2))                                 # batch norm (training)
    var = y.var(axis=(0, 1, 2))
    y = jax.nn.relu((y - mu) * jax.lax.rsqrt(var + 1e-5) * p["bn_g"] + p["bn_b"])
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    y = jax.lax.conv_general_dilated(y, p["k2"], (1, 1), "SAME", dimension_numbers=_NHWC)
    y = jax.lax.reduce_window(jax.nn.relu(y), 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1),
                              "SAME") / 4.0
    logits = y.mean(axis=(1, 2)) @ p["head"]                    # global average pooling
    return cross_entropy(logits, labels)


def cnn_step(p, images, labels):
    loss, g = jax.value_and_grad(cnn_loss)(p, images, labels)
    return loss, sgd(p, g)


def _cnn_make(dims, seed):
    rng = np.random.default_rng(seed + 4)
    p = _init(CNN_SHAPES, seed)
    p["bn_g"] = np.ones(8, np.float32)
    return (p, rng.standard_normal((dims["B"], dims["H"], dims["W"], 3)).astype(np.float32),
            rng.integers(0, 4, (dims["B"],)).astype(np.int32))


# -- encoder-decoder with cross-attention and two lengths --------------------------------

ED_SHAPES = {"wte": (V, D), "eq": (D, D), "ek": (D, D), "ev": (D, D), "eo": (D, D),
             "dq": (D, D), "dk": (D, D), "dv": (D, D), "do": (D, D), "xq": (D, D),
             "xk": (D, D), "xv": (D, D), "xo": (D, D), "ln_g": (D,), "ln_b": (D,)}


def encdec_loss(p, src, tgt, labels):
    enc = p["wte"][src]
    enc = layer_norm(enc + attention(enc, enc, p, "e"), p["ln_g"], p["ln_b"])
    t = tgt.shape[1]
    dec = p["wte"][tgt]
    dec = dec + attention(dec, dec, p, "d", jnp.tril(jnp.ones((t, t), bool))[None])
    dec = layer_norm(dec + attention(dec, enc, p, "x"), p["ln_g"], p["ln_b"])  # [B, T] x [B, S]
    return cross_entropy(dec @ p["wte"].T, labels)


def encdec_step(p, src, tgt, labels):
    loss, g = jax.value_and_grad(encdec_loss)(p, src, tgt, labels)
    return loss, sgd(p, g)


def _encdec_make(dims, seed):
    rng = np.random.default_rng(seed + 5)
    p = _init(ED_SHAPES, seed)
    p["ln_g"] = np.ones(D, np.float32)
    b, s, t = dims["B"], dims["S"], dims["T"]
    return (p, rng.integers(0, V, (b, s)).astype(np.int32),
            rng.integers(0, V, (b, t)).astype(np.int32),
            rng.integers(0, V, (b, t)).astype(np.int32))


# -- mixture of experts with top-k routing ----------------------------------------------

EXPERTS, TOPK = 4, 2
MOE_SHAPES = {"router": (D, EXPERTS), "w_in": (EXPERTS, D, FF), "w_out": (EXPERTS, FF, D),
              "head": (D, 1)}


def moe_loss(p, x, y):
    gates = jax.nn.softmax(x @ p["router"], -1)                 # [B, S, E]
    top, idx = jax.lax.top_k(gates, TOPK)                       # routing
    top = top / top.sum(-1, keepdims=True)
    onehot = (idx[..., None] == jnp.arange(EXPERTS)).astype(F32)  # [B, S, K, E]
    weight = jnp.einsum("bsk,bske->bse", top, onehot)
    h = jax.nn.silu(jnp.einsum("bsd,edf->bsef", x, p["w_in"]))
    out = jnp.einsum("bsef,efd,bse->bsd", h, p["w_out"], weight)
    pred = (x + out) @ p["head"]
    return jnp.mean((pred[..., 0] - y) ** 2)


def moe_step(p, x, y):
    loss, g = jax.value_and_grad(moe_loss)(p, x, y)
    return loss, sgd(p, g)


def _moe_make(dims, seed):
    rng = np.random.default_rng(seed + 6)
    return (_init(MOE_SHAPES, seed), rng.standard_normal((dims["B"], dims["S"], D)).astype(np.float32),
            rng.standard_normal((dims["B"], dims["S"])).astype(np.float32))


# -- RNN with lax.scan over a dynamic length T and a dynamic batch ---------------------------

RNN_SHAPES = {"wx": (D, D), "wh": (D, D), "b": (D,), "head": (D, 1)}


def rnn_loss(p, xs, y):
    """``xs`` is [T, B, D]: the scan's length is the dynamic T (the listing's loop op)."""
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        return h, h
    h, hs = jax.lax.scan(cell, jnp.zeros((xs.shape[1], D), F32), xs)
    return jnp.mean((h @ p["head"])[:, 0] - y) ** 2 + 0.01 * jnp.mean(hs ** 2)


def rnn_step(p, xs, y):
    loss, g = jax.value_and_grad(rnn_loss)(p, xs, y)
    return loss, sgd(p, g)


def _rnn_make(dims, seed):
    rng = np.random.default_rng(seed + 7)
    return (_init(RNN_SHAPES, seed),
            rng.standard_normal((dims["T"], dims["B"], D)).astype(np.float32),
            rng.standard_normal((dims["B"],)).astype(np.float32))


# -- bf16 mixed precision: f32 master weights, bf16 compute, f32 loss ----------------------

MP_SHAPES = {"w1": (D, FF), "w2": (FF, D), "head": (D, V)}


def mixed_loss(p, x, labels):
    c = jax.tree_util.tree_map(lambda a: a.astype(BF16), p)
    h = jax.nn.gelu(x.astype(BF16) @ c["w1"]) @ c["w2"]
    logits = (h @ c["head"]).astype(F32)
    return cross_entropy(logits, labels)


def mixed_step(p, x, labels):
    loss, g = jax.value_and_grad(mixed_loss)(p, x, labels)
    return loss, sgd(p, g)


def _mixed_make(dims, seed):
    rng = np.random.default_rng(seed + 8)
    return (_init(MP_SHAPES, seed), rng.standard_normal((dims["B"], dims["S"], D)).astype(np.float32),
            rng.integers(0, V, (dims["B"], dims["S"])).astype(np.int32))


# -- the corpus ------------------------------------------------------------------------------

def _shapes(spec: dict[str, tuple]) -> dict[str, jax.ShapeDtypeStruct]:
    return {k: jax.ShapeDtypeStruct(s, F32) for k, s in spec.items()}


def corpus() -> dict[str, Step]:
    B, S, T, P, H, W = export.symbolic_shape("B, S, T, P, H, W")
    gp = _shapes(GPT_SHAPES)
    steps = [
        Step("gpt2", gpt_step, (gp, gp, gp, jax.ShapeDtypeStruct((B, S), I32),
                                jax.ShapeDtypeStruct((B, S), I32)),
             {"B": (1, 16), "S": (1, 64)}, _gpt_make, ({"B": 2, "S": 5}, {"B": 3, "S": 9}),
             {"B": 4, "S": 16}, {"B": 16, "S": 64}, donate_argnums=(0, 1, 2)),
        Step("bert", bert_step, (_shapes(BERT_SHAPES), jax.ShapeDtypeStruct((2,), jnp.uint32),
                                 jax.ShapeDtypeStruct((B, S), I32),
                                 jax.ShapeDtypeStruct((B,), I32), jax.ShapeDtypeStruct((B, S), I32)),
             {"B": (1, 16), "S": (1, 64)}, _bert_make, ({"B": 2, "S": 5}, {"B": 3, "S": 9}),
             {"B": 4, "S": 16}, {"B": 16, "S": 64}),
        Step("vit", vit_step, (_shapes(VIT_SHAPES), jax.ShapeDtypeStruct((B, P, 12), F32),
                               jax.ShapeDtypeStruct((B,), I32)),
             {"B": (1, 16), "P": (1, 64)}, _vit_make, ({"B": 2, "P": 4}, {"B": 3, "P": 9}),
             {"B": 4, "P": 16}, {"B": 16, "P": 64}),
        Step("cnn", cnn_step, (_shapes(CNN_SHAPES), jax.ShapeDtypeStruct((B, H, W, 3), F32),
                               jax.ShapeDtypeStruct((B,), I32)),
             {"B": (1, 16), "H": (1, 64), "W": (1, 64)}, _cnn_make,
             ({"B": 2, "H": 5, "W": 6}, {"B": 3, "H": 8, "W": 7}),
             {"B": 4, "H": 12, "W": 12}, {"B": 16, "H": 32, "W": 32}),
        Step("encdec", encdec_step, (_shapes(ED_SHAPES), jax.ShapeDtypeStruct((B, S), I32),
                                     jax.ShapeDtypeStruct((B, T), I32),
                                     jax.ShapeDtypeStruct((B, T), I32)),
             {"B": (1, 16), "S": (1, 64), "T": (1, 64)}, _encdec_make,
             ({"B": 2, "S": 5, "T": 3}, {"B": 3, "S": 7, "T": 9}),
             {"B": 4, "S": 16, "T": 12}, {"B": 16, "S": 64, "T": 48}),
        Step("moe", moe_step, (_shapes(MOE_SHAPES), jax.ShapeDtypeStruct((B, S, D), F32),
                               jax.ShapeDtypeStruct((B, S), F32)),
             {"B": (1, 16), "S": (1, 64)}, _moe_make, ({"B": 2, "S": 5}, {"B": 3, "S": 9}),
             {"B": 16, "S": 32}, {"B": 16, "S": 64}),
        Step("rnn", rnn_step, (_shapes(RNN_SHAPES), jax.ShapeDtypeStruct((T, B, D), F32),
                               jax.ShapeDtypeStruct((B,), F32)),
             {"B": (1, 64), "T": (1, 64)}, _rnn_make, ({"B": 2, "T": 3}, {"B": 5, "T": 1}),
             {"B": 16, "T": 8}, {"B": 64, "T": 32}),
        Step("mixed_bf16", mixed_step, (_shapes(MP_SHAPES), jax.ShapeDtypeStruct((B, S, D), F32),
                                        jax.ShapeDtypeStruct((B, S), I32)),
             {"B": (1, 16), "S": (1, 64)}, _mixed_make, ({"B": 2, "S": 5}, {"B": 3, "S": 9}),
             {"B": 16, "S": 32}, {"B": 16, "S": 64}),
    ]
    return {s.name: s for s in steps}


# -- a Flax model (test-only dependency; skipped where flax is not installed) --------------

@functools.cache
def flax_step_factory():
    """A Flax ``nn.Module`` (Dense, LayerNorm, GELU) with an SGD step, or None; one per
    process (its parameters are made once, at the first arguments)."""
    try:
        import flax.linen as nn
    except ImportError:
        return None

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            h = nn.gelu(nn.Dense(FF)(h))
            return x + nn.Dense(D)(h)

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = Block()(Block()(x))
            return nn.Dense(1)(x)[..., 0]

    model = Model()
    init = (jax.random.PRNGKey(0), jnp.zeros((1, 1, D), F32))
    # the parameters' shapes by tracing alone; their values (an XLA compilation of the
    # model's init, 2.4 s of CPU) only when a test makes arguments: every process that
    # collects the suite builds this step, and the tests that ask for the corpus often
    params = functools.cache(lambda: model.init(*init))

    def loss(p, x, y):
        return jnp.mean((model.apply(p, x) - y) ** 2)

    def step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return value, sgd(p, g)

    def make(dims, seed):
        rng = np.random.default_rng(seed + 9)
        p = jax.tree_util.tree_map(np.asarray, params())
        return (p, rng.standard_normal((dims["B"], dims["S"], D)).astype(np.float32),
                rng.standard_normal((dims["B"], dims["S"])).astype(np.float32))

    B, S = export.symbolic_shape("B, S")
    return Step("flax", step, (_spec(jax.eval_shape(model.init, *init)),
                               jax.ShapeDtypeStruct((B, S, D), F32),
                               jax.ShapeDtypeStruct((B, S), F32)),
                {"B": (1, 16), "S": (1, 64)}, make, ({"B": 2, "S": 5}, {"B": 3, "S": 9}),
                {"B": 4, "S": 16}, {"B": 16, "S": 64})


# -- running a step under a limit (the test and the benchmark) ------------------------------

@dataclass
class LimitRun:
    """One run of an imported step under half its unconstrained device peak, or, where no
    plan fits half, at the smallest limit that works as the runtime names it."""
    args: tuple            # the step's arguments
    plain: dict[str, Any]  # outputs of the imported listing, unoptimized, no limit
    base: int              # its device peak
    limit: int
    smallest: bool         # half was out of reach: ``limit`` is the runtime's smallest
    outputs: dict[str, Any]
    report: Any


def run_under_half(imported: Any, step: Step, binding: dict[str, int],
                   backend: Callable[[], Any], seed: int = 1) -> LimitRun:
    """Optimize the imported listing (analyze, schedule, remat) and run it at
    ``binding`` under half the unoptimized listing's device peak; on ``backend()``."""
    from bladec.passes import parse_pipeline, run_pipeline
    from bladec.runtime.executor import Executor
    from bladec.runtime.planning.limit import LimitError
    optimized = run_pipeline(imported.module, parse_pipeline("analyze,schedule,remat"))
    args = step.make(binding, seed)
    inputs = imported.flatten_inputs(*args)
    plain, base = Executor(imported.module, backend()).run(inputs)
    limit, smallest = base.peak_bytes // 2, False
    executor = Executor(optimized, backend())
    try:
        outputs, report = executor.run(inputs, limit=limit)
    except LimitError as exc:
        limit, smallest = exc.smallest, True
        outputs, report = executor.run(inputs, limit=limit)
    return LimitRun(args, plain, base.peak_bytes, limit, smallest, outputs, report)


def all_steps() -> dict[str, Step]:
    """The corpus, with the Flax model where flax is installed."""
    steps = corpus()
    flax_step = flax_step_factory()
    if flax_step is not None:
        steps["flax"] = flax_step
    return steps
