"""Hints of earlier searches for the smallest limit (bladec/runtime/hints.py): a later
process names the same limit after checking it, runs at the named limit without
searching, and a hint that does not hold costs only time."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bladec.runtime.planning import fitting
from bladec.runtime.engine import Engine
from bladec.runtime.store.hints import SUFFIX, SearchHints, backend_identity
from bladec.runtime.planning.limit import LimitError
from bladec.runtime.store.listings import ListingCache
from bladec.runtime.planning.policy import CostModel
from bladec.source import load_module
from tests.support.entries import contents, rewrite

from tests.support.paths import ROOT

LISTING1 = ROOT / "samples" / "listing1-runnable.mlir"
BINDING = {"S1": 64}
PASSES = "analyze,remat"   # on NumPy the smallest limit is then a plan that evicts


def _engine(directory: Path) -> Engine:
    return Engine(load_module(str(LISTING1)), passes=PASSES, backend="numpy",
                  listings=ListingCache(str(directory)))


def _refused(engine: Engine, limit: int = 1000) -> int:
    with pytest.raises(LimitError) as caught:
        engine.executor.prepare(BINDING, limit)
    return caught.value.smallest


@pytest.fixture
def strides(monkeypatch) -> list[int]:
    """The limits the search strode to (the descent's steps): none where a hint held."""
    seen: list[int] = []
    real = fitting.Fitter._stride

    def stride(self, bound, limit):
        seen.append(limit)
        return real(self, bound, limit)
    monkeypatch.setattr(fitting.Fitter, "_stride", stride)
    return seen


def _hint_files(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{SUFFIX}"))


def test_a_later_search_checks_the_hint_instead_of_searching(tmp_path, strides) -> None:
    smallest = _refused(_engine(tmp_path))
    assert strides, "the first search strides down"
    [path] = _hint_files(tmp_path)
    hint = json.loads(contents(path))
    assert hint["smallest"] == smallest and hint["binding"] == BINDING
    assert hint["evictions"]   # a plan that evicts: what makes it again
    strides.clear()
    later = _engine(tmp_path)
    assert _refused(later) == smallest
    assert strides == [] and later.executor.hints.recalled == 1


def test_the_named_limit_runs_in_a_new_process_without_a_search(tmp_path, strides,
                                                                monkeypatch) -> None:
    """Where the closed loop at the named limit finds nothing from no margins (on the
    paper-size step at 16x512 the plan came from a stride at a higher limit; here the
    loop is made to find nothing), the hint's plan is made again and runs."""
    smallest = _refused(_engine(tmp_path))
    strides.clear()
    monkeypatch.setattr(fitting.Fitter, "_fit", lambda self, bound, limit: None)
    later = _engine(tmp_path)
    run = later.executor.prepare(BINDING, smallest)
    assert run.device.peak <= smallest and run.evictions > 0
    assert strides == [] and later.executor.hints.recalled == 1
    inputs = later.executor.random_inputs(BINDING, seed=0)
    _, report = later.executor.run(inputs, smallest)
    assert report.peak_bytes <= smallest
    monkeypatch.undo()
    without = Engine(load_module(str(LISTING1)), passes=PASSES, backend="numpy")
    monkeypatch.setattr(fitting.Fitter, "_fit", lambda self, bound, limit: None)
    with pytest.raises(LimitError):   # no hints: that loop alone finds no plan there
        without.executor.prepare(BINDING, smallest)


@pytest.mark.parametrize("change", ["higher", "lower", "evictions", "fewer", "garbage",
                                    "binding"])
def test_a_hint_that_does_not_hold_costs_only_a_search(tmp_path, strides,
                                                        change: str) -> None:
    """Every claim is checked: a named limit that one byte less also meets, one that
    is not met, an unreadable file, another binding's answer: the search runs, names
    what it named before, and mends the hint. Evictions that make no valid plan, or a
    plan over the limit, are never run."""
    smallest = _refused(_engine(tmp_path))
    [path] = _hint_files(tmp_path)
    hint = json.loads(contents(path))
    if change == "higher":
        hint["smallest"] += 4096
        hint["evictions"] = None
    elif change == "lower":
        hint["smallest"] -= 4096
    elif change == "evictions":   # a plan that is not valid: a value evicted, never back
        hint["evictions"] = [[e[0], e[1], e[2], 10 ** 9, 10 ** 9, 0]
                             for e in hint["evictions"]]
    elif change == "fewer":   # a valid plan that holds more than the named limit
        hint["evictions"] = hint["evictions"][:1]
    elif change == "binding":
        hint["key"] = "0" * 64
    if change == "garbage":
        rewrite(path, b"{not json")
    else:
        rewrite(path, json.dumps(hint).encode())
    strides.clear()
    later = _engine(tmp_path)
    assert _refused(later) == smallest
    if change in ("evictions", "fewer"):
        # the named limit itself still holds as checked; a plan that is not valid is
        # never made, a valid one that holds more is made and checked, and not chosen
        assert later.executor.hints.recalled == (change == "fewer")
    else:
        assert strides, "the search ran"
        assert json.loads(contents(path))["smallest"] == smallest


def test_the_key_names_what_plans_depend_on(tmp_path) -> None:
    hints = SearchHints(str(tmp_path), lambda: "a listing")
    numpy = Engine(load_module(str(LISTING1)), backend="numpy").backend
    base = hints.key(([("S1", 64)], backend_identity(numpy), CostModel(), True))
    assert base == SearchHints(str(tmp_path), lambda: "a listing").key(
        ([("S1", 64)], backend_identity(numpy), CostModel(), True))
    assert base != SearchHints(str(tmp_path), lambda: "another").key(
        ([("S1", 64)], backend_identity(numpy), CostModel(), True))
    for other in [([("S1", 65)], backend_identity(numpy), CostModel(), True),
                  ([("S1", 64)], backend_identity(numpy), CostModel(copy_bandwidth=1e9),
                   True),
                  ([("S1", 64)], backend_identity(numpy), CostModel(), False)]:
        assert hints.key(other) != base


def test_backend_settings_are_in_the_identity() -> None:
    from bladec.runtime.backends.jax_backend import JaxBackend
    plain, bitwise = JaxBackend(), JaxBackend(bitwise=True)
    assert backend_identity(plain) != backend_identity(bitwise)
    assert backend_identity(plain) == backend_identity(JaxBackend())


def test_an_unwritable_directory_keeps_no_hint_and_the_answer_stands(tmp_path) -> None:
    where = tmp_path / "cache"
    engine = _engine(where)
    smallest_before = _refused(_engine(tmp_path / "other"))
    for path in where.iterdir():
        path.unlink()
    where.rmdir()
    where.write_text("a file where the directory was")
    assert _refused(engine) == smallest_before


def test_run_leaves_a_hint_and_a_second_process_names_the_same_limit(tmp_path) -> None:
    """Through `bladec run`: the refusal's search leaves its hint in the cache directory,
    and a second process prints the same message (the hint checked, not searched)."""
    import os
    import subprocess
    import sys
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "bladec", "run", str(LISTING1), "--dims", "S1=64",
           "--mem-limit", "1000", "-q", "--compilation-cache", str(cache)]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 1 and "the smallest limit that works is" in first.stderr
    [hint] = _hint_files(cache)
    assert str(json.loads(contents(hint))["smallest"]) in first.stderr
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 1 and again.stderr == first.stderr
