"""``bladec.jit`` under JAX's transforms: ``jax.grad`` and ``jax.value_and_grad`` through a
custom VJP whose backward is bladec's own ``grad`` pass, under the same limit; ``jax.vmap``
and ``jax.jit`` around it are one-line errors that say what to do."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec

RNG = np.random.default_rng(11)


def init(width: int = 32) -> dict:
    return {"w1": RNG.standard_normal((16, width)).astype(np.float32) * 0.3,
            "b1": np.zeros(width, np.float32),
            "w2": RNG.standard_normal((width, 4)).astype(np.float32) * 0.3}


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.sum((h @ p["w2"] - y) ** 2) * 0.1


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    return (RNG.standard_normal((n, 16)).astype(np.float32),
            RNG.standard_normal((n, 4)).astype(np.float32))


def _close(got, want, tol: float = 1e-5) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def deep(p, x):
    h = x
    for w in p:
        h = jnp.tanh(h @ w)
    return jnp.sum(h ** 2) * 0.01


def test_grad_matches_jax_under_a_limit(monkeypatch) -> None:
    """Six layers at batch 512: the backward (the ``grad`` pass of the same listing)
    fits 0.8x of its unconstrained device peak by evicting, and matches jax.grad.
    Planned as for a device with memory of its own (BLADEC_ONE_MEMORY=0, as a GPU is):
    on a CPU device host copies count too, and recomputes alone do not reach 0.8x here."""
    monkeypatch.setenv("BLADEC_ONE_MEMORY", "0")
    p = [jax.device_put(RNG.standard_normal((64, 64)).astype(np.float32) * 0.2)
         for _ in range(6)]
    x = RNG.standard_normal((512, 64)).astype(np.float32)
    free = bladec.jit(deep, dynamic={"x": "B,_"})
    jax.grad(free)(p, x)
    limit = int(0.8 * free.report().peak_bytes)
    fn = bladec.jit(deep, dynamic={"x": "B,_"}, mem_limit=limit)
    # the references jitted: eagerly, each primitive was compiled on its own (issue 36)
    _close(jax.grad(fn)(p, x), jax.jit(jax.grad(deep))(p, x))
    r = fn.report()
    assert r.peak_bytes <= limit and r.binding == {"B": 512} and r.evictions > 0
    value, grads = jax.value_and_grad(fn, argnums=(0, 1))(p, x[:500])
    want_value, want_grads = jax.jit(jax.value_and_grad(deep, argnums=(0, 1)))(p, x[:500])
    _close(value, want_value)
    _close(grads, want_grads)                     # by the data too (a dynamic input)
    assert fn.report().peak_bytes <= limit and fn.report().traces == 1
    assert fn.report().total_compilations >= 2    # the backward's count too


@pytest.mark.usefixtures("one_order_at_no_limit")   # values and traces only
def test_grad_of_a_function_with_several_outputs_and_statics() -> None:
    def f(p, x, scale, mode):
        h = jnp.tanh(x @ p["w1"]) * scale
        aux = jnp.argmax(h, axis=1)               # an integer output: no cotangent
        return (jnp.sum(h ** 2) if mode == "sq" else jnp.sum(h)), aux
    fn = bladec.jit(f, static_argnames="mode")
    p, (x, _) = init(), _data(5)
    for mode in ("sq", "lin"):
        got = jax.grad(lambda q: fn(q, x, 2.0, mode=mode)[0])(p)
        _close(got, jax.jit(jax.grad(lambda q: f(q, x, 2.0, mode)[0]))(p))   # (jitted:
        # eagerly each primitive compiled on its own)
    # a gradient by a keyword argument and through a closure
    w = RNG.standard_normal((16, 16)).astype(np.float32)
    g = bladec.jit(lambda x, *, s: jnp.sum(jnp.tanh(x @ w) * s))
    _close(jax.grad(lambda s: g(x, s=s))(1.5), jax.jit(jax.grad(
        lambda s: jnp.sum(jnp.tanh(x @ w) * s)))(1.5))


@pytest.mark.usefixtures("one_order_at_no_limit")   # values and traces only
def test_a_training_loop_with_grad_outside() -> None:
    fn = bladec.jit(loss, dynamic={"x": "B,_", "y": "B,_"})
    # the reference's gradient and both updates jitted (the same update on both sides):
    # eagerly, each primitive was compiled on its own (issue 36)
    grad = jax.jit(jax.grad(loss))
    update = jax.jit(lambda p, g: jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g))
    p = q = init()
    for n in (8, 12, 8):
        x, y = _data(n)
        gp, gq = jax.grad(fn)(p, x, y), grad(q, x, y)
        p, q = update(p, gp), update(q, gq)
    _close(p, q)
    assert fn.report().traces == 1


def test_vmap_and_jit_around_it_are_one_line_errors() -> None:
    fn = bladec.jit(lambda x: jnp.sum(jnp.tanh(x)))
    with pytest.raises(bladec.BladecError, match="jax.vmap of the bladec.jit function") as a:
        jax.vmap(fn)(np.ones((3, 4), np.float32))
    with pytest.raises(bladec.BladecError, match="inside jax.jit") as b:
        jax.jit(fn)(np.ones(4, np.float32))
    with pytest.raises(bladec.BladecError, match="inside jax.jit"):
        jax.jit(jax.grad(fn))(np.ones(4, np.float32))
    for info in (a, b):
        assert "\n" not in str(info.value)
