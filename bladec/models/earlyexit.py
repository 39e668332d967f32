"""An early-exit classifier (after Berxit's per-layer exits) for bladec.autobatch.

An instance is ``{"tokens": [ids...], "label": y}``. The tokens are summed by a chain of
``accumulate`` cells (as long as the instance), then up to ``LAYERS`` residual layers
run, each followed by an exit head: an instance leaves at the first layer whose head is
confident (its top class probability at least ``THRESHOLD``), and its loss is taken
there. Whether an instance exits is a value computed on the device, so the trace can
not branch on it: :func:`model` runs every layer with a ``done`` flag that freezes the
state once set (masking). Regrouping the survivors after each layer would need each
decision on the host in the middle of the batch (a round trip per layer) and would
make the depths depend on values; masking keeps the whole schedule known when the
instances are traced, at the price of the frozen instances' arithmetic in the layers
after their exit. :func:`reference` is the same classifier exiting for real, in plain
JAX on concrete values, one instance at a time: the two must agree.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.batching import cell
from bladec.models.bilstm import instances  # noqa: F401  (the same sequences)

LAYERS = 6
THRESHOLD = 0.5


def init_params(hidden: int = 256, vocab: int = 1000, classes: int = 5, seed: int = 0
                ) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def w(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (scale * rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
    return {"emb": w(vocab, hidden, scale=0.5),
            "layers": [{"w": w(hidden, hidden), "b": np.zeros(hidden, np.float32),
                        "exit": w(classes, hidden, scale=2.0)} for _ in range(LAYERS)]}


@cell
def accumulate(emb: Any, word: Any, total: Any) -> Any:
    return total + emb[word]


def _layer(p: Any, h: Any) -> tuple[Any, Any]:
    """One residual layer and its exit head's log-probabilities."""
    import jax
    import jax.numpy as jnp
    h = h + jnp.tanh(p["w"] @ h + p["b"])
    return h, jax.nn.log_softmax(p["exit"] @ h)


@cell
def layer(p: Any, state: Any) -> tuple[Any, Any, Any]:
    """``state``: (h, the exit layer's log-probabilities, done as 0/1). Once done, the
    state passes through unchanged (the mask)."""
    import jax.numpy as jnp
    h, logp, done = state
    h_new, logp_new = _layer(p, h)
    confident = (jnp.max(logp_new) >= np.log(THRESHOLD)).astype(h.dtype)
    keep = done > 0
    return (jnp.where(keep, h, h_new), jnp.where(keep, logp, logp_new),
            jnp.maximum(done, confident))


@cell
def loss(logp: Any, label: Any) -> Any:
    import jax.numpy as jnp
    return -jnp.sum(jnp.where(jnp.arange(logp.shape[0]) == label, logp, 0.0))


def _summed(params: dict[str, Any], tokens: list[int]) -> Any:
    hidden = params["emb"].shape[1]
    total: Any = np.zeros(hidden, np.float32)
    for word in tokens:
        total = accumulate(params["emb"], word, total)
    return total


def model(params: dict[str, Any], instance: dict[str, Any]) -> Any:
    """The loss at the exit layer, with the exit as a mask (batchable)."""
    classes = params["layers"][0]["exit"].shape[0]
    state: Any = (_summed(params, instance["tokens"]), np.zeros(classes, np.float32),
                  np.float32(0.0))
    for p in params["layers"]:
        state = layer(p, state)
    return loss(state[1], instance["label"])


def reference(params: dict[str, Any], instance: dict[str, Any]) -> Any:
    """The same classifier exiting for real (a Python ``break`` on the head's value)."""
    import jax.numpy as jnp
    h = jnp.sum(jnp.asarray(params["emb"])[jnp.asarray(instance["tokens"])], axis=0)
    for p in params["layers"]:
        h, logp = _layer(p, h)
        if float(jnp.max(logp)) >= np.log(THRESHOLD):
            break
    return -logp[instance["label"]]


def exits(params: dict[str, Any], instance: dict[str, Any]) -> int:
    """The layer (1-based) where ``reference`` exits: to check that exits do vary."""
    import jax.numpy as jnp
    h = jnp.sum(jnp.asarray(params["emb"])[jnp.asarray(instance["tokens"])], axis=0)
    for i, p in enumerate(params["layers"], 1):
        h, logp = _layer(p, h)
        if float(jnp.max(logp)) >= np.log(THRESHOLD):
            return i
    return len(params["layers"])
