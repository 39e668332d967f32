"""Optimized listings kept across processes (bladec/runtime/listings.py): a hit gives
exactly what the pipeline gives, every input of the pipeline is in the key, and a bad
entry costs only a miss."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from bladec.errors import BladecError, BladecWarning
from bladec.ir import Module
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline
from bladec.printer import format_module
from bladec.runtime.store import listings
from bladec.runtime.engine import Engine, optimize
from bladec.runtime.store.listings import SUFFIX, ListingCache, listing_key
from bladec.source import load_module
from tests.support.entries import contents, rewrite

from tests.support.paths import ROOT

LISTING1 = ROOT / "samples" / "listing1-runnable.mlir"
SMALL = ROOT / "samples" / "llama-train-small.mlir"


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{SUFFIX}"))


def test_a_hit_is_the_pipelines_own_listing(tmp_path) -> None:
    """The second optimization loads what the first stored: the same ops, types,
    attributes and source positions (repr has them all) as the pipeline gives, in a
    new object (nothing shared with the first)."""
    source = load_module(str(SMALL))
    cache = ListingCache(str(tmp_path))
    first = optimize(source, None, cache=cache)
    assert cache.hits == 0 and len(_entries(tmp_path)) == 1
    again = optimize(load_module(str(SMALL)), None, cache=cache)
    assert cache.hits == 1
    assert again is not first
    plain = optimize(load_module(str(SMALL)))
    assert repr(again) == repr(plain)
    assert format_module(again) == format_module(plain)


def test_a_run_from_a_hit_equals_the_run_from_the_pipeline(tmp_path) -> None:
    """The engine's plan, device accounting and outputs do not depend on where the
    listing came from: bit for bit on the NumPy backend, under a limit that evicts."""
    cache = ListingCache(str(tmp_path))
    runs = []
    for _ in range(2):
        engine = Engine(load_module(str(LISTING1)), passes="analyze,remat",
                        backend="numpy", listings=cache)
        inputs = engine.executor.random_inputs({"S1": 64}, seed=3)
        limit = engine.model_peak({"S1": 64}) // 2
        outputs, report = engine.executor.run(inputs, limit)
        runs.append((outputs, report))
    assert cache.hits == 1
    (a, ra), (b, rb) = runs
    assert ra.evictions > 0 and ra.recomputes > 0
    assert ra.peak_bytes == rb.peak_bytes and ra.timeline == rb.timeline
    assert ra.evictions == rb.evictions and ra.reloads == rb.reloads
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_the_key_changes_with_every_input_of_the_pipeline(monkeypatch) -> None:
    """The listing (a comment line moves every op's position: messages must point
    where they did), the passes and their options, and bladec's own code."""
    text = LISTING1.read_text()
    base = load_module(str(LISTING1))
    passes = parse_pipeline(DEFAULT_PIPELINE)
    key = listing_key(base, passes)
    assert listing_key(load_module(str(LISTING1)), parse_pipeline(DEFAULT_PIPELINE)) == key
    from bladec.parse import parse_module
    moved = parse_module("// a comment\n" + text, str(LISTING1))
    assert format_module(moved) == format_module(base)
    assert listing_key(moved, passes) != key
    assert listing_key(base, parse_pipeline("analyze,schedule{versions=2},remat")) != key
    assert listing_key(base, parse_pipeline("analyze,schedule")) != key
    monkeypatch.setattr(listings, "_CODE", ["another bladec"])
    assert listing_key(base, passes) != key


