"""The corpus of training steps (tests/support/corpus.py) through the importer and the runtime.

Every model: imports with and without hints, to the same relations, which agree with JAX's
dims at two bindings (``trace`` checks it); ``optimize`` succeeds; it runs under half of
its unconstrained peak (or, where that is out of reach, at the smallest limit that works,
as the runtime names it, verified by running there), bit for bit what the unconstrained
run computes, and within float tolerance of calling the JAX function directly. `make test`
runs every check at each step's ``run`` binding; `make bench` repeats the runs at the
larger ``bench`` binding.
"""
from __future__ import annotations

import functools
import importlib.util

import jax
import numpy as np
import pytest

from bladec.frontend import trace
from bladec.frontend.jax_import import check_dims
from bladec.runtime.backends.backend import NumpyBackend
from bladec.symbolic.shapes import analyze_shapes

from tests.support.corpus import all_steps, corpus, run_under_half

# the names alone at collection: the Flax step (flax.linen's import and the model's
# shapes, about 1.2 s of CPU) is built by the worker that runs one of its tests
NAMES = [*corpus(), *(["flax"] if importlib.util.find_spec("flax") else [])]


@functools.cache
def _step(name: str):
    return all_steps()[name]


TOLERANCE = {"mixed_bf16": 3e-2}


@pytest.fixture(scope="module")
def imported():
    return {}


def _imports(imported, name):
    if name not in imported:
        st = _step(name)
        imported[name] = (trace(**st.spec()), trace(**st.spec(), hints=False))
    return imported[name]


def test_flax_is_in_the_corpus():
    pytest.importorskip("flax")
    assert "flax" in all_steps() and "flax" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_imports_with_and_without_hints(imported, name):
    with_hints, without = _imports(imported, name)
    assert with_hints.hints == [] and without.hints == []
    a, b = analyze_shapes(with_hints.module), analyze_shapes(without.module)
    assert a.dims == b.dims                       # the same relations, proved both ways
    for value, dims in b.dims.items():            # and they are JAX's dims
        assert dims == without.jax_dims[value], value
    for binding in _step(name).bindings:
        check_dims(without, [without.binding(**binding)])


def _assert_close(got, want, tol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _check_limit_run(imported, name: str, binding: dict[str, int]) -> None:
    st = _step(name)
    imp, _ = _imports(imported, name)
    run = run_under_half(imp, st, binding, NumpyBackend)
    if run.smallest:                 # half is out of reach: the smallest limit that works
        assert run.base // 2 < run.limit < run.base
    assert run.report.peak_bytes <= run.limit
    assert run.report.evictions > 0
    for key in run.plain:            # bit for bit what the unconstrained run computes
        np.testing.assert_array_equal(run.outputs[key], run.plain[key])
    # XLA's backend optimizations take half of the reference's compile time and change
    # nothing that a float tolerance would see
    want = jax.jit(st.fn).lower(*run.args).compile(
        compiler_options={"xla_backend_optimization_level": 0})(*run.args)
    _assert_close(imp.unflatten_outputs(run.outputs), want, TOLERANCE.get(name, 2e-4))


@pytest.mark.parametrize("name", [  # six of the nine steps: `make bench` (issue 36: 18 s of
    # 21; their imports are checked above, their runs at bench size below)
    pytest.param(n, marks=pytest.mark.slow)
    if n in ("bert", "encdec", "flax", "gpt2", "rnn", "vit") else n
    for n in NAMES])
def test_runs_under_half_its_peak(imported, name):
    """At the ``run`` binding: large enough that activations make the peak (half is
    within the planner's reach for most models, so the runtime's search for the
    smallest limit, tens of seconds on 2 cores, runs only where it is not)."""
    _check_limit_run(imported, name, _step(name).run)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_runs_under_half_its_peak_at_bench_size(imported, name):
    _check_limit_run(imported, name, _step(name).bench)
