"""The executor: binding, input checks, reports and caches, and the choice among schedule
versions."""
from __future__ import annotations

import json

from click.testing import CliRunner
import numpy as np
import pytest

from bladec.errors import BladecError
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.planning.plan import CostModel

from tests.support.runtimecase import (
    CHAIN, CUT, LISTING1, ROOT, SMALLEST, TWO_INPUTS, listing1_executor, module_of,
    run_cli, smallest_named, tight_limit)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# -- binding --------------------------------------------------------------------------
@pytest.mark.parametrize("s1", [1, 7, 100])
def test_bind_derives_s1_from_arg0(s1: int) -> None:
    ex = listing1_executor()
    assert ex.bind({"%arg0": (12 * s1,), "%arg1": (12, 11008)}) == {"S1": s1}
    shapes = ex.shapes_for({"S1": s1})
    assert shapes["%2"] == (s1, 12) and shapes["%1085"] == (1024, 12 * s1)


def test_run_binds_from_inputs() -> None:
    ex = listing1_executor()
    inputs = {"%arg0": np.ones(36, np.float32), "%arg1": np.ones((12, 11008), np.float32)}
    out, report = ex.run(inputs)
    assert report.binding == {"S1": 3}
    assert out["%5"].shape == (36,) and out["%6"].shape == (3,)
    np.testing.assert_array_equal(out["%5"], np.full(36, 1024, np.float32))
    np.testing.assert_array_equal(out["%6"], np.full(3, 11008 * 12 * 11008, np.float32))


def test_bind_non_divisible_length_is_a_clear_error() -> None:
    ex = listing1_executor()
    with pytest.raises(BladecError) as err:
        ex.bind({"%arg0": (100,), "%arg1": (12, 11008)})
    msg = str(err.value)
    assert "%arg0" in msg and "100" in msg and "12*S1" in msg
    inputs = {"%arg0": np.ones(100, np.float32), "%arg1": np.ones((12, 11008), np.float32)}
    with pytest.raises(BladecError, match="%arg0"):
        ex.run(inputs)


def test_bind_inconsistent_shapes_names_the_input() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    assert ex.bind({"%x": (3, 5), "%y": (5,)}) == {"S0": 3, "S1": 5}
    with pytest.raises(BladecError) as err:
        ex.bind({"%x": (3, 5), "%y": (4,)})
    assert "%y" in str(err.value) and "(4,)" in str(err.value)
    with pytest.raises(BladecError, match="%y"):
        ex.run({"%x": np.zeros((3, 5), np.float32), "%y": np.zeros(4, np.float32)})


def test_bind_rank_mismatch_is_a_bladec_error() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError, match="%y"):
        ex.run({"%x": np.zeros((3, 5), np.float32), "%y": np.zeros((5, 1), np.float32)})


def test_bind_outside_declared_range() -> None:
    text = TWO_INPUTS + "func.func @symbolic_shape_graph() {\n  SymbolicDim @S0 {max = 4}\n}\n"
    ex = Executor(module_of(text), NumpyBackend())
    with pytest.raises(BladecError, match="S0=9"):
        ex.bind({"%x": (9, 5), "%y": (5,)})


def test_bind_reshape_that_keeps_a_symbolic_dim() -> None:
    text = """
func.func @main(%x: tensor<?x?x?, [@S0, @S1, @S1]>) {
  %y = reshape(%x) -> tensor<?x?, [@S2, @S1]>
  %z = tanh(%y) -> tensor<?x?, [@S2, @S1]>
  return %z
}
"""
    ex = Executor(module_of(text), NumpyBackend())
    assert ex.bind({"%x": (2, 3, 3)}) == {"S0": 2, "S1": 3}


