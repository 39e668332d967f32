"""A matrix-vector RNN (MV-RNN, Socher et al. 2012) over binary trees for bladec.autobatch.

Every word has a vector and a matrix; a node combines its children's (vector, matrix)
pairs ``(a, A)`` and ``(b, B)`` into ``p = tanh(W [B a; A b] + c)`` and
``P = W_M [A; B]``, so each node's cell is two matrix-vector products, one product
with ``W`` and one matrix-matrix product (``hidden**3`` multiply-adds: the largest
cell of the models here per invocation). The classifier reads the root's vector.
Instances are those of treelstm.py (``{"tree": t, "label": y}``); the vocabulary is
smaller by default, since each word carries a ``hidden x hidden`` matrix. Called
outside ``bladec.autobatch`` the same code is the plain, unbatched JAX reference.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.batching import cell
from bladec.models.treelstm import loss, random_tree   # the same classifier over the root

VOCAB = 100


def init_params(hidden: int = 256, vocab: int = VOCAB, classes: int = 5, seed: int = 0
                ) -> dict[str, Any]:
    """Word matrices near the identity (as the paper initialises them), the rest scaled
    so that products of a deep tree stay in range."""
    rng = np.random.default_rng(seed)

    def w(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (scale * rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
    eye = np.eye(hidden, dtype=np.float32)
    return {"emb": w(vocab, hidden),
            "mats": eye + w(vocab, hidden, hidden, scale=0.1),
            "node": {"w": w(hidden, 2 * hidden), "b": np.zeros(hidden, np.float32),
                     "wm": w(hidden, 2 * hidden, scale=0.5)},
            "out": {"w": w(classes, hidden), "b": np.zeros(classes, np.float32)}}


@cell
def leaf(emb: Any, mats: Any, word: Any) -> tuple[Any, Any]:
    """A word's vector and matrix."""
    return emb[word], mats[word]


@cell
def node(p: Any, left: Any, right: Any) -> tuple[Any, Any]:
    import jax.numpy as jnp
    (a, ma), (b, mb) = left, right
    v = jnp.tanh(p["w"] @ jnp.concatenate([mb @ a, ma @ b]) + p["b"])
    return v, p["wm"] @ jnp.concatenate([ma, mb])


def encode(params: dict[str, Any], tree: Any) -> tuple[Any, Any]:
    """The root's (vector, matrix): the recursion over the tree, in Python."""
    if isinstance(tree, (list, tuple)):
        return node(params["node"], encode(params, tree[0]), encode(params, tree[1]))
    return leaf(params["emb"], params["mats"], tree)


def model(params: dict[str, Any], instance: dict[str, Any]) -> Any:
    """The loss of one instance."""
    v, _ = encode(params, instance["tree"])
    return loss(params["out"], v, instance["label"])


def instances(count: int, seed: int = 0, vocab: int = VOCAB, classes: int = 5,
              leaves: tuple[int, int] = (5, 45)) -> list[dict[str, Any]]:
    """Seeded synthetic trees of ``leaves`` (inclusive) leaves over ``vocab`` words."""
    rng = np.random.default_rng(seed)
    return [{"tree": random_tree(rng, int(rng.integers(leaves[0], leaves[1] + 1)), vocab),
             "label": int(rng.integers(classes))} for _ in range(count)]