def test_the_code_digest_covers_the_package_and_its_grammar() -> None:
    """Computed once, over every source file: a digest of nothing would key every
    version of bladec alike."""
    digest = listings.code_digest()
    assert len(digest) == 64 and digest == listings.code_digest()
    import bladec
    files = list(Path(bladec.__file__).parent.rglob("*.py"))
    assert len(files) > 50


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other key", "empty"])
def test_a_bad_entry_is_a_miss_and_is_replaced(tmp_path, damage: str) -> None:
    cache = ListingCache(str(tmp_path))
    optimize(load_module(str(LISTING1)), None, cache=cache)
    [path] = _entries(tmp_path)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a pickle at all")
    elif damage == "empty":
        path.write_bytes(b"")
    else:   # a sound entry stored under the wrong name
        fmt, key, module, said = pickle.loads(contents(path))
        rewrite(path, pickle.dumps((fmt, "0" * 64, module, said)))
    again = optimize(load_module(str(LISTING1)), None, cache=cache)
    assert cache.hits == 0
    assert format_module(again) == format_module(optimize(load_module(str(LISTING1))))
    fmt, key, module, said = pickle.loads(contents(path))   # written anew
    assert key == listing_key(load_module(str(LISTING1)), parse_pipeline(DEFAULT_PIPELINE))


class _Warns:
    """A pass that warns, to check that a load says what the pipeline said."""
    name = "warns"

    def apply(self, module: Module) -> Module:
        warnings.warn(BladecWarning("the warns pass looked at this listing"), stacklevel=2)
        return module


def test_a_load_gives_the_pipelines_warnings_again(tmp_path) -> None:
    cache = ListingCache(str(tmp_path))
    said = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optimize(load_module(str(LISTING1)), [_Warns()], cache=cache)
        said.append([str(w.message) for w in caught])
    assert cache.hits == 1
    assert said[0] == said[1] == ["the warns pass looked at this listing"]


class _Fails:
    name = "fails"

    def apply(self, module: Module) -> Module:
        raise BladecError("the fails pass refuses")


def test_a_failing_pipeline_stores_nothing(tmp_path) -> None:
    cache = ListingCache(str(tmp_path))
    with pytest.raises(BladecError, match="refuses"):
        optimize(load_module(str(LISTING1)), [_Fails()], cache=cache)
    assert _entries(tmp_path) == []


def test_the_oldest_entries_are_dropped_beyond_the_bound(tmp_path) -> None:
    cache = ListingCache(str(tmp_path), max_entries=2)
    pipelines = ["analyze", "analyze,schedule", "analyze,schedule,remat"]
    keys = []
    for i, pipeline in enumerate(pipelines):
        passes = parse_pipeline(pipeline)
        optimize(load_module(str(LISTING1)), passes, cache=cache)
        key = listing_key(load_module(str(LISTING1)), passes)
        path = tmp_path / f"{key}{SUFFIX}"
        os.utime(path, (1000 + i, 1000 + i))   # written in this order, a second apart
        keys.append(key)
    optimize(load_module(str(SMALL)), None, cache=cache)   # a fourth: two dropped
    left = {p.name[: -len(SUFFIX)] for p in _entries(tmp_path)}
    assert len(left) == 2 and keys[2] in left and not {keys[0], keys[1]} & left


