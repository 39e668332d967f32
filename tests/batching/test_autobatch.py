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
from bladec.models import bilstm, earlyexit, treelstm

from tests.support.autobatchcase import (MODELS, batched, check_batches, fresh,
                                        losses_of, make_batch, make_params, reference,
                                        rel)


# each kernel at no limit in bladec's order only (tests/conftest.py): these tests check
# what is batched and computed; comparing the orders compiled every kernel three times
# (the earlyexit reference test: 32.6 s of CPU before, 16.0 s after, load 15)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")


# `make test` checks the tree LSTM (its executables shared with the training and call
# tests below); the other three models' references are `make bench` (issue 36: 29 s of
# the module's 46 s; earlyexit's batched forward stays checked by the two tests after)
@pytest.mark.parametrize("name", [n if n == "treelstm" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(MODELS)])
def test_outputs_and_gradients_match_the_unbatched_reference(name):
    check_batches(name, seeds=range(2), count=4, short=(2, 6), f=batched(name))


def test_early_exit_by_masking_equals_exiting_for_real():
    """The masked model batched gives the losses of the classifier that stops at its
    first confident exit head (plain JAX, a Python break), with exits that vary (at
    hidden 8 as at 16: exits 1-3 of 6). At the hidden size of the schedule's early-exit
    test, whose kernels (batched) it shares where both run in one worker."""
    params = make_params(earlyexit)
    instances = make_batch("earlyexit", 8, seed=1, short=(2, 6))
    assert len({earlyexit.exits(params, i) for i in instances}) >= 2
    out = batched("earlyexit")(params, instances)
    want = [float(earlyexit.reference(params, i)) for i in instances]
    assert rel(out, want) <= 1e-5


def test_training_step_is_sgd_on_the_summed_loss():
    import jax
    params = make_params(treelstm)
    instances = make_batch("treelstm", 4, seed=11, short=(2, 6))
    f = batched("treelstm")
    _, total = reference(treelstm, params, instances)
    loss, new = f.train_step(params, instances, 0.5)
    want = jax.tree_util.tree_map(lambda p, g: np.asarray(p, np.float64) - 0.5 * g,
                                  params, total)
    for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(want)):
        assert rel(a, b) <= 1e-5
    assert f.report().instances == 4 and f.report().invocations > 0


def test_training_keeps_the_cells_products_for_the_backward():
    """The training forward keeps the node cell's product; the backward has the
    gradient's two products only (recomputing would add the forward's third): the
    operands' one in the per-depth kernel, the weight's in the kernel that runs once
    over the batch (Options.weight_grads_once)."""
    params = make_params(treelstm)
    f = batched("treelstm")
    f.value_and_grad(params, make_batch("treelstm", 4, seed=12, short=(2, 6)))
    for name in ("node.bwd-ops-cot", "node.wgrad-cot"):
        listing = f.kernels()[name].listing
        dots = {line.split("=")[0].strip() for line in listing.splitlines()
                if "dot_general(" in line}
        assert len(dots) == 1, (name, dots)


def _main(listing: str) -> str:
    """A listing's main function alone."""
    return listing.split("func.func @main(", 1)[1].split("\nfunc.func", 1)[0]


def test_the_weights_part_from_kept_cotangents_equals_running_the_backward_again():
    """Options.product_cotangents: the per-depth backward keeps its products'
    cotangents and the weights' part is one product per weight over them, reading no
    adjoint; off, it runs the cell's backward again over the batch. Same gradients
    (and the reference's), on the tree LSTM and on the BiLSTM (whose weight is read
    through a table in training too)."""
    import jax
    for mod, name in ((treelstm, "node"), (bilstm, "step[tab]")):
        params = make_params(mod)
        # (at least as many steps as words: the BiLSTM's input product tabulated)
        instances = make_batch(mod.__name__.rsplit(".", 1)[1], 6, seed=8, short=(6, 9))
        on = bladec.autobatch(mod.model)
        off = bladec.autobatch(mod.model, product_cotangents=False)
        (l1, g1), (l2, g2) = on.value_and_grad(params, instances), \
            off.value_and_grad(params, instances)
        assert f"{name}.wgrad-cot" in on.kernels() and f"{name}.wgrad-kept" in off.kernels()
        assert f"{name}.wgrad-kept" not in on.kernels()
        _, want = reference(mod, params, instances)
        assert rel(l1, l2) <= 1e-6
        for a, b, c in zip(*(jax.tree_util.tree_leaves(x) for x in (g1, g2, want))):
            assert rel(a, b) <= 1e-5 and rel(a, c) <= 1e-4
        # one product over gathered rows, not the cell's backward (its gates' tanh), in
        # the main function (schedule versions, other orders of it, follow)
        fast = _main(on.kernels()[f"{name}.wgrad-cot"].listing)
        slow = _main(off.kernels()[f"{name}.wgrad-kept"].listing)
        assert fast.count("dot_general(") == 1 and "tanh" not in fast and "tanh" in slow


