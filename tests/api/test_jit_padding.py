"""Padding that does not change the answer (issue 32, item 1): with ``pad``, reductions,
contractions and size reads over a padded dim ignore the padding (passes/mask.py), so a
function needs no mask of its own; what no rewrite makes exact is a located error."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec

from tests.support.order import one_order

RNG = np.random.default_rng(21)


@pytest.fixture(autouse=True, scope="module")
def _one_order_at_no_limit():
    """Each bucket's step at no limit in bladec's order only (tests.support.order): these
    tests check what padding computes, not which order holds less."""
    with one_order():
        yield


def _close(got, want, tol: float = 1e-5) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- the acceptance test: an MLP whose loss is an unmasked mean -------------------------
def init() -> dict:
    return {"w1": RNG.standard_normal((8, 32)).astype(np.float32) * 0.3,
            "b1": np.zeros(32, np.float32),
            "w2": RNG.standard_normal((32, 1)).astype(np.float32) * 0.3}


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)


def sgd(p, x, y):
    value, g = jax.value_and_grad(loss)(p, x, y)
    return value, jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)


def test_an_unmasked_mean_trains_as_unpadded_jax_jit() -> None:
    fn = bladec.jit(sgd, dynamic={"x": "B,_", "y": "B,_"}, pad={"B": 16})
    ref = jax.jit(sgd)
    p = q = init()
    buckets = set()
    for b in (7, 13, 32, 5, 9, 20, 3, 16, 11, 30):
        x = RNG.standard_normal((b, 8)).astype(np.float32)
        y = RNG.standard_normal((b, 1)).astype(np.float32)
        (l1, p), (l2, q) = fn(p, x, y), ref(q, x, y)
        _close(l1, l2)
        buckets.add(fn.report().binding["B"])
    _close(p, q)                      # 10 steps: the parameters within 1e-5
    assert buckets == {16, 32}        # padded: two shapes for ten sizes
    assert "%padding.true.S0" in fn.listing


# -- randomized: reductions over the padded dim ---------------------------------------
W = RNG.standard_normal((8, 8)).astype(np.float32) * 0.5

REDUCTIONS = {
    "sum": lambda x: jnp.sum(x, axis=0),
    "mean": lambda x: jnp.mean(x),
    "max": lambda x: jnp.max(x, axis=0),
    "min": lambda x: jnp.min(x),
    "softmax": lambda x: jax.nn.softmax(x, axis=0),
    "logsumexp": lambda x: jax.nn.logsumexp(x, axis=0),
    "var": lambda x: jnp.var(x, axis=0),
    "normalize": lambda x: (x - jnp.mean(x, 0)) / jnp.sqrt(jnp.var(x, 0) + 1e-5),
    "argmax": lambda x: jnp.argmax(x, axis=0),
    "argmin": lambda x: jnp.argmin(x[:, 0]),
    "cumsum": lambda x: jnp.cumsum(x, axis=0),
    "cummax_reverse": lambda x: jax.lax.cummax(x, axis=0, reverse=True),
    "sort": lambda x: jnp.sort(x, axis=0),
    "top_k": lambda x: jax.lax.top_k(x.T, 1)[0],
    "top_k_index": lambda x: jax.lax.top_k(x.T, 1)[1],
    "last_row": lambda x: x[-1],
    "size": lambda x: jnp.sum(x) / x.shape[0],
    "gram": lambda x: x.T @ x,
    "contract": lambda x: jnp.einsum("bi,bj->ij", x, jnp.tanh(x)),
    "flat": lambda x: jnp.sum(x.reshape(-1) ** 2) / x.size,
    "flat_max": lambda x: jnp.max(jnp.tanh(x).reshape(-1)),
    "prepend": lambda x: jnp.sum(jnp.concatenate([jnp.ones((1, 8)), x]), axis=0),
    "product": lambda x: jnp.prod(x[:, :2] * 0.5, axis=0),
    "any": lambda x: jnp.any(x > 2.5, axis=0),
}


def _make(names: list[str]):
    def f(x):
        h = jnp.exp(jnp.tanh(x @ W)) + 1.0     # zero padding rows become junk (2.0)
        return tuple(REDUCTIONS[n](h) for n in names)
    return f


@pytest.mark.parametrize("seed", [  # seeds 3-5: `make bench` (issue 36)
    *range(3), *(pytest.param(s, marks=pytest.mark.slow) for s in range(3, 6))])
def test_random_reductions_over_a_padded_dim(seed) -> None:
    rng = np.random.default_rng(seed)
    names = list(rng.choice(sorted(REDUCTIONS), size=5, replace=False))
    f = _make(names)
    fn = bladec.jit(f, dynamic={"x": "B,_"}, pad={"B": 8})
    for b in (3, 7, 13, 5):
        x = rng.standard_normal((b, 8)).astype(np.float32)
        got, want = fn(x), jax.jit(f)(x)
        for name, a, w in zip(names, got, want):
            assert a.dtype == w.dtype, name
            _close(a, w, 2e-5)
    assert fn.report().buckets == 2          # 3, 5 and 7 share one shape
    assert fn.report().binding == {"B": 8}       # the last, 5, padded


def test_a_shifted_slice_pads_the_symbol_the_analysis_keeps() -> None:
    """``x[1:]`` makes the analysis keep B-1 free (B = (B-1) + 1): padding B pads that
    one, the padding still at the end of both, and the report names it."""
    def f(x):
        h = jnp.exp(x) + 1.0
        return jnp.sum(h[1:] - h[:-1], axis=0), jnp.mean(h), h[-1]
    fn = bladec.jit(f, dynamic={"x": "B,_"}, pad={"B": 8})
    for b in (2, 5, 12):
        x = RNG.standard_normal((b, 3)).astype(np.float32)
        _close(fn(x), jax.jit(f)(x))
    assert fn.report().binding == {"B-1": 16}


def test_every_reduction_once() -> None:
    f = _make(sorted(REDUCTIONS))
    fn = bladec.jit(f, dynamic={"x": "B,_"}, pad={"B": 16})
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    for name, a, w in zip(sorted(REDUCTIONS), fn(x), jax.jit(f)(x)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(w), rtol=2e-5, atol=2e-5,
                                   err_msg=name)


def test_a_gradient_through_bladec_with_padding() -> None:
    fn = bladec.jit(loss, dynamic={"x": "B,_", "y": "B,_"}, pad={"B": 16})
    p = init()
    x = RNG.standard_normal((11, 8)).astype(np.float32)
    y = RNG.standard_normal((11, 1)).astype(np.float32)
    _close(jax.grad(fn)(p, x, y), jax.jit(jax.grad(loss))(p, x, y))   # (jitted: eagerly
    # each primitive was compiled on its own)
    assert fn.report().binding == {"B": 16}


# -- what can not be made exact -------------------------------------------------------
def flipped(x):
    return jnp.cumsum(jnp.flip(x, axis=0), axis=0)[0]


def test_what_no_rewrite_makes_exact_is_a_located_error() -> None:
    fn = bladec.jit(flipped, dynamic={"x": "B,_"}, pad={"B": 8})
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    with pytest.raises(bladec.BladecError, match=r"padding B changes the result: 'reverse' "
                                                 r"reverses padded dim 0") as info:
        fn(x)
    text = str(info.value)
    assert "test_jit_padding.py:" in text and "pad_unsafe=True" in text and "\n" not in text
    assert "S0" not in text
    # asked for: the padded result, which differs from the unpadded one
    unsafe = bladec.jit(flipped, dynamic={"x": "B,_"}, pad={"B": 8}, pad_unsafe=True)
    want = jax.jit(flipped)(x)   # (jitted: eagerly each primitive compiled on its own)
    assert not np.allclose(np.asarray(unsafe(x)), np.asarray(want))
    # without padding the same function runs and is exact
    _close(bladec.jit(flipped, dynamic={"x": "B,_"})(x), want)


def attention(q, k, v):
    """Scores over a padded key dim, softmax, then a contraction over it: no mask."""
    s = jnp.einsum("qd,kd->qk", q, k) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(s, axis=-1) @ v


def test_attention_over_padded_keys_and_queries() -> None:
    fn = bladec.jit(attention, dynamic={"q": "Q,_", "k": "K,_", "v": "K,_"}, pad=8)
    # the references jitted: eagerly, each primitive was compiled on its own (issue 36)
    want = jax.jit(attention)
    for nq, nk in ((3, 5), (7, 2), (9, 11)):
        q, k, v = (RNG.standard_normal((n, 4)).astype(np.float32) for n in (nq, nk, nk))
        _close(fn(q, k, v), want(q, k, v))
    # and its gradient by every input, with outputs of a padded dim (their cotangents
    # padded with zeros)
    q, k, v = (RNG.standard_normal((n, 4)).astype(np.float32) for n in (5, 6, 6))
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    got = jax.grad(lambda *a: jnp.sum(fn(*a) * w), argnums=(0, 1, 2))(q, k, v)
    want = jax.jit(jax.grad(lambda *a: jnp.sum(attention(*a) * w), argnums=(0, 1, 2)))(
        q, k, v)
    _close(got, want)


def test_the_mask_pass_on_a_listing() -> None:
    """The pass alone, from the pipeline string: size inputs added, a reduction masked,
    an unknown symbol refused."""
    from bladec.parse import parse_module
    from bladec.passes import parse_pipeline, run_pipeline
    from bladec.printer import format_module
    text = """func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %s = reduce(%x) {dims = [0], kind = "max"} -> tensor<8>
  %n = dim_size(%x) {dim = 0} -> tensor<i32>
  return %s, %n
}
"""
    out = format_module(run_pipeline(parse_module(text), parse_pipeline("mask{pad=S0}")))
    assert "%padding.true.S0: tensor<i32>" in out and "select(" in out
    assert "value = -inf" in out and "dim_size" not in out
    with pytest.raises(bladec.BladecError, match="mask: S7 is not a free symbol"):
        run_pipeline(parse_module(text), parse_pipeline("mask{pad=S7}"))


def test_a_padded_dims_mask_is_made_once_along_that_dim() -> None:
    """Each padded dim's mask is one rank-1 value for the whole step, held (a few bytes,
    registry.remade), and broadcast to a reader's shape inside the reader: made at the
    readers' shapes it was remade behind every reader's barrier, where XLA could not
    merge the copies (issue 32)."""
    from bladec.ops.registry import remade
    from bladec.parse import parse_module
    from bladec.passes import parse_pipeline, run_pipeline
    text = """func.func @main(%x: tensor<4x?x8, [@C4, @S0, @C8]>, %y: tensor<?x8, [@S0, @C8]>) {
  %a = reduce(%x) {dims = [1], kind = "max"} -> tensor<4x8>
  %b = reduce(%x) {dims = [1, 2], kind = "sum"} -> tensor<4>
  %c = reduce(%y) {dims = [0], kind = "sum"} -> tensor<8>
  return %a, %b, %c
}
"""
    func = run_pipeline(parse_module(text), parse_pipeline("mask{pad=S0}")).main
    iotas = [op for op in func.ops if op.name == "iota"]
    assert len(iotas) == 1 and iotas[0].results[0].type.rank == 1
    selects = [op for op in func.ops if op.name == "select"]
    assert len(selects) == 3
    made = remade(func.ops, set(func.outputs()))
    masks = {op.operands[0] for op in selects}
    assert masks <= set(made)   # each a broadcast made inside its select
    held = {op.operands[0] for op in func.ops if op.result_names[0] in masks}
    assert len(held) == 1 and not held & set(made)   # the one rank-1 mask, made once
