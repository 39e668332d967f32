"""bladec.autobatch against the unbatched JAX reference: the same model code, run with
its cells as plain JAX functions one instance at a time (outputs and losses within 1e-5
relative, gradients within 1e-4), and each ablation switch giving the same outputs.
Small hidden sizes and short instances here; tests marked slow run 100 seeded batches
per model at the sizes of the acceptance."""
from __future__ import annotations

import json

import numpy as np
import pytest

import bladec
from bladec.batching.schedule import bucket, schedule, walked_depths
from bladec.batching.value import Recording, tracing
from bladec.models import bilstm, earlyexit, mvrnn, treelstm

from tests.support.order import one_order

MODELS = {"treelstm": (treelstm, "leaves"), "bilstm": (bilstm, "length"),
          "earlyexit": (earlyexit, "length"), "mvrnn": (mvrnn, "leaves")}


def _params(mod, hidden=8, vocab=30, classes=3):
    import jax
    return jax.tree_util.tree_map(jax.numpy.asarray,
                                  mod.init_params(hidden=hidden, vocab=vocab, classes=classes))


def _batch(name, count, seed, short=(2, 9)):
    mod, key = MODELS[name]
    return mod.instances(count, seed=seed, vocab=30, classes=3, **{key: short})


def _rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def _reference(mod, params, instances):
    """Per instance: the loss and jax.grad, the cells run as plain JAX functions."""
    import jax
    losses = np.array([float(mod.model(params, i)) for i in instances])
    grads = [jax.grad(mod.model)(params, i) for i in instances]
    total = jax.tree_util.tree_map(lambda *g: sum(g), *grads)
    return losses, total


_SHARED: dict = {}


@pytest.fixture(autouse=True, scope="module")
def _one_order_at_no_limit():
    """Each kernel at no limit in bladec's order only (tests.support.order): these tests
    check what is batched and computed; comparing the orders compiled every kernel three
    times (the earlyexit reference test: 32.6 s of CPU before, 16.0 s after, load 15)."""
    with one_order():
        yield


def _batched(name: str):
    """One autobatched model per model for the fast tests (its executables reused: a
    compilation costs seconds on the CI's loaded cores)."""
    if name not in _SHARED:
        _SHARED[name] = bladec.autobatch(MODELS[name][0].model)
    return _SHARED[name]


def check_batches(name: str, seeds, count: int, hidden: int = 8, short=(2, 9),
                  grad_every: int = 1, f=None) -> None:
    import jax
    mod, _ = MODELS[name]
    params = _params(mod, hidden=hidden)
    f = f or bladec.autobatch(mod.model)
    for n, seed in enumerate(seeds):
        instances = _batch(name, count, seed, short)
        out = f(params, instances)
        assert out.shape == (count,)
        if n % grad_every:
            losses = np.array([float(mod.model(params, i)) for i in instances])
            assert _rel(out, losses) <= 1e-5, (seed, out, losses)
            continue
        losses, total = _reference(mod, params, instances)
        assert _rel(out, losses) <= 1e-5, (seed, out, losses)
        loss, g = f.value_and_grad(params, instances)
        assert _rel(loss, losses.sum()) <= 1e-5
        assert jax.tree_util.tree_structure(g) == jax.tree_util.tree_structure(total)
        for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(g),
                                jax.tree_util.tree_leaves(total)):
            assert _rel(a, b) <= 1e-4, (seed, jax.tree_util.keystr(path))


# `make test` checks the tree LSTM (its executables shared with the training and call
# tests below); the other three models' references are `make bench` (issue 36: 29 s of
# the module's 46 s; earlyexit's batched forward stays checked by the two tests after)
@pytest.mark.parametrize("name", [n if n == "treelstm" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(MODELS)])
def test_outputs_and_gradients_match_the_unbatched_reference(name):
    check_batches(name, seeds=range(2), count=4, short=(2, 6), f=_batched(name))


def test_early_exit_by_masking_equals_exiting_for_real():
    """The masked model batched gives the losses of the classifier that stops at its
    first confident exit head (plain JAX, a Python break), with exits that vary."""
    params = _params(earlyexit, hidden=16)
    instances = _batch("earlyexit", 8, seed=1, short=(2, 6))
    assert len({earlyexit.exits(params, i) for i in instances}) >= 2
    out = _batched("earlyexit")(params, instances)
    want = [float(earlyexit.reference(params, i)) for i in instances]
    assert _rel(out, want) <= 1e-5