def test_weight_gradients_once_per_batch_equal_those_summed_per_depth():
    """Options.weight_grads_once: the weights' cotangents summed in one call per group
    over the batch's invocations give the gradients of the per-depth sums (and of
    per-instance jax.grad); the per-depth kernels then neither take nor return the
    gradients."""
    import jax
    params = make_params(treelstm)
    instances = make_batch("treelstm", 5, seed=21, short=(3, 7))
    once = batched("treelstm")
    loss, grads = once.value_and_grad(params, instances)
    per_depth = bladec.autobatch(treelstm.model, weight_grads_once=False)
    loss2, grads2 = per_depth.value_and_grad(params, instances)
    assert "node.bwd-kept" in per_depth.kernels() and \
        "node.wgrad-kept" not in per_depth.kernels()
    assert rel(loss, loss2) <= 1e-6
    _, want = reference(treelstm, params, instances)
    for a, b, c in zip(*(jax.tree_util.tree_leaves(x) for x in (grads, grads2, want))):
        assert rel(a, b) <= 1e-5 and rel(a, c) <= 1e-4
    ops = once.kernels()["node.bwd-ops-cot"]   # cotangent rows in, the weight's out
    assert len(ops.imported.input_names) == len(per_depth.kernels()["node.bwd-kept"]
                                                .imported.input_names)


@pytest.mark.slow
def test_kept_products_give_the_gradients_of_recomputing():
    import jax
    params = make_params(treelstm)
    instances = make_batch("treelstm", 4, seed=12, short=(2, 6))
    loss, kept = batched("treelstm").value_and_grad(params, instances)
    g = bladec.autobatch(treelstm.model, residuals=False)
    loss2, recomputed = g.value_and_grad(params, instances)
    assert "node.bwd-ops" in g.kernels() and "node.bwd-ops-kept" not in g.kernels()
    assert rel(loss, loss2) <= 1e-6
    for a, b in zip(jax.tree_util.tree_leaves(kept), jax.tree_util.tree_leaves(recomputed)):
        assert rel(a, b) <= 1e-5


def _ablation(switch: str, f) -> None:
    params = make_params(treelstm)
    instances = make_batch("treelstm", 3, seed=5, short=(2, 4))
    losses = losses_of(treelstm.model, params, instances)
    setattr(f.options, switch, False)
    try:
        assert rel(f(params, instances), losses) <= 1e-5
    finally:
        setattr(f.options, switch, True)
    if switch == "batched":    # every invocation its own call
        assert f.report().calls == f.report().invocations


def test_a_word_repeated_in_a_batch_is_one_leaf_invocation():
    """Options.dedupe: the leaf cell's invocations on the same word (no lazy operand,
    integer data) are one, in the batch's one leaf call, and every instance reads its
    outputs; the losses are the reference's, and those of the batch traced without it,
    which records every leaf."""
    f = batched("treelstm")
    params = make_params(treelstm)
    instances = [{"tree": [[3, 7], [3, [7, 3]]], "label": 1}, {"tree": [7, [3, 9]], "label": 2},
                 {"tree": [9, 9], "label": 0}]
    out = f(params, instances)
    leaves, nodes = 3, 4 + 2 + 1   # words 3, 7, 9; each instance's nodes
    assert f.report().invocations == leaves + nodes + len(instances)
    assert rel(out, losses_of(treelstm.model, params, instances)) <= 1e-5
    f.options.dedupe = False
    try:
        whole = f(params, instances)
        assert f.report().invocations == 5 + 3 + 2 + nodes + len(instances)
    finally:
        f.options.dedupe = True
    assert rel(out, whole) <= 1e-6


def test_instances_that_share_their_loss_invocation_each_count_in_the_gradient():
    """A loss that reads only integer data is one invocation for the instances with
    the same label (Options.dedupe): the summed loss and its gradient still count each
    instance (the backward's seed adds 1 per instance into the shared row)."""
    import jax
    import jax.numpy as jnp

    @bladec.batching.cell
    def prior(p, label):
        return jnp.sum(p["b"][label] ** 2)

    def model(p, label):
        return prior(p, label)
    p = {"b": jnp.arange(6, dtype=jnp.float32).reshape(3, 2) / 4}
    labels = [1, 2, 1, 1, 0]
    f = bladec.autobatch(model)
    loss, grads = f.value_and_grad(p, labels)
    assert f.report().invocations == 3
    want_loss, want = jax.value_and_grad(lambda q: sum(model(q, n) for n in labels))(p)
    assert rel(loss, want_loss) <= 1e-6 and rel(grads["b"], want["b"]) <= 1e-6


