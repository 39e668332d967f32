"""The memory timeline (`bladec run --timeline`): original and plan on one axis, the ops
of the original listing, with the plan's evictions, reloads and recomputes marked."""
from __future__ import annotations

import pytest

from bladec.cli import main
from bladec.ir import Op, TensorType, Value
from bladec.runtime.timeline import check_timeline_path, op_rows
from bladec.runtime.planning.trace import Step
from bladec.errors import BladecError

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

RUNNABLE = ROOT / "samples" / "listing1-runnable.mlir"


def _op(name: str, kind: str = "exp") -> Op:
    return Op(kind, [], [Value(name, TensorType((4,), "f32"))], {})


def test_plan_rows_are_mapped_onto_the_original_ops():
    a, b, c, d = _op("%a"), _op("%b"), _op("%c", "dot"), _op("%d")
    original = [Step("op", op, index=i) for i, op in enumerate([a, b, c, d])]
    # the plan runs b, a, evicts %b, runs c, recomputes %b (2 region ops) and reloads
    # %a before d
    plan = [Step("op", b), Step("op", a), Step("evict", value="%b", method="recompute"),
            Step("op", c), Step("regen", value="%b", method="recompute", region=[b, b]),
            Step("regen", value="%a", method="reload"), Step("op", d)]
    memory = [20, 30, 25, 40, 45, 50, 35]  # b, a, c, region x2, reload, d
    rows = op_rows(original, [10, 20, 30, 40], plan, memory)
    assert [r.name for r in rows] == ["%a", "%b", "%c", "%d"]
    assert [r.kind for r in rows] == ["exp", "exp", "dot", "exp"]
    assert [r.original_bytes for r in rows] == [10, 20, 30, 40]
    assert [r.plan_position for r in rows] == [1, 0, 2, 3]
    # an op's plan memory includes the regenerations just before it
    assert [r.plan_bytes for r in rows] == [30, 20, 25, 50]
    assert rows[0].evicted_after == ["%b"]  # after %a, the op before the eviction
    assert rows[3].recomputed_before == ["%b"] and rows[3].reloaded_before == ["%a"]
    assert not any(r.evicted_after for r in rows[1:])


def test_timeline_path_is_checked_first():
    with pytest.raises(BladecError, match=r"\.csv or \.png"):
        check_timeline_path("mem.jpg")
    check_timeline_path("MEM.PNG")
    check_timeline_path("mem.csv")


def test_png_has_title_markers_and_one_axis(tmp_path, monkeypatch):
    import matplotlib.figure   # here, not at collection: 0.5 s of CPU in each worker
    figures = []
    real = matplotlib.figure.Figure.savefig

    def keep(self, *args, **kwargs):
        figures.append(self)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    path = tmp_path / "mem.png"
    result = make_runner().invoke(main, [
        "run", str(RUNNABLE), "--dims", "S1=64", "--mem-limit", "4822016", "-p",
        "analyze,remat", "--backend", "numpy", "--timeline", str(path)])
    assert result.exit_code == 0, result.stderr
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (fig,) = figures
    (ax,) = fig.axes
    title = ax.get_title()
    assert str(RUNNABLE) in title and "S1=64" in title and "4.60 MiB" in title
    labels = ax.get_legend_handles_labels()[1]
    assert "original order, no eviction" in labels
    assert any(label.startswith("evictions after the op (") for label in labels)
    assert any(label.startswith("recomputes before the op (") for label in labels)
    original, plan = ax.lines[0], ax.lines[1]
    # both drawn at the ops of the original listing: 0..8, not step against step
    assert list(original.get_xdata()) == list(range(9))
    assert list(plan.get_xdata()) == list(range(9))
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["%1", "%2", "%3"]
    assert "original listing" in ax.get_xlabel()
    assert max(plan.get_ydata()) * (1 << 20) <= 4822016 < max(original.get_ydata()) * (1 << 20)


def test_stdin_listing_is_named_stdin_in_the_title(tmp_path, monkeypatch):
    titles = []
    monkeypatch.setattr("bladec.runtime.timeline._plot",
                        lambda path, rows, limit, title: titles.append(title))
    result = make_runner().invoke(main, ["run", "-", "--dims", "S1=2", "--backend", "numpy",
                                         "--timeline", str(tmp_path / "m.png")],
                                  input=RUNNABLE.read_text(encoding="utf-8"))
    assert result.exit_code == 0, result.stderr
    assert titles and titles[0].startswith("<stdin>: S1=2\n")
