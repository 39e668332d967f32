"""The store's entries are untrusted input (DESIGN section 7, issue 30): a changed bit
anywhere in an entry (its seal, its header, its figures, its payload), a truncated entry,
an entry copied under another key, rewritten figures: each is a miss and is replaced,
never a wrong output, a crash or a wrong limit; a damaged executable never reaches XLA's
deserializer. A directory or an entry that is not the user's own and private, and a
symbolically linked entry, are not read, with one warning line."""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from bladec.errors import BladecWarning
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.runtime.store import cachedir
from bladec.runtime.store.cachedir import MAGIC, CacheDirectory, distrust, seal, unseal
from bladec.runtime.store.executables import ExecutableStore
from bladec.cli import main
from tests.support.clirunner import make_runner
from tests.support.runtimecase import LISTING1, smallest_named
from tests.runtime.store.test_executables import BINDING, _entries, _module, limit   # noqa: F401 (a fixture)
from tests.runtime.store.test_executables import _run as run_with_store

# each test runs the listing again with a fresh store: the same segments:
# XLA compiles each once (issue 36; tests/support/compileonce.py)
pytestmark = pytest.mark.usefixtures("compile_once")


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    """Each test hears its own warnings (they are given once per process)."""
    monkeypatch.setattr(cachedir, "_WARNED", set())


def _run(directory: Path, limit: int | None):
    return run_with_store(ExecutableStore(str(directory)), limit)


def _foreign_group(path: Path) -> None:
    """Give ``path`` a group that is not the user's private one (a group-writable
    directory of the user's own private group is private, as for ssh), or skip."""
    import pwd
    private = pwd.getpwuid(os.geteuid()).pw_gid
    for gid in [g for g in os.getgroups() if g != private] + [65534]:
        try:
            os.chown(path, -1, gid)
            return
        except OSError:
            continue
    pytest.skip("no group other than the user's private one to give a file")


def _deserialized(monkeypatch) -> list[bytes]:
    """The payloads handed to XLA's deserializer from here on."""
    import jax.experimental.serialize_executable as se
    calls: list[bytes] = []
    real = se.deserialize_and_load

    def load(payload, *rest, **kw):
        calls.append(payload)
        return real(payload, *rest, **kw)
    monkeypatch.setattr(se, "deserialize_and_load", load)
    return calls


# --- the seal itself -------------------------------------------------------------------

def test_the_seal_holds_only_for_the_same_bytes_under_the_same_key() -> None:
    data = bytes(range(256)) * 4
    entry = seal("k1", data)
    assert unseal("k1", entry) == data
    assert unseal("k2", entry) is None                  # copied under another key
    for n in range(0, len(entry), 7):                   # every part: magic, digest, data
        bad = bytearray(entry)
        bad[n] ^= 1 << (n % 8)
        assert unseal("k1", bytes(bad)) is None, n
    for cut in (0, 1, len(MAGIC), len(MAGIC) + 31, len(entry) - 1):
        assert unseal("k1", entry[:cut]) is None        # truncated
    assert unseal("k1", entry + b"\0") is None          # grown
    assert unseal("", seal("", b"")) == b""