def test_training_step_is_sgd_on_the_summed_loss():
    import jax
    params = _params(treelstm)
    instances = _batch("treelstm", 4, seed=11, short=(2, 6))
    f = _batched("treelstm")
    _, total = _reference(treelstm, params, instances)
    loss, new = f.train_step(params, instances, 0.5)
    want = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, total)
    for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(want)):
        assert _rel(a, b) <= 1e-5
    assert f.report().instances == 4 and f.report().invocations > 0


def test_training_keeps_the_cells_products_for_the_backward():
    """The training forward keeps the node cell's product; its backward kernel has the
    gradient's two products only (recomputing would add the forward's third)."""
    params = _params(treelstm)
    f = _batched("treelstm")
    f.value_and_grad(params, _batch("treelstm", 4, seed=12, short=(2, 6)))
    listing = f.kernels()["node.bwd-kept"].listing
    dots = {line.split("=")[0] for line in listing.splitlines() if "dot_general(" in line}
    assert len(dots) == 2, dots


@pytest.mark.slow
def test_kept_products_give_the_gradients_of_recomputing():
    import jax
    params = _params(treelstm)
    instances = _batch("treelstm", 4, seed=12, short=(2, 6))
    loss, kept = _batched("treelstm").value_and_grad(params, instances)
    g = bladec.autobatch(treelstm.model, residuals=False)
    loss2, recomputed = g.value_and_grad(params, instances)
    assert "node.bwd" in g.kernels() and "node.bwd-kept" not in g.kernels()
    assert _rel(loss, loss2) <= 1e-6
    for a, b in zip(jax.tree_util.tree_leaves(kept), jax.tree_util.tree_leaves(recomputed)):
        assert _rel(a, b) <= 1e-5


def _ablation(switch: str, f) -> None:
    params = _params(treelstm)
    instances = _batch("treelstm", 3, seed=5, short=(2, 4))
    losses = np.array([float(treelstm.model(params, i)) for i in instances])
    setattr(f.options, switch, False)
    try:
        assert _rel(f(params, instances), losses) <= 1e-5
    finally:
        setattr(f.options, switch, True)
    if switch == "batched":    # every invocation its own call
        assert f.report().calls == f.report().invocations


@pytest.mark.parametrize("switch", ["static_depth", "batched"])
def test_ablation_computes_the_same_outputs(switch):
    _ablation(switch, _batched("treelstm"))


@pytest.mark.slow
@pytest.mark.parametrize("switch", ["fused_gathers", "coarse", "shared_weights"])
def test_ablation_with_kernels_of_its_own_computes_the_same_outputs(switch):
    _ablation(switch, bladec.autobatch(treelstm.model))


def test_one_call_per_cell_signature_and_depth():
    """A perfect tree of 8 leaves: leaves at depth 0, nodes at depths 1-3, the loss at 4:
    five calls for eight instances however many invocations."""
    params = _params(treelstm)
    tree = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    f = _batched("treelstm")
    f(params, [{"tree": tree, "label": i % 3} for i in range(8)])
    r = f.report()
    assert (r.calls, r.depths, r.invocations) == (5, 5, 8 * 16)


def test_the_two_directions_of_the_bilstm_are_one_call_per_depth():
    """The forward and backward LSTM are one cell with two sets of weights: in
    inference, one stacked call per depth (schedule.stacked) instead of one per
    direction; the outputs are the reference's either way, and switched off each
    direction is a call of its own."""
    params = _params(bilstm)
    batch = [{"tokens": [1, 2, 3, 4], "label": 0}, {"tokens": [5, 6, 7, 8], "label": 2},
             {"tokens": [9, 3, 2, 1], "label": 1}]
    losses = np.array([float(bilstm.model(params, i)) for i in batch])
    f = bladec.autobatch(bilstm.model, depth_runs=False)   # calls counted one per depth
    assert _rel(f(params, batch), losses) <= 1e-5
    assert f.report().calls == 4 + 1
    assert any(name.endswith(".stack") for name in f.kernels())
    f.options.stack_siblings = False
    assert _rel(f(params, batch), losses) <= 1e-5
    assert f.report().calls == 2 * 4 + 1


