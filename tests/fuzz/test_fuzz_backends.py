"""Fuzzing the two backends against each other: the listings of tests/fuzz/test_fuzz.py through
`run --backend numpy` and `run --backend jax`, in-process through CliRunner.

The NumPy backend means what the JAX backend means (test_backend_semantics.py checks the
values op by op): on every case both accept the listing or both refuse it, neither exits
3 or prints a traceback, and where both run their outputs have the same names, shapes and
element types. The one refusal that is the JAX backend's alone is a 64-bit element type
without JAX's 64-bit mode. Values are not compared here: in generated graphs rounding is
amplified without bound (a sine of a cube, a comparison of two near values), so a
tolerance would either hide a wrong op or fail on honest rounding.

Listings with a while loop are left out: a mutated condition may never fail, and a
compiled loop can not be stopped from Python. Run with no limit: the two backends account for memory differently (NumPy op by op,
JAX by XLA's figures of fused segments), so a limit may fit one and not the other.
A first run of 3,000 such cases found an i64 result narrowed to int32 by JAX, an f64 input
ending in an internal error, a slice stride of 2^63 that only NumPy took, rng_uniform
drawing other numbers on NumPy, and executables that the store had kept broken.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from bladec.cli import main

from tests.support.clirunner import make_runner
from tests.support.fuzzcheck import WHILE, deadline, problem_of
from tests.support.fuzzlisting import cases

CASES = 2000   # the whole campaign: `make fuzz`
SMOKE = 50     # its first cases: `make test`
SMOKE_BOTH_RAN = 10   # 10 of the first 50 run on both (18 of the first 100, 31 of 200)
JAX_ONLY_REFUSAL = "64-bit element types on the jax backend need JAX's 64-bit mode"


def _run(runner, text: str, dims: str, backend: str, out: Path):
    with deadline(30):
        return runner.invoke(main, ["run", "-", "--backend", backend, "--dims", dims,
                                    "--seed", "3", "--outputs", str(out), "-q",
                                    "--compilation-cache", "off"], input=text)


def _arrays(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    with np.load(io.BytesIO(path.read_bytes())) as z:
        return {k: (z[k].shape, str(z[k].dtype)) for k in z.files}


def campaign(count: int, tmp_path: Path) -> tuple[list[str], int]:
    """The failures of the first ``count`` cases of the fixed seed, and how many both ran."""
    runner = make_runner()
    failures: list[str] = []
    both_ran = 0
    for name, text, dims in cases(2026, count, max_ops=12):
        if WHILE.search(text):
            continue   # a mutated condition may never fail: no deadline stops XLA's loop
        results = {}
        for backend in ("numpy", "jax"):
            out = tmp_path / f"{backend}.npz"
            out.unlink(missing_ok=True)
            result = _run(runner, text, dims, backend, out)
            problem = problem_of("run", result)
            if problem:
                failures.append(f"{name} --backend {backend}: {problem}\n{result.stderr[-400:]}")
            results[backend] = (result, out)
        (np_result, np_out), (jax_result, jax_out) = results["numpy"], results["jax"]
        if JAX_ONLY_REFUSAL in jax_result.stderr:
            continue
        if np_result.exit_code != jax_result.exit_code:
            failures.append(f"{name}: numpy exits {np_result.exit_code}, jax "
                            f"{jax_result.exit_code}\n{np_result.stderr[-300:]}"
                            f"{jax_result.stderr[-300:]}\n{text}")
        elif np_result.exit_code == 0:
            both_ran += 1
            if _arrays(np_out) != _arrays(jax_out):
                failures.append(f"{name}: outputs differ in names, shapes or element types: "
                                f"numpy {_arrays(np_out)}, jax {_arrays(jax_out)}\n{text}")
    return failures, both_ran


def _report(failures: list[str]) -> str:
    return f"{len(failures)} failing cases; first ones:\n" + "\n\n".join(failures[:4])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf/nan in random graphs
def test_both_backends_agree_on_a_smoke_campaign(tmp_path) -> None:
    """``make test``: the first SMOKE cases of the campaign's seed."""
    failures, both_ran = campaign(SMOKE, tmp_path)
    assert not failures, _report(failures)
    assert both_ran >= SMOKE_BOTH_RAN   # the cases are not all refused before they run


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf/nan in random graphs
def test_both_backends_accept_the_same_listings_and_give_the_same_outputs(tmp_path) -> None:
    """``make fuzz`` (and ``make bench``): the whole campaign, CASES cases."""
    failures, both_ran = campaign(CASES, tmp_path)
    assert not failures, _report(failures)
    assert both_ran >= 20   # the cases are not all refused before they run
