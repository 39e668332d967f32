"""The limit holds on the device: the device peak of DESIGN.md section 4.

``bladec run`` reports as ``peak_bytes`` the device peak: the arrays the runtime holds
plus, while a compiled segment runs, that segment's own XLA outputs and temporaries, read
from its compiled executable. These tests check it against XLA's accounting of a
whole-graph ``jax.jit`` of the same listing (computed here independently of the
executor), check that a limit holds by it, that a refused limit names the smallest one
that works by it, and that the default (fused) mode agrees with the unoptimized fused
run within the stated tolerance.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bladec.cli import main
from bladec.errors import BladecError
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.runtime.executor import Executor, unoptimized
from bladec.runtime.backends.jax_backend import JaxBackend, whole_graph, xla_total_bytes
from bladec.source import load_module

from tests.support.clirunner import make_runner
from tests.support.conditioning import largest_drift, ulp_floor
from tests.support.order import one_order
from tests.support.paths import SAMPLES

LLAMA = SAMPLES / "llama-train-small.mlir"
# executors per test compile the same programs, and programs probed for their figures
# then compiled to run: XLA compiles each once (issue 36; tests/support/compileonce.py)
pytestmark = pytest.mark.usefixtures("compile_once")
SMALLEST = re.compile(r"smallest limit that works is .*?\((\d+) bytes")

# Default (fused) mode: every f32 output of an optimized run is within this fraction of
# the output's largest magnitude of the unoptimized fused run. Chosen from measurement:
# the Llama step at 2x64 and 4x96, seeds 0-2, limits 0.7/0.5/0.4 of the peak, differed
# by at most 1.9e-6 of the largest magnitude (16 ulps at that scale: XLA fuses and sums
# in another order where the plan cuts the graph); 1e-5 leaves a 5x margin. Plans that
# replay forward regions inside backward segments (recompute chains, CPU) are held to the
# larger of this and the step's own rounding floor (tests.support.conditioning).
FUSED_TOLERANCE = 1e-5
# Against the whole step in XLA's own order (what jax.jit runs, and bladec at no limit
# where that holds less: Fitter._no_limit), whose fused kernels differ from the per-op
# order's: the same step, bindings, seeds and limits differed by at most 1.17e-4 of the
# largest magnitude (2026-11-27); 3e-4 leaves a 2.5x margin.
XLA_ORDER_TOLERANCE = 3e-4


def whole_graph_jit_bytes(path: Path, binding: dict[str, int]) -> int:
    """XLA's own total for a plain ``jax.jit`` of the listing as written (fused):
    arguments + outputs + temporaries - aliased, from its memory analysis."""
    ex = Executor(load_module(str(path)), JaxBackend())
    compiled = whole_graph(list(ex.func.ops), ex.inputs, ex.outputs, ex.shapes_for(binding),
                           ex.info.dtypes)
    return xla_total_bytes(compiled)


def _run_json(*args: str) -> dict:
    result = make_runner().invoke(main, ["run", *args, "--json"])
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return json.loads(result.stdout)


def _check_segments(report: dict) -> None:
    """The JSON lets anyone recompute the peak: one integer entry per segment run."""
    figures = report["segment_memory"]
    assert len(figures) == report["segments"] >= 1
    for f in figures:
        assert set(f) == {"held_bytes", "output_bytes", "temp_bytes"}
        assert all(isinstance(v, int) and v >= 0 for v in f.values())
    totals = [f["held_bytes"] + f["output_bytes"] + f["temp_bytes"] for f in figures]
    assert report["peak_bytes"] >= max(totals)
    assert report["peak_bytes"] == max(totals + [report["held_peak_bytes"]])


@pytest.mark.parametrize("sample, dims, fraction", [
    pytest.param("llama-train-small.mlir", "S0=8,S1=256", 0.5, id="llama-8x256",
                 marks=pytest.mark.slow),
    pytest.param("mlp-train.mlir", "S0=16,S1=256", 0.6, id="mlp-16x256")])
def test_acceptance_no_limit_and_under_a_limit(sample, dims, fraction, monkeypatch) -> None:
    """Issue acceptance (``[llama-8x256]``, `make bench`: about 12 s of CPU): no limit
    within 1.02x of whole-graph jit's XLA total; at 0.5x of that total the run exits 0
    with its device peak within the limit, planned as for a device with a memory of its
    own (BLADEC_ONE_MEMORY=0: on a CPU device the host copies count too, and recomputes
    alone do not reach 0.5x; test_rss.py). `make test`'s smoke, the same checks through
    the same command line on the MLP step (1.5 s): at 16x256 its no-limit run is 0.77x
    of jit's total and 0.6x (its smallest is 0.57x: the two layers' activations are all
    read by the backward) plans 6 evictions in 9 segments (2026-11-27)."""
    path = SAMPLES / sample
    binding = {k: int(v) for k, v in (d.split("=") for d in dims.split(","))}
    jit_bytes = whole_graph_jit_bytes(path, binding)
    free = _run_json(str(path), "--dims", dims)
    _check_segments(free)
    assert free["peak_bytes"] <= 1.02 * jit_bytes
    assert free["model_peak_bytes"] > 0 and free["evictions"] == 0
    monkeypatch.setenv("BLADEC_ONE_MEMORY", "0")
    limit = int(fraction * jit_bytes)
    cut = _run_json(str(path), "--dims", dims, "--mem-limit", str(limit))
    _check_segments(cut)
    assert cut["peak_bytes"] <= limit and cut["evictions"] > 0
    assert cut["host_peak_bytes"] >= 0


def test_text_report_names_the_device_peak() -> None:
    result = make_runner().invoke(main, ["run", str(SAMPLES / "listing1-runnable.mlir"),
                                         "--dims", "S1=8"])
    assert result.exit_code == 0, result.stderr
    assert re.search(r"^peak: .*held arrays plus each segment's XLA outputs", result.stdout,
                     re.M)
    assert "model peak:" in result.stdout


def test_the_numpy_backend_does_not_say_its_figures_are_xla_s() -> None:
    """There is no XLA on the NumPy backend: its peak, and a refusal's smallest limit,
    count what its kernels allocate op by op, and the report and the message say so."""
    runner = make_runner()
    args = ["run", str(SAMPLES / "listing1-runnable.mlir"), "--dims", "S1=8",
            "--backend", "numpy"]
    done = runner.invoke(main, args)
    assert done.exit_code == 0, done.stderr
    assert re.search(r"^peak: .*held arrays plus what each segment's NumPy kernels "
                     r"allocate", done.stdout, re.M)
    refused = runner.invoke(main, args + ["--mem-limit", "1KiB"])
    assert refused.exit_code == 1
    assert "the smallest limit that works" in refused.stderr
    assert "NumPy kernels allocate" in refused.stderr and "XLA" not in refused.stderr


@pytest.mark.parametrize("sample, binding", [("mlp-train.mlir", {"S0": 2, "S1": 16}),
                                             ("attention.mlir", None)])
def test_refused_limit_names_one_that_works_by_the_device(sample: str, binding) -> None:
    """A limit below what any plan reaches names the smallest that works by the device
    accounting: it runs, within it, and one byte less is refused."""
    module = run_pipeline(load_module(str(SAMPLES / sample)), parse_pipeline(DEFAULT_PIPELINE))
    ex = Executor(module, JaxBackend())
    if binding is None:
        binding = {s: max(2, (ex.info.ranges.get(s, (1, None))[0])) for s in ex.info.free}
    inputs = ex.random_inputs(binding, 0)
    _, free = ex.run(inputs)
    with pytest.raises(BladecError) as err:
        ex.run(inputs, 1)
    smallest = int(SMALLEST.search(str(err.value)).group(1))
    assert 1 < smallest <= free.peak_bytes
    _, report = ex.run(inputs, smallest)
    assert report.peak_bytes <= smallest
    with pytest.raises(BladecError, match="smallest limit that works"):
        ex.run(inputs, smallest - 1)


# The small Llama step optimized and run under a limit, on a device with a memory of its
# own (the plans reload): one plan compiled per (binding, fraction), which the fused
# numerics, XLA's-order numerics and donation tests below all read. Emptied after the
# module (its executables are large).
_CUT: dict[tuple, SimpleNamespace] = {}


@pytest.fixture(autouse=True, scope="module")
def _forget_cut_runs():
    yield
    _CUT.clear()


def _cut(binding: dict[str, int], fraction: float) -> SimpleNamespace:
    """The unoptimized fused run at no limit held in bladec's order (the reference, seed
    1), and the optimized step under ``fraction`` of that run's device peak: its
    executor, inputs, outputs, report and limit."""
    key = (tuple(sorted(binding.items())), fraction)
    if key not in _CUT:
        with one_order():
            module = load_module(str(LLAMA))
            ref_ex = Executor(unoptimized(module), JaxBackend())
            assert ref_ex.backend.fuse and not ref_ex.backend.bitwise
            inputs = ref_ex.random_inputs(binding, 1)
            ref, ref_report = ref_ex.run(inputs)
            ex = Executor(run_pipeline(module, parse_pipeline(DEFAULT_PIPELINE)),
                          JaxBackend(one_memory=False))
            limit = int(fraction * ref_report.peak_bytes)
            out, report = ex.run(inputs, limit)
        _CUT[key] = SimpleNamespace(ex=ex, inputs=inputs, ref=ref, out=out, report=report,
                                    limit=limit)
    return _CUT[key]


@pytest.mark.parametrize("binding, fraction", [  # the larger binding: `make bench`
    ({"S0": 2, "S1": 64}, 0.5),
    pytest.param({"S0": 4, "S1": 96}, 0.4, marks=pytest.mark.slow)])
def test_fused_default_matches_unoptimized_fused_run(binding, fraction) -> None:
    """Fusion is on by default; an optimized plan under a limit computes the
    unoptimized fused run's outputs within FUSED_TOLERANCE (relative to each output's
    largest magnitude), and its device peak is within the limit. (The reference held in
    bladec's order: against XLA's own order, which fuses differently, see
    XLA_ORDER_TOLERANCE.) The plans are a device's with its own memory (they reload):
    the numerics of cut plans."""
    cut = _cut(binding, fraction)
    assert cut.report.peak_bytes <= cut.limit and cut.report.evictions > 0
    for name, want in cut.ref.items():
        want64, got64 = np.asarray(want, np.float64), np.asarray(cut.out[name], np.float64)
        scale = max(float(np.abs(want64).max(initial=0.0)), np.finfo(np.float32).tiny)
        assert float(np.abs(got64 - want64).max(initial=0.0)) <= FUSED_TOLERANCE * scale, name


@pytest.mark.slow   # about 110 s of CPU: planning chains at 2x64 (make bench)
def test_fused_chain_plans_drift_no_further_than_rounding_moves_the_step(monkeypatch) -> None:
    """On CPU a plan under a limit recomputes forward regions inside backward segments
    (chains), where XLA rounds some values differently. On the small Llama step at 2x64
    with random inputs that moves the outputs by 2.1e-4 of their largest magnitude, over
    FUSED_TOLERANCE; moving the inputs by one ulp moves them 1.2e-3-1.5e-3 (2026-11-27):
    the step's conditioning, not the plan. The same plans are bit for bit in bitwise mode
    (tests/runtime/planning/test_chain.py); a plan that computed something else would be
    off by the outputs' own scale."""
    monkeypatch.setenv("BLADEC_NO_LIMIT_ORDER", "bladec")
    module = load_module(str(LLAMA))
    ref_ex = Executor(unoptimized(module), JaxBackend())
    inputs = ref_ex.random_inputs({"S0": 2, "S1": 64}, 0)
    ref, ref_report = ref_ex.run(inputs)
    ex = Executor(run_pipeline(module, parse_pipeline(DEFAULT_PIPELINE)), JaxBackend())
    limit = int(0.9 * ref_report.peak_bytes)
    out, report = ex.run(inputs, limit)
    plan = ex.prepare(report.binding, limit).plan
    assert report.peak_bytes <= limit and any(e.how == "chain" for e in plan.evictions)
    drift = largest_drift(ref, out)
    floor = ulp_floor(lambda moved: ref_ex.run(moved)[0], inputs, ref)
    assert drift <= max(FUSED_TOLERANCE, floor), (drift, floor)


