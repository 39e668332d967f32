"""Optimized listings kept across processes, beside JAX's compiled executables.

A user who is refused a limit, or who runs the same listing again, starts a new process
that runs the same pass pipeline on the same listing: 0.7 s of the 2.3-2.7 s that a
refused limit on the paper-size training step took with every executable loaded from
JAX's cache (cache.py). So ``bladec run`` keeps the pipeline's result in the same
directory, and a later run with the same listing and passes loads it (0.1 s there).

What the pipeline gives depends only on the listing, the passes and bladec's own code,
so the key is made of exactly those: the listing as parsed (its ``repr``, which has every
op, type, attribute and source position, so a message located in the listing points
where it did), the passes with their options, a digest of every source file of the
package and its grammar, and the Python version. A changed bladec is another key, never
a stale listing. Nothing the device accounting reads comes from here: every memory figure
is still XLA's own, from executables compiled or loaded for this run. An entry that can
not be read (another version's, a truncated file) is a miss, and is replaced.

Entries are pickles of bladec's own IR, sealed (cachedir.py: a digest over the whole
entry, checked before it is unpickled, so a changed or truncated entry is a miss), and
read only from a directory that is the user's own and private (unpickling runs code); at
most MAX_ENTRIES of them and MAX_BYTES in all, the oldest written dropped first. A load
writes nothing (a second process that finds everything it needs leaves the directory as
it was).
"""
from __future__ import annotations

import hashlib
import pickle
import sys
import warnings
from pathlib import Path
from typing import Callable, Sequence

from bladec.ir import Module
from bladec.runtime.store.cachedir import CacheDirectory

SUFFIX = ".bladec-listing"   # JAX's cache, in the same directory, ignores such names
MAX_ENTRIES = 32             # optimized listings kept, the oldest written dropped first,
MAX_BYTES = 256 << 20        # and at most this many bytes of them (the newest always kept)
FORMAT = 1                   # of an entry: (FORMAT, key, module, warnings)

_CODE: list[str] = []        # the digest of bladec's own sources, once per process


def code_digest() -> str:
    """A digest of every Python file of the bladec package and of its grammar: any
    change to what the passes do is a change to the key."""
    if not _CODE:
        from bladec.parse import _grammar_text
        digest = hashlib.sha256(_grammar_text().encode())
        root = Path(__file__).resolve().parents[2]   # the bladec package
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        _CODE.append(digest.hexdigest())
    return _CODE[0]


def listing_key(module: Module, passes: Sequence[object]) -> str:
    """The key of ``module`` optimized by ``passes`` (see the module's text)."""
    digest = hashlib.sha256()
    for part in (code_digest(), sys.version, repr(module),
                 repr([(getattr(p, "name", type(p).__name__), sorted(vars(p).items()))
                       for p in passes])):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


class ListingCache(CacheDirectory):
    """Optimized listings in ``directory`` (made if missing), by :func:`listing_key`."""

    suffix = SUFFIX

    max_entries = MAX_ENTRIES
    max_bytes = MAX_BYTES

    def __init__(self, directory: str, max_entries: int | None = None,
                 max_bytes: int | None = None) -> None:
        super().__init__(directory, max_entries, max_bytes)
        self.hits = 0
        self.last_key: str | None = None   # of the listing last optimized or loaded

    def optimized(self, module: Module, passes: Sequence[object],
                  compute: Callable[[], Module]) -> Module:
        """``compute()`` (the pipeline on ``module``), or what it gave before for the same
        listing, passes and bladec. The warnings it gave are given again on a load, so a
        cached run says what an uncached one says."""
        key = self.last_key = listing_key(module, passes)
        entry = self._read(key)
        if entry is not None:
            self.hits += 1
            optimized, said = entry
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                optimized = compute()
            said = [(w.message, w.category, w.filename, w.lineno) for w in caught]
            self._write(key, (FORMAT, key, optimized, said))
        for message, category, filename, lineno in said:
            warnings.warn_explicit(message, category, filename, lineno)
        return optimized

    def _read(self, key: str) -> tuple[Module, list] | None:
        data = self.read(key)   # None: none yet, or its seal broken
        if data is None:
            return None
        try:
            fmt, stored, module, said = pickle.loads(data)
        except Exception:   # another version's: a miss
            return None
        if fmt != FORMAT or stored != key or not isinstance(module, Module):
            return None
        return module, said

    def _write(self, key: str, entry: tuple) -> None:
        """Store the entry; a directory that can not be written, or a listing that can
        not be pickled, only costs the next run the pipeline again."""
        try:
            data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, RecursionError, TypeError):
            return
        self.write(key, data)
