"""How long the planner takes for one binding and limit (``policy.try_plan``), in CPU time.

    python benchmarks/bench_try_plan.py [LISTING] [--dims S0=16,S1=512]
        [--limits 18581078184,13531193432,11000000000] [--repeats 3] [--against TREE]

At large bindings the search for the smallest limit that works is planning: each limit
it tries is a greedy plan and its consolidation. This times ``try_plan`` on the NumPy
backend's bound program (no compile) with ``time.process_time`` (the machine is shared),
two ways alternated in one session: consolidation re-measuring each what-if by its window
(the default) and from scratch (``consolidate(..., incremental=False)``), and checks that
the plans are the same. ``--against TREE``: the second way is instead the bladec source
tree at TREE (``git archive COMMIT bladec | tar -x -C TREE``), run in its own processes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _plans(listing: str, dims: dict[str, int], limits: list[int], scratch: bool) -> list:
    """[(limit, CPU seconds, plan key)] for each limit, in this process."""
    from bladec.parse import parse_module
    from bladec.runtime.planning import policy
    from bladec.runtime.engine import Engine
    from bladec.runtime.planning.policy import CostModel
    if scratch:
        from bladec.runtime.planning.consolidation import consolidate
        policy.consolidate_plan = partial(consolidate.consolidate, incremental=False)
    ex = Engine(parse_module(Path(listing).read_text(), listing), backend="numpy").executor
    bound = ex._bound(dims)
    ex._priced(bound)   # the remat sites sized, as the closed loop does
    out = []
    for limit in limits:
        t = time.process_time()
        plan = policy.try_plan(bound.program, bound.sizes, limit, CostModel(), True, {})
        seconds = time.process_time() - t
        key = None if plan is None else [
            [(e.value, e.how, e.after, e.before) for e in plan.evictions],
            plan.cuts, plan.measure.peak, plan.measure.memory]
        out.append((limit, seconds, key))
    return out


def _run(listing: str, dims: dict[str, int], limits: list[int], way: str,
         tree: str | None) -> list:
    """One way's plans in a fresh process (the other way's caches do not help it)."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    cmd = [sys.executable, __file__, listing, "--worker", way, "--dims",
           ",".join(f"{k}={v}" for k, v in dims.items()),
           "--limits", ",".join(map(str, limits))]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing", nargs="?", default=str(ROOT / "samples" / "llama-train-paper.mlir"))
    ap.add_argument("--dims", default="S0=16,S1=512")
    ap.add_argument("--limits", default="18581078184,13531193432,11000000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--against", help="a bladec source tree to time as the other way")
    ap.add_argument("--worker", choices=("window", "scratch", "tree"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    dims = {k: int(v) for k, v in (kv.split("=") for kv in args.dims.split(","))}
    limits = [int(x) for x in args.limits.split(",")]
    if args.worker:
        print(json.dumps(_plans(args.listing, dims, limits, args.worker == "scratch")))
        return
    other = "tree" if args.against else "scratch"
    times: dict[str, list[list[float]]] = {"window": [], other: []}
    for _ in range(args.repeats):
        got = {}
        for way in (other, "window"):
            got[way] = _run(args.listing, dims, limits, way,
                            args.against if way == "tree" else None)
            times[way].append([s for _, s, _ in got[way]])
        same = [a[2] == b[2] for a, b in zip(got["window"], got[other])]
        print(f"{other}: {[round(s, 2) for s in times[other][-1]]} s, window: "
              f"{[round(s, 2) for s in times['window'][-1]]} s, same plans: {same}",
              flush=True)
        if not all(same):
            sys.exit(f"the plans differ at {limits}")
    print(f"| limit | {other} s (CPU, each run) | window s | ratio of sums |")
    print("| ---: | --- | --- | ---: |")
    for j, limit in enumerate(limits):
        a = [t[j] for t in times[other]]
        b = [t[j] for t in times["window"]]
        print(f"| {limit:,} | {' / '.join(f'{x:.2f}' for x in a)} | "
              f"{' / '.join(f'{x:.2f}' for x in b)} | {sum(a) / sum(b):.2f}x |")
    total_a = sum(map(sum, times[other]))
    total_b = sum(map(sum, times["window"]))
    print(f"all: {total_a:.2f} s against {total_b:.2f} s, {total_a / total_b:.2f}x")


if __name__ == "__main__":
    main()
