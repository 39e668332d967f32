"""What earlier processes' searches for the smallest limit found, as hints to check.

A refused limit names the smallest limit that works, found by a search that plans and
compiles again and again (search.py: 68 s on the paper-size step at 16x512). A user who
is refused runs again: with a smaller batch, another limit too small, or the limit named,
and each new process searched from nothing, even to run at the limit it was told (the
closed loop can not find the plan there from no margins: the plan came from a stride at
a higher limit). So each search leaves, beside the optimized listings (listings.py), the
limit it named and the evictions of the plan that fits there (a plan is its evictions:
``plan.plan_of`` makes it again as every planner path makes its plan).

Nothing here is believed. A later process plans again from the hint (the planner and the
compiled figures are deterministic), and every claim is checked as the search checks
it: the plan's device peak from its compiled segments, the named limit met and one byte
less refused (``Fitter._smallest_limit``). A hint that does not hold (another bladec,
another device) costs one plan, then the search runs as before. Hints are small JSON
files (sealed as every entry is, cachedir.py), keyed by the listing (its key in listings.py), the binding and what the plans
depend on besides (the backend and its options, the cost model, consolidation); at most
MAX_HINTS of them, the oldest written dropped first.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any, Callable

from bladec.runtime.store.cachedir import CacheDirectory

SUFFIX = ".bladec-search"
MAX_HINTS = 256
# a backend's settings that its compiled figures depend on (backend.py, jax_backend.py)
_SETTINGS = ("name", "bitwise", "enforce_order", "keeps_freed_memory", "jit_options",
             "compile_options", "_platform", "recomputes_inside")


def backend_identity(backend: object) -> tuple:
    """What plans and compiled figures depend on besides the listing and the binding:
    the backend's settings, its device's kind, the versions of JAX and jaxlib, JAX's
    configuration (its 64-bit mode, default precision, PRNG... change what a segment
    lowers to; a key that left them out loaded a 32-bit executable into a 64-bit run)
    and XLA's flags from the environment (:func:`xla_flags`)."""
    device = getattr(backend, "_stats_device", None)
    jax, jaxlib = sys.modules.get("jax"), sys.modules.get("jaxlib")
    return (tuple((n, repr(getattr(backend, n, None))) for n in _SETTINGS),
            getattr(device, "device_kind", None), getattr(jax, "__version__", None),
            getattr(jaxlib, "__version__", None), jax_configuration(), xla_flags())


def xla_flags() -> str:
    """``XLA_FLAGS`` as the environment has it, blanks collapsed. XLA reads them into
    every compilation's options (fast math, the fusion emitters, which library runs a
    dot...), so an executable compiled under other flags is another executable: a key
    without them loaded executables compiled without a user's new flag (and skipped
    what the flag asked of the compiler, a dump among them)."""
    return " ".join(os.environ.get("XLA_FLAGS", "").split())


def jax_configuration() -> str | None:
    """A digest of JAX's configuration where JAX is loaded, less the persistent cache's
    own settings (where executables are kept, not what they compute)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    values = sorted((k, repr(v)) for k, v in jax.config.values.items()
                    if not k.startswith(("jax_compilation_cache", "jax_persistent_cache")))
    return hashlib.sha256(repr(values).encode()).hexdigest()


class SearchHints(CacheDirectory):
    """Hints in ``directory``; ``listing``: the key of the optimized listing (computed
    when first asked, listings.py)."""

    suffix = SUFFIX
    max_entries = MAX_HINTS

    def __init__(self, directory: str, listing: Callable[[], str]) -> None:
        super().__init__(directory)
        self._listing = listing
        self._prefix: str | None = None
        self.recalled = 0   # hints read that held (plans made again from them)

    def key(self, parts: Any) -> str:
        """The key of one binding's hint: the listing's key and ``parts`` (a value with a
        deterministic ``repr``: the binding, the backend, the cost model...)."""
        if self._prefix is None:
            self._prefix = self._listing()
        return hashlib.sha256(f"{self._prefix}\0{parts!r}".encode()).hexdigest()

    def recall(self, key: str) -> dict | None:
        """The hint stored under ``key``, or None (none, or one that can not be read)."""
        data = self.read(key)
        if data is None:
            return None
        try:
            record = json.loads(data)
        except ValueError:
            return None
        return record if isinstance(record, dict) and record.get("key") == key else None

    def keep(self, key: str, record: dict) -> None:
        """Store ``record`` under ``key`` (a directory that can not be written only costs
        the next process its search), dropping the oldest beyond MAX_HINTS."""
        self.write(key, json.dumps({**record, "key": key}).encode())
