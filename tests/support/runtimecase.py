"""Listings and helpers the runtime tests share (tests/runtime/test_executor.py,
tests/runtime/planning/test_fitting.py, tests/runtime/store/test_executables.py,
tests/cli/test_run_cli.py, tests/api/test_jit.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bladec.cli import main
from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor

from tests.support.paths import ROOT

SMALLEST = re.compile(r"smallest limit that works is [^(]*\((\d+) bytes")
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


def module_of(text: str = "", path: Path | None = None):
    return parse_module(path.read_text() if path else text, str(path or "<test>"))


def listing1_executor(backend=None) -> Executor:
    return Executor(module_of(path=LISTING1), backend or NumpyBackend())


def tight_limit(ex: Executor, binding: dict[str, int]) -> int:
    """A limit under the unconstrained device peak that the executor meets (plans and
    compiles, runs nothing)."""
    peak = ex.prepare(binding, None).device.peak
    try:
        ex.prepare(binding, peak - 1)
        return peak - 1
    except BladecError as exc:
        return int(SMALLEST.search(str(exc)).group(1))


def run_cli(runner: CliRunner, *args: str, input: str | None = None):
    return runner.invoke(main, ["run", *args], input=input)


def smallest_named(ex: Executor, binding: dict[str, int]) -> int:
    """The smallest limit the executor names by the device accounting."""
    with pytest.raises(BladecError) as err:
        ex.prepare(binding, 0)
    return int(SMALLEST.search(str(err.value)).group(1))
