"""The parser benchmark (benchmarks/bench_parse.py): a fast check of its listing, and the
slow speed target (`make bench` runs it: `pytest -m slow`)."""
from __future__ import annotations

import pytest

from bladec.parse import parse_module
from bladec.printer import format_module
from bladec.verify import verify


TARGET_LINES_PER_S = 20_000


def _bench():
    from benchmarks import bench_parse
    return bench_parse


def test_generated_listing_parses_verifies_and_round_trips():
    bench = _bench()
    text = bench.generate(5_000, seed=1)
    assert text.count("\n") == 5_000
    assert 0.20 <= bench.attr_fraction(text) <= 0.30
    for op in ("dot_general(", "broadcast_in_dim(", "reduce(", "reshape(", "{dims = [",
               "kind = \"", "lhs_contract = [", "add(", "// "):
        assert op in text, op
    module = parse_module(text, "bench.mlir")
    assert len(module.main.ops) > 4_900
    assert verify(module) == []
    printed = format_module(module)
    again = parse_module(printed, "printed.mlir")
    assert again == module
    assert format_module(again) == printed
    assert bench.generate(5_000, seed=1) == text  # deterministic


def test_measure_reports_every_figure():
    bench = _bench()
    r = bench.measure(bench.generate(200), repeat=1)
    assert r["lines"] == 200
    for key in ("parse_lines_per_s", "parse_cpu_lines_per_s", "parse_print_lines_per_s",
                "parse_print_cpu_lines_per_s"):
        assert r[key] > 0


@pytest.mark.slow
def test_parse_speed(capsys):
    bench = _bench()
    text = bench.generate(100_000)
    r = bench.measure(text, repeat=3)
    with capsys.disabled():
        print(f"\nparse: {r['parse_lines_per_s']:,.0f} lines/s wall, "
              f"{r['parse_cpu_lines_per_s']:,.0f} lines/s cpu; parse+print: "
              f"{r['parse_print_lines_per_s']:,.0f} lines/s wall, "
              f"{r['parse_print_cpu_lines_per_s']:,.0f} lines/s cpu")
    # CPU time: the machines are shared, and the wall clock counts the neighbours' work.
    assert r["parse_cpu_lines_per_s"] >= TARGET_LINES_PER_S
