"""A refused limit, cold: ``bladec run`` in a new process with a fresh compilation cache.

    python benchmarks/bench_refusal.py [--base ../other-checkout] [--pairs 3]
        [--case paper gpt2 bert] [--base-python other-venv/bin/python]

Cases: ``paper``, the paper-size Llama SGD step at 1x64 under 3 GiB (under what every
run holds: refused from sizes alone, the smallest limit still to name); ``gpt2`` and
``bert``, imported steps (benchmarks/support/imported.py: a 2-layer GPT-2 of 1,123 ops
and a 6-layer Flax BERT of 3,204 ops, traced with symbolic batch and sequence) at 8x64
under half their no-limit device peak. Each run is a new process (``python -m bladec``
with the checkout on PYTHONPATH) with its own empty ``--compilation-cache``; with
``--base``, that checkout's run and this one's alternate, pair by pair, so that load on
the shared cores falls on both alike; ``--base-python``, the base's own interpreter (another
venv: to pair a change of the dependencies, e.g. ml_dtypes 0.7.0 against 0.6.0). Printed per run: the process's CPU seconds (user
+ sys, its children included), wall seconds, and the limit it named.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (listing builder or sample, dims, limit); an imported step's limit is half its
# no-limit device peak at those dims on the CPU backend, worked out once (_half_peak)
CASES = {"paper": ("samples/llama-train-paper.mlir", "S0=1,S1=64", "3GiB"),
         "gpt2": ("gpt2", "S0=8,S1=64", None),
         "bert": ("bert", "S0=8,S1=64", None)}
NAMED = re.compile(r"the smallest limit that works is [^(]*\((\d+) bytes")


def _listing(name: str, out: Path) -> Path:
    """The case's listing: a sample, or the imported step written out (as ``bladec run``
    takes it)."""
    if name.endswith(".mlir"):
        return ROOT / name
    from benchmarks.support.imported import STEPS
    from bladec.printer import format_module
    path = out / f"{name}.mlir"
    path.write_text(format_module(STEPS[name]().module))
    return path


def _half_peak(listing: Path, dims: str) -> str:
    """Half the no-limit device peak of ``listing`` at ``dims`` (this checkout)."""
    from bladec.parse import parse_module
    from bladec.runtime.engine import Engine
    engine = Engine(parse_module(listing.read_text(), str(listing)))
    binding = {k: int(v) for k, v in (kv.split("=") for kv in dims.split(","))}
    return f"{engine.executor.prepare(binding, None).device.peak // 2}B"


def run_once(tree: Path, listing: Path, dims: str, limit: str,
             python: str = sys.executable) -> dict:
    """One cold refusal in a new process (``python``); CPU from the children's rusage."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=str(tree))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run([python, "-m", "bladec", "run", str(listing),
                               "--dims", dims, "--mem-limit", limit,
                               "--compilation-cache", str(Path(cache) / "c")],
                              cwd=tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    named = NAMED.search(done.stderr + done.stdout)
    return {"cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "wall": wall, "rc": done.returncode,
            "named": int(named.group(1)) if named else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--base-python", default=sys.executable,
                        help="the base's interpreter (default: this one)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--case", nargs="+", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    trees = ([("base", args.base.resolve(), args.base_python)] if args.base else []) \
        + [("this", ROOT, sys.executable)]
    with tempfile.TemporaryDirectory() as out:
        for case in args.case:
            source, dims, limit = CASES[case]
            listing = _listing(source, Path(out))
            limit = limit or _half_peak(listing, dims)
            print(f"{case}: {dims} under {limit}", flush=True)
            for i in range(args.pairs):
                for name, tree, python in trees:
                    row = run_once(tree, listing, dims, limit, python)
                    print(f"  pair {i + 1} {name:4s} cpu {row['cpu']:7.2f} s  wall "
                          f"{row['wall']:7.2f} s  rc {row['rc']}  named {row['named']}",
                          flush=True)


if __name__ == "__main__":
    main()
