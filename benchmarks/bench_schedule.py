"""How good is the symbolic schedule? Exact peaks over many bindings, and scheduling time.

For every ``samples/*.mlir`` graph and a seeded spread of bindings over the declared
ranges (log-uniform, stratified), the exact peak bytes (DESIGN.md section 4) of:

- the original op order of the listing,
- the symbolic schedule (``SchedulePass``, computed once, no shape known): the lowest
  peak among the orders it keeps (main and its schedule versions), which is the order
  the runtime runs for the binding;
- the single order of the paper's Algorithm 1 (``schedule{versions=1}``); it keeps the
  listing's order when the scheduler's order is not provably no worse, so the raw
  scheduler order (``symbolic_scheduler(...).run()``) is measured too, to show why,
- the exact-shape oracle (``exact_order`` with that binding's sizes: what a static-shape
  compiler would do),
- the optimum by dynamic programming (``optimal_order``): always on graphs of at most 16
  ops, and on graphs of up to 60 ops whose search stays under a state budget,
- the exact lower bound (no schedule, even with unlimited remat, does better).

Then the time of ``SchedulePass().apply`` on transformer-like graphs of 1k to 10k ops.
All numbers of one table come from the same run, side by side.

    python benchmarks/bench_schedule.py [--bindings 24] [--sizes 1000,2000,5000,10000]
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bladec.analysis.liveness import is_compute  # noqa: E402
from bladec.analysis.memory import exact_lower_bound, exact_peak, exact_sizes  # noqa: E402
from bladec.analysis.optimal import optimal_order  # noqa: E402
from bladec.analysis.version import choose, symbol_range, versions  # noqa: E402
from bladec.ir import Module  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.passes.schedule import (SchedulePass, exact_order, op_name,  # noqa: E402
                                    reorder, symbolic_scheduler)
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes  # noqa: E402
from bladec.verify import verify  # noqa: E402

SAMPLES = ROOT / "samples"
DP_ALWAYS_OPS = 16      # the DP runs on every graph this small
DP_MAX_OPS = 60         # ... and is tried up to this size, within DP_MAX_STATES
DP_MAX_STATES = 200_000

# The goals of DESIGN.md section 5 as this benchmark checks them.
GOAL_TIE_FRACTION = 0.95
GOAL_WORST_RATIO = 1.05
GOAL_SECONDS_10K = 10.0


# -- bindings -----------------------------------------------------------------------------

def spread_bindings(info: ShapeInfo, n: int, seed: int = 0) -> list[dict[str, int]]:
    """``n`` bindings of the free symbols, log-uniform and stratified over their ranges.

    Each symbol's range is cut into ``n`` equal slices of log(value); binding k takes one
    random point from one slice of each symbol, the slices paired at random (a Latin
    hypercube), so both ends of every range are visited and symbols vary independently.
    The first two bindings are the all-low and all-high corners.
    """
    rng = random.Random(seed)
    free = list(info.free)
    columns: dict[str, list[int]] = {}
    for s in free:
        lo, hi = symbol_range(info, s)
        a, b = math.log(lo), math.log(hi + 1)
        vals = [min(hi, max(lo, int(math.exp(a + (b - a) * (k + rng.random()) / n))))
                for k in range(n)]
        rng.shuffle(vals)
        columns[s] = vals
    out = [{s: columns[s][k] for s in free} for k in range(n)]
    if n >= 2 and free:
        out[0] = {s: symbol_range(info, s)[0] for s in free}
        out[1] = {s: symbol_range(info, s)[1] for s in free}
    return out


# -- one graph ----------------------------------------------------------------------------

@dataclass
class Row:
    binding: dict[str, int]
    original: int
    symbolic: int
    single: int
    raw: int
    oracle: int
    optimum: int | None
    lower: int


@dataclass
class GraphResult:
    name: str
    ops: int
    kept: bool  # the single-order pass kept the scheduler's order (else the listing's)
    versions: int = 1  # orders the pass keeps (main and its schedule versions)
    rows: list[Row] = field(default_factory=list)
    schedule_seconds: float = 0.0

    @property
    def ratios(self) -> list[float]:
        return [r.symbolic / r.oracle for r in self.rows]

    @property
    def ties(self) -> int:
        return sum(r.symbolic == r.oracle for r in self.rows)

    @property
    def single_ties(self) -> int:
        return sum(r.single == r.oracle for r in self.rows)

    @property
    def at_most_oracle(self) -> int:
        return sum(r.symbolic <= r.oracle for r in self.rows)


def load(path: Path) -> Module:
    module = parse_module(path.read_text(encoding="utf-8"), str(path))
    verify(module)
    return module


def compute_ops(module: Module):
    return [op for op in module.main.ops if is_compute(op)]


def evaluate(module: Module, bindings: list[dict[str, int]] | None = None, n: int = 24,
             seed: int = 0, name: str = "graph", dp_max_ops: int = DP_MAX_OPS,
             dp_max_states: int = DP_MAX_STATES) -> GraphResult:
    """Exact peaks of the orders of the module docstring for every binding."""
    info = analyze_shapes(module)
    plain = reorder(module.main, compute_ops(module))
    t0 = time.perf_counter()
    scheduled = SchedulePass().apply(module)
    seconds = time.perf_counter() - t0
    orders = versions(scheduled)
    single = SchedulePass(versions="1").apply(module).main
    raw = symbolic_scheduler(plain, info).run()
    kept = _names(raw) == _names([op for op in single.ops if is_compute(op)])
    result = GraphResult(name, len(plain.ops), kept, len(orders), schedule_seconds=seconds)
    if bindings is None:
        bindings = spread_bindings(info, n, seed)
    try_dp = len(plain.ops) <= dp_max_ops
    for b in bindings:
        sizes = exact_sizes(info, b)
        best = None
        if try_dp:
            states = None if len(plain.ops) <= DP_ALWAYS_OPS else dp_max_states
            best = optimal_order(plain, sizes, states or 10**9)
            try_dp = best is not None  # too big once: too big for every binding
        result.rows.append(Row(
            binding=dict(b),
            original=exact_peak(plain, sizes),
            symbolic=choose(orders, sizes)[1],
            single=exact_peak(single, sizes),
            raw=exact_peak(plain, sizes, raw),
            oracle=exact_peak(plain, sizes, exact_order(plain, sizes)),
            optimum=best[0] if best is not None else None,
            lower=exact_lower_bound(plain, sizes)))
    return result


def _names(ops) -> list[str]:
    return [op_name(op) for op in ops]


# -- transformer-like graphs for the timing -----------------------------------------------

SHAPE_GRAPH = """func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 64}
  SymbolicDim @S1 {min = 16, max = 4096}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