def test_consecutive_calls_of_one_kernel_run_as_one_call_of_several_steps():
    """The BiLSTM's stacked steps at depths 1-4 (one group, one bucket, nothing between
    them; depth 0 reads the initial state, another group) are one call of four steps,
    with the outputs of the calls one per depth bit for bit; switched off, one call per
    depth. A run's index holds the steps' indices side by side on axis 1; a rest
    shorter than a run (schedule.RUN_LENGTHS) stays calls of one step."""
    from bladec.batching.schedule import Call, runs
    params = _params(bilstm)
    batch = [{"tokens": [1, 2, 3, 4, 5], "label": 0}, {"tokens": [5, 6, 7, 8, 9], "label": 2},
             {"tokens": [9, 3, 2, 1, 0], "label": 1}]
    f = bladec.autobatch(bilstm.model)
    on = np.asarray(f(params, batch))
    assert f.report().calls == 1 + 1 + 1
    assert any(name == "step.stack-run4" for name in f.kernels())
    f.options.depth_runs = False
    off = np.asarray(f(params, batch))
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


def test_siblings_are_stacked_only_with_little_padding():
    """Siblings whose lanes differ much stay calls of their own (the padding of the
    smaller would cost more than the launch saved); the stacked index keeps each
    sibling's rows in its column and pads the rest with the padding row."""
    from bladec.batching.schedule import Call, padding_row, sibling_key, stacked
    import jax
    params = _params(bilstm)
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
    params = _params(treelstm)
    batch = [{"tree": [[0, 1], 2], "label": 0}, {"tree": [[[0, 1], 2], 3], "label": 1}]
    f = _batched("treelstm")
    losses = np.array([float(treelstm.model(params, i)) for i in batch])
    f.options.depth_runs = False    # the calls counted one per depth
    try:
        assert _rel(f(params, batch), losses) <= 1e-5 and f.report().calls == 5
        f.options.sinks_last = False
        assert _rel(f(params, batch), losses) <= 1e-5 and f.report().calls == 6
    finally:
        f.options.sinks_last = f.options.depth_runs = True


def test_aligned_ends_make_one_call_per_layer_of_the_early_exit():
    """Instances of different lengths before the same layers: with their ends aligned
    each layer is one call for the batch (not one per length), with the same losses."""
    params = _params(earlyexit)
    batch = [{"tokens": list(range(n)), "label": n % 3} for n in (2, 5, 9, 4)]
    f = _batched("earlyexit")
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
    assert _rel(aligned, early) <= 1e-6


def test_aligning_keeps_readers_after_writers_across_instances(monkeypatch):
    """A short instance's result read by a long one (a model that keeps a result
    across instances): aligned ends would put the reader first, so the move is
    refused and every row read is written at a smaller depth."""
    import jax
    from bladec.batching import schedule as scheduling
    params = _params(earlyexit)
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
    params = _params(bilstm)
    leaves = jax.tree_util.tree_leaves(params)
    recording = Recording({id(x): i for i, x in enumerate(leaves)})
    with tracing(recording, leaves):
        for instance in _batch("bilstm", 5, seed=2):
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
    params = _params(mod)
    leaves = jax.tree_util.tree_leaves(params)
    batch = _batch(name, 5, seed=3)

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


def test_compiled_executables_are_reused_across_batches():
    params = _params(treelstm)
    f = _batched("treelstm")
    f(params, _batch("treelstm", 4, seed=0, short=(3, 3)))
    compiled = f.report().total_compilations
    f(params, _batch("treelstm", 4, seed=1, short=(3, 3)))
    assert f.report().compilations == 0 and f.report().total_compilations == compiled
    kernels = f.kernels()
    assert {"leaf.fwd", "node.fwd", "loss.fwd"} <= set(kernels)
    listing = kernels["node.fwd"].listing
    assert "func.func @main" in listing and "gather" in listing and "scatter" in listing


