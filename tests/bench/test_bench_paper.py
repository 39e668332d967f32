"""benchmarks/bench_paper.py: its bookkeeping (cells, the goal check, training state,
padding) on small inputs; the benchmark itself is `make bench-paper`."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.models.llama import Adam
from bladec.runtime.planning.limit import LimitError
from tests.support.paths import BENCHMARKS

pytest.importorskip("jax")

from benchmarks import bench_paper as bench  # noqa: E402
GIB = bench.GIB


def test_cell_counts_steady_steps_apart():
    cell = bench.Cell()
    cell.add(100, 2.0, 1, 5 * GIB)   # compiled: counted in the rate, not the steady rate
    cell.add(100, 0.5, 0, 3 * GIB)
    cell.add(100, 0.5, 0, 4 * GIB)
    assert cell.rate == pytest.approx(100.0)
    assert cell.steady_rate == pytest.approx(200.0)
    assert cell.peak == 5 * GIB and cell.compilations == 1
    assert cell.text() == "100 (5.000 GiB, 1 comp., 3 steps)" and cell.steps == 3
    cell.over = True
    assert cell.text().startswith("OOM (100 without a limit")
    assert bench.Cell(oom=True).text() == "OOM"
    assert bench.Cell().steady_text() == "-"


def test_a_refusal_names_its_bucket_and_smallest_limit():
    cell = bench.Cell()
    cell.refuse((18, 640), LimitError(GIB, GIB * 131 // 100))
    assert cell.oom and cell.text() == "OOM at 18x640 (smallest 1.31 GiB)"
    assert cell.steady_text() == "OOM"
    other = bench.Cell()   # a refusal that names no smallest limit
    other.refuse((14, 1024), bench.BladecError("no plan"))
    assert other.text() == "OOM at 14x1024" and other.smallest is None
    cells = _cells({"bladec": [50, 50, None], "static": [None] * 3})
    cells["bladec"][18] = cell
    assert bench.goal_lines(cells)[2] == "- batch 18: bladec OOM at 18x640 (smallest 1.31 GiB)"


@pytest.mark.parametrize("probe", ["jit-pow2:14x512", "bladec:18", "bladec:18xlong", "static"])
def test_a_bad_probe_is_one_line(probe, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["bench_paper.py", "--probe", probe])
    with pytest.raises(SystemExit) as exit:
        bench.main()
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "--probe: MODE:BATCHxLENGTH, MODE static or bladec (e.g. bladec:18x768)")


def _cells(rates: dict[str, list[float]], peaks: dict[str, list[float]] | None = None):
    cells = {}
    for mode in bench.MODES:
        cells[mode] = {}
        for j, bs in enumerate(bench.BATCH_SIZES):
            rate = rates.get(mode, [1.0] * 3)[j]
            cell = bench.Cell(oom=rate is None)
            if rate is not None:
                peak = (peaks or {}).get(mode, [1.0] * 3)[j]
                cell.add(int(rate * 10), 10.0, 0, int(peak * GIB))
            cells[mode][bs] = cell
    return cells


def test_goal_lines_name_what_is_ahead_and_what_does_not_fit():
    rates = {"bladec": [50, 50, None], "dynamic": [60, None, None], "static": [40, 40, 40]}
    lines = bench.goal_lines(_cells(rates, {"bladec": [1.0, 0.9, 1], "static": [1.0, 1.0, 1]}))
    assert "NOT ahead of: dynamic 60" in lines[0]
    assert "beats every other mode that fits" in lines[1] and "(0.9000x)" in lines[1]
    assert lines[2] == "- batch 18: bladec OOM, static fits: NOT MET"
    cells = _cells({"bladec": [50] * 3, "jit-pow2": [70] * 3})
    cells["jit-pow2"][14].over = True
    line = bench.goal_lines(cells)[0]
    assert "beats every other mode that fits" in line
    assert line.endswith("(faster only above the limit: jit-pow2 70)")
    assert "NOT ahead of: jit-pow2 70" in bench.goal_lines(cells)[1]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_carries_the_model(optimizer):
    cfg = bench.Config(vocab=16, hidden=8, intermediate=12, heads=2, layers=1)
    model = bench.Training.start(cfg, optimizer, seed=0)
    batch = bench.Batch(np.zeros((2, 5), np.int32), np.ones((2, 5), np.int32),
                        np.ones((2, 5), np.float32))
    args = model.args(batch)
    assert len(args) == (6 if optimizer == "adam" else 5)
    assert args[-1] == (Adam().lr_at(1e-3, 1) if optimizer == "adam" else np.float32(1e-3))
    outputs = bench.jax_step(cfg, optimizer)(*args)
    loss = model.update(outputs)
    assert np.isfinite(loss) and model.steps == 1
    assert model.params is not args[0] and (model.state is None) == (optimizer == "sgd")
    # Adam's bias corrections move the step size from one step to the next; SGD's stays
    assert model.args(batch)[-1] == (Adam().lr_at(1e-3, 2) if optimizer == "adam"
                                     else np.float32(1e-3))


def test_padding_to_powers_of_two_and_to_multiples():
    b = bench.Batch(np.ones((2, 70), np.int32), np.ones((2, 70), np.int32),
                    np.ones((2, 70), np.float32))
    assert bench._pad(b).shape == (2, 128)
    assert bench._pad(b, 64).shape == (2, 128) and bench._pad(b, 32).shape == (2, 96)
    padded = bench._pad(b, 32)
    assert padded.mask[:, 70:].sum() == 0 and padded.tokens[:, :70].all()


def test_bench_paper_reaches_the_runtime_only_through_the_engine() -> None:
    """Issue 16: the benchmark runs bladec as a user of the library does, through the
    engine (runtime/engine.py), importing nothing private from the runtime."""
    import ast
    runtime = []
    paths = [BENCHMARKS / "bench_paper.py", BENCHMARKS / "support" / "training.py"]
    for node in (n for path in paths for n in ast.walk(ast.parse(path.read_text()))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bladec.runtime"):
            runtime.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("bladec.runtime") for a in node.names)
    assert runtime, "bench_paper no longer imports the engine: update this test"
    for module, names in runtime:
        assert module == "bladec.runtime.engine", module
        from bladec.runtime import engine
        assert all(n in engine.__all__ and not n.startswith("_") for n in names), names
