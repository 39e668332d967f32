"""A binary TreeLSTM classifier (Tai et al. 2015, constituency form) for bladec.autobatch.

An instance is ``{"tree": t, "label": y}`` where ``t`` is a word id (a leaf) or a pair
``[left, right]`` of subtrees: the recursion over the tree is the model's own Python,
and the three cells (``leaf``, ``node``, ``loss``) are JAX functions of one
invocation's arrays. Called outside ``bladec.autobatch`` the same code is the plain,
unbatched JAX reference.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.batching import cell


def init_params(hidden: int = 256, vocab: int = 1000, classes: int = 5, seed: int = 0
                ) -> dict[str, Any]:
    """Weights as float32 NumPy arrays (scaled so the gates stay in range)."""
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
    return {"emb": w(vocab, hidden),
            "leaf": {"w": w(3 * hidden, hidden), "b": np.zeros(3 * hidden, np.float32)},
            "node": {"u": w(5 * hidden, 2 * hidden), "b": np.zeros(5 * hidden, np.float32)},
            "out": {"w": w(classes, hidden), "b": np.zeros(classes, np.float32)}}


@cell
def leaf(emb: Any, p: Any, word: Any) -> tuple[Any, Any]:
    import jax
    import jax.numpy as jnp
    x = emb[word]
    i, o, u = jnp.split(p["w"] @ x + p["b"], 3)
    c = jax.nn.sigmoid(i) * jnp.tanh(u)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


@cell
def node(p: Any, left: Any, right: Any) -> tuple[Any, Any]:
    import jax
    import jax.numpy as jnp
    (hl, cl), (hr, cr) = left, right
    i, fl, fr, o, u = jnp.split(p["u"] @ jnp.concatenate([hl, hr]) + p["b"], 5)
    s = jax.nn.sigmoid
    c = s(i) * jnp.tanh(u) + s(fl) * cl + s(fr) * cr
    return s(o) * jnp.tanh(c), c


@cell
def loss(p: Any, h: Any, label: Any) -> Any:
    """Cross-entropy of the root's class scores against ``label``."""
    import jax
    import jax.numpy as jnp
    logits = p["w"] @ h + p["b"]
    onehot = jnp.arange(logits.shape[0]) == label
    return -jnp.sum(jnp.where(onehot, jax.nn.log_softmax(logits), 0.0))


def encode(params: dict[str, Any], tree: Any) -> tuple[Any, Any]:
    """The root's (h, c): the recursion over the tree, in Python."""
    if isinstance(tree, (list, tuple)):
        return node(params["node"], encode(params, tree[0]), encode(params, tree[1]))
    return leaf(params["emb"], params["leaf"], tree)


def model(params: dict[str, Any], instance: dict[str, Any]) -> Any:
    """The loss of one instance."""
    h, _ = encode(params, instance["tree"])
    return loss(params["out"], h, instance["label"])


def random_tree(rng: np.random.Generator, leaves: int, vocab: int) -> Any:
    """A random binary tree over ``leaves`` word ids (random split points)."""
    if leaves == 1:
        return int(rng.integers(vocab))
    k = int(rng.integers(1, leaves))
    return [random_tree(rng, k, vocab), random_tree(rng, leaves - k, vocab)]


def instances(count: int, seed: int = 0, vocab: int = 1000, classes: int = 5,
              leaves: tuple[int, int] = (5, 45)) -> list[dict[str, Any]]:
    """Seeded synthetic instances: trees of ``leaves`` (inclusive) leaves."""
    rng = np.random.default_rng(seed)
    return [{"tree": random_tree(rng, int(rng.integers(leaves[0], leaves[1] + 1)), vocab),
             "label": int(rng.integers(classes))} for _ in range(count)]
