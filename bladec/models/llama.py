"""A Llama-2-style decoder and its training step, in plain JAX (params are a dict of arrays).

The model is written so that :mod:`bladec.frontend.jax_import` can translate its jaxpr
into a listing whose only symbolic inputs are the batch and sequence lengths:

- the token embedding is ``embed[tokens]`` (a gather; its gradient is a scatter-add);
- the attention projections are ``[D, H, Dh]`` / ``[H, Dh, D]`` weights contracted with
  ``einsum``, so no reshape ever splits or merges a dynamic dim (a reshape's result dims
  are not a function of its operand's, so they would have to be rediscovered from uses);
- rotary embeddings are computed inside the function from an ``iota`` over the sequence
  length (they depend on the symbolic length), and ``rotate_half`` is a product with a
  fixed signed permutation matrix built from iotas (exact, and no slicing of a
  dynamic-shaped tensor);
- the causal mask comes from iota comparisons; the softmax and the log-sum-exp of the
  loss subtract a ``stop_gradient`` of ``reduce_max``;
- the cross-entropy picks the target logit with a one-hot made by comparing an iota with
  the targets, and averages over the tokens where ``mask`` is non-zero.

``train_step(params, tokens, targets, mask, lr, cfg)`` is one SGD step: the loss and
``jax.value_and_grad`` of it, and ``p - lr * g`` for every parameter.
``adam_step(params, state, tokens, targets, mask, lr, cfg)`` is one Adam step: it also
reads and writes the two moment trees, the optimizer state that fine-tuning keeps in
memory beside the parameters (three times the parameters' bytes in, three times out).

``remat_policy`` (every step function and :func:`forward` take it; None by default, which
traces exactly as before) wraps each decoder layer in ``jax.checkpoint`` with the named
policy of ``jax.checkpoint_policies`` (:data:`REMAT_POLICIES`): the baselines a JAX user
would reach for to trade time for memory. Inside a checkpointed layer the attention's
output and the MLP's (normalized) input are named with ``checkpoint_name``
(:data:`LAYER_NAMES`) for ``save_and_offload_only_these_names``, which offloads them to the
``pinned_host`` memory kind where the device has one and saves them on the device
otherwise. On CPU (JAX 0.10.2) the device lists ``pinned_host`` but ``device_put`` inside
``jit`` lowers to nothing there (its memory-kind annotation is registered for GPU and TPU
only), so the two values are in effect saved on the device.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

Params = dict[str, Any]


@dataclass(frozen=True)
class Config:
    vocab: int = 256
    hidden: int = 64
    intermediate: int = 172
    heads: int = 4
    layers: int = 2
    rope_theta: float = 10000.0
    eps: float = 1e-5
    mask_value: float = -1e9  # added to the scores of future positions (finite: no inf-inf)

    def __post_init__(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")
        if (self.hidden // self.heads) % 2:
            raise ValueError("the head dim must be even for rotary embeddings")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SMALL = Config(vocab=256, hidden=64, intermediate=172, heads=4, layers=2)
PAPER = Config(vocab=32000, hidden=4096, intermediate=11008, heads=32, layers=4)


def param_shapes(cfg: Config) -> Params:
    """The parameter tree as shapes: ``{"embed": (V, D), "layers": [{...}, ...], ...}``."""
    d, f, h, k, v = cfg.hidden, cfg.intermediate, cfg.heads, cfg.head_dim, cfg.vocab
    layer = {"attn_norm": (d,), "wq": (d, h, k), "wk": (d, h, k), "wv": (d, h, k),
             "wo": (h, k, d), "mlp_norm": (d,), "w_gate": (d, f), "w_up": (d, f),
             "w_down": (f, d)}
    return {"embed": (v, d), "layers": [dict(layer) for _ in range(cfg.layers)],
            "final_norm": (d,), "lm_head": (d, v)}


def init_params(cfg: Config, seed: int = 0) -> Params:
    """Random parameters (NumPy float32): normal(0, 1/sqrt(fan_in)), norm scales 1."""
    rng = np.random.default_rng(seed)

    def make(path: tuple, shape: tuple) -> np.ndarray:
        name = path[-1]
        if name.endswith("norm"):
            return np.ones(shape, np.float32)
        fan_in = shape[0] if name not in ("wo",) else shape[0] * shape[1]
        if name == "embed":
            fan_in = 1
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    def walk(tree: Any, path: tuple) -> Any:
        if isinstance(tree, dict):
            return {k: walk(v, path + (k,)) for k, v in tree.items()}
        if isinstance(tree, list):
            return [walk(v, path + (i,)) for i, v in enumerate(tree)]
        return make(path, tree)
    return walk(param_shapes(cfg), ())


def rms_norm(x: jax.Array, w: jax.Array, eps: float) -> jax.Array:
    var = jnp.mean(x * x, axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(var + eps) * w


def rotary(seq: int, cfg: Config) -> tuple[jax.Array, jax.Array, jax.Array]:
    """cos and sin tables [S, Dh] for positions 0..S-1, and the rotate_half matrix [Dh, Dh]."""
    k = cfg.head_dim
    half = k // 2
    pos = jnp.arange(seq, dtype=jnp.float32)                       # iota over the sequence
    freq_idx = jnp.arange(half, dtype=jnp.float32)
    inv_freq = 1.0 / jnp.power(jnp.float32(cfg.rope_theta), freq_idx * (2.0 / k))
    angles = pos[:, None] * inv_freq[None, :]                      # [S, Dh/2]
    angles = jnp.concatenate([angles, angles], axis=-1)            # [S, Dh]
    # rotate_half(x) = concat(-x[half:], x[:half]) = x @ R with R a signed permutation
    i = jax.lax.broadcasted_iota(jnp.int32, (k, k), 0)
    j = jax.lax.broadcasted_iota(jnp.int32, (k, k), 1)
    rot = (jnp.where(i == j + half, -1.0, 0.0) + jnp.where(i + half == j, 1.0, 0.0))
    return jnp.cos(angles), jnp.sin(angles), rot.astype(jnp.float32)


def apply_rotary(x: jax.Array, cos: jax.Array, sin: jax.Array, rot: jax.Array) -> jax.Array:
    """x [B, S, H, Dh]; cos/sin [S, Dh]."""
    rotated = jnp.einsum("bshk,kj->bshj", x, rot)
    return x * cos[None, :, None, :] + rotated * sin[None, :, None, :]


def attention(x: jax.Array, layer: Params, rope: tuple, cfg: Config) -> jax.Array:
    cos, sin, rot = rope
    q = apply_rotary(jnp.einsum("bsd,dhk->bshk", x, layer["wq"]), cos, sin, rot)
    k = apply_rotary(jnp.einsum("bsd,dhk->bshk", x, layer["wk"]), cos, sin, rot)
    v = jnp.einsum("bsd,dhk->bshk", x, layer["wv"])
    scores = jnp.einsum("bshk,bthk->bhst", q, k) * (1.0 / np.sqrt(cfg.head_dim))
    seq = x.shape[1]
    row = jax.lax.broadcasted_iota(jnp.int32, (seq, seq), 0)
    col = jax.lax.broadcasted_iota(jnp.int32, (seq, seq), 1)
    causal = row >= col
    scores = jnp.where(causal[None, None], scores, jnp.float32(cfg.mask_value))
    m = jax.lax.stop_gradient(jnp.max(scores, axis=-1, keepdims=True))
    e = jnp.exp(scores - m)
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    out = jnp.einsum("bhst,bthk->bshk", p, v)
    return jnp.einsum("bshk,hkd->bsd", out, layer["wo"])


def mlp(x: jax.Array, layer: Params) -> jax.Array:
    gate = jnp.einsum("bsd,df->bsf", x, layer["w_gate"])
    up = jnp.einsum("bsd,df->bsf", x, layer["w_up"])
    act = gate * jax.lax.logistic(gate) * up                       # SwiGLU
    return jnp.einsum("bsf,fd->bsd", act, layer["w_down"])


REMAT_POLICIES = ("everything_saveable", "nothing_saveable", "dots_saveable",
                  "dots_with_no_batch_dims_saveable", "save_and_offload_only_these_names")
LAYER_NAMES = ("attn_out", "mlp_in")  # what save_and_offload_only_these_names keeps


def checkpoint_policy(name: str) -> Callable[..., Any]:
    """The ``jax.checkpoint`` policy called ``name`` (one of :data:`REMAT_POLICIES`).

    ``save_and_offload_only_these_names`` offloads :data:`LAYER_NAMES` to ``pinned_host``
    where the default device has that memory kind, else saves them on the device."""
    policies = jax.checkpoint_policies
    if name == "save_and_offload_only_these_names":
        kinds = {m.kind for m in jax.devices()[0].addressable_memories()}
        if "pinned_host" in kinds:
            return policies.save_and_offload_only_these_names(
                names_which_can_be_saved=[], names_which_can_be_offloaded=list(LAYER_NAMES),
                offload_src="device", offload_dst="pinned_host")
        return policies.save_only_these_names(*LAYER_NAMES)
    if name not in REMAT_POLICIES:
        raise ValueError(f"unknown remat policy {name!r}: one of {', '.join(REMAT_POLICIES)}")
    return getattr(policies, name)


def _unnamed(x: jax.Array, name: str) -> jax.Array:
    return x


def decoder_layer(x: jax.Array, layer: Params, rope: tuple, cfg: Config,
                  tag: Callable[[jax.Array, str], jax.Array] = _unnamed) -> jax.Array:
    """One pre-norm block: attention, then the SwiGLU MLP, each on the residual stream.
    ``tag(value, name)`` names :data:`LAYER_NAMES` (``checkpoint_name`` under a policy)."""
    x = x + tag(attention(rms_norm(x, layer["attn_norm"], cfg.eps), layer, rope, cfg),
                "attn_out")
    return x + mlp(tag(rms_norm(x, layer["mlp_norm"], cfg.eps), "mlp_in"), layer)


def forward(params: Params, tokens: jax.Array, cfg: Config,
            remat_policy: str | None = None) -> jax.Array:
    """Logits [B, S, V] for tokens [B, S] (int32); ``remat_policy``: each layer under
    ``jax.checkpoint`` with that policy (None: no checkpointing)."""
    x = params["embed"][tokens]
    rope = rotary(tokens.shape[1], cfg)
    layer_fn: Callable[..., jax.Array] = lambda x, layer, rope: decoder_layer(x, layer, rope, cfg)
    if remat_policy is not None:
        from jax.ad_checkpoint import checkpoint_name
        layer_fn = jax.checkpoint(
            lambda x, layer, rope: decoder_layer(x, layer, rope, cfg, checkpoint_name),
            policy=checkpoint_policy(remat_policy))
    for layer in params["layers"]:
        x = layer_fn(x, layer, rope)
    x = rms_norm(x, params["final_norm"], cfg.eps)
    return jnp.einsum("bsd,dv->bsv", x, params["lm_head"])


def loss_fn(params: Params, tokens: jax.Array, targets: jax.Array, mask: jax.Array,
            cfg: Config, remat_policy: str | None = None) -> jax.Array:
    """Mean cross-entropy over the tokens where ``mask`` (f32 [B, S]) is 1."""
    logits = forward(params, tokens, cfg, remat_policy)
    m = jax.lax.stop_gradient(jnp.max(logits, axis=-1))
    lse = jnp.log(jnp.sum(jnp.exp(logits - m[..., None]), axis=-1)) + m
    vocab = jax.lax.broadcasted_iota(jnp.int32, logits.shape, 2)
    onehot = (vocab == targets[..., None]).astype(logits.dtype)
    target_logit = jnp.sum(logits * onehot, axis=-1)
    nll = (lse - target_logit) * mask
    return jnp.sum(nll) / jnp.maximum(jnp.sum(mask), 1.0)


def train_step(params: Params, tokens: jax.Array, targets: jax.Array, mask: jax.Array,
               lr: jax.Array, cfg: Config = SMALL, remat_policy: str | None = None
               ) -> tuple[jax.Array, Params]:
    """One SGD step: (loss, params - lr * grad)."""
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets, mask, cfg,
                                              remat_policy)
    new_params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return loss, new_params


@dataclass(frozen=True)
class Adam:
    """Adam's constants (Kingma and Ba, arXiv 1412.6980, Algorithm 1)."""
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8

    def lr_at(self, lr: float, step: int) -> np.float32:
        """The step size with both bias corrections folded in (the paper's section 2
        form), so that the step itself needs no step counter."""
        return np.float32(lr * np.sqrt(1 - self.b2 ** step) / (1 - self.b1 ** step))


