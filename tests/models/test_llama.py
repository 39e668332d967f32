"""The Llama-2-style training step (bladec/models/llama.py) imported and run by bladec.

The committed samples are what the importer writes today; they optimize and analyze
from the command line; the small one runs, optimized under a memory limit, to outputs
bitwise equal to its unoptimized run and within float tolerance of ``train_step`` called
in JAX; and three SGD steps through the executor lower the loss.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import jax
import numpy as np
import pytest

from bladec.cli import main
from bladec.frontend import trace
from bladec.models import llama
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.planning.limit import LimitError
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.symbolic.shapes import analyze_shapes

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

SMALL = ROOT / "samples" / "llama-train-small.mlir"
PAPER = ROOT / "samples" / "llama-train-paper.mlir"
PAPER_ADAM = ROOT / "samples" / "llama-train-paper-adam.mlir"
CFG = llama.SMALL


@pytest.fixture(scope="module")
def small():
    return trace(**llama.small_train_spec())


@pytest.fixture(scope="module")
def paper():
    """The paper-size step traced once for the module (the sample's text, its ops)."""
    return trace(**llama.paper_train_spec())


@pytest.fixture(scope="module")
def optimized(small):
    return run_pipeline(small.module, parse_pipeline("analyze,schedule,remat"))


def batch(b: int, s: int, seed: int = 0, lr: float = 0.1) -> tuple:
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, CFG.vocab, (b, s)).astype(np.int32)
    targets = rng.integers(0, CFG.vocab, (b, s)).astype(np.int32)
    mask = (rng.random((b, s)) < 0.8).astype(np.float32)
    mask[:, 0] = 1.0
    return llama.init_params(CFG, seed), tokens, targets, mask, np.float32(lr)


_train_step = jax.jit(llama.train_step, static_argnames="cfg")


def reference(*args):
    """``train_step`` called in JAX (jitted: eager dispatch of ~1000 ops is slower)."""
    return _train_step(*args, cfg=CFG)


def assert_close(got, want) -> None:
    for (path, g), w in zip(jax.tree_util.tree_leaves_with_path(got),
                            jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6,
                                   err_msg=jax.tree_util.keystr(path))


