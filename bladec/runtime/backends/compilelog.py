"""A log of every XLA compilation a backend makes, for finding where a refusal's time goes.

Off unless ``BLADEC_DEBUG_COMPILES`` names a file (``-``: standard error): then each
compilation of a segment appends one tab-separated line: what it was for (``figures``:
read its memory figures only; ``run``: the executable that runs), the program's StableHLO
fingerprint (SHA-1 of its text, without locations), its size in ops and characters, the
process CPU and wall seconds it took, what the same program was compiled for earlier in
the process (``-``: never), and the CPU seconds of JAX's lowering among them. The options
are not in the fingerprint: a figures-only compilation and the one that runs share it. The cost of the fingerprint (printing
the lowered module) is paid only while the log is on.
"""
from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

VARIABLE = "BLADEC_DEBUG_COMPILES"


def hlo_fingerprint(lowered: Any) -> tuple[str, int, int]:
    """The lowered program's fingerprint, its op count and its text's length: two
    lowerings with one fingerprint are one program (names, locations and the Python
    function it came from do not enter the text)."""
    text = lowered.as_text()
    ops = sum(1 for line in text.splitlines() if " = " in line)
    return hashlib.sha1(text.encode()).hexdigest()[:16], ops, len(text)


class CompileLog:
    """The process's log (see the module); :func:`compile_log` gives it, or None."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.seen: dict[str, list[str]] = {}   # fingerprint -> what it was compiled for
        self.count = 0

    def record(self, kind: str, lowered: Any, cpu: float, wall: float,
               lowering: float = 0.0) -> None:
        """One line for a compilation: ``cpu`` and ``wall`` seconds in all, ``lowering``
        of them the CPU seconds of JAX tracing and lowering the segment (the rest is
        XLA's)."""
        fingerprint, ops, chars = hlo_fingerprint(lowered)
        kinds = self.seen.setdefault(fingerprint, [])
        again = ",".join(kinds) or "-"
        kinds.append(kind)
        self.count += 1
        line = (f"{self.count}\t{kind}\t{fingerprint}\t{ops}\t{chars}\t{cpu:.3f}\t"
                f"{wall:.3f}\t{again}\t{lowering:.3f}\n")
        if self.target == "-":
            sys.stderr.write(line)
        else:
            with open(self.target, "a") as out:
                out.write(line)


_LOGS: dict[str, CompileLog] = {}   # by target: one "seen" record per file


def compile_log() -> CompileLog | None:
    """The log ``BLADEC_DEBUG_COMPILES`` names, or None where it is not set (read at each
    compilation: a dictionary look-up beside seconds of compiling)."""
    target = os.environ.get(VARIABLE)
    if not target:
        return None
    log = _LOGS.get(target)
    if log is None:
        log = _LOGS[target] = CompileLog(target)
    return log
