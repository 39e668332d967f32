"""``grad{save=auto}`` on the training benchmark's function kinds (bladec/models/blocks.py):
it recomputes where recomputing is cheaper than holding (the attention's softmax
probabilities, the GELU's ``tanh``, the LayerNorm outputs), never holds more than the
default at any corner of the declared ranges by the model, lowers XLA's device peak on the
attention block and never raises it on any kind, and gives the default's gradients."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from bladec.analysis.memory import exact_peak, exact_sizes
from bladec.frontend import trace
from bladec.models import blocks
from bladec.passes import parse_pipeline, run_pipeline
from bladec.passes.saving import corners, fused_peak
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.symbolic.shapes import analyze_shapes

KINDS = sorted(blocks.BLOCKS)


def _forward(kind: str):
    return trace(**blocks.spec(blocks.BLOCKS[kind])).module


def _saved(module, forward_ops: int) -> dict[str, str]:
    """The forward values the backward reads: name -> the op that made it."""
    ops = module.main.ops
    made = {r.name: op.name for op in ops[:forward_ops] for r in op.results}
    return {n: made[n] for op in ops[forward_ops:] for n in op.operands if n in made}


@pytest.fixture(scope="module")
def trained():
    out = {}
    for kind in KINDS:
        fwd = _forward(kind)
        out[kind] = (len(fwd.main.ops), run_pipeline(fwd, parse_pipeline("grad")),
                     run_pipeline(fwd, parse_pipeline("grad{save=auto}")))
    return out


def test_save_auto_recomputes_the_attention_probabilities_and_the_gelu(trained):
    """Fails where save=auto saves nothing: the default keeps the softmax's normalized
    [B, H, S, S] probabilities beside its exponentials and the GELU's tanh; auto makes
    them again in the backward from what it keeps anyway."""
    n, default, auto = trained["attention"]
    kept, kept_auto = _saved(default, n), _saved(auto, n)
    assert len(kept_auto) < len(kept)  # fewer, and small ones ([B, S, 1] statistics)
    assert "tanh" in kept.values() and "tanh" not in kept_auto.values()
    types = default.main.value_types()
    probs = [v for v, op in kept.items() if op == "div" and types[v].rank == 4]
    assert probs and not set(probs) & set(kept_auto)
    # the backward reads the clones: each recomputed value is made once there
    clones = [r.name for op in auto.main.ops[n:] for r in op.results if ".r" in r.name]
    assert any(c.startswith(probs[0] + ".r") for c in clones)
    # by the (unfused) model, at 8x256: at least 5% less
    peaks = [exact_peak(m.main, exact_sizes(analyze_shapes(m), {"S0": 8, "S1": 256}))
             for m in (default, auto)]
    assert peaks[1] <= 0.95 * peaks[0], peaks


@pytest.mark.parametrize("kind", KINDS)
def test_save_auto_never_above_the_default_at_any_corner_of_the_ranges(trained, kind):
    """By the model save=auto decides with (XLA's loop fusion of recomputed elementwise
    chains counted), at every corner and at a binding inside the ranges."""
    n, default, auto = trained[kind]
    for binding in corners(auto) + [{k: 3 for k in corners(auto)[0]}]:
        a = fused_peak(auto.main, n, exact_sizes(analyze_shapes(auto), binding))
        d = fused_peak(default.main, n, exact_sizes(analyze_shapes(default), binding))
        assert a <= d, (binding, a, d)


def _inputs(kind: str, batch: int, seq: int) -> dict[str, np.ndarray]:
    block = blocks.BLOCKS[kind]
    a = blocks.args(block, batch, seq)
    flat = {"%params." + k: v for k, v in a[0].items()}
    flat.update({"%" + n: v for n, v in zip(block.data_names, a[1:])})
    return flat


SHAPES = {"attention": (8, 128), "mlp": (64, 1), "conv": (16, 1), "gather": (64, 1)}


@pytest.mark.parametrize("kind", [  # attention and conv: `make bench` (issue 36: 6.4 s)
    pytest.param(k, marks=pytest.mark.slow) if k in ("attention", "conv") else k
    for k in KINDS])
def test_save_auto_device_peak_and_gradients(trained, kind):
    """By the runtime's device accounting (XLA's figures of the executable it runs):
    save=auto at most the default's peak on every kind, at least 5% under it on the
    attention block; the same loss and gradients as the default's."""
    n, default, auto = trained[kind]
    inputs = _inputs(kind, *SHAPES[kind])
    got = {}
    for name, module in (("default", default), ("auto", auto)):
        out, report = Executor(module, JaxBackend()).run_arrays(
            {k: jax.device_put(v) for k, v in inputs.items()})
        got[name] = ({k: np.asarray(v) for k, v in out.items()}, report.peak_bytes)
    assert got["auto"][1] <= got["default"][1]
    if kind == "attention":
        assert got["auto"][1] <= 0.95 * got["default"][1], (got["auto"][1], got["default"][1])
    for k, v in got["default"][0].items():
        np.testing.assert_allclose(got["auto"][0][k], v, rtol=2e-5, atol=1e-6)


def test_a_broadcast_is_cloned_for_each_reader_recomputed_or_not(trained):
    """The ReLU of the convolutions, recomputed, reads a zero broadcast that its adjoint
    reads too: each gets a clone of its own (one broadcast with two readers is a buffer
    of its own in XLA: it raised the device peak above the default's by 2.5 MiB)."""
    n, _, auto = trained["conv"]
    bwd = auto.main.ops[n:]
    spread = {r.name for op in bwd if op.name in ("broadcast_like", "broadcast_in_dim")
              for r in op.results}
    readers = {name: sum(name in op.operands for op in bwd) for name in spread}
    assert readers and max(readers.values()) == 1, readers
