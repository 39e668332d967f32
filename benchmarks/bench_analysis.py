"""Speed of the symbolic analysis (DESIGN.md sections 3 and 4) on generated graphs.

Two figures, each at 1,000 and 10,000 ops so the growth shows:

(a) comparisons/s of :class:`Comparator` (result cache off, so every call does the full
    work) on the comparisons the analysis and the scheduler make: step memories of a
    generated graph against each other (the peak) and the memory impacts of its ops
    (bytes allocated - bytes freed) against each other (the scheduler's choice);
(b) the time to analyze a generated transformer-like graph: parse the listing text,
    ``analyze_shapes``, ``symbolic_timeline`` and the symbolic peak.

Goals: >= 100,000 comparisons/s; a 10,000-op graph analyzed in < 5 s.  Times are the CPU
time of this process (``time.process_time``), so other load on a shared machine does not
count; the analysis also prints its wall time.

    python benchmarks/bench_analysis.py [--sizes 1000,10000] [--seconds 1] [--profile]

The graph is a chain of layers over batch ``S0`` and sequence ``S1``: reshapes between
``[S0, S1, 64]`` and ``[S0*S1, 64]``, ``dot`` and ``dot_general`` (attention scores of
``S0*4*S1^2`` elements), ``broadcast_in_dim``, reductions, transposes and elementwise ops.
Most intermediate types are written with bare ``?`` dims, so the analysis has to find
every one of them from the op rules, as it would for a listing fresh from a frontend.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bladec.analysis.liveness import Liveness  # noqa: E402
from bladec.analysis.memory import peak_terms, symbolic_timeline  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.symbolic.compare import Comparator  # noqa: E402
from bladec.symbolic.expr import SymbolicExpr, const  # noqa: E402
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes  # noqa: E402

GOAL_COMPARISONS_PER_S = 100_000
GOAL_ANALYSIS_S = 5.0

X3 = "tensor<?x?x64, [@S0, @S1, @C64]>"
ROWS = "tensor<?x64>"
HEADS = "tensor<?x4x?x16>"
SCORES = "tensor<?x4x?x?>"

# One layer: (result, op text after '=', result type); {p} is the layer prefix, {x} its
# input. 25 ops.
_LAYER = [
    ("{p}x2", "reshape({x})", ROWS),
    ("{p}q", "dot({p}x2, %wq)", ROWS),
    ("{p}k", "dot({p}x2, %wk)", ROWS),
    ("{p}q4", "reshape({p}q)", "tensor<?x?x4x16, [@S0, @S1, @C4, @C16]>"),
    ("{p}k4", "reshape({p}k)", "tensor<?x?x4x16>"),
    ("{p}qt", "transpose({p}q4) {{perm = [0, 2, 1, 3]}}", HEADS),
    ("{p}kt", "transpose({p}k4) {{perm = [0, 2, 1, 3]}}", HEADS),
    ("{p}s", "dot_general({p}qt, {p}kt) {{lhs_batch = [0, 1], rhs_batch = [0, 1], "
             "lhs_contract = [3], rhs_contract = [3]}}", SCORES),
    ("{p}mx", "reduce({p}s) {{dims = [3], kind = \"max\"}}", "tensor<?x4x?>"),
    ("{p}mxb", "broadcast_in_dim({p}mx) {{dims = [0, 1, 2]}}", SCORES),
    ("{p}sh", "sub({p}s, {p}mxb)", SCORES),
    ("{p}e", "exp({p}sh)", SCORES),
    ("{p}den", "reduce({p}e) {{dims = [3]}}", "tensor<?x4x?>"),
    ("{p}denb", "broadcast_in_dim({p}den) {{dims = [0, 1, 2]}}", SCORES),
    ("{p}pr", "div({p}e, {p}denb)", SCORES),
    ("{p}att", "dot_general({p}pr, {p}qt) {{lhs_batch = [0, 1], rhs_batch = [0, 1], "
               "lhs_contract = [3], rhs_contract = [2]}}", HEADS),
    ("{p}attt", "transpose({p}att) {{perm = [0, 2, 1, 3]}}", "tensor<?x?x4x16>"),
    ("{p}a2", "reshape({p}attt)", ROWS),
    ("{p}h", "dot({p}a2, %w1)", "tensor<?x256>"),
    ("{p}sg", "logistic({p}h)", "tensor<?x256>"),
    ("{p}silu", "mul({p}h, {p}sg)", "tensor<?x256>"),
    ("{p}mo", "dot({p}silu, %w2)", ROWS),
    ("{p}bb", "broadcast_in_dim(%bias) {{dims = [1]}}", ROWS),
    ("{p}mob", "add({p}mo, {p}bb)", ROWS),
    ("{p}r", "add({p}mob, {p}x2)", ROWS),
]
_LAYER_OUT = ("{p}y", "reshape({p}r)", X3)
OPS_PER_LAYER = len(_LAYER) + 1


def generate_listing(n_ops: int) -> str:
    """A transformer-like chain of about ``n_ops`` ops (whole layers, then a reduce)."""
    layers = max(1, round((n_ops - 1) / OPS_PER_LAYER))
    lines = [f"func.func @main(%x: {X3}, %wq: tensor<64x64>, %wk: tensor<64x64>, "
             "%w1: tensor<64x256>, %w2: tensor<256x64>, %bias: tensor<64>) {"]
    x = "%x"
    for i in range(layers):
        p = f"%l{i}_"
        for name, body, ty in [*_LAYER, _LAYER_OUT]:
            lines.append(f"  {name.format(p=p)} = {body.format(p=p, x=x)} -> {ty}")
        x = f"{p}y"
    lines.append(f"  %loss = reduce({x}) {{dims = [0, 1, 2]}} -> tensor<f32>")
    lines.append("  return %loss")
    lines.append("}")
    lines.append("func.func @symbolic_shape_graph() {")
    lines.append("  SymbolicDim @S0 {max = 64}")
    lines.append("  SymbolicDim @S1 {max = 8192}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass
class Analysis:
    n_ops: int
    seconds: float          # CPU s: parse + analyze_shapes + symbolic_timeline + peak
    wall_s: float
    parse_s: float
    shapes_s: float
    timeline_s: float
    peak_s: float
    info: ShapeInfo
    steps: list[SymbolicExpr]
    impacts: list[SymbolicExpr]
    peak: list[SymbolicExpr]


def analyze_listing(text: str) -> Analysis:
    clock = time.process_time
    w0 = time.perf_counter()
    t0 = clock()
    module = parse_module(text)
    t1 = clock()
    info = analyze_shapes(module)
    t2 = clock()
    timeline = symbolic_timeline(module.main, info)
    t3 = clock()
    peak = peak_terms(timeline, info.compare)
    t4 = clock()
    wall = time.perf_counter() - w0
    return Analysis(len(module.main.ops), t4 - t0, wall, t1 - t0, t2 - t1, t3 - t2, t4 - t3,
                    info, timeline.steps, memory_impacts(module, info), peak)


def memory_impacts(module, info: ShapeInfo) -> list[SymbolicExpr]:
    """Per op: bytes it allocates - bytes it frees (what the scheduler compares)."""
    live = Liveness.of(module.main)
    out = []
    for i, op in enumerate(live.ops):
        d = const(0)
        for r in op.results:
            d = d + info.nbytes(r.name)
        for name in live.freed_after(i):
            d = d - info.nbytes(name)
        out.append(d)
    return out


def comparison_pairs(a: Analysis, n: int = 20_000, seed: int = 0
                     ) -> list[tuple[SymbolicExpr, SymbolicExpr]]:
    """Step memories against each other and op impacts against each other."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n // 2):
        pairs.append((rng.choice(a.steps), rng.choice(a.steps)))
        pairs.append((rng.choice(a.impacts), rng.choice(a.impacts)))
    return pairs


