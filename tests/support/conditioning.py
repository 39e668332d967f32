"""How far a step's outputs move when nothing but rounding changes.

A plan that recomputes values in another executable (a recompute chain replays a region
of the forward inside a backward segment) rounds some of them differently from the
unoptimized run: XLA fuses, vectorizes and sums them in another context. How far that
carries to the outputs is the step's own float conditioning, not the plan's: the same
step moves as far when its inputs move by one unit in the last place. ``ulp_floor``
measures that, so a fused-mode test can state its tolerance as the larger of a fixed
fraction and the step's own floor, and still fail when a plan computes something else.
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

Outputs = Mapping[str, object]


def largest_drift(want: Outputs, got: Outputs) -> float:
    """The largest difference of any output, as a fraction of that output's largest
    magnitude (so one badly scaled output can not hide behind another's scale)."""
    worst = 0.0
    for name, value in want.items():
        want64 = np.asarray(value, np.float64)
        got64 = np.asarray(got[name], np.float64)
        scale = max(float(np.abs(want64).max(initial=0.0)), float(np.finfo(np.float32).tiny))
        worst = max(worst, float(np.abs(got64 - want64).max(initial=0.0)) / scale)
    return worst


def one_ulp_apart(inputs: Mapping[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The inputs with every f32 element moved one unit in the last place, up or down at
    random (other dtypes unchanged)."""
    rng = np.random.default_rng(seed)
    moved = {}
    for name, value in inputs.items():
        array = np.asarray(value)
        if array.dtype == np.float32:
            toward = np.where(rng.random(array.shape) < 0.5, -np.inf, np.inf).astype(np.float32)
            array = np.nextafter(array, toward).astype(np.float32)
        moved[name] = array
    return moved


def ulp_floor(run: Callable[[Mapping[str, np.ndarray]], Outputs],
              inputs: Mapping[str, np.ndarray], reference: Outputs, trials: int = 2) -> float:
    """The smallest drift (``largest_drift``) of ``run`` over ``trials`` one-ulp moves of
    its inputs: a lower bound on how far rounding alone moves this step's outputs."""
    return min(largest_drift(reference, run(one_ulp_apart(inputs, seed)))
               for seed in range(trials))