def test_failed_run_loses_nothing() -> None:
    """Over the limit: an error before anything runs; the inputs are untouched, and the
    same executor then runs at the limit it named."""
    ex = Executor(run_pipeline(module_of(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
    inputs = ex.random_inputs({"S0": 4})
    copies = {k: v.copy() for k, v in inputs.items()}
    with pytest.raises(BladecError) as err:
        ex.run(inputs, 10)
    smallest = int(SMALLEST.search(str(err.value)).group(1))
    assert all(np.array_equal(inputs[k], copies[k]) for k in inputs)
    ref, _ = ex.run(inputs)
    out, report = ex.run(inputs, smallest)
    assert report.peak_bytes <= smallest
    assert out["%g"].tobytes() == ref["%g"].tobytes()


def test_missing_input() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError, match=r"missing input\(s\) %y"):
        ex.run({"%x": np.zeros((3, 5), np.float32)})


def test_extra_input_is_an_error() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    inputs = {"%x": np.zeros((3, 5), np.float32), "%y": np.zeros(5, np.float32),
              "%z": np.zeros(5, np.float32)}
    with pytest.raises(BladecError, match="%z"):
        ex.run(inputs)


def test_wrong_dtype_names_input_and_types() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError) as err:
        ex.run({"%x": np.zeros((3, 5), np.float64), "%y": np.zeros(5, np.float32)})
    msg = str(err.value)
    assert "%x" in msg and "float64" in msg and "f32" in msg


def test_random_inputs_are_seeded_and_typed() -> None:
    ex = Executor(module_of(TWO_INPUTS), NumpyBackend())
    a = ex.random_inputs({"S0": 2, "S1": 3}, seed=1)
    b = ex.random_inputs({"S0": 2, "S1": 3}, seed=1)
    c = ex.random_inputs({"S0": 2, "S1": 3}, seed=2)
    assert a["%x"].shape == (2, 3) and a["%x"].dtype == np.float32 and a["%y"].shape == (3,)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["%x"], c["%x"])


