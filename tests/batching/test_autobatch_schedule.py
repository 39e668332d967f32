"""bladec.autobatch's schedule: one call per cell signature and depth (the two directions
of a BiLSTM, siblings stacked with little padding, consecutive calls as one call of
several steps, aligned ends of the early exit), depths computed without walking the
graph, the fast trace against flattening, the bucket ladder. (Split from
test_autobatch.py, which checks the numbers against the unbatched reference.)"""
from __future__ import annotations

import numpy as np
import pytest

from bladec.batching.schedule import bucket, schedule, walked_depths
from bladec.batching.value import Recording, tracing
from bladec.models import bilstm, earlyexit, treelstm

from tests.support.autobatchcase import (MODELS, batched, fresh, losses_of, make_batch,
                                        make_params, rel)


# each kernel at no limit in bladec's order only (tests/conftest.py): these tests check
# what is batched and computed; comparing the orders compiled every kernel three times
# (the earlyexit reference test: 32.6 s of CPU before, 16.0 s after, load 15)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")


def test_one_call_per_cell_signature_and_depth():
    """A perfect tree of 8 leaves: leaves at depth 0, nodes at depths 1-3, the loss at 4:
    five calls for eight instances however many invocations. The eight instances share
    their words, so the leaves are 8 invocations, not 64 (Options.dedupe); 56 nodes and
    8 losses."""
    params = make_params(treelstm)
    tree = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    f = batched("treelstm")
    batch = [{"tree": tree, "label": i % 3} for i in range(8)]
    f.options.compose = False
    try:
        f(params, batch)
    finally:
        f.options.compose = True
    r = f.report()
    assert (r.calls, r.depths, r.invocations) == (5, 5, 8 + 8 * 7 + 8)
    # composed (compose.py), the nodes over two leaves read their words' tables and
    # nothing reads a leaf: no call at depth 0
    out = f(params, batch)
    r = f.report()
    assert (r.calls, r.depths) == (4, 5)
    assert rel(out, losses_of(treelstm.model, params, batch)) <= 1e-5


def test_consecutive_calls_of_one_kernel_run_as_one_call_of_several_steps():
    """The BiLSTM's stacked steps at depths 1-4 (one group, one bucket, nothing between
    them; depth 0 reads the initial state, another group) are one call of four steps,
    with the outputs of the calls one per depth bit for bit; switched off, one call per
    depth. A run's index holds the steps' indices side by side on axis 1; a rest
    shorter than a run (schedule.RUN_LENGTHS) stays calls of one step."""
    from bladec.batching.schedule import Call, runs
    params = make_params(bilstm)
    batch = [{"tokens": [1, 2, 3, 4, 5], "label": 0}, {"tokens": [5, 6, 7, 8, 9], "label": 2},
             {"tokens": [9, 3, 2, 1, 0], "label": 1}]
    f = fresh("bilstm")    # a run compiles only in a batch that compiles anyway
    on = np.asarray(f(params, batch))
    assert f.report().calls == 1 + 1 + 1
    assert any(name == "step[tab].stack-run4" for name in f.kernels())
    f.options.depth_runs = False
    try:
        off = np.asarray(f(params, batch))
    finally:
        f.options.depth_runs = True
    assert f.report().calls == 5 + 1 and (on == off).all()
    a, b = object(), object()
    rows = np.arange(8 * 3, dtype=np.int32).reshape(8, 3)
    calls = [Call(d, a, rows + d, 8) for d in range(7)] + [Call(7, b, rows, 8),
                                                           Call(8, a, rows, 8)]
    out = runs(calls)
    assert [(c.group, c.steps, c.index.shape) for c in out] == [
        (a, 4, (8, 4, 3)), (a, 1, (8, 3)), (a, 1, (8, 3)), (a, 1, (8, 3)),
        (b, 1, (8, 3)), (a, 1, (8, 3))]
    assert (out[0].index[:, 2] == rows + 2).all() and out[0].count == 32