@pytest.mark.parametrize("switch", ["static_depth", "dedupe", "tabulate", "batched"])
def test_ablation_computes_the_same_outputs(switch):
    _ablation(switch, batched("treelstm"))


@pytest.mark.slow
@pytest.mark.parametrize("switch", ["fused_gathers", "coarse", "shared_weights"])
def test_ablation_with_kernels_of_its_own_computes_the_same_outputs(switch):
    _ablation(switch, bladec.autobatch(treelstm.model))


def test_compiled_executables_are_reused_across_batches():
    params = make_params(treelstm)
    f = batched("treelstm")
    f(params, make_batch("treelstm", 4, seed=0, short=(3, 3)))
    compiled = f.report().total_compilations
    f(params, make_batch("treelstm", 4, seed=1, short=(3, 3)))
    assert f.report().compilations == 0 and f.report().total_compilations == compiled
    kernels = f.kernels()
    assert {"leaf[tab].fwd", "node.fwd", "loss.fwd"} <= set(kernels)   # tabulate.py
    listing = kernels["node.fwd"].listing
    assert "func.func @main" in listing and "gather" in listing and "scatter" in listing


def test_weights_derived_from_parameters_are_kept_while_the_parameters_are_the_same():
    """The BiLSTM's weights stacked over its two directions and transposed (derived.py)
    are made once for a parameter set and kept from batch to batch; other parameters
    (new arrays, as a training step returns) make them again, and the outputs are those
    parameters' (a stale stack would give the first set's); once those parameters are
    gone, so is what was made from them (the cache holds no parameter alive)."""
    import gc

    import jax
    f = fresh("bilstm")
    params = make_params(bilstm)
    first, second = (make_batch("bilstm", 4, seed=s, short=(3, 5)) for s in (3, 4))
    f(params, first)
    made = f._derived.made
    assert made >= 1 and len(f._derived) >= 1
    out = f(params, second)
    assert f._derived.made == made   # the same arrays: nothing made again
    assert rel(out, losses_of(bilstm.model, params, second)) <= 1e-5
    other = jax.tree_util.tree_map(lambda x: x * 1.5 + 0.01, params)
    out = f(other, second)
    assert rel(out, losses_of(bilstm.model, other, second)) <= 1e-5
    assert f._derived.made == 2 * made
    del other
    gc.collect()
    assert len(f._derived) == 0   # made from `other` only: dropped with it


def test_groups_that_differ_only_in_their_weights_share_one_kernel():
    """Two layers of one cell with weights of one shape (an early-exit model's layers,
    a BiLSTM's directions): one kernel per kind, compiled once, the weights passed as
    its arguments; each layer's outputs and gradients are its own (the residual rows
    stay per layer)."""
    import jax
    import jax.numpy as jnp

    @bladec.batching.cell
    def dense(p, x):
        return jnp.tanh(p["w"] @ x + p["b"])

    @bladec.batching.cell
    def start(n):
        return jnp.full(4, n, jnp.float32) / 4

    @bladec.batching.cell
    def total(x):
        return jnp.sum(x * x)

    def model(p, n):   # both layers read a lazy value: one program
        return total(dense(p["second"], dense(p["first"], start(n))))
    rng = np.random.default_rng(7)
    p = {k: {"w": jnp.asarray(rng.standard_normal((4, 4)), jnp.float32),
             "b": jnp.asarray(rng.standard_normal(4), jnp.float32)}
         for k in ("first", "second")}
    f = bladec.autobatch(model)
    out = f(p, [1, 2, 3])
    assert rel(out, jax.jit(lambda q: jnp.stack([model(q, n) for n in (1, 2, 3)]))(p)) <= 1e-6
    layers = {n: k for n, k in f.kernels().items() if n.startswith("dense.")}
    assert list(layers) == ["dense.fwd"] and layers["dense.fwd"].compilations == 1
    _, grads = f.value_and_grad(p, [1, 2, 3])
    want = jax.jit(jax.grad(lambda q: sum(model(q, n) for n in (1, 2, 3))))(p)
    assert all(rel(grads[k][w], want[k][w]) <= 1e-5 for k in p for w in "wb")
    assert sorted(n for n in f.kernels() if n.startswith("dense.")) == \
        ["dense.bwd-ops-cot", "dense.fwd", "dense.keep", "dense.wgrad-cot"]

    def first_on_data(q, n):   # the first layer reads data: another signature
        return total(dense(q["second"], dense(q["first"], jnp.full(4, n / 4, jnp.float32))))
    g = bladec.autobatch(first_on_data)
    g(p, [1, 2])
    assert [n for n in g.kernels() if n.startswith("dense.")] == ["dense.fwd", "dense.fwd#2"]