def comparison_rate(pairs, ranges, seconds: float = 1.0) -> tuple[float, Comparator]:
    """Comparisons per CPU second without the cache, over whole passes of ``pairs``."""
    cmp = Comparator(ranges, cache=False)
    n = 0
    t0 = time.process_time()
    while True:
        for a, b in pairs:
            cmp(a, b)
        n += len(pairs)
        elapsed = time.process_time() - t0
        if elapsed >= seconds:
            return n / elapsed, cmp


def decision_rates(paths: list[Path]) -> dict[str, tuple[int, int, int, int]]:
    """Per listing: (calls, decided) of the peak's comparisons, and of all step pairs."""
    out = {}
    for path in paths:
        module = parse_module(path.read_text(), str(path))
        info = analyze_shapes(module)
        steps = symbolic_timeline(module.main, info).steps
        peak_cmp = Comparator(info.ranges)
        peak_terms(symbolic_timeline(module.main, info), peak_cmp)
        all_cmp = Comparator(info.ranges, cache=False)
        for a in steps:
            for b in steps:
                all_cmp(a, b)
        out[path.name] = (peak_cmp.calls, peak_cmp.decided, all_cmp.calls, all_cmp.decided)
    return out


def profile_analysis(text: str, top: int = 25) -> str:
    prof = cProfile.Profile()
    prof.enable()
    analyze_listing(text)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def run(sizes: list[int], seconds: float) -> dict[str, dict[int, float]]:
    """Print one line per figure and size; return the figures."""
    rates: dict[int, float] = {}
    times: dict[int, float] = {}
    for n in sizes:
        a = analyze_listing(generate_listing(n))
        times[n] = a.seconds
        r, cmp = comparison_rate(comparison_pairs(a), a.info.ranges, seconds)
        rates[n] = r
        print(f"analysis of {a.n_ops:>6} ops: {a.seconds:8.3f} s CPU, {a.wall_s:.3f} s wall  "
              f"(parse {a.parse_s:.3f}, "
              f"shapes {a.shapes_s:.3f}, timeline {a.timeline_s:.3f}, peak {a.peak_s:.3f}; "
              f"{len(a.info.free)} free symbols, {len(a.info.subst)} solved, "
              f"peak has {len(a.peak)} term(s))")
        print(f"compare on {a.n_ops:>6}-op graph: {r:12,.0f} comparisons/s uncached "
              f"(decided {cmp.decision_rate:.1%} of step/impact pairs)")
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        print(f"growth {lo} -> {hi} ops: analysis x{times[hi] / times[lo]:.1f} "
              f"(ops x{hi / lo:.0f}); compare rate x{rates[hi] / rates[lo]:.2f}")
    return {"rate": rates, "seconds": times}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000", help="graph sizes in ops")
    ap.add_argument("--seconds", type=float, default=1.0, help="time per compare measurement")
    ap.add_argument("--profile", action="store_true", help="cProfile the largest analysis")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = run(sizes, args.seconds)
    big = sizes[-1]
    print(f"goals: >= {GOAL_COMPARISONS_PER_S:,} comparisons/s: "
          f"{'met' if min(figures['rate'].values()) >= GOAL_COMPARISONS_PER_S else 'MISSED'}; "
          f"{big}-op analysis < {GOAL_ANALYSIS_S} s: "
          f"{'met' if figures['seconds'][big] < GOAL_ANALYSIS_S else 'MISSED'}")
    samples = sorted((Path(__file__).resolve().parent.parent / "samples").glob("*.mlir"))
    for name, (calls, decided, pcalls, pdecided) in decision_rates(samples).items():
        print(f"decision rate {name}: peak {decided}/{calls} "
              f"({decided / max(calls, 1):.1%}); all step pairs {pdecided}/{pcalls} "
              f"({pdecided / max(pcalls, 1):.1%})")
    if args.profile:
        print(profile_analysis(generate_listing(big)))


if __name__ == "__main__":
    main()
