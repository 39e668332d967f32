"""Cutting a plan into segments where the JAX backend holds the listing's order (CPU):
what a segment returns, since XLA allocates an executable's outputs for its whole run
while the planner's model counts a value from the op that makes it; and where it keeps
a recompute inside one executable (one memory), evictions to recompute that cut nothing.
The cut tests split with ``uncut=False`` (every eviction cuts, as the fitting loop does
where the plan uncut is over its limit)."""
from __future__ import annotations

import numpy as np

from bladec.parse import parse_module
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.runtime.planning.plan import Plan
from bladec.runtime.planning.segments import EvictStep, SegmentStep, split
from bladec.runtime.planning.trace import Step, simulate

N, D = 256, 8

LISTING = f"""
func.func @main(%q: tensor<{N}x{D}>, %k: tensor<{N}x{D}>) {{
  %y = exp(%q) -> tensor<{N}x{D}>
  %s = dot_general(%q, %k) {{lhs_contract = [1], rhs_contract = [1]}} -> tensor<{N}x{N}>
  %e = exp(%s) -> tensor<{N}x{N}>
  %t = reduce(%e) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %u = reduce(%y) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %o = add(%t, %u) -> tensor<f32>
  return %o
}}
"""


def _run(ex: Executor, uncut: bool = False) -> tuple[list, dict[str, np.ndarray]]:
    """The listing cut after %s, where %y is evicted to be recomputed before %u."""
    ops = list(ex.func.ops[:-1] if ex.func.ops[-1].name == "return" else ex.func.ops)
    ops = [op for op in ops if op.result_names]
    trace = [Step("op", op=ops[0], index=0), Step("op", op=ops[1], index=1),
             Step("evict", value="%y", method="recompute"),
             Step("op", op=ops[2], index=2), Step("op", op=ops[3], index=3),
             Step("regen", value="%y", method="recompute", region=[ops[0]]),
             Step("op", op=ops[4], index=4), Step("op", op=ops[5], index=5)]
    shapes = ex.shapes_for({})
    run = split(Plan(trace, None), shapes, ex.info.dtypes,
                set(ex.inputs) | set(ex.outputs), ex.backend, uncut=uncut)
    return run.steps, ex.random_inputs({})


def test_a_large_value_made_for_the_next_segment_is_made_there() -> None:
    """The dot's [N, N] result, made last before the cut from two small inputs, is made
    at the start of the next segment: the first returns neither it nor %y, which the cut
    drops (to be recomputed), so nothing is evicted there; the result is jax's."""
    ex = Executor(parse_module(LISTING), JaxBackend())
    assert ex.backend.enforce_order   # these tests run on CPU
    steps, inputs = _run(ex)
    segments = [s for s in steps if isinstance(s, SegmentStep)]
    assert [op.result_names[0] for op in segments[0].ops] == ["%y"]
    assert segments[0].outputs == []
    assert segments[1].ops[0].name == "dot_general"
    assert not any(isinstance(s, EvictStep) for s in steps)
    env = {n: ex.backend.put(inputs[n]) for n in ex.inputs}
    for step in segments:
        env.update(zip(step.outputs, step.fn([env[n] for n in step.inputs])))
    q, k = inputs["%q"], inputs["%k"]
    want = np.exp(q @ k.T).sum(dtype=np.float64) + np.exp(q).sum(dtype=np.float64)
    np.testing.assert_allclose(float(np.asarray(env["%o"])), want, rtol=1e-5)
    assert segments[0].fn.memory().output_bytes == 0


BIG = f"""
func.func @main(%x: tensor<{N}x{N}>, %q: tensor<{N}x{D}>, %k: tensor<{N}x{D}>) {{
  %y = exp(%q) -> tensor<{N}x{D}>
  %s = dot_general(%q, %k) {{lhs_contract = [1], rhs_contract = [1]}} -> tensor<{N}x{N}>
  %e = exp(%s) -> tensor<{N}x{N}>
  %g = exp(%x) -> tensor<{N}x{N}>
  %g2 = mul(%g, %g) -> tensor<{N}x{N}>
  %h = reduce(%g2) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %t0 = reduce(%e) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %f = mul(%e, %e) -> tensor<{N}x{N}>
  %t = reduce(%f) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %u = reduce(%y) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %o1 = add(%t, %u) -> tensor<f32>
  %o2 = add(%o1, %t0) -> tensor<f32>
  %v = reduce(%x) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %o3 = add(%o2, %v) -> tensor<f32>
  %o = add(%o3, %h) -> tensor<f32>
  return %o
}}
"""


