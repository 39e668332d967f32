"""How many CPUs a bladec process gives XLA's CPU client.

XLA's CPU client sizes its thread pool from the CPUs its process may use when the
client starts, and its compiler splits each large enough loop fusion into that many
parts run side by side (``outer_dimension_partitions`` in the compiled HLO); no flag
or compile option sets either. For the many small kernels of an autobatched model the
parts cost more CPU time than the wall time they save: on the 2-core CI machine
(2026-12-07, the same code on both CPUs and on one, DyNet beside it, rounds
alternated) two CPUs made a TreeLSTM or BiLSTM batch 0-27% shorter in wall time and
0-60% longer in CPU time (BENCHMARKS.md, auto-batching). A process can only choose
before the client starts, by the CPUs it runs on: ``bladec autobatch --cpus`` does that
for its own process; a Python user starts theirs under ``taskset``.
"""
from __future__ import annotations

import os
import sys

from bladec.errors import BladecError


def usable() -> list[int]:
    """The CPUs this process may run on, in order (every CPU where the system does not
    say which)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def client_started() -> bool:
    """Whether a JAX backend (XLA's CPU client among them) has been made in this
    process: its thread pool is sized, whatever the CPUs are now."""
    if "jax" not in sys.modules:
        return False
    from jax._src import xla_bridge
    return xla_bridge.backends_are_initialized()


def confine(cpus: int) -> None:
    """Run this process (the calling thread, and every thread started after it: XLA's
    pool among them) on the first ``cpus`` of the CPUs it may use now. BladecError where
    that is not a count of them, where XLA's client has started already (its pool would
    keep its size: the request would do nothing but slow the calling thread), or where
    the system can not set it."""
    allowed = usable()
    if not 0 < cpus <= len(allowed):
        raise BladecError(f"--cpus {cpus}: this process may use {len(allowed)} CPU"
                          f"{'' if len(allowed) == 1 else 's'} (give 1 to {len(allowed)})")
    if client_started():
        raise BladecError("--cpus: XLA's CPU client has started already; the CPUs must be "
                          "chosen before it starts")
    try:
        os.sched_setaffinity(0, allowed[:cpus])
    except (AttributeError, OSError):
        raise BladecError("--cpus: this system does not let a process choose its CPUs") \
            from None
