"""The Llama model the CPU benchmarks train, its training step imported by bladec, and one
mode's model carried from step to step: bench_paper.py, bench_compile.py,
bench_device.py and bench_plan.py train the same narrowed model the same way."""
from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from bladec.frontend.jax_import import Imported, trace
from bladec.models.llama import Adam, Config, adam_state, import_spec, init_params

# the paper's Llama-2 narrowed to run on a CPU (token ids are folded into its vocabulary)
CPU_CONFIG = Config(vocab=2048, hidden=128, intermediate=344, heads=4, layers=4)


def import_step(cfg: Config, max_seq: int, optimizer: str) -> Imported:
    return trace(**import_spec(cfg, 32, max_seq, optimizer))


@dataclass
class Training:
    """One mode's model, carried from step to step: every mode trains for real."""
    params: dict
    state: dict | None     # Adam's moments; None for SGD
    steps: int = 0

    @classmethod
    def start(cls, cfg: Config, optimizer: str, seed: int) -> "Training":
        params = jax.tree_util.tree_map(np.asarray, init_params(cfg, seed))
        return cls(params, adam_state(params) if optimizer == "adam" else None)

    def args(self, batch) -> tuple:
        """The training step's arguments for the next step on ``batch``."""
        lr = Adam().lr_at(1e-3, self.steps + 1) if self.state is not None else np.float32(1e-3)
        state = () if self.state is None else (self.state,)
        return (self.params, *state, batch.tokens, batch.targets, batch.mask, lr)

    def update(self, outputs: tuple) -> float:
        """Take the step's outputs ``(loss, params[, state])``; return the loss."""
        loss, params, *state = jax.tree_util.tree_map(np.asarray, outputs)
        self.params, self.state = params, (state[0] if state else None)
        self.steps += 1
        return float(loss)
