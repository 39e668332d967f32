"""``bladec.jit``'s hot path (bladec/runtime/dispatch.py): a call at an argument
signature already run, whose run is one executable, skips the engine (issue 32: the
host work of a small step); it must answer as the general path does."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec
from bladec.runtime.engine import Engine

from tests.api.test_jit import _params, _rows, sgd

# fresh bladec.jit functions per test compile the same steps:
# XLA compiles each once (issue 36; tests/support/compileonce.py)
pytestmark = pytest.mark.usefixtures("compile_once")


def _close(got, want) -> None:
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(a, jax.Array) and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.fixture
def engine_calls(monkeypatch) -> list[int]:
    """Each call that went through the engine (the general path)."""
    calls: list[int] = []
    real = Engine.call
    monkeypatch.setattr(Engine, "call", lambda self, *a, **k: calls.append(1) or
                        real(self, *a, **k))
    return calls


def test_repeated_calls_skip_the_engine_and_match_jax_jit(engine_calls) -> None:
    fn = bladec.jit(sgd, dynamic={"x": "N,_"})
    params = jax.device_put(_params())
    fn(params, _rows(5), 0.1)
    first = fn.report()
    for seed in (1, 2):
        _close(fn(params, _rows(5, seed), 0.1), jax.jit(sgd)(params, _rows(5, seed), 0.1))
    assert len(engine_calls) == 1
    r = fn.report()
    assert r.steps == 3 and r.compilations == 0 and r.binding == {"N": 5}
    assert r.peak_bytes == first.peak_bytes > 0 and r.segments == 1
    assert r.total_compilations == first.total_compilations and r.buckets == 1
    _close(fn(params, _rows(7), 0.1), jax.jit(sgd)(params, _rows(7), 0.1))   # new shapes
    assert len(engine_calls) == 2 and fn.report().binding == {"N": 7}


def test_keywords_statics_and_closures_on_the_hot_path(engine_calls) -> None:
    table = jnp.asarray(np.random.default_rng(4).standard_normal((8, 8)), jnp.float32)

    def f(x, scale, *, shift):
        return jnp.tanh(x @ table) * scale + shift

    fn = bladec.jit(f, static_argnames="scale")
    ref = jax.jit(f, static_argnames="scale")
    for seed in (0, 1, 2):
        x = _rows(5, seed)
        _close(fn(x, 2.0, shift=0.5), ref(x, 2.0, shift=0.5))
        _close(fn(x, scale=3.0, shift=1.5), ref(x, scale=3.0, shift=1.5))
    assert len(engine_calls) == 2   # one per static value; then the hot path


def test_donation_on_the_hot_path() -> None:
    fn = bladec.jit(sgd, dynamic={"x": "N,_"}, donate_argnums=0)
    for seed in (0, 1, 2):
        params = jax.device_put(_params())
        want = jax.jit(sgd)(jax.device_put(_params()), _rows(5, seed), 0.1)
        got = fn(params, _rows(5, seed), 0.1)
        assert all(p.is_deleted() for p in jax.tree_util.tree_leaves(params))
        _close(got, want)


def test_a_scalar_as_a_number_a_host_or_a_device_array(engine_calls) -> None:
    """One signature (a float32 scalar) however it is passed: one general call."""
    fn = bladec.jit(sgd, dynamic={"x": "N,_"})
    params = jax.device_put(_params())
    for lr in (0.5, np.float32(0.25), jnp.float32(0.125), np.asarray(2.0, np.float32)):
        _close(fn(params, _rows(5), lr), jax.jit(sgd)(params, _rows(5), lr))
    assert len(engine_calls) == 1


def test_a_deleted_argument_is_refused_as_before() -> None:
    """The executable refuses it before running; the general path then says why, and the
    next good call runs again."""
    fn = bladec.jit(sgd, dynamic={"x": "N,_"})
    params = jax.device_put(_params())
    fn(params, _rows(5), 0.1)
    fn(params, _rows(5), 0.1)
    gone = jax.device_put(_params())
    jax.tree_util.tree_leaves(gone)[0].delete()
    with pytest.raises(RuntimeError, match="deleted"):
        fn(gone, _rows(5), 0.1)
    _close(fn(params, _rows(5), 0.1), jax.jit(sgd)(params, _rows(5), 0.1))


def test_an_input_returned_as_it_is_comes_back_on_the_device() -> None:
    fn = bladec.jit(lambda x, y: (x, y * 2.0))
    for _ in range(3):
        x, y = fn(_rows(3), _rows(3, 1))
        assert isinstance(x, jax.Array) and isinstance(y, jax.Array)
        np.testing.assert_array_equal(np.asarray(x), _rows(3))
