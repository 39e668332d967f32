"""The ``propagate`` pass: every value's sharding from the arguments' (DESIGN section 12).

Listings are written by hand with only their arguments sharded; the pass's output must
verify (the sharding rules of bladec/ops/collective.py), place the collectives where the
math needs them and nowhere else, and keep what it can split split. Whether the result
computes what the one-device listing computes is run on 8 devices in
tests/runtime/test_sharded_run.py (the small Llama's training step).
"""
from __future__ import annotations

import pytest

from bladec.cli import main
from bladec.errors import BladecError
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.passes.propagate import PropagatePass
from bladec.printer import format_module
from bladec.sharding import spec
from bladec.source import load_module
from bladec.verify import verify

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

ARGS_ONLY = ROOT / "samples" / "sharding" / "llama-train-small.mlir"
COMPLETED = ROOT / "samples" / "llama-train-small-sharded.mlir"


def propagate(text: str) -> Module:
    module = parse_module(text)
    verify(module, shardings=False)
    out = PropagatePass().apply(module)
    verify(out)
    return out


def ops_of(module: Module) -> dict[str, str]:
    """Result name to the printed op, for assertions on single lines."""
    lines = format_module(module).splitlines()
    return {line.split("=")[0].strip(): line.strip() for line in lines if " = " in line}


def count(module: Module, name: str) -> int:
    return sum(op.name == name for op in module.main.ops)


MLP = """mesh {d = 2, m = 2}
func.func @main(%x: tensor<8x16, {d, _}>, %w1: tensor<16x32, {_, m}>, %w2: tensor<32x16, {m, _}>) {
  %h = dot(%x, %w1) -> tensor<8x32>
  %a = logistic(%h) -> tensor<8x32>
  %o = dot(%a, %w2) -> tensor<8x16>
  %r = add(%x, %o) -> tensor<8x16>
  %s = reduce(%r) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  return %r, %s
}
"""


def test_megatron_block_gets_one_all_reduce():
    """Column- then row-parallel: the hidden units stay split over m, the second
    contraction leaves partial sums over m, summed once before the residual add; the
    final sum over the batch is partial over d and summed for the output."""
    out = propagate(MLP)
    lines = ops_of(out)
    assert lines["%h"].endswith("tensor<8x32, {d, m}>")
    assert lines["%a"].endswith("tensor<8x32, {d, m}>")
    assert lines["%o"].endswith("tensor<8x16, {d, _, +m}>")
    assert lines["%o.r"] == "%o.r = all_reduce(%o) -> tensor<8x16, {d, _}>"
    assert lines["%r"] == "%r = add(%x, %o.r) -> tensor<8x16, {d, _}>"
    # an output is never left partial, and keeps its name
    assert lines["%s"] == "%s = all_reduce(%s.p) -> tensor<f32>"
    assert count(out, "all_reduce") == 2 and count(out, "reshard") == 0
    assert out.main.returns == ["%r", "%s"]


def test_round_trips_and_is_a_fixed_point():
    """Its output parses back to itself, and propagating it again changes nothing (the
    shardings it wrote are constraints it meets)."""
    once = propagate(MLP)
    text = format_module(once)
    assert format_module(parse_module(text)) == text
    assert format_module(PropagatePass().apply(parse_module(text))) == text


def test_a_replicated_broadcast_is_made_split_not_sliced():
    """A broadcast a split operand meets is emitted again at that split (each device
    makes its own block); the unsplit one, now unused, is dropped."""
    out = propagate("""mesh {d = 4}
func.func @main(%x: tensor<8x16, {d, _}>, %c: tensor<16>) {
  %b = broadcast_in_dim(%c) {dims = [1]} -> tensor<8x16>
  %y = mul(%x, %b) -> tensor<8x16>
  return %y
}
""")
    lines = ops_of(out)
    assert lines["%b.r"] == "%b.r = broadcast_in_dim(%c) {dims = [1]} -> tensor<8x16, {d, _}>"
    assert "%b" not in lines and count(out, "reshard") == 0