def test_a_directory_must_be_the_users_own_and_private(tmp_path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert distrust(private) is None
    private.chmod(0o770)
    import grp
    import pwd
    user = pwd.getpwuid(os.geteuid())
    if private.stat().st_gid == user.pw_gid and \
            set(grp.getgrgid(user.pw_gid).gr_mem) <= {user.pw_name}:
        assert distrust(private) is None                # the user's private group
    _foreign_group(private)
    assert "writable by group or others" in distrust(private)
    private.chmod(0o702)
    assert "writable by group or others" in distrust(private)
    private.chmod(0o700)
    below = private / "below"
    below.mkdir(mode=0o700)
    private.chmod(0o777)                                # a parent others can write
    assert "writable by group or others" in distrust(below)
    private.chmod(0o1777)                               # ... with the sticky bit: /tmp
    assert distrust(below) is None
    private.chmod(0o700)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_a_directory_or_entry_of_another_user_is_not_used(tmp_path) -> None:
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    assert "owned by another user" in distrust(other)
    mine = tmp_path / "mine"
    store = CacheDirectory(str(mine))
    store.write("k", b"payload")
    os.chown(store.path("k"), 65534, 65534)
    with pytest.warns(BladecWarning, match="owned by another user"):
        assert store.read("k") is None


def test_a_group_writable_directory_is_neither_read_nor_written(tmp_path) -> None:
    shared = tmp_path / "shared"
    CacheDirectory(str(shared)).write("k", b"kept while private")
    _foreign_group(shared)
    shared.chmod(0o775)
    with pytest.warns(BladecWarning, match=r"ignoring cache directory .*shared: it is "
                                           r"writable by group or others"):
        store = CacheDirectory(str(shared))
    assert store.read("k") is None
    store.write("k2", b"x")
    assert not store.path("k2").exists()
    shared.chmod(0o700)
    assert CacheDirectory(str(shared)).read("k") == b"kept while private"


def test_a_symlinked_or_group_writable_entry_is_not_read(tmp_path) -> None:
    store = CacheDirectory(str(tmp_path / "c"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(seal("k", b"planted"))        # sealed right, but not ours
    store.path("k").symlink_to(elsewhere)
    with pytest.warns(BladecWarning, match="ignoring cache entry .*: a symbolic link"):
        assert store.read("k") is None
    store.write("k", b"mine")                           # the link replaced, not followed
    assert not store.path("k").is_symlink() and store.read("k") == b"mine"
    assert elsewhere.read_bytes() == seal("k", b"planted")
    _foreign_group(store.path("k"))
    store.path("k").chmod(0o664)
    with pytest.warns(BladecWarning, match="writable by group or others"):
        assert store.read("k") is None


def test_a_warning_is_given_once_per_directory(tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            CacheDirectory(str(shared))
    assert len([w for w in caught if issubclass(w.category, BladecWarning)]) == 1


# --- executables: figures and payloads ------------------------------------------------

def _where(entry: bytes, part: str) -> int:
    """An offset inside ``part`` of a sealed executable entry."""
    head = len(MAGIC) + 32
    header = entry.index(b'{"format"')
    return {"magic": 3, "digest": len(MAGIC) + 5, "length": head + 1,
            "header": header + 3, "figures": entry.index(b'"figures": [') + 13,
            "payload": len(entry) - 300}[part]


@pytest.mark.parametrize("part", ["magic", "digest", "length", "header", "figures",
                                  "payload"])
def test_a_flipped_bit_anywhere_in_an_executable_is_a_miss(tmp_path, limit, part,
                                                           monkeypatch) -> None:
    first, out1, rep1 = _run(tmp_path, limit)
    kept = _entries(tmp_path)
    assert len(kept) > 1
    for path in kept:
        entry = bytearray(path.read_bytes())
        entry[_where(bytes(entry), part)] ^= 0x10
        path.write_bytes(bytes(entry))
    loaded = _deserialized(monkeypatch)
    again, out2, rep2 = _run(tmp_path, limit)
    assert loaded == []                                 # nothing damaged reached XLA
    assert again.cache_loads == 0 and again.compilations == first.compilations
    assert out2["%g"].tobytes() == out1["%g"].tobytes()
    assert rep2.peak_bytes == rep1.peak_bytes <= limit
    assert all(unseal(p.name.split(".")[0], p.read_bytes()) for p in kept)   # replaced
    third, out3, _ = _run(tmp_path, limit)              # and the new entries load
    assert third.cache_loads > 0 and len(loaded) == third.cache_loads
    assert out3["%g"].tobytes() == out1["%g"].tobytes()


@pytest.mark.parametrize("damage", ["truncated", "empty", "other key"])
def test_a_truncated_or_moved_executable_is_a_miss(tmp_path, limit, damage,
                                                   monkeypatch) -> None:
    first, out1, _ = _run(tmp_path, limit)
    kept = _entries(tmp_path)
    data = [p.read_bytes() for p in kept]
    for i, path in enumerate(kept):
        if damage == "truncated":
            path.write_bytes(data[i][: len(data[i]) - 1])
        elif damage == "empty":
            path.write_bytes(b"")
        else:   # each entry holds the next one's contents, sound but another key's
            path.write_bytes(data[(i + 1) % len(data)])
    loaded = _deserialized(monkeypatch)
    again, out2, _ = _run(tmp_path, limit)
    assert loaded == [] and again.cache_loads == 0
    assert again.compilations == first.compilations
    assert out2["%g"].tobytes() == out1["%g"].tobytes()


def test_rewritten_figures_do_not_move_the_named_limit(tmp_path, limit) -> None:
    """Figures made smaller in every entry's header (the digest not made again) would
    have a refusal name a limit the step exceeds; they are a miss, and the limit named
    is the true one, met, and one byte less refused."""
    store_dir = tmp_path / "store"
    first = JaxBackend(one_memory=False)   # as the limit fixture plans (test_executables)
    first.store = ExecutableStore(str(store_dir))
    assert smallest_named(Executor(_module(), first), BINDING) == limit
    for path in _entries(store_dir):
        entry = path.read_bytes()
        at = entry.index(b'"figures": [')
        end = entry.index(b"]", at)
        figures = json.loads(entry[at + 11:end + 1])
        smaller = json.dumps([v // 8 for v in figures]).encode()
        smaller = smaller.ljust(len(entry[at + 11:end + 1]))   # the same length
        path.write_bytes(entry[:at + 11] + smaller + entry[end + 1:])
    later = JaxBackend(one_memory=False)
    later.store = ExecutableStore(str(store_dir))
    ex = Executor(_module(), later)
    assert smallest_named(ex, BINDING) == limit
    assert later.compilations > 0
    outputs, report = ex.run(ex.random_inputs(BINDING, 3), limit)
    assert report.peak_bytes <= limit


# --- the command line -----------------------------------------------------------------

def test_run_ignores_a_group_writable_cache_directory_with_one_warning(tmp_path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    _foreign_group(cache)
    cache.chmod(0o775)
    args = ["run", str(LISTING1), "--dims", "S1=8", "--compilation-cache", str(cache),
            "-q", "--json"]
    result = make_runner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "cache directory" in line]
    assert said == [f"warning: ignoring cache directory {cache}: it is writable by "
                    "group or others"]
    assert list(cache.iterdir()) == []                  # neither JAX nor bladec wrote
    assert json.loads(result.stdout)["cache_loads"] == 0
