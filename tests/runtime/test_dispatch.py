"""The hot path of a run that is one executable (bladec/runtime/dispatch.py): what the
engine hands back for later calls at the same shapes, and where it hands back none."""
from __future__ import annotations

import numpy as np

from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.engine import Engine

from tests.support.runtimecase import CHAIN, CUT, module_of, tight_limit


def _engine(text: str, backend, pad: dict[str, int] | None = None) -> Engine:
    return Engine(run_pipeline(module_of(text), parse_pipeline("analyze,remat")),
                  passes=[], backend=backend, pad=pad)


def test_one_executable_dispatches_as_the_engine_runs() -> None:
    """In any order of the inputs, the outputs the engine gives, counted as a step."""
    for backend in (JaxBackend(), NumpyBackend()):
        engine = _engine(CHAIN, backend)
        x = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
        arrays = {"%x": backend.put(x)}
        want, report = engine.call(dict(arrays))
        hot = engine.dispatcher(report, None, ["%unused", "%x"], ["%g", "%x"])
        assert hot is not None
        calls = engine.stats.calls
        got = hot([None, arrays["%x"]])
        assert engine.stats.calls == calls + 1 and engine.stats.last is hot.report
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want["%g"]))
        assert got[1] is arrays["%x"]   # an output that is an input (on the device)
        assert hot.report.compilations == 0 and hot.report.peak_bytes == report.peak_bytes
        assert hot.report.binding == {"S0": 6}


def test_no_hot_path_for_a_cut_plan_or_padding() -> None:
    """A plan cut into segments is run by the engine each time (execution.py measures
    its arrays); so is a padded call (padded and cut each time)."""
    engine = Engine(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")),
                    passes=[], backend=JaxBackend(one_memory=False))
    limit = tight_limit(engine.executor, {"S0": 256})
    rng = np.random.default_rng(1)
    arrays = {n: engine.backend.put(a) for n, a in
              engine.executor.random_inputs({"S0": 256}).items()}
    _, report = engine.call(dict(arrays), limit)
    assert report.segments > 1
    assert engine.dispatcher(report, limit, list(arrays), engine.outputs) is None
    _, free = engine.call(dict(arrays))
    assert engine.dispatcher(free, None, list(arrays), engine.outputs) is not None
    padded = _engine(CHAIN, NumpyBackend(), pad={"S0": 4})
    _, report = padded.call({"%x": rng.standard_normal((6, 8)).astype(np.float32)})
    assert padded.dispatcher(report, None, ["%x"], padded.outputs) is None
