"""Reading and writing the store's sealed entries (runtime/store/cachedir.py) in tests:
an entry's key is its file's name less the suffix."""
from __future__ import annotations

from pathlib import Path

from bladec.runtime.store.cachedir import seal, unseal


def contents(path: Path) -> bytes:
    """What the entry at ``path`` holds; its seal must be sound."""
    data = unseal(path.name.split(".")[0], path.read_bytes())
    assert data is not None, f"{path} is not sealed"
    return data


def rewrite(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path``, sealed as bladec would: a change the digest can not
    see (a sound entry of another bladec, say), for the checks behind it."""
    path.write_bytes(seal(path.name.split(".")[0], data))
