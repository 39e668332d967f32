"""f16 training with dynamic loss scaling (``amp{dtype=f16},grad{scale=dynamic}``,
bladec/passes/scaling.py): the MLP of the training benchmark (bladec/models/blocks.py)
follows f32's loss within 1% at each of 20 SGD steps where f16 without a scale drifts,
a step whose gradients overflow is skipped (zero gradients, the scale halved), the
scale doubles after ``growth`` finite steps, and the state's errors."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.errors import BladecError
from bladec.frontend import trace
from bladec.models import blocks
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor

# values only: each step at no limit in bladec's order alone (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

MLP = blocks.BLOCKS["mlp"]
STEPS, LR = 20, 0.5


@pytest.fixture(scope="module")
def forward():
    return trace(**blocks.spec(MLP)).module


def _start(batch: int = 64) -> dict[str, np.ndarray]:
    params, x, labels = blocks.args(MLP, batch, seed=3)
    out = {"%params." + k: v for k, v in params.items()}
    out.update({"%x": x, "%labels": labels})
    return out


def _train(forward, pipeline: str, scale: float | None = None) -> tuple[list[float], dict]:
    """Losses of ``STEPS`` SGD steps on one batch, the weights updated in f32 (and the
    scale's state fed back)."""
    ex = Executor(run_pipeline(forward, parse_pipeline(pipeline)), JaxBackend())
    inputs = _start()
    if scale is not None:
        inputs.update({"%loss_scale": np.float32(scale), "%loss_scale_steps": np.int32(0)})
    losses = []
    for _ in range(STEPS):
        out, _ = ex.run(inputs)
        losses.append(float(out["%loss"]))
        for k in MLP.params:
            name = "%params." + k
            inputs[name] = inputs[name] - np.float32(LR) * np.asarray(out["%grad_params." + k])
        if scale is not None:
            inputs["%loss_scale"] = np.asarray(out["%next_loss_scale"])
            inputs["%loss_scale_steps"] = np.asarray(out["%next_loss_scale_steps"])
    return losses, inputs


def test_f16_with_loss_scaling_follows_f32_within_1_percent_at_every_step(forward):
    f32, _ = _train(forward, "grad")
    scaled, state = _train(forward, "amp{dtype=f16},grad{scale=dynamic}", 65536.0)
    plain, _ = _train(forward, "amp{dtype=f16},grad")
    dev = [abs(a - b) / b for a, b in zip(scaled, f32)]
    assert max(dev) <= 0.01, dev
    # without the scale, small gradients underflow in f16 and the curve drifts away
    assert max(abs(a - b) / b for a, b in zip(plain, f32)) > 0.05
    assert state["%loss_scale"] == np.float32(65536.0)   # 20 finite steps < growth 2000


def _step(forward, growth: int, scale: float, steps: int) -> dict[str, np.ndarray]:
    ex = Executor(run_pipeline(forward, parse_pipeline(
        f"amp{{dtype=f16}},grad{{scale=dynamic,growth={growth}}}")), NumpyBackend())
    inputs = _start(8)
    inputs.update({"%loss_scale": np.float32(scale), "%loss_scale_steps": np.int32(steps)})
    return ex.run(inputs)[0]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the point
def test_an_overflowing_step_is_skipped_and_the_scale_backs_off(forward):
    out = _step(forward, 2000, 3e38, 7)   # every f16 cotangent overflows
    assert not bool(out["%grads_finite"])
    assert all(not np.any(out["%grad_params." + k]) for k in MLP.params)
    assert out["%next_loss_scale"] == np.float32(1.5e38)
    assert out["%next_loss_scale_steps"] == 0


def test_the_scale_grows_after_growth_finite_steps(forward):
    out = _step(forward, 3, 1024.0, 2)
    assert bool(out["%grads_finite"])
    assert out["%next_loss_scale"] == np.float32(2048.0) and out["%next_loss_scale_steps"] == 0
    out = _step(forward, 3, 1024.0, 0)
    assert out["%next_loss_scale"] == np.float32(1024.0) and out["%next_loss_scale_steps"] == 1
    # the gradients come back unscaled: those of f32 training, to f16's rounding
    f32 = Executor(run_pipeline(forward, parse_pipeline("grad")), NumpyBackend()).run(
        _start(8))[0]
    for k in MLP.params:
        g = f32["%grad_params." + k]
        np.testing.assert_allclose(out["%grad_params." + k], g,
                                   atol=2e-3 * float(np.abs(g).max()) + 1e-7)


def test_state_is_an_input_and_an_output_of_the_listing(forward):
    train = run_pipeline(forward, parse_pipeline("amp{dtype=f16},grad{scale=dynamic}"))
    args = [a.name for a in train.main.args]
    assert args[-2:] == ["%loss_scale", "%loss_scale_steps"]
    assert train.main.returns[-3:] == ["%next_loss_scale", "%next_loss_scale_steps",
                                       "%grads_finite"]
    types = train.main.value_types()
    assert types["%grads_finite"].dtype == "i1" and types["%next_loss_scale"].dims == ()


@pytest.mark.parametrize("pipeline, message", [
    ("grad{scale=static}", "scale=static"),
    ("grad{scale=dynamic,growth=0}", "growth=0"),
])
def test_bad_options(pipeline, message):
    with pytest.raises(BladecError, match=message):
        parse_pipeline(pipeline)


def test_a_name_the_state_would_take_is_an_error():
    text = """\
func.func @main(%loss_scale: tensor<4>) {
  %loss = reduce(%loss_scale) {dims = [0]} -> tensor<f32>
  return %loss
}
"""
    with pytest.raises(BladecError, match="already has a value named %loss_scale"):
        run_pipeline(parse_module(text), parse_pipeline("grad{scale=dynamic}"))
