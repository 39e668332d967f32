"""``grad`` on the shipped Llama forward listing (samples/llama-loss-small.mlir: the loss of
the small config, imported without ``value_and_grad``): its gradients against the
imported training step's and ``jax.grad``'s, and the training listing through
``schedule,remat`` under a memory limit with the same results.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

from bladec.frontend import trace
from bladec.models import llama
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

from tests.support.llamacase import CFG, LOSS, NAMES, inputs
from tests.support.paths import ROOT

# values and model peaks: each step at no limit in bladec's order alone (7.3 -> 5.0 s)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

TRAIN = ROOT / "samples" / "llama-train-small.mlir"


@pytest.fixture(scope="module")
def forward():
    return parse_module(LOSS.read_text(), str(LOSS))


@pytest.fixture(scope="module")
def training(forward):
    return run_pipeline(forward, parse_pipeline("grad"))


def test_sample_is_what_the_importer_writes():
    assert LOSS.read_text() == format_module(trace(**llama.small_loss_spec()).module)


def test_grad_trains_the_parameters_and_keeps_batch_and_sequence_symbolic(training):
    func = training.main
    assert func.returns == ["%loss"] + ["%grad_" + n[1:] for n in NAMES]
    types = func.value_types()
    assert all(types["%grad_" + n[1:]] == types[n].with_binds(types["%grad_" + n[1:]].binds)
               for n in NAMES)
    dynamic = {b for t in types.values() for b in (t.binds or ()) if b.startswith("S")}
    assert {"S0", "S1"} <= dynamic  # batch and sequence stay symbols through the backward
    text = format_module(training)
    assert format_module(parse_module(text)) == text


@pytest.mark.parametrize("b,s", [  # issue 36: 5.7 s; `make test` keeps the grad pass op by op
    # (tests/ops/test_adjoints_*) and the imported step against train_step (models/test_llama)
    pytest.param(2, 7, marks=pytest.mark.slow), pytest.param(4, 24, marks=pytest.mark.slow)])
def test_gradients_match_the_imported_step_and_jax_grad(training, b, s):
    """The imported step's update at lr = 1 is p - g (JAX's gradient); ours agrees
    within f32 rounding, and with jax.grad of the model's loss_fn directly."""
    x = inputs(b, s, seed=b)
    ours, _ = Executor(training, JaxBackend()).run(x)
    step, _ = Executor(parse_module(TRAIN.read_text()), JaxBackend()).run(
        {**x, "%lr": np.float32(1.0)})
    np.testing.assert_allclose(ours["%loss"], step["%loss"], rtol=1e-5)
    params = llama.init_params(CFG, b)
    # jitted: eager jax.grad dispatches (and compiles) each of the loss's ~1000 ops
    want = jax.tree_util.tree_leaves(jax.jit(jax.grad(llama.loss_fn), static_argnums=4)(
        params, x["%tokens"], x["%targets"], x["%mask"], CFG))
    for n, w in zip(NAMES, want):
        g = np.asarray(ours["%grad_" + n[1:]])
        np.testing.assert_allclose(x[n] - g, step[n.replace("%params", "%new")],
                                   rtol=1e-5, atol=1e-6, err_msg=n)
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-3,
                                   atol=1e-5 * float(np.abs(w).max()), err_msg=n)


def test_grad_schedule_remat_under_a_limit_gives_the_same_results(forward, training):
    """On the NumPy backend (no fusion), bit for bit what the unlimited training listing
    computes, at 0.7x its peak, with evictions."""
    x = inputs(4, 24, seed=1)
    plain, base = Executor(training, NumpyBackend()).run(x)
    optimized = run_pipeline(forward, parse_pipeline("grad,schedule,remat"))
    limit = int(0.7 * base.peak_bytes)
    got, report = Executor(optimized, NumpyBackend()).run(x, limit=limit)
    assert report.peak_bytes <= limit and report.evictions > 0
    assert got.keys() == plain.keys()
    for k in got:
        assert np.array_equal(got[k], plain[k]), k


def test_save_auto_on_llama_same_values_lower_peaks(forward, training):
    """Bit for bit the gradients of saving everything (NumPy backend), at no higher a model
    peak at any sampled binding, lower wherever the activations outweigh the weights."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.symbolic.shapes import analyze_shapes
    auto = run_pipeline(forward, parse_pipeline("grad{save=auto}"))
    x = inputs(3, 10)
    a, _ = Executor(training, NumpyBackend()).run(x)
    b, _ = Executor(auto, NumpyBackend()).run(x)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    infos = [analyze_shapes(m) for m in (training, auto)]
    for s0, s1 in [(1, 1), (2, 7), (8, 256), (32, 512)]:
        every, chosen = [exact_peak(m.main, exact_sizes(i, {"S0": s0, "S1": s1}))
                         for m, i in zip((training, auto), infos)]
        assert chosen <= every and (s0 * s1 < 2048 or chosen < every), (s0, s1)
