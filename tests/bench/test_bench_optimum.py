"""benchmarks/bench_optimum.py on a few small graphs: every peak it reports is one of an
order of the graph's ops, the optimum is no higher than any of them, and the report
counts what it says it counts."""
from __future__ import annotations

from benchmarks import bench_optimum as bench
from tests.support.paths import SAMPLES


def test_small_graphs_against_the_independent_optimum() -> None:
    lines: list[str] = []
    graphs = bench.graphs(4, 2, 50_000, samples=[SAMPLES / "diamond.mlir",
                                                  SAMPLES / "ops-loop.mlir"],
                          echo=lambda line, **_: lines.append(line))
    assert [g.family for g in graphs] == ["sample", "sample", "generated", "generated"]
    assert all(bench.MIN_OPS <= g.ops <= bench.MAX_OPS for g in graphs[2:])
    for graph in graphs:
        assert len(graph.rows) == 4 and len(lines) == len(graphs)
        for row in graph.rows:
            assert row.lower <= row.best <= min(row.runtime, row.heuristic, row.written)
    diamond = graphs[0]
    assert diamond.reached and diamond.equal(lambda r: r.runtime) == 4
    assert diamond.worst(lambda r: r.written) > 1.0      # the listing's order is not optimal
    report = bench.report(graphs)
    assert report.startswith("| graphs | optimum reached |")
    assert "| diamond.mlir | 10 | optimum | 4/4, 1.0000 |" in report
    samples_line = next(line for line in report.splitlines() if line.startswith("| samples"))
    reached = sum(g.reached for g in graphs[:2])
    assert samples_line.startswith(f"| samples | {reached} of 2 |")
