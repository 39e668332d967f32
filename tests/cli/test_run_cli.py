"""`bladec run`: reports, input and output files, timelines, limits, dims, padding."""
from __future__ import annotations

import csv
import json

from click.testing import CliRunner
import numpy as np
import pytest

from bladec.errors import BladecError, BladecWarning
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.units import format_size

from tests.support.runtimecase import ELEMENTWISE, LISTING1, SMALLEST, module_of, run_cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# -- bladec run -------------------------------------------------------------------------


def test_cli_text_report(runner) -> None:
    result = run_cli(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
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
    result = run_cli(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
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
    result = run_cli(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"), "--outputs",
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
    result = run_cli(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"),
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "arg1" in result.stderr and "Traceback" not in result.output


def test_cli_inputs_npz_bad_shape(runner, tmp_path) -> None:
    np.savez(tmp_path / "in.npz", arg0=np.zeros(25, np.float32),
             arg1=np.zeros((12, 11008), np.float32))
    result = run_cli(runner, str(LISTING1), "--inputs", str(tmp_path / "in.npz"),
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "%arg0" in result.stderr and "Traceback" not in result.output


def _outputs(runner, tmp_path, name: str, *args: str) -> dict[str, np.ndarray]:
    path = tmp_path / name
    result = run_cli(runner, str(LISTING1), "--dims", "S1=3", "--backend", "numpy", "--outputs",
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
    result = run_cli(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
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
    result = run_cli(runner, str(LISTING1), "--dims", "S1=64", "--mem-limit", "4822016",
                  "--backend", "numpy", "--timeline", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_cli_timeline_bad_suffix(runner, tmp_path) -> None:
    result = run_cli(runner, str(LISTING1), "--dims", "S1=2", "--backend", "numpy",
                  "--timeline", str(tmp_path / "x.txt"))
    assert result.exit_code == 1 and ".csv" in result.stderr


def test_cli_too_small_limit(runner) -> None:
    result = run_cli(runner, str(LISTING1), "--dims", "S1=4", "--mem-limit", "1000",
                  "--backend", "numpy")
    assert result.exit_code == 1
    assert "smallest limit" in result.stderr
    assert "Traceback" not in result.output and result.stdout == ""
    # the limit it names works
    smallest = SMALLEST.search(result.stderr)
    ok = run_cli(runner, str(LISTING1), "--dims", "S1=4", "--mem-limit", smallest.group(1),
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
    result = run_cli(runner, str(LISTING1), "--backend", "numpy", *args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_cli_backend_numpy(runner) -> None:
    result = run_cli(runner, str(LISTING1), "--dims", "S1=2", "--backend", "numpy", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["device"].startswith("numpy") and data["compilations"] == 0
    bad = run_cli(runner, str(LISTING1), "--dims", "S1=2", "--backend", "torch")
    assert bad.exit_code == 2


def test_cli_pad_multiple(runner, tmp_path) -> None:
    in_path = tmp_path / "listing.mlir"
    in_path.write_text(ELEMENTWISE)
    plain = run_cli(runner, str(in_path), "--dims", "S0=5", "--backend", "numpy", "--json",
                 "--outputs", str(tmp_path / "plain.npz"))
    padded = run_cli(runner, str(in_path), "--dims", "S0=5", "--backend", "numpy", "--json",
                  "--pad-multiple", "8", "--outputs", str(tmp_path / "padded.npz"))
    assert plain.exit_code == 0 and padded.exit_code == 0, padded.output
    assert json.loads(plain.stdout)["binding"] == {"S0": 5}
    assert json.loads(padded.stdout)["binding"] == {"S0": 8}
    a, b = np.load(tmp_path / "plain.npz")["b"], np.load(tmp_path / "padded.npz")["b"]
    assert a.shape == (5, 4) and b.shape == (8, 4)
    np.testing.assert_array_equal(b[:5], a)   # the same seed gives the same first rows
    np.testing.assert_array_equal(b[5:], 0)   # tanh(0) * 0
    already = run_cli(runner, str(in_path), "--dims", "S0=16", "--backend", "numpy", "--json",
                   "--pad-multiple", "8")
    assert json.loads(already.stdout)["binding"] == {"S0": 16}


def test_cli_stdin_and_pipeline_none(runner) -> None:
    text = LISTING1.read_text()
    result = run_cli(runner, "-", "--dims", "S1=2", "-p", "none", "--backend", "numpy", "--json",
                  input=text)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["binding"] == {"S1": 2}
    bad = run_cli(runner, "-", "--dims", "S1=2", "-p", "nosuchpass", input=text)
    assert bad.exit_code == 2


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
    return run_listing(module_of(PADDABLE), [], dims={"S0": 3, "S1": 70}, backend="numpy",
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
    from bladec.runtime.padding import pad_inputs
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
    ex = Executor(module_of(text), NumpyBackend())
    inputs = ex.random_inputs({"S0": 3, "S1": 5})
    with pytest.raises(BladecError, match=r"cannot pad input %z: its dim 0 is S0\*S1"):
        pad_inputs(ex, inputs, {"S1": 8})
    assert pad_inputs(ex, inputs, {"S1": 5})["%z"].shape == (15,)  # nothing to pad


def test_parse_pad() -> None:
    from bladec.runtime.padding import parse_pad
    assert parse_pad(None) is None and parse_pad(()) is None
    assert parse_pad("S1=64") == {"S1": 64}
    assert parse_pad(("@S1=64", "S0=8")) == {"S1": 64, "S0": 8}
    assert parse_pad(["S0=8,S1=16"]) == {"S0": 8, "S1": 16}
    for bad in ("S1", "S1=x", "S1=0", "=4", "S1=-2"):
        with pytest.raises(BladecError, match="bad --pad entry"):
            parse_pad(bad)


def test_cli_pad_per_symbol(runner, tmp_path) -> None:
    """`bladec run --pad S1=64`: the library side is run_listing(pad=...); the option
    itself lives in bladec/cli/command.py."""
    path = tmp_path / "listing.mlir"
    path.write_text(PADDABLE)
    common = [str(path), "--dims", "S0=3,S1=70", "--backend", "numpy", "--json"]
    result = run_cli(runner, *common, "--pad", "S1=64")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["binding"] == {"S0": 3, "S1": 100}
    assert data["unpadded_binding"] == {"S0": 3, "S1": 70}
    both = run_cli(runner, *common, "--pad", "S1=64", "--pad-multiple", "4")
    assert json.loads(both.stdout)["binding"] == {"S0": 4, "S1": 100}
    bad = run_cli(runner, *common, "--pad", "S1=x")
    assert bad.exit_code == 1 and "bad --pad entry" in bad.stderr
    unknown = run_cli(runner, *common, "--pad", "S7=8")
    assert unknown.exit_code == 1 and "S7" in unknown.stderr


def test_cli_counts_what_planning_before_the_run_compiled(runner, monkeypatch) -> None:
    """With --mem-limit and random inputs the plan is made (and compiled) before the
    inputs are drawn; the report still counts those compilations as the run's. (One
    order at no limit: the comparison of orders, wholestep.py, is counted in
    tests/runtime/planning/test_orders.py.)"""
    monkeypatch.setenv("BLADEC_NO_LIMIT_ORDER", "bladec")
    for limit in ((), ("--mem-limit", "1GiB")):
        result = run_cli(runner, str(LISTING1), "--dims", "S1=8", "--json",
                         "--compilation-cache", "off", *limit)
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["compilations"] == 1, limit
        assert 0 < data["compile_seconds"] <= data["seconds"]


def test_cli_refuses_a_run_the_cpu_memory_can_not_hold(runner, monkeypatch) -> None:
    """On a CPU device the device and the host are one memory: a run whose device bytes
    and host copies at once, plus the inputs' NumPy arrays, exceed what the machine has
    available is refused with a message (exit 1), not killed by the kernel."""
    from bladec.runtime.backends import machine
    result = run_cli(runner, str(LISTING1), "--dims", "S1=8", "--json",
                     "--compilation-cache", "off")
    data = json.loads(result.stdout)
    inputs = (8 * 12 + 12 * 11008) * 4
    need = inputs + data["peak_bytes"]   # no host copies without a limit
    monkeypatch.setattr(machine, "available_memory", lambda: need)
    assert run_cli(runner, str(LISTING1), "--dims", "S1=8", "--compilation-cache",
                   "off").exit_code == 0   # exactly what it needs: runs
    monkeypatch.setattr(machine, "available_memory", lambda: need - 1)
    refused = run_cli(runner, str(LISTING1), "--dims", "S1=8", "--compilation-cache", "off")
    assert refused.exit_code == 1
    assert f"needs {format_size(need)} ({need} bytes)" in refused.stderr
    assert "one memory" in refused.stderr and "Traceback" not in refused.output
    monkeypatch.setattr(machine, "available_memory", lambda: None)   # not Linux: no check
    assert run_cli(runner, str(LISTING1), "--dims", "S1=8", "--compilation-cache",
                   "off").exit_code == 0
