"""What a fuzzed command must end as, and the loop that runs fuzz cases through the CLI.

Each case must end as a success (exit 0; 4 for an analyze whose peak does not fit its
limit) or a user error (exit 1) whose every `error:` line is located (FILE:LINE:COL) or,
for analyze and run, one of the messages about the binding, the limit or the inputs
rather than about the listing (``UNLOCATED_OK``). Never exit 2 or 3, never a traceback,
never an exception escaping the command, never a case that runs for more than
``CASE_SECONDS``. Used by tests/fuzz/test_fuzz.py and test_fuzz_backends.py.
"""
from __future__ import annotations

import random
import re
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from bladec.cli import main

from tests.support.clirunner import make_runner
from tests.support.fuzzlisting import cases

CASE_SECONDS = 20
LOCATED = re.compile(r"^\S.*?:\d+:\d+: error: ")
# Messages of analyze and run that are about the binding (--dims), the limit or the
# run's inputs, not about a place in the listing: these are not located.
UNLOCATED_OK = re.compile(
    r"^error: (no value for symbol|unknown symbol|\w+=\d+ (is outside its range|"
    r"contradicts)|(\w+=\d+, )*\w+=\d+ breaks the relation|the binding (makes|breaks)|no plan fits the limit|"
    r"random inputs (need every free symbol|for )|no value of \w+ fits|"
    r"input %\S+ (dim \d+ is|has shape)|not enough memory for random inputs|"
    r"--dims must give every free symbol|--mem-limit needs --dims)")

# Known bugs, each: the class, the command it shows in, a narrow pattern of its message,
# and one of the listing (None: any). A case that matches is counted as known, not as a
# failure; anything else fails the test. None is known now: the verifier and binding
# fixes of issue 14 landed, and the filters that stood in for them were removed.
KNOWN: list[tuple[str, str, re.Pattern[str], re.Pattern[str] | None]] = []
WHILE = re.compile(r"= while\(")


@dataclass
class Tally:
    cases: int = 0
    runs: dict[tuple[str, int], int] = field(default_factory=dict)
    known: dict[str, list[str]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")

    def summary(self) -> str:
        codes = ", ".join(f"{cmd} {code}: {n}" for (cmd, code), n in sorted(self.runs.items()))
        known = "; ".join(f"{k}: {len(v)}" for k, v in self.known.items()) or "none"
        return (f"{self.cases} cases; exits {codes}; known bugs {known}; slowest "
                f"{self.slowest[0]:.2f} s ({self.slowest[1]})")


class CaseTimeout(BaseException):
    """Not an Exception: the command's own handler of unexpected errors (exit 3) must not
    catch it, so that the case, not the command, reports the time it took."""


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise CaseTimeout in the case after ``seconds`` (SIGALRM; no-op where absent)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise CaseTimeout(f"over {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def problem_of(command: str, result) -> str | None:
    """What is wrong with one command's result, or None."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"exception escaped: {type(result.exception).__name__}: {result.exception}"
    out = result.stdout + result.stderr
    if "Traceback" in out:
        return "traceback in the output"
    code = result.exit_code
    if code == 0 or (code == 4 and command == "analyze"):
        return None
    if code != 1:
        return f"exit {code}"
    errors = [line for line in result.stderr.splitlines() if re.search(r"\berror: ", line)]
    if not errors:
        return "exit 1 without an error line"
    for line in errors:
        if LOCATED.match(line):
            continue
        if command != "optimize" and UNLOCATED_OK.match(line):
            continue
        return f"unlocated error: {line}"
    return None


def run_case(runner, tally: Tally, name: str, text: str, dims: str, rng: random.Random) -> None:
    """One listing through optimize, then analyze and run (each with a drawn variant)."""
    tally.cases += 1
    limit = rng.choice([None, None, "4KiB", "64KiB", "1MiB"])
    commands = [
        ("optimize", ["optimize", "-"]),
        ("analyze", ["analyze", "-", "--dims", dims] + (["--mem-limit", limit] if limit else [])),
        ("run", ["run", "-", "--backend", "numpy", "--dims", dims,
                 "-p", rng.choice(["analyze,schedule,remat", "analyze,schedule,remat", "none",
                                   "analyze,remat", "schedule{versions=1},remat"])]
         + (["--mem-limit", limit] if limit else [])),
    ]
    for command, args in commands:
        start = time.perf_counter()
        try:
            with deadline(CASE_SECONDS):
                result = runner.invoke(main, args, input=text)
        except CaseTimeout as exc:
            if command == "run" and WHILE.search(text):
                # a mutated condition that never fails: the listing runs forever, as
                # lax.while_loop does (not a bladec bug; the run is stopped here)
                tally.known.setdefault("a while loop that never ends", []).append(name)
                continue
            tally.failures.append(f"{name} {command}: {exc}\n{text}")
            continue
        seconds = time.perf_counter() - start
        if seconds > tally.slowest[0]:
            tally.slowest = (seconds, f"{name} {command}")
        key = (command, result.exit_code)
        tally.runs[key] = tally.runs.get(key, 0) + 1
        problem = problem_of(command, result)
        if problem is None:
            continue
        for label, where, pattern, listing in KNOWN:
            if (where == command and pattern.search(result.stderr)
                    and (listing is None or listing.search(text))):
                tally.known.setdefault(label, []).append(name)
                break
        else:
            tally.failures.append(f"{name} {' '.join(args)}: {problem}\n"
                                  f"--- stderr:\n{result.stderr[-600:]}\n--- listing:\n{text}")


def fuzz(seed: int, count: int, max_ops: int = 10) -> Tally:
    runner = make_runner()
    tally = Tally()
    rng = random.Random(seed + 1)
    for name, text, dims in cases(seed, count, max_ops):
        run_case(runner, tally, name, text, dims, rng)
    return tally


def report(tally: Tally) -> str:
    shown = "\n\n".join(tally.failures[:5])
    return f"{len(tally.failures)} failing cases ({tally.summary()}); first ones:\n{shown}"
