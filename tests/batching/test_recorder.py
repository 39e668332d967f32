"""The recorders generated per argument pattern (bladec/batching/recorder.py) record
exactly what the general path records: the same groups, rows, depths, order, data tables
and outputs, on every model and on arguments made to leave the pattern; and where the
general path refuses an argument, so does a cell that has a recorder."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.batching import value
from bladec.batching.recorder import MISS
from bladec.errors import BladecError
from bladec.models import treelstm

from tests.support.autobatchcase import MODELS, make_batch, make_params


def _leaves(params):
    import jax
    return jax.tree_util.tree_leaves(params)


def _recorded(mod, params, instances, specialize: bool):
    """The records of one trace: per group its signature, rows, depths and order; the
    data tables; each instance's outputs as (buffer, row, depth)."""
    leaves = _leaves(params)
    rec = value.Recording({id(x): i for i, x in enumerate(leaves)}, params,
                          specialize=specialize)
    outs = []
    with value.tracing(rec, leaves):
        for instance in instances:
            rec.starts.append(rec.invocations)
            out = mod.model(params, instance)
            outs.append((out.code, out.row, out.depth))
        made = {c.name: len(v) for c, v in rec.recorders.items()} if specialize else {}
        rec.finish()
    groups = {g.signature: (g.flat.tolist(), g.depths.tolist(), g.order.tolist())
              for g in rec.groups.values()}
    data = {k: [None if x is None else np.asarray(x).tolist() for x in v]
            for k, v in rec.data.items()}
    return groups, data, rec.rows, rec.starts, outs, made


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("dedupe", [True, False])
def test_the_same_records_as_the_general_path(name, dedupe):
    mod = MODELS[name][0]
    params = make_params(mod)
    instances = make_batch(name, 12, seed=5)
    general = _recorded(mod, params, instances, specialize=False)
    special = _recorded(mod, params, instances, specialize=True)
    assert special[:5] == general[:5]
    assert special[5] and all(n >= 1 for n in special[5].values())   # recorders ran


def _trace(cells_calls, specialize: bool):
    """Record the calls ``cells_calls(params)`` makes; its records and results."""
    params = make_params(treelstm)
    leaves = _leaves(params)
    rec = value.Recording({id(x): i for i, x in enumerate(leaves)}, params,
                          specialize=specialize)
    with value.tracing(rec, leaves):
        results = cells_calls(params)
        rec.finish()
    flat = lambda r: [(x.code, x.row, x.depth) if isinstance(x, value.Lazy) else x
                      for x in (r if isinstance(r, tuple) else (r,))]
    return ({g.signature: g.flat.tolist() for g in rec.groups.values()},
            {k: [None if x is None else np.asarray(x).tolist() for x in v]
             for k, v in rec.data.items()},
            [flat(r) for r in results])


@value.cell
def _mix(p, pair, x):
    import jax.numpy as jnp
    return pair[0] * p["b"][:8].sum() + jnp.sum(x)


def test_arguments_outside_the_pattern_are_recorded_as_the_general_path_does():
    """A pattern is made by the first call; then calls whose arguments differ in each
    way the pattern checks (an int where a float was, a longer tuple, a list for a
    tuple, another parameter subtree, an array of another shape, a lazy value of
    another buffer) and calls that match it again."""
    def calls(params):
        h, c = treelstm.leaf(params["emb"], params["leaf"], 1)
        out = [_mix(params["leaf"], (h, c), 0.5),
               _mix(params["leaf"], (h, c), 2),
               _mix(params["leaf"], (h, c, h), 0.5),
               _mix(params["leaf"], [h, c], 0.5),
               _mix(params["node"], (h, c), 0.5),
               _mix(params["leaf"], (h, c), np.ones(8, np.float32)),
               _mix(params["leaf"], (h, c), np.ones(3, np.float32)),
               _mix(params["leaf"], (h, c), np.ones(3, np.float32)),
               _mix(params["leaf"], (np.float32(1.0), c), 0.5),
               _mix(params["leaf"], (h, c), 1.5)]
        return out
    assert _trace(calls, True) == _trace(calls, False)


def test_a_lazy_value_of_another_trace_is_refused_with_or_without_a_recorder():
    params = make_params(treelstm)
    leaves = _leaves(params)
    old = value.Recording({id(x): i for i, x in enumerate(leaves)}, params)
    with value.tracing(old, leaves):
        stale = treelstm.leaf(params["emb"], params["leaf"], 1)
    rec = value.Recording({id(x): i for i, x in enumerate(leaves)}, params)
    with value.tracing(rec, leaves):
        fresh = treelstm.leaf(params["emb"], params["leaf"], 2)
        treelstm.node(params["node"], fresh, fresh)
        treelstm.node(params["node"], fresh, fresh)
        assert rec.recorders[treelstm.node]
        assert rec.recorders[treelstm.node][0]((params["node"], fresh, stale)) is MISS
        with pytest.raises(BladecError, match="another trace"):
            treelstm.node(params["node"], fresh, stale)


def test_repeated_integer_data_are_deduplicated_by_the_recorder():
    """A leaf on a word seen before returns the same outputs (Options.dedupe), by the
    recorder as by the general path; a float never is (0.0 == -0.0)."""
    params = make_params(treelstm)
    leaves = _leaves(params)
    rec = value.Recording({id(x): i for i, x in enumerate(leaves)}, params)
    with value.tracing(rec, leaves):
        a = treelstm.leaf(params["emb"], params["leaf"], 7)
        b = treelstm.leaf(params["emb"], params["leaf"], 8)
        c = treelstm.leaf(params["emb"], params["leaf"], 7)
        assert rec.recorders[treelstm.leaf]
        assert c is a and b is not a
        x = _mix(params["leaf"], a, 0.0)
        y = _mix(params["leaf"], a, 0.0)
        assert x is not y


def test_a_batch_gives_the_same_outputs_with_and_without_recorders():
    """End to end: the batched outputs and the calls made are the same whether the
    trace records by generated recorders or by the general walk (the same records,
    so the same schedule and kernels)."""
    import bladec
    from tests.support.autobatchcase import batched
    params = make_params(treelstm)
    instances = make_batch("treelstm", 6, seed=31)
    on = batched("treelstm")
    off = bladec.autobatch(treelstm.model, specialize=False)
    a, b = np.asarray(on(params, instances)), np.asarray(off(params, instances))
    assert np.array_equal(a, b)
    assert on.report().calls == off.report().calls
    assert on.report().invocations == off.report().invocations
