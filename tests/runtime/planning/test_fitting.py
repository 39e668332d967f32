"""Fitting plans to the device: planning for speed (shared cut points, recompute weighing,
host copies), caching, the descent's strides. The closed loop's repair and gate:
test_repair.py."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.planning.plan import CostModel

from tests.support.runtimecase import CHAIN, CUT, ROOT, module_of, smallest_named, tight_limit


# -- planning for speed: shared cut points, recompute weighing, host copies -------------
ATTENTION = ROOT / "samples" / "attention.mlir"

# %a can not be recomputed (a random draw) and is needed between three big steps: under
# the smallest limit it is evicted three times, and copied to the host only once
REEVICT = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %a = rng_uniform() {seed = 1} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %b = broadcast_in_dim(%x) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %c = reduce(%b) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %cb = broadcast_in_dim(%c) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d = add(%cb, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  %d2 = reduce(%d) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %e = broadcast_in_dim(%d2) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %f = reduce(%e) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %fb = broadcast_in_dim(%f) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %g = add(%fb, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  %g2 = reduce(%g) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %h = broadcast_in_dim(%g2) {dims = [0, 1]} -> tensor<?x8x64, [@S0, @C8, @C64]>
  %i = reduce(%h) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %ib = broadcast_in_dim(%i) {dims = [0, 1]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %j = add(%ib, %a) -> tensor<?x8x16, [@S0, @C8, @C16]>
  return %j
}
"""