def test_elementwise_takes_the_most_split_operand():
    out = propagate("""mesh {x = 2, y = 2}
func.func @main(%a: tensor<8x8, {x, _}>, %b: tensor<8x8, {x, y}>) {
  %c = add(%a, %b) -> tensor<8x8>
  return %c
}
""")
    lines = ops_of(out)
    assert lines["%a.r"] == "%a.r = reshard(%a) -> tensor<8x8, {x, y}>"
    assert lines["%c"] == "%c = add(%a.r, %b) -> tensor<8x8, {x, y}>"


def test_a_max_over_a_split_dim_gathers_it_first():
    out = propagate("""mesh {x = 4}
func.func @main(%a: tensor<8x8, {_, x}>) {
  %m = reduce(%a) {dims = [1], kind = "max"} -> tensor<8>
  return %m
}
""")
    lines = ops_of(out)
    assert lines["%a.r"] == "%a.r = reshard(%a) -> tensor<8x8>"
    assert lines["%m"] == "%m = reduce(%a.r) {dims = [1], kind = \"max\"} -> tensor<8>"


def test_partial_sums_stay_partial_through_linear_ops_only():
    """A scaled partial sum stays one (its all_reduce moves after the scaling, as data
    parallelism sums gradients); a non-linear op needs the whole sum."""
    out = propagate("""mesh {d = 4}
func.func @main(%x: tensor<8x4, {d, _}>, %w: tensor<4x2>, %lr: tensor<f32>) {
  %g = dot_general(%x, %x) {lhs_contract = [0], rhs_contract = [0]} -> tensor<4x4>
  %l = broadcast_in_dim(%lr) {dims = []} -> tensor<4x4>
  %s = mul(%l, %g) -> tensor<4x4>
  %e = exp(%s) -> tensor<4x4>
  return %e
}
""")
    lines = ops_of(out)
    assert lines["%g"].endswith("tensor<4x4, {_, _, +d}>")
    assert lines["%s"].endswith("tensor<4x4, {_, _, +d}>")
    assert lines["%s.r"] == "%s.r = all_reduce(%s) -> tensor<4x4>"
    assert lines["%e"] == "%e = exp(%s.r) -> tensor<4x4>"


def test_scatter_add_of_split_updates_starts_from_a_zero_partial_sum():
    out = propagate("""mesh {d = 2}
func.func @main(%ids: tensor<4xi32, {d}>, %u: tensor<4x8, {d, _}>) {
  %z = constant() {value = 0.0} -> tensor<16x8>
  %s = scatter_add(%z, %ids, %u) -> tensor<16x8>
  return %s
}
""")
    lines = ops_of(out)
    assert lines["%z.p"] == "%z.p = constant() {value = 0.0} -> tensor<16x8, {_, _, +d}>"
    assert lines["%s"] == "%s = all_reduce(%s.p) -> tensor<16x8>"


def test_scatter_add_into_a_base_that_is_not_zero_gathers_the_updates():
    """A base of ones can not be a partial sum, so the updates are made whole (every
    device adds all of them): correct, and visible as reshards."""
    out = propagate("""mesh {d = 2}
func.func @main(%ids: tensor<4xi32, {d}>, %u: tensor<4x8, {d, _}>) {
  %z = constant() {value = 1.0} -> tensor<16x8>
  %s = scatter_add(%z, %ids, %u) -> tensor<16x8>
  return %s
}
""")
    lines = ops_of(out)
    assert lines["%s"] == "%s = scatter_add(%z, %ids.r, %u.r) -> tensor<16x8>"
    assert count(out, "reshard") == 2 and count(out, "all_reduce") == 0


