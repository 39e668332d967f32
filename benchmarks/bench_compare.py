"""Throughput of symbolic comparison, the scheduler's inner loop (DESIGN.md section 3).

Times :class:`Comparator` with its result cache turned off, so every call does the full
work (difference, bounds, absorption), on a mix of expressions shaped like the memory
impacts of a transformer graph: sizes that are a constant times one or two symbols, a few
with a quadratic (attention) term, and some differences of them.

    python benchmarks/bench_compare.py [--seconds 2]
"""
from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bladec.symbolic.compare import Comparator, compare  # noqa: E402
from bladec.symbolic.expr import SymbolicExpr, const, sym  # noqa: E402


def workload(seed: int = 0) -> list[tuple[SymbolicExpr, SymbolicExpr]]:
    S0, S1, S2 = sym("S0"), sym("S1"), sym("S2")
    bs = S0 * S1                      # batch * sequence
    exprs = [
        10996 * S1, 49152 * S1, 11008 * S1, 1024 * S0, -11007 * S1, -11 * S1, S1,
        4096 * bs, 11008 * bs, -4096 * bs, 2 * 4096 * bs - 11008 * bs,
        32 * S0 * S1 * S1, 4096 * bs + 32 * S0 * S1 * S1, 4096 * bs - 12 * S1,
        128 * S0 + 64 * S1, 4096 * S2 * S1 + 4096 * bs, const(4096 * 4096), const(0),
        4 * 11008 * bs + 4 * 4096 * bs - 4 * 32000 * S0, 10**12 * S1 - 3,
    ]
    pairs = list(itertools.product(exprs, repeat=2))
    random.Random(seed).shuffle(pairs)
    return pairs


def rate(fn, pairs, seconds: float) -> tuple[float, int]:
    """Comparisons per second over whole passes of ``pairs`` for about ``seconds``."""
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for a, b in pairs:
            fn(a, b)
        n += len(pairs)
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - t0), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = ap.parse_args()
    pairs = workload()
    cmp = Comparator({"S2": (1, 8)}, cache=False)
    r, n = rate(cmp, pairs, args.seconds)
    print(f"compare: {r:,.0f} comparisons/s (uncached)")
    print(f"  {n} calls over {len(pairs)} distinct pairs; decided {cmp.decided / cmp.calls:.1%}")
    r_fn, _ = rate(lambda a, b: compare(a, b), pairs, args.seconds)
    print(f"  free function compare(a, b): {r_fn:,.0f} comparisons/s")
    cached = Comparator({"S2": (1, 8)})
    r_c, _ = rate(cached, pairs, args.seconds)
    print(f"  with the result cache: {r_c:,.0f} comparisons/s "
          f"({cached.hits / cached.calls:.1%} hits)")
    simple = [(10996 * sym("S1"), 49152 * sym("S1"))] * 1000
    r_s, _ = rate(Comparator(cache=False), simple, args.seconds)
    print(f"  10996*S1 vs 49152*S1 alone: {r_s:,.0f} comparisons/s (uncached)")


if __name__ == "__main__":
    main()
