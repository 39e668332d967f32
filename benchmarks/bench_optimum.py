"""Schedule quality against the true optimum, on every sample and on generated graphs.

Issue 37 (item 2): bladec's order is judged against the least peak over *every* order,
found by a solver written apart from bladec's own search (tests/support/optimum.py), not
against bladec's exact-size walk. For each graph and each of ``--bindings`` bindings drawn
over its declared ranges, the exact peak (DESIGN.md section 4's model, checked against
``exact_peak`` on every order compared) of:

- **written**: the listing's own order;
- **runtime**: the order the runtime runs, the lowest-peak version of ``schedule``
  (planning/binding.py's choice), which offers optimal orders of graphs of at most 64 ops
  among its candidates (``exact=1``, the default);
- **heuristic**: the same pass with its exact candidates and its local search off
  (``schedule{exact=0,polish=0}``): the symbolic list scheduler and its end-of-range
  versions alone;
- **optimum**: the independent solver's (a loop op's step adds its regions' own peak,
  ``body_peak``: the solver orders the top level, as the pass does), where its search stays within ``--max-sets``
  sets of executed ops (else the graph is reported as not reached, with bladec's exact
  lower bound instead, so the ratio is then an upper bound on the distance).

Graphs: every ``samples/*.mlir`` and ``--graphs`` random listings of 20 to 60 ops
(tests/support/randlisting.py, seeds 0..N-1, op counts spread evenly). The peaks are
deterministic; the seconds (the two passes, the solver) are this machine's, one run.

    python benchmarks/bench_optimum.py [--bindings 24] [--graphs 40]
        [--generated-bindings 8] [--max-sets 200000]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bladec.analysis.liveness import body_peak, is_compute  # noqa: E402
from bladec.analysis.memory import exact_lower_bound, exact_peak, exact_sizes  # noqa: E402
from bladec.analysis.version import log_grid, versions  # noqa: E402
from bladec.ir import Module  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.passes.schedule import SchedulePass  # noqa: E402
from bladec.symbolic.shapes import analyze_shapes  # noqa: E402
from bladec.verify import verify  # noqa: E402
from tests.support.optimum import Steps  # noqa: E402
from tests.support.randlisting import generate  # noqa: E402

SAMPLES = ROOT / "samples"
MIN_OPS, MAX_OPS = 20, 60


@dataclass
class Binding:
    written: int
    runtime: int
    heuristic: int
    optimum: int | None
    lower: int

    @property
    def best(self) -> int:
        """The optimum, or where it was not reached the lower bound."""
        return self.optimum if self.optimum is not None else self.lower


@dataclass
class Graph:
    name: str
    family: str          # "sample" or "generated"
    ops: int
    rows: list[Binding] = field(default_factory=list)
    schedule_seconds: float = 0.0    # schedule (exact=1) and schedule{exact=0}, once each
    solver_seconds: float = 0.0

    @property
    def reached(self) -> bool:
        return all(r.optimum is not None for r in self.rows)

    def equal(self, pick: Callable[[Binding], int]) -> int:
        return sum(pick(r) == r.best for r in self.rows)

    def worst(self, pick: Callable[[Binding], int]) -> float:
        return max(pick(r) / r.best for r in self.rows)


def _orders(module: Module) -> list[list]:
    return [[op for op in f.ops if is_compute(op)] for f in versions(module)]


def evaluate(module: Module, name: str, family: str, bindings: int, max_sets: int,
             seed: int = 37) -> Graph:
    """Every binding's four peaks (the module docstring) for one graph."""
    info = analyze_shapes(module)
    t0 = time.process_time()
    runtime = _orders(SchedulePass().apply(module))
    heuristic = _orders(SchedulePass(exact=0, polish=0).apply(module))
    graph = Graph(name, family, sum(is_compute(op) for op in module.main.ops),
                  schedule_seconds=time.process_time() - t0)
    grid = log_grid(info, points=1024)
    chosen = random.Random(seed).sample(grid, min(bindings, len(grid)))
    searching = True
    for binding in chosen:
        sizes = exact_sizes(info, binding)
        steps = Steps(module.main, sizes, [body_peak(op, sizes.__getitem__, 0, max)
                                            for op in module.main.ops if is_compute(op)])
        peaks = {}
        for label, orders in (("written", [steps.ops]), ("runtime", runtime),
                              ("heuristic", heuristic)):
            for order in orders:   # the solver's model is bladec's, on every order compared
                assert steps.peak(order) == exact_peak(module.main, sizes, order), name
            peaks[label] = min(steps.peak(order) for order in orders)
        best = None
        if searching:
            t0 = time.process_time()
            best = steps.optimum(max_sets, at_most=min(peaks.values()))
            graph.solver_seconds += time.process_time() - t0
            searching = best is not None   # too large once: too large at every binding
        if best is not None:
            assert best <= min(peaks.values()), name
        graph.rows.append(Binding(peaks["written"], peaks["runtime"], peaks["heuristic"],
                                  best, exact_lower_bound(module.main, sizes)))
    if not graph.reached:   # the optimum at some bindings only: report none of them
        for row in graph.rows:
            row.optimum = None
    return graph


