"""Options.compose (bladec/batching/compose.py): invocations whose lazy operands all come
from tabulated cells that read one integer run as a composed cell that reads those
integers. Which invocations move, that the outputs stay the reference's, that what
nothing reads any more does not run, and that a batch leaves no cycle for Python's
collector."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import bladec
from bladec.batching import cell
from bladec.models import treelstm

from tests.support.autobatchcase import losses_of, make_batch, make_params, rel

pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")


def _over_two_leaves(tree) -> int:
    """Nodes of ``tree`` whose children are both leaves."""
    if not isinstance(tree, list):
        return 0
    if not isinstance(tree[0], list) and not isinstance(tree[1], list):
        return 1
    return _over_two_leaves(tree[0]) + _over_two_leaves(tree[1])


def _counts(f) -> dict:
    """Invocations per group of the last batch, by cell name (after the pass)."""
    out: dict = {}
    recording = f._last_recording
    for group in recording.groups.values():
        out[group.cell.name] = out.get(group.cell.name, 0) + group.count
    return out


@pytest.fixture
def remembered(monkeypatch):
    """Autobatched objects keep their last recording as ``_last_recording``."""
    from bladec.batching import model
    trace = model.Autobatched._trace

    def keeping(self, *args, **kwargs):
        traced = trace(self, *args, **kwargs)
        self._last_recording = traced.recording
        return traced
    monkeypatch.setattr(model.Autobatched, "_trace", keeping)


def test_nodes_over_two_leaves_read_their_words(remembered):
    """A TreeLSTM batch: exactly the nodes over two leaves move to the composed cell,
    which is tabulated (each of its four operands a table over the vocabulary: the
    children's h through the node's product, and their c); the outputs are the
    reference's and the uncomposed run's, batch after batch."""
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    g = bladec.autobatch(treelstm.model, compose=False)
    for seed in range(3):
        batch = make_batch("treelstm", 6, seed=seed)
        out = f(params, batch)
        assert rel(out, losses_of(treelstm.model, params, batch)) <= 1e-5
        assert rel(out, g(params, batch)) <= 1e-5
        counts = _counts(f)
        nodes = sum(_over_two_leaves(i["tree"]) for i in batch)
        assert counts["node<leaf,leaf,leaf,leaf>"] == nodes
        leaves_total = sum(len(str(i["tree"]).split(",")) for i in batch)
        assert counts["node"] == leaves_total - len(batch) - nodes
    tab = f._tab_plan(next(gr for gr in f._last_recording.groups.values()
                           if gr.cell.name.startswith("node<")))
    assert tab is not None and [size for _, size in tab.domains] == [30] * 4
    assert "node<leaf,leaf,leaf,leaf>[tab].fwd" in f.kernels()


def test_a_batch_of_the_same_shapes_compiles_nothing_more():
    """The composed cell is one object per consumer and producers (kept on the cell):
    the second batch of the same trees finds its kernels."""
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    batch = make_batch("treelstm", 5, seed=7)
    f(params, batch)
    f(params, batch)
    assert f.report().compilations == 0


def test_leaves_nothing_reads_do_not_run(remembered):
    """Where every leaf feeds only nodes over two leaves, the composed nodes read the
    words and no leaf runs; where some leaf is read by another node, the leaves run
    whole (a stable count of lanes: compose._unread_dropped). A leaf the model returns
    runs."""
    import jax.numpy as jnp
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    f(params, [{"tree": [0, 1], "label": 0}, {"tree": [[2, 3], [4, 5]], "label": 1}])
    counts = _counts(f)
    assert "leaf" not in counts and counts["node<leaf,leaf,leaf,leaf>"] == 3
    f(params, [{"tree": [0, 1], "label": 0}, {"tree": [[2, 3], 4], "label": 1}])
    counts = _counts(f)
    assert counts["leaf"] == 5 and counts["node<leaf,leaf,leaf,leaf>"] == 2

    def model(p, word):   # returns a leaf's state and a node over it
        h, c = treelstm.leaf(p["emb"], p["leaf"], word)
        top, _ = treelstm.node(p["node"], (h, c), (h, c))
        return h, top
    f2 = bladec.autobatch(model)
    out = f2(params, [3, 4])
    assert _counts(f2)["leaf"] == 2
    want = [model(params, w) for w in (3, 4)]
    assert rel(out[0], jnp.stack([w[0] for w in want])) <= 1e-5
    assert rel(out[1], jnp.stack([w[1] for w in want])) <= 1e-5


def test_consumers_that_would_not_be_tabulated_stay(remembered):
    """A consumer whose composed tables would pass the tables' bound (weights/
    tabulate.py: MAX_GROWTH) would not be tabulated, and composed it would compute its
    producers again: it stays as it is, reading the producers' outputs."""
    import jax.numpy as jnp
    from bladec.batching.weights.tabulate import MAX_GROWTH

    @cell
    def embed(emb, w, word):
        return jnp.tanh(w @ emb[word])

    @cell
    def pair(wide, a, b):
        return jnp.sum(jnp.tanh(wide @ a) * jnp.tanh(wide @ b))

    def model(p, words):
        return pair(p["wide"], embed(p["emb"], p["w"], words[0]),
                    embed(p["emb"], p["w"], words[1]))
    rng = np.random.default_rng(0)
    vocab, width = 10, 500   # two tables of vocab x width over a wide weight of width x 4
    assert 2 * vocab * width > MAX_GROWTH * (width * 4 + vocab * 4 + 16)
    p = {"emb": jnp.asarray(rng.standard_normal((vocab, 4)), jnp.float32),
         "w": jnp.asarray(rng.standard_normal((4, 4)), jnp.float32),
         "wide": jnp.asarray(rng.standard_normal((width, 4)), jnp.float32) / 4}
    f = bladec.autobatch(model)
    words = [[1, 2], [3, 3], [9, 0]]
    assert rel(f(p, words), [float(model(p, w)) for w in words]) <= 1e-5
    assert set(_counts(f)) == {"embed", "pair"}
    assert f._tab_plan(next(g for g in f._last_recording.groups.values()
                            if g.cell.name == "embed")) is not None


