"""Nothing is allocated before it is checked (issue 30, item 3): a binding whose extents
overflow, or whose run the machine (no limit) or the limit can not hold, is refused with
one line and exit 1 by ``bladec run`` on both backends and by ``bladec.jit``, before the
inputs are drawn or copied to the device. Before: XLA aborted the process ("overflow in
static extent product"), NumPy started a 149 GiB intermediate, and ``bladec.jit`` copied
a 512 MiB argument to the device before refusing a 64 MiB limit."""
from __future__ import annotations

import types

import numpy as np
import pytest

import bladec
from bladec.cli import main
from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.runtime.planning.limit import LimitError
from tests.support.clirunner import make_runner

# inputs of S0 and S1 elements, a result of S0 x S1: small inputs, a huge result
OUTER = """
func.func @main(%x: tensor<?, [@S0]>, %y: tensor<?, [@S1]>) {
  %a = broadcast_in_dim(%x) {dims = [0]} -> tensor<?x?, [@S0, @S1]>
  %b = broadcast_in_dim(%y) {dims = [1]} -> tensor<?x?, [@S0, @S1]>
  %s = add(%a, %b) -> tensor<?x?, [@S0, @S1]>
  return %s
}
"""
OVERFLOW = "S0=4294967296,S1=4294967296"   # 2^64 elements: past any signed 64-bit extent
HUGE = "S0=1048576,S1=1048576"             # a 4 TiB result: past any machine


def _run(tmp_path, *args: str):
    listing = tmp_path / "outer.mlir"
    listing.write_text(OUTER)
    result = make_runner().invoke(main, ["run", str(listing), "-q", "--compilation-cache",
                                         "off", *args])
    return result


def _refused(result, *words: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("limit", [[], ["--mem-limit", "1GiB"]])
def test_an_overflowing_binding_is_refused_before_anything_is_compiled(
        tmp_path, backend, limit, monkeypatch) -> None:
    compiled: list[int] = []
    monkeypatch.setattr(JaxBackend, "segment", lambda *a, **k: compiled.append(1))
    result = _run(tmp_path, "--dims", OVERFLOW, "--backend", backend, *limit)
    _refused(result, "S0=4294967296, S1=4294967296 makes %a of shape (4294967296, "
             "4294967296) hold 18446744073709551616 elements", "at most 2^63-1 bytes")
    assert compiled == []


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_a_run_the_machine_can_not_hold_is_refused_without_a_limit(tmp_path, backend,
                                                                     monkeypatch) -> None:
    drawn: list[int] = []
    monkeypatch.setattr(Executor, "random_inputs", lambda *a, **k: drawn.append(1))
    result = _run(tmp_path, "--dims", HUGE, "--backend", backend)
    _refused(result, "this run needs ", " TiB (", "of this machine's memory")
    assert drawn == []


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_a_limit_the_run_can_not_meet_is_refused_before_inputs_are_drawn(
        tmp_path, backend, monkeypatch) -> None:
    drawn: list[int] = []
    monkeypatch.setattr(Executor, "random_inputs", lambda *a, **k: drawn.append(1))
    result = _run(tmp_path, "--dims", HUGE, "--backend", backend, "--mem-limit", "1GiB")
    _refused(result, "no plan fits the limit of 1.00 GiB", "smallest limit that works "
             "is ", " TiB (")
    assert drawn == []


def _puts(monkeypatch) -> list[tuple]:
    """The shapes JaxBackend.put copies to the device from here on."""
    shapes: list[tuple] = []
    real = JaxBackend.put

    def put(self, x):
        shapes.append(tuple(np.shape(x)))
        return real(self, x)
    monkeypatch.setattr(JaxBackend, "put", put)
    return shapes


def test_jit_refuses_an_argument_over_the_limit_before_copying_it(monkeypatch) -> None:
    """A 64 MiB argument (a broadcast view: no memory of its own) and a 4 MiB limit."""
    x = np.broadcast_to(np.float32(1), (16 << 20,))
    f = bladec.jit(lambda x: (x * 2).sum(), mem_limit="4MiB", dynamic={"x": "N"})
    copied = _puts(monkeypatch)
    with pytest.raises(LimitError, match="smallest limit that works is 64.00 MiB"):
        f(x)
    assert copied == []
    small = np.ones(1000, np.float32)
    assert float(f(small)) == 2000.0 and copied == [(1000,)]


def test_jit_refuses_an_overflowing_or_unholdable_argument_before_copying_it(monkeypatch
                                                                           ) -> None:
    copied = _puts(monkeypatch)
    f = bladec.jit(lambda x, y: x[:, None] + y[None, :], dynamic={"x": "A", "y": "B"})
    x = np.broadcast_to(np.float32(1), (1 << 20,))
    with pytest.raises(BladecError, match="this run needs 4.00 TiB"):
        f(x, x)
    assert copied == []


def test_a_plan_beyond_the_devices_own_memory_is_refused(monkeypatch) -> None:
    """A device with memory of its own (a GPU) reports its size; a plan over it is
    refused before anything runs (faked here: a CPU reports none)."""
    module = parse_module(OUTER)
    backend = JaxBackend()
    stats = types.SimpleNamespace(memory_stats=lambda: {"bytes_limit": 1 << 20})
    monkeypatch.setattr(backend, "_stats_device", stats)
    ex = Executor(module, backend)
    monkeypatch.setattr(Executor, "in_machine_memory", False)
    copied = _puts(monkeypatch)
    inputs = ex.random_inputs({"S0": 1024, "S1": 1024})
    with pytest.raises(BladecError, match=r"this run needs 4.01 MiB .* on the device at its "
                                          r"peak \(S0=1024, S1=1024\), more than the "
                                          r"device's 1.00 MiB"):
        ex.run(inputs)
    assert copied == []
    outputs, report = ex.run(ex.random_inputs({"S0": 16, "S1": 16}))
    assert outputs["%s"].shape == (16, 16)