def test_product_weights_reach_the_forward_kernels_transposed():
    """A weight read only as ``W @ x`` is passed transposed (program.flipped), one read
    as ``x @ W`` or elementwise as it is, to the inference and the training forward
    kernels; the outputs and the gradients are the reference's (the training forward
    computes a kept ``W @ x`` right operand first: residual.recording). The references
    are jitted (op by op they compiled 29 executables)."""
    import jax
    import jax.numpy as jnp

    @bladec.batching.cell
    def mixed(p, x):
        return jnp.tanh(p["a"] @ x + x @ p["b"] + p["c"] * x)

    def model(p, n):
        return mixed(p, mixed(p, jnp.full(4, float(n))))
    ramp = np.arange(16, dtype=np.float32).reshape(4, 4)
    p = {"a": jnp.asarray(ramp / 16), "b": jnp.asarray(np.eye(4, dtype=np.float32)[::-1] / 2),
         "c": jnp.asarray(ramp[0] / 8)}
    f = bladec.autobatch(model)
    out = f(p, [1, 2, 3])
    assert rel(out, jax.jit(lambda q: jnp.stack([model(q, n) for n in (1, 2, 3)]))(p)) <= 1e-6
    flips = [v for k, v in f._kernels.items() if k[0] == "flips"]   # a, b, c in order
    assert len(flips) == 2 and len(jax.tree_util.tree_leaves(p)) == 3   # x data, x lazy
    assert all(dict(zip("abc", v)) == {"a": True, "b": False, "c": False} for v in flips)

    @bladec.batching.cell
    def total(x):
        return jnp.sum(x)

    def scalar(p, n):
        return total(model(p, n))
    _, grads = bladec.autobatch(scalar).value_and_grad(p, [1, 2, 3])
    want = jax.jit(jax.grad(lambda q: sum(scalar(q, n) for n in (1, 2, 3))))(p)
    assert all(rel(grads[k], want[k]) <= 1e-5 for k in "abc")
    tree = batched("treelstm")   # hidden 8: its kernels shared with the tests above
    params, batch = make_params(treelstm, hidden=8), make_batch("treelstm", 3, seed=2)
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
    f = batched("treelstm")
    with pytest.raises(bladec.BladecError, match="no instances"):
        f(make_params(treelstm), [])

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
    instances = make_batch("treelstm", 3, seed=4, short=(2, 4))
    (tmp_path / "trees.json").write_text(json.dumps(instances))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "trees.json", "--json",
                                    "--batch", "2"])
    assert r.exit_code == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    losses = losses_of(treelstm.model, make_params(treelstm, hidden=4), instances)
    assert [x["instance"] for x in lines] == [0, 1, 2]
    assert rel([x["output"] for x in lines], losses) <= 1e-5
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
    (tmp_path / "trees.json").write_text(json.dumps(make_batch("treelstm", 3, 4, (2, 4))))
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
    params = make_params(bilstm)
    f = bladec.autobatch(bilstm.model)
    f(params, [{"tokens": [1, 2, 3, 4, 5], "label": 0}])          # a run of 4 steps
    assert {"step[tab].stack", "step[tab].stack-run4"} <= set(f.kernels())
    run4 = f.kernels()["step[tab].stack-run4"]
    calls, compiled = run4.calls, run4.compilations
    many = [{"tokens": [i % 30, 1], "label": i % 3} for i in range(8)]
    f(params, many)                                                # larger buffers
    assert run4.calls == calls and run4.compilations == compiled + 1   # warmed, not run
    batch = [{"tokens": [1, 2, 3, 4, 5], "label": 0}] + many[1:]
    want = losses_of(bilstm.model, params, batch[:3])
    assert rel(np.asarray(f(params, batch))[:3], want) <= 1e-5
    assert run4.calls == calls + 1 and run4.compilations == compiled + 1   # ran warm


def test_a_run_never_makes_a_batch_compile():
    """A run of steps whose executable is not compiled, in a batch that compiles
    nothing else, runs its steps one by one with the compiled one-step kernel (the same
    outputs); it compiles in a later batch that compiles anyway."""
    params = make_params(bilstm)
    f = bladec.autobatch(bilstm.model)
    short = [{"tokens": [1, 2, 3, 4], "label": i} for i in range(3)]
    f(params, short)                        # depths 1-3: three steps, no run
    assert "step[tab].stack-run4" not in f.kernels()
    longer = [{"tokens": [1, 2, 3, 4, 5], "label": i} for i in range(3)]
    out = np.asarray(f(params, longer))     # depths 1-4: a run of four, not compiled
    assert f.report().compilations == 0 and "step[tab].stack-run4" not in f.kernels()
    want = losses_of(bilstm.model, params, longer)
    assert rel(out, want) <= 1e-5
