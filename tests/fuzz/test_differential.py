"""The backbone differential test: optimized listings compute what the originals compute.

For a few hundred random listings (tests/support/randlisting.py), a few bindings within the
declared ranges and several memory limits between the exact lower bound and the
unconstrained peak, the ORIGINAL listing is run with no limit and the OPTIMIZED one
(``analyze,schedule,remat``, and ``analyze,remat``, where no reordering takes the
pressure off so evictions really happen) under the limit. Every run must

(a) give outputs bitwise equal to the original's (dtype and shape too, and the shape
    the generator computed on its own),
(b) stay within the limit by the device accounting (DESIGN.md section 4: held arrays
    plus each running segment's own outputs and temporaries), whose peak is recomputed
    here from the report's per-segment figures,
(c) or, when no plan fits, raise a BladecError naming the smallest limit that works;
    that limit must work, be at least the exact lower bound, and one byte less must not,
(d) and the plan's trace, measured by ``simulate`` and by an independent walk of the
    memory model written here, must agree with the report's model peak.

Runs are counted, and a last test checks that a good share of them evicted, reloaded
and recomputed, so the suite is not vacuous. A smaller set runs on JAX in bitwise mode
(``JaxBackend(bitwise=True)``), and Listing 1 runs at S1 in {1, 7, 64} and at the acceptance point: half the
unconstrained peak of the original order.
"""
from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pytest

from bladec.analysis.memory import exact_lower_bound, exact_sizes
from bladec.errors import BladecError
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend, numpy_dtype
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor, Report
from bladec.runtime.planning.trace import Step, simulate
from bladec.verify import verify

from tests.support.paths import ROOT
from tests.support.randlisting import Listing, generate

# checks compile the same programs more than once:
# XLA compiles each once (issue 36; tests/support/compileonce.py)
pytestmark = pytest.mark.usefixtures("compile_once")

LISTING1 = ROOT / "samples" / "listing1-runnable.mlir"

N_GRAPHS = 210      # the whole campaign: `make bench` (and `make fuzz`)
SMOKE_GRAPHS = 52   # its first graphs: `make test` (105 before issue 36's cut)
PIPELINES = ("analyze,schedule,remat", "analyze,remat")
FRACTIONS = (1.0, 0.8, 0.6, 0.3, 0.0)   # of the way from the lower bound to the peak
SMALLEST = re.compile(r"smallest limit that works is [^(]*\((\d+) bytes")

# NumPy's results depend on the memory layout of their operands: np.einsum and np.sum
# accumulate in another order over a strided view (np.broadcast_to, np.transpose) than
# over a contiguous array. NumpyBackend passes such views between ops, and its reload
# (np.array(copy=True)) makes them contiguous, so a graph whose reloaded tensor feeds a
# dot or a reduction differs in the last bits from the original run. These seeds hit it
# (each one fails only with BitwiseMismatch; every other check still runs and passes).
NUMPY_LAYOUT_BUG = (
    "bladec/runtime/backend.py NumpyBackend: op results are strided views "
    "(np.broadcast_to/np.transpose); reload returns a contiguous copy and np.einsum/np.sum "
    "sum in a layout-dependent order, so a reloaded operand changes the last bits of a dot "
    "or reduce (fix: np.require(x, requirements='C') on every op result; not "
    "np.ascontiguousarray, which turns 0-d results into 1-d). If this XPASSes, the backend "
    "or the plan changed: drop the seed from NUMPY_LAYOUT_SEEDS")
NUMPY_LAYOUT_SEEDS: set[int] = set()  # fixed: results are made C-ordered


STATS: dict[int, Counter] = {}


class BitwiseMismatch(AssertionError):
    """An optimized run's outputs differ from the original's."""


def _errstate():
    return np.errstate(all="ignore")  # NaN/inf/overflow are fine; both runs see the same


