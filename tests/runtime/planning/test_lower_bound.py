"""The planner's per-op lower bound (Program.lower_bounds) is sound and only saves time.

The closed loop stops without planning where some op's bound plus its margin exceeds the
limit; that is only right if no plan the greedy planner can build ever holds less at that
op's step than the bound says, and if the answer (which limits fit, the smallest one named)
is the same with and without the shortcut.
"""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.planning import fitting
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.planning.plan import Program
from bladec.runtime.planning.policy import try_plan
from bladec.runtime.planning.trace import position_ops

from tests.support.paths import SAMPLES

# bindings where the planner can evict well below the peak with nothing evicted
CASES = [("attention.mlir", {"S0": 4, "S1": 256}), ("mlp-train.mlir", {"S0": 4, "S1": 64})]


def _executor(name: str) -> Executor:
    module = parse_module((SAMPLES / name).read_text(), name)
    return Executor(run_pipeline(module, parse_pipeline("analyze,schedule,remat")),
                    NumpyBackend())


def _program(ex: Executor, binding: dict[str, int]):
    bound = ex._bound(binding)
    ex._fit(bound, bound.planned_peak)   # fills in the sites the planner needs
    return bound


@pytest.mark.parametrize("name,binding", CASES)
def test_no_plan_holds_less_than_the_bound(name: str, binding: dict[str, int]) -> None:
    ex = _executor(name)
    bound = _program(ex, binding)
    lower = bound.version.program.lower_bounds(bound.sizes)
    assert len(lower) == len(bound.program.ops)
    unconstrained = bound.planned_peak
    planned = 0
    for fraction in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3):
        plan = try_plan(bound.program, bound.sizes, int(unconstrained * fraction), ex.cost)
        if plan is None:
            continue
        planned += 1
        ops = position_ops(plan.trace)
        for pos, k in enumerate(ops):
            if k >= 0 and (pos + 1 == len(ops) or ops[pos + 1] != k):  # op k's own step
                assert plan.measure.memory[pos] >= lower[k], (fraction, k)
    assert planned >= 2   # the property was checked on plans that evict
    assert max(lower) <= unconstrained


def test_bound_counts_kept_inputs_settled_outputs_and_the_op() -> None:
    text = """
func.func @main(%x: tensor<4x4>, %w: tensor<4x4> {donate = true}) {
  %a = add(%x, %x) -> tensor<4x4>
  %b = mul(%a, %w) -> tensor<4x4>
  %c = add(%b, %b) -> tensor<4x4>
  return %a, %c
}
"""
    ex = Executor(parse_module(text), NumpyBackend())
    bound = ex._bound({})
    lower = bound.version.program.lower_bounds(bound.sizes)
    t = 64  # one 4x4 f32 tensor
    # %x is kept throughout; %w is donated, so only counted where it is read.
    # op 0 makes %a: x + a; op 1 reads a and w, makes b: x + a + w + b;
    # op 2: %a (an output no later op reads) is settled, b and c: x + a + b + c
    assert lower == [2 * t, 4 * t, 4 * t]


@pytest.mark.parametrize("name,binding", CASES)
def test_smallest_limit_is_the_same_without_the_shortcut(name, binding, monkeypatch) -> None:
    with_bound = _executor(name)
    smallest = _smallest(with_bound, binding)
    monkeypatch.setattr(Program, "lower_bounds", lambda self, sizes: [0] * len(self.ops))
    without = _executor(name)
    assert _smallest(without, binding) == smallest


def test_loop_skips_the_planner_below_the_bound(monkeypatch) -> None:
    ex = _executor("attention.mlir")
    bound = _program(ex, CASES[0][1])
    calls = []
    real = fitting.try_plan
    monkeypatch.setattr(fitting, "try_plan",
                        lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    lower = bound.version.program.lower_bounds(bound.sizes)
    assert ex._fit(bound, max(lower) - 1) is None
    assert calls == []


def _smallest(ex: Executor, binding: dict[str, int]) -> int:
    with pytest.raises(BladecError):
        ex.prepare(binding, 1)
    return ex._bound(binding).smallest
