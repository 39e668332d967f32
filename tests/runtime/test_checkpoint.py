"""Checkpointed scans (bladec/runtime/checkpoint.py): a forward/backward scan pair at a
binding rewritten to keep every k-th carry and recompute each chunk before its backward
steps computes what the loop ops compute: bit for bit where every op is its own kernel
(``bitwise``), within the fused tolerance otherwise. Differential, on an LSTM language
model and a plain RNN (tests/support/corpus.py) traced with T symbolic, at trip counts
that k divides, that it does not (a shorter last chunk), of one step, and longer than
``UNROLL_MAX``."""
from __future__ import annotations

import numpy as np
import pytest
from jax import export

from tests.support.corpus import all_steps
from tests.support.lstmlm import LstmLM

from bladec.frontend import trace
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.checkpoint import checkpointed, chunk_lengths, pairs
from bladec.runtime.engine import optimize
from bladec.runtime.executor import Executor, unoptimized

LSTM = LstmLM(hidden=8, vocab=16)


def _traced(name: str):
    """(the symbolic trace, a maker of its arguments at dims) of one step."""
    if name == "lstm":
        T, B = export.symbolic_shape("T, B")
        return (trace(LSTM.step, LSTM.specs(T, B), donate_argnums=(0,),
                      ranges={"T": (1, 64), "B": (1, 64)}), LSTM.args)
    step = all_steps()["rnn"]
    return trace(**step.spec()), step.make


def _compare(name: str, dims: dict[str, int], k: int, bitwise: bool) -> None:
    imported, make = _traced(name)
    backend = JaxBackend(bitwise=bitwise)
    ex = Executor(optimize(imported.module), backend)
    binding = imported.binding(**dims)
    shapes = ex.shapes_for(binding)
    base = unoptimized(ex.module).main
    listing = checkpointed(base, shapes, k)
    if dims["T"] <= k:
        assert listing is None   # one chunk: nothing to checkpoint
        return
    assert listing is not None
    scans = [op for op in listing.main.ops if op.name == "scan"]
    chunks = -(-dims["T"] // k)
    # the forward chunks, the backward's, and every chunk's recomputation
    assert len(scans) == 3 * chunks
    assert all(d is not None for a in listing.main.args for d in a.type.dims)
    inputs = imported.flatten_inputs(*make(dims, 3))
    want, _ = Executor(unoptimized(ex.module), backend).run(inputs)
    got, _ = Executor(run_pipeline(listing, parse_pipeline(DEFAULT_PIPELINE)),
                      backend).run(inputs)
    assert set(got) == set(want)
    for n in want:
        if bitwise:
            np.testing.assert_array_equal(got[n], want[n], err_msg=n)
        else:
            np.testing.assert_allclose(got[n], want[n], rtol=1e-5, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("name", ["lstm", "rnn"])
@pytest.mark.parametrize("T, k", [(6, 2), (7, 3), (20, 6), (1, 1), (3, 2)])
def test_checkpointed_pair_computes_what_the_loops_do(name: str, T: int, k: int) -> None:
    _compare(name, {"T": T, "B": 3}, k, bitwise=True)


@pytest.mark.parametrize("name", ["lstm", "rnn"])
def test_checkpointed_pair_fused(name: str) -> None:
    _compare(name, {"T": 17, "B": 2}, 5, bitwise=False)


def test_pairs_and_chunk_lengths() -> None:
    """The LSTM's gradient is one pair whose residuals are every stacked output of the
    forward scan but the hidden states the loss reads; the chunk lengths halve from
    T/2 down to the one that holds the fewest bytes by the loops' count."""
    imported, _ = _traced("lstm")
    ex = Executor(optimize(imported.module), JaxBackend())
    base = unoptimized(ex.module).main
    shapes = ex.shapes_for(imported.binding(T=40, B=4))
    (pair,) = pairs(base, shapes)
    assert pair.trips == 40 and not pair.forward.attrs.get("reverse")
    assert pair.backward.attrs.get("reverse")
    nk = 2
    stacked = len(pair.forward.results) - nk
    assert 0 < len(pair.residuals) == stacked - 1
    ks = chunk_lengths(base, shapes)
    assert ks[0] == 20 and ks == sorted(ks, reverse=True) and ks[-1] >= 1
    assert chunk_lengths(base, ex.shapes_for(imported.binding(T=1, B=4))) == []
