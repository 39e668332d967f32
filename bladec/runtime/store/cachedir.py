"""A directory of files that bladec keeps for later processes: optimized listings
(listings.py), the answers of searches (hints.py) and compiled executables
(executables.py), each kind by its own file suffix in the one cache directory, beside JAX's
own entries.

Nothing in it is needed: every entry is checked where it is read, and a directory that
can not be written only costs later processes the work again. So a file is written
atomically (a reader never sees half of one), and each kind is bounded by a count and a
size in bytes, the oldest written dropped first.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


class CacheDirectory:
    """Files named ``<key><suffix>`` in ``directory`` (made if missing): at most
    ``max_entries`` of them and ``max_bytes`` in all (None: no bound on bytes); each kind
    gives its suffix and its bounds as class attributes, a caller other bounds."""

    suffix = ""
    max_entries = 1
    max_bytes: int | None = None

    def __init__(self, directory: str, max_entries: int | None = None,
                 max_bytes: int | None = None) -> None:
        self.directory = Path(directory)
        if max_entries is not None:
            self.max_entries = max_entries
        if max_bytes is not None:
            self.max_bytes = max_bytes
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{self.suffix}"

    def write(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key`` within the bounds (:func:`keep_file`)."""
        keep_file(self.path(key), data, self.max_entries, self.max_bytes)


def keep_file(path: Path, data: bytes, most: int, most_bytes: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (a reader never sees half a file), then drop
    the oldest files with the same suffix in its directory beyond ``most`` files or
    ``most_bytes`` bytes (the newest is always kept); an OSError leaves things as they
    were (the caller's files are only caches)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        kept = sorted(((p.stat().st_mtime, p.stat().st_size, p)
                       for p in path.parent.glob(f"*{path.suffix}")), reverse=True)
        total = 0
        for i, (_, size, old) in enumerate(kept):
            total += size
            if i >= most or (i and most_bytes is not None and total > most_bytes):
                old.unlink(missing_ok=True)
    except OSError:
        pass
