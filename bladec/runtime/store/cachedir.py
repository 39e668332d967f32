"""A directory of files that bladec keeps for later processes: optimized listings
(listings.py), the answers of searches (hints.py) and compiled executables
(executables.py), each kind by its own file suffix in the one cache directory, beside JAX's
own entries.

Nothing in it is needed: every entry is checked where it is read, and a directory that
can not be written only costs later processes the work again. So a file is written
atomically (a reader never sees half of one), and each kind is bounded by a count and a
size in bytes, the oldest written dropped first.

Nothing in it is believed either (DESIGN section 7): a disk, a copy or another program
may have changed an entry since it was written. Each entry is sealed (:func:`seal`): a
magic string, then a SHA-256 digest over the entry's name and its whole contents, then
the contents; :meth:`CacheDirectory.read` gives the contents only where the digest holds,
so a flipped bit anywhere, a truncated file or an entry copied under another name is a
miss (and is replaced by the next write), checked before any byte of it is parsed. The
digest does not stop someone who can write the directory (they can seal what they
like), and two kinds of entry are pickles or XLA executables, which run code when
loaded; so, as ssh refuses a key file others can write, a directory that is not the
user's own and private (:func:`distrust`: owned by another user, writable by group or
others, or under such a directory) is not used at all, and an entry that is a symbolic
link or not the user's own and private is not read; each with a one-line BladecWarning.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import warnings
from pathlib import Path

from bladec.errors import BladecWarning

MAGIC = b"bladec-entry-1\n"    # the seal's format; another (an older entry) is a miss
DIGEST = hashlib.sha256().digest_size

_WARNED: set[str] = set()       # what was warned about in this process, once each


def seal(key: str, data: bytes) -> bytes:
    """``data`` as the entry named ``key``: :data:`MAGIC`, the digest, ``data``."""
    return MAGIC + _digest(key, data) + data


def unseal(key: str, entry: bytes) -> bytes | None:
    """The contents of ``entry`` if it is sealed as the entry named ``key``, else None."""
    head = len(MAGIC) + DIGEST
    if len(entry) < head or not entry.startswith(MAGIC):
        return None
    data = entry[head:]
    return data if entry[len(MAGIC):head] == _digest(key, data) else None


def _digest(key: str, data: bytes) -> bytes:
    digest = hashlib.sha256(MAGIC)
    digest.update(key.encode())
    digest.update(b"\0")
    digest.update(data)
    return digest.digest()


def distrust(directory: Path) -> str | None:
    """Why ``directory`` is not the user's own and private, or None where it is: it
    (and, as for ssh's StrictModes, every directory above it) must be owned by the user
    (or, above it, by root) and not writable by group or others, but for a directory
    with the sticky bit (/tmp) above it, where others can not rename what is ours."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is None:   # no POSIX ownership to check (Windows)
        return None
    path = directory.resolve()
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if st.st_uid != uid:
        return "it is owned by another user"
    if _shared(st, uid):
        return "it is writable by group or others"
    for parent in path.parents:
        try:
            st = parent.stat()
        except OSError as exc:
            return f"cannot read {parent} ({exc.strerror or exc})"
        if st.st_uid not in (uid, 0):
            return f"{parent} is owned by another user"
        if _shared(st, uid) and not st.st_mode & stat.S_ISVTX:
            return f"{parent} is writable by group or others"
    return None


def _shared(st: os.stat_result, uid: int) -> bool:
    """Whether someone other than the user may write what ``st`` describes: others may,
    or its group may and that group is not the user's private one (as ssh allows: a
    home directory of mode 775 whose group is the user's own and has no other member)."""
    if st.st_mode & stat.S_IWOTH:
        return True
    if not st.st_mode & stat.S_IWGRP:
        return False
    try:
        import grp
        import pwd
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(st.st_gid)
    except (ImportError, KeyError):
        return True
    return not (st.st_gid == user.pw_gid and set(group.gr_mem) <= {user.pw_name})


def warn_once(what: str, message: str) -> None:
    """One BladecWarning per ``what`` per process (a run reads many entries)."""
    if what not in _WARNED:
        _WARNED.add(what)
        warnings.warn(message, BladecWarning, stacklevel=3)


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
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        why = distrust(self.directory)
        self.trusted = why is None   # else nothing is read or written here
        if why is not None:
            warn_once(str(self.directory.resolve()), f"ignoring cache directory "
                      f"{self.directory}: {why}")

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{self.suffix}"

    def read(self, key: str) -> bytes | None:
        """The contents kept under ``key``, or None: none kept, the directory not
        trusted, the entry a symbolic link or not the user's own and private (a
        warning), or its seal broken (a bit changed, truncated, another entry's)."""
        if not self.trusted:
            return None
        path = self.path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError:   # ELOOP: a symbolic link (O_NOFOLLOW), or not readable
            if path.is_symlink():
                warn_once(f"{path}:link", f"ignoring cache entry {path}: a symbolic link")
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            why = _entry_distrust(st)
            if why is not None:
                warn_once(f"{path}:{why}", f"ignoring cache entry {path}: {why}")
                return None
            entry = f.read()
        return unseal(key, entry)

    def write(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key``, sealed, within the bounds (:func:`keep_file`);
        nothing where the directory is not trusted."""
        if self.trusted:
            keep_file(self.path(key), seal(key, data), self.max_entries, self.max_bytes)


def _entry_distrust(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return "owned by another user"
    if hasattr(os, "geteuid") and _shared(st, os.geteuid()):
        return "writable by group or others"
    return None


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
        kept = sorted(((p.lstat().st_mtime, p.lstat().st_size, p)
                       for p in path.parent.glob(f"*{path.suffix}")), reverse=True)
        total = 0
        for i, (_, size, old) in enumerate(kept):
            total += size
            if i >= most or (i and most_bytes is not None and total > most_bytes):
                old.unlink(missing_ok=True)
    except OSError:
        pass
