"""The process's memory mappings that compiled executables hold, kept under a bound.

Every XLA:CPU executable maps its generated code into the process: three mappings (code,
read-only data, data) per object LLVM emits, about 200 for one training step of the
small Llama model of the benchmarks, whether whole or cut into segments. Linux allows a
process ``vm.max_map_count`` mappings (65,530 by default); past it every ``mmap`` fails,
XLA logs "LLVM compilation error: Cannot allocate memory" and the process dies with a
SIGSEGV, with RAM to spare. That is what a training run with a new sequence length at
most steps met: Table 1's 200-step run compiled some 300 executables for its first batch
size, each kept alive by the cache that shares it between calls (BENCHMARKS.md).

So the executables bladec compiles are resident in one process-wide list, least recently
run first; each counts the mappings its compilation added (from ``/proc/self/maps``), and
once they hold more than :func:`budget` together, the least recently run lose their
executables (their memory figures stay: the accounting does not compile again), and are
compiled again if they run again. A working set that fits is never touched; one that
does not costs compilations, not the process.
"""
from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from typing import Any

BUDGET_VARIABLE = "BLADEC_MAX_MAPPINGS"
MAPS = "/proc/self/maps"
MAX_MAP_COUNT = "/proc/sys/vm/max_map_count"
SHARE = 0.5   # of vm.max_map_count, for bladec's executables: the rest is the process's
              # own (JAX and its libraries about 1,500) and the user's (jax.jit's cache)
UNCOUNTED = 200   # mappings charged to an executable where they can not be counted


def mapping_count() -> int | None:
    """How many memory mappings the process has now (None where the system does not say)."""
    try:
        with open(MAPS, "rb") as maps:
            return maps.read().count(b"\n")
    except OSError:
        return None


def budget() -> int | None:
    """How many mappings bladec's executables may hold together: ``BLADEC_MAX_MAPPINGS``
    (0: no bound), else half of ``vm.max_map_count``; None (no bound) where neither says."""
    given = os.environ.get(BUDGET_VARIABLE)
    if given is not None:
        try:
            value = int(given)
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"{BUDGET_VARIABLE} must be a count of mappings (0: no bound), "
                             f"not {given!r}")
        return value or None
    try:
        with open(MAX_MAP_COUNT) as limit:
            return int(int(limit.read()) * SHARE)
    except (OSError, ValueError):
        return None


class Residency:
    """The compiled executables alive in this process, least recently run first, and the
    mappings they hold. An entry is any object with ``release()`` (jax_backend.py's
    LazyCompiled), held weakly: one its owner lets go of takes its mappings with it."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.held = 0           # mappings of the resident executables, as counted
        self.released = 0       # executables dropped to stay under the limit
        self._entries: OrderedDict[int, tuple[weakref.ref, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def touch(self, entry: Any) -> None:
        """``entry`` ran: the last to be released."""
        if id(entry) in self._entries:
            self._entries.move_to_end(id(entry))

    def admit(self, entry: Any, mappings: int | None) -> None:
        """``entry`` was just compiled (or loaded), adding ``mappings``; release the least
        recently run others while the resident ones hold more than the limit."""
        cost = UNCOUNTED if mappings is None else max(mappings, 0)
        key = id(entry)
        self._drop(key)
        self._entries[key] = (weakref.ref(entry, lambda _: self._drop(key)), cost)
        self.held += cost
        while self.limit is not None and self.held > self.limit and len(self._entries) > 1:
            _, (ref, held) = self._entries.popitem(last=False)
            self.held -= held
            victim = ref()
            if victim is not None:
                self.released += 1
                victim.release()

    def _drop(self, key: int) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.held -= old[1]


_RESIDENT: list[Residency] = []


def resident() -> Residency:
    """The process's one :class:`Residency`, bounded by :func:`budget` as first read."""
    if not _RESIDENT:
        _RESIDENT.append(Residency(budget()))
    return _RESIDENT[0]
