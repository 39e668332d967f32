"""An LSTM language model over a ``lax.scan`` (tokens [T, B], the scan's length T), its
SGD step with ``value_and_grad``, as a user writes it: the planning tests' recurrent model
at any width and vocabulary (tests/runtime/planning/test_smallest_limit.py at a toy
size, tests/runtime/test_checkpoint.py at a user's)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class LstmLM:
    """The model at ``hidden`` units and ``vocab`` tokens."""
    hidden: int
    vocab: int

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        h, v = self.hidden, self.vocab
        return {"emb": (v, h), "wx": (h, 4 * h), "wh": (h, 4 * h), "b": (4 * h,),
                "out": (h, v)}

    def loss(self, p: dict, tokens: Any, labels: Any) -> Any:
        def cell(carry, x):
            h, c = carry
            i, f, o, g = jnp.split(x @ p["wx"] + h @ p["wh"] + p["b"], 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((tokens.shape[1], self.hidden), jnp.float32)
        _, hs = jax.lax.scan(cell, (zeros, zeros), p["emb"][tokens])
        logp = jax.nn.log_softmax(hs @ p["out"], -1)
        return -jnp.take_along_axis(logp, labels[..., None], -1).mean()

    @property
    def step(self) -> Callable:
        """The training step: (loss, the parameters after one SGD step)."""
        def step(p, tokens, labels):
            loss, g = jax.value_and_grad(self.loss)(p, tokens, labels)
            return loss, jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)
        return step

    def specs(self, t: Any, b: Any) -> tuple:
        p = {k: jax.ShapeDtypeStruct(s, jnp.float32) for k, s in self.shapes.items()}
        tok = jax.ShapeDtypeStruct((t, b), jnp.int32)
        return p, tok, tok

    def args(self, dims: dict[str, int], seed: int) -> tuple:
        rng = np.random.default_rng(seed)
        p = {k: (rng.standard_normal(s) * 0.3).astype(np.float32)
             for k, s in self.shapes.items()}
        tok = lambda: rng.integers(0, self.vocab, (dims["T"], dims["B"])).astype(  # noqa: E731
            np.int32)
        return p, tok(), tok()
