"""Executables kept across processes by what their segments compute (runtime/executables.py):
a later backend loads them without tracing or lowering, runs the same, and reports the
same device figures; any other setting is another key; a bad entry is a miss."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends import jax_backend
from bladec.runtime.store.executables import SUFFIX, ExecutableStore, by_identity
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

from tests.support.runtimecase import CUT, module_of, smallest_named

BINDING = {"S0": 256}


def _module():
    return run_pipeline(module_of(CUT), parse_pipeline("analyze,remat"))


def _run(store: ExecutableStore, limit: int | None, **settings):
    # CUT's plans reload: planned as for a device with a memory of its own (in one
    # memory, CPU, a reload frees nothing and no plan cuts CUT into segments)
    backend = JaxBackend(**{"one_memory": False, **settings})
    backend.store = store
    ex = Executor(_module(), backend)
    outputs, report = ex.run(ex.random_inputs(BINDING, 3), limit)
    return backend, outputs, report


@pytest.fixture(scope="module")
def limit() -> int:
    """The smallest limit named: a plan cut into several segments."""
    return smallest_named(Executor(_module(), JaxBackend(one_memory=False)), BINDING)


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{SUFFIX}"))


def _lowerings(monkeypatch) -> list[int]:
    """Counts LazyCompiled.lower calls (the tracing and lowering a load skips)."""
    calls: list[int] = []
    real = jax_backend.LazyCompiled.lower

    def lower(self):
        calls.append(1)
        return real(self)
    monkeypatch.setattr(jax_backend.LazyCompiled, "lower", lower)
    return calls


def test_a_later_backend_loads_every_segment_without_lowering(tmp_path, limit,
                                                              monkeypatch) -> None:
    store = ExecutableStore(str(tmp_path))
    first, out1, rep1 = _run(store, limit)
    kept = len(_entries(tmp_path))
    # one entry per segment compiled; a segment of a plan that the search for the
    # smallest limit checked (figures only) and that then ran is compiled twice
    assert rep1.segments > 1 and first.compilations >= kept > 1
    lowered = _lowerings(monkeypatch)
    again, out2, rep2 = _run(ExecutableStore(str(tmp_path)), limit)
    assert lowered == []
    # what ran was loaded; what was only checked (the whole step) had its figures read
    assert 0 < again.compilations == again.cache_loads < first.compilations
    assert out2["%g"].tobytes() == out1["%g"].tobytes()
    assert rep2.peak_bytes == rep1.peak_bytes <= limit
    assert rep2.segment_memory == rep1.segment_memory   # XLA's own figures, loaded
    assert len(_entries(tmp_path)) == kept   # a load writes nothing


def test_other_settings_are_other_keys_and_a_bad_entry_is_a_miss(tmp_path, limit,
                                                                  monkeypatch) -> None:
    store = ExecutableStore(str(tmp_path))
    first, out1, _ = _run(store, limit)
    kept = _entries(tmp_path)
    lowered = _lowerings(monkeypatch)
    bitwise, out2, _ = _run(store, limit, bitwise=True)   # other options, other kernels
    assert len(lowered) == bitwise.compilations > 0 and bitwise.cache_loads == 0
    # (fused against bitwise: within the suite's fused tolerance, 1e-5 of the output's
    # largest magnitude, tests/runtime/test_device.py)
    scale = float(np.abs(np.asarray(out1["%g"])).max())
    np.testing.assert_allclose(out2["%g"], out1["%g"], rtol=0, atol=1e-5 * scale)
    for path in kept:
        path.write_bytes(b"not an executable")
    lowered.clear()
    again, out3, _ = _run(store, limit)
    assert len(lowered) == again.compilations >= len(kept)   # every entry a miss...
    assert out3["%g"].tobytes() == out1["%g"].tobytes()
    assert all(p.read_bytes() != b"not an executable" for p in kept)   # ...and replaced


def test_other_xla_flags_are_other_keys(tmp_path, limit, monkeypatch) -> None:
    """XLA_FLAGS change what XLA compiles (fast math, the emitters, a dump): an
    executable kept under other flags is not loaded."""
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    store = ExecutableStore(str(tmp_path))
    _run(store, limit)
    lowered = _lowerings(monkeypatch)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    other, _, _ = _run(store, limit)
    assert len(lowered) == other.compilations > 0 and other.cache_loads == 0
    lowered.clear()
    monkeypatch.setenv("XLA_FLAGS", "  --xla_cpu_enable_fast_math=false ")  # same flags
    same, _, _ = _run(store, limit)
    assert lowered == [] and same.cache_loads > 0


def test_the_store_is_bounded_and_a_missing_directory_only_costs_compiles(tmp_path, limit
                                                                         ) -> None:
    small = ExecutableStore(str(tmp_path / "small"), max_entries=2)
    backend, _, _ = _run(small, limit)
    assert backend.compilations > 2 and len(_entries(tmp_path / "small")) == 2
    gone = ExecutableStore(str(tmp_path / "gone"))
    (tmp_path / "gone").rmdir()
    backend, _, report = _run(gone, limit)
    assert backend.compilations > 0 and report.peak_bytes <= limit
    assert not (tmp_path / "gone").exists()


def test_a_key_by_object_identity_is_not_kept(tmp_path) -> None:
    assert by_identity(("op", 1234, ("%x",), ("%y",), (), ()))
    assert by_identity(((("op", 1234), "whole")))
    assert not by_identity(((("add", "[]", (), ()),), (), (), ()))
    store = ExecutableStore(str(tmp_path))
    assert store.key(JaxBackend(), ("op", 1234, (), (), (), ()), {}) is None
    plain = ((("add", "[]", (), ()),), (), (), ())
    assert store.key(JaxBackend(), plain, {}) != store.key(JaxBackend(bitwise=True), plain, {})


def test_a_refusal_reads_the_figures_without_loading_an_executable(tmp_path, limit,
                                                                   monkeypatch) -> None:
    """A search compiles segments only to read XLA's figures: a later process's search
    reads them from the entries' headers, loading and lowering nothing. Under a limit no
    run meets (0 here) the search compiled them for their figures only (jax_backend.py,
    LazyCompiled._probed), so a run compiles what it executes, once."""
    first = JaxBackend(one_memory=False)   # (see _run)
    first.store = ExecutableStore(str(tmp_path))
    assert smallest_named(Executor(_module(), first), BINDING) == limit
    lowered = _lowerings(monkeypatch)
    loads: list[str] = []
    real = ExecutableStore.load

    def load(self, key):
        loads.append(key)
        return real(self, key)
    monkeypatch.setattr(ExecutableStore, "load", load)
    again = JaxBackend(one_memory=False)
    again.store = ExecutableStore(str(tmp_path))
    ex = Executor(_module(), again)
    assert smallest_named(ex, BINDING) == limit
    assert lowered == [] and loads == [] and again.compilations == 0
    run = ex.prepare(BINDING, limit)
    assert run.device.peak == limit and again.compilations == 0
    outputs, report = ex.run(ex.random_inputs(BINDING, 3), limit)
    assert len(lowered) == again.compilations == report.segments > 1
    assert report.peak_bytes == limit


def test_an_entry_whose_figures_can_not_be_read_is_a_miss(tmp_path, limit) -> None:
    store = ExecutableStore(str(tmp_path))
    _run(store, limit)
    for path in _entries(tmp_path):
        path.write_bytes(path.read_bytes()[:20])   # the header cut short
    again = JaxBackend(one_memory=False)
    again.store = ExecutableStore(str(tmp_path))
    assert smallest_named(Executor(_module(), again), BINDING) == limit
    assert again.compilations > 0 and again.cache_loads == 0