def test_an_op_without_a_sharding_rule_gets_whole_operands():
    out = propagate("""mesh {d = 2}
func.func @main(%a: tensor<8x4, {d, _}>) {
  %c = cumulative(%a) {dim = 0} -> tensor<8x4>
  return %c
}
""")
    lines = ops_of(out)
    assert lines["%c"] == "%c = cumulative(%a.r) {dim = 0} -> tensor<8x4>"
    assert spec(out.main.value_types()["%c"]) == ((), ())


def test_a_declared_sharding_is_a_constraint():
    out = propagate("""mesh {d = 2}
func.func @main(%a: tensor<8x4, {d, _}>) {
  %b = exp(%a) -> tensor<8x4, {_, d}>
  return %b
}
""")
    lines = ops_of(out)
    assert lines["%b.s"] == "%b.s = exp(%a) -> tensor<8x4, {d, _}>"
    assert lines["%b"] == "%b = reshard(%b.s) -> tensor<8x4, {_, d}>"


def test_a_static_dim_that_does_not_divide_stays_whole():
    """A reshape keeps dim 0's split where the new dim 0 divides (4 rows of 4 blocks of
    8 elements); 6 rows can not be split 4 ways, so that operand is made whole."""
    out = propagate("""mesh {d = 4}
func.func @main(%a: tensor<8x3, {d, _}>, %b: tensor<8x4, {d, _}>) {
  %r = reshape(%a) -> tensor<6x4>
  %s = reshape(%b) -> tensor<4x8>
  return %r, %s
}
""")
    lines = ops_of(out)
    assert lines["%r"] == "%r = reshape(%a.r) -> tensor<6x4>"
    assert lines["%s"] == "%s = reshape(%b) -> tensor<4x8, {d, _}>"


def test_the_sharded_llama_sample_is_the_pass_output():
    """samples/llama-train-small-sharded.mlir is what the pass makes of the arguments-only
    listing (regenerate it with the command its header gives)."""
    done = run_pipeline(load_module(str(ARGS_ONLY)), parse_pipeline("propagate"))
    assert format_module(done) == format_module(load_module(str(COMPLETED)))
    per_op = {op.name for op in done.main.ops}
    assert "reshard" not in per_op
    # Megatron-LM: per layer one all_reduce over model after attention, one after the MLP
    forward = [op for op in done.main.ops if op.name == "all_reduce"
               and "model" in done.main.value_types()[op.operands[0]].partial]
    assert len(forward) >= 4


def invoke(args: list[str]):
    return make_runner().invoke(main, args)


def test_cli_needs_propagate_for_an_arguments_only_listing():
    bad = invoke(["optimize", str(ARGS_ONLY)])
    assert bad.exit_code == 1
    assert "start the pipeline with 'propagate'" in bad.stderr and "Traceback" not in bad.stderr
    good = invoke(["optimize", "-p", "propagate,redistribute,analyze,schedule,remat",
                   str(ARGS_ONLY)])
    assert good.exit_code == 0, good.output
    verify(parse_module(good.output))
    assert "remat.plan" in good.output


def test_a_bad_collective_in_the_input_is_a_user_error():
    with pytest.raises(BladecError, match="nothing to gather"):
        PropagatePass().apply(parse_module("""mesh {d = 2}
func.func @main(%a: tensor<8x4, {d, _}>) {
  %b = all_gather(%a) {dim = 1} -> tensor<8x4, {d, _}>
  return %b
}
"""))


def test_in_the_backward_a_collective_of_an_otherwise_split_operand_is_a_reshard():
    """The grad pass's backward (``PropagatePass(backward=True)``): a cotangent may reach
    a collective's adjoint split otherwise than the forward value was; the collective is
    the identity on the global array, so it becomes a reshard to its declared split. In a
    user's listing the same collective is an error."""
    text = """mesh {d = 2}
func.func @main(%a: tensor<8x4, {_, d}>) {
  %b = shard_slice(%a) {dim = 0, axis = "d"} -> tensor<8x4, {d, _}>
  return %b
}
"""
    with pytest.raises(BladecError, match="already splits the operand"):
        PropagatePass().apply(parse_module(text))
    out = PropagatePass(backward=True).apply(parse_module(text))
    (op,) = out.main.ops
    assert op.name == "reshard" and op.results[0].name == "%b"
    assert op.results[0].type.sharding == (("d",), ())