def adam_state(params: Params) -> Params:
    """Zero first and second moments, one tree each: ``{"m": ..., "v": ...}``."""
    def zeros(tree: Any) -> Any:
        return jax.tree_util.tree_map(lambda p: np.zeros(np.shape(p), np.float32), tree)
    return {"m": zeros(params), "v": zeros(params)}


def adam_step(params: Params, state: Params, tokens: jax.Array, targets: jax.Array,
              mask: jax.Array, lr: jax.Array, cfg: Config = SMALL, opt: Adam = Adam(),
              remat_policy: str | None = None) -> tuple[jax.Array, Params, Params]:
    """One Adam step: (loss, new params, new moments); ``lr`` from :meth:`Adam.lr_at`."""
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets, mask, cfg,
                                              remat_policy)
    tree_map = jax.tree_util.tree_map
    m = tree_map(lambda m, g: opt.b1 * m + (1 - opt.b1) * g, state["m"], grads)
    v = tree_map(lambda v, g: opt.b2 * v + (1 - opt.b2) * (g * g), state["v"], grads)
    new_params = tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + opt.eps), params, m, v)
    return loss, new_params, {"m": m, "v": v}


# -- import specs (``bladec import bladec.models.llama:small_train_spec``) ----------------

def train_specs(cfg: Config, batch: str = "B", seq: str = "S") -> tuple:
    """Argument specs of :func:`train_step` with symbolic batch and sequence lengths."""
    from jax import export
    b, s = export.symbolic_shape(f"{batch}, {seq}")
    params = jax.tree_util.tree_map(lambda shape: jax.ShapeDtypeStruct(shape, jnp.float32),
                                    param_shapes(cfg), is_leaf=lambda x: isinstance(x, tuple))
    return (params, jax.ShapeDtypeStruct((b, s), jnp.int32),
            jax.ShapeDtypeStruct((b, s), jnp.int32), jax.ShapeDtypeStruct((b, s), jnp.float32),
            jax.ShapeDtypeStruct((), jnp.float32))