# recomputing the big %v needs the small %s, dead by then: worth keeping %s alive
WEIGH = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>) {
  %s = reduce(%x) {dims = [1], kind = "sum"} -> tensor<?, [@S0]>
  %v = broadcast_in_dim(%s) {dims = [0]} -> tensor<?x8x16, [@S0, @C8, @C16]>
  %w = reduce(%v) {dims = [2], kind = "max"} -> tensor<?x8, [@S0, @C8]>
  %t = tanh(%x) -> tensor<?x8, [@S0, @C8]>
  %big = broadcast_in_dim(%t) {dims = [0, 1]} -> tensor<?x8x32, [@S0, @C8, @C32]>
  %r = reduce(%big) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %u = reduce(%v) {dims = [2], kind = "sum"} -> tensor<?x8, [@S0, @C8]>
  %o = add(%r, %u) -> tensor<?x8, [@S0, @C8]>
  %o2 = add(%o, %w) -> tensor<?x8, [@S0, @C8]>
  return %o2
}
"""


def OWN_MEMORY() -> JaxBackend:
    """The JAX backend planning as for a device with a memory of its own (a GPU), where
    a host copy frees device memory: for the tests of plans that reload (CUT has nothing
    to recompute); on a CPU device (one memory) such plans would free nothing."""
    return JaxBackend(one_memory=False)


class CountingNumpy(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.offloads = self.reloads = 0

    def offload(self, x):
        self.offloads += 1
        return super().offload(x)

    def reload(self, h):
        self.reloads += 1
        return super().reload(h)


def test_second_eviction_reuses_the_host_copy() -> None:
    module = run_pipeline(module_of(REEVICT), parse_pipeline("analyze,remat"))
    backend = CountingNumpy()
    ex = Executor(module, backend)
    inputs = ex.random_inputs({"S0": 5})
    ref, _ = Executor(module_of(REEVICT), NumpyBackend()).run(inputs)
    out, report = ex.run(inputs, smallest_named(ex, {"S0": 5}))
    assert report.evictions == 3 and report.reloads == 3 and report.recomputes == 0
    assert backend.offloads == 1 and backend.reloads == 3
    assert out["%j"].tobytes() == ref["%j"].tobytes()


def test_recompute_may_keep_a_small_dead_value_alive() -> None:
    module = run_pipeline(module_of(WEIGH), parse_pipeline("analyze,remat"))
    ex = Executor(module, NumpyBackend())
    binding = {"S0": 5}
    limit = ex.plan(binding, None).peak - 1
    plan = ex.plan(binding, limit)
    site = ex._bound(binding).program.sites[("%v", 6)]
    assert site.region_inputs == ["%s"]  # the region reads %s, dead after %v otherwise
    assert [(s.kind, s.value, s.method) for s in plan.trace if s.kind != "op"] == [
        ("evict", "%v", "recompute"), ("regen", "%v", "recompute")]
    inputs = ex.random_inputs(binding)
    ref, _ = Executor(module_of(WEIGH), NumpyBackend()).run(inputs)
    out, report = ex.run(inputs, limit)
    assert report.recomputes == 1 and report.reloads == 0 and report.peak_bytes <= limit
    assert report.held_peak_bytes <= report.peak_bytes
    assert out["%o2"].tobytes() == ref["%o2"].tobytes()


def _attention(pipeline: str = "analyze,schedule{exact=0,polish=0},remat"):
    # (the list scheduler's versions: the plans these tests look into were made on them)
    return run_pipeline(module_of(path=ATTENTION), parse_pipeline(pipeline))


def _cut_points(plan) -> set[int]:
    """Compute-op indices before which the trace leaves compiled code."""
    cuts, pending = set(), False
    for step in plan.trace:
        if step.kind == "evict" or (step.kind == "regen" and step.method == "reload"):
            pending = True
        elif step.kind == "op" and pending:
            cuts.add(step.index)
            pending = False
    return cuts


def test_consolidation_shares_cut_points_within_the_limit() -> None:
    from bladec.runtime.planning.trace import simulate
    binding = {"S0": 8, "S1": 256}
    shared = Executor(_attention(), NumpyBackend(), cost=CostModel())
    loose = Executor(_attention(), NumpyBackend(), cost=CostModel(), consolidate=False)
    limit = max(smallest_named(shared, binding), smallest_named(loose, binding))
    a, b = shared.prepare(binding, limit).plan, loose.prepare(binding, limit).plan
    assert a.peak <= limit and b.peak <= limit
    sizes = shared._bound(binding).sizes
    assert simulate(a.trace, sizes, shared.inputs, set(shared.outputs)).peak == a.peak
    assert len(_cut_points(a)) == a.cuts < len(_cut_points(b)) == b.cuts
    assert shared.prepare(binding, limit).segments == a.cuts + 1
    # the constant broadcast is recomputed (its region starts at the constant), not copied
    assert ("regen", "%scb", "recompute") in [(s.kind, s.value, s.method) for s in a.trace]
    # a reload may run before the op that asks for it: a prefetch to a shared cut point
    assert any(e.before < e.use for e in a.evictions if e.how == "reload")


def test_attention_at_the_smallest_limit_is_bitwise_equal() -> None:
    binding = {"S0": 2, "S1": 128}
    original = Executor(module_of(path=ATTENTION), NumpyBackend())
    inputs = original.random_inputs(binding, 1)
    ref, _ = original.run(inputs)
    for consolidate in (True, False):
        ex = Executor(_attention(), NumpyBackend(), consolidate=consolidate)
        limit = smallest_named(ex, binding)
        out, report = ex.run(inputs, limit)
        assert report.evictions > 0 and report.peak_bytes <= limit
        assert report.held_peak_bytes <= report.peak_bytes
        assert all(out[k].tobytes() == ref[k].tobytes() for k in ref), consolidate


def test_the_whole_step_is_not_compiled_to_learn_it_does_not_fit(monkeypatch) -> None:
    """Where the whole step compiled at another binding says this one's is over the
    limit (its device/model ratio times this model peak), the closed loop runs first and
    only its executables are compiled; a limit no plan meets is still refused on the
    checked path, the whole step compiled and the smallest limit searched."""
    from bladec.runtime.planning.limit import LimitError
    # CUT at S0=256: whole step 2,424,832 B on the device, model 2,097,152 B; the whole
    # step at S0=64 gives the ratio 1.08, so the estimate is 2,266,277 B; without the
    # slack a 2,000,000 B limit is estimated over, and a plan with one eviction fits it
    monkeypatch.setattr("bladec.runtime.planning.fitting.WHOLE_STEP_SLACK", 0.0)
    module = run_pipeline(module_of(CUT), parse_pipeline("analyze,remat"))
    ex = Executor(module, OWN_MEMORY(), cost=CostModel())   # (CUT's plans reload)
    ex.prepare({"S0": 64}, None)
    before = ex.backend.compilations
    run = ex.prepare({"S0": 256}, 2_000_000)
    assert run.evictions and run.device.peak <= 2_000_000
    assert ex._bound({"S0": 256}).free is None        # the whole step: not compiled
    assert ex.backend.compilations - before == len({id(s.fn) for s in run.segment_steps()})
    refused = Executor(module, OWN_MEMORY(), cost=CostModel())
    refused.prepare({"S0": 64}, None)
    with pytest.raises(LimitError, match="smallest limit that works"):
        refused.prepare({"S0": 256}, 1_000_000)
    assert refused._bound({"S0": 256}).free is not None   # checked before refusing

def test_fits_answers_without_searching_the_smallest_limit(monkeypatch) -> None:
    """``Executor.fits`` (a search over bindings under one limit): the answer prepare
    gives, a plan found kept for the run, a refusal without the smallest-limit search."""
    module = run_pipeline(module_of(REEVICT), parse_pipeline("analyze,remat"))
    smallest = smallest_named(Executor(module, NumpyBackend()), {"S0": 5})
    ex = Executor(module, NumpyBackend())

    def search(*args, **kwargs):
        raise AssertionError("searched the smallest limit")
    monkeypatch.setattr(ex, "_smallest_limit", search)
    assert not ex.fits({"S0": 5}, smallest - 1)
    assert ex.fits({"S0": 5}, smallest)
    run = ex._bound({"S0": 5}).runs[smallest]
    assert ex.prepare({"S0": 5}, smallest) is run and run.device.peak <= smallest


def test_runs_are_cached_per_input_shapes(monkeypatch) -> None:
    ex = Executor(run_pipeline(module_of(CHAIN), parse_pipeline("analyze,remat")), NumpyBackend())
    inputs = ex.random_inputs({"S0": 6})
    limit = tight_limit(ex, {"S0": 6})
    first, report = ex.run(inputs, limit)

    def fail(*args, **kwargs):
        raise AssertionError("worked out again")
    for name in ("bind", "plan", "_checked", "_fit", "shapes_for"):
        monkeypatch.setattr(ex, name, fail)
    monkeypatch.setattr("bladec.runtime.planning.binding.exact_sizes", fail)
    monkeypatch.setattr("bladec.runtime.planning.binding.simulate", fail)
    again, report2 = ex.run(inputs, limit)
    assert again["%g"].tobytes() == first["%g"].tobytes()
    assert report2.peak_bytes == report.peak_bytes and report2.evictions == report.evictions
    with pytest.raises(AssertionError, match="worked out again"):
        ex.run(ex.random_inputs({"S0": 7}), limit)  # new shapes: bound afresh


@pytest.mark.parametrize("backend", [OWN_MEMORY, NumpyBackend], ids=["jax", "numpy"])
def test_segment_times_only_when_profiling(backend) -> None:
    # the default cost model, not the measured copy bandwidth: with a slow one (a loaded
    # machine) the planner prefers recomputes, finds no plan under the peak here, and
    # the run is not cut
    ex = Executor(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")), backend(),
                  cost=CostModel())
    inputs = ex.random_inputs({"S0": 256})
    limit = tight_limit(ex, {"S0": 256})
    out, fast = ex.run(inputs, limit)
    out2, timed = ex.run(inputs, limit, profile=True)
    assert fast.segments == timed.segments > 1
    assert fast.segment_seconds == []
    assert len(timed.segment_seconds) == timed.segments
    assert all(t >= 0 for t in timed.segment_seconds)
    assert np.allclose(out["%g"], out2["%g"], rtol=1e-5)


@pytest.mark.parametrize("backend", [OWN_MEMORY, NumpyBackend], ids=["jax", "numpy"])
def test_segment_memory_comes_from_each_segment(backend) -> None:
    """Each segment's figures are its own (XLA's memory analysis on JAX, the arrays its
    interpretation allocates on NumPy), listed per segment run, in order."""
    ex = Executor(run_pipeline(module_of(CUT), parse_pipeline("analyze,remat")), backend(),
                  cost=CostModel())   # (see test_segment_times_only_when_profiling)
    inputs = ex.random_inputs({"S0": 256})
    limit = tight_limit(ex, {"S0": 256})
    _, report = ex.run(inputs, limit)
    steps = ex.prepare({"S0": 256}, limit).segment_steps()
    assert len(report.segment_memory) == len(steps) == report.segments > 1
    for figure, step in zip(report.segment_memory, steps):
        memory = step.fn.memory()
        assert (figure["output_bytes"], figure["temp_bytes"]) == \
            (memory.output_bytes, memory.temp_bytes)
    assert report.peak_bytes <= limit
    if backend is OWN_MEMORY:
        stats = steps[0].fn.compile().memory_analysis()
        assert steps[0].fn.memory().temp_bytes == stats.temp_size_in_bytes


def test_copy_bandwidth_is_the_same_in_every_process() -> None:
    """On CPU the plans, and so the smallest limit a refusal names, must not follow the
    load: the copy bandwidth is the cost model's default there, measured nowhere (off
    CPU it is measured once per process and platform)."""
    import jax

    backend = JaxBackend()
    bw = backend.copy_bandwidth()
    assert isinstance(bw, float) and 1e7 < bw < 1e13
    if jax.devices()[0].platform == "cpu":
        assert bw == CostModel().copy_bandwidth
    assert JaxBackend().copy_bandwidth() == bw
    assert Executor(module_of(CHAIN), backend).cost.copy_bandwidth == bw
    assert Executor(module_of(CHAIN), NumpyBackend()).cost == CostModel()
    mine = CostModel(copy_bandwidth=1.0)   # its prices are kept; whether host copies
    # share the device's memory is the backend's to say (one memory on CPU)
    assert Executor(module_of(CHAIN), backend, cost=mine).cost == \
        replace(mine, one_memory=backend.one_memory)


def test_keep_freed_memory_is_opt_in_on_cpu(monkeypatch) -> None:
    """Off by default where the device is the CPU (one memory: what the allocator keeps
    is the process's growth), on elsewhere; the variable or the argument decide."""
    import platform

    import jax

    from bladec.runtime.backends.allocator import keep_freed_memory_in_process
    assert not JaxBackend(keep_freed_memory=False).keeps_freed_memory
    monkeypatch.setenv("BLADEC_KEEP_FREED_MEMORY", "0")
    assert not JaxBackend().keeps_freed_memory
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert keep_freed_memory_in_process() is True
        monkeypatch.delenv("BLADEC_KEEP_FREED_MEMORY")
        assert JaxBackend().keeps_freed_memory == (jax.devices()[0].platform != "cpu")
        monkeypatch.setenv("BLADEC_KEEP_FREED_MEMORY", "1")
        assert JaxBackend().keeps_freed_memory


def test_segments_compile_with_llvm_emitters_on_cpu_and_whole_steps_as_jit(monkeypatch
                                                                           ) -> None:
    """On CPU a cut plan's segments compile with XLA's LLVM fusion emitters (cheaper to
    compile: xlaoption.legacy_cpu_emitters) where the device has memory of its own
    (one_memory=False), and with XLA's own MLIR emitters in one memory, where plans
    recompute chains and run faster with them; the whole step (in either order) with
    jax.jit's own options, and in bitwise mode every executable alike; a jaxlib that
    does not know the option gets none; BLADEC_CPU_FUSION_EMITTERS (or fusion_emitters)
    says which. Off CPU no option is added."""
    import jax

    from bladec.runtime.backends import xlaoption
    from bladec.runtime.backends.xlaoption import (BITWISE_OPTIONS, FUSION_EMITTERS_VARIABLE,
                                                   KEEP_BARRIERS)
    on_cpu = jax.devices()[0].platform == "cpu"
    legacy = xlaoption.legacy_cpu_emitters() if on_cpu else {}
    # in one memory (CPU) cut segments also keep their barriers, so recomputes survive CSE
    kept = KEEP_BARRIERS if on_cpu else {}
    backend = JaxBackend(fusion_emitters=False)
    assert backend.compile_options == {**legacy, **kept} and backend.jit_options == {}
    assert JaxBackend().compile_options == kept     # one memory on CPU: XLA's emitters
    assert JaxBackend(one_memory=False).compile_options == legacy
    monkeypatch.setenv(FUSION_EMITTERS_VARIABLE, "0")
    assert JaxBackend().compile_options == {**legacy, **kept}
    monkeypatch.delenv(FUSION_EMITTERS_VARIABLE)
    legacy = {**legacy, **kept}
    # bitwise: never the LLVM emitters (with the fusion pass off they miscompile a
    # transpose feeding a dot: xlaoption.bitwise_options)
    assert JaxBackend(bitwise=True).compile_options == \
        xlaoption.bitwise_options("cpu" if on_cpu else "gpu")
    assert BITWISE_OPTIONS.items() <= JaxBackend(bitwise=True).compile_options.items()
    assert JaxBackend(fusion_emitters=True).compile_options == kept
    monkeypatch.setenv(FUSION_EMITTERS_VARIABLE, "1")
    assert JaxBackend(one_memory=False).compile_options == {}
    monkeypatch.delenv(FUSION_EMITTERS_VARIABLE)
    ops = module_of(CHAIN).main.ops[:1]
    spec = [((4, 8), "f32")]
    specs = {id(ops[0]): [((4, 8), "f32")]}
    args = (ops, list(ops[0].operands), ops[0].result_names, specs, spec)
    plain = backend.segment(*args)
    own = backend.segment(*args, xla_order=True)
    whole = backend.segment(*args, whole_step=True)
    assert plain.options() == legacy and own.options() == {} and whole.options() == {}
    bitwise = JaxBackend(bitwise=True)
    assert bitwise.segment(*args, whole_step=True).options() == bitwise.compile_options
    if not on_cpu:
        return
    own.memory(), plain.memory()
    assert own is not plain and own.compiled and plain.compiled   # with those options
    # an XLA that does not know the option: none is passed
    monkeypatch.setattr(xlaoption, "_LEGACY_EMITTERS", {"xla_cpu_no_such_option": False})
    monkeypatch.setattr(xlaoption, "_KNOWN", {})
    assert xlaoption.legacy_cpu_emitters() == {}
    assert JaxBackend(fusion_emitters=False).compile_options == kept


def test_a_stride_starts_from_the_last_fitting_plans_margins(monkeypatch) -> None:
    """The descent's strides plan first with the margins of the last plan that fitted
    (the device's excess over the model per op hardly moves with the limit), where the
    closed loop for a limit starts from none, so that its answer does not depend on what
    was asked before. Attention at 8x256 on JAX in XLA's own order (as on a GPU): its
    search learns margins of 6 MB. (In the order held on CPU, where the broadcasts are
    made inside their readers, the model meets the device and nothing is learned.)"""
    from bladec.runtime.planning import fitting
    ex = Executor(_attention(), JaxBackend(one_memory=False, enforce_order=False),
                  cost=CostModel())   # (its plans reload)
    binding = {"S0": 8, "S1": 256}
    bound = ex._bound(binding)
    ex.prepare(binding, None)
    margins_asked: list[dict[int, int]] = []
    real = fitting.try_plan

    def try_plan(program, sizes, limit, cost, consolidate, margins):
        margins_asked.append(dict(margins))
        return real(program, sizes, limit, cost, consolidate, margins)

    monkeypatch.setattr(fitting, "try_plan", try_plan)
    smallest = ex._smallest_limit(bound)
    # a fitting plan leaves the margins it was made with on the binding
    assert bound.margins and bound.margins in margins_asked
    learned = dict(bound.margins)
    margins_asked.clear()
    ex._stride(bound, smallest - 1)
    assert margins_asked and margins_asked[0] == learned
    margins_asked.clear()
    ex._fit(bound, smallest - 2)   # a limit's own loop: from no margins
    assert margins_asked and margins_asked[0] == {}
