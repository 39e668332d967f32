"""A bidirectional LSTM sequence classifier for bladec.autobatch.

An instance is ``{"tokens": [ids...], "label": y}``: the loops over the sequence, one
forward and one backward, are the model's own Python; each direction has its own
weights (so the two directions are two groups of one cell; in inference both run as
one call per depth, the weights stacked: schedule.stacked), and the classifier reads
the two final states. Called outside ``bladec.autobatch`` the same
code is the plain, unbatched JAX reference.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.batching import cell


def init_params(hidden: int = 256, vocab: int = 1000, classes: int = 5, seed: int = 0
                ) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    def lstm() -> dict[str, np.ndarray]:
        return {"w": w(4 * hidden, 2 * hidden), "b": np.zeros(4 * hidden, np.float32)}
    return {"emb": w(vocab, hidden), "fwd": lstm(), "bwd": lstm(),
            "out": {"w": w(classes, 2 * hidden), "b": np.zeros(classes, np.float32)}}


@cell
def step(emb: Any, p: Any, word: Any, state: Any) -> tuple[Any, Any]:
    """One LSTM step: the embedding of ``word`` and the previous (h, c)."""
    import jax
    import jax.numpy as jnp
    h, c = state
    i, f, o, u = jnp.split(p["w"] @ jnp.concatenate([emb[word], h]) + p["b"], 4)
    s = jax.nn.sigmoid
    c = s(f) * c + s(i) * jnp.tanh(u)
    return s(o) * jnp.tanh(c), c


@cell
def loss(p: Any, fwd: Any, bwd: Any, label: Any) -> Any:
    import jax
    import jax.numpy as jnp
    logits = p["w"] @ jnp.concatenate([fwd, bwd]) + p["b"]
    onehot = jnp.arange(logits.shape[0]) == label
    return -jnp.sum(jnp.where(onehot, jax.nn.log_softmax(logits), 0.0))


def run(params: dict[str, Any], p: Any, tokens: list[int]) -> Any:
    hidden = params["emb"].shape[1]
    state: Any = (np.zeros(hidden, np.float32), np.zeros(hidden, np.float32))
    for word in tokens:
        state = step(params["emb"], p, word, state)
    return state[0]


def model(params: dict[str, Any], instance: dict[str, Any]) -> Any:
    tokens = instance["tokens"]
    fwd = run(params, params["fwd"], tokens)
    bwd = run(params, params["bwd"], tokens[::-1])
    return loss(params["out"], fwd, bwd, instance["label"])


def instances(count: int, seed: int = 0, vocab: int = 1000, classes: int = 5,
              length: tuple[int, int] = (5, 45)) -> list[dict[str, Any]]:
    """Seeded synthetic sequences of ``length`` (inclusive) tokens."""
    rng = np.random.default_rng(seed)
    return [{"tokens": [int(t) for t in rng.integers(
        vocab, size=int(rng.integers(length[0], length[1] + 1)))],
             "label": int(rng.integers(classes))} for _ in range(count)]
