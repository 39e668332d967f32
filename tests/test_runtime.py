"""The executor and `bladec run`: binding, input checks, reports, files, caching."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bladec.cli import main
from bladec.errors import BladecError, BladecWarning
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backend import NumpyBackend
from bladec.runtime.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.runtime.plan import CostModel

SMALLEST = re.compile(r"smallest limit that works is [^(]*\((\d+) bytes")
ROOT = Path(__file__).resolve().parent.parent
LISTING1 = ROOT / "samples" / "listing1-runnable.mlir"

TWO_INPUTS = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>, %y: tensor<?, [@S1]>) {
  %b = broadcast_in_dim(%y) {dims = [1]} -> tensor<?x?, [@S0, @S1]>
  %s = add(%x, %b) -> tensor<?x?, [@S0, @S1]>
  %t = tanh(%s) -> tensor<?x?, [@S0, @S1]>
  return %t
}
"""

# elementwise only: zero padding is harmless (row i of the result depends on row i only)
ELEMENTWISE = """
func.func @main(%x: tensor<?x4, [@S0, @C4]>) {
  %a = tanh(%x) -> tensor<?x4, [@S0, @C4]>
  %b = mul(%a, %x) -> tensor<?x4, [@S0, @C4]>
  return %b
}
"""

# a chain whose middle must be evicted under a tight limit: several segments
CHAIN = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %a = exp(%x) -> tensor<?x8, [@S0, @C8]>
  %b = broadcast_in_dim(%a) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %c = reduce(%b) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %d = tanh(%c) -> tensor<?x8, [@S0, @C8]>
  %e = broadcast_in_dim(%d) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %f = reduce(%e) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %g = add(%f, %a) -> tensor<?x8, [@S0, @C8]>
  return %g
}
"""

# a wide %a made early and read last, around a widening chain whose segment outputs are
# small: evicting %a lowers the device peak on both backends (XLA and NumPy alike)
CUT = """
func.func @main(%x: tensor<?x64, [@S0, @C64]>, %w1: tensor<64x256>, %w2: tensor<256x64>, %w3: tensor<64x1024>, %w4: tensor<1024x64>) {
  %a = dot(%x, %w1) -> tensor<?x256, [@S0, @C256]>
  %b = dot(%a, %w2) -> tensor<?x64, [@S0, @C64]>
  %c = dot(%b, %w3) -> tensor<?x1024, [@S0, @C1024]>
  %d = dot(%c, %w4) -> tensor<?x64, [@S0, @C64]>
  %g = concatenate(%a, %d) {dim = 1} -> tensor<?x320, [@S0, @C320]>
  return %g
}
"""


def _module(text: str = "", path: Path | None = None):
    return parse_module(path.read_text() if path else text, str(path or "<test>"))


def _listing1_executor(backend=None) -> Executor:
    return Executor(_module(path=LISTING1), backend or NumpyBackend())


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# -- binding --------------------------------------------------------------------------
@pytest.mark.parametrize("s1", [1, 7, 100])
def test_bind_derives_s1_from_arg0(s1: int) -> None:
    ex = _listing1_executor()
    assert ex.bind({"%arg0": (12 * s1,), "%arg1": (12, 11008)}) == {"S1": s1}
    shapes = ex.shapes_for({"S1": s1})
    assert shapes["%2"] == (s1, 12) and shapes["%1085"] == (1024, 12 * s1)


def test_run_binds_from_inputs() -> None:
    ex = _listing1_executor()
    inputs = {"%arg0": np.ones(36, np.float32), "%arg1": np.ones((12, 11008), np.float32)}
    out, report = ex.run(inputs)
    assert report.binding == {"S1": 3}
    assert out["%5"].shape == (36,) and out["%6"].shape == (3,)
    np.testing.assert_array_equal(out["%5"], np.full(36, 1024, np.float32))
    np.testing.assert_array_equal(out["%6"], np.full(3, 11008 * 12 * 11008, np.float32))


def test_bind_non_divisible_length_is_a_clear_error() -> None:
    ex = _listing1_executor()
    with pytest.raises(BladecError) as err:
        ex.bind({"%arg0": (100,), "%arg1": (12, 11008)})
    msg = str(err.value)
    assert "%arg0" in msg and "100" in msg and "12*S1" in msg
    inputs = {"%arg0": np.ones(100, np.float32), "%arg1": np.ones((12, 11008), np.float32)}
    with pytest.raises(BladecError, match="%arg0"):
        ex.run(inputs)


def test_bind_inconsistent_shapes_names_the_input() -> None:
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    assert ex.bind({"%x": (3, 5), "%y": (5,)}) == {"S0": 3, "S1": 5}
    with pytest.raises(BladecError) as err:
        ex.bind({"%x": (3, 5), "%y": (4,)})
    assert "%y" in str(err.value) and "(4,)" in str(err.value)
    with pytest.raises(BladecError, match="%y"):
        ex.run({"%x": np.zeros((3, 5), np.float32), "%y": np.zeros(4, np.float32)})


def test_bind_rank_mismatch_is_a_bladec_error() -> None:
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError, match="%y"):
        ex.run({"%x": np.zeros((3, 5), np.float32), "%y": np.zeros((5, 1), np.float32)})


def test_bind_outside_declared_range() -> None:
    text = TWO_INPUTS + "func.func @symbolic_shape_graph() {\n  SymbolicDim @S0 {max = 4}\n}\n"
    ex = Executor(_module(text), NumpyBackend())
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
    ex = Executor(_module(text), NumpyBackend())
    assert ex.bind({"%x": (2, 3, 3)}) == {"S0": 2, "S1": 3}


def test_failed_run_loses_nothing() -> None:
    """Over the limit: an error before anything runs; the inputs are untouched, and the
    same executor then runs at the limit it named."""
    ex = Executor(run_pipeline(_module(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
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
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError, match=r"missing input\(s\) %y"):
        ex.run({"%x": np.zeros((3, 5), np.float32)})


def test_extra_input_is_an_error() -> None:
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    inputs = {"%x": np.zeros((3, 5), np.float32), "%y": np.zeros(5, np.float32),
              "%z": np.zeros(5, np.float32)}
    with pytest.raises(BladecError, match="%z"):
        ex.run(inputs)


def test_wrong_dtype_names_input_and_types() -> None:
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    with pytest.raises(BladecError) as err:
        ex.run({"%x": np.zeros((3, 5), np.float64), "%y": np.zeros(5, np.float32)})
    msg = str(err.value)
    assert "%x" in msg and "float64" in msg and "f32" in msg


def test_random_inputs_are_seeded_and_typed() -> None:
    ex = Executor(_module(TWO_INPUTS), NumpyBackend())
    a = ex.random_inputs({"S0": 2, "S1": 3}, seed=1)
    b = ex.random_inputs({"S0": 2, "S1": 3}, seed=1)
    c = ex.random_inputs({"S0": 2, "S1": 3}, seed=2)
    assert a["%x"].shape == (2, 3) and a["%x"].dtype == np.float32 and a["%y"].shape == (3,)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["%x"], c["%x"])


# -- the executor's reports and caches --------------------------------------------------
def test_unconstrained_run_is_one_segment_without_eviction() -> None:
    ex = Executor(run_pipeline(_module(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
    inputs = ex.random_inputs({"S0": 6})
    _, report = ex.run(inputs)
    assert report.segments == 1 and report.evictions == report.reloads == report.recomputes == 0
    assert report.peak_bytes == report.planned_peak_bytes


def _tight(ex: Executor, binding: dict[str, int]) -> int:
    """A limit under the unconstrained device peak that the executor meets (plans and
    compiles, runs nothing)."""
    peak = ex.prepare(binding, None).device.peak
    try:
        ex.prepare(binding, peak - 1)
        return peak - 1
    except BladecError as exc:
        return int(SMALLEST.search(str(exc)).group(1))


def test_jax_compilation_cache_per_binding() -> None:
    module = run_pipeline(_module(CHAIN), parse_pipeline("analyze,remat"))
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
    # the measured copy bandwidth varies with the machine's load, and with it the plan)
    ex = Executor(run_pipeline(_module(CUT), parse_pipeline("analyze,remat")), JaxBackend(),
                  cost=CostModel())
    inputs = ex.random_inputs({"S0": 256})
    before = ex.backend.compilations
    limit = _tight(ex, {"S0": 256})   # plans and compiles to check the device peak
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
    ex = Executor(_module(CHAIN), NumpyBackend())
    _, report = ex.run(ex.random_inputs({"S0": 3}))
    assert report.compilations == 0 and report.compile_seconds == 0 and report.segments == 1


# -- bladec run -------------------------------------------------------------------------
def _run(runner: CliRunner, *args: str, input: str | None = None):
    return runner.invoke(main, ["run", *args], input=input)


def test_cli_text_report(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "-p", "analyze,remat", "--backend", "numpy")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for field in ("binding: S1=64", "limit: 4.60 MiB", "peak: ", "model peak:",
                  "without eviction", "original order", "host copies:", "evictions:", "reloads:",
                  "recomputes:", "segments:", "compilations:", "time:"):
        assert field in out, field
    assert "evictions: 0," not in out  # half the peak needs evictions
    assert "Traceback" not in result.output


def test_cli_json_report(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "-p", "analyze,remat", "--json", "--backend", "numpy")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("peak_bytes", "limit", "evictions", "reloads", "recomputes", "compilations",
                "seconds", "binding"):
        assert key in data, key
    assert data["binding"] == {"S1": 64} and data["limit"] == 4822016
    assert 0 < data["peak_bytes"] <= 4822016
    assert data["evictions"] > 0 and data["reloads"] + data["recomputes"] > 0
    assert data["compilations"] == 0 and data["seconds"] > 0  # numpy compiles nothing
    assert data["outputs"] == {"%5": [768], "%6": [64], "%7": [768]}


def _listing1_numpy(arg0: np.ndarray, arg1: np.ndarray) -> dict[str, np.ndarray]:
    """Listing 1 (runnable) written directly in NumPy, in float64."""
    a0, a1 = arg0.astype(np.float64), arg1.astype(np.float64)
    s1 = a0.shape[0] // 12
    r4 = (a0.reshape(s1, 12) @ a1).sum(axis=1)
    return {"5": 1024 * a0, "6": 11008 * r4, "7": 1024 * a0}


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_cli_inputs_outputs_round_trip(runner, tmp_path, backend) -> None:
    rng = np.random.default_rng(3)
    arg0 = rng.standard_normal(12 * 5).astype(np.float32)
    arg1 = rng.standard_normal((12, 11008)).astype(np.float32)
    np.savez(tmp_path / "in.npz", arg0=arg0, arg1=arg1)
    out_path = tmp_path / "out.npz"
    result = _run(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                  str(out_path), "--backend", backend, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["binding"] == {"S1": 5}
    got = dict(np.load(out_path))
    want = _listing1_numpy(arg0, arg1)
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == np.float32 and got[k].shape == want[k].shape
        np.testing.assert_allclose(got[k], want[k], rtol=2e-4, atol=1e-2)


def test_cli_inputs_npz_missing_array(runner, tmp_path) -> None:
    np.savez(tmp_path / "in.npz", arg0=np.zeros(24, np.float32))
    result = _run(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"),
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "arg1" in result.stderr and "Traceback" not in result.output


def test_cli_inputs_npz_bad_shape(runner, tmp_path) -> None:
    np.savez(tmp_path / "in.npz", arg0=np.zeros(25, np.float32),
             arg1=np.zeros((12, 11008), np.float32))
    result = _run(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"),
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "%arg0" in result.stderr and "Traceback" not in result.output


def _outputs(runner, tmp_path, name: str, *args: str) -> dict[str, np.ndarray]:
    path = tmp_path / name
    result = _run(runner, str(LISTING1), "--dims", "S1=3", "--backend", "numpy", "--outputs",
                  str(path), *args)
    assert result.exit_code == 0, result.output
    return dict(np.load(path))


def test_cli_seed_determinism(runner, tmp_path) -> None:
    a = _outputs(runner, tmp_path, "a.npz", "--seed", "5")
    b = _outputs(runner, tmp_path, "b.npz", "--seed", "5")
    c = _outputs(runner, tmp_path, "c.npz", "--seed", "6")
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert any(a[k].tobytes() != c[k].tobytes() for k in a)


def test_cli_timeline_csv(runner, tmp_path) -> None:
    path = tmp_path / "x.csv"
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "-p", "analyze,remat", "--backend", "numpy", "--timeline", str(path))
    assert result.exit_code == 0, result.output
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    # one row per op of the original listing, in its order; the plan's memory at that op
    assert [r["op"] for r in rows] == [str(i) for i in range(9)]
    assert [r["name"] for r in rows] == ["%1", "%2", "%3", "%4", "%1084", "%1085", "%5", "%6",
                                         "%7"]
    original = [int(r["original_bytes"]) for r in rows]
    plan = [int(r["plan_bytes"]) for r in rows]
    assert sorted(int(r["plan_position"]) for r in rows) == list(range(9))
    assert all(r["limit_bytes"] == "4822016" for r in rows)
    assert max(plan) <= 4822016 < max(original)
    # the plan's events: what the run reported, on the ops they belong to
    evicted = [v for r in rows for v in r["evicted_after"].split()]
    regenerated = [v for r in rows for k in ("reloaded_before", "recomputed_before")
                   for v in r[k].split()]
    assert evicted and sorted(evicted) == sorted(regenerated)


def test_cli_timeline_png(runner, tmp_path) -> None:
    path = tmp_path / "x.png"
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "--backend", "numpy", "--timeline", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_cli_timeline_bad_suffix(runner, tmp_path) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=2", "--backend", "numpy",
                  "--timeline", str(tmp_path / "x.txt"))
    assert result.exit_code == 1 and ".csv" in result.stderr


def test_cli_too_small_limit(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=4", "--mem-limit", "1000",
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "smallest limit" in result.stderr
    assert "Traceback" not in result.output and result.stdout == ""
    # the limit it names works
    smallest = SMALLEST.search(result.stderr)
    ok = _run(runner, str(LISTING1), "--dims", "S1=4", "--mem-limit", smallest.group(1),
              "--backend", "numpy", "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["peak_bytes"] <= int(smallest.group(1))


@pytest.mark.parametrize("args, message", [
    (["--dims", "S1=x"], "bad --dims"),
    (["--dims", "S1=0"], "bad --dims"),
    (["--dims", "S1"], "bad --dims"),
    (["--dims", "S1=4", "--mem-limit", "12XB"], "bad size"),
    (["--dims", "S1=4", "--mem-limit", "lots"], "bad size"),
    (["--dims", "S9=4"], "S1"),
])
def test_cli_bad_dims_and_sizes(runner, args, message) -> None:
    result = _run(runner, str(LISTING1), "--backend", "numpy", *args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_cli_backend_numpy(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=2", "--backend", "numpy", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["device"].startswith("numpy") and data["compilations"] == 0
    bad = _run(runner, str(LISTING1), "--dims", "S1=2", "--backend", "torch")
    assert bad.exit_code == 2


def test_cli_pad_multiple(runner, tmp_path) -> None:
    in_path = tmp_path / "listing.mlir"
    in_path.write_text(ELEMENTWISE)
    plain = _run(runner, str(in_path), "--dims", "S0=5", "--backend", "numpy", "--json",
                 "--outputs", str(tmp_path / "plain.npz"))
    padded = _run(runner, str(in_path), "--dims", "S0=5", "--backend", "numpy", "--json",
                  "--pad-multiple", "8", "--outputs", str(tmp_path / "padded.npz"))
    assert plain.exit_code == 0 and padded.exit_code == 0, padded.output
    assert json.loads(plain.stdout)["binding"] == {"S0": 5}
    assert json.loads(padded.stdout)["binding"] == {"S0": 8}
    a, b = np.load(tmp_path / "plain.npz")["b"], np.load(tmp_path / "padded.npz")["b"]
    assert a.shape == (5, 4) and b.shape == (8, 4)
    np.testing.assert_array_equal(b[:5], a)   # the same seed gives the same first rows
    np.testing.assert_array_equal(b[5:], 0)   # tanh(0) * 0
    already = _run(runner, str(in_path), "--dims", "S0=16", "--backend", "numpy", "--json",
                   "--pad-multiple", "8")
    assert json.loads(already.stdout)["binding"] == {"S0": 16}


def test_cli_stdin_and_pipeline_none(runner) -> None:
    text = LISTING1.read_text()
    result = _run(runner, "-", "--dims", "S1=2", "-p", "none", "--backend", "numpy", "--json",
                  input=text)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["binding"] == {"S1": 2}
    bad = _run(runner, "-", "--dims", "S1=2", "-p", "nosuchpass", input=text)
    assert bad.exit_code == 2


# -- planning for speed: shared cut points, recompute weighing, host copies -------------
ATTENTION = ROOT / "samples" / "attention.mlir"

# %a can not be recomputed (a random draw) and is needed between three big steps: under
# the smallest limit it is evicted three times, and copied to the host only once
REEVICT = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %a = rng_uniform() {seed = 1} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %b = broadcast_in_dim(%x) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %c = reduce(%b) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %cb = broadcast_in_dim(%c) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d = add(%cb, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d2 = reduce(%d) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %e = broadcast_in_dim(%d2) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %f = reduce(%e) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %fb = broadcast_in_dim(%f) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %g = add(%fb, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  %g2 = reduce(%g) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %h = broadcast_in_dim(%g2) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %i = reduce(%h) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %ib = broadcast_in_dim(%i) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %j = add(%ib, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  return %j
}
"""