LOOPS = """mesh {d = 4}
func.func @main(%w: tensor<4x4>, %h0: tensor<8x4>, %xs: tensor<5x8x4, {_, d, _}>, %m0: tensor<8x8, {d, _}>) {
  %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> tensor<8x4>, tensor<5x8x4> body {
    %bw = loop.arg() {index = 0} -> tensor<4x4>
    %c = loop.arg() {index = 1} -> tensor<8x4>
    %x = loop.arg() {index = 2} -> tensor<8x4>
    %d = dot(%c, %bw) -> tensor<8x4>
    %s = add(%d, %x) -> tensor<8x4>
    loop.yield(%s, %s)
  }
  %m, %ms = scan(%m0, %xs) {num_consts = 0, num_carry = 1} -> tensor<8x8>, tensor<5x8x8> body {
    %mc = loop.arg() {index = 0} -> tensor<8x8>
    %mt = transpose(%mc) {perm = [1, 0]} -> tensor<8x8>
    loop.yield(%mt, %mt)
  }
  %tiny = constant() {value = 0.001} -> tensor<f32>
  %small = while(%tiny, %h) {num_consts = 1} -> tensor<8x4> cond {
    %eps = loop.arg() {index = 0} -> tensor<f32>
    %cur = loop.arg() {index = 1} -> tensor<8x4>
    %top = reduce(%cur) {dims = [0, 1], kind = "max"} -> tensor<f32>
    %go = compare(%top, %eps) {direction = "GT"} -> tensor<i1>
    loop.yield(%go)
  } body {
    %v = loop.arg() {index = 1} -> tensor<8x4>
    %p5 = constant() {value = 0.5} -> tensor<8x4>
    %v2 = mul(%v, %p5) -> tensor<8x4>
    loop.yield(%v2)
  }
  return %hs, %m, %ms, %small
}
"""


def test_loops_keep_fix_or_give_up_their_carries_splits_with_the_reason():
    """A whole carry that the body makes split (added to a split input) is resharded
    once before the loop to that split (a slice, no communication); a carry the body
    transposes every step is carried whole (gathered once before the loop); the while
    keeps its split carry, its condition gathering for a max (no all-reduce of a max)."""
    pas = PropagatePass()
    out = pas.apply(parse_module(LOOPS, "loops.mlir"))
    verify(out)
    ops = ops_of(out)
    assert ops["%h0.r"].startswith("%h0.r = reshard(%h0) -> tensor<8x4, {d, _}>")
    assert ops["%m0.r"].startswith("%m0.r = reshard(%m0) -> tensor<8x8>")
    assert "-> tensor<8x4, {d, _}>, tensor<5x8x4, {_, d, _}> body" in ops["%h, %hs"]
    assert "%mag" not in ops and "while(%tiny, %h)" in ops["%small"]
    cond = next(op for op in out.main.ops if op.name == "while").regions["cond"]
    assert [op.name for op in cond].count("reshard") == 1
    assert pas.notes == [
        "loops.mlir:3:3: carry %h0 of 'scan' resharded before the loop to the split its "
        "body keeps",
        "loops.mlir:11:3: carry %m0 of 'scan' carried whole: the body does not keep its "
        "split from step to step"]


def test_a_loop_result_declared_split_otherwise_is_resharded_after_the_loop():
    text = LOOPS.replace("-> tensor<8x4>, tensor<5x8x4> body", "-> tensor<8x4, {_, d}>, "
                         "tensor<5x8x4> body")
    out = propagate(text)
    ops = ops_of(out)
    assert ops["%h.s, %hs"].startswith("%h.s, %hs = scan(%w, %h0.r, %xs)")
    assert ops["%h"] == "%h = reshard(%h.s) -> tensor<8x4, {_, d}>"
