"""The scheduler's work grows as n log n where thousands of ops are ready at once, and its
tournament picks what a scan of the ready set in name order picks wherever the order of
candidates is total (always with exact sizes)."""
from __future__ import annotations

import math
import random
import time

import pytest

from bladec.analysis.memory import exact_sizes
from bladec.cli import main
from bladec.ir import Func, Module
from bladec.parse import parse_module
from bladec.printer import format_module
from bladec.passes.schedule import ListScheduler, _int_cmp, symbolic_scheduler
from bladec.symbolic.compare import Order
from bladec.symbolic.shapes import analyze_shapes

from tests.support.clirunner import make_runner
from tests.support.paths import SAMPLES
from tests.support.randlisting import generate


def independent_outputs(n: int, mixed: bool = False) -> str:
    """``n`` ops that use only the inputs and are all outputs: all ready at once."""
    lines = ["func.func @main(%x: tensor<?x16, [@S0, @C16]>, %y: tensor<?x?, [@S0, @S1]>) {"]
    for i in range(n):
        k = i % 4 if mixed else 0
        lines.append([f"  %v{i} = neg(%x) -> tensor<?x16, [@S0, @C16]>",
                      f"  %v{i} = exp(%y) -> tensor<?x?, [@S0, @S1]>",
                      f"  %v{i} = broadcast(%x) -> tensor<{i}x?x16, [@C{i}, @S0, @C16]>",
                      f"  %v{i} = reduce(%y) {{dims = [1]}} -> tensor<?, [@S0]>"][k])
    return "\n".join(lines + ["}"]) + "\n"


@pytest.mark.parametrize("mixed", [False, True])
def test_work_is_n_log_n_when_everything_is_ready(monkeypatch, mixed):
    n = 2000
    module = parse_module(independent_outputs(n, mixed), "<ind>")
    info = analyze_shapes(module)
    calls = 0
    beats = ListScheduler.beats

    def counting(self, i, held):
        nonlocal calls
        calls += 1
        return beats(self, i, held)
    monkeypatch.setattr(ListScheduler, "beats", counting)
    order = symbolic_scheduler(module.main, info).run()
    assert len(order) == n
    # a scan of the ready set costs n*(n-1)/2 = 2M matches here; the tree about n log n
    assert calls <= 2 * n * math.log2(n), calls


def _scan_order(sched: ListScheduler) -> list[str]:
    """The reference: at each step scan the whole ready set in name order, keeping the
    candidate that beats the one held (the walk before the tournament tree)."""
    ready = sorted((i for i, k in enumerate(sched.pending) if k == 0), key=sched._name_key)
    placed = []
    while ready:
        best = ready[0]
        for i in ready[1:]:
            if sched.beats(i, best):
                best = i
        ready.remove(best)
        producers = {sched.producer[n] for n in sched.ops[best].operands if n in sched.producer}
        sched.place(best)
        placed.append(best)
        ready = sorted(ready + [p for p in producers if sched.pending[p] == 0],
                       key=sched._name_key)
    return [sched.ops[i].results[0].name for i in reversed(placed)]


@pytest.mark.parametrize("seed", range(12))
def test_tournament_equals_the_scan_with_exact_sizes(seed):
    listing = generate(seed)
    module = parse_module(listing.text, f"<rand{seed}>")
    info = analyze_shapes(module)
    rng = random.Random(seed)
    binding = {s: rng.randint(1, 10) for s in info.free}
    sizes = exact_sizes(info, binding)
    tree = ListScheduler(module.main, sizes.__getitem__, _int_cmp, 0).run()
    scan = _scan_order(ListScheduler(module.main, sizes.__getitem__, _int_cmp, 0))
    assert [op.results[0].name for op in tree] == scan


def test_tournament_equals_the_scan_when_compare_orders_everything():
    """Symbolic impacts that are all multiples of S0 are totally ordered."""
    module = parse_module(independent_outputs(300, mixed=True).replace(
        "exp(%y) -> tensor<?x?, [@S0, @S1]>", "neg(%x) -> tensor<?x16, [@S0, @C16]>"), "<m>")
    info = analyze_shapes(module)
    tree = symbolic_scheduler(module.main, info).run()
    scan = _scan_order(symbolic_scheduler(module.main, info))
    assert [op.results[0].name for op in tree] == scan
    assert all(info.compare(a, b) is not Order.UNKNOWN
               for a in (info.nbytes("%v0"), info.nbytes("%v2"), info.nbytes("%v3"))
               for b in (info.nbytes("%v6"), info.nbytes("%v7")))


def test_two_thousand_independent_outputs_through_the_cli(tmp_path):
    """29.9 s before the tournament tree (a scan of 2,000 ready ops per step, in each of
    the pass's five walks); about 1 s after. CPU time of this process, so that other
    jobs (and the other test worker) on a shared machine do not count; the bound is
    still generous."""
    path = tmp_path / "ind.mlir"
    path.write_text(independent_outputs(2000))
    t0 = time.process_time()
    result = make_runner().invoke(main, ["optimize", str(path)])
    seconds = time.process_time() - t0
    assert result.exit_code == 0, result.output
    assert result.stdout.count(" = neg(") == 2000
    assert seconds < 15, seconds


