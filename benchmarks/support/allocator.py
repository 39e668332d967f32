"""The allocator a CPU benchmark runs under, the same for the reference and for bladec.

On a CPU device XLA's buffers come from glibc's malloc. As glibc comes, XLA's worker
threads take big buffers from arenas of their own, which map each one afresh and unmap
it on free: ``jax.jit`` of the small Llama SGD step at 8x256 pays about 61k minor page
faults a step for its 240 MiB of temporaries, a cost that has nothing to do with a plan
(a plan of small segments reuses its memory and escapes it). :data:`TUNED` (one arena,
big buffers from the heap, the heap not trimmed) takes the faults away from every
program alike. ``GLIBC_TUNABLES`` is read when a process starts, so a benchmark that
compares step times takes ``--allocator`` and runs itself once per allocator in a
child process (:func:`run_under`), every row of one child under the same setting.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

TUNED = ("glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=1073741824:"
         "glibc.malloc.trim_threshold=2147483648")
ALLOCATORS = {"default": "", "tuned": TUNED}
_CHILD = "BLADEC_BENCH_ALLOCATOR"   # set in the children run_under starts


def add_option(ap: argparse.ArgumentParser, default: str = "both") -> None:
    ap.add_argument("--allocator", choices=("default", "tuned", "both"), default=default,
                    help="glibc as it comes, tuned so that large temporaries pay no page "
                         f"faults (GLIBC_TUNABLES={TUNED}), or both, one child process "
                         "each (every row of a process runs under the same one)")


def current() -> str:
    """The allocator this process runs under: "default", "tuned" or the tunables."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    for name, value in ALLOCATORS.items():
        if tunables == value:
            return name
    return f"GLIBC_TUNABLES={tunables}"


def describe() -> str:
    """A line for a report's header: which allocator its figures were measured under."""
    name = current()
    if name == "default":
        return "allocator: glibc defaults"
    return f"allocator: {name} (GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')})"


def run_under(choice: str, argv: list[str], script: str) -> int | None:
    """Where ``choice`` is not the allocator this process runs under (or is "both"),
    run ``script`` again with ``argv`` once per allocator asked for, each in a child
    process with its GLIBC_TUNABLES, and return the worst exit status; None where this
    process is the one to measure (it runs under ``choice`` already)."""
    if choice != "both" and (current() == choice or os.environ.get(_CHILD)):
        return None
    names = ("default", "tuned") if choice == "both" else (choice,)
    status = 0
    for name in names:
        env = dict(os.environ, **{_CHILD: name})
        env.pop("GLIBC_TUNABLES", None)
        if ALLOCATORS[name]:
            env["GLIBC_TUNABLES"] = ALLOCATORS[name]
        print(f"\n### allocator: {name} ({ALLOCATORS[name] or 'glibc defaults'})\n",
              flush=True)
        args = [a for a in _without_allocator(argv)] + ["--allocator", name]
        status = max(status, subprocess.run([sys.executable, script, *args],
                                            env=env).returncode)
    return status


def suffixed(path: str) -> str:
    """An output path of this process: as given under the default allocator, with
    ``-tuned`` before its extension under the tuned one (so that ``both`` keeps both)."""
    if current() == "default":
        return path
    stem, dot, ext = path.rpartition(".")
    tag = "tuned" if current() == "tuned" else "tunables"
    return f"{stem}-{tag}.{ext}" if dot and "/" not in ext else f"{path}-{tag}"


def _without_allocator(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--allocator":
            skip = True
        elif not a.startswith("--allocator="):
            out.append(a)
    return out