@pytest.mark.slow   # issue 36: 5.0 s; `make test` keeps the same plan against bladec's order
# (test_fused_default_matches_unoptimized_fused_run[binding0-0.5])
def test_plans_match_xla_own_order_within_its_tolerance() -> None:
    """By default the unoptimized run at no limit is the whole step in XLA's own order
    where that holds less (at 2x64 it does); a plan under a limit, in bladec's per-op
    order (the one the test above checks: half of the step's peak in bladec's order),
    computes its outputs within XLA_ORDER_TOLERANCE."""
    binding = {"S0": 2, "S1": 64}
    cut = _cut(binding, 0.5)
    ref_ex = Executor(unoptimized(load_module(str(LLAMA))), JaxBackend())
    ref, ref_report = ref_ex.run(cut.inputs)
    assert ref_ex.prepare(ref_report.binding, None).xla_order
    assert cut.report.evictions > 0 and cut.report.peak_bytes <= cut.limit
    for name, want in ref.items():
        want64, got64 = np.asarray(want, np.float64), np.asarray(cut.out[name], np.float64)
        scale = max(float(np.abs(want64).max(initial=0.0)), np.finfo(np.float32).tiny)
        assert float(np.abs(got64 - want64).max(initial=0.0)) <= XLA_ORDER_TOLERANCE * scale