def import_spec(cfg: Config, max_batch: int, max_seq: int, optimizer: str = "sgd"
                ) -> dict[str, Any]:
    """What ``bladec import`` needs to import ``train_step`` (``optimizer="sgd"``) or
    ``adam_step`` (``"adam"``) at ``cfg``."""
    params, tokens, targets, mask, lr = train_specs(cfg)
    new_params = [n.replace("%params", "%new") for n in _leaf_names(param_shapes(cfg), "params")]
    if optimizer == "sgd":
        def step(params, tokens, targets, mask, lr):
            return train_step(params, tokens, targets, mask, lr, cfg)
        specs: tuple = (params, tokens, targets, mask, lr)
        outputs = new_params
    elif optimizer == "adam":
        def step(params, state, tokens, targets, mask, lr):  # type: ignore[misc]
            return adam_step(params, state, tokens, targets, mask, lr, cfg)
        specs = (params, {"m": params, "v": params}, tokens, targets, mask, lr)
        outputs = new_params + [n.replace("%state", "%new_state") for n in
                                _leaf_names({"m": param_shapes(cfg), "v": param_shapes(cfg)},
                                            "state")]
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}: sgd or adam")
    return {"fn": step, "arg_specs": specs,
            "ranges": {"B": (1, max_batch), "S": (1, max_seq)},
            "output_names": ["loss"] + outputs}


