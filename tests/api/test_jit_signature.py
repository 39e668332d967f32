"""``bladec.jit`` called as ``jax.jit`` is: static arguments, keywords, ``__wrapped__``,
``lower``, and what it says before the first call and when a dim changes."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec

# signatures, traces and values: each step at no limit in bladec's order alone
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")


def layers(x, w, n, act="tanh"):
    """``n`` and ``act`` are Python values: static."""
    f = jnp.tanh if act == "tanh" else jax.nn.relu
    for _ in range(n):
        x = f(x @ w)
    return jnp.sum(x, axis=1)


def _x(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


W = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32) * 0.3


def _close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_static_argnums_and_argnames_as_jax_jit() -> None:
    ref = jax.jit(layers, static_argnums=(2,), static_argnames=("act",))
    fn = bladec.jit(layers, static_argnums=(2,), static_argnames=("act",),
                    dynamic={"x": "B,_"})
    for n, act, b in ((1, "tanh", 3), (2, "tanh", 5), (2, "relu", 4), (1, "tanh", 7)):
        _close(fn(_x(b), W, n, act=act), ref(_x(b), W, n, act=act))
    assert fn.report().traces == 3          # (1, tanh), (2, tanh), (2, relu)
    # a static name gives its position too, as jax.jit infers it
    by_name = bladec.jit(layers, static_argnames=("n", "act"))
    ref = jax.jit(layers, static_argnames=("n", "act"))
    _close(by_name(_x(3), W, 2), ref(_x(3), W, 2))
    _close(by_name(_x(3), W, n=2, act="relu"), ref(_x(3), W, n=2, act="relu"))


def test_keyword_arguments_as_jax_jit() -> None:
    def step(params, x, lr=0.1, *, scale):
        loss = lambda p: jnp.sum(jnp.tanh(x @ p["w"])) * scale
        g = jax.grad(loss)(params)
        return {"w": params["w"] - lr * g["w"]}
    params = {"w": W}
    fn = bladec.jit(step, dynamic={"x": "B,_"})
    for kw in ({"scale": 2.0}, {"lr": 0.5, "scale": 1.0}):
        _close(fn(params, x=_x(4), **kw)["w"], jax.jit(step)(params, x=_x(4), **kw)["w"])
    _close(fn(params, _x(6), 0.3, scale=1.5)["w"], jax.jit(step)(params, _x(6), 0.3,
                                                               scale=1.5)["w"])
    # keywords name the listing's inputs; dynamic and donation name them too
    assert "%scale" in fn.listing
    with pytest.raises(bladec.BladecError, match="missing a required argument: 'scale'"):
        fn(params, _x(4))


def test_donation_by_name_and_by_keyword() -> None:
    def f(a, b):
        return a * 2.0 + b
    fn = bladec.jit(f, donate_argnames="a")
    a = jax.device_put(np.ones(4, np.float32))
    fn(b=np.ones(4, np.float32), a=a)
    assert a.is_deleted()


def test_static_argument_errors_are_one_line() -> None:
    with pytest.raises(bladec.BladecError, match="static_argnums .4. out of range"):
        bladec.jit(layers, static_argnums=4)
    with pytest.raises(bladec.BladecError, match="static_argnames names 'm'"):
        bladec.jit(layers, static_argnames="m")
    fn = bladec.jit(layers, static_argnums=2)
    with pytest.raises(bladec.BladecError, match="static argument 'n' is a list") as info:
        fn(_x(2), W, [1])
    assert "\n" not in str(info.value)


def test_wrapped_and_named_as_the_function() -> None:
    fn = bladec.jit(layers)
    assert fn.__wrapped__ is layers and fn.__name__ == "layers"
    assert fn.__doc__ == layers.__doc__
    assert functools.partial(fn, w=W) is not None


def test_before_the_first_call() -> None:
    fn = bladec.jit(layers, static_argnums=2)
    assert not hasattr(fn, "listing")
    with pytest.raises(bladec.BladecError, match="has not been called yet: no step"):
        fn.report()


def test_lower_gives_the_optimized_listing_of_those_arguments() -> None:
    fn = bladec.jit(layers, static_argnums=2, dynamic={"x": "B,_"})
    one, two = fn.lower(_x(3), W, 1), fn.lower(_x(3), W, 2)
    assert "func.func @main" in one.as_text() and str(two) == two.as_text()
    assert one.as_text().count("tanh(") == 1 and two.as_text().count("tanh(") == 2
    assert "remat.plan" in one.as_text()              # optimized: what runs
    assert fn.report().steps == 0                      # nothing ran
    _close(fn(_x(5), W, 2), layers(_x(5), W, 2))
    assert fn.listing == two.as_text()                 # the same trace, reused
    assert fn.report().traces == 2


def test_a_changed_feature_dim_is_named_by_its_size() -> None:
    """Found from the calls: a dim that changes where the function can not take it is
    traced at the call's own shapes, so the error names sizes, not made-up symbols."""
    fn = bladec.jit(lambda x, w: x @ w)
    fn(_x(3), W)
    fn(_x(5), W)
    with pytest.raises(bladec.BladecError) as info:
        fn(np.ones((5, 6), np.float32), W)
    text = str(info.value)
    assert "(6,) and (8,)" in text and "D0" not in text and "D1" not in text
    assert "\n" not in text


def test_errors_name_the_given_dims() -> None:
    fn = bladec.jit(lambda x, w: x @ w, dynamic={"x": "batch,_"},
                    ranges={"batch": (1, 4)})
    with pytest.raises(bladec.BladecError, match=r"\bbatch=5 is outside") as info:
        fn(_x(5), W)
    assert "S0" not in str(info.value)


def test_as_a_method() -> None:
    class Layer:
        def __init__(self, scale: float) -> None:
            self.scale = scale

        @functools.partial(bladec.jit, static_argnums=0)   # self: static, as for jax.jit
        def __call__(self, x):
            return jnp.tanh(x) * self.scale

    _close(Layer(2.0)(_x(3)), jnp.tanh(_x(3)) * 2.0)
    _close(Layer(3.0)(_x(3)), jnp.tanh(_x(3)) * 3.0)   # another instance: another trace
