"""Listings whose relations do not solve for one symbol as a polynomial, through the CLI:
the default pipeline optimizes them, ``run --dims`` takes any symbols that determine the
rest, and a value that breaks a relation is one located line naming it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bladec.cli import main

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT
from tests.support.relationcase import FIXED_PRODUCT, FIXED_SUM, QUOTIENT, SQUARE

LISTING1 = str(ROOT / "samples" / "listing1.mlir")
LISTING1_RUNNABLE = str(ROOT / "samples" / "listing1-runnable.mlir")

FOUR_SYMBOLS = """
func.func @main(%a: tensor<?x?xf32, [@S0, @S1]>) {
  %1 = reshape(%a) -> tensor<?x?xf32, [@S2, @S3]>
  %2 = exp(%1) -> tensor<?x?xf32, [@S2, @S3]>
  return %2
}
"""
UNDECLARED_SUM = """
func.func @main(%a: tensor<?x8xf32, [@S0, @C8]>, %b: tensor<?x8xf32>) {
  %1 = concatenate(%a, %b) {dim = 0} -> tensor<100x8xf32>
  %2 = neg(%1) -> tensor<100x8xf32>
  return %2
}
"""
ONLY_IOTA = """
func.func @main() {
  %i = iota() {dim = 0} -> tensor<?xf32, [@S0]>
  %y = neg(%i) -> tensor<?xf32, [@S0]>
  return %y
}
"""

# (listing, --dims of free symbols only, symbols the run must report)
CASES = {
    "quotient": (QUOTIENT, "S0=8,S1=64", {"S0": 8, "S1": 64, "S2": 16}),
    "quotient-other-pair": (QUOTIENT, "S0=8,S2=16", {"S0": 8, "S1": 64, "S2": 16}),
    "fixed-product": (FIXED_PRODUCT, "S0=16", {"S0": 16, "S1": 16}),
    "fixed-product-other": (FIXED_PRODUCT, "S1=4", {"S0": 64, "S1": 4}),
    "fixed-sum": (FIXED_SUM, "S0=3", {"S0": 3}),
    "fixed-sum-derived": (FIXED_SUM, "S1=3", {"S0": 7}),
    "undeclared-sum": (UNDECLARED_SUM, "S0=30", {"S0": 30}),
    "four-symbols": (FOUR_SYMBOLS, "S0=2,S1=6,S2=3", {"S0": 2, "S1": 6, "S2": 3, "S3": 4}),
    "square": (SQUARE, "S1=49", {"S0": 7}),
    "only-iota": (ONLY_IOTA, "S0=3", {"S0": 3}),
}


@pytest.fixture
def runner():
    return make_runner()


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "g.mlir"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_pipeline_optimizes_and_round_trips(runner, tmp_path, name):
    text, _, _ = CASES[name]
    first = runner.invoke(main, ["optimize", _write(tmp_path, text)])
    assert first.exit_code == 0, first.output
    again = runner.invoke(main, ["optimize", "-"], input=first.stdout)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_with_the_free_symbols_only(runner, tmp_path, name):
    text, dims, want = CASES[name]
    result = runner.invoke(main, ["run", _write(tmp_path, text), "--dims", dims,
                                  "--backend", "numpy", "--json"])
    assert result.exit_code == 0, result.output
    binding = json.loads(result.stdout)["binding"]
    assert {s: binding[s] for s in want} == want


def test_analyze_derives_from_any_determining_symbols(runner, tmp_path):
    result = runner.invoke(main, ["analyze", _write(tmp_path, QUOTIENT), "--dims",
                                  "S0=8,S1=64", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dims"] == {"S0": 8, "S1": 64, "S2": 16}


def test_listing1_derives_s1_from_s0(runner):
    result = runner.invoke(main, ["analyze", LISTING1, "--dims", "S0=1200", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dims"] == {"S0": 1200, "S1": 100}
    assert report["bytes_at"]["%1085"] == 1024 * 1200 * 4
    run = runner.invoke(main, ["run", LISTING1_RUNNABLE, "--dims", "S0=1200",
                               "--backend", "numpy", "--json"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["binding"] == {"S1": 100}


def _one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output)
    lines = [l for l in result.stderr.splitlines() if "warning:" not in l]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["run", "analyze"])
@pytest.mark.parametrize("text, dims, needles", [
    (QUOTIENT, "S0=8,S1=63", ["S0=8, S1=63", "S0*S1 = 32*S2", "no integer S2"]),
    (QUOTIENT, "S0=8,S1=64,S2=17", ["S2=17", "S0*S1 = 32*S2"]),
    (FIXED_PRODUCT, "S0=3", ["S0=3", "S0*S1 = 256"]),
    (FIXED_SUM, "S0=13", ["S1 = -S0 + 10 = -3", "outside its range"]),
    (QUOTIENT, "S2=16", ["no value for symbol(s) S0, S1"]),
    (LISTING1_RUNNABLE, "S0=1200,S1=50", ["S0=1200, S1=50", "S0 = 12*S1"]),
])
def test_a_contradicting_value_names_the_relation(runner, tmp_path, command, text, dims,
                                                  needles):
    path = text if text.endswith(".mlir") else _write(tmp_path, text)
    args = [command, path, "--dims", dims] + (["--backend", "numpy"] if command == "run" else [])
    _one_line_error(runner.invoke(main, args), *needles)


def test_no_solution_is_an_error_at_the_op(runner, tmp_path):
    text = ("func.func @main(%a: tensor<?xf32, [@S0]>, %b: tensor<?xf32, [@S1]>) {\n"
            "  %1 = concatenate(%a, %b) {dim = 0} -> tensor<1xf32>\n}\n")
    path = _write(tmp_path, text)
    line = _one_line_error(runner.invoke(main, ["optimize", path]), "leave S0 no value")
    assert line.startswith(f"{path}:2:3: error:")