def test_donated_segment_arguments_are_not_counted_twice() -> None:
    """A value whose last use is a segment is donated to it: where XLA writes an output
    into its buffer, the segment's output bytes leave it out (alias). (The plan cut at
    half of the peak above: with reloads.)"""
    cut = _cut({"S0": 2, "S1": 64}, 0.5)
    prepared = cut.ex.prepare(cut.report.binding, cut.report.limit)
    donating = [s for s in prepared.segment_steps() if s.fn.donate]
    assert donating, "no segment was given a donated argument"
    for s in donating:
        stats = s.fn.compile().memory_analysis()
        assert s.fn.memory().output_bytes == stats.output_size_in_bytes - \
            stats.alias_size_in_bytes


# -- donation ------------------------------------------------------------------------------
DONATED = """\
func.func @main(%x: tensor<?x256, [@S0, @C256]> {donate = true}, %w: tensor<256x256>) {
  %y = dot(%x, %w) -> tensor<?x256, [@S0, @C256]>
  %z = tanh(%y) -> tensor<?x256, [@S0, @C256]>
  %g = dot(%z, %w) -> tensor<?x256, [@S0, @C256]>
  return %g
}
"""


def _parse(text: str):
    from bladec.parse import parse_module
    return parse_module(text, "<donated>")


