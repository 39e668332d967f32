"""The loop op ``scan`` (bladec/ops/loop.py) through every layer: the listing's syntax,
the verifier, the analysis and the memory model, the passes, both backends, the importer
and the grad pass; its errors are located at the op at fault."""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from bladec.analysis.memory import exact_peak, exact_sizes, symbolic_timeline
from bladec.errors import BladecError
from bladec.frontend import trace
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.planning.limit import LimitError
from bladec.symbolic.expr import sym
from bladec.symbolic.shapes import analyze_shapes
from bladec.verify import verify

from tests.support.errorcase import check_file, located
from tests.support.paths import SAMPLES

F32 = jnp.float32

# a cumulative weighted sum over @S1 steps of [S0, 4] slices, then the same reversed;
# add and mul only, so that both backends compute it bit for bit alike
CUMSUM = """
func.func @main(%k: tensor<f32>, %c0: tensor<?x4, [@S0, @C4]>, %xs: tensor<?x?x4, [@S1, @S0, @C4]>) {
  %c, %ys = scan(%k, %c0, %xs) {num_consts = 1, num_carry = 1REVERSE} -> tensor<?x4>, tensor<?x?x4> body {
    %bk = loop.arg() {index = 0} -> tensor<f32>
    %acc = loop.arg() {index = 1} -> tensor<?x4>
    %x = loop.arg() {index = 2} -> tensor<?x4>
    %kb = broadcast_in_dim(%bk) {dims = []} -> tensor<?x4>
    %m = mul(%acc, %kb) -> tensor<?x4>
    %s = add(%m, %x) -> tensor<?x4>
    loop.yield(%s, %s)
  }
  return %c, %ys
}
"""


def cumsum(reverse: bool = False) -> str:
    return CUMSUM.replace("REVERSE", ", reverse = true" if reverse else "")


def _inputs(b: int, t: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"%k": np.float32(0.75), "%c0": rng.standard_normal((b, 4)).astype(np.float32),
            "%xs": rng.standard_normal((t, b, 4)).astype(np.float32)}


