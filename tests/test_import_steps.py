"""Training steps as users write them, through ``bladec import`` and ``bladec run``.

The smallest real loss, ``jnp.mean`` of a dynamic batch under ``jax.value_and_grad``,
divides by a dim JAX hands over as ``dim_as_value``; the listing reads it with
``dim_size``. Each step here is imported from the command line, run, and compared with
calling the JAX function directly.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from clirunner import make_runner

from bladec.cli import main
from bladec.frontend import trace
from bladec.runtime.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.jax_backend import JaxBackend

B, S = export.symbolic_shape("B, S")
F32 = jnp.float32


def mean_loss(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


def mean_step(w, x):
    """The loss and its gradient: ``mean`` divides by ``4*B`` (``dim_as_value``)."""
    return jax.value_and_grad(mean_loss)(w, x)


def mean_step_spec():
    """The import spec form: ``fn``, ``arg_specs`` and ``ranges``."""
    return {"fn": mean_step,
            "arg_specs": (jax.ShapeDtypeStruct((8, 4), F32), jax.ShapeDtypeStruct((B, 8), F32)),
            "ranges": {"B": (1, 64)}}


def per_token_mean(x, w):
    """A mean over two dynamic dims and one over a product of them (``/ x.shape[0]``)."""
    h = jnp.tanh(x @ w)
    return h.mean(axis=(0, 1)), jnp.sum(h) / (x.shape[0] * x.shape[1] + 1), h.mean(axis=1)


def _args(b: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((8, 4)).astype(np.float32),
            rng.standard_normal((b, 8)).astype(np.float32))


def test_mean_loss_reads_the_batch_with_dim_size():
    imp = trace(mean_step, mean_step_spec()["arg_specs"])
    text = imp.text()
    assert "dim_size(%x) {dim = 0} -> tensor<i32>" in text
    assert imp.hints == []
    assert text.count("dim_size(") == 1   # read once, used by the loss and the gradient


@pytest.mark.parametrize("backend", [NumpyBackend, JaxBackend], ids=["numpy", "jax"])
def test_mean_over_dynamic_dims_runs_like_jax(backend):
    specs = (jax.ShapeDtypeStruct((B, S, 8), F32), jax.ShapeDtypeStruct((8, 3), F32))
    imp = trace(per_token_mean, specs)
    assert imp.text().count("dim_size(") == 2
    executor = Executor(imp.module, backend())
    for b, s in [(1, 1), (3, 7)]:
        rng = np.random.default_rng(b + s)
        args = (rng.standard_normal((b, s, 8)).astype(np.float32),
                rng.standard_normal((8, 3)).astype(np.float32))
        out, _ = executor.run(imp.flatten_inputs(*args))
        for g, w in zip(imp.unflatten_outputs(out), per_token_mean(*args)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("form", ["spec", "shapes"])
def test_cli_import_and_run_mean_step(tmp_path, form):
    """Acceptance of issue 15: import a ``jnp.mean`` loss under ``value_and_grad``, run
    it, and match the JAX function within float tolerance."""
    runner = make_runner()
    listing = tmp_path / "step.mlir"
    args = (["import", "test_import_steps:mean_step_spec"] if form == "spec" else
            ["import", "test_import_steps:mean_step", "--shapes", "w:8,4;x:B,8"])
    result = runner.invoke(main, args + ["-o", str(listing)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "dim_size(%x)" in listing.read_text()
    w, x = _args(6)
    np.savez(tmp_path / "in.npz", w=w, x=x)
    for extra in ([], ["--mem-limit", "1GiB", "--backend", "numpy"]):
        result = runner.invoke(main, ["run", str(listing), "--inputs", str(tmp_path / "in.npz"),
                                      "--outputs", str(tmp_path / "out.npz")] + extra)
        assert result.exit_code == 0, result.stdout + result.stderr
        got = np.load(tmp_path / "out.npz")
        loss, grad = mean_step(w, x)
        np.testing.assert_allclose(got["out0"], np.asarray(loss), rtol=1e-6)
        np.testing.assert_allclose(got["out1"], np.asarray(grad), rtol=1e-5, atol=1e-7)


def test_dim_size_is_verified():
    from bladec.errors import BladecError
    from bladec.parse import parse_module
    from bladec.verify import verify
    for text, message in [
        ("func.func @main(%a: tensor<f32>) {\n  %n = dim_size(%a) {dim = 0} -> tensor<i32>\n"
         "  return %n\n}\n", "has no dim to read"),
        ("func.func @main(%a: tensor<4x?>) {\n  %n = dim_size(%a) {dim = 2} -> tensor<i32>\n"
         "  return %n\n}\n", "out of range"),
        ("func.func @main(%a: tensor<4x?>) {\n  %n = dim_size(%a) {dim = 1} -> tensor<f32>\n"
         "  return %n\n}\n", "must be i32 or i64"),
    ]:
        with pytest.raises(BladecError, match=message):
            verify(parse_module(text))


# -- errors point at the user's code -----------------------------------------------------

def sorts(x):
    y = jnp.sin(x)
    return jnp.sort(y, axis=0)  # the unsupported primitive: this line is reported


def nested_sorts(x):
    return jax.jit(lambda v: sorts(v) * 2.0)(x)  # the error is inside two jitted calls


@pytest.mark.parametrize("fn", ["sorts", "nested_sorts"])
def test_unsupported_primitive_names_the_users_line(fn):
    import inspect
    runner = make_runner()
    result = runner.invoke(main, ["import", f"test_import_steps:{fn}", "--shapes", "x:B,3"])
    assert result.exit_code == 1, result.stdout + result.stderr
    lines, first = inspect.getsourcelines(sorts)
    line = first + next(i for i, t in enumerate(lines) if "jnp.sort" in t)
    col = lines[line - first].index("jnp.sort") + 1
    assert result.stderr.strip() == (f"{__file__}:{line}:{col}: error: cannot import JAX "
                                     "primitive 'sort': no listing op or decomposition for it")
    assert "bladec/" not in result.stderr and "Traceback" not in result.stderr
