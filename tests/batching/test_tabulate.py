"""Options.tabulate (bladec/batching/weights/tabulate.py): what a cell computes from its
weights and one integer operand made once per set of weights, as a table read by row.
Which cells are tabulated and how (the rest of the cell's program), that the outputs stay the
reference's, that the tables are kept while the weights are the same arrays, and that a
batch with an operand outside the table's domain runs the cell as written."""
from __future__ import annotations

import numpy as np
import pytest

import bladec
from bladec.batching import Options, cell
from bladec.models import bilstm, earlyexit, mvrnn, treelstm

from tests.support.autobatchcase import batched, losses_of, make_batch, make_params, rel

pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")


def _plans(f) -> dict:
    """The autobatched model's tabulation per cell name (None: not tabulated)."""
    return {key[1][0].name: tab for key, tab in f._kernels.items() if key[0] == "tab"}


def _tables(f) -> dict:
    """The tables kept (derived.py), by key: the very arrays."""
    return {key: id(entry[1]) for key, entry in f._derived._entries.items()
            if key[0] == "tab"}


def test_the_static_half_of_a_product_is_a_table_over_the_vocabulary():
    """A BiLSTM step's ``W @ [emb[word]; h]``: the product splits along the
    concatenation; ``W[:, :E] @ emb[word] + b``'s static half becomes a ``[V, 4H]``
    table, the other half's weight ``W[:, E:]`` a value made once; the rest of the cell
    has one product, of the hidden state, contracting H (not 2H)."""
    import jax
    hidden, vocab = 8, 30
    f = bladec.autobatch(bilstm.model)
    params = make_params(bilstm, hidden=hidden, vocab=vocab)
    instances = make_batch("bilstm", 3, seed=2, short=(2, 4))
    assert rel(f(params, instances), losses_of(bilstm.model, params, instances)) <= 1e-5
    tab = _plans(f)["step"]
    assert sorted(tab.specs) == sorted([((vocab, 4 * hidden), "float32"),
                                        ((4 * hidden, hidden), "float32")])
    assert [size for _, size in tab.domains] == [vocab]
    leaves = [jax.ShapeDtypeStruct(np.shape(x), x.dtype) for x in (
        params["emb"], params["fwd"]["b"], params["fwd"]["w"])] + [
        jax.ShapeDtypeStruct((), np.int32), jax.ShapeDtypeStruct((hidden,), np.float32),
        jax.ShapeDtypeStruct((hidden,), np.float32)]
    # the rest reads neither the embedding nor the whole weight: not passed to it
    assert tab.kept == (False, True, False, True, True, True)
    avals = [jax.ShapeDtypeStruct(s, np.dtype(t)) for s, t in tab.specs] + [
        a for a, k in zip(leaves, tab.kept) if k]
    rest = jax.make_jaxpr(tab.cell.fn)(*avals).jaxpr
    products = [e for e in rest.eqns if e.primitive.name == "dot_general"]
    assert [tuple(e.invars[0].aval.shape) for e in products] == [(4 * hidden, hidden)]
    assert any(name.startswith("step[tab].") for name in f.kernels())


def test_a_leaf_of_its_word_alone_is_a_table_and_runs_no_product():
    """A TreeLSTM leaf reads only the embedding, its weights and its word: both its
    outputs are tables ``[V, H]``; its kernel gathers rows and runs no product."""
    f = bladec.autobatch(treelstm.model)
    params = make_params(treelstm)
    instances = make_batch("treelstm", 3, seed=4, short=(2, 5))
    assert rel(f(params, instances), losses_of(treelstm.model, params, instances)) <= 1e-5
    tab = _plans(f)["leaf"]
    assert tab.specs == (((30, 8), "float32"), ((30, 8), "float32"))
    listing = f.kernels()["leaf[tab].fwd"].listing
    assert "dot_general" not in listing and "dot" not in listing.replace("dot_", "")
    assert _plans(f)["node"] is None and _plans(f)["loss"] is None


@pytest.mark.parametrize("mod,name", [(mvrnn, "mvrnn"), (earlyexit, "earlyexit")])
def test_cells_whose_static_part_has_no_product_run_as_written(mod, name):
    """An MV-RNN leaf (two lookups) and an early-exit model's accumulation (a lookup
    added to a lazy value) have no product to save: nothing is tabulated."""
    f = bladec.autobatch(mod.model)
    params = make_params(mod)
    instances = make_batch(name, 2, seed=1, short=(2, 3))
    assert rel(f(params, instances), losses_of(mod.model, params, instances)) <= 1e-5
    assert _plans(f) and not any(_plans(f).values())