def assert_bitwise(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert np.array_equal(a[k], b[k], equal_nan=True), k


# -- the samples ------------------------------------------------------------------------------

def test_samples_are_what_the_importer_writes(small, paper):
    assert SMALL.read_text() == format_module(small.module)
    assert PAPER.read_text() == format_module(paper.module)
    assert PAPER.stat().st_size < 256 * 1024


def test_paper_sample_has_the_small_ones_structure(small, paper):
    """Per layer the same ops; the paper's config has 4 layers, the small one 2. (The
    small and paper steps are the module's traces: checked, the same ops.)"""
    def ops(cfg):
        spec = llama.import_spec(cfg, 32, 512)
        return Counter(op.name for op in trace(**spec, check=False).module.main.ops)
    one, two = ops(dataclasses.replace(CFG, layers=1)), ops(CFG)
    per_layer = two - one
    small_ops = Counter(op.name for op in small.module.main.ops)
    assert small_ops == two
    paper_ops = Counter(op.name for op in paper.module.main.ops)
    assert paper_ops == one + per_layer + per_layer + per_layer
    assert sum(two.values()) == 580 and sum(paper_ops.values()) == 1032


@pytest.mark.parametrize("path", [  # the paper-size samples: `make bench` (issue 36)
    pytest.param(SMALL, id="small"), pytest.param(PAPER, id="paper", marks=pytest.mark.slow),
    pytest.param(PAPER_ADAM, id="paper-adam", marks=pytest.mark.slow)])
def test_samples_optimize_and_analyze(path):
    runner = make_runner()
    result = runner.invoke(main, ["optimize", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "remat.evict" in result.stdout
    result = runner.invoke(main, ["analyze", str(path), "--dims", "S0=2,S1=16"])
    assert result.exit_code == 0, result.stderr
    assert "S0 in [1, 32]" in result.stdout
    assert ("S1 in [1, 512]" if path == SMALL else "S1 in [1, 4096]") in result.stdout


def test_analysis_rediscovers_every_dim(small):
    """Only the inputs tokens/targets/mask are bound; every other dim is '?', and the
    analysis derives each as JAX's own dimension expression over B=@S0, S=@S1."""
    assert small.hints == [] and small.symbols == {"B": "S0", "S": "S1"}
    info = analyze_shapes(small.module)
    assert info.free == ["S0", "S1"] and not info.facts
    for value, dims in info.dims.items():
        assert dims == small.jax_dims[value], value
    shapes = {tuple(str(d) for d in ds) for ds in info.dims.values()}
    assert ("S0", "4", "S1", "S1") in shapes        # attention scores [B, H, S, S]
    assert ("S0", "S1", "256") in shapes            # logits [B, S, V]


# -- running it ---------------------------------------------------------------------------------

# at 4 x 24, the remat and loss tests' shape: jax.jit's reference compiles once for the
# three (about 1 s of CPU each; at 2 x 7 the limit of the remat test fits no plan)
@pytest.mark.parametrize("b,s", [(4, 24), pytest.param(3, 16, marks=pytest.mark.slow)])
def test_matches_train_step_in_jax(small, b, s):
    args = batch(b, s, seed=b)
    outputs, report = Executor(small.module, NumpyBackend()).run(small.flatten_inputs(*args))
    assert report.binding == {"S0": b, "S1": s}
    assert_close(small.unflatten_outputs(outputs), reference(*args))


def _remat_run(small, optimized, backend):
    args = batch(4, 24, seed=1)
    inputs = small.flatten_inputs(*args)
    plain, base = Executor(small.module, backend()).run(inputs)
    limit = int(0.7 * base.peak_bytes)
    outputs, report = Executor(optimized, backend()).run(inputs, limit=limit)
    assert report.peak_bytes <= limit < base.peak_bytes
    assert report.evictions > 0
    assert_bitwise(outputs, plain)
    assert_close(small.unflatten_outputs(outputs), reference(*args))


def test_remat_under_limit_is_bitwise_numpy(small, optimized):
    _remat_run(small, optimized, NumpyBackend)


@pytest.mark.slow  # XLA compiles every op as its own kernel with fusion off: about a minute
def test_remat_under_limit_is_bitwise_jax(small, optimized):
    # as for a device with a memory of its own: in one memory (CPU) recomputes alone do
    # not reach 0.7x of this step (tests/test_rss.py)
    _remat_run(small, optimized, lambda: JaxBackend(one_memory=False))


def test_loss_decreases_over_three_steps(small, optimized):
    params, tokens, targets, mask, lr = batch(4, 24, seed=3, lr=0.5)
    executor = Executor(optimized, NumpyBackend())
    losses = []
    for _ in range(3):
        inputs = small.flatten_inputs(params, tokens, targets, mask, lr)
        outputs, _ = executor.run(inputs)
        loss, params = small.unflatten_outputs(outputs)
        losses.append(float(loss))
    assert losses[0] > losses[1] > losses[2], losses
    want, _ = reference(*batch(4, 24, seed=3, lr=0.5))
    np.testing.assert_allclose(losses[0], float(want), rtol=1e-5)


# -- the Adam step ------------------------------------------------------------------------------

_adam_step = jax.jit(llama.adam_step, static_argnames=("cfg", "opt"))


@pytest.fixture(scope="module")
def adam():
    return trace(**llama.small_adam_spec())


def adam_batch(b: int, s: int, seed: int = 0) -> tuple:
    """A batch with non-zero moments, as after some steps (zero moments hide mistakes)."""
    params, tokens, targets, mask, _ = batch(b, s, seed)
    rng = np.random.default_rng(seed + 100)
    state = jax.tree_util.tree_map(
        lambda p: (rng.standard_normal(p.shape) * 1e-3).astype(np.float32),
        {"m": params, "v": params})
    state["v"] = jax.tree_util.tree_map(np.abs, state["v"])
    return params, state, tokens, targets, mask, llama.Adam().lr_at(1e-2, 3)


def test_paper_adam_sample_is_what_the_importer_writes():
    assert PAPER_ADAM.read_text() == format_module(trace(**llama.paper_adam_spec()).module)


def test_adam_matches_adam_step_in_jax(adam):
    args = adam_batch(3, 11, seed=4)
    outputs, report = Executor(adam.module, NumpyBackend()).run(adam.flatten_inputs(*args))
    assert report.binding == {"S0": 3, "S1": 11}
    assert_close(adam.unflatten_outputs(outputs), _adam_step(*args, cfg=CFG))


def test_adam_remat_under_limit_is_bitwise(adam):
    inputs = adam.flatten_inputs(*adam_batch(4, 24, seed=5))
    plain, base = Executor(adam.module, NumpyBackend()).run(inputs)
    optimized = run_pipeline(adam.module, parse_pipeline("analyze,schedule,remat"))
    # the state is resident throughout and the new state from its definition on, so only
    # a part of what lies above the inputs can be saved (here about 13%)
    floor = base.peak_bytes - (base.peak_bytes - sum(v.nbytes for v in inputs.values())) // 10
    executor = Executor(optimized, NumpyBackend())
    try:
        outputs, report = executor.run(inputs, limit=floor)
    except LimitError as exc:  # by the device accounting a tenth may be out of reach
        floor = exc.smallest
        outputs, report = executor.run(inputs, limit=floor)
    assert report.peak_bytes <= floor < base.peak_bytes and report.evictions > 0
    assert_bitwise(outputs, plain)


def test_adam_state_is_counted_by_the_memory_model(adam, small):
    """Moments in and out: the Adam step's peak exceeds the SGD step's by at least the
    bytes of four parameter trees (m and v read, m and v written)."""
    params = sum(int(np.prod(s)) * 4 for s in jax.tree_util.tree_leaves(
        llama.param_shapes(CFG), is_leaf=lambda x: isinstance(x, tuple)))
    binding = {"S0": 2, "S1": 16}
    peaks = [Executor(t.module, NumpyBackend()).plan(binding, None).peak for t in (adam, small)]
    assert peaks[0] - peaks[1] >= 4 * params


def test_adam_loss_decreases_over_three_steps(adam):
    params, state, tokens, targets, mask, _ = adam_batch(2, 12, seed=6)
    state = llama.adam_state(params)
    executor = Executor(adam.module, NumpyBackend())
    losses = []
    for step in (1, 2, 3):
        lr = llama.Adam().lr_at(1e-2, step)
        outputs, _ = executor.run(adam.flatten_inputs(params, state, tokens, targets, mask, lr))
        loss, params, state = adam.unflatten_outputs(outputs)
        losses.append(float(loss))
    assert losses[0] > losses[1] > losses[2], losses


# -- jax.checkpoint on each layer (the baselines of benchmarks/bench_device.py) ----------------

from jax.extend.core import jaxprs_in_params  # noqa: E402


def _primitives(jaxpr) -> set[str]:
    out = set()
    for eqn in jaxpr.eqns:
        out.add(eqn.primitive.name)
        for sub in jaxprs_in_params(eqn.params):
            out |= _primitives(sub)
    return out


TINY = llama.Config(vocab=32, hidden=8, intermediate=12, heads=2, layers=2)


def _tiny_batch(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, TINY.vocab, (2, 8)).astype(np.int32)
    return (llama.init_params(TINY, seed), tokens, tokens[:, ::-1].copy(),
            np.ones((2, 8), np.float32), np.float32(0.1))


@pytest.fixture(scope="module")
def tiny_plain_jaxpr():
    """The step without a policy, traced once for the five policies it is compared with."""
    return jax.make_jaxpr(lambda *a: llama.train_step(*a, TINY))(*_tiny_batch(3))


@pytest.mark.parametrize("policy", llama.REMAT_POLICIES)
def test_remat_policy_checkpoints_each_layer(policy, tiny_plain_jaxpr):
    args = _tiny_batch(3)
    plain = tiny_plain_jaxpr
    wrapped = jax.make_jaxpr(lambda *a: llama.train_step(*a, TINY, policy))(*args)
    assert "remat2" not in _primitives(plain.jaxpr) and "name" not in _primitives(plain.jaxpr)
    remats = [e for e in wrapped.jaxpr.eqns if e.primitive.name == "remat2"]
    assert len(remats) == TINY.layers   # one per layer: its backward, recomputing its forward
    assert all(e.params["differentiated"] for e in remats)
    assert remats[0].params["policy"] is not None


@pytest.fixture(scope="module")
def tiny_step_without_policy() -> tuple:
    """The plain step both policies are compared with: compiled once for the module."""
    return jax.jit(lambda *a: llama.train_step(*a, TINY))(*_tiny_batch(5))


@pytest.mark.parametrize("policy", [  # nothing_saveable: `make bench` (issue 36: 3.3 s)
    pytest.param("nothing_saveable", marks=pytest.mark.slow),
    "save_and_offload_only_these_names"])
def test_remat_policy_computes_the_same_step(policy, tiny_step_without_policy):
    args = _tiny_batch(5)
    loss, params = tiny_step_without_policy
    loss_p, params_p = jax.jit(lambda *a: llama.train_step(*a, TINY, policy))(*args)
    np.testing.assert_allclose(loss_p, loss, rtol=1e-6)
    for a, b in zip(jax.tree_util.tree_leaves(params_p), jax.tree_util.tree_leaves(params)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_named_values_are_what_the_offload_policy_keeps():
    """save_and_offload_only_these_names keeps the two named values and nothing else."""
    args = _tiny_batch(4)
    jaxpr = jax.make_jaxpr(lambda *a: llama.train_step(
        *a, TINY, "save_and_offload_only_these_names"))(*args)
    names = {e.params["name"] for e in _iter_eqns(jaxpr.jaxpr) if e.primitive.name == "name"}
    assert names == set(llama.LAYER_NAMES)
    with pytest.raises(ValueError, match="unknown remat policy"):
        llama.checkpoint_policy("save_everything")


def _iter_eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jaxprs_in_params(eqn.params):
            yield from _iter_eqns(sub)