def test_product_weights_reach_the_forward_kernels_transposed():
    """A weight read only as ``W @ x`` is passed transposed (program.flipped), one read
    as ``x @ W`` or elementwise as it is, to the inference and the training forward
    kernels; the outputs and the gradients are the reference's (the training forward
    computes a kept ``W @ x`` right operand first: residual.recording)."""
    import jax
    import jax.numpy as jnp

    @bladec.batching.cell
    def mixed(p, x):
        return jnp.tanh(p["a"] @ x + x @ p["b"] + p["c"] * x)

    def model(p, n):
        return mixed(p, mixed(p, jnp.full(4, float(n))))
    p = {"a": jnp.arange(16.0).reshape(4, 4) / 16, "b": jnp.eye(4)[::-1] / 2,
         "c": jnp.arange(16.0).reshape(4, 4)[0] / 8}
    f = bladec.autobatch(model)
    out = f(p, [1, 2, 3])
    assert _rel(out, jnp.stack([model(p, n) for n in (1, 2, 3)])) <= 1e-6
    flips = [v for k, v in f._kernels.items() if k[0] == "flips"]   # a, b, c in order
    assert len(flips) == 2 and len(jax.tree_util.tree_leaves(p)) == 3   # x data, x lazy
    assert all(dict(zip("abc", v)) == {"a": True, "b": False, "c": False} for v in flips)

    @bladec.batching.cell
    def total(x):
        return jnp.sum(x)

    def scalar(p, n):
        return total(model(p, n))
    _, grads = bladec.autobatch(scalar).value_and_grad(p, [1, 2, 3])
    want = jax.grad(lambda q: sum(scalar(q, n) for n in (1, 2, 3)))(p)
    assert all(_rel(grads[k], want[k]) <= 1e-5 for k in "abc")
    tree = bladec.autobatch(treelstm.model)
    params, batch = _params(treelstm, hidden=8), _batch("treelstm", 3, seed=2)
    tree(params, batch)
    tree.value_and_grad(params, batch)
    # node's u (40 x 16) reaches its inference and training forward kernels as 16 x 40
    forward = [k for name, k in tree.kernels().items() if name.startswith("node.fwd")
               or name.startswith("node.run")]     # node.run2: two depths (schedule.runs)
    assert forward and all("tensor<16x40>" in k.listing for k in forward)
    assert "tensor<16x40>" in tree.kernels()["node.keep"].listing


def test_a_call_runs_in_a_larger_executable_only_with_little_padding():
    """Kernel._larger: a compiled bucket serves a smaller call only up to a quarter more
    lanes (16 below 64), else the call's own bucket compiles."""
    from bladec.batching.kernel import SLACK, Kernel
    k = Kernel.__new__(Kernel)
    k._n_at = 1
    k._lean = {(7, 80): object(), (7, 160): object(), (7, 32): object(), (8, 64): object()}
    assert k._larger((7, 64)) == (7, 80)
    assert k._larger((7, 112)) is None            # 160 is more than a quarter more
    assert k._larger((7, 128)) == (7, 160)
    assert k._larger((7, 16)) == (7, 32) and SLACK == 16
    assert k._larger((7, 12)) is None             # 32 is more than 16 lanes more
    assert k._larger((8, 48)) == (8, 64)


def test_lazy_values_refuse_to_be_used_outside_cells():
    @bladec.cell
    def double(x):
        return 2 * x

    def branching(params, n):
        y = double(np.float32(n))
        return double(y) if y > 1 else y     # branches on a value: not allowed

    f = bladec.autobatch(branching)
    with pytest.raises(bladec.BladecError, match="no value yet"):
        f({}, [1, 2])


def test_errors_are_one_line_bladec_errors():
    with pytest.raises(bladec.BladecError, match="unknown option 'fast'"):
        bladec.autobatch(treelstm.model, fast=True)
    with pytest.raises(bladec.BladecError, match="needs a function"):
        bladec.autobatch(3)
    f = _batched("treelstm")
    with pytest.raises(bladec.BladecError, match="no instances"):
        f(_params(treelstm), [])

    @bladec.cell
    def bad(x):
        return x @ x.T.reshape(7)   # fails on any shape

    with pytest.raises(bladec.BladecError, match="cell bad fails"):
        bladec.autobatch(lambda p, i: bad(np.ones(3, np.float32)))({}, [0])


