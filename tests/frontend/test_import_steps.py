"""Training steps as users write them, through ``bladec import`` and ``bladec run``.

The smallest real loss, ``jnp.mean`` of a dynamic batch under ``jax.value_and_grad``,
divides by a dim JAX hands over as ``dim_as_value``; the listing reads it with
``dim_size``. Each step here is imported from the command line, run, and compared with
calling the JAX function directly.
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import bladec
from bladec.cli import main
from bladec.frontend import trace
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

from tests.support.clirunner import make_runner

# values only: each step at no limit in bladec's order alone (19.3 -> 13.0 s of CPU)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

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
    args = (["import", f"{__name__}:mean_step_spec"] if form == "spec" else
            ["import", f"{__name__}:mean_step", "--shapes", "w:8,4;x:B,8"])
    result = runner.invoke(main, args + ["-o", str(listing)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "dim_size(%x)" in listing.read_text()
    w, x = _args(6)
    np.savez(tmp_path / "in.npz", w=w, x=x)
    loss, grad = jax.jit(mean_step)(w, x)   # op by op: 7 executables compiled
    for extra in ([], ["--mem-limit", "1GiB", "--backend", "numpy"]):
        result = runner.invoke(main, ["run", str(listing), "--inputs", str(tmp_path / "in.npz"),
                                      "--outputs", str(tmp_path / "out.npz")] + extra)
        assert result.exit_code == 0, result.stdout + result.stderr
        got = np.load(tmp_path / "out.npz")
        np.testing.assert_allclose(got["out0"], np.asarray(loss), rtol=1e-6)
        np.testing.assert_allclose(got["out1"], np.asarray(grad), rtol=1e-5, atol=1e-7)


def test_dim_size_is_verified():
    _refused([
        ("func.func @main(%a: tensor<f32>) {\n  %n = dim_size(%a) {dim = 0} -> tensor<i32>\n"
         "  return %n\n}\n", "has no dim to read"),
        ("func.func @main(%a: tensor<4x?>) {\n  %n = dim_size(%a) {dim = 2} -> tensor<i32>\n"
         "  return %n\n}\n", "out of range"),
        ("func.func @main(%a: tensor<4x?>) {\n  %n = dim_size(%a) {dim = 1} -> tensor<f32>\n"
         "  return %n\n}\n", "must be i32 or i64"),
    ])


def _refused(cases: list[tuple[str, str]]) -> None:
    from bladec.errors import BladecError
    from bladec.parse import parse_module
    from bladec.verify import verify
    for text, message in cases:
        with pytest.raises(BladecError, match=message):
            verify(parse_module(text))


def _one(op: str, result: str, args: str = "%a: tensor<4x?>") -> str:
    return f"func.func @main({args}) {{\n  {op} -> {result}\n  return %r\n}}\n"


def test_new_ops_are_verified():
    """The shape rules of the importer's ops refuse what JAX would not run."""
    two = "%a: tensor<4x5>, %i: tensor<4x1xi32>"
    _refused([
        (_one("%r = erf(%a)", "tensor<4x?xi32>", "%a: tensor<4x?xi32>"), "needs a float type"),
        (_one("%r = conv(%a, %a) {lhs_spec = [0, 1], rhs_spec = [0, 1], out_spec = [0, 0]}",
              "tensor<4x?>"), "must be a permutation"),
        (_one("%r = reduce_window(%a) {window = [2, 9], kind = \"max\"}", "tensor<3x?>",
              "%a: tensor<4x5>"), "does not fit"),
        (_one("%r = reverse(%a) {dims = [0, 0]}", "tensor<4x?>"), "repeated"),
        (_one("%r = round(%a) {mode = \"up\"}", "tensor<4x?>"), "mode must be one of"),
        (_one("%r = rem(%a, %a)", "tensor<4x?xi1>", "%a: tensor<4x?xi1>"), "not defined on i1"),
        (_one("%r = argmax(%a) {dim = 2}", "tensor<4xi32>"), "out of range"),
        (_one("%r = argmax(%a) {dim = 1}", "tensor<4>"), "must be i32 or i64"),
        (_one("%r = cumulative(%a) {dim = 0, kind = \"mean\"}", "tensor<4x?>"),
         "kind must be one of"),
        (_one("%r = sort(%a) {dim = 0, num_keys = 2}", "tensor<4x?>"), "num_keys must be 1 to 1"),
        (_one("%r, %j = top_k(%a) {k = 9}", "tensor<4x9>, tensor<4x9xi32>", "%a: tensor<4x5>"),
         "at least k|least"),
        (_one("%r = gather_slices(%a, %i) {offset_dims = [], collapsed_slice_dims = [1], "
              "start_index_map = [1], slice_sizes = [1, 2]}", "tensor<4>", two),
         "slice size must be 1"),
        (_one("%r = gather_slices(%a, %i) {offset_dims = [1], start_index_map = [0, 1], "
              "slice_sizes = [1, 5]}", "tensor<4x1x5>", two), "index vector"),
        (_one("%r = scatter_slices(%a, %i, %a) {update_window_dims = [1], "
              "inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], kind = "
              "\"pow\"}", "tensor<4x5>", two), "kind must be one of"),
    ])