def test_donation_round_trips_and_is_checked() -> None:
    from bladec.printer import format_module
    from bladec.verify import verify
    module = _parse(DONATED)
    assert [a.donated for a in module.main.args] == [True, False]
    text = format_module(module)
    assert "%x: tensor<?x256, [@S0, @C256]> {donate = true}, %w: tensor<256x256>)" in text
    assert format_module(_parse(text)) == text
    with pytest.raises(BladecError, match="arguments take only 'donate = true'") as err:
        _parse(DONATED.replace("{donate = true}", "{donate = 1}"))
    assert err.value.loc.line == 1
    with pytest.raises(BladecError, match="donated .* but is also an output"):
        verify(_parse(DONATED.replace("return %g", "return %g, %x")))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_donated_input_is_freed_at_its_last_use(backend) -> None:
    """The model frees a donated input after its last use (the caller gave it up), so the
    peak is lower than with the input kept; the runtime frees (and donates) it too, and
    the device peak is no higher than the kept run's."""
    from bladec.runtime.backends.backend import NumpyBackend
    make = NumpyBackend if backend == "numpy" else JaxBackend
    donated, kept = (Executor(_parse(t), make()) for t in
                     (DONATED, DONATED.replace(" {donate = true}", "")))
    inputs = donated.random_inputs({"S0": 64}, 0)
    out_d, rep_d = donated.run(inputs)
    out_k, rep_k = kept.run(inputs)
    x_bytes = 64 * 256 * 4
    assert rep_d.model_peak_bytes == rep_k.model_peak_bytes - x_bytes
    assert rep_d.peak_bytes <= rep_k.peak_bytes
    np.testing.assert_allclose(out_d["%g"], out_k["%g"], rtol=1e-6)
    assert inputs["%x"].shape == (64, 256)  # the caller's NumPy array is untouched