def _reference(inputs: dict[str, np.ndarray], reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """The scan written out step by step in NumPy, in the listing's operation order."""
    c, ys = inputs["%c0"], [None] * len(inputs["%xs"])
    order = range(len(ys))
    for i in (reversed(order) if reverse else order):
        c = c * inputs["%k"] + inputs["%xs"][i]
        ys[i] = c
    return c, np.stack(ys)


# -- syntax, verifier, analysis -----------------------------------------------------------

def test_round_trip_and_verify():
    module = parse_module(cumsum(True))
    verify(module)
    text = format_module(module)
    assert "body {" in text and "loop.yield(%s, %s)" in text
    assert parse_module(text) == module


def test_stacked_outputs_have_the_trip_count_as_leading_dim():
    info = analyze_shapes(parse_module(cumsum()))
    assert info.dims["%ys"] == [sym("S1"), sym("S0"), 4]
    assert info.dims["%c"] == [sym("S0"), 4]
    assert info.dims["%x"] == [sym("S0"), 4]       # a body value: a slice of %xs


def test_memory_model_counts_the_body_inside_the_loops_step():
    module = parse_module(cumsum())
    info = analyze_shapes(module)
    step = symbolic_timeline(module.main, info).steps[0]
    # inputs (4 + 16*S0 + 16*S0*S1) + results (16*S0 + 16*S0*S1) + the body at its
    # fullest, three [S0, 4] values: the slice %x, %kb and %m when %m is made (%kb is
    # then dropped), %x, %m and %s when %s is; the constant and the carry are operands
    s0, s1 = sym("S0"), sym("S1")
    assert step == 4 + 16 * s0 + 16 * s0 * s1 + 16 * s0 + 16 * s0 * s1 + 48 * s0
    sizes = exact_sizes(info, {"S0": 3, "S1": 5})
    assert exact_peak(module.main, sizes) == step.evaluate({"S0": 3, "S1": 5})


FREED_AFTER = """
func.func @main(%c0: tensor<4>, %xs: tensor<?x4, [@S0, @C4]>) {
  %big = broadcast_in_dim(%c0) {dims = [1]} -> tensor<1000x4>
  %c, %ys = scan(%big, %c0, %xs) {num_consts = 1, num_carry = 1} -> tensor<4>, tensor<?x4> body {
    %b = loop.arg() {index = 0} -> tensor<1000x4>
    %acc = loop.arg() {index = 1} -> tensor<4>
    %x = loop.arg() {index = 2} -> tensor<4>
    %r = reduce(%b) {dims = [0], kind = "sum"} -> tensor<4>
    %n = add(%acc, %x) -> tensor<4>
    %m = add(%n, %r) -> tensor<4>
    loop.yield(%m, %m)
  }
  %after = broadcast_in_dim(%c) {dims = [1]} -> tensor<2000x4>
  %s = reduce(%after) {dims = [0], kind = "sum"} -> tensor<4>
  return %s, %ys
}
"""


def test_a_loops_operand_read_last_by_it_is_freed_after_its_step():
    """%big (16,000 B) is read last by the scan: the model frees it after the loop's
    step, as after any op (it stayed counted to the end: the peak was 48,128 B at
    S0=3, where %after is made beside the inputs, %c and %ys alone: 32,128 B)."""
    module = parse_module(FREED_AFTER)
    sizes = exact_sizes(analyze_shapes(module), {"S0": 3})
    assert exact_peak(module.main, sizes) == 16 + 48 + 16 + 48 + 32000


# -- both backends --------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_backends_run_the_loop_bit_for_bit(reverse):
    module = parse_module(cumsum(reverse))
    for b, t in [(2, 5), (3, 1)]:
        inputs = _inputs(b, t)
        want = _reference(inputs, reverse)
        got_np, _ = Executor(module, NumpyBackend()).run(inputs)
        got_jax, _ = Executor(module, JaxBackend(bitwise=True)).run(inputs)
        for name, w in zip(("%c", "%ys"), want):
            np.testing.assert_array_equal(got_np[name], w)
            np.testing.assert_array_equal(got_jax[name], w)


def test_optimized_run_under_a_limit_evicts_around_the_loop():
    """%e is made before the loop (the loop's constant is its sum) and used after it, and
    the loop's step (its body's temporaries included) is the peak: the plan evicts %e
    around the loop (never inside the body), and the outputs stay bit for bit."""
    text = cumsum().replace("scan(%k, %c0, %xs)", "scan(%kk, %c0, %xs)").replace(
        "func.func @main(%k: tensor<f32>, ", "func.func @main(%k: tensor<f32>, %big: "
        "tensor<?x?x4, [@S1, @S0, @C4]>, ").replace("  %c, %ys = scan", """  %e = exp(%big) -> tensor<?x?x4>
  %ke = reduce(%e) {dims = [0, 1, 2]} -> tensor<f32>
  %kk = mul(%k, %ke) -> tensor<f32>
  %c, %ys = scan""").replace("  return %c, %ys\n", """  %g = add(%e, %ys) -> tensor<?x?x4>
  return %c, %g
""")
    module = parse_module(text)
    verify(module)
    optimized = run_pipeline(module, parse_pipeline("analyze,schedule,remat"))
    inputs = _inputs(16, 2)           # few steps: the body's temporaries make the peak
    inputs["%k"] = np.float32(1e-3)
    inputs["%big"] = np.full((2, 16, 4), 0.01, np.float32)
    plain, base = Executor(module, NumpyBackend()).run(inputs)
    executor, limit = Executor(optimized, NumpyBackend()), base.peak_bytes * 9 // 10
    try:
        out, report = executor.run(inputs, limit=limit)
    except LimitError as exc:        # the smallest limit that works, as the runtime names it
        limit = exc.smallest
        out, report = executor.run(inputs, limit=limit)
    assert limit < base.peak_bytes
    assert report.evictions > 0 and report.peak_bytes <= limit
    for key in plain:
        np.testing.assert_array_equal(out[key], plain[key])


# -- errors, located --------------------------------------------------------------------------

HEAD = ("func.func @main(%w: tensor<4x4>, %h0: tensor<?x4, [@S0, @C4]>, "
        "%xs: tensor<?x?x4, [@S1, @S0, @C4]>) {\n")


def _scan(body: str, head: str = "¦%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}",
          types: str = "tensor<?x4>, tensor<?x?x4>") -> str:
    return (HEAD + f"  {head} -> {types} body {{\n" + body + "  }\n  return %h, %hs\n}\n")


ARGS = ("    %bw = loop.arg() {index = 0} -> tensor<4x4>\n"
        "    %c = loop.arg() {index = 1} -> tensor<?x4>\n"
        "    %x = loop.arg() {index = 2} -> tensor<?x4>\n")

ERRORS = {
    "reads_outer_value": (_scan(ARGS.replace("¦", "") + "    %d = dot(%c, ¦%w) -> tensor<?x4>\n"
                                "    loop.yield(%d, %d)\n", head="%h, %hs = scan(%w, %h0, %xs) "
                                "{num_consts = 1, num_carry = 1}"),
                          "the body of 'scan' reads %w, which it does not define"),
    "yield_count": (_scan(ARGS + "    ¦loop.yield(%c)\n", head="%h, %hs = scan(%w, %h0, %xs) "
                          "{num_consts = 1, num_carry = 1}"),
                    "'loop.yield' gives 1 value(s); the scan defines 2"),
    "no_yield": (_scan(ARGS), "the body of 'scan' must end with 'loop.yield'"),
    "arg_index": (_scan("    ¦%bw = loop.arg() {index = 7} -> tensor<4x4>\n    loop.yield(%bw, %bw)\n",
                        head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                  "'loop.arg' index 7 out of range"),
    "arg_dtype": (_scan("    ¦%bw = loop.arg() {index = 0} -> tensor<4x4xi32>\n"
                        "    loop.yield(%h0, %h0)\n",
                        head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                  "'loop.arg' %bw has element type i32; operand %w has f32"),
    "carry_shape": (_scan(ARGS + "    %d = concatenate(%c, %c) {dim = 1} -> tensor<?x8>\n"
                          "    loop.yield(%d, %x)\n"),
                    "dim 1 of the next carry %d and of the carry %h0 must be equal, got 8 and 4"),
    "slice_rank": (_scan("    ¦%x = loop.arg() {index = 2} -> tensor<?x?x4>\n    loop.yield(%x, %x)\n",
                         head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                   "'loop.arg' %x must have rank 2 (the slice of %xs), declared 3"),
    "no_scanned_input": (HEAD + "  ¦%h = scan(%w, %h0) {num_consts = 1, num_carry = 1} -> "
                         "tensor<?x4> body {\n    %c = loop.arg() {index = 1} -> tensor<?x4>\n"
                         "    loop.yield(%c)\n  }\n  return %h\n}\n",
                         "at least one scanned input"),
    # on a mesh every device runs every step: a scanned input's steps are not split
    "steps_split": ("mesh {x = 2}\n" + _scan(ARGS + "    %d = dot(%c, %bw) -> tensor<?x4>\n"
                                              "    loop.yield(%d, %x)\n").replace(
        "[@S1, @S0, @C4]>", "[@S1, @S0, @C4], {x, _, _}>"),
        "is split along dim 0 (the steps)"),
    "arg_outside": (HEAD + "  ¦%c = loop.arg() {index = 0} -> tensor<4x4>\n  return %c\n}\n",
                    "'loop.arg' stands only in the region of a loop"),
    "no_body": (HEAD + "  ¦%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> "
                "tensor<?x4>, tensor<?x?x4>\n  return %h\n}\n", "'scan' needs a 'body' region"),
    # found by fuzzing the sample (tests/fuzz/test_fuzz.py now mutates samples/ops-loop.mlir)
    "arg_without_index": (_scan("    ¦%bw = loop.arg() {slice = 0} -> tensor<4x4>\n"
                                "    loop.yield(%h0, %h0)\n",
                                head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                          "'loop.arg' needs attribute 'index'"),
    "symbol_in_a_body": (_scan(ARGS + "    ¦SymbolicDim @S1 {min = 1, max = 128}\n"
                               "    loop.yield(%c, %x)\n",
                               head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                         "'SymbolicDim' may appear only in @symbolic_shape_graph"),
    "return_in_a_body": (_scan(ARGS + "    ¦return %c\n",
                               head="%h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1}"),
                         "'return' inside region 'body'"),
    "carry_count_huge": (_scan(ARGS + "    loop.yield(%c, %x)\n", head="¦%h, %hs = scan(%w, %h0, "
                               "%xs) {num_consts = 1, num_carry = 99999999999999999999}"),
                         "num_consts + num_carry (1 + 99999999999999999999) is more than its 3"),
    "body_value_outside": (_scan(ARGS + "    loop.yield(%c, %x)\n", head="%h, %hs = scan(%w, "
                                 "%h0, %xs) {num_consts = 1, num_carry = 1}").replace(
                                     "return %h, %hs", "¦return %h, %x"),
                           "return of undefined value %x"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_loops_are_located_errors(tmp_path: Path, name: str):
    text, fragment = ERRORS[name]
    if "¦" not in text:
        text = text.replace("%h, %hs = scan(", "¦%h, %hs = scan(", 1)
    source, line, col = located(text)
    check_file(tmp_path, source, line, col, fragment)


NESTED = """
func.func @main(%c0: tensor<4>, %xs: tensor<?x?x4, [@S1, @S0, @C4]>) {
  %c, %ys = scan(%c0, %xs) {num_carry = 1} -> tensor<4>, tensor<?x4> body {
    %acc = loop.arg() {index = 0} -> tensor<4>
    %x = loop.arg() {index = 1} -> tensor<?x4>
    %r, %rs = scan(%acc, %x) {num_carry = 1} -> tensor<4>, tensor<?x4> body {
      %a2 = loop.arg() {index = 0} -> tensor<4>
      %row = loop.arg() {index = 1} -> tensor<4>
      %n = add(%a2, %row) -> tensor<4>
      loop.yield(%n, %n)
    }
    loop.yield(%r, %r)
  }
  %l = reduce(%ys) {dims = [0, 1]} -> tensor<f32>
  return %l
}
"""


def test_nested_loops_run_and_their_gradient_is_a_located_error():
    module = parse_module(NESTED)
    verify(module)
    xs = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    out, _ = Executor(module, NumpyBackend()).run({"%c0": np.zeros(4, np.float32), "%xs": xs})
    assert out["%l"] == np.cumsum(xs.sum(axis=1), axis=0).sum()
    with pytest.raises(BladecError, match="a loop whose body holds a loop") as err:
        run_pipeline(module, parse_pipeline("grad{wrt=%c0}"))
    assert err.value.loc.line == 3


# -- the importer ------------------------------------------------------------------------------

def _rnn(w, xs):
    def cell(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h * 2.0
    return jax.lax.scan(cell, jnp.zeros(xs.shape[1:], F32), xs)


@pytest.mark.parametrize("length, loop", [(None, True), (20, True), (3, False)],
                         ids=["dynamic", "long-static", "short-static"])
def test_import_picks_loop_op_or_unrolling(length, loop):
    t, b = export.symbolic_shape("T, B")
    specs = (jax.ShapeDtypeStruct((4, 4), F32),
             jax.ShapeDtypeStruct((t if length is None else length, b, 4), F32))
    imp = trace(_rnn, specs, hints=False)
    assert imp.hints == []
    names = [op.name for op in imp.module.main.ops]
    assert ("scan" in names) == loop
    executor = Executor(imp.module, NumpyBackend())
    rng = np.random.default_rng(1)
    for steps, batch in [(length or 5, 2), (length or 1, 3)]:
        args = (rng.standard_normal((4, 4)).astype(np.float32) * 0.5,
                rng.standard_normal((steps, batch, 4)).astype(np.float32))
        out, _ = executor.run(imp.flatten_inputs(*args))
        for got, want in zip(imp.unflatten_outputs(out), jax.jit(_rnn)(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_long_fori_loop_is_a_loop_over_an_iota():
    """fori_loop with static bounds is a scan with nothing scanned: past the unrolling
    limit its trip count is carried by an iota the body does not read."""
    def f(x):
        return jax.lax.fori_loop(0, 40, lambda i, v: v * 0.5 + 1.0, x)
    imp = trace(f, (jax.ShapeDtypeStruct((export.symbolic_shape("B")[0], 3), F32),))
    ops = {op.name for op in imp.module.main.ops}
    assert {"scan", "iota"} <= ops
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, _ = Executor(imp.module, NumpyBackend()).run(imp.flatten_inputs(x))
    np.testing.assert_allclose(imp.unflatten_outputs(out), jax.jit(f)(x), rtol=1e-6)


# -- while --------------------------------------------------------------------------------------

WHILE = """
func.func @main(%n: tensor<i32>, %x: tensor<?x4, [@S0, @C4]>) {
  %zero = constant() {value = 0} -> tensor<i32>
  %i, %y = while(%n, %zero, %x) {num_consts = 1} -> tensor<i32>, tensor<?x4> cond {
    %limit = loop.arg() {index = 0} -> tensor<i32>
    %ci = loop.arg() {index = 1} -> tensor<i32>
    %go = compare(%ci, %limit) {direction = "LT"} -> tensor<i1>
    loop.yield(%go)
  } body {
    %bi = loop.arg() {index = 1} -> tensor<i32>
    %by = loop.arg() {index = 2} -> tensor<?x4>
    %one = constant() {value = 1} -> tensor<i32>
    %next = add(%bi, %one) -> tensor<i32>
    %half = constant() {value = 0.5} -> tensor<?x4>
    %h = mul(%by, %half) -> tensor<?x4>
    %ny = add(%h, %by) -> tensor<?x4>
    loop.yield(%next, %ny)
  }
  %l = reduce(%y) {dims = [0, 1]} -> tensor<f32>
  return %i, %y, %l
}
"""


def test_while_runs_on_both_backends_bit_for_bit():
    module = parse_module(WHILE)
    verify(module)
    assert parse_module(format_module(module)) == module
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    want = x
    for _ in range(6):
        want = want * np.float32(0.5) + want
    for backend in (NumpyBackend(), JaxBackend(bitwise=True)):
        out, _ = Executor(module, backend).run({"%n": np.int32(6), "%x": x})
        assert out["%i"] == 6
        np.testing.assert_array_equal(out["%y"], want)
    out, _ = Executor(module, NumpyBackend()).run({"%n": np.int32(-1), "%x": x})
    assert out["%i"] == 0 and np.array_equal(out["%y"], x)     # no step at all


def test_while_memory_is_its_carries_and_its_larger_region():
    module = parse_module(WHILE)
    info = analyze_shapes(module)
    assert info.dims["%y"] == [sym("S0"), 4]
    step = symbolic_timeline(module.main, info).steps[1]
    s0 = sym("S0")
    # inputs (4 + 16*S0), %zero (4), the results (4 + 16*S0), and the larger region at
    # its fullest: the body's %next (yielded, so held to the end) with %half and %h,
    # then with %h and %ny (32*S0 + 4); the cond holds 1 byte
    assert step == 4 + 16 * s0 + 4 + 4 + 16 * s0 + 32 * s0 + 4


WHILE_ERRORS = {
    "cond_not_scalar": (WHILE.replace("    loop.yield(%go)", "    ¦loop.yield(%go, %go)"),
                        "'loop.yield' of the cond region gives one scalar"),
    "cond_dtype": (WHILE.replace("    loop.yield(%go)", "    ¦loop.yield(%ci)"),
                   "'loop.yield': %ci has element type i32; the condition has i1"),
    "no_cond": (WHILE[:WHILE.index(" cond {")].replace("  %i, %y = while", "  ¦%i, %y = while")
                + " body {\n    %bi = loop.arg() {index = 1} -> tensor<i32>\n"
                "    loop.yield(%bi, %bi)\n  }\n  return %i\n}\n",
                "'while' needs a 'cond' region"),
}


@pytest.mark.parametrize("name", WHILE_ERRORS)
def test_bad_while_loops_are_located_errors(tmp_path: Path, name: str):
    text, fragment = WHILE_ERRORS[name]
    source, line, col = located(text)
    check_file(tmp_path, source, line, col, fragment)


def test_grad_through_while_is_a_located_error():
    """As in JAX, a while loop has no reverse mode: its trip count is decided as it runs."""
    module = parse_module(WHILE.replace("return %i, %y, %l", "return %l"))
    with pytest.raises(BladecError, match="'while' has no adjoint rule") as err:
        run_pipeline(module, parse_pipeline("grad{wrt=%x}"))
    assert err.value.loc.line == 4


def test_amp_lowers_the_contractions_inside_a_loop_and_grad_follows():
    """amp casts a loop body's dot operands inside the body (isolated: its own casts);
    grad then differentiates through the casts with the scan's adjoint."""
    text = (SAMPLES / "ops-loop.mlir").read_text()
    module = run_pipeline(parse_module(text), parse_pipeline("amp"))
    verify(module)
    (scan,) = [op for op in module.main.ops if op.name == "scan" and "%h" in op.result_names]
    body = {op.name: op for op in scan.regions["body"]}
    assert body["dot"].operands == ["%c.bf16", "%bw.bf16"]
    loss = parse_module(cumsum().replace(
        "return %c, %ys", "%l = reduce(%ys) {dims = [0, 1, 2]} -> tensor<f32>\n  return %l"))
    train = run_pipeline(loss, parse_pipeline("amp,grad{wrt=%c0}"))
    verify(train)
    out, _ = Executor(train, NumpyBackend()).run(_inputs(2, 3))
    # loss = sum over steps of c_t, c_t = k c_(t-1) + x_t: d loss / d c0 = k + k^2 + k^3
    np.testing.assert_allclose(out["%grad_c0"], np.full((2, 4), 0.75 + 0.75 ** 2 + 0.75 ** 3),
                               rtol=1e-6)
