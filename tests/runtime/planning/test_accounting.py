"""The device accounting of a run under a limit, with the segments compiled most likely
over first (accounting._likely_over, by the guess alone): a refused run compiles fewer segments, and a run
that fits is accounted exactly as in order."""
from __future__ import annotations

from types import SimpleNamespace

from bladec.runtime.planning.accounting import SegmentFigure, account
from bladec.runtime.planning.plan import Plan
from bladec.runtime.planning.segments import EvictStep, PreparedRun, SegmentStep

SIZES = {"x": 100, "a": 40, "b": 30, "c": 20, "y": 10}


def _run(temps: list[int], compiled: tuple[int, ...] = ()) -> PreparedRun:
    """A chain of segments x -> a -> b -> c -> y (the k-th with ``temps[k]`` bytes of
    temporaries), with ``a`` evicted after the second."""
    names = ["x", "a", "b", "c", "y"]
    run = PreparedRun(Plan([], None))
    for k, temp in enumerate(temps):
        fn = SimpleNamespace(compiled=k in compiled, temp=temp, index=k)
        run.steps.append(SegmentStep(fn, [names[k]], [names[k + 1]],
                                     [names[k]] if k else [], [], [k], (k, k + 1)))
        if k == 1:
            run.steps.append(EvictStep("a", False))
    return run


def _figures(calls: list[int]):
    def figure_of(step: SegmentStep, held: int) -> SegmentFigure:
        calls.append(step.fn.index)
        return SegmentFigure(held, SIZES[step.outputs[0]], step.fn.temp)
    return figure_of


def _guess(step: SegmentStep, held: int) -> SegmentFigure:
    return SegmentFigure(held, 0, step.fn.temp)   # ranks as the true figures do


def test_a_refused_run_compiles_the_segment_over_first() -> None:
    temps = [10, 20, 30, 500]
    in_order: list[int] = []
    plain = account(_run(temps), SIZES, ["x"], over=400, figure_of=_figures(in_order))
    likely: list[int] = []
    ranked = account(_run(temps), SIZES, ["x"], over=400, figure_of=_figures(likely),
                     likely=_guess)
    assert in_order == [0, 1, 2, 3] and likely == [3]
    assert plain.peak > 400 and ranked.peak == plain.peak
    # the segments before it stand as their held bytes, the one over as compiled
    assert [f.total for f in ranked.segments[:3]] == [f.held_bytes for f in plain.segments[:3]]
    assert ranked.segments[3] == plain.segments[3]


def test_the_order_does_not_depend_on_what_is_compiled() -> None:
    """Which segment refuses a plan (and so where the closed loop learns margins) is
    the same whatever ran before: ranked by the guess alone."""
    orders = []
    for compiled in ((), (0, 1), (2,)):
        calls: list[int] = []
        account(_run([10, 500, 450, 40], compiled=compiled), SIZES, ["x"], over=400,
                figure_of=_figures(calls), likely=_guess)
        orders.append(calls)
    assert orders == [[1]] * 3


def test_a_run_that_fits_is_accounted_as_in_order() -> None:
    temps = [10, 20, 30, 40]
    plain = account(_run(temps), SIZES, ["x"], over=400, figure_of=_figures([]))
    calls: list[int] = []
    ranked = account(_run(temps), SIZES, ["x"], over=400, figure_of=_figures(calls),
                     likely=_guess)
    assert ranked == plain and plain.peak <= 400
    assert sorted(calls[:4]) == [0, 1, 2, 3]   # each compiled once by the ranking
