"""benchmarks/bench_device.py: its bookkeeping (the refusal's figure; in devicereport.py the
goal check and the Pareto set) on hand-made rows, and the whole script on a tiny model (one
case, the fewest rows); the benchmark itself is `make bench-device`."""
from __future__ import annotations

import json

import pytest


pytest.importorskip("jax")
pytest.importorskip("matplotlib")

from benchmarks import bench_device as bench  # noqa: E402
from benchmarks.support import allocator  # noqa: E402
from benchmarks.support import devicereport as report  # noqa: E402
MIB = report.MIB


def test_smallest_limit_is_read_from_the_refusal():
    msg = ("no plan fits the limit of 1 B (1 bytes) for this binding; the smallest limit "
           "that works is 53.04 MiB (55620104 bytes; without eviction the peak is 9 bytes)")
    assert bench.smallest_limit(msg) == 55620104
    assert bench.smallest_limit("no plan fits the limit of 1 B (1 bytes)") is None


def test_fused_backend_has_fusion_on():
    backend = bench.fused_backend()
    assert getattr(backend, "fuse", True) is True
    assert not getattr(backend, "bitwise", False)


def _row(name, kind, peak_mib, ms, **kw):
    return report.Row(name, kind, peak=int(peak_mib * MIB), times=[ms / 1e3] * 5, **kw)


def _case(*rows):
    return report.Case("sgd", 8, 256, [_row("jit", "jit", 100, 100), *rows])


def test_goals_met_and_not_met_with_their_numbers():
    case = _case(_row("checkpoint nothing_saveable", "checkpoint", 60, 150),
                 _row("bladec, no limit", "bladec", 95, 104),
                 _row("bladec, 0.6x", "bladec", 60, 140),
                 _row("bladec, 0.5x", "bladec", 50, 125))
    goals = report.goal_lines(case)
    assert [ok for ok, _ in goals] == [True, True, True]
    assert goals[1][1].endswith("is bladec, 0.5x 50.0 MiB (0.50x), 125.0 ms (1.25x)")
    # slower than jit by more than 5%, a policy beaten at its memory, 0.5x too slow
    case = _case(_row("checkpoint nothing_saveable", "checkpoint", 60, 130),
                 _row("bladec, no limit", "bladec", 95, 110),
                 _row("bladec, 0.6x", "bladec", 60, 140),
                 _row("bladec, 0.5x", "bladec", 50, 131))
    assert [ok for ok, _ in report.goal_lines(case)] == [False, False, False]
    # a policy below every bladec row, and a 0.5x row that was refused
    case = _case(_row("checkpoint nothing_saveable", "checkpoint", 30, 130),
                 _row("bladec, no limit", "bladec", 101, 90),
                 report.Row("bladec, 0.5x", "bladec", error="no plan fits"))
    goals = report.goal_lines(case)
    assert [ok for ok, _ in goals] == [False, False, False]
    assert goals[1][1].endswith("no bladec row at <= 30.0 MiB")
    assert "refused (no plan fits)" in goals[2][1]


def test_pareto_keeps_rows_nothing_beats_on_both():
    rows = [_row("a", "jit", 100, 100), _row("b", "checkpoint", 60, 150),
            _row("c", "bladec", 60, 140), _row("d", "bladec", 120, 90),
            _row("e", "bladec", 100, 100), report.Row("f", "bladec", error="refused")]
    assert report.pareto(rows) == {"a", "c", "d", "e"}


@pytest.mark.slow
def test_script_on_a_tiny_model(tmp_path, monkeypatch):
    """Every kind of row, the table, the JSON, the goal check and the plot, end to end
    (the whole benchmark on a tiny model, about 20 s of CPU: ``make bench``).
    Planned as for a device with its own memory (BLADEC_ONE_MEMORY=0): in one memory
    (CPU) the tiny step has nothing to recompute worth it: 0.9x is refused there, and
    its smallest limit is its whole step, which would leave no row that evicts."""
    monkeypatch.setenv("BLADEC_ONE_MEMORY", "0")
    out, js, png = tmp_path / "b.md", tmp_path / "b.json", tmp_path / "p.png"
    assert bench.main(["--model", "tiny", "--shapes", "2x8", "--optimizers", "sgd",
                       "--policies", "nothing_saveable", "--barriers", "kept",
                       "--fractions", "0.9,0.01", "--no-policy-limits",
                       "--out", str(out), "--json", str(js), "--plot", str(png),
                       "--allocator", "tuned" if allocator.current() == "tuned"
                       else "default"]) == 0
    dump = json.loads(js.read_text())
    rows = {r["name"]: r for r in dump["cases"][0]["rows"]}
    refused = rows.pop("bladec, 0.01x")
    assert refused["peak"] is None and not refused["times"]
    assert "the smallest limit that works is" in refused["error"]
    assert set(rows) == {"jit", "jit, donated", "checkpoint nothing_saveable, barriers kept",
                         "bladec, no limit", "bladec, 0.9x", "bladec, min"}
    for r in rows.values():
        assert r["peak"] > 0 and len(r["times"]) == 5 and not r["error"], r
    assert rows["jit, donated"]["peak"] < rows["jit"]["peak"]   # the parameters alias
    assert refused["limit"] < rows["bladec, min"]["limit"] < rows["bladec, 0.9x"]["limit"]
    goals = dump["cases"][0]["goals"]
    assert len(goals) == 3 and goals[-1]["text"] == "0.5x jit's peak: not run (--fractions)"
    text = out.read_text()
    assert "| bladec, min |" in text and "| bladec, 0.01x | - |" in text
    assert "| CPU ms | x jit CPU | faults/step |" in text and "allocator: " in text
    for r in rows.values():
        assert len(r["cpu_times"]) == 5 and sum(r["cpu_times"]) > 0, r
    assert "### Goals (issue 13):" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv", [["--steps", "4"], ["--shapes", "8x"], ["--policies", "x"],
                                  ["--optimizers", "sgd,lamb"], ["--fractions", "half"]])
def test_bad_arguments_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err