def test_tables_are_kept_while_the_weights_are_the_same_arrays():
    """Made in the first batch, read by the next, made again for other parameters (the
    outputs those parameters'); a training batch with fewer leaves than the table has
    rows leaves them alone (its weights are new every step: the table would cost more
    than the leaves)."""
    import jax
    f = batched("treelstm")
    params = make_params(treelstm)
    first, second = (make_batch("treelstm", 3, seed=s, short=(2, 4)) for s in (6, 7))
    f(params, first)
    made = f._derived.made
    out = f(params, second)
    assert f._derived.made == made
    assert rel(out, losses_of(treelstm.model, params, second)) <= 1e-5
    other = jax.tree_util.tree_map(lambda x: x * 0.5 - 0.01, params)
    out = f(other, second)
    assert f._derived.made > made
    assert rel(out, losses_of(treelstm.model, other, second)) <= 1e-5
    tables = _tables(f)
    f.value_and_grad(other, second)
    assert _tables(f) == tables and tables    # 3 small trees: fewer than 30 leaves


def test_an_operand_outside_the_domain_runs_the_cell_as_written():
    """JAX clamps ``emb[word]`` past the vocabulary; the table holds only words
    ``0..V-1``, so a batch with another word runs the leaf untabulated, with the
    clamped row the reference reads."""
    f = bladec.autobatch(treelstm.model)
    params = make_params(treelstm)
    inside = [{"tree": [1, [2, 3]], "label": 1}]
    outside = [{"tree": [1, [2, 45]], "label": 1}]     # vocabulary of 30
    assert rel(f(params, inside), losses_of(treelstm.model, params, inside)) <= 1e-5
    assert rel(f(params, outside), losses_of(treelstm.model, params, outside)) <= 1e-5
    assert {"leaf[tab].fwd", "leaf.fwd"} <= set(f.kernels())


def test_a_table_much_larger_than_its_weights_is_not_made():
    """A vocabulary of 4,000 words of width 2 projected to 64 features: the table
    (4,000 x 64) would be 30 times the weights it is made from (tabulate.MAX_GROWTH)."""
    import jax.numpy as jnp

    @cell
    def embed(emb, w, word):
        return jnp.tanh(w @ emb[word])

    @cell
    def total(x):
        return jnp.sum(x)

    def model(p, word):
        return total(embed(p["emb"], p["w"], word))
    rng = np.random.default_rng(0)
    p = {"emb": jnp.asarray(rng.standard_normal((4000, 2)), jnp.float32),
         "w": jnp.asarray(rng.standard_normal((64, 2)), jnp.float32)}
    f = bladec.autobatch(model)
    out = f(p, [3, 7, 3999])
    assert rel(out, [float(model(p, n)) for n in (3, 7, 3999)]) <= 1e-5
    assert _plans(f)["embed"] is None
    small = {"emb": p["emb"][:8], "w": p["w"]}     # 512 table values for 144 weights
    g = bladec.autobatch(model)
    assert rel(g(small, [3, 7, 5]), [float(model(small, n)) for n in (3, 7, 5)]) <= 1e-5
    assert _plans(g)["embed"] is not None


def test_switched_off_the_cells_run_as_written():
    f = bladec.autobatch(bilstm.model, options=Options(tabulate=False))
    params = make_params(bilstm)
    instances = make_batch("bilstm", 2, seed=3, short=(2, 3))
    assert rel(f(params, instances), losses_of(bilstm.model, params, instances)) <= 1e-5
    assert not _plans(f) and not any("[tab]" in n for n in f.kernels())