def test_a_recomputed_value_returned_for_the_next_segment_is_made_there() -> None:
    """A segment that recomputes %e (dot, exp: [N, N] from two [N, D] inputs) after a
    chain of two [N, N] temporaries would return it for the next segment:
    XLA allocates it for the whole run, beside the chain. The next segment makes it again
    from %q and %k, which it holds anyway (remade_across): the first returns no [N, N]
    value, its device figure is the chain's alone, and the result is jax's. (%x is read
    at the end, so that no output of the middle segment is written into its buffer.)"""
    ex = Executor(parse_module(BIG), JaxBackend())
    run = split(Plan(_big_trace(ex), None), ex.shapes_for({}), ex.info.dtypes,
                set(ex.inputs) | set(ex.outputs), ex.backend, uncut=False)
    segments = run.segment_steps()
    assert len(segments) == 3
    assert "%e" not in segments[1].outputs
    assert [o.name for o in segments[2].ops[:2]] == ["dot_general", "exp"]
    square = N * N * 4
    memory = segments[1].fn.memory()
    assert memory.output_bytes < square
    assert memory.output_bytes + memory.temp_bytes < 3 * square
    inputs = ex.random_inputs({})
    env = {n: ex.backend.put(inputs[n]) for n in ex.inputs}
    for step in segments:
        env.update(zip(step.outputs, step.fn([env[n] for n in step.inputs])))
    x, q, k = (inputs[n].astype(np.float64) for n in ("%x", "%q", "%k"))
    e = np.exp(q @ k.T)
    want = (e * e).sum() + np.exp(q).sum() + e.sum() + x.sum() + (np.exp(x) ** 2).sum()
    np.testing.assert_allclose(float(np.asarray(env["%o"])), want, rtol=1e-4)


def test_a_plan_over_its_limit_uncut_is_checked_cut() -> None:
    """WholeStep._checked: the plan with its evictions to recompute cutting nothing where
    that fits the limit; where it is over, the same plan cut at every eviction (what the
    closed loop then learns its margins from)."""
    ex = Executor(parse_module(BIG), JaxBackend())
    bound = ex._bound({})
    trace = _big_trace(ex)
    plan = Plan(trace, simulate(trace, bound.sizes, ex.inputs, set(ex.outputs)))
    uncut = ex._checked(plan, bound, None)
    assert uncut.segments == 1 and uncut.uncut == 2
    assert ex._checked(plan, bound, uncut.device.peak).segments == 1
    cut = ex._checked(plan, bound, uncut.device.peak - 1)
    assert cut.segments == 3 and cut.uncut == 0


def _big_trace(ex: Executor) -> list[Step]:
    """BIG with %e evicted after it is made and recomputed after a chain of two [N, N]
    temporaries, and %y evicted and recomputed before %u."""
    ops = [op for op in ex.func.ops if op.result_names]
    by = {op.result_names[0]: (i, op) for i, op in enumerate(ops)}

    def op(name: str) -> Step:
        i, o = by[name]
        return Step("op", op=o, index=i)

    return [op("%y"), op("%s"), op("%e"),
             Step("evict", value="%e", method="recompute"),
             op("%g"), op("%g2"), op("%h"),
             Step("regen", value="%e", method="recompute",
                  region=[by["%s"][1], by["%e"][1]]),
             op("%t0"),
             Step("evict", value="%y", method="recompute"),
             op("%f"), op("%t"),
             Step("regen", value="%y", method="recompute", region=[by["%y"][1]]),
            op("%u"), op("%o1"), op("%o2"), op("%v"), op("%o3"), op("%o")]


def test_an_eviction_to_recompute_cuts_nothing_in_one_memory() -> None:
    """One memory with the order held (the CPU default): the eviction of %y, made in the
    segment and recomputed later, cuts nothing: one executable, nothing evicted by the
    runtime, the result jax's; it still cuts where the backend does not keep a
    recompute inside an executable (another memory: XLA's CSE would merge it)."""
    ex = Executor(parse_module(LISTING), JaxBackend())
    assert ex.backend.recomputes_inside
    steps, inputs = _run(ex, uncut=True)
    assert len(steps) == 1 and isinstance(steps[0], SegmentStep)
    assert [op.name for op in steps[0].ops].count("exp") == 3   # %y twice, %e
    env = {n: ex.backend.put(inputs[n]) for n in ex.inputs}
    env.update(zip(steps[0].outputs, steps[0].fn([env[n] for n in steps[0].inputs])))
    q, k = inputs["%q"], inputs["%k"]
    want = np.exp(q @ k.T).sum(dtype=np.float64) + np.exp(q).sum(dtype=np.float64)
    np.testing.assert_allclose(float(np.asarray(env["%o"])), want, rtol=1e-5)
    other = Executor(parse_module(LISTING), JaxBackend(one_memory=False))
    assert not other.backend.recomputes_inside
    assert len([s for s in _run(other, uncut=True)[0] if isinstance(s, SegmentStep)]) == 2