def test_the_two_directions_of_the_bilstm_are_one_call_per_depth():
    """The forward and backward LSTM are one cell with two sets of weights: in
    inference, one stacked call per depth (schedule.stacked) instead of one per
    direction; the outputs are the reference's either way, and switched off each
    direction is a call of its own. (The BiLSTM the test above made: its kernels at
    these sizes compiled.)"""
    params = make_params(bilstm)
    batch = [{"tokens": [1, 2, 3, 4], "label": 0}, {"tokens": [5, 6, 7, 8], "label": 2},
             {"tokens": [9, 3, 2, 1], "label": 1}]
    losses = losses_of(bilstm.model, params, batch)
    f = batched("bilstm")
    f.options.depth_runs = False    # the calls counted one per depth
    try:
        assert rel(f(params, batch), losses) <= 1e-5
        assert f.report().calls == 4 + 1
        assert any(name.endswith(".stack") for name in f.kernels())
        f.options.stack_siblings = False
        assert rel(f(params, batch), losses) <= 1e-5
        assert f.report().calls == 2 * 4 + 1
    finally:
        f.options.depth_runs = f.options.stack_siblings = True


def test_siblings_are_stacked_only_with_little_padding():
    """Siblings whose lanes differ much stay calls of their own (the padding of the
    smaller would cost more than the launch saved); the stacked index keeps each
    sibling's rows in its column and pads the rest with the padding row."""
    from bladec.batching.schedule import Call, padding_row, sibling_key, stacked
    import jax
    params = make_params(bilstm)
    leaves = jax.tree_util.tree_leaves(params)
    recording = Recording({id(x): i for i, x in enumerate(leaves)})
    with tracing(recording, leaves):
        bilstm.model(params, {"tokens": [1, 2], "label": 0})
    steps = [g for g in recording.groups.values() if g.cell is bilstm.step]
    fwd, bwd = [g for g in steps if sibling_key(g) == sibling_key(steps[-1])]
    width = fwd.width + 1     # and the residual rows' column (schedule.py)
    rows = np.arange(8 * width, dtype=np.int32).reshape(8, width)
    joined = stacked([Call(0, fwd, rows, 8), Call(0, bwd, rows[:6], 6)])
    assert len(joined) == 1 and joined[0].siblings == (fwd, bwd)
    assert joined[0].count == 14 and joined[0].index.shape == (8, 2, width)
    assert (joined[0].index[:, 0] == rows).all() and (joined[0].index[:6, 1] == rows[:6]).all()
    assert (joined[0].index[6:, 1] == padding_row(fwd)).all()
    wide = np.zeros((32, width), np.int32)
    apart = stacked([Call(0, fwd, wide, 32), Call(0, bwd, rows, 8)])
    assert [c.siblings for c in apart] == [(), ()]


def test_losses_of_instances_of_different_depths_are_one_call():
    """Results no invocation reads (the losses) run in one last call, not one per depth
    at which an instance ends; switched off, one call each."""
    params = make_params(treelstm)
    batch = [{"tree": [[0, 1], 2], "label": 0}, {"tree": [[[0, 1], 2], 3], "label": 1}]
    f = batched("treelstm")
    losses = losses_of(treelstm.model, params, batch)
    # the calls counted one per depth and group (the nodes over two leaves not a
    # group of their own: compose.py)
    f.options.depth_runs = f.options.compose = False
    try:
        assert rel(f(params, batch), losses) <= 1e-5 and f.report().calls == 5
        f.options.sinks_last = False
        assert rel(f(params, batch), losses) <= 1e-5 and f.report().calls == 6
    finally:
        f.options.sinks_last = f.options.depth_runs = f.options.compose = True


def test_aligned_ends_make_one_call_per_layer_of_the_early_exit():
    """Instances of different lengths before the same layers: with their ends aligned
    each layer is one call for the batch (not one per length), with the same losses."""
    params = make_params(earlyexit)
    batch = [{"tokens": list(range(n)), "label": n % 3} for n in (2, 5, 9, 4)]
    f = batched("earlyexit")
    f.options.depth_runs = False    # the calls counted one per depth
    try:
        aligned = np.asarray(f(params, batch))
        calls = f.report().calls
        assert calls == f.report().depths == 9 + earlyexit.LAYERS + 1
        # unaligned, the layers that instances reach at one depth differ; stacked (the
        # layers are one cell with weights of their own) they would be one call again
        f.options.align_ends = f.options.stack_siblings = False
        early = np.asarray(f(params, batch))
        assert f.report().calls > calls + 2 * earlyexit.LAYERS
    finally:
        f.options.align_ends = f.options.stack_siblings = f.options.depth_runs = True
    assert rel(aligned, early) <= 1e-6