def test_training_tabulates_where_the_batch_has_more_invocations_than_table_rows():
    """A BiLSTM batch of 6 sequences (over 30 steps a direction, a vocabulary of 30):
    the steps train tabulated, the tables' cotangents taken back to the embedding and
    the weights (Tabulation.pullback); the gradients are the reference's. One short
    sequence (fewer steps than words) trains as written."""
    import jax

    from tests.support.autobatchcase import reference
    params = make_params(bilstm)
    f = bladec.autobatch(bilstm.model)
    instances = make_batch("bilstm", 6, seed=8, short=(6, 9))
    assert sum(len(i["tokens"]) for i in instances) - len(instances) >= 30
    loss, grads = f.value_and_grad(params, instances)
    want_loss, want = reference(bilstm, params, instances)
    assert rel(loss, want_loss.sum()) <= 1e-5
    for a, b in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(want)):
        assert rel(a, b) <= 1e-4
    assert {"step[tab].keep", "step[tab].wgrad-cot"} <= set(f.kernels())
    g = bladec.autobatch(bilstm.model)
    short = make_batch("bilstm", 1, seed=8, short=(3, 3))
    _, grads = g.value_and_grad(params, short)
    _, want = reference(bilstm, params, short)
    for a, b in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(want)):
        assert rel(a, b) <= 1e-4
    assert not any("[tab]" in n for n in g.kernels())


def test_two_operands_each_get_a_table_and_gradients_go_back_through_them():
    """A cell reading two words (``a``, ``b``) through a jitted helper with a custom
    derivative (``jax.nn.relu``) and a plain product: one table per word's part, the
    outputs the reference's; in training (30 invocations, 20 words) the tables'
    cotangents reach the embedding and the weight, the gradients ``jax.grad``'s."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def project(w, x):
        return jax.nn.relu(w @ x)

    @cell
    def pair(emb, w, a, b, h):
        return jnp.tanh(project(w, emb[a]) - w @ emb[b] + h.sum())

    @cell
    def lone(emb, w, a, h):    # its only product inside the jitted helper
        return jnp.tanh(project(w, emb[a]) + h)

    @cell
    def start(n):
        return jnp.full(4, n, jnp.float32)

    @cell
    def total(x):
        return jnp.sum(x * x)

    def model(p, words):
        a, b = words
        return total(lone(p["emb"], p["w"], b, pair(p["emb"], p["w"], a, b, start(a))))
    rng = np.random.default_rng(0)
    p = {"emb": jnp.asarray(rng.standard_normal((20, 4)), jnp.float32),
         "w": jnp.asarray(rng.standard_normal((4, 4)), jnp.float32)}
    words = [(int(rng.integers(20)), int(rng.integers(20))) for _ in range(30)]
    f = bladec.autobatch(model)
    assert rel(f(p, words), [float(model(p, w)) for w in words]) <= 1e-5
    tab = _plans(f)["pair"]
    assert tab.specs == (((20, 4), "float32"), ((20, 4), "float32"))
    assert _plans(f)["lone"].specs == (((20, 4), "float32"),)
    assert [size for _, size in tab.domains] == [20, 20]
    _, grads = f.value_and_grad(p, words)
    want = jax.grad(lambda q: sum(model(q, w) for w in words))(p)
    assert all(rel(grads[k], want[k]) <= 1e-4 for k in p)
    assert any(name.startswith("pair[tab].bwd") for name in f.kernels())


def test_cells_alike_but_for_their_constants_keep_tables_of_their_own():
    """Two cells that differ only in a constant they close over print the same tables'
    program (a jaxpr names its constants without their values): each has its own
    tables, and each output is its own cell's."""
    import jax.numpy as jnp
    one, two = np.full(4, 1.0, np.float32), np.full(4, 2.0, np.float32)

    @cell
    def first(emb, w, word):
        return jnp.tanh(w @ emb[word] + one)

    @cell
    def second(emb, w, word):
        return jnp.tanh(w @ emb[word] + two)

    @cell
    def total(x, y):
        return jnp.sum(x) + 10 * jnp.sum(y)

    def model(p, word):
        return total(first(p["emb"], p["w"], word), second(p["emb"], p["w"], word))
    rng = np.random.default_rng(3)
    p = {"emb": jnp.asarray(rng.standard_normal((6, 4)), jnp.float32),
         "w": jnp.asarray(rng.standard_normal((4, 4)), jnp.float32)}
    f = bladec.autobatch(model, compose=False)   # (composed into ``total``, the two
    # cells would not run: its own tables would serve)
    for _ in range(2):
        assert rel(f(p, [0, 3, 5]), [float(model(p, n)) for n in (0, 3, 5)]) <= 1e-5
    plans = _plans(f)
    assert plans["first"].program == plans["second"].program
    assert len(_tables(f)) == 2