# -- the analysis a pass reuses ------------------------------------------------------------

def _facts(info) -> tuple:
    return (info.free, info.subst, info.facts, info.ranges, info.derived_ranges,
            list(info.dims.items()), list(info.names.items()), info.dtypes)


@pytest.mark.parametrize("sample", ["llama-train-small.mlir", "diamond.mlir", "ops.mlir"])
def test_reused_analysis_equals_a_fresh_one_in_the_new_order(sample):
    from bladec.passes import parse_pipeline, run_pipeline
    from bladec.symbolic import shapes
    text = (SAMPLES / sample).read_text()
    analyzed = run_pipeline(parse_module(text, sample), parse_pipeline("analyze"))
    first = analyze_shapes(analyzed)
    scheduled = run_pipeline(analyzed, parse_pipeline("schedule"))
    assert scheduled.main.ops != analyzed.main.ops or sample == "ops.mlir"
    reused = analyze_shapes(scheduled)
    assert reused.subst is first.subst  # reused (a view in the new order), not redone
    fresh, order_free = shapes._analyze(scheduled, scheduled.main)
    assert order_free
    assert _facts(reused) == _facts(fresh)


def test_an_analysis_that_depends_on_order_is_reused_only_in_that_order():
    """Unbound dims get fresh symbols in listing order: the analysis is kept for the same
    ops in the same order (the runtime analyzes the listing as written again), and not
    for another order."""
    from bladec.symbolic import shapes
    module = parse_module("func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) {\n"
                          "  %1 = neg(%a) -> tensor<?xf32>\n"
                          "  %2 = neg(%b) -> tensor<?xf32>\n}\n", "<u>")
    first, order_free = shapes._analyze(module, module.main)
    assert not order_free
    assert analyze_shapes(module) is analyze_shapes(module)
    again = parse_module(format_module(module), "<u>")   # the same contents, new objects
    assert analyze_shapes(again).names == first.names
    swapped = Module([Func("main", module.main.args, module.main.ops[::-1])])
    other = analyze_shapes(swapped)
    assert other is not analyze_shapes(module)
    assert other.names["%1"] != first.names["%1"]   # fresh symbols in the new order


def test_an_analysis_is_not_reused_after_the_listing_changes_in_place():
    """IR objects are mutable (the JAX importer binds result dims in place and analyzes
    again): the reuse key is the contents, so an edit in place is a new analysis."""
    from bladec.ir import Value
    module = parse_module("func.func @main(%a: tensor<?xf32, [@S0]>) {\n"
                          "  %1 = neg(%a) -> tensor<?xf32>\n}\n", "<u>")
    before = analyze_shapes(module)
    op = module.main.ops[0]
    op.results[0] = Value("%1", op.results[0].type.with_binds(("S0",)))
    after = analyze_shapes(module)
    assert after is not before
    assert after.names["%1"] == ["S0"] and before.names["%1"] != ["S0"]


@pytest.mark.slow
def test_ten_thousand_op_transformer_through_the_cli_in_5_seconds(tmp_path):
    """The issue's goal (8.1 s before). CPU time of this process, so that other jobs on a
    shared machine do not count; one retry."""
    from benchmarks import bench_schedule
    path = tmp_path / "t10k.mlir"
    path.write_text(bench_schedule.transformer_listing(10000))
    runner = make_runner()
    best = math.inf
    for _ in range(2):
        t0 = time.process_time()
        result = runner.invoke(main, ["optimize", str(path), "-o", str(tmp_path / "o.mlir")])
        best = min(best, time.process_time() - t0)
        assert result.exit_code == 0, result.output
        if best < 5:
            break
    assert best < 5, best


def test_an_attribute_that_is_no_plain_value_is_analyzed_without_reuse():
    """The reuse key is made of the attributes' values; one that can not be hashed (an
    array a pass put there) means no reuse, not an error."""
    import numpy as np
    module = parse_module("func.func @main(%a: tensor<?xf32, [@S0]>) {\n"
                          "  %1 = neg(%a) -> tensor<?xf32, [@S0]>\n}\n", "<u>")
    module.main.ops[0].attrs["note"] = np.arange(3)
    first = analyze_shapes(module)
    assert first.dims["%1"] == analyze_shapes(module).dims["%1"]


def test_the_reuse_key_reads_every_field_of_a_value():
    """fingerprint.py keys values by their fields (name, type, donation) and types and
    locations by all of theirs: a field added to Value must join value_key."""
    from dataclasses import fields as fields_of
    from bladec.ir import TensorType, Value
    from bladec.symbolic.fingerprint import value_key
    assert [f.name for f in fields_of(Value)] == ["name", "type", "donated"]
    a = Value("%a", TensorType((None, 4), "f32", ("S0", "C4")))
    assert value_key(a) != value_key(Value("%a", a.type, donated=True))
    assert value_key(a) != value_key(Value("%a", a.type.with_binds(("S1", "C4"))))
    assert value_key(a) == value_key(Value("%a", TensorType((None, 4), "f32", ("S0", "C4"))))
