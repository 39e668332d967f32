"""Compiled segments kept across processes by what they compute, so that a later run loads
them without tracing and lowering them again.

JAX's persistent compilation cache (cache.py) is keyed by the lowered module: a process
that finds every executable there still traces and lowers each segment to ask for it.
With the listing and the search's answer kept as well (listings.py, hints.py), that was
the largest part of a refused limit run again on the paper-size training step (at 4x512:
2.97 s, 2.10 s with this store; at 16x512: 2.61 s, 1.76 s; BENCHMARKS.md). bladec knows
what a segment computes before lowering it (backend.segment_key: its ops, attributes,
shapes, dtypes, wiring and donation, the same key its in-process cache shares executables
by), so each executable it compiles is also kept under that key, serialized by JAX
(``jax.experimental.serialize_executable``), and a later process loads it from there.

The key is the segment's key and its compiler options, the backend's settings, its
device (kind and index: an executable is loaded onto the device it was compiled for), the
JAX and jaxlib versions (hints.backend_identity), a digest of bladec's own sources
(listings.code_digest: the lowering is bladec's code) and the Python version: a changed
bladec or JAX is another key, never a stale executable. What is loaded
is XLA's own executable, its memory figures and its donations included, so the device
accounting does not change; a load counts among the compilations as a cache load, as a
load from JAX's cache does. Each entry begins with those figures (the executable's own
``memory_analysis()`` when it was kept), read without loading the executable: a search or
a refusal that only needs to know what a segment holds reads them (at 4x512, loading the
11 executables a refusal checks was 0.3 s of 1.4 s), and the executable is loaded only
where the segment runs. An executable that JAX itself loaded from its persistent cache is
kept as its figures only (:meth:`ExecutableStore.keep_figures`): serialized again, it
lacks its kernels. An entry that can not be read or loaded is a miss, and is replaced.

An entry is sealed (cachedir.py): its digest, over the figures and the executable alike,
is checked before either is used, so a changed figure can not make a limit look met and
a changed bit of an executable never reaches XLA's deserializer (unchecked, two flipped
bits ran with wrong outputs or killed the process). Its header is JSON (the format, the
key, the figures); its body JAX's serialized executable, a pickle, read only from a
directory that is the user's own and private (loading it runs native code); at most
MAX_ENTRIES of them and MAX_BYTES in all, the oldest written dropped first.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import struct
import sys
from typing import Any, NamedTuple

from bladec.runtime.store.cachedir import CacheDirectory
from bladec.runtime.store.hints import backend_identity
from bladec.runtime.store.listings import code_digest

SUFFIX = ".bladec-executable"   # JAX's cache, in the same directory, ignores such names
MAX_ENTRIES = 512
MAX_BYTES = 512 << 20
FORMAT = 3   # of an entry's contents: the header's length (4 bytes), the header (JSON:
             # format, key, figures), the body (a pickle: payload, in_tree, out_tree)
_LENGTH = struct.Struct("<I")


def by_identity(key: tuple) -> bool:
    """Whether a segment key names its ops by object identity (backend.segment_key, for
    ops with regions): such a key means nothing in another process."""
    if len(key) == 2 and isinstance(key[1], str):
        key = key[0]   # (a segment compiled with jax.jit's own options: JaxBackend.segment)
    return bool(key) and key[0] == "op"


class ExecutableStore(CacheDirectory):
    """Serialized executables in ``directory`` (made if missing), by :meth:`key`."""

    suffix = SUFFIX
    max_entries = MAX_ENTRIES
    max_bytes = MAX_BYTES

    def key(self, backend: Any, segment: tuple, options: dict[str, Any]) -> str | None:
        """The entry's name for a segment of ``backend`` compiled with ``options``; None
        where the segment's key is not one across processes (:func:`by_identity`)."""
        if by_identity(segment):
            return None
        device = getattr(getattr(backend, "_stats_device", None), "id", None)
        digest = hashlib.sha256()
        for part in (code_digest(), sys.version, repr(backend_identity(backend)),
                     repr(device), repr(segment), repr(sorted(options.items()))):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()

    def figures(self, key: str) -> Figures | None:
        """The memory figures of the executable kept under ``key``, without loading it;
        None if none is kept or its entry can not be read."""
        entry = self._entry(key)
        return entry[0] if entry is not None else None

    def load(self, key: str) -> Any | None:
        """The executable kept under ``key``, loaded on the default device; None if none
        is kept or it can not be loaded."""
        entry = self._entry(key)
        if entry is None or not entry[1]:   # none, a broken seal, or figures only
            return None
        try:
            payload, in_tree, out_tree = pickle.loads(entry[1])
            if payload is None:   # its figures only (keep_figures)
                return None
            from jax.experimental.serialize_executable import deserialize_and_load
            executable = deserialize_and_load(payload, in_tree, out_tree)
        except Exception:   # none yet, another version's, truncated, not loadable: a miss
            return None
        return executable

    def _entry(self, key: str) -> tuple[Figures, bytes] | None:
        """The figures and the body kept under ``key``, their seal checked; None where
        none is kept, or it is another format's or another key's, or broken."""
        data = self.read(key)
        if data is None or len(data) < _LENGTH.size:
            return None
        size, = _LENGTH.unpack_from(data)
        try:
            header = json.loads(data[_LENGTH.size:_LENGTH.size + size])
            if header["format"] != FORMAT or header["key"] != key:
                return None
            figures = Figures(*header["figures"])
        except (ValueError, KeyError, TypeError):
            return None
        if not all(type(v) is int and v >= 0 for v in figures):
            return None
        return figures, data[_LENGTH.size + size:]

    def keep(self, key: str, executable: Any, figures: Figures) -> None:
        """Keep ``executable`` under ``key``, its figures (``figures_of(executable)``,
        read once by the caller: ``memory_analysis()`` is not free) first; one that JAX
        can not serialize, or a directory that can not be written, only costs the next
        run a compilation."""
        try:
            from jax.experimental.serialize_executable import serialize
            body = serialize(executable)   # (payload, in_tree, out_tree)
        except Exception:   # JAX refuses some (closed-over constants or mutable refs)
            return
        self._write_entry(key, figures, body)

    def keep_figures(self, key: str, figures: Figures) -> None:
        """Keep only an executable's figures under ``key`` (where none are kept yet),
        for one that JAX loaded from its own persistent cache, or one compiled only to
        read them: serialized again, an executable JAX loaded comes out without its
        kernels (jaxlib 0.10: the next process that ran it failed, "Function ... not
        found"), so it is never kept whole; its figures are XLA's all the same, and a
        search reads them without lowering it."""
        if self.figures(key) is None:
            self._write_entry(key, figures, None)

    def _write_entry(self, key: str, figures: Figures, body: tuple | None) -> None:
        """An entry: its header (the format, the key, the executable's figures), then
        ``body``, the serialized executable (None: figures only, an empty body)."""
        try:
            header = json.dumps({"format": FORMAT, "key": key,
                                 "figures": list(figures)}).encode()
            data = _LENGTH.pack(len(header)) + header + (
                b"" if body is None else pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:   # a payload that can not be pickled only costs a compilation
            return
        self.write(key, data)


class Figures(NamedTuple):
    """XLA's memory figures of one executable (its ``memory_analysis()``), in bytes."""
    output: int
    alias: int    # of the outputs, written into donated arguments' buffers
    temp: int


def figures_of(executable: Any) -> Figures:
    stats = executable.memory_analysis()
    return Figures(*(int(getattr(stats, f"{name}_size_in_bytes", 0) or 0)
                     for name in Figures._fields))
