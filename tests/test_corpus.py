"""The corpus of training steps (tests/corpus.py) through the importer and the runtime.

Every model: imports with and without hints, to the same relations, which agree with JAX's
dims at two bindings (``trace`` checks it); ``optimize`` succeeds; it runs under half of
its unconstrained peak (or, where that is out of reach, at the smallest limit that works,
as the planner names it, verified by running there), bit for bit what the unconstrained
run computes, and within float tolerance of calling the JAX function directly.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

from corpus import all_steps

from bladec.frontend import trace
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.limit import LimitError
from bladec.symbolic.shapes import analyze_shapes

STEPS = all_steps()
TOLERANCE = {"mixed_bf16": 3e-2}


@pytest.fixture(scope="module")
def imported():
    return {}


def _imports(imported, name):
    if name not in imported:
        st = STEPS[name]
        imported[name] = (trace(**st.spec()), trace(**st.spec(), hints=False))
    return imported[name]


def test_flax_is_in_the_corpus():
    pytest.importorskip("flax")
    assert "flax" in STEPS


@pytest.mark.parametrize("name", STEPS)
def test_imports_with_and_without_hints(imported, name):
    with_hints, without = _imports(imported, name)
    assert with_hints.hints == [] and without.hints == []
    a, b = analyze_shapes(with_hints.module), analyze_shapes(without.module)
    assert a.dims == b.dims                       # the same relations, proved both ways
    for value, dims in b.dims.items():            # and they are JAX's dims
        assert dims == without.jax_dims[value], value
    for binding in STEPS[name].bindings:
        from bladec.frontend.jax_import import check_dims
        check_dims(without, [without.binding(**binding)])


def _assert_close(got, want, tol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


# Planning under a limit, and the runtime's search for the smallest limit that works where
# half is out of reach, take tens of seconds per model on 2 cores: `make bench` runs these
# (the nine: 342 s on the shared machine, 2026-11-24; 149 s with main's faster search of
# 9489759 merged in; candidates for `make test` once that is in).
@pytest.mark.slow
@pytest.mark.parametrize("name", STEPS)
def test_runs_under_half_its_peak(imported, name):
    st = STEPS[name]
    imp, _ = _imports(imported, name)
    optimized = run_pipeline(imp.module, parse_pipeline("analyze,schedule,remat"))
    args = st.make(st.bindings[-1], 1)
    inputs = imp.flatten_inputs(*args)
    plain, base = Executor(imp.module, NumpyBackend()).run(inputs)
    limit = base.peak_bytes // 2
    executor = Executor(optimized, NumpyBackend())
    try:
        outputs, report = executor.run(inputs, limit=limit)
    except LimitError as exc:        # half is out of reach: the smallest limit that works
        assert limit < exc.smallest < base.peak_bytes
        limit = exc.smallest
        outputs, report = executor.run(inputs, limit=limit)
    assert report.peak_bytes <= limit
    for key in plain:                # bit for bit what the unconstrained run computes
        np.testing.assert_array_equal(outputs[key], plain[key])
    want = jax.jit(st.fn)(*args)
    _assert_close(imp.unflatten_outputs(outputs), want, TOLERANCE.get(name, 2e-4))