# recomputing the big %v needs the small %s, dead by then: worth keeping %s alive
WEIGH = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %s = reduce(%x) {dims = [1], kind = "sum"} -> tensor<?, [@S0]>
  %v = broadcast_in_dim(%s) {dims = [0]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %w = reduce(%v) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %t = tanh(%x) -> tensor<?x8, [@S0, @C8]>
  %big = broadcast_in_dim(%t) {dims = [0, 1]} -> tensor<?x8x32, [@S0, @C8, @C32]>
  %r = reduce(%big) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %u = reduce(%v) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %o = add(%r, %u) -> tensor<?x8, [@S0, @C8]>
  %o2 = add(%o, %w) -> tensor<?x8, [@S0, @C8]>
  return %o2
}
"""


class CountingNumpy(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.offloads = self.reloads = 0

    def offload(self, x):
        self.offloads += 1
        return super().offload(x)

    def reload(self, h):
        self.reloads += 1
        return super().reload(h)


def _smallest(ex: Executor, binding: dict[str, int]) -> int:
    """The smallest limit the executor names by the device accounting."""
    with pytest.raises(BladecError) as err:
        ex.prepare(binding, 0)
    return int(SMALLEST.search(str(err.value)).group(1))


def test_second_eviction_reuses_the_host_copy() -> None:
    module = run_pipeline(_module(REEVICT), parse_pipeline("analyze,remat"))
    backend = CountingNumpy()
    ex = Executor(module, backend)
    inputs = ex.random_inputs({"S0": 5})
    ref, _ = Executor(_module(REEVICT), NumpyBackend()).run(inputs)
    out, report = ex.run(inputs, _smallest(ex, {"S0": 5}))
    assert report.evictions == 3 and report.reloads == 3 and report.recomputes == 0
    assert backend.offloads == 1 and backend.reloads == 3
    assert out["%j"].tobytes() == ref["%j"].tobytes()


def test_recompute_may_keep_a_small_dead_value_alive() -> None:
    module = run_pipeline(_module(WEIGH), parse_pipeline("analyze,remat"))
    ex = Executor(module, NumpyBackend())
    binding = {"S0": 5}
    limit = ex.plan(binding, None).peak - 1
    plan = ex.plan(binding, limit)
    site = ex._bound(binding).program.sites[("%v", 6)]
    assert site.region_inputs == ["%s"]  # the region reads %s, dead after %v otherwise
    assert [(s.kind, s.value, s.method) for s in plan.trace if s.kind != "op"] == [
        ("evict", "%v", "recompute"), ("regen", "%v", "recompute")]
    inputs = ex.random_inputs(binding)
    ref, _ = Executor(_module(WEIGH), NumpyBackend()).run(inputs)
    out, report = ex.run(inputs, limit)
    assert report.recomputes == 1 and report.reloads == 0 and report.peak_bytes <= limit
    assert report.held_peak_bytes <= report.peak_bytes
    assert out["%o2"].tobytes() == ref["%o2"].tobytes()


def _attention(pipeline: str = "analyze,schedule,remat"):
    return run_pipeline(_module(path=ATTENTION), parse_pipeline(pipeline))


def _cut_points(plan) -> set[int]:
    """Compute-op indices before which the trace leaves compiled code."""
    cuts, pending = set(), False
    for step in plan.trace:
        if step.kind == "evict" or (step.kind == "regen" and step.method == "reload"):
            pending = True
        elif step.kind == "op" and pending:
            cuts.add(step.index)
            pending = False
    return cuts


def test_consolidation_shares_cut_points_within_the_limit() -> None:
    from bladec.runtime.trace import simulate
    binding = {"S0": 8, "S1": 256}
    shared = Executor(_attention(), NumpyBackend(), cost=CostModel())
    loose = Executor(_attention(), NumpyBackend(), cost=CostModel(), consolidate=False)
    limit = max(_smallest(shared, binding), _smallest(loose, binding))
    a, b = shared.prepare(binding, limit).plan, loose.prepare(binding, limit).plan
    assert a.peak <= limit and b.peak <= limit
    sizes = shared._bound(binding).sizes
    assert simulate(a.trace, sizes, shared.inputs, set(shared.outputs)).peak == a.peak
    assert len(_cut_points(a)) == a.cuts < len(_cut_points(b)) == b.cuts
    assert shared.prepare(binding, limit).segments == a.cuts + 1
    # the constant broadcast is recomputed (its region starts at the constant), not copied
    assert ("regen", "%scb", "recompute") in [(s.kind, s.value, s.method) for s in a.trace]
    # a reload may run before the op that asks for it: a prefetch to a shared cut point
    assert any(e.before < e.use for e in a.evictions if e.how == "reload")


def test_attention_at_the_smallest_limit_is_bitwise_equal() -> None:
    binding = {"S0": 2, "S1": 128}
    original = Executor(_module(path=ATTENTION), NumpyBackend())
    inputs = original.random_inputs(binding, 1)
    ref, _ = original.run(inputs)
    for consolidate in (True, False):
        ex = Executor(_attention(), NumpyBackend(), consolidate=consolidate)
        limit = _smallest(ex, binding)
        out, report = ex.run(inputs, limit)
        assert report.evictions > 0 and report.peak_bytes <= limit
        assert report.held_peak_bytes <= report.peak_bytes
        assert all(out[k].tobytes() == ref[k].tobytes() for k in ref), consolidate


def test_the_whole_step_is_not_compiled_to_learn_it_does_not_fit(monkeypatch) -> None:
    """Where the whole step compiled at another binding says this one's is over the
    limit (its device/model ratio times this model peak), the closed loop runs first and
    only its executables are compiled; a limit no plan meets is still refused on the
    checked path, the whole step compiled and the smallest limit searched."""
    from bladec.runtime.limit import LimitError
    # CUT at S0=256: whole step 2,424,832 B on the device, model 2,097,152 B; the whole
    # step at S0=64 gives the ratio 1.08, so the estimate is 2,266,277 B; without the
    # slack a 2,000,000 B limit is estimated over, and a plan with one eviction fits it
    monkeypatch.setattr("bladec.runtime.fitting.WHOLE_STEP_SLACK", 0.0)
    module = run_pipeline(_module(CUT), parse_pipeline("analyze,remat"))
    ex = Executor(module, JaxBackend(), cost=CostModel())
    ex.prepare({"S0": 64}, None)
    before = ex.backend.compilations
    run = ex.prepare({"S0": 256}, 2_000_000)
    assert run.evictions and run.device.peak <= 2_000_000
    assert None not in ex._bound({"S0": 256}).runs        # the whole step: not compiled
    assert ex.backend.compilations - before == len({id(s.fn) for s in run.segment_steps()})
    refused = Executor(module, JaxBackend(), cost=CostModel())
    refused.prepare({"S0": 64}, None)
    with pytest.raises(LimitError, match="smallest limit that works"):
        refused.prepare({"S0": 256}, 1_000_000)
    assert None in refused._bound({"S0": 256}).runs       # checked before refusing

def test_fits_answers_without_searching_the_smallest_limit(monkeypatch) -> None:
    """``Executor.fits`` (a search over bindings under one limit): the answer prepare
    gives, a plan found kept for the run, a refusal without the smallest-limit search."""
    module = run_pipeline(_module(REEVICT), parse_pipeline("analyze,remat"))
    smallest = _smallest(Executor(module, NumpyBackend()), {"S0": 5})
    ex = Executor(module, NumpyBackend())

    def search(*args, **kwargs):
        raise AssertionError("searched the smallest limit")
    monkeypatch.setattr(ex, "_smallest_limit", search)
    assert not ex.fits({"S0": 5}, smallest - 1)
    assert ex.fits({"S0": 5}, smallest)
    run = ex._bound({"S0": 5}).runs[smallest]
    assert ex.prepare({"S0": 5}, smallest) is run and run.device.peak <= smallest


def test_runs_are_cached_per_input_shapes(monkeypatch) -> None:
    ex = Executor(run_pipeline(_module(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
    inputs = ex.random_inputs({"S0": 6})
    limit = _tight(ex, {"S0": 6})
    first, report = ex.run(inputs, limit)

    def fail(*args, **kwargs):
        raise AssertionError("worked out again")
    for name in ("bind", "plan", "_checked", "_fit", "shapes_for"):
        monkeypatch.setattr(ex, name, fail)
    monkeypatch.setattr("bladec.runtime.binding.exact_sizes", fail)
    monkeypatch.setattr("bladec.runtime.binding.simulate", fail)
    again, report2 = ex.run(inputs, limit)
    assert again["%g"].tobytes() == first["%g"].tobytes()
    assert report2.peak_bytes == report.peak_bytes and report2.evictions == report.evictions
    with pytest.raises(AssertionError, match="worked out again"):
        ex.run(ex.random_inputs({"S0": 7}), limit)  # new shapes: bound afresh


@pytest.mark.parametrize("backend", [JaxBackend, NumpyBackend])
def test_segment_times_only_when_profiling(backend) -> None:
    ex = Executor(run_pipeline(_module(CUT), parse_pipeline("analyze,remat")), backend())
    inputs = ex.random_inputs({"S0": 256})
    limit = _tight(ex, {"S0": 256})
    out, fast = ex.run(inputs, limit)
    out2, timed = ex.run(inputs, limit, profile=True)
    assert fast.segments == timed.segments > 1
    assert fast.segment_seconds == []
    assert len(timed.segment_seconds) == timed.segments
    assert all(t >= 0 for t in timed.segment_seconds)
    assert np.allclose(out["%g"], out2["%g"], rtol=1e-5)


@pytest.mark.parametrize("backend", [JaxBackend, NumpyBackend])
def test_segment_memory_comes_from_each_segment(backend) -> None:
    """Each segment's figures are its own (XLA's memory analysis on JAX, the arrays its
    interpretation allocates on NumPy), listed per segment run, in order."""
    ex = Executor(run_pipeline(_module(CUT), parse_pipeline("analyze,remat")), backend())
    inputs = ex.random_inputs({"S0": 256})
    limit = _tight(ex, {"S0": 256})
    _, report = ex.run(inputs, limit)
    steps = ex.prepare({"S0": 256}, limit).segment_steps()
    assert len(report.segment_memory) == len(steps) == report.segments > 1
    for figure, step in zip(report.segment_memory, steps):
        memory = step.fn.memory()
        assert (figure["output_bytes"], figure["temp_bytes"]) == \
            (memory.output_bytes, memory.temp_bytes)
    assert report.peak_bytes <= limit
    if backend is JaxBackend:
        stats = steps[0].fn.compile().memory_analysis()
        assert steps[0].fn.memory().temp_bytes == stats.temp_size_in_bytes


def test_copy_bandwidth_is_measured_once() -> None:
    import time

    backend = JaxBackend()
    bw = backend.copy_bandwidth()
    assert isinstance(bw, float) and 1e7 < bw < 1e13
    t = time.perf_counter()
    assert JaxBackend().copy_bandwidth() == bw
    assert time.perf_counter() - t < 0.5
    assert Executor(_module(CHAIN), backend).cost.copy_bandwidth == bw
    assert Executor(_module(CHAIN), NumpyBackend()).cost == CostModel()
    mine = CostModel(copy_bandwidth=1.0)
    assert Executor(_module(CHAIN), backend, cost=mine).cost is mine


def test_keep_freed_memory_is_opt_out(monkeypatch) -> None:
    import platform

    from bladec.runtime.jax_backend import keep_freed_memory_in_process
    assert not JaxBackend(keep_freed_memory=False).keeps_freed_memory
    monkeypatch.setenv("BLADEC_KEEP_FREED_MEMORY", "0")
    assert not JaxBackend().keeps_freed_memory
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert keep_freed_memory_in_process() is True
        monkeypatch.delenv("BLADEC_KEEP_FREED_MEMORY")
        assert JaxBackend().keeps_freed_memory


# -- padding per symbol -------------------------------------------------------------------
PADDABLE = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>, %y: tensor<?, [@S1]>) {
  %b = broadcast_in_dim(%y) {dims = [1]} -> tensor<?x?, [@S0, @S1]>
  %s = add(%x, %b) -> tensor<?x?, [@S0, @S1]>
  return %s
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 6}
  SymbolicDim @S1 {max = 100}
}
"""


