"""The ``amp`` pass: contraction operands in bf16 (or f16) with f32 sums; casts shared and
fused; ``amp,grad`` trains with gradients within bf16 rounding of f32's."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.verify import verify

from tests.support.llamacase import LOSS, inputs
from tests.support.paths import SAMPLES

# values only: each step at no limit in bladec's order alone (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

TWO_DOTS = """\
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x8>, %v: tensor<8x8>, %h: tensor<?x8xbf16, [@S0, @C8]>) {
  %p = dot(%x, %w) -> tensor<?x8>
  %q = dot(%x, %v) -> tensor<?x8>
  %hw = convert(%h) {dtype = "f32"} -> tensor<?x8>
  %r = dot(%hw, %w) -> tensor<?x8>
  %s = add(%p, %q) -> tensor<?x8>
  %t = add(%s, %r) -> tensor<?x8>
  %loss = reduce(%t) {dims = [0, 1]} -> tensor<f32>
  return %loss
}
"""


def test_contractions_read_shared_low_copies_and_sum_in_f32():
    out = run_pipeline(parse_module(TWO_DOTS), parse_pipeline("amp"))
    ops = {r.name: op for op in out.main.ops for r in op.results}
    converts = [op for op in out.main.ops if op.name == "convert"]
    # one cast per value (x read by two dots, w by two), %hw read as the bf16 it widens
    assert sorted(op.operands[0] for op in converts) == ["%h", "%v", "%w", "%x"]
    assert ops["%p"].operands == ["%x.bf16", "%w.bf16"]
    assert ops["%q"].operands == ["%x.bf16", "%v.bf16"]
    assert ops["%r"].operands == ["%h", "%w.bf16"]
    assert all(ops[n].results[0].type.dtype == "f32" for n in ("%p", "%q", "%r", "%s"))
    text = format_module(out)
    again = parse_module(text)
    verify(again, runnable=True)
    assert format_module(again) == text


def test_amp_values_close_to_f32_on_both_backends():
    rng = np.random.default_rng(0)
    x = {"%x": rng.standard_normal((5, 8)).astype(np.float32),
         "%w": rng.standard_normal((8, 8)).astype(np.float32),
         "%v": rng.standard_normal((8, 8)).astype(np.float32),
         "%h": rng.standard_normal((5, 8)).astype(np.float32)}
    from bladec.runtime.backends.backend import numpy_dtype
    x["%h"] = x["%h"].astype(numpy_dtype("bf16"))
    plain = parse_module(TWO_DOTS)
    amp = run_pipeline(plain, parse_pipeline("amp"))
    want, _ = Executor(plain, NumpyBackend()).run(x)
    for backend in (NumpyBackend, JaxBackend):
        got, _ = Executor(amp, backend()).run(x)
        np.testing.assert_allclose(got["%loss"], want["%loss"], rtol=2e-2, atol=0.5)


@pytest.mark.parametrize("text, message", [
    ("func.func @main(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>) {\n"
     "  %c = dot(%a, %b) -> tensor<2x2>\n  return %c\n}\n", None),
    ("func.func @main(%a: tensor<2x3>, %b: tensor<3x2>) {\n"
     "  %c = dot(%a, %b) -> tensor<2x2xbf16>\n  return %c\n}\n", "element type f32"),
    ("func.func @main(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) {\n"
     "  %c = dot(%a, %b) -> tensor<2x2xi64>\n  return %c\n}\n", "element type i32"),
])
def test_a_contraction_may_sum_into_a_wider_float_only(text, message):
    module = parse_module(text, "in.mlir")
    if message is None:
        verify(module, runnable=True)
        a = np.ones((2, 3), dtype=np.float32)
        from bladec.runtime.backends.backend import numpy_dtype
        out, _ = Executor(module, JaxBackend()).run(
            {"%a": a.astype(numpy_dtype("bf16")), "%b": a.T.astype(numpy_dtype("bf16"))})
        assert out["%c"].dtype == np.float32 and out["%c"][0, 0] == 3.0
        return
    with pytest.raises(BladecError, match=message):
        verify(module)


def test_amp_grad_on_llama_is_within_bf16_rounding_of_f32():
    fwd = parse_module(LOSS.read_text())
    x = inputs(3, 10)
    f32, _ = Executor(run_pipeline(fwd, parse_pipeline("grad")), NumpyBackend()).run(x)
    for low, tol in (("bf16", 3e-2), ("f16", 5e-3)):
        train = run_pipeline(fwd, parse_pipeline(f"amp{{dtype={low}}},grad"))
        assert sum(op.name == "convert" for op in train.main.ops) > 20
        got, _ = Executor(train, NumpyBackend()).run(x)
        assert got["%loss"] == pytest.approx(float(f32["%loss"]), rel=tol)
        for k in f32:
            assert got[k].dtype == np.float32, k  # each gradient in its weight's type
            err = np.linalg.norm(got[k].astype(np.float64) - f32[k]) / np.linalg.norm(f32[k])
            assert err < tol, (low, k, err)


def test_amp_options_and_order():
    with pytest.raises(BladecError, match="dtype=f8"):
        parse_pipeline("amp{dtype=f8}")
    with pytest.raises(BladecError, match="'amp' after 'remat'"):
        parse_pipeline("remat,amp")


def test_large_low_precision_contraction_runs_on_jax_with_f32_sums():
    """XLA:CPU has no bf16 x bf16 -> f32 dot kernel for large operands; the backend
    widens the operands there, which gives the same numbers (bf16 products are exact in
    f32)."""
    from bladec.runtime.backends.backend import numpy_dtype
    text = ("func.func @main(%a: tensor<200x300xbf16>, %b: tensor<300x100xbf16>) {\n"
            "  %c = dot(%a, %b) -> tensor<200x100>\n  return %c\n}\n")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 300)).astype(numpy_dtype("bf16"))
    b = rng.standard_normal((300, 100)).astype(numpy_dtype("bf16"))
    want = a.astype(np.float64) @ b.astype(np.float64)
    for backend in (JaxBackend, NumpyBackend):
        out, _ = Executor(parse_module(text), backend()).run({"%a": a, "%b": b})
        assert out["%c"].dtype == np.float32
        np.testing.assert_allclose(out["%c"], want, rtol=1e-4, atol=1e-4)


def test_amp_rounds_on_jax_as_on_numpy():
    """XLA's excess precision would drop the f32 -> bf16 -> f32 round trip of the CPU
    path; the rounding must stay, so JAX computes what NumPy does, not the f32 result."""
    text = ("func.func @main(%a: tensor<64x300>, %b: tensor<300x64>) {\n"
            "  %c = dot(%a, %b) -> tensor<64x64>\n  return %c\n}\n")
    rng = np.random.default_rng(1)
    x = {"%a": rng.standard_normal((64, 300)).astype(np.float32),
         "%b": rng.standard_normal((300, 64)).astype(np.float32)}
    amp = run_pipeline(parse_module(text), parse_pipeline("amp"))
    exact = x["%a"].astype(np.float64) @ x["%b"].astype(np.float64)
    on_jax = Executor(amp, JaxBackend()).run(x)[0]["%c"]
    on_numpy = Executor(amp, NumpyBackend()).run(x)[0]["%c"]
    np.testing.assert_allclose(on_jax, on_numpy, rtol=1e-5, atol=1e-4)
    assert np.abs(on_jax - exact).max() > 1e-2  # bf16 operands: not the f32 product


def test_amp_keeps_the_mesh_and_each_cast_keeps_its_split():
    """On a sharded listing (samples/mlp-loss-sharded.mlir) a cast is
    split like the value it rounds, and the mesh stays (``-p amp,grad``)."""
    path = SAMPLES / "mlp-loss-sharded.mlir"
    module = run_pipeline(parse_module(path.read_text(), str(path)),
                          parse_pipeline("amp"))
    assert module.mesh is not None
    types = module.main.value_types()
    casts = [op for op in module.main.ops if op.name == "convert"]
    assert {op.operands[0] for op in casts} == {"%x", "%w1s", "%ag", "%w2"}
    for op in casts:
        assert op.results[0].type.sharding == types[op.operands[0]].sharding
    verify(run_pipeline(module, parse_pipeline("grad")))
