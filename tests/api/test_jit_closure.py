"""``bladec.jit`` of functions that close over constant arrays: the arrays become inputs
of the listing (fills stay constants), as ``jax.jit`` passes them to its executable."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec
from bladec.frontend.jax_import import trace

# closures, traces and values: each step at no limit in bladec's order alone
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

RNG = np.random.default_rng(5)
W = RNG.standard_normal((16, 16)).astype(np.float32)
B = jnp.asarray(RNG.standard_normal(16).astype(np.float32))   # a device array
IDS = np.array([3, 0, 7, 7, 1], np.int32)


def _close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def layer(x):
    return jnp.tanh(x @ W + B) * jnp.full((16,), 0.5, np.float32)


def test_a_closure_over_a_16x16_constant_as_jax_jit() -> None:
    fn = bladec.jit(layer)
    for n in (3, 5, 9):
        x = RNG.standard_normal((n, 16)).astype(np.float32)
        _close(fn(x), jax.jit(layer)(x))
    text = fn.listing
    assert "%const0: tensor<16x16>" in text and "%const1: tensor<16>" in text
    assert "%const2" not in text               # the fill stays a constant
    assert fn.report().traces == 2


def test_a_closure_inside_a_gradient_and_a_loop() -> None:
    def loss(p, x):
        h = x
        for _ in range(2):
            h = jnp.tanh(h @ p + W)             # the same closed-over array twice
        return jnp.sum(h ** 2)

    def step(p, x):
        value, g = jax.value_and_grad(loss)(p, x)
        return value, p - 0.1 * g
    fn = bladec.jit(step, dynamic={"x": "_,_"})
    p, x = RNG.standard_normal((16, 16)).astype(np.float32), np.eye(16, dtype=np.float32)
    got, want = fn(p, x), jax.jit(step)(p, x)
    _close(got[0], want[0])
    _close(got[1], want[1])
    assert fn.listing.count("%const") == fn.listing.count("%const0")   # captured once


def test_closed_over_indices() -> None:
    def pick(x):
        return x[IDS] * 2.0
    fn = bladec.jit(pick, dynamic={"x": "_,N"})
    for n in (6, 3):
        x = RNG.standard_normal((8, n)).astype(np.float32)
        _close(fn(x), jax.jit(pick)(x))


def test_the_importer_alone_refuses_them_with_a_reason() -> None:
    spec = jax.ShapeDtypeStruct((2, 16), np.float32)
    with pytest.raises(bladec.BladecError, match="closes over a non-uniform constant") as info:
        trace(layer, [spec])
    assert info.value.loc.file.endswith("test_jit_closure.py")   # the line that reads it
    imported = trace(layer, [spec], capture=True)
    assert set(imported.constants) == {"%const0", "%const1"}
    np.testing.assert_array_equal(imported.constants["%const0"], W)