def test_aligning_keeps_readers_after_writers_across_instances(monkeypatch):
    """A short instance's result read by a long one (a model that keeps a result
    across instances): aligned ends would put the reader first, so the move is
    refused and every row read is written at a smaller depth."""
    import jax
    from bladec.batching import schedule as scheduling
    params = make_params(earlyexit)
    kept = []

    def model(p, instance):
        total = earlyexit._summed(p, instance["tokens"])
        if len(kept) == 1:
            total = earlyexit.accumulate(p["emb"], 0, kept[0])
        kept.append(total)
        state = (total, np.zeros(3, np.float32), np.float32(0.0))
        for layer in p["layers"]:
            state = earlyexit.layer(layer, state)
        return earlyexit.loss(state[1], instance["label"])
    leaves = jax.tree_util.tree_leaves(params)
    recording = Recording({id(x): i for i, x in enumerate(leaves)}, params)
    with tracing(recording, leaves):
        for n in (2, 20, 3, 4, 5, 6, 7, 8):
            recording.starts.append(recording.invocations)
            model(params, {"tokens": list(range(n)), "label": 0})
    tried = []
    aligned = scheduling._aligned
    monkeypatch.setattr(scheduling, "_aligned",
                        lambda *a: tried.append(aligned(*a)) or tried[-1])
    s = schedule(recording)
    assert tried == [False]
    written = {}
    for call in s.calls:
        group, rows = call.group, call.index[:call.count]
        n_in = len(group.operand_keys) + len(group.data_keys)
        for col, key in enumerate(group.operand_keys):
            assert all(written[(key, int(r))] < call.depth for r in rows[:, col])
        for col, key in enumerate(group.out_keys, n_in):
            for r in rows[:, col]:
                written[(key, int(r))] = call.depth


def test_inline_depths_equal_a_walk_of_the_graph():
    import jax
    params = make_params(bilstm)
    leaves = jax.tree_util.tree_leaves(params)
    recording = Recording({id(x): i for i, x in enumerate(leaves)})
    with tracing(recording, leaves):
        for instance in make_batch("bilstm", 5, seed=2):
            bilstm.model(params, instance)
    walked = walked_depths(recording)
    for group in recording.groups.values():
        assert list(walked[id(group)]) == group.depths
    s = schedule(recording)
    assert s.depths == 1 + max(max(g.depths) for g in recording.groups.values())
    assert sum(c.count for c in s.calls) == recording.invocations


@pytest.mark.parametrize("name", ["treelstm", "bilstm", "earlyexit", "mvrnn"])
def test_fast_trace_records_what_flattening_records(name, monkeypatch):
    """The trace's fast path (arguments read without pytree flattening, value.py) gives
    the groups, rows, depths and tables that the general path gives."""
    import jax
    from bladec.batching import value
    mod = MODELS[name][0]
    params = make_params(mod)
    leaves = jax.tree_util.tree_leaves(params)
    batch = make_batch(name, 5, seed=3)

    def record():
        recording = Recording({id(x): i for i, x in enumerate(leaves)}, params)
        with tracing(recording, leaves):
            for instance in batch:
                mod.model(params, instance)
        return recording
    fast = record()
    assert fast._fast, "the fast path was never taken"

    def refuse(*_):
        raise value._Fallback
    monkeypatch.setattr(value.Recording, "_walk", refuse)
    general = record()
    assert not general._fast
    assert list(fast.groups) == list(general.groups)
    for a, b in zip(fast.groups.values(), general.groups.values()):
        assert (a.flat, a.depths, a.order) == (b.flat, b.depths, b.order)
    assert fast.rows == general.rows
    assert {k: len(v) for k, v in fast.data.items()} == \
        {k: len(v) for k, v in general.data.items()}


def test_bucket_ladder():
    assert [bucket(n, 8) for n in (1, 8, 9, 13, 17, 33, 64, 65, 81, 129)] == \
        [8, 8, 12, 16, 24, 48, 64, 80, 96, 160]
    for n in range(1, 3000):
        b = bucket(n)
        assert n <= b and (b - n) / b <= (1 / 3 if n < 64 else 1 / 5) + 1e-9