# -- primitive coverage: each family against JAX on both backends ------------------------

def special_functions(x, n):
    """Exact GELU (erfc), softplus (log1p), the special functions, rounding, remainders,
    and the jax.nn activations (custom_jvp bodies to inline)."""
    a = jnp.abs(x) + 0.5
    return (jax.scipy.special.erf(x), jax.scipy.special.erfc(x), jax.lax.erf_inv(jnp.tanh(x)),
            jax.lax.lgamma(a), jax.lax.digamma(a), jnp.log1p(a), jnp.expm1(x),
            jnp.floor(3 * x), jnp.ceil(3 * x), jnp.round(3 * x), jax.lax.round(3 * x),
            jnp.fmod(x, 0.3), x % 0.7, n % 3, jax.lax.rem(n, n - 2), jnp.sign(x),
            jnp.isfinite(x / a), jnp.clip(n, -2, 5),
            jax.nn.gelu(x, approximate=False), jax.nn.gelu(x), jax.nn.softplus(x),
            jax.nn.relu(x), jax.nn.silu(x),
            jax.grad(lambda v: jnp.sum(jax.nn.gelu(v, approximate=False) + jnp.log1p(v * v)))(x))


def selections(x, n):
    """arg max/min, the cumulative scans and their gradients, sorts, argsort, top_k."""
    return (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.cumsum(x, 1), jnp.cumprod(x, 0),
            jax.lax.cummax(x, 1, reverse=True), jax.lax.cummin(n, 0),
            jax.lax.cumlogsumexp(x, 1), jnp.sort(x, 1), jnp.argsort(x, axis=0),
            jax.lax.top_k(x, 2), jnp.sort(n, 0),
            jax.grad(lambda v: jnp.sum(jnp.cumsum(v, 1) ** 2 + jax.lax.cummax(v, 1)))(x))


def indexing(x, n):
    """take_along_axis (a gather with batching dims), x[rows, cols], every .at[] update,
    the gradients of top_k, of a strided slice and of a cross-entropy, dynamic slices and
    updates at computed (out-of-range: clamped) starts."""
    rows = n[:, 0]
    cols = n[:, 1:2]
    return (jnp.take_along_axis(x, cols, axis=1), x.at[rows].set(1.0), x.at[rows, 2].max(3.0),
            x.at[rows].mul(2.0), x.at[:, 1].min(-1.0), x[jnp.arange(x.shape[0]), cols[:, 0]],
            x.at[jnp.arange(x.shape[0]), cols[:, 0]].add(5.0),
            jax.grad(lambda v: jnp.sum(jax.lax.top_k(v, 2)[0] ** 2))(x),
            jax.grad(lambda v: jnp.sum(v[:, ::2] ** 2))(x),
            jax.grad(lambda v: -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(v), cols,
                                                             axis=1)))(x),
            jax.lax.dynamic_slice(x, (n[0, 0], 1), (1, 2)), jax.lax.dynamic_slice(x, (0, 2), (1, 3)),
            jax.lax.dynamic_update_slice(x, jnp.ones((1, 2), F32), (n[0, 1], 3)))


