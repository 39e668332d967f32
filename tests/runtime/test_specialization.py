"""The listing specialized at a binding with its short scans unrolled
(bladec/runtime/specialization.py) computes what the loop op computes: differential, on
the NumPy backend, with the corpus RNN over a ``lax.scan`` of a symbolic length."""
from __future__ import annotations

import numpy as np

from tests.support.corpus import all_steps

from bladec.frontend import trace
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.engine import optimize
from bladec.runtime.executor import Executor, unoptimized
from bladec.runtime.specialization import UNROLL_MAX, short_scans, specialized


def _rnn() -> tuple[Executor, object]:
    step = all_steps()["rnn"]
    imported = trace(**step.spec())
    return Executor(optimize(imported.module), NumpyBackend()), imported


def test_unrolled_listing_computes_what_the_loop_does() -> None:
    ex, imported = _rnn()
    dims = {"B": 3, "T": 5}
    binding = imported.binding(**dims)
    base = unoptimized(ex.module).main
    listing = specialized(base, ex.shapes_for(binding))
    assert listing is not None
    assert not any(op.name == "scan" for op in listing.main.ops)   # both scans unrolled
    assert all(d is not None for a in listing.main.args for d in a.type.dims)
    inputs = imported.flatten_inputs(*all_steps()["rnn"].make(dims, 3))
    want, _ = ex.run(inputs)
    got, _ = Executor(run_pipeline(listing, parse_pipeline(DEFAULT_PIPELINE)),
                      NumpyBackend()).run(inputs)
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)


def test_only_short_scans_are_unrolled() -> None:
    ex, imported = _rnn()
    base = unoptimized(ex.module).main
    long = ex.shapes_for(imported.binding(B=2, T=UNROLL_MAX + 1))
    assert short_scans(base, long) == [] and specialized(base, long) is None
    assert len(short_scans(base, ex.shapes_for(imported.binding(B=2, T=UNROLL_MAX)))) == 2
