"""Fuzzing the command line: mutated and generated listings through `optimize`, `analyze`
and `run --backend numpy`, in-process through CliRunner.

Each case must end as a success (exit 0; 4 for an analyze whose peak does not fit its
limit) or a user error (exit 1) whose every `error:` line is located (FILE:LINE:COL) or,
for analyze and run, one of the messages about the binding, the limit or the inputs
rather than about the listing (``UNLOCATED_OK``). Never exit 2 or 3, never a traceback,
never an exception escaping the command, never a case that runs for more than
``CASE_SECONDS``. The seeds are fixed, so a failure names a case that reproduces.

``make test`` runs the first SMOKE cases of the campaign (:func:`test_fuzz_cli_smoke`, a
few seconds of CPU); ``make fuzz`` (and ``make bench``) the whole campaign,
:func:`test_fuzz_cli` (2,000 cases), and :func:`test_fuzz_cli_large` (10,000 cases from
other seeds, listings up to 24 ops).
"""
from __future__ import annotations

import random

import pytest

from tests.support.fuzzcheck import fuzz, report
from tests.support.fuzzlisting import cases, mutate


CASES = 2000   # the whole campaign: `make fuzz`
SMOKE = 500    # its first cases: `make test`
SMOKE_LEAST = 40


def _check(count: int, least: int) -> None:
    tally = fuzz(seed=14, count=count)
    print(tally.summary())
    assert not tally.failures, report(tally)
    assert tally.cases == count
    # the cases are not all rejected at the parser: many reach every command's success
    for command in ("optimize", "analyze", "run"):
        assert tally.runs.get((command, 0), 0) >= least, tally.summary()
        assert tally.runs.get((command, 1), 0) >= least, tally.summary()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf/nan in random graphs
def test_fuzz_cli_smoke() -> None:
    """The first 500 cases of the campaign, each through optimize, analyze and run."""
    _check(SMOKE, least=SMOKE_LEAST)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf/nan in random graphs
def test_fuzz_cli() -> None:
    """2,000 mutated and generated listings, each through optimize, analyze and run."""
    _check(CASES, least=250)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fuzz_cli_large() -> None:
    """10,000 cases from other seeds, listings up to 24 ops."""
    tally = fuzz(seed=1400, count=10_000, max_ops=24)
    print(tally.summary())
    assert not tally.failures, report(tally)


def test_mutations_are_deterministic() -> None:
    a = [c for c in cases(7, 30)]
    assert a == [c for c in cases(7, 30)]
    assert len({text for _, text, _ in a}) > 20
    rng1, rng2 = random.Random(3), random.Random(3)
    text = "func.func @main(%a: tensor<?x4, [@S0, @C4]>) {\n  return %a\n}\n"
    assert mutate(text, rng1) == mutate(text, rng2)
