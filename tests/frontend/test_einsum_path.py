"""``jnp.einsum``'s contraction order under symbolic shapes, chosen at real sizes
(bladec/frontend/einsumpath.py), and what it does to an imported step's device peak."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from bladec.frontend import trace
from bladec.frontend.einsumpath import einsum_sizes
from bladec.runtime.backends.jax_backend import JaxBackend, xla_total_bytes
from bladec.runtime.engine import Engine

from tests.support.corpus_quotient import quotient_steps


def _chain(a, b, c):
    # with X symbolic: (a b) c costs 320 X flops, a (b c) 2560 + 256 X: at JAX's guess of
    # X = 8 the first is cheaper, at X = 1000 the second (and its intermediate is 16x16,
    # not X x 10)
    return jnp.einsum("xy,yz,zw->xw", a, b, c)


def _specs():
    (x,) = export.symbolic_shape("X")
    return (jax.ShapeDtypeStruct((x, 16), jnp.float32),
            jax.ShapeDtypeStruct((16, 10), jnp.float32),
            jax.ShapeDtypeStruct((10, 16), jnp.float32))


def _intermediates(imported) -> list[tuple]:
    """The static dims of each contraction's result (None where symbolic)."""
    return [tuple(op.results[0].type.dims) for op in imported.module.main.ops
            if op.name == "dot_general"]


def test_the_order_follows_the_sizes_given():
    guessed = _intermediates(trace(_chain, _specs()))
    at_size = _intermediates(trace(_chain, _specs(), sizes={"X": 1000}))
    assert guessed != at_size
    assert (16, 16) in at_size          # b c first: a small intermediate
    assert (16, 16) not in guessed      # JAX's guess: a b first, an X x 10 intermediate


def test_the_top_of_a_range_is_the_default():
    assert _intermediates(trace(_chain, _specs(), ranges={"X": (1, 1000)})) == \
        _intermediates(trace(_chain, _specs(), sizes={"X": 1000}))


def test_the_answer_is_the_same_whichever_order():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((40, 16), (16, 10), (10, 16)))
    want = np.asarray(jax.jit(_chain)(a, b, c))
    for sizes in ({}, {"X": 1000}):
        imp = trace(_chain, _specs(), sizes=sizes)
        out, _ = Engine(imp.module, backend=JaxBackend()).call(
            dict(zip(imp.input_names, (a, b, c))), limit=None)
        np.testing.assert_allclose(np.asarray(next(iter(out.values()))), want, rtol=1e-5, atol=1e-5)


def test_jax_keeps_its_own_handler_after_the_trace():
    from jax._src.numpy import einsum as einsum_module
    before = dict(einsum_module._poly_einsum_handlers)
    with einsum_sizes({"X": 5}):
        assert einsum_module._poly_einsum_handlers != before
    assert einsum_module._poly_einsum_handlers == before


def test_a_capacity_limited_moe_holds_no_more_than_jit():
    # its combine einsum("tec,te,ecd->td") in JAX's guessed order held 1.30x jit's peak
    st = quotient_steps()["moe_capacity"]
    args = st.make(st.run, 1)
    jit_total = xla_total_bytes(
        jax.jit(st.fn, donate_argnums=st.donate_argnums).lower(*args).compile())
    imp = trace(**st.spec(), sizes=dict(st.run))
    leaves = dict(zip(imp.input_names, jax.tree_util.tree_leaves(args)))
    _, report = Engine(imp.module, passes="analyze,schedule,remat",
                       backend=JaxBackend()).call(leaves, limit=None)
    assert report.peak_bytes <= jit_total