def test_the_listings_are_bounded_in_bytes_too(tmp_path) -> None:
    """Beyond ``max_bytes`` the oldest go, but never the one just written."""
    one = ListingCache(str(tmp_path / "probe"))
    optimize(load_module(str(LISTING1)), None, cache=one)
    [probe] = _entries(tmp_path / "probe")
    size = probe.stat().st_size
    cache = ListingCache(str(tmp_path / "c"), max_bytes=size + size // 2)
    for i, pipeline in enumerate(["analyze", "analyze,schedule", DEFAULT_PIPELINE]):
        optimize(load_module(str(LISTING1)), parse_pipeline(pipeline), cache=cache)
        for path in _entries(tmp_path / "c"):   # written in this order, a second apart
            if path.stat().st_mtime > 2000:
                os.utime(path, (1000 + i, 1000 + i))
    [left] = _entries(tmp_path / "c")
    assert left.name.startswith(listing_key(load_module(str(LISTING1)),
                                            parse_pipeline(DEFAULT_PIPELINE)))
    tiny = ListingCache(str(tmp_path / "t"), max_bytes=1)
    optimize(load_module(str(LISTING1)), None, cache=tiny)
    assert len(_entries(tmp_path / "t")) == 1   # the newest stays, whatever its size


def test_an_unwritable_directory_only_costs_the_pipeline(tmp_path) -> None:
    """Writing fails (here: the directory is gone and a file holds its name), and the
    optimized listing is still given, every time."""
    where = tmp_path / "cache"
    cache = ListingCache(str(where))
    where.rmdir()
    where.write_text("a file where the cache directory was")
    for _ in range(2):
        out = optimize(load_module(str(LISTING1)), None, cache=cache)
        assert "remat.plan" in format_module(out)
    assert cache.hits == 0


def _twice(cmd: list[str], cache: Path) -> tuple[subprocess.CompletedProcess, ...]:
    """``cmd`` in two processes, both succeeding: the first stores one listing in
    ``cache``, the second loads it and writes nothing."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    [entry] = _entries(cache)
    written = entry.stat().st_mtime_ns
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert _entries(cache) == [entry] and entry.stat().st_mtime_ns == written
    return first, again


def test_run_keeps_the_optimized_listing_beside_the_executables(tmp_path) -> None:
    """`bladec run` stores the listing in its cache directory; a second process loads it
    and writes nothing, and says the same; `--compilation-cache off` keeps none."""
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "bladec", "run", str(LISTING1), "--dims", "S1=8",
           "--mem-limit", "600000", "--compilation-cache", str(cache), "-q"]
    first, again = _twice(cmd, cache)
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}

    def lines(out: str) -> list[str]:
        return [line for line in out.splitlines()
                if not line.startswith(("segments:", "time"))]
    assert lines(again.stdout) == lines(first.stdout)
    off = subprocess.run([*cmd[:-3], "--compilation-cache", "off", "-q"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert off.returncode == 0, off.stderr
    assert lines(off.stdout) == lines(first.stdout)


JIT_SCRIPT = """
import sys
import jax.numpy as jnp
import numpy as np
import bladec

def mlp(w1, w2, x):
    return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2)

fn = bladec.jit(mlp, dynamic={"x": "B,_"}, compilation_cache=sys.argv[1])
rng = np.random.default_rng(0)
w1, w2 = rng.standard_normal((32, 64), np.float32), rng.standard_normal((64, 32), np.float32)
print(float(fn(w1, w2, rng.standard_normal((8, 32), np.float32))))
"""


def test_jit_keeps_the_optimized_listing_when_given_a_cache(tmp_path) -> None:
    """``bladec.jit(compilation_cache=DIR)``: the traced function's optimized listing is
    stored, and a second process loads it (writing nothing) and computes the same."""
    cache = tmp_path / "cache"
    first, again = _twice([sys.executable, "-c", JIT_SCRIPT, str(cache)], cache)
    assert again.stdout == first.stdout


def test_an_executable_jax_loaded_from_its_own_cache_is_kept_as_its_figures_only(tmp_path
                                                                                 ) -> None:
    """Serialized again, an executable that JAX loaded from its persistent cache comes
    out without its kernels: a store that kept one made the next process fail ("internal
    error: ... Function wrapped_tanh not found"). That happened whenever JAX's cache held
    an executable that bladec's store did not: after an upgrade of bladec (a new key for
    every executable), or once the store had dropped its oldest entries."""
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "bladec", "run", str(LISTING1), "--dims", "S1=8",
           "--compilation-cache", str(cache), "-q", "--json"]
    # (one order at no limit: the orders compared are probed, wholestep.py, and a probe
    # too quick for JAX's cache to keep is compiled again by every process)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "BLADEC_NO_LIMIT_ORDER": "bladec"}

    def run() -> dict:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    first = run()
    kept = sorted(cache.glob("*.bladec-executable"))
    assert kept
    for entry in kept:
        entry.unlink()   # JAX's own entries stay
    second = run()       # loads from JAX's cache: keeps the figures, not the executable
    assert second["cache_loads"] == second["compilations"] > 0
    again = sorted(cache.glob("*.bladec-executable"))
    assert [p.name for p in again] == [p.name for p in kept]
    assert all(p.stat().st_size < 1000 for p in again)   # a header, no payload
    third = run()        # runs (JAX's cache again), with the same device accounting
    assert third["peak_bytes"] == second["peak_bytes"] == first["peak_bytes"]
    assert third["segment_memory"] == first["segment_memory"]