def _run_padded(**kwargs):
    from bladec.runtime.session import run_listing
    return run_listing(_module(PADDABLE), [], dims={"S0": 3, "S1": 70}, backend="numpy",
                       **kwargs)


def test_pad_one_symbol_clamped_to_its_max() -> None:
    plain = _run_padded()
    with pytest.warns(BladecWarning, match=r"padding S1=70 to 100, its declared maximum, "
                                           r"not to a multiple of 64"):
        padded = _run_padded(pad={"S1": 64})
    assert padded.report.binding == {"S0": 3, "S1": 100}  # 128, at most 100
    assert padded.summary()["unpadded_binding"] == {"S0": 3, "S1": 70}
    assert plain.summary()["unpadded_binding"] is None
    a, b = plain.outputs["%s"], padded.outputs["%s"]
    assert a.shape == (3, 70) and b.shape == (3, 100)
    assert b[:, :70].tobytes() == a.tobytes() and not b[:, 70:].any()
    assert "padded from S0=3, S1=70" in padded.text()
    assert _run_padded(pad={"@S1": 7}).report.binding == {"S0": 3, "S1": 70}  # already


def test_pad_multiple_pads_every_symbol_clamped() -> None:
    assert _run_padded(pad_multiple=4).report.binding == {"S0": 4, "S1": 72}
    with pytest.warns(BladecWarning, match="padding S0=3 to 6, its declared maximum"):
        assert _run_padded(pad_multiple=8).report.binding == {"S0": 6, "S1": 72}
    with pytest.warns(BladecWarning, match="padding S1=70 to 100"):
        assert _run_padded(pad_multiple=64, pad={"S0": 1}).report.binding == {"S0": 3,
                                                                                "S1": 100}