def control(x, n):
    """cond and switch (every branch, selected), scan forward and reversed with a constant
    and its gradient (an RNN over a static length), fori_loop, checkpoint_name and
    checkpoint (inlined)."""
    from jax.ad_checkpoint import checkpoint_name
    w = jnp.full((5, 5), 0.1, F32) + jnp.eye(5, dtype=F32)

    def rnn(h0, xs):
        def cell(h, v):
            h = jnp.tanh(h @ w + v)
            return h, checkpoint_name(h * 2.0, "h")
        return jax.lax.scan(cell, h0, xs)

    xs = jnp.transpose(x)[:, :, None] * jnp.ones((5, 1, 5), F32)  # [5 steps, B, 5]
    h, ys = rnn(x, xs)
    back, rys = jax.lax.scan(lambda c, v: (c * 0.5 + v, c - v), x, xs, reverse=True)
    loss = lambda v: jnp.sum(jax.checkpoint(rnn)(v, xs)[1] ** 2)
    return (jax.lax.cond(jnp.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x),
            jax.lax.switch(n[0, 0], [lambda v: v, lambda v: v * 3.0, jnp.sin], x),
            h, ys, back, rys, jax.grad(loss)(x),
            jax.lax.fori_loop(0, 3, lambda i, v: v * 0.5 + i, x))