def outputs_equal(ref: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> list[str]:
    """The names of outputs that differ in dtype, shape or any bit."""
    bad = [k for k in ref if k not in got]
    for k in ref:
        if k in got:
            a, b = np.asarray(ref[k]), np.asarray(got[k])
            if (a.dtype != b.dtype or a.shape != b.shape
                    or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
                    or a.tobytes() != b.tobytes()):
                bad.append(k)
    return bad


# -- an independent walk of the memory model over a trace ------------------------------
def model_peak(trace: list[Step], sizes: dict[str, int], inputs: list[str],
               outputs: set[str]) -> int:
    """DESIGN.md section 4 over the trace, written afresh; also checks the trace runs.

    A value is resident from the step that makes it until its last use or its eviction;
    inputs throughout; outputs from their definition on. Each op (and each op of a
    recompute region) counts after allocating its results, before freeing. The runtime
    cuts the trace at evictions and reloads into segments; a value made before a
    segment and last read in it is an argument of it, resident to its end.
    """
    def region_inputs(step: Step) -> list[str]:
        made: set[str] = set()
        out = []
        for op in step.region:
            out += [n for n in op.operands if n not in made]
            made.update(op.result_names)
        return out

    last: dict[str, int] = {}
    for pos, step in enumerate(trace):
        if step.kind == "op":
            for n in step.op.operands:
                last[n] = pos
        elif step.kind == "regen" and step.method == "recompute":
            for n in region_inputs(step):
                last[n] = pos
    # arguments of a segment stay until its end: find each position's segment span
    bounds: list[tuple[int, int]] = []   # (first, last) position of each segment
    seg_at: dict[int, int] = {}
    for pos, step in enumerate(trace):
        cut = step.kind == "evict" or (step.kind == "regen" and step.method == "reload")
        if cut:
            continue
        if bounds and bounds[-1][1] == pos - 1 and pos - 1 in seg_at:
            bounds[-1] = (bounds[-1][0], pos)
        else:
            bounds.append((pos, pos))
        seg_at[pos] = len(bounds) - 1
    born: dict[str, int] = {}
    for pos, step in enumerate(trace):
        if step.kind == "op":
            for r in step.op.result_names:
                born.setdefault(r, pos)
        elif step.kind == "regen":
            born[step.value] = pos
    for n, pos in list(last.items()):
        first, end = bounds[seg_at[pos]]
        if born.get(n, -1) < first:
            last[n] = end
    pinned = set(inputs) | set(outputs)
    resident = set(inputs)
    peak = sum(sizes[n] for n in inputs)

    def mem(extra=()) -> int:
        return sum(sizes[n] for n in resident | set(extra))

    for pos, step in enumerate(trace):
        if step.kind == "op":
            missing = [n for n in step.op.operands if n in sizes and n not in resident]
            assert not missing, f"op {step.op.result_names} runs without {missing}"
            resident.update(step.op.result_names)
            peak = max(peak, mem())
            for n in list(resident):   # every value whose time is up (arguments at the end)
                if n not in pinned and last.get(n, -1) <= pos:
                    resident.discard(n)
        elif step.kind == "evict":
            assert step.value in resident, f"evicts {step.value}, which is not resident"
            assert step.value not in set(inputs), "evicts a graph input"
            resident.discard(step.value)
        elif step.method == "reload":
            assert step.value not in resident, f"reloads {step.value}, already resident"
            resident.add(step.value)
            peak = max(peak, mem())
        else:
            assert step.region and step.value in step.region[-1].result_names
            temps: list[str] = []
            for i, op in enumerate(step.region):
                missing = [n for n in op.operands if n in sizes and n not in resident
                           and n not in temps]
                assert not missing, f"recompute of {step.value} runs without {missing}"
                temps += op.result_names
                peak = max(peak, mem(temps))
                later = {n for o in step.region[i + 1:] for n in o.operands}
                temps = [t for t in temps if t in later or t == step.value]
            resident.add(step.value)
            for n in list(resident):
                if n not in pinned and last.get(n, -1) <= pos:
                    resident.discard(n)
    return peak


# -- one graph ------------------------------------------------------------------------
def _check_run(ex: Executor, inputs, binding, limit, ref, listing: Listing | None,
               stats: Counter, tag: str, mismatches: list[str], group: str = "other"
               ) -> Report:
    sizes = exact_sizes(ex.info, binding)
    lower = exact_lower_bound(ex.func, sizes)
    try:
        with _errstate():
            out, report = ex.run(inputs, limit)
    except BladecError as exc:
        stats["failed"] += 1
        m = SMALLEST.search(str(exc))
        assert m, f"{tag}: the error names no smallest limit: {exc}"
        smallest = int(m.group(1))
        assert limit is not None and smallest > limit, f"{tag}: {exc}"
        assert smallest >= lower, f"{tag}: smallest limit {smallest} < lower bound {lower}"
        with _errstate():
            out, report = ex.run(inputs, smallest)  # the named limit works ...
        assert report.peak_bytes <= smallest
        with pytest.raises(BladecError):           # ... and is the smallest
            ex.run(inputs, smallest - 1)
        limit = smallest
    for prefix in ("", group + " "):
        stats[prefix + "runs"] += 1
        stats[prefix + "evicted"] += report.evictions > 0
        stats[prefix + "reloaded"] += report.reloads > 0
        stats[prefix + "recomputed"] += report.recomputes > 0
    # (b) within the limit, and the runtime held no more than the model says
    if limit is not None:
        assert report.peak_bytes <= limit, f"{tag}: peak {report.peak_bytes} > limit {limit}"
    assert report.held_peak_bytes <= report.peak_bytes, tag
    assert report.limit == limit and report.binding == binding
    # (c) the device peak, recomputed from the segments' own figures: the most held at
    # a moment (reloads included), or a segment's held + outputs + temporaries
    totals = [s["held_bytes"] + s["output_bytes"] + s["temp_bytes"]
              for s in report.segment_memory]
    assert len(totals) == report.segments, tag
    assert report.peak_bytes == max(totals + [report.held_peak_bytes]), tag
    # (d) the model's peak of the trace run, by simulate and by the independent walk
    plan = ex.prepare(binding, limit).plan
    outs = set(ex.outputs)
    assert simulate(plan.trace, sizes, ex.inputs, outs).peak == report.model_peak_bytes, tag
    assert model_peak(plan.trace, sizes, ex.inputs, outs) == report.model_peak_bytes, tag
    assert sum(s.kind == "evict" for s in plan.trace) == report.evictions
    if report.evictions == 0:
        assert report.model_peak_bytes == report.planned_peak_bytes
    # (a) outputs: the generator's own shapes and dtypes, and the original's bits
    if listing is not None:
        shapes = listing.shapes(binding)
        for k, v in out.items():
            assert v.shape == shapes[k], f"{tag}: {k} has shape {v.shape}, want {shapes[k]}"
            assert v.dtype == numpy_dtype(listing.values[k].dtype), tag
    bad = outputs_equal(ref, out)
    if bad:
        mismatches.append(f"{tag}: outputs {bad} differ")
    return report


def check_graph(seed: int) -> tuple[Counter, list[str]]:
    """Every binding, pipeline and limit of one random graph; returns (stats, mismatches)."""
    listing = generate(seed)
    module = parse_module(listing.text, f"<seed {seed}>")
    verify(module)
    original = Executor(module, NumpyBackend())
    rng = random.Random(seed)
    bindings = listing.bindings(rng, 3 if seed % 3 == 0 else 2)
    stats: Counter = Counter()
    mismatches: list[str] = []
    optimized = {p: Executor(run_pipeline(module, parse_pipeline(p)), NumpyBackend())
                 for p in PIPELINES}
    for binding in bindings:
        inputs = original.random_inputs(binding, seed)
        assert original.bind({n: x.shape for n, x in inputs.items()}) == binding
        with _errstate():
            ref, ref_report = original.run(inputs)
        assert ref_report.evictions == 0
        for pipeline, ex in optimized.items():
            sizes = exact_sizes(ex.info, binding)
            lower = exact_lower_bound(ex.func, sizes)
            peak = ex.plan(binding, None).peak
            assert lower <= peak
            if pipeline == "analyze,remat":  # same order: the same unconstrained peak
                assert peak == ref_report.model_peak_bytes
            else:  # schedule keeps a new order only when it is provably no worse
                assert peak <= ref_report.model_peak_bytes, f"seed {seed} {binding}: " \
                    f"scheduled peak {peak} > original {ref_report.model_peak_bytes}"
            limits = sorted({lower + int(f * (peak - lower)) for f in FRACTIONS}, reverse=True)
            for limit in limits:
                tag = f"seed {seed} {pipeline} {binding} limit {limit}"
                _check_run(ex, inputs, binding, limit, ref, listing, stats, tag, mismatches,
                           group=pipeline)
    return stats, mismatches


def test_generator_makes_valid_varied_listings() -> None:
    """randlisting: valid, deterministic, 5-40 ops, 1-3 outputs, every op family, and
    the analysis derives the same shapes (with product and sum relations) on its own."""
    from bladec.symbolic.shapes import analyze_shapes
    seen: Counter = Counter()
    relations: set[str] = set()
    for seed in range(150):
        listing = generate(seed)
        assert generate(seed).text == listing.text
        assert 5 <= listing.num_ops <= 40 and 1 <= len(listing.outputs) <= 3
        module = parse_module(listing.text, f"<seed {seed}>")
        verify(module)
        info = analyze_shapes(module)
        assert info.free == ["S0", "S1"], (seed, info.free)
        relations.update(info.relations())
        seen.update(listing.op_names)
        ex = Executor(module, NumpyBackend())
        for binding in listing.bindings(random.Random(seed), 2):
            assert ex.shapes_for(binding) == listing.shapes(binding)
            ranges = ex.info.ranges
            assert all(ranges[s][0] <= v <= (ranges[s][1] or v) for s, v in binding.items())
        seen["far reuse"] += bool(listing.far_reuses())
    for op in ("tanh", "add", "compare", "select", "convert", "dot", "dot_general",
               "broadcast_in_dim", "reshape", "transpose", "concatenate", "reduce", "slice"):
        assert seen[op] >= 10, (op, seen[op])
    assert seen["far reuse"] >= 0.75 * 150  # values used again far away: remat candidates
    assert any("S0*S1" in r for r in relations)          # a merge of two symbolic dims
    assert any(re.search(r"= \d+\*S[01]$", r) for r in relations)   # a static factor
    assert any(" + " in r for r in relations)            # a concatenation


def _seed_param(seed: int):
    marks = [] if seed < SMOKE_GRAPHS else [pytest.mark.slow, pytest.mark.fuzz]
    if seed in NUMPY_LAYOUT_SEEDS:
        marks.append(pytest.mark.xfail(strict=True, raises=BitwiseMismatch,
                                       reason=NUMPY_LAYOUT_BUG))
    return pytest.param(seed, marks=marks)


@pytest.mark.parametrize("seed", [_seed_param(s) for s in range(N_GRAPHS)])
def test_random_graph_numpy(seed: int) -> None:
    stats, mismatches = check_graph(seed)
    STATS[seed] = stats
    if mismatches:
        raise BitwiseMismatch("\n".join(mismatches))


@pytest.mark.parametrize("graphs", [
    pytest.param(SMOKE_GRAPHS, id="first"),
    pytest.param(N_GRAPHS, id="all", marks=[pytest.mark.slow, pytest.mark.fuzz])])
def test_differential_exercises_remat(graphs: int) -> None:
    """A good share of the runs evict, reload and recompute: the suite is not vacuous
    (over the graphs this run checks: the first SMOKE_GRAPHS in `make test`, all of them
    in `make bench`), by the same thresholds."""
    for seed in range(graphs):
        if seed not in STATS:  # run alone (-k): gather what the other tests would have
            STATS[seed] = check_graph(seed)[0]
    total = sum((STATS[seed] for seed in range(graphs)), Counter())
    runs = total["runs"]
    print(f"\ndifferential: {graphs} graphs, {runs} runs; evicted {total['evicted']}, "
          f"reloaded {total['reloaded']}, recomputed {total['recomputed']}, "
          f"over the limit (smallest limit named and checked) {total['failed']}")
    for p in PIPELINES:
        print(f"  {p}: {total[p + ' runs']} runs; evicted {total[p + ' evicted']}, reloaded "
              f"{total[p + ' reloaded']}, recomputed {total[p + ' recomputed']}")
    # at least 18 runs a graph (the first 52 graphs: 976 runs; 1,004 before the
    # schedule's local search, whose orders reach the lower bound more often, where a
    # binding's limits between the two are one); the whole campaign at least 2,000
    assert runs >= (2000 if graphs == N_GRAPHS else 18 * graphs)
    assert total["evicted"] >= 0.3 * runs
    assert total["reloaded"] >= 0.15 * runs
    assert total["recomputed"] >= 0.15 * runs
    assert total["failed"] >= 0.05 * runs  # the smallest-limit path is exercised too
    for p in PIPELINES:  # both pipelines, scheduled or not, really evict
        assert total[p + " evicted"] >= 0.25 * total[p + " runs"] > 0
        assert total[p + " recomputed"] >= 0.1 * total[p + " runs"]


def test_layout_bug_reproducer_numpy() -> None:
    """A minimal reproducer of the NumPy layout bug, independent of the random graphs.

    %b is a broadcast view (stride 0) that must be away while %big is live; it can not
    be recomputed (rng_uniform), so it is reloaded as a contiguous copy, and the dot
    over it sums in another order than over the view.
    """
    text = """
func.func @main(%x: tensor<?x?, [@S0, @S1]>) {
  %u = rng_uniform() {seed = 1} -> tensor<?, [@S1]>
  %b = broadcast_in_dim(%u) {dims = [1]} -> tensor<?x?, [@S0, @S1]>
  %big = broadcast_in_dim(%x) {dims = [1, 2]} -> tensor<64x?x?, [@C64, @S0, @S1]>
  %r = reduce(%big) {dims = [0], kind = "max"} -> tensor<?x?, [@S0, @S1]>
  %d = dot_general(%b, %b) {lhs_contract = [0], rhs_contract = [0]} -> tensor<?x?, [@S1, @S1]>
  return %r, %d
}
"""
    module = parse_module(text)
    original = Executor(module, NumpyBackend())
    ex = Executor(run_pipeline(module, parse_pipeline("analyze,remat")), NumpyBackend())
    binding = {"S0": 9, "S1": 5}
    inputs = original.random_inputs(binding, 0)
    ref, ref_report = original.run(inputs)
    limit = ref_report.peak_bytes - 1
    out, report = ex.run(inputs, limit)
    assert report.reloads == 1 and report.recomputes == 0 and report.peak_bytes <= limit
    assert out["%r"].tobytes() == ref["%r"].tobytes()
    if out["%d"].tobytes() != ref["%d"].tobytes():
        raise BitwiseMismatch(f"{out['%d']} != {ref['%d']}")


# -- JAX --------------------------------------------------------------------------------
# `make test` the first 5 seeds (10 before issue 36) and the regression seed, `make bench`
# (and `make fuzz`) the other 35
JAX_SEEDS = list(range(10_000, 10_005)) + [
    pytest.param(seed, marks=[pytest.mark.slow, pytest.mark.fuzz])
    for seed in range(10_005, 10_040)] + [
    # reduce(reshape(x)) + itself: XLA's simplifier rewrites the whole-graph run only
    pytest.param(*(10_041,))]


@pytest.mark.parametrize("seed", JAX_SEEDS)
def test_random_graph_jax(seed: int) -> None:
    rng = random.Random(seed)
    listing = generate(seed, num_ops=rng.randint(5, 14))
    module = parse_module(listing.text, f"<seed {seed}>")
    original = Executor(module, JaxBackend(bitwise=True))
    binding = listing.bindings(rng, 1)[0]
    inputs = original.random_inputs(binding, seed)
    with _errstate():
        ref, ref_report = original.run(inputs)
    assert ref_report.segments == 1
    stats: Counter = Counter()
    mismatches: list[str] = []
    ex = Executor(run_pipeline(module, parse_pipeline("analyze,remat")),
                  JaxBackend(bitwise=True))
    sizes = exact_sizes(ex.info, binding)
    lower = exact_lower_bound(ex.func, sizes)
    peak = ex.plan(binding, None).peak
    for f in (1.0, 0.5, 0.0):
        limit = lower + int(f * (peak - lower))
        tag = f"jax seed {seed} {binding} limit {limit}"
        _check_run(ex, inputs, binding, limit, ref, listing, stats, tag, mismatches)
    if mismatches:
        raise BitwiseMismatch("\n".join(mismatches))


# -- Listing 1 --------------------------------------------------------------------------
def _listing1() -> Module:
    return parse_module(LISTING1.read_text(), str(LISTING1))


@pytest.mark.parametrize("pipeline, s1", [
    ("analyze,schedule,remat", 1), ("analyze,schedule,remat", 7),
    ("analyze,schedule,remat", 64), ("analyze,remat", 1),
    pytest.param(*("analyze,remat", 7)), pytest.param(*("analyze,remat", 64)),
])
def test_listing1_numpy(s1: int, pipeline: str) -> None:
    module = _listing1()
    original = Executor(module, NumpyBackend())
    ex = Executor(run_pipeline(module, parse_pipeline(pipeline)), NumpyBackend())
    binding = {"S1": s1}
    inputs = original.random_inputs(binding, s1)
    assert original.bind({n: x.shape for n, x in inputs.items()}) == binding
    ref, _ = original.run(inputs)
    sizes = exact_sizes(ex.info, binding)
    lower = exact_lower_bound(ex.func, sizes)
    peak = ex.plan(binding, None).peak
    stats: Counter = Counter()
    mismatches: list[str] = []
    for f in FRACTIONS:
        limit = lower + int(f * (peak - lower))
        _check_run(ex, inputs, binding, limit, ref, None, stats, f"listing1 S1={s1} {limit}",
                   mismatches)
    if s1 == 64 and pipeline == "analyze,remat":
        assert stats["evicted"] and stats["recomputed"]
    if mismatches:
        raise BitwiseMismatch("\n".join(mismatches))


@pytest.mark.parametrize("backend, pipeline", [
    (NumpyBackend, "analyze,schedule,remat"),
    pytest.param(*(NumpyBackend, "analyze,remat")),
    (lambda: JaxBackend(bitwise=True), "analyze,schedule,remat"),
    pytest.param(*(lambda: JaxBackend(bitwise=True), "analyze,remat")),
])
def test_listing1_acceptance_half_the_peak(backend, pipeline) -> None:
    """The planner's acceptance point: half the model's unconstrained peak of the
    original order, held by the device accounting. On NumPy, where every op allocates
    its result, the original order must evict to get there; XLA never materializes
    Listing 1's broadcasts, so on JAX the whole graph fits as it is."""
    module = _listing1()
    original = Executor(module, backend())
    binding = {"S1": 64}
    inputs = original.random_inputs(binding, 0)
    ref, ref_report = original.run(inputs)
    limit = ref_report.model_peak_bytes // 2
    ex = Executor(run_pipeline(module, parse_pipeline(pipeline)), backend())
    out, report = ex.run(inputs, limit)
    assert report.peak_bytes <= limit
    assert report.held_peak_bytes <= report.peak_bytes
    if pipeline == "analyze,remat" and backend is NumpyBackend:
        assert report.evictions > 0 and report.recomputes > 0
    bad = outputs_equal(ref, out)
    if bad:
        raise BitwiseMismatch(f"{pipeline}: {bad}")
