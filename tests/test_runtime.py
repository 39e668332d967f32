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
from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backend import JaxBackend, NumpyBackend
from bladec.runtime.executor import Executor

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
    """A limit under the unconstrained peak that the planner can meet (plans, runs nothing)."""
    peak = ex.plan(binding, None).peak
    try:
        ex.plan(binding, peak - 1)
        return peak - 1
    except BladecError as exc:
        return int(SMALLEST.search(str(exc)).group(1))


def test_jax_compilation_cache_per_binding() -> None:
    module = run_pipeline(_module(CHAIN), parse_pipeline("analyze,remat"))
    ex = Executor(module, JaxBackend())
    inputs = ex.random_inputs({"S0": 6})
    out1, first = ex.run(inputs)
    assert first.compilations == 1 and first.segments == 1
    out2, again = ex.run(inputs)
    assert again.compilations == 0 and again.segments == 1
    assert out1["%g"].tobytes() == out2["%g"].tobytes()
    # under a limit: several segments, compiled once, then reused
    limit = _tight(ex, {"S0": 6})
    _, tight = ex.run(inputs, limit)
    assert tight.evictions > 0 and tight.segments > 1 and tight.compilations >= 1
    _, tight2 = ex.run(inputs, limit)
    assert tight2.compilations == 0 and tight2.segments == tight.segments
    # a new binding compiles again, and only once
    other = ex.random_inputs({"S0": 9})
    _, new = ex.run(other)
    assert new.compilations == 1 and new.binding == {"S0": 9}
    _, new2 = ex.run(other)
    assert new2.compilations == 0


def test_numpy_backend_never_compiles() -> None:
    ex = Executor(_module(CHAIN), NumpyBackend())
    _, report = ex.run(ex.random_inputs({"S0": 3}))
    assert report.compilations == 0 and report.segments == 1


# -- bladec run -------------------------------------------------------------------------
def _run(runner: CliRunner, *args: str, input: str | None = None):
    return runner.invoke(main, ["run", *args], input=input)


def test_cli_text_report(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "-p", "analyze,remat")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for field in ("binding: S1=64", "limit: 4.60 MiB", "peak (tracked):",
                  "peak without eviction:", "original order:", "evictions:", "reloads:",
                  "recomputes:", "segments:", "compilations:", "time:"):
        assert field in out, field
    assert "evictions: 0," not in out  # half the peak needs evictions
    assert "Traceback" not in result.output


def test_cli_json_report(runner) -> None:
    result = _run(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "-p", "analyze,remat", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("peak_bytes", "limit", "evictions", "reloads", "recomputes", "compilations",
                "seconds", "binding"):
        assert key in data, key
    assert data["binding"] == {"S1": 64} and data["limit"] == 4822016
    assert 0 < data["peak_bytes"] <= 4822016
    assert data["evictions"] > 0 and data["reloads"] + data["recomputes"] > 0
    assert data["compilations"] >= 1 and data["seconds"] > 0
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
        rows = list(csv.reader(fh))
    assert rows[0] == ["step", "original_bytes", "optimized_bytes", "limit_bytes"]
    body = rows[1:]
    assert [int(r[0]) for r in body] == list(range(len(body)))
    original = [int(r[1]) for r in body if r[1]]
    optimized = [int(r[2]) for r in body if r[2]]
    assert len(original) == 9  # one step per op of the listing
    assert len(optimized) > 9  # the plan adds reloads and recompute steps
    assert all(r[3] == "4822016" for r in body)
    assert max(optimized) <= 4822016 < max(original)


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
