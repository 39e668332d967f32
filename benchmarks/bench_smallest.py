"""The smallest limit that works, searched once per binding, one checkout against another.

    python benchmarks/bench_smallest.py [--base ../other-checkout]
        [--listing samples/llama-train-paper.mlir] [--dims S0=1,S1=64 S0=4,S1=512 ...]

For each binding, a new process (with the checkout as its working directory, so that it
imports that checkout's bladec) builds the engine on the JAX backend with no persistent
compilation cache, compiles the run with nothing evicted (as every refusal does first),
and times ``Fitter._smallest_limit`` alone: the limit it names (by the device accounting,
DESIGN.md section 4), the search's wall and CPU seconds, the compilations it made, and
the evictions and segments of the plan that meets the limit ("-" where that is the run
with nothing evicted or XLA's own order). With ``--base``, that checkout's row is printed
before this one's for each binding (run one after the other, not at once: the search
uses both cores when it compiles).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIMS = ["S0=1,S1=64", "S0=2,S1=256", "S0=4,S1=512", "S0=8,S1=512"]

# Run in the child, from the checkout measured.
_CHILD = r"""
import json, sys, time
from bladec.parse import parse_module
from bladec.runtime.engine import Engine
path, dims = sys.argv[1], sys.argv[2]
binding = {k: int(v) for k, v in (kv.split("=") for kv in dims.split(","))}
engine = Engine(parse_module(open(path).read(), path))
ex = engine.executor
bound = ex._bound(binding)
ex.prepare(binding, None)
compiled = engine.backend.compilations
wall, cpu = time.perf_counter(), time.process_time()
smallest = ex._smallest_limit(bound)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
plan = next((r for r in bound.good if r.device.peak == smallest), None)
print(json.dumps({"smallest": smallest, "wall": wall, "cpu": cpu,
                  "compiles": engine.backend.compilations - compiled,
                  "evictions": len(plan.plan.evictions) if plan else None,
                  "segments": plan.segments if plan else None}))
"""


def measure(checkout: Path, listing: Path, dims: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(listing), dims], cwd=checkout,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--listing", type=Path,
                        default=ROOT / "samples" / "llama-train-paper.mlir")
    parser.add_argument("--dims", nargs="+", default=DEFAULT_DIMS)
    args = parser.parse_args()
    listing = args.listing.resolve()
    trees = ([("base", args.base.resolve())] if args.base else []) + [("this", ROOT)]
    print(f"{'binding':14s} {'tree':5s} {'smallest (B)':>15s} {'wall s':>7s} {'cpu s':>7s} "
          f"{'compiles':>8s} {'evictions':>9s} {'segments':>8s}")
    for dims in args.dims:
        for name, tree in trees:
            row = measure(tree, listing, dims)
            print(f"{dims:14s} {name:5s} {row['smallest']:>15,} {row['wall']:7.1f} "
                  f"{row['cpu']:7.1f} {row['compiles']:8d} {str(row['evictions'] or '-'):>9s} "
                  f"{str(row['segments'] or '-'):>8s}", flush=True)


if __name__ == "__main__":
    main()