def loss_spec(cfg: Config, max_batch: int, max_seq: int) -> dict[str, Any]:
    """What ``bladec import`` needs to import the forward loss alone (no
    ``value_and_grad``): the listing the ``grad`` pass turns into a training step. Its
    ``stop_gradient``s are kept (the max subtracted in the softmax and the log-sum-exp),
    so that the backward does not differentiate the max, whose gradient is zero there."""
    params, tokens, targets, mask, _ = train_specs(cfg)

    def loss(params, tokens, targets, mask):
        return loss_fn(params, tokens, targets, mask, cfg)
    return {"fn": loss, "arg_specs": (params, tokens, targets, mask),
            "ranges": {"B": (1, max_batch), "S": (1, max_seq)}, "output_names": ["loss"],
            "stop_gradients": True}


def _leaf_names(tree: Any, prefix: str) -> list[str]:
    """The importer's names of the leaves (shape tuples) of ``tree`` as argument ``prefix``."""
    from bladec.frontend.jax_import import leaf_names
    return leaf_names(tree, prefix, lambda t: isinstance(t, tuple))


def small_train_spec() -> dict[str, Any]:
    """The small config of the test listing: batch in [1, 32], sequence in [1, 512]."""
    return import_spec(SMALL, 32, 512)


def small_loss_spec() -> dict[str, Any]:
    """The forward loss of the small config (samples/llama-loss-small.mlir)."""
    return loss_spec(SMALL, 32, 512)


def paper_train_spec() -> dict[str, Any]:
    """The paper's config (4 layers, hidden 4096, ...): sequence up to 4096."""
    return import_spec(PAPER, 32, 4096)


def small_adam_spec() -> dict[str, Any]:
    """:func:`small_train_spec` with Adam: the optimizer state in and out as well."""
    return import_spec(SMALL, 32, 512, "adam")


def paper_adam_spec() -> dict[str, Any]:
    """:func:`paper_train_spec` with Adam: what fine-tuning at the paper's size holds."""
    return import_spec(PAPER, 32, 4096, "adam")
