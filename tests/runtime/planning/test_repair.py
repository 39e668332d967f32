"""The closed loop's repair and gate: a segment over the limit is kept and what it does not
read moves out; a plan the estimate puts over the limit is not compiled; an output written
into a donated argument is not counted before it. (Split from test_fitting.py.)"""
from __future__ import annotations

from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.planning.plan import CostModel

from tests.support.runtimecase import CUT, module_of


# -- the closed loop keeps a segment over the limit, moving out what it does not read ----
# %a and %a2 are made first and read last; the plan moves %a2 to the host around ops
# 2-4, which are then one segment; its figure over the limit is repaired by moving %a
# out over the same span, so the segment and its executable stay as they are
AROUND = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %a = exp(%x) -> tensor<?x8, [@S0, @C8]>
  %a2 = tanh(%x) -> tensor<?x8, [@S0, @C8]>
  %b = mul(%x, %x) -> tensor<?x8, [@S0, @C8]>
  %c = broadcast_in_dim(%b) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d = reduce(%c) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %e = add(%d, %a) -> tensor<?x8, [@S0, @C8]>
  %f = add(%e, %a2) -> tensor<?x8, [@S0, @C8]>
  return %f
}
"""


class TempsNumpy(NumpyBackend):
    """NumPy segments that report ``extra`` more temporary bytes where they broadcast
    (as XLA's figures can exceed the model's)."""

    def __init__(self, extra: int) -> None:
        super().__init__()
        self.extra = extra

    def segment(self, ops, inputs, outputs, specs, args, donate=(), xla_order=False,
                whole_step=False):
        seg = super().segment(ops, inputs, outputs, specs, args, donate, xla_order,
                              whole_step=whole_step)
        if any(op.name == "broadcast_in_dim" for op in ops):
            m = seg.memory()
            seg._memory = type(m)(m.output_bytes, m.temp_bytes + self.extra)
        return seg


def test_a_segment_over_the_limit_is_kept_and_what_it_does_not_read_moves_out() -> None:
    from dataclasses import replace

    from bladec.runtime.planning.plan import Eviction, Plan, build_trace
    from bladec.runtime.planning.repair import repair
    from bladec.runtime.planning.trace import simulate
    module = run_pipeline(module_of(AROUND), parse_pipeline("analyze,remat"))
    backend = TempsNumpy(extra=100)
    ex = Executor(module, backend, cost=CostModel())
    binding = {"S0": 4}
    bound = ex._bound(binding)
    program = replace(bound.version.program, sites=ex._sites(bound.version, bound.shapes))
    bound.program = program
    events = [Eviction("%a2", "reload", 1, 6, 5)]
    trace = build_trace(program, events)
    plan = Plan(trace, simulate(trace, bound.sizes, program.inputs, program.outputs), events)
    run = ex._checked(plan, bound)
    middle = run.segment_steps()[1]
    assert [op.result_names[0] for op in middle.ops] == ["%b", "%c", "%d"]
    figure = run.device.segments[1]
    limit = figure.total - 50    # over by 50 bytes; %a (128 bytes) covers it
    assert run.device.peak > limit
    fixed = repair(plan, ex._checked(plan, bound, limit), program, bound.sizes, limit)
    assert fixed is not None
    assert [(e.value, e.after, e.before) for e in fixed.evictions[1:]] == [("%a", 1, 5)]
    again = ex._checked(fixed, bound, limit)
    assert again.device.peak <= limit
    kept = again.segment_steps()[1]   # the same segment: the JAX backend's cache key
    assert (kept.ops, kept.inputs, kept.outputs, kept.free) == \
        (middle.ops, middle.inputs, middle.outputs, middle.free)
    # too far over for %a alone: nothing to repair, the plan is planned again instead
    assert repair(plan, ex._checked(plan, bound, figure.total - 200), program,
                  bound.sizes, figure.total - 200) is None
    # the closed loop repairs by itself and the run computes what the listing computes
    inputs = ex.random_inputs(binding)
    ref, _ = Executor(module_of(AROUND), NumpyBackend()).run(inputs)
    out, _ = ex.run(inputs, ex.prepare(binding, None).device.peak - 1)
    assert out["%f"].tobytes() == ref["%f"].tobytes()


def test_a_plan_the_estimate_puts_over_the_limit_is_not_compiled() -> None:
    """The closed loop's gate: a segment not compiled yet is estimated as the model's
    bytes at each of its steps plus its outputs not made yet (XLA allocates them for the
    whole run): CUT at S0=256 in one segment, inputs 720,896 B, the model's most
    2,097,152 B at %c and %d, %g's 327,680 B beside: 2,424,832 B (XLA's figure too)."""
    from bladec.runtime.planning.accounting import estimated_figure
    ex = Executor(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")), JaxBackend(),
                  cost=CostModel())
    binding = {"S0": 256}
    bound = ex._bound(binding)
    plan = ex.plan(binding, None)
    run = ex._checked(plan, bound, 2_000_000, gate=True)
    assert run.device.estimated and run.device.peak == 2_424_832
    assert ex.backend.compilations == 0
    (step,) = run.segment_steps()
    assert estimated_figure(step, 720_896, plan.measure.memory, bound.sizes).total == 2_424_832
    run = ex._checked(plan, bound, 3_000_000, gate=True)   # within: compiled and checked
    assert not run.device.estimated and ex.backend.compilations == 1
    assert run.device.peak == 2_424_832
    # compiled, its own figure is used: no estimate refuses it any more
    assert estimated_figure(step, 720_896, [0] * 8, bound.sizes).total == 2_424_832


def test_an_output_written_into_a_donated_argument_is_not_counted_before_it() -> None:
    """The estimate counts what the device holds and the model does not: an output XLA
    allocates for the whole run is counted until it is made, but an output JAX writes
    into a donated argument's buffer (the first donated argument of its shape and dtype)
    only between that argument's last read and the output (issue 37: counted from the
    segment's start, an imported GPT-2's optimizer segments were 1.9-4.2 MB over)."""
    from types import SimpleNamespace as NS
    from bladec.runtime.planning.accounting import modelled_figure
    from bladec.runtime.planning.segments import SegmentStep
    ops = [NS(result_names=["%t"], operands=["%p"]),      # the last read of %p
           NS(result_names=["%u"], operands=["%t"]),
           NS(result_names=["%q"], operands=["%u"]),      # %q goes into %p's buffer
           NS(result_names=["%r"], operands=["%q"])]      # %r has a buffer of its own
    sizes = {"%p": 100, "%t": 10, "%u": 10, "%q": 100, "%r": 100}
    avals = {"%p": ((25,), "f32"), "%q": ((25,), "f32"), "%r": ((25,), "f32"),
             "%t": ((1,), "f32"), "%u": ((1,), "f32")}
    memory = [110, 20, 120, 220]   # the model: %p freed after its last read
    step = SegmentStep(NS(compiled=False), ["%p"], ["%q", "%r"], ["%p"], ops, [0, 1, 2, 3],
                       (0, 4))
    figure = modelled_figure(step, 100, memory, sizes, lambda n: avals[n])
    # at %u: the model's 20 B, %p's buffer awaiting %q (100) and %r's (100)
    assert figure.total == 220
    # an output counted from the segment's start, as before: 20 + 100 + 100 at %u, and
    # 110 + 100 + 100 at %t
    assert modelled_figure(step, 100, memory, sizes).total == 310
    # not donated: %q has a buffer of its own from the start too
    kept = SegmentStep(NS(compiled=False), ["%p"], ["%q", "%r"], [], ops, [0, 1, 2, 3],
                       (0, 4))
    assert modelled_figure(kept, 100, memory, sizes, lambda n: avals[n]).total == 310
