"""The small Llama's loss listing (samples/llama-loss-small.mlir) and inputs for it: the
parameters JAX initializes and a random batch. Shared by the ``grad`` tests
(tests/passes/test_grad_llama.py) and the ``amp`` tests (tests/passes/test_amp.py)."""
from __future__ import annotations

import jax
import numpy as np

from bladec.models import llama

from tests.support.paths import SAMPLES

LOSS = SAMPLES / "llama-loss-small.mlir"
CFG = llama.SMALL
NAMES = llama._leaf_names(llama.param_shapes(CFG), "params")


def inputs(b: int, s: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    leaves = jax.tree_util.tree_leaves(llama.init_params(CFG, seed))
    out = {n: np.asarray(v, np.float32) for n, v in zip(NAMES, leaves)}
    out["%tokens"] = rng.integers(0, CFG.vocab, (b, s)).astype(np.int32)
    out["%targets"] = rng.integers(0, CFG.vocab, (b, s)).astype(np.int32)
    mask = (rng.random((b, s)) < 0.8).astype(np.float32)
    mask[:, 0] = 1.0
    out["%mask"] = mask
    return out