"""


def transformer_listing(n_ops: int, hidden: int = 256, heads: int = 4, mlp: int = 1024) -> str:
    """A decoder-like stack of at least ``n_ops`` ops (a multiple of 41).

    Batch @S0 and sequence @S1 are symbolic (@S2 = @S0 * @S1 tokens). Each layer is an
    RMS norm, multi-head attention with a softmax, an MLP with SiLU, residuals and a
    hoisted broadcast of a scalar (as a JAX trace has it); every layer also leaves a
    statistic that only the final sum uses, so there are long-lived small values and many
    independent branches in the ready set.
    """
    d, hd = hidden, hidden // heads
    T = f"tensor<?x{d}, [@S2, @C{d}]>"
    T3 = f"tensor<?x?x{heads}x{hd}, [@S0, @S1, @C{heads}, @C{hd}]>"
    TH = f"tensor<?x{heads}x?x{hd}, [@S0, @C{heads}, @S1, @C{hd}]>"
    TS = f"tensor<?x{heads}x?x?, [@S0, @C{heads}, @S1, @S1]>"
    TR = f"tensor<?x{heads}x?, [@S0, @C{heads}, @S1]>"
    TM = f"tensor<?x{mlp}, [@S2, @C{mlp}]>"
    per_layer = 41  # 40 ops in the layer and one add of its statistic to the total
    layers = max(1, -(-n_ops // per_layer))
    args = [f"%x: {T}"]
    lines: list[str] = []
    stats: list[str] = []
    x = "%x"
    for l in range(layers):
        p = f"%l{l}_"
        args += [f"{p}wq: tensor<{d}x{d}>", f"{p}wk: tensor<{d}x{d}>", f"{p}wv: tensor<{d}x{d}>",
                 f"{p}wo: tensor<{d}x{d}>", f"{p}w1: tensor<{d}x{mlp}>",
                 f"{p}w2: tensor<{mlp}x{d}>", f"{p}g: tensor<{d}>"]
        L = lines.append
        L(f"{p}c = constant() {{value = 0.125}} -> tensor<f32>")
        L(f"{p}cb = broadcast_in_dim({p}c) {{dims = []}} -> {TS}")
        L(f"{p}sq = mul({x}, {x}) -> {T}")
        L(f"{p}ss = reduce({p}sq) {{dims = [1], kind = \"sum\"}} -> tensor<?, [@S2]>")
        L(f"{p}rs = rsqrt({p}ss) -> tensor<?, [@S2]>")
        L(f"{p}rsb = broadcast_in_dim({p}rs) {{dims = [0]}} -> {T}")
        L(f"{p}gb = broadcast_in_dim({p}g) {{dims = [1]}} -> {T}")
        L(f"{p}xn0 = mul({x}, {p}rsb) -> {T}")
        L(f"{p}xn = mul({p}xn0, {p}gb) -> {T}")
        for nm in "qkv":
            L(f"{p}{nm} = dot({p}xn, {p}w{nm}) -> {T}")
            L(f"{p}{nm}4 = reshape({p}{nm}) -> {T3}")
            L(f"{p}{nm}t = transpose({p}{nm}4) {{perm = [0, 2, 1, 3]}} -> {TH}")
        L(f"{p}s = dot_general({p}qt, {p}kt) {{lhs_batch = [0, 1], rhs_batch = [0, 1], "
          f"lhs_contract = [3], rhs_contract = [3]}} -> {TS}")
        L(f"{p}ssc = mul({p}s, {p}cb) -> {TS}")
        L(f"{p}mx = reduce({p}ssc) {{dims = [3], kind = \"max\"}} -> {TR}")
        L(f"{p}mxb = broadcast_in_dim({p}mx) {{dims = [0, 1, 2]}} -> {TS}")
        L(f"{p}sh = sub({p}ssc, {p}mxb) -> {TS}")
        L(f"{p}e = exp({p}sh) -> {TS}")
        L(f"{p}den = reduce({p}e) {{dims = [3], kind = \"sum\"}} -> {TR}")
        L(f"{p}denb = broadcast_in_dim({p}den) {{dims = [0, 1, 2]}} -> {TS}")
        L(f"{p}pr = div({p}e, {p}denb) -> {TS}")
        L(f"{p}a = dot_general({p}pr, {p}vt) {{lhs_batch = [0, 1], rhs_batch = [0, 1], "
          f"lhs_contract = [3], rhs_contract = [2]}} -> {TH}")
        L(f"{p}at = transpose({p}a) {{perm = [0, 2, 1, 3]}} -> {T3}")
        L(f"{p}a2 = reshape({p}at) -> {T}")
        L(f"{p}o = dot({p}a2, {p}wo) -> {T}")
        L(f"{p}r1 = add({x}, {p}o) -> {T}")
        L(f"{p}h = dot({p}r1, {p}w1) -> {TM}")
        L(f"{p}sg = logistic({p}h) -> {TM}")
        L(f"{p}si = mul({p}h, {p}sg) -> {TM}")
        L(f"{p}m = dot({p}si, {p}w2) -> {T}")
        L(f"{p}r2 = add({p}r1, {p}m) -> {T}")
        L(f"{p}st0 = reduce({p}si) {{dims = [0, 1], kind = \"max\"}} -> tensor<f32>")
        L(f"{p}st1 = reduce({p}pr) {{dims = [0, 1, 2, 3], kind = \"sum\"}} -> tensor<f32>")
        L(f"{p}st = add({p}st0, {p}st1) -> tensor<f32>")
        stats.append(f"{p}st")
        x = f"{p}r2"
    total = stats[0]
    for i, s in enumerate(stats[1:]):
        lines.append(f"%tot{i} = add({total}, {s}) -> tensor<f32>")
        total = f"%tot{i}"
    lines.append(f"%out = reduce({x}) {{dims = [0, 1], kind = \"sum\"}} -> tensor<f32>")
    body = "".join(f"  {line}\n" for line in lines)
    return (f"func.func @main({', '.join(args)}) {{\n{body}  return %out, {total}\n}}\n"
            + SHAPE_GRAPH)


def time_schedule(n_ops: int, repeat: int = 1) -> tuple[int, float]:
    """(number of ops, best seconds of ``SchedulePass().apply``) on a transformer graph."""
    module = parse_module(transformer_listing(n_ops), f"<transformer-{n_ops}>")
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        SchedulePass().apply(module)
        best = min(best, time.perf_counter() - t0)
    return len(module.main.ops), best


# -- report -------------------------------------------------------------------------------

def _fmt_binding(b: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in b.items())


def _ratio_stats(values: list[float]) -> tuple[float, float]:
    return (statistics.median(values), max(values)) if values else (math.nan, math.nan)


def graph_table(res: GraphResult) -> str:
    n = len(res.rows)
    rows = res.rows
    with_opt = [r for r in rows if r.optimum is not None]
    worst = max(rows, key=lambda r: r.symbolic / r.oracle)
    kept = "kept" if res.kept else "NOT kept (not provably no worse): listing order"
    lines = [f"### {res.name}", "",
             f"{res.ops} ops, {n} bindings; {res.versions} order(s) kept; single order: "
             f"scheduler's order {kept}; pass ran in {res.schedule_seconds * 1000:.1f} ms", "",
             "| ratio | median | worst | count |", "| --- | --- | --- | --- |"]

    def line(label: str, num, den, count: str, subset=rows) -> None:
        vals = [num(r) / den(r) for r in subset]
        if not vals:
            lines.append(f"| {label} | n/a | n/a | {count} |")
            return
        m, w = _ratio_stats(vals)
        lines.append(f"| {label} | {m:.4f} | {w:.4f} | {count} |")

    sym, raw, orc = (lambda r: r.symbolic), (lambda r: r.raw), (lambda r: r.oracle)
    one = (lambda r: r.single)
    orig, opt, low = (lambda r: r.original), (lambda r: r.optimum), (lambda r: r.lower)
    line("symbolic / oracle", sym, orc,
         f"ties {res.ties}/{n}, below {res.at_most_oracle - res.ties}")
    line("single order / oracle", one, orc,
         f"ties {res.single_ties}/{n}, below "
         f"{sum(r.single < r.oracle for r in rows)}")
    line("symbolic / original", sym, orig,
         f"lower {sum(r.symbolic < r.original for r in rows)}, "
         f"higher {sum(r.symbolic > r.original for r in rows)}")
    line("raw scheduler / original", raw, orig,
         f"lower {sum(r.raw < r.original for r in rows)}, "
         f"higher {sum(r.raw > r.original for r in rows)}")
    line("oracle / original", orc, orig,
         f"lower {sum(r.oracle < r.original for r in rows)}, "
         f"higher {sum(r.oracle > r.original for r in rows)}")
    if with_opt:
        line("symbolic / optimum", sym, opt,
             f"optimal {sum(r.symbolic == r.optimum for r in with_opt)}/{len(with_opt)}",
             with_opt)
        line("oracle / optimum", orc, opt,
             f"optimal {sum(r.oracle == r.optimum for r in with_opt)}/{len(with_opt)}",
             with_opt)
    else:
        lines.append("| symbolic / optimum | n/a | n/a | DP search too large |")
    line("symbolic / lower bound", sym, low, "")
    lines.append("")
    lines.append(f"worst binding {_fmt_binding(worst.binding)}: original {worst.original}, "
                 f"symbolic {worst.symbolic}, raw scheduler {worst.raw}, oracle "
                 f"{worst.oracle}, single order {worst.single}, optimum {worst.optimum}, "
                 f"lower bound {worst.lower} bytes")
    return "\n".join(lines)


@dataclass
class Summary:
    graphs: list[GraphResult]
    timings: list[tuple[int, float]]

    @property
    def rows(self) -> list[Row]:
        return [r for g in self.graphs for r in g.rows]

    def fraction(self, test: Callable[[Row], bool]) -> float:
        return sum(map(test, self.rows)) / len(self.rows)

    @property
    def tie_fraction(self) -> float:
        return self.fraction(lambda r: r.symbolic == r.oracle)

    @property
    def at_most_oracle_fraction(self) -> float:
        return self.fraction(lambda r: r.symbolic <= r.oracle)

    @property
    def worst_ratio(self) -> float:
        return max(r.symbolic / r.oracle for r in self.rows)

    @property
    def single_tie_fraction(self) -> float:
        return self.fraction(lambda r: r.single == r.oracle)

    @property
    def single_at_most_oracle_fraction(self) -> float:
        return self.fraction(lambda r: r.single <= r.oracle)

    @property
    def single_worst_ratio(self) -> float:
        return max(r.single / r.oracle for r in self.rows)

    @property
    def never_worse_than_original(self) -> bool:
        return all(r.symbolic <= r.original for g in self.graphs for r in g.rows)

    def seconds_for(self, n_ops: int) -> float | None:
        """Time of the smallest timed graph of at least ``n_ops`` ops."""
        fit = sorted((n, t) for n, t in self.timings if n >= n_ops)
        return fit[0][1] if fit else None


def run(n_bindings: int = 24, sizes: tuple[int, ...] = (1000, 2000, 5000, 10000),
        seed: int = 0, samples: list[Path] | None = None, echo=print) -> Summary:
    graphs = []
    for path in samples or sorted(SAMPLES.glob("*.mlir")):
        res = evaluate(load(path), n=n_bindings, seed=seed, name=path.name)
        graphs.append(res)
        echo(graph_table(res))
        echo("")
    timings = []
    if sizes:
        echo("### scheduling time (SchedulePass().apply, transformer-like graphs)")
        echo("")
        echo("| ops | seconds |")
        echo("| --- | --- |")
        for n in sizes:
            ops, secs = time_schedule(n)
            timings.append((ops, secs))
            echo(f"| {ops} | {secs:.2f} |")
        echo("")
    summary = Summary(graphs, timings)
    rows = sum(len(g.rows) for g in graphs)
    echo("### overall")
    echo("")
    echo(f"- bindings: {rows} over {len(graphs)} graphs")
    echo(f"- symbolic == oracle: {100 * summary.tie_fraction:.1f}%")
    echo(f"- symbolic <= oracle: {100 * summary.at_most_oracle_fraction:.1f}% "
         f"(goal >= {100 * GOAL_TIE_FRACTION:.0f}%: no worse than the oracle)")
    echo(f"- worst symbolic / oracle: {summary.worst_ratio:.4f} (goal <= {GOAL_WORST_RATIO})")
    echo(f"- single order (schedule{{versions=1}}): == oracle "
         f"{100 * summary.single_tie_fraction:.1f}%, <= oracle "
         f"{100 * summary.single_at_most_oracle_fraction:.1f}%, worst "
         f"{summary.single_worst_ratio:.4f}")
    echo(f"- symbolic never above the original order: {summary.never_worse_than_original}")
    if timings:
        big = max(timings)
        echo(f"- {big[0]} ops scheduled in {big[1]:.2f} s (goal < {GOAL_SECONDS_10K:.0f} s "
             "for 10k ops)")
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bindings", type=int, default=24, help="bindings per graph (>= 20)")
    ap.add_argument("--sizes", default="1000,2000,5000,10000",
                    help="op counts of the timed graphs, comma-separated ('' for none)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    run(args.bindings, sizes, args.seed)


if __name__ == "__main__":
    main()