def test_cli_runs_a_model_over_a_file_of_instances(tmp_path, monkeypatch):
    from tests.support.clirunner import make_runner

    from bladec.cli import main
    (tmp_path / "tinytree.py").write_text(
        "from bladec.models.treelstm import model, init_params as _init\n"
        "def init_params():\n    return _init(hidden=4, vocab=30, classes=3)\n")
    instances = _batch("treelstm", 3, seed=4, short=(2, 4))
    (tmp_path / "trees.json").write_text(json.dumps(instances))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "trees.json", "--json",
                                    "--batch", "2"])
    assert r.exit_code == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    params = _params(treelstm, hidden=4)
    losses, _ = _reference(treelstm, params, instances)
    assert [x["instance"] for x in lines] == [0, 1, 2]
    assert _rel([x["output"] for x in lines], losses) <= 1e-5
    assert r.stderr.count("batch ") == 2
    (tmp_path / "bad.jsonl").write_text('{"tree": 1, "label": 0}\n{"tree": [1,\n')
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "bad.jsonl"])
    assert r.exit_code == 1 and r.stderr.strip() == "bad.jsonl:2:13: error: Expecting value"


@pytest.mark.slow
def test_cli_trains(tmp_path, monkeypatch):
    from tests.support.clirunner import make_runner

    from bladec.cli import main
    (tmp_path / "tinytree.py").write_text(
        "from bladec.models.treelstm import model, init_params as _init\n"
        "def init_params():\n    return _init(hidden=4, vocab=30, classes=3)\n")
    (tmp_path / "trees.json").write_text(json.dumps(_batch("treelstm", 3, 4, (2, 4))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "trees.json", "--train",
                                    "0.1"])
    assert r.exit_code == 0 and r.stdout.startswith("batch 0: loss ")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_acceptance_100_seeded_batches(name):
    """The acceptance: 100 seeded batches of 8 full-length instances (5-45 leaves or
    tokens), outputs within 1e-5 and gradients within 1e-4 (every 10th batch: the
    per-instance jax.grad reference is the slow part)."""
    check_batches(name, seeds=range(100, 200), count=8, hidden=32, short=(5, 45),
                  grad_every=10)


def test_a_compiling_call_compiles_its_groups_other_step_counts_too():
    """When buffers grow, the step kernels of the other run lengths in use compile in
    the same batch (model._stepped), not one by one in the later batches that first run
    them: after a batch of short instances that made the buffers larger, the run of
    four steps finds its executable compiled."""
    params = _params(bilstm)
    f = bladec.autobatch(bilstm.model)
    f(params, [{"tokens": [1, 2, 3, 4, 5], "label": 0}])          # a run of 4 steps
    assert {"step.stack", "step.stack-run4"} <= set(f.kernels())
    run4 = f.kernels()["step.stack-run4"]
    calls, compiled = run4.calls, run4.compilations
    many = [{"tokens": [i % 30, 1], "label": i % 3} for i in range(8)]
    f(params, many)                                                # larger buffers
    assert run4.calls == calls and run4.compilations == compiled + 1   # warmed, not run
    batch = [{"tokens": [1, 2, 3, 4, 5], "label": 0}] + many[1:]
    want = np.array([float(bilstm.model(params, i)) for i in batch[:3]])
    assert _rel(np.asarray(f(params, batch))[:3], want) <= 1e-5
    assert run4.calls == calls + 1 and run4.compilations == compiled + 1   # ran warm


def test_a_run_never_makes_a_batch_compile():
    """A run of steps whose executable is not compiled, in a batch that compiles
    nothing else, runs its steps one by one with the compiled one-step kernel (the same
    outputs); it compiles in a later batch that compiles anyway."""
    params = _params(bilstm)
    f = bladec.autobatch(bilstm.model)
    short = [{"tokens": [1, 2, 3, 4], "label": i} for i in range(3)]
    f(params, short)                        # depths 1-3: three steps, no run
    assert "step.stack-run4" not in f.kernels()
    longer = [{"tokens": [1, 2, 3, 4, 5], "label": i} for i in range(3)]
    out = np.asarray(f(params, longer))     # depths 1-4: a run of four, not compiled
    assert f.report().compilations == 0 and "step.stack-run4" not in f.kernels()
    want = np.array([float(bilstm.model(params, i)) for i in longer])
    assert _rel(out, want) <= 1e-5
