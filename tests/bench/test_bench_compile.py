"""benchmarks/bench_compile.py: its distinct-kernel count on HLO text and on a real
executable; the benchmark itself runs the Llama step (`python benchmarks/bench_compile.py`)."""
from __future__ import annotations

import pytest


jax = pytest.importorskip("jax")
from benchmarks import bench_compile as bench  # noqa: E402

HLO = """HloModule m

%fused_computation (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  ROOT %neg.1 = f32[4]{0} negate(f32[4]{0} %param_0), metadata={op_name="a"}
}

%fused_computation.1 (param_0.1: f32[4]) -> f32[4] {
  %param_0.1 = f32[4]{0} parameter(0)
  ROOT %neg.2 = f32[4]{0} negate(f32[4]{0} %param_0.1), metadata={op_name="b"}
}

%fused_computation.2 (param_0.2: f32[4]) -> f32[4] {
  %param_0.2 = f32[4]{0} parameter(0)
  ROOT %exp.3 = f32[4]{0} exponential(f32[4]{0} %param_0.2)
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %fusion = f32[4]{0} fusion(f32[4]{0} %p), kind=kLoop, calls=%fused_computation
}
"""


def test_same_bodies_under_other_names_are_one_kernel():
    assert bench.fused_kernels(HLO) == (3, 2)


def test_counts_the_kernels_of_a_compiled_executable():
    def f(x):  # two separate elementwise chains joined by a reduction: at least one fusion
        return jax.numpy.sum(jax.numpy.exp(x) * 2.0) + jax.numpy.tanh(x)
    text = jax.jit(f).lower(jax.numpy.ones((64, 64))).compile().as_text()
    total, distinct = bench.fused_kernels(text)
    assert total >= 1 and 1 <= distinct <= total
