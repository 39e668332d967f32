"""benchmarks/bench_jit.py: what its paired rounds rely on."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from benchmarks import bench_jit


def test_a_fresh_step_is_a_new_function_that_jax_compiles_again() -> None:
    """``--paired`` compiles the step once per round: each round's function must be a
    new object (JAX caches tracing and executables by the function) doing the same."""
    a, b = bench_jit.fresh_step(), bench_jit.fresh_step()
    assert a is not b and a is not bench_jit.step
    assert a.__code__ is bench_jit.step.__code__
    traced = []

    def probe(x):
        traced.append(1)
        return jnp.sin(x)
    fresh = bench_jit.fresh_step(probe)
    jax.jit(probe).lower(1.0)
    jax.jit(fresh).lower(1.0)
    assert len(traced) == 2   # traced again: nothing cached for the new object