def test_a_word_outside_the_tables_runs_the_composed_cell_as_written():
    """A word past the embedding's rows (``emb[word]`` clamps, as JAX indexing does):
    the composed cell is not tabulated for that batch and computes its leaves inside,
    with the reference's results."""
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    batch = [{"tree": [[1, 2], [3, 40]], "label": 0}, {"tree": [5, 6], "label": 2}]
    assert rel(f(params, batch), losses_of(treelstm.model, params, batch)) <= 1e-5


def test_a_producer_with_a_constant_operand_is_not_composed(remembered):
    """A producer must read one integer and nothing else but weights: one that also
    reads a float is left alone."""
    import jax.numpy as jnp

    @cell
    def embed(emb, word, scale):
        return emb[word] * scale

    @cell
    def pair(w, a, b):
        return jnp.sum(jnp.tanh(w @ jnp.concatenate([a, b])))

    def model(p, words):
        return pair(p["w"], embed(p["emb"], words[0], 2.0), embed(p["emb"], words[1], 2.0))
    rng = np.random.default_rng(0)
    p = {"emb": jnp.asarray(rng.standard_normal((10, 4)), jnp.float32),
         "w": jnp.asarray(rng.standard_normal((3, 8)), jnp.float32)}
    f = bladec.autobatch(model)
    words = [[1, 2], [3, 3], [9, 0]]
    assert rel(f(p, words), [float(model(p, w)) for w in words]) <= 1e-5
    assert set(_counts(f)) == {"embed", "pair"}


def test_a_batch_leaves_no_cycle_for_the_collector():
    """Reference counting frees a batch's records (Recording.finish drops the memo that
    held lazy values, which hold the recording): with the collector off, a batch after
    warm-up leaves almost nothing unreachable (about 900 objects a batch before)."""
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for seed in range(3):
            f(params, make_batch("treelstm", 8, seed=seed))
        gc.collect()
        f(params, make_batch("treelstm", 8, seed=3))
        assert gc.collect() < 50
    finally:
        if enabled:
            gc.enable()


def test_the_collector_is_back_on_after_a_batch_and_after_an_error():
    """The collector is paused for a batch only: on again after it, and after a batch
    that fails; left off where the caller had it off."""
    params = make_params(treelstm)
    f = bladec.autobatch(treelstm.model)
    f(params, make_batch("treelstm", 2, seed=0))
    assert gc.isenabled()
    with pytest.raises(Exception):
        f(params, [])
    assert gc.isenabled()
    gc.disable()
    try:
        f(params, make_batch("treelstm", 2, seed=0))
        assert not gc.isenabled()
    finally:
        gc.enable()
