"""How long the runtime takes to plan evictions for a new binding (policy.py).

    python benchmarks/bench_plan.py [--optimizer sgd|adam] [--repeats 3]

Every new shape a training run meets is planned once (and its segments compiled), so the
planner's time is paid on the run's critical path, like compilation. This times
``Executor.plan`` on the CPU Llama training step of bench_paper.py (4 layers, hidden 128)
at the batch sizes and padded sequence lengths that benchmark meets, under its limit
(the dynamic mode's peak at batch 14, sequence 397), and prints the best of
``--repeats`` fresh plans per binding with the evictions each plan makes.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support.training import CPU_CONFIG, import_step  # noqa: E402

from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.backends.backend import NumpyBackend  # noqa: E402
from bladec.runtime.executor import Executor, unoptimized  # noqa: E402
from bladec.runtime.planning.policy import CostModel  # noqa: E402

BINDINGS = [(14, 320), (14, 384), (14, 448), (14, 512), (18, 320), (18, 384), (18, 448),
            (18, 512)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    module = import_step(CPU_CONFIG, 1024, args.optimizer).module
    optimized = run_pipeline(module, parse_pipeline("analyze,schedule,remat"))
    plain = Executor(unoptimized(module), NumpyBackend())
    limit = plain.plan({"S0": 14, "S1": 397}, None).peak
    print(f"{args.optimizer}: {len(module.main.ops)} ops, limit {limit} bytes")
    print("| binding | plan s (best of %d) | evictions | peak |" % args.repeats)
    print("| --- | --- | --- | --- |")
    total = 0.0
    for b, s in BINDINGS:
        best = float("inf")
        for _ in range(args.repeats):  # a fresh executor: nothing cached
            executor = Executor(optimized, NumpyBackend(), cost=CostModel())
            executor.plan({"S0": b, "S1": s}, None)  # sizes and sites, not timed
            t = time.perf_counter()
            plan = executor.plan({"S0": b, "S1": s}, limit)
            best = min(best, time.perf_counter() - t)
        total += best
        print(f"| {b}x{s} | {best:.3f} | {len(plan.evictions)} | {plan.peak} |")
    print(f"total: {total:.2f} s")


if __name__ == "__main__":
    main()