def load(text: str, name: str) -> Module:
    module = parse_module(text, name)
    verify(module)
    return module


def graphs(bindings: int, count: int, max_sets: int, samples: list[Path] | None = None,
           echo=print, generated_bindings: int | None = None) -> list[Graph]:
    """Every sample, then ``count`` generated listings of 20-60 ops (at
    ``generated_bindings`` bindings each, ``bindings`` unless given)."""
    out = []
    for path in samples if samples is not None else sorted(SAMPLES.glob("*.mlir")):
        out.append(evaluate(load(path.read_text(encoding="utf-8"), str(path)), path.name,
                            "sample", bindings, max_sets))
        echo(_line(out[-1]), file=sys.stderr)
    for seed in range(count):
        ops = MIN_OPS + (MAX_OPS - MIN_OPS) * seed // max(1, count - 1)
        listing = generate(seed, ops)
        out.append(evaluate(load(listing.text, f"random {seed}"), f"random {seed}",
                            "generated", generated_bindings or bindings, max_sets))
        echo(_line(out[-1]), file=sys.stderr)
    return out


def _ratio(graph: Graph, pick: Callable[[Binding], int]) -> str:
    return f"{graph.equal(pick)}/{len(graph.rows)}, {graph.worst(pick):.4f}"


def _line(graph: Graph) -> str:
    against = "optimum" if graph.reached else "lower bound"
    gains = [r.runtime / r.heuristic for r in graph.rows]
    return (f"| {graph.name} | {graph.ops} | {against} | "
            f"{_ratio(graph, lambda r: r.runtime)} | {_ratio(graph, lambda r: r.heuristic)} | "
            f"{_ratio(graph, lambda r: r.written)} | {statistics.median(gains):.4f}, "
            f"{min(gains):.4f} | {graph.schedule_seconds:.2f} | {graph.solver_seconds:.2f} |")


HEADER = ("| graph | ops | against | runtime: equal, worst | heuristic: equal, worst | "
          "written: equal, worst | runtime / heuristic: median, lowest | schedule CPU s | "
          "solver CPU s |\n| --- | ---: | --- | --- | --- | --- | --- | ---: | ---: |")


def summary(group: list[Graph], label: str) -> str:
    """One line over the graphs whose optimum was reached."""
    reached = [g for g in group if g.reached]
    rows = [r for g in reached for r in g.rows]
    if not rows:
        return f"| {label} | 0 of {len(group)} | - | - | - |"

    def part(pick: Callable[[Binding], int]) -> str:
        ratios = [pick(r) / r.best for r in rows]
        return (f"{sum(x == 1 for x in ratios)}/{len(rows)} equal, median "
                f"{statistics.median(ratios):.4f}, worst {max(ratios):.4f}")
    return (f"| {label} | {len(reached)} of {len(group)} | {part(lambda r: r.runtime)} | "
            f"{part(lambda r: r.heuristic)} | {part(lambda r: r.written)} |")


def report(results: list[Graph]) -> str:
    lines = ["| graphs | optimum reached | runtime order | heuristic alone | written order |",
             "| --- | --- | --- | --- | --- |"]
    samples = [g for g in results if g.family == "sample"]
    generated = [g for g in results if g.family == "generated"]
    lines.append(summary(samples, "samples"))
    for lo in range(MIN_OPS, MAX_OPS + 1, 10):
        hi = lo + 9 if lo + 10 <= MAX_OPS else MAX_OPS
        lines.append(summary([g for g in generated if lo <= g.ops <= hi],
                             f"generated, {lo}-{hi} ops"))
    lines.append(summary(generated, "generated, all"))
    return "\n".join(lines + ["", HEADER] + [_line(g) for g in results])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bindings", type=int, default=24, help="bindings per graph")
    ap.add_argument("--graphs", type=int, default=40, help="generated graphs of 20-60 ops")
    ap.add_argument("--generated-bindings", type=int, default=8,
                    help="bindings per generated graph (the solver's cost)")
    ap.add_argument("--max-sets", type=int, default=200_000,
                    help="the solver's budget per binding (sets of executed ops)")
    args = ap.parse_args(argv)
    print(report(graphs(args.bindings, args.graphs, args.max_sets,
                        generated_bindings=args.generated_bindings)))


if __name__ == "__main__":
    main()