@pytest.mark.slow   # issue 36: 5.6 s of CPU (three whole-step compilations at 8x128);
# `make test` runs every JAX test with the order enforced (the backend's default on CPU)
def test_the_enforced_order_reaches_xla_and_lowers_its_bytes() -> None:
    """Item 4: XLA reorders a plain jit (the scheduled order alone changes nothing), and
    tying each op to the previous one (the backend's default on CPU) lowers XLA's own
    bytes for the small Llama step (0.86x at 8x128 when measured)."""
    module = load_module(str(LLAMA))
    scheduled = run_pipeline(module, parse_pipeline("analyze,schedule{versions=1}")).main
    ex = Executor(module, JaxBackend())
    assert ex.backend.enforce_order  # these tests run on CPU
    shapes, dtypes = ex.shapes_for({"S0": 8, "S1": 128}), ex.info.dtypes
    ops = [op for op in scheduled.ops if not op.name.startswith(("remat.", "schedule."))]
    plain = xla_total_bytes(whole_graph(list(module.main.ops), ex.inputs, ex.outputs,
                                        shapes, dtypes))
    reordered = xla_total_bytes(whole_graph(ops, ex.inputs, ex.outputs, shapes, dtypes))
    ordered = xla_total_bytes(whole_graph(ops, ex.inputs, ex.outputs, shapes, dtypes,
                                          "ordered"))
    assert reordered == plain
    assert ordered < 0.95 * plain


def test_bitwise_and_the_old_fuse_flag_contradict() -> None:
    runner = make_runner()
    args = ["run", str(SAMPLES / "listing1-runnable.mlir"), "--dims", "S1=4"]
    assert runner.invoke(main, args + ["--fuse"]).exit_code == 0   # fusion is the default
    result = runner.invoke(main, args + ["--fuse", "--bitwise"])
    assert result.exit_code == 2 and "contradict" in result.stderr
    assert runner.invoke(main, args + ["--bitwise"]).exit_code == 0


@pytest.mark.slow   # issue 36: 12.8 s of CPU; `make test` keeps XLA's own order chosen at no
# limit where it holds less (tests/runtime/planning/test_orders.py, 1x16)
def test_where_xla_own_order_holds_less_a_limit_jit_meets_is_met(monkeypatch) -> None:
    """At 1x16 the small Llama step held in bladec's order needs 1.07x of what a plain
    ``jax.jit`` of the listing needs (its per-op order can not fuse an update into the
    gradient it reads). Where no plan in bladec's order fits (here: the closed loop is
    told to find none, as on the paper-size SGD step, whose parameters leave nothing
    to evict), the whole step in XLA's own order, compiled from the listing as written,
    runs instead: the limit jax.jit meets is met, by the device accounting, with the
    unoptimized run's outputs; one byte less is refused and names jit's figure."""
    from bladec.runtime.engine import Engine
    from bladec.runtime.planning.fitting import Fitter
    from bladec.runtime.planning.limit import LimitError

    binding = {"S0": 1, "S1": 16}
    jit = whole_graph_jit_bytes(LLAMA, binding)
    engine = Engine(load_module(str(LLAMA)))
    ex = engine.executor
    shapes = ex.shapes_for(binding)
    b = ex.bind({n: shapes[n] for n in ex.inputs}, binding)
    assert ex._free(ex._bound(b)).device.peak > jit   # bladec's order holds more here
    assert ex.prepare(b, None).device.peak == jit      # so at no limit XLA's runs
    monkeypatch.setattr(Fitter, "_fit", lambda self, bound, limit: None)
    run = ex.prepare(b, jit)
    assert run.xla_order and run.segments == 1 and run.evictions == 0
    assert run.device.peak == jit
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(shapes[n]).astype(np.float32)
              if ex.info.dtypes[n].startswith("f") else np.zeros(shapes[n], np.int32)
              for n in ex.inputs}
    outputs, report = ex.run(inputs, jit)
    assert report.peak_bytes == jit
    reference, _ = Executor(unoptimized(load_module(str(LLAMA))), JaxBackend()).run(inputs)
    for name, value in reference.items():
        scale = max(float(np.max(np.abs(value))), 1.0)
        np.testing.assert_allclose(outputs[name], value, rtol=0, atol=FUSED_TOLERANCE * scale)
    with pytest.raises(LimitError) as refused:
        ex.prepare(b, jit - 1)
    assert refused.value.smallest == jit