@pytest.mark.parametrize("pad, message", [
    ({"S9": 8}, "S9: not a free symbol"),
    ({"S1": 0}, "positive"),
])
def test_pad_bad_symbol_or_multiple(pad, message) -> None:
    with pytest.raises(BladecError, match=message):
        _run_padded(pad=pad)


def test_pad_refuses_a_dim_it_would_pad_inside() -> None:
    from bladec.runtime.session import pad_inputs
    text = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>, %z: tensor<?, [@S2]>) {
  %r = reshape(%x) -> tensor<?, [@S2]>
  %s = add(%r, %z) -> tensor<?, [@S2]>
  return %s
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
"""
    ex = Executor(_module(text), NumpyBackend())
    inputs = ex.random_inputs({"S0": 3, "S1": 5})
    with pytest.raises(BladecError, match=r"cannot pad input %z: its dim 0 is S0\*S1"):
        pad_inputs(ex, inputs, {"S1": 8})
    assert pad_inputs(ex, inputs, {"S1": 5})["%z"].shape == (15,)  # nothing to pad


def test_parse_pad() -> None:
    from bladec.runtime.session import parse_pad
    assert parse_pad(None) is None and parse_pad(()) is None
    assert parse_pad("S1=64") == {"S1": 64}
    assert parse_pad(("@S1=64", "S0=8")) == {"S1": 64, "S0": 8}
    assert parse_pad(["S0=8,S1=16"]) == {"S0": 8, "S1": 16}
    for bad in ("S1", "S1=x", "S1=0", "=4", "S1=-2"):
        with pytest.raises(BladecError, match="bad --pad entry"):
            parse_pad(bad)


def test_cli_pad_per_symbol(runner, tmp_path) -> None:
    """`bladec run --pad S1=64`: the library side is run_listing(pad=...); the option
    itself lives in bladec/cli.py."""
    path = tmp_path / "listing.mlir"
    path.write_text(PADDABLE)
    common = [str(path), "--dims", "S0=3,S1=70", "--backend", "numpy", "--json"]
    result = _run(runner, *common, "--pad", "S1=64")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["binding"] == {"S0": 3, "S1": 100}
    assert data["unpadded_binding"] == {"S0": 3, "S1": 70}
    both = _run(runner, *common, "--pad", "S1=64", "--pad-multiple", "4")
    assert json.loads(both.stdout)["binding"] == {"S0": 4, "S1": 100}
    bad = _run(runner, *common, "--pad", "S1=x")
    assert bad.exit_code == 1 and "bad --pad entry" in bad.stderr
    unknown = _run(runner, *common, "--pad", "S7=8")
    assert unknown.exit_code == 1 and "S7" in unknown.stderr


# -- schedule versions --------------------------------------------------------------------
DIAMOND = ROOT / "samples" / "diamond.mlir"


@pytest.mark.parametrize("dims, version", [({"S0": 4000, "S1": 100}, "main"),
                                           ({"S0": 100, "S1": 4000}, "main.v1")])
def test_the_version_with_the_lower_peak_runs(dims, version) -> None:
    """diamond.mlir's two tower orders: each binding runs the better one, bitwise equal."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.analysis.version import versions

    module = _module(path=DIAMOND)
    optimized = run_pipeline(module, parse_pipeline("analyze,schedule,remat"))
    assert len(versions(optimized)) == 2
    original = Executor(module, NumpyBackend())
    inputs = original.random_inputs(dims, 3)
    ref, ref_report = original.run(inputs)
    ex = Executor(optimized, NumpyBackend())
    sizes = exact_sizes(ex.info, dims)
    peaks = {f.name: exact_peak(f, sizes) for f in versions(optimized)}
    assert peaks[version] == min(peaks.values()) and len(set(peaks.values())) == 2
    for limit in (None, _smallest(ex, dims)):
        out, report = ex.run(inputs, limit)
        assert report.version == version
        assert report.planned_peak_bytes == peaks[version] < ref_report.model_peak_bytes
        assert all(out[k].tobytes() == ref[k].tobytes() for k in ref)


def test_cli_names_the_version_it_ran(runner) -> None:
    result = _run(runner, str(DIAMOND), "--dims", "S0=100,S1=4000", "--backend", "numpy")
    assert result.exit_code == 0, result.output
    assert "order: @main.v1 (a schedule version)" in result.stdout
    result = _run(runner, str(DIAMOND), "--dims", "S0=100,S1=4000", "--backend", "numpy",
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
    result = _run(runner, str(LISTING1), "--dims", "S1=8", "--json")
    assert json.loads(result.stdout)["device_peak_bytes"] is None
    result = _run(runner, str(LISTING1), "--dims", "S1=8")
    assert "allocator peak (the device's own statistics): not reported by this device" \
        in result.stdout


# -- the closed loop keeps a segment over the limit, moving out what it does not read ----
# %a and %a2 are made first and read last; the plan moves %a2 to the host around ops
# 2-4, which are then one segment; its figure over the limit is repaired by moving %a
# out over the same span, so the segment and its executable stay as they are
AROUND = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %a = exp(%x) -> tensor<?x8, [@S0, @C8]>
  %a2 = tanh(%x) -> tensor<?x8, [@S0, @C8]>
  %b = mul(%x, %x) -> tensor<?x8, [@S0, @C8]>
  %c = broadcast_in_dim(%b) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d = reduce(%c) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %e = add(%d, %a) -> tensor<?x8, [@S0, @C8]>
  %f = add(%e, %a2) -> tensor<?x8, [@S0, @C8]>
  return %f
}
"""


class TempsNumpy(NumpyBackend):
    """NumPy segments that report ``extra`` more temporary bytes where they broadcast
    (as XLA's figures can exceed the model's)."""

    def __init__(self, extra: int) -> None:
        super().__init__()
        self.extra = extra

    def segment(self, ops, inputs, outputs, specs, args, donate=(), xla_order=False):
        seg = super().segment(ops, inputs, outputs, specs, args, donate, xla_order)
        if any(op.name == "broadcast_in_dim" for op in ops):
            m = seg.memory()
            seg._memory = type(m)(m.output_bytes, m.temp_bytes + self.extra)
        return seg


def test_a_segment_over_the_limit_is_kept_and_what_it_does_not_read_moves_out() -> None:
    from dataclasses import replace

    from bladec.runtime.plan import Eviction, Plan, build_trace
    from bladec.runtime.repair import repair
    from bladec.runtime.trace import simulate
    module = run_pipeline(_module(AROUND), parse_pipeline("analyze,remat"))
    backend = TempsNumpy(extra=100)
    ex = Executor(module, backend, cost=CostModel())
    binding = {"S0": 4}
    bound = ex._bound(binding)
    program = replace(bound.version.program, sites=ex._sites(bound.version, bound.shapes))
    bound.program = program
    events = [Eviction("%a2", "reload", 1, 6, 5)]
    trace = build_trace(program, events)
    plan = Plan(trace, simulate(trace, bound.sizes, program.inputs, program.outputs), events)
    run = ex._checked(plan, bound)
    middle = run.segment_steps()[1]
    assert [op.result_names[0] for op in middle.ops] == ["%b", "%c", "%d"]
    figure = run.device.segments[1]
    limit = figure.total - 50    # over by 50 bytes; %a (128 bytes) covers it
    assert run.device.peak > limit
    fixed = repair(plan, ex._checked(plan, bound, limit), program, bound.sizes, limit)
    assert fixed is not None
    assert [(e.value, e.after, e.before) for e in fixed.evictions[1:]] == [("%a", 1, 5)]
    again = ex._checked(fixed, bound, limit)
    assert again.device.peak <= limit
    kept = again.segment_steps()[1]   # the same segment: the JAX backend's cache key
    assert (kept.ops, kept.inputs, kept.outputs, kept.free) == \
        (middle.ops, middle.inputs, middle.outputs, middle.free)
    # too far over for %a alone: nothing to repair, the plan is planned again instead
    assert repair(plan, ex._checked(plan, bound, figure.total - 200), program,
                  bound.sizes, figure.total - 200) is None
    # the closed loop repairs by itself and the run computes what the listing computes
    inputs = ex.random_inputs(binding)
    ref, _ = Executor(_module(AROUND), NumpyBackend()).run(inputs)
    out, _ = ex.run(inputs, ex.prepare(binding, None).device.peak - 1)
    assert out["%f"].tobytes() == ref["%f"].tobytes()


def test_a_plan_the_estimate_puts_over_the_limit_is_not_compiled() -> None:
    """The closed loop's gate: a segment not compiled yet is estimated as the model's
    bytes at each of its steps plus its outputs not made yet (XLA allocates them for the
    whole run): CUT at S0=256 in one segment, inputs 720,896 B, the model's most
    2,097,152 B at %c and %d, %g's 327,680 B beside: 2,424,832 B (XLA's figure too)."""
    from bladec.runtime.device import estimated_figure
    ex = Executor(run_pipeline(_module(CUT), parse_pipeline("analyze,remat")), JaxBackend(),
                  cost=CostModel())
    binding = {"S0": 256}
    bound = ex._bound(binding)
    plan = ex.plan(binding, None)
    run = ex._checked(plan, bound, 2_000_000, gate=True)
    assert run.device.estimated and run.device.peak == 2_424_832
    assert ex.backend.compilations == 0
    (step,) = run.segment_steps()
    assert estimated_figure(step, 720_896, plan.measure.memory, bound.sizes).total == 2_424_832
    run = ex._checked(plan, bound, 3_000_000, gate=True)   # within: compiled and checked
    assert not run.device.estimated and ex.backend.compilations == 1
    assert run.device.peak == 2_424_832
    # compiled, its own figure is used: no estimate refuses it any more
    assert estimated_figure(step, 720_896, [0] * 8, bound.sizes).total == 2_424_832