def windows(x, n):
    """A conv net over a dynamic height and width ([B, 5] read as a 1-channel image):
    'same' convolutions (one dilated and depthwise), max and average pooling (stride 1),
    and the gradients of all of them (convolutions with swapped dims, kernel flips
    (rev), select_and_scatter_add)."""
    k = jnp.linspace(-1.0, 1.0, 9 * 4, dtype=F32).reshape(3, 3, 1, 4)
    kd = jnp.linspace(0.5, -0.5, 9 * 4, dtype=F32).reshape(3, 3, 1, 4)
    spec = ("NHWC", "HWIO", "NHWC")

    def loss(img, k, kd):
        y = jax.nn.relu(jax.lax.conv_general_dilated(img, k, (1, 1), "SAME",
                                                     dimension_numbers=spec))
        z = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        a = jax.lax.reduce_window(z, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") / 4
        d = jax.lax.conv_general_dilated(a, kd, (1, 1), "SAME", rhs_dilation=(2, 2),
                                         feature_group_count=4, dimension_numbers=spec)
        return jnp.mean(d ** 2)
    img = jnp.stack([x, x * 0.5], axis=0)[..., None]              # [2, B, 5, 1]
    return jax.value_and_grad(loss, argnums=(0, 1, 2))(img, k, kd), jnp.flip(n, 0)


COVERAGE = {"special_functions": special_functions, "selections": selections,
            "indexing": indexing, "control": control, "windows": windows}


@pytest.mark.parametrize("backend", [  # on NumPy: `make bench` (issue 36: 5.5 s; the NumPy
    # backend runs imported steps in test_mean_over_dynamic_dims_runs_like_jax)
    pytest.param(NumpyBackend, id="numpy", marks=pytest.mark.slow),
    pytest.param(JaxBackend, id="jax")])
@pytest.mark.parametrize("name", COVERAGE)
def test_primitive_families_run_like_jax(name, backend):
    fn = COVERAGE[name]
    imp = trace(fn, (jax.ShapeDtypeStruct((B, 5), F32), jax.ShapeDtypeStruct((B, 5), jnp.int32)))
    executor = Executor(imp.module, backend())
    for b in ((2, 4) if name == "windows" else (1, 4)):  # 'valid' pooling needs 2 rows
        rng = np.random.default_rng(b)
        x = rng.standard_normal((b, 5)).astype(np.float32)
        x[0, :4] = [0.5, -2.5, 1.0, 1.0]  # ties: rounding to even, argmax/sort/top_k order
        args = (x, rng.integers(-9, 9, (b, 5)).astype(np.int32))  # some ids out of range
        out, _ = executor.run(imp.flatten_inputs(*args))
        got = jax.tree_util.tree_leaves(imp.unflatten_outputs(out))
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


# -- errors point at the user's code -----------------------------------------------------

def bit_counts(x):
    y = x * 3
    return jax.lax.population_count(y)  # the unsupported primitive: this line is reported


def nested_bit_counts(x):
    return jax.jit(lambda v: bit_counts(v) + 1)(x)  # the error is inside two jitted calls


@pytest.mark.parametrize("fn", ["bit_counts", "nested_bit_counts"])
def test_unsupported_primitive_names_the_users_line(fn):
    import inspect
    runner = make_runner()
    result = runner.invoke(main, ["import", f"{__name__}:{fn}", "--shapes", "x:B,3:i32"])
    assert result.exit_code == 1, result.stdout + result.stderr
    lines, first = inspect.getsourcelines(bit_counts)
    line = first + next(i for i, t in enumerate(lines) if "population_count" in t)
    col = lines[line - first].index("jax.lax.population_count") + 1
    assert result.stderr.strip() == (f"{__file__}:{line}:{col}: error: cannot import JAX "
                                     "primitive 'population_count': no listing op or "
                                     "decomposition for it")
    # no frame of bladec's own code is named (the package's folder, not the substring
    # "bladec/": a checkout's own folder may be called so)
    package = os.path.dirname(bladec.__file__)
    assert package not in result.stderr and "Traceback" not in result.stderr


# -- donation ---------------------------------------------------------------------------

def sgd(w, x, lr):
    loss, g = jax.value_and_grad(mean_loss)(w, x)
    return loss, w - lr * g


sgd_donating = jax.jit(sgd, donate_argnums=(0,))


def sgd_spec():
    """The spec-level equivalent of ``jax.jit(sgd, donate_argnums=(0,))``."""
    return {"fn": sgd, "donate_argnums": (0,),
            "arg_specs": (jax.ShapeDtypeStruct((8, 4), F32), jax.ShapeDtypeStruct((B, 8), F32),
                          jax.ShapeDtypeStruct((), F32))}


@pytest.mark.parametrize("target", ["sgd_donating", "sgd_spec"])
def test_donated_arguments_are_marked(tmp_path, target):
    runner = make_runner()
    listing = tmp_path / "sgd.mlir"
    shapes = ["--shapes", "w:8,4;x:B,8;lr::f32"] if target == "sgd_donating" else []
    result = runner.invoke(main, ["import", f"{__name__}:{target}", *shapes,
                                  "-o", str(listing)])
    assert result.exit_code == 0, result.stdout + result.stderr
    text = listing.read_text()
    assert "%w: tensor<8x4> {donate = true}, %x: tensor<?x8, [@S0, @C8]>, %lr: tensor<f32>)" in text
    assert "dim_size(%x)" in text          # the batch is read off an input that stays
    w, x = _args(5)
    np.savez(tmp_path / "in.npz", w=w, x=x, lr=np.float32(0.1))
    result = runner.invoke(main, ["run", str(listing), "--inputs", str(tmp_path / "in.npz"),
                                  "--outputs", str(tmp_path / "out.npz")])
    assert result.exit_code == 0, result.stdout + result.stderr
    got = np.load(tmp_path / "out.npz")
    loss, new_w = jax.jit(sgd)(w, x, np.float32(0.1))   # op by op: 8 executables
    np.testing.assert_allclose(got["out0"], np.asarray(loss), rtol=1e-6)
    np.testing.assert_allclose(got["out1"], np.asarray(new_w), rtol=1e-6, atol=1e-7)


def test_donate_argnums_out_of_range():
    from bladec.errors import BladecError
    with pytest.raises(BladecError, match=r"donate_argnums \[3\] out of range"):
        trace(sgd, sgd_spec()["arg_specs"], donate_argnums=3)


def branches_on_the_batch(x):
    if x.shape[0] > 3:  # not decidable for a symbolic batch: the error points here
        return x * 2.0
    return x


def test_a_function_that_does_not_trace_points_at_the_users_line():
    import inspect
    result = make_runner().invoke(main, ["import", f"{__name__}:branches_on_the_batch",
                                         "--shapes", "x:B,3"])
    assert result.exit_code == 1, result.stdout + result.stderr
    lines, first = inspect.getsourcelines(branches_on_the_batch)
    assert result.stderr.startswith(f"{__file__}:{first + 1}:")
    assert "error: tracing branches_on_the_batch failed: " in result.stderr
    assert "Traceback" not in result.stderr
