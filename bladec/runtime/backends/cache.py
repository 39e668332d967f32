"""JAX's persistent compilation cache, as bladec uses it.

``bladec run`` keeps one by default (a refused limit compiles the whole step twice, and a
user who is refused runs again: the second process loads what the first compiled);
``bladec.jit`` only when asked, as ``jax.jit``. A loaded executable is XLA's own, its
memory figures included, so the device accounting does not change; reports count loads
among the compilations and say how many (:func:`count_cache_loads`).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from bladec.runtime.store.cachedir import distrust, warn_once

CACHE_VARIABLE = "BLADEC_COMPILATION_CACHE"
CACHE_OFF = "off"          # as the directory: no persistent cache
DEFAULT_CACHE_BYTES = 1 << 30   # the default directory's size, least recently used
                                # entries dropped beyond it (JAX's own LRU eviction)


def default_cache_dir() -> str:
    """Where ``bladec run`` keeps compiled executables unless told otherwise:
    ``$XDG_CACHE_HOME/bladec/xla`` (``~/.cache/bladec/xla``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "bladec", "xla")


def use_compilation_cache(path: str | None = None, max_bytes: int = -1) -> str | None:
    """Turn on JAX's persistent compilation cache in directory ``path`` (default: the
    ``BLADEC_COMPILATION_CACHE`` environment variable; neither, or ``off``: leave JAX as
    it is), for every executable however quick to compile, so that a second process with
    the same segments at the same shapes loads them instead of compiling. ``max_bytes``:
    JAX drops the least recently used entries beyond it (-1: no bound). Returns the
    directory used. Process-wide, as JAX's configuration is. OSError when the directory
    can not be made. A directory that is not the user's own and private (store/cachedir.py:
    loading an executable runs native code) is not used: a warning, and None."""
    path = path or os.environ.get(CACHE_VARIABLE) or None
    if path and path != CACHE_OFF:
        import jax
        path = os.path.abspath(os.path.expanduser(path))
        os.makedirs(path, mode=0o700, exist_ok=True)
        why = distrust(Path(path))
        if why is not None:
            warn_once(str(Path(path).resolve()), f"ignoring cache directory {path}: {why}")
            return None
        if jax.config.jax_compilation_cache_dir != path:
            jax.config.update("jax_compilation_cache_dir", path)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
            if "jax_compilation_cache_max_size" in jax.config.values:   # JAX >= 0.4.31
                jax.config.update("jax_compilation_cache_max_size", max_bytes)
        return path
    return None


_LOADS = [0]   # executables JAX loaded from its persistent cache in this process
_LISTENING: list[bool] = []   # whether the listener that counts them is registered
_CACHE_HIT = "/jax/compilation_cache/cache_hits"


def count_cache_loads() -> int:
    """How many executables JAX has loaded from its persistent compilation cache in
    this process so far (its own monitoring events; counted from the first call on), so
    that a report can say which of its compilations were loads."""
    if not _LISTENING:
        import jax.monitoring

        def loaded(event: str, **_: object) -> None:
            if event == _CACHE_HIT:
                _LOADS[0] += 1
        jax.monitoring.register_event_listener(loaded)
        _LISTENING.append(True)
    return _LOADS[0]


def use_default_compilation_cache() -> str | None:
    """The cache of :func:`default_cache_dir`, bounded by DEFAULT_CACHE_BYTES, as
    ``bladec run`` uses it when no directory is given; None, and no cache, where the
    directory can not be made (a read-only home runs as before, only slower)."""
    try:
        return use_compilation_cache(default_cache_dir(), DEFAULT_CACHE_BYTES)
    except OSError:
        return None


@contextmanager
def unkept() -> Iterator[None]:
    """What is compiled inside is not written to JAX's persistent cache: a compilation
    for its memory figures only (jax_backend.LazyCompiled._probed), whose figures
    bladec's own store keeps, so that no later process loads it (the executable that
    runs is compiled with other options, under another key). Writing it serialized and
    compressed each whole step of the paper-size refusal for nothing (about 0.1 s of
    CPU of a cold refusal, 100 KB each). JAX's setting is process-wide: a compilation
    on another thread meanwhile is not written either, which costs only that entry."""
    import jax
    name = "jax_persistent_cache_min_compile_time_secs"
    before = getattr(jax.config, name)
    jax.config.update(name, float("inf"))
    try:
        yield
    finally:
        jax.config.update(name, before)
