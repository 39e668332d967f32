"""`bladec analyze`: the symbolic report, exact figures under --dims, --mem-limit/--solve."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bladec.cli import main

from tests.support.paths import ROOT, SAMPLES

LISTING1 = str(ROOT / "samples" / "listing1.mlir")
OPS = str(ROOT / "samples" / "ops.mlir")
GIB = 1 << 30


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def analyze(runner: CliRunner, *args: str, input: str | None = None):
    return runner.invoke(main, ["analyze", *args], input=input)


def analyze_json(runner: CliRunner, *args: str) -> dict:
    result = analyze(runner, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def peak_at(runner: CliRunner, file: str, dims: str) -> int:
    return analyze_json(runner, file, "--dims", dims)["peak_bytes"]


def test_listing1_json_with_dims(runner):
    report = analyze_json(runner, LISTING1, "--dims", "S1=100")
    assert report["bytes_at"]["%1084"] == 11008 * 100 * 4
    assert report["bytes_at"]["%1085"] == 1024 * 1200 * 4
    assert "S0 = 12*S1" in report["relations"]
    assert report["relations"] == ["S0 = 12*S1"]
    assert {"symbols", "relations", "values", "peak", "peak_bytes", "bytes_at"} <= report.keys()
    assert report["symbols"] == ["S0", "S1"]
    assert report["free_symbols"] == ["S1"]
    for name, v in report["values"].items():
        assert {"shape", "dtype", "bytes"} <= v.keys(), name
    assert report["values"]["%1084"] == {**report["values"]["%1084"], "shape": ["11008", "S1"],
                                          "dtype": "f32", "bytes": "44032*S1"}
    assert report["values"]["%1085"]["shape"] == ["1024", "12*S1"]
    assert report["dims"] == {"S1": 100, "S0": 1200}
    # the memory model: inputs 48*S1 + 528384 resident; the last broadcast is the peak
    assert report["peak"] == "289840*S1 + 528384"
    assert report["peak_bytes"] == 289840 * 100 + 528384
    assert report["peak_bytes"] == max(report["step_bytes"])
    assert report["lower_bound_bytes"] <= report["peak_bytes"]
    # every value's exact size is its symbolic size at S1 = 100
    for name, v in report["values"].items():
        assert report["bytes_at"][name] == eval(v["bytes"].replace("^", "**"), {"S1": 100}), name


def test_json_without_dims_is_symbolic_only(runner):
    report = analyze_json(runner, LISTING1)
    assert {"symbols", "relations", "values", "peak"} <= report.keys()
    assert "peak_bytes" not in report and "bytes_at" not in report
    assert report["peak"] == "289840*S1 + 528384"


def test_json_of_a_two_symbol_listing(runner):
    report = analyze_json(runner, OPS, "--dims", "S0=2,S1=16")
    assert "S2 = S0*S1" in report["relations"]
    assert report["dims"]["S2"] == 32
    assert report["bytes_at"]["%x2"] == 32 * 64 * 4
    assert report["ranges"]["S0"] == [1, 64]


def test_text_report(runner):
    result = analyze(runner, LISTING1, "--dims", "S1=100")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "S0 = 12*S1" in out
    assert "peak: 289840*S1 + 528384" in out
    assert f"({289840 * 100 + 528384} bytes)" in out


def test_stdin(runner):
    text = Path(LISTING1).read_text()
    result = analyze(runner, "-", "--json", "--dims", "S1=7", input=text)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["bytes_at"]["%1084"] == 11008 * 7 * 4


@pytest.mark.parametrize("limit, value", [
    ("1GiB", GIB), ("40GiB", 40 * GIB), ("512MiB", 512 << 20), ("1073741824", GIB),
    ("2000000000", 2_000_000_000), ("1.5GB", 1_500_000_000),
])
def test_solve_gives_the_largest_value_that_fits(runner, limit, value):
    report = analyze_json(runner, LISTING1, "--mem-limit", limit, "--solve", "S1")
    assert report["mem_limit"] == value
    s1 = report["solution"]["S1"]
    assert s1 >= 1
    assert report["peak_bytes"] <= value
    assert peak_at(runner, LISTING1, f"S1={s1}") <= value
    assert peak_at(runner, LISTING1, f"S1={s1 + 1}") > value
    # the peak is 289840*S1 + 528384
    assert s1 == (value - 528384) // 289840


def test_solve_with_another_symbol_given(runner):
    report = analyze_json(runner, OPS, "--dims", "S0=4", "--mem-limit", "64MiB",
                          "--solve", "S1")
    s1 = report["solution"]["S1"]
    assert 1 <= s1 <= 4096
    assert peak_at(runner, OPS, f"S0=4,S1={s1}") <= 64 << 20
    if s1 < 4096:
        assert peak_at(runner, OPS, f"S0=4,S1={s1 + 1}") > 64 << 20


def test_solve_stops_at_the_declared_max(runner):
    report = analyze_json(runner, OPS, "--dims", "S0=1", "--mem-limit", "40GiB",
                          "--solve", "S1")
    assert report["solution"]["S1"] == 4096


def _one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = [l for l in result.stderr.splitlines() if "warning:" not in l]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "error:" in lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args, needles", [
    (["--dims", "S1=100,S9=3"], ["S9"]),                  # unknown symbol
    (["--dims", "S0=1201"], ["S0=1201", "S0 = 12*S1", "no integer S1"]),  # not a multiple
    (["--dims", "S1=100,S0=1201"], ["S0=1201", "12*S1"]),  # contradicts the relation
    (["--dims", "S1=0"], ["S1=0"]),
    (["--dims", "S1=x"], ["S1=x"]),
    (["--solve", "S1"], ["--mem-limit"]),                 # --solve without --mem-limit
    (["--mem-limit", "1XB", "--solve", "S1"], ["1XB"]),   # bad size
    (["--mem-limit", "GiB", "--solve", "S1"], ["GiB"]),
    (["--mem-limit", "-5", "--solve", "S1"], ["-5"]),
    (["--mem-limit", "100", "--solve", "S1"], ["S1"]),    # too small for any value
    (["--mem-limit", "1GiB", "--solve", "S0"], ["S0"]),   # not a free symbol
    (["--mem-limit", "1GiB", "--solve", "S7"], ["S7"]),
])
def test_error_paths(runner, args, needles):
    _one_line_error(analyze(runner, LISTING1, *args), *needles)


def test_too_small_limit_says_what_the_least_peak_is(runner):
    line = _one_line_error(analyze(runner, LISTING1, "--mem-limit", "100", "--solve", "S1"))
    assert str(289840 + 528384) in line


def test_solve_needs_the_other_free_symbols(runner):
    _one_line_error(analyze(runner, OPS, "--mem-limit", "1GiB", "--solve", "S1"), "S0")


def test_analysis_error_has_a_location(runner, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<?x8, [@S0, @C8]>) {\n"
                   "  %1 = neg(%a) -> tensor<4x8>\n"
                   "  %2 = neg(%a) -> tensor<5x8>\n"
                   "}\n")
    line = _one_line_error(analyze(runner, str(bad)), "contradiction")
    assert line.startswith(f"{bad}:3:")


def test_disjoint_ranges_are_a_user_error(runner, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<?, [@S0]>, %b: tensor<?, [@S1]>) {\n"
                   "  %1 = add(%a, %b) -> tensor<?, [@S0]>\n"
                   "}\n"
                   "func.func @symbolic_shape_graph() {\n"
                   "  SymbolicDim @S0 {min = 2, max = 64}\n"
                   "  SymbolicDim @S1 {min = 100, max = 200}\n"
                   "}\n")
    _one_line_error(analyze(runner, str(bad)), "bad.mlir:2:")


def test_mem_limit_with_dims_says_whether_the_peak_fits():
    path = str(SAMPLES / "listing1.mlir")
    small = CliRunner().invoke(main, ["analyze", path, "--dims", "S1=100", "--mem-limit",
                                      "10MiB", "--json"])
    assert small.exit_code == 4  # documented: the report is printed, and scripts can branch
    report = json.loads(small.stdout)
    assert report["fits"] is False and report["mem_limit"] == 10 * 2**20
    text = CliRunner().invoke(main, ["analyze", path, "--dims", "S1=100", "--mem-limit",
                                     "10MiB"])
    assert text.exit_code == 4 and "does NOT fit" in text.stdout
    big = CliRunner().invoke(main, ["analyze", path, "--dims", "S1=100", "--mem-limit", "1GiB",
                                    "--json"])
    assert big.exit_code == 0 and json.loads(big.stdout)["fits"] is True
    alone = CliRunner().invoke(main, ["analyze", path, "--mem-limit", "1GiB"])
    assert alone.exit_code == 1 and "needs --dims" in alone.stderr