# -- the executor's reports and caches --------------------------------------------------
def test_unconstrained_run_is_one_segment_without_eviction() -> None:
    ex = Executor(run_pipeline(module_of(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
    inputs = ex.random_inputs({"S0": 6})
    _, report = ex.run(inputs)
    assert report.segments == 1 and report.evictions == report.reloads == report.recomputes == 0
    assert report.peak_bytes == report.planned_peak_bytes


def test_jax_compilation_cache_per_binding(monkeypatch) -> None:
    # one order at no limit (the choice between bladec's and XLA's: test_orders.py)
    monkeypatch.setenv("BLADEC_NO_LIMIT_ORDER", "bladec")
    module = run_pipeline(module_of(CHAIN), parse_pipeline("analyze,remat"))
    ex = Executor(module, JaxBackend())
    inputs = ex.random_inputs({"S0": 6})
    out1, first = ex.run(inputs)
    assert first.compilations == 1 and first.segments == 1
    assert 0 < first.compile_seconds <= first.seconds
    out2, again = ex.run(inputs)
    assert again.compilations == 0 and again.segments == 1 and again.compile_seconds == 0
    assert len(ex.backend.executables()) == 1
    assert out1["%g"].tobytes() == out2["%g"].tobytes()
    # under a limit: several segments, compiled once, then reused (a fixed cost model:
    # the measured copy bandwidth varies with the machine's load, and with it the plan;
    # planned as for a device with its own memory: CUT's plans reload, which on a CPU
    # device, one memory, would free nothing)
    ex = Executor(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")),
                  JaxBackend(one_memory=False), cost=CostModel())
    inputs = ex.random_inputs({"S0": 256})
    before = ex.backend.compilations
    limit = tight_limit(ex, {"S0": 256})   # plans and compiles to check the device peak
    assert ex.backend.compilations > before
    _, tight = ex.run(inputs, limit)
    assert tight.evictions > 0 and tight.segments > 1
    _, tight2 = ex.run(inputs, limit)
    assert tight2.compilations == 0 and tight2.segments == tight.segments
    # a new binding compiles again, and only once
    other = ex.random_inputs({"S0": 200})
    _, new = ex.run(other)
    assert new.compilations == 1 and new.binding == {"S0": 200}
    _, new2 = ex.run(other)
    assert new2.compilations == 0


def test_numpy_backend_never_compiles() -> None:
    ex = Executor(module_of(CHAIN), NumpyBackend())
    _, report = ex.run(ex.random_inputs({"S0": 3}))
    assert report.compilations == 0 and report.compile_seconds == 0 and report.segments == 1


# -- schedule versions --------------------------------------------------------------------
DIAMOND = ROOT / "samples" / "diamond.mlir"


@pytest.mark.parametrize("dims, version", [({"S0": 4000, "S1": 100}, "main"),
                                           ({"S0": 100, "S1": 4000}, "main.v1")])
def test_the_version_with_the_lower_peak_runs(dims, version) -> None:
    """diamond.mlir's two tower orders: each binding runs the better one, bitwise equal."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.analysis.version import versions

    module = module_of(path=DIAMOND)
    optimized = run_pipeline(module, parse_pipeline("analyze,schedule,remat"))
    assert len(versions(optimized)) == 2
    original = Executor(module, NumpyBackend())
    inputs = original.random_inputs(dims, 3)
    ref, ref_report = original.run(inputs)
    ex = Executor(optimized, NumpyBackend())
    sizes = exact_sizes(ex.info, dims)
    peaks = {f.name: exact_peak(f, sizes) for f in versions(optimized)}
    assert peaks[version] == min(peaks.values()) and len(set(peaks.values())) == 2
    for limit in (None, smallest_named(ex, dims)):
        out, report = ex.run(inputs, limit)
        assert report.version == version
        assert report.planned_peak_bytes == peaks[version] < ref_report.model_peak_bytes
        assert all(out[k].tobytes() == ref[k].tobytes() for k in ref)


def test_cli_names_the_version_it_ran(runner) -> None:
    result = run_cli(runner, str(DIAMOND), "--dims", "S0=100,S1=4000", "--backend", "numpy")
    assert result.exit_code == 0, result.output
    assert "order: @main.v1 (a schedule version)" in result.stdout
    result = run_cli(runner, str(DIAMOND), "--dims", "S0=100,S1=4000", "--backend", "numpy",
                  "--json")
    assert json.loads(result.stdout)["version"] == "main.v1"


def test_device_peak_is_reported_where_the_device_keeps_statistics(runner, monkeypatch) -> None:
    """CPU keeps no memory statistics: None; a GPU's peak_bytes_in_use is passed through."""
    backend = JaxBackend()
    assert backend.device_peak_bytes() is None  # these tests run on CPU

    class FakeGpu:
        def memory_stats(self):
            return {"bytes_in_use": 10, "peak_bytes_in_use": 12345}

    monkeypatch.setattr(backend, "_stats_device", FakeGpu())
    assert backend.device_peak_bytes() == 12345
    result = run_cli(runner, str(LISTING1), "--dims", "S1=8", "--json")
    assert json.loads(result.stdout)["device_peak_bytes"] is None
    result = run_cli(runner, str(LISTING1), "--dims", "S1=8")
    assert "allocator peak (the device's own statistics): not reported by this device" \
        in result.stdout


# -- execution ------------------------------------------------------------------------
def test_later_runs_of_a_prepared_run_dispatch_with_the_figures_the_first_counted(
        monkeypatch) -> None:
    """The first run of a prepared run counts what it holds from its arrays; later runs
    (same binding and limit, so the same shapes) dispatch only and report the same
    figures, with the same outputs, under a limit that cuts the step."""
    ex = Executor(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")),
                  NumpyBackend(), cost=CostModel())
    binding = {"S0": 256}
    limit = tight_limit(ex, binding)
    inputs = ex.random_inputs(binding, 0)
    first_out, first = ex.run(inputs, limit)
    assert first.segments > 1 and first.peak_bytes <= limit
    counted = []
    nbytes = ex.backend.nbytes
    monkeypatch.setattr(ex.backend, "nbytes", lambda x: counted.append(x) or nbytes(x))
    again_out, again = ex.run(inputs, limit)
    assert counted == []   # nothing counted again: the first run's figures
    for name in ("peak_bytes", "held_peak_bytes", "host_peak_bytes", "segment_memory"):
        assert getattr(again, name) == getattr(first, name), name
    for name, value in first_out.items():
        assert np.array_equal(again_out[name], value), name
    monkeypatch.setattr(ex.backend, "nbytes", nbytes)
    _, profiled = ex.run(inputs, limit, profile=True)   # profiling counts and times again
    assert profiled.peak_bytes == first.peak_bytes
    assert len(profiled.segment_seconds) == first.segments
