"""The ``grad`` pass as a whole: every op with a float input has a tested adjoint (the
per-op tests are tests/ops/test_adjoints_*.py), the CLI's round trip, the choice of inputs,
the errors, and ``grad{save=auto}``."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.errors import BladecError
from bladec.ops import REGISTRY
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor

from tests.support.gradcheck import invoke, rand
from tests.support.paths import SAMPLES

COVERED = {"neg", "exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "abs", "sin", "cos",
           "square", "copy", "add", "sub", "mul", "div", "max", "min", "pow", "integer_pow",
           "compare", "select", "convert", "broadcast_in_dim", "broadcast", "reshape",
           "dynamic_reshape", "transpose", "concatenate", "slice", "dot", "dot_general",
           "reduce", "gather", "scatter_add", "stop_gradient", "erf", "erfc", "erf_inv",
           "lgamma", "digamma", "log1p", "expm1", "floor", "ceil", "round", "rem", "reverse",
           "split_dim", "merge_dims", "broadcast_like", "cumulative", "sort", "top_k",
           "argmax", "argmin", "dim_size",
           "gather_slices", "scatter_slices", "reduce_window", "conv",
           "select_and_scatter_add", "bitcast", "bit_and", "bit_or", "bit_xor", "shift_left",
           "shift_right_logical", "threefry", "scan"}


# The collectives of sharded listings are tested on 8 CPU devices, against jax.grad of
# their shard_map lowering (tests/runtime/test_sharded_run.py,
# tests/support/sharded_check.py grads).
COVERED |= {"reshard", "all_gather", "shard_slice", "all_to_all", "all_permute",
            "all_reduce"}
# Ops with no adjoint, each a located error in the grad pass (tested below with an op
# whose adjoint is taken away). Adding an adjoint moves an op to COVERED.
WITHOUT_ADJOINT = {"while"}  # as in JAX: no reverse mode through a run-time trip count


def test_every_op_with_a_float_input_has_a_tested_adjoint():
    no_operands = {n for n, d in REGISTRY.items() if d.max_operands == 0}
    bookkeeping = {n for n in REGISTRY if n.startswith(("remat.", "schedule."))}
    bookkeeping.add("loop.yield")   # a loop body's terminator: the scan's adjoint reads it
    need = set(REGISTRY) - no_operands - bookkeeping - WITHOUT_ADJOINT
    assert need <= COVERED, sorted(need - COVERED)
    assert all(REGISTRY[n].adjoint is not None for n in need)
    assert WITHOUT_ADJOINT <= set(REGISTRY)   # the list names real ops
    # an op on the list that gained an adjoint must be tested and moved to COVERED
    assert [n for n in WITHOUT_ADJOINT if REGISTRY[n].adjoint is not None] == []


# -- the pass as a whole -----------------------------------------------------------------

MLP = """\
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>, %bias: tensor<4>, %y: tensor<?x4, [@S0, @C4]>) {
  %h = dot(%x, %w) -> tensor<?x4>
  %bb = broadcast_in_dim(%bias) {dims = [1]} -> tensor<?x4>
  %a = add(%h, %bb) -> tensor<?x4>
  %t = tanh(%a) -> tensor<?x4>
  %d = sub(%t, %y) -> tensor<?x4>
  %s = mul(%d, %d) -> tensor<?x4>
  %loss = reduce(%s) {dims = [0, 1]} -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
}
"""


def test_wrt_static_trains_every_static_float_input():
    """%x and %y have a dynamic dim: data. %w and %bias are the weights."""
    train = run_pipeline(parse_module(MLP), parse_pipeline("grad{wrt=static}"))
    assert train.main.returns == ["%loss", "%grad_w", "%grad_bias"]
    types = train.main.value_types()
    assert types["%grad_w"].dims == (8, 4) and types["%grad_bias"].dims == (4,)


def test_default_trains_the_first_argument_as_jax_grad():
    """The first input (%x, data or not, as jax.grad's argnums=0), or the first
    argument's pytree where the importer named its leaves %params.<path>."""
    train = run_pipeline(parse_module(MLP), parse_pipeline("grad"))
    assert train.main.returns == ["%loss", "%grad_x"]
    assert run_pipeline(parse_module(MLP), parse_pipeline("grad{wrt=first}")).main.returns \
        == ["%loss", "%grad_x"]
    tree = MLP.replace("%w:", "%p.w:").replace("%bias:", "%p.bias:").replace(
        "(%x, %w)", "(%x, %p.w)").replace("(%bias)", "(%p.bias)")
    tree = tree.replace("%x: tensor<?x8, [@S0, @C8]>, %p.w: tensor<8x4>, %p.bias: tensor<4>",
                        "%p.w: tensor<8x4>, %p.bias: tensor<4>, %x: tensor<?x8, [@S0, @C8]>")
    train = run_pipeline(parse_module(tree), parse_pipeline("grad"))
    assert train.main.returns == ["%loss", "%grad_p.w", "%grad_p.bias"]


def test_default_refuses_an_integer_first_argument():
    text = MLP.replace("func.func @main(", "func.func @main(%ids: tensor<3xi32>, ")
    with pytest.raises(BladecError, match="first argument by default .* %ids is i32"):
        run_pipeline(parse_module(text), parse_pipeline("grad"))


def test_cli_optimize_grad_round_trips_and_run_matches_jax_grad(tmp_path):
    """The acceptance test: optimize -p grad prints a training listing that parses,
    verifies and prints the same; run of it gives jax.grad's gradients."""
    import jax
    src = tmp_path / "mlp.mlir"
    src.write_text(MLP)
    res = invoke(["optimize", "-p", "grad{wrt=%w,%bias}", str(src)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "train.mlir"
    out.write_text(res.stdout)
    again = invoke(["optimize", "-p", "verify", str(out)])
    assert again.exit_code == 0 and again.stdout == res.stdout
    rng = np.random.default_rng(0)
    inputs = {"x": rand(rng, (7, 8)), "w": rand(rng, (8, 4)), "bias": rand(rng, (4,)),
              "y": rand(rng, (7, 4))}
    np.savez(tmp_path / "in.npz", **inputs)
    ran = invoke(["run", str(out), "--inputs", str(tmp_path / "in.npz"),
                  "--outputs", str(tmp_path / "out.npz")])
    assert ran.exit_code == 0, ran.output
    got = np.load(tmp_path / "out.npz")

    def loss(w, bias):
        d = jax.numpy.tanh(inputs["x"] @ w + bias) - inputs["y"]
        return (d * d).sum()
    value, (gw, gb) = jax.value_and_grad(loss, argnums=(0, 1))(inputs["w"], inputs["bias"])
    np.testing.assert_allclose(got["loss"], value, rtol=1e-5)
    np.testing.assert_allclose(got["grad_w"], gw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["grad_bias"], gb, rtol=1e-4, atol=1e-5)


def test_wrt_option_and_an_unused_input_gets_zeros():
    text = MLP.replace("%y: tensor<?x4, [@S0, @C4]>)", "%y: tensor<?x4, [@S0, @C4]>, "
                       "%unused: tensor<3>)")
    train = run_pipeline(parse_module(text), parse_pipeline("grad{wrt=%x,%unused}"))
    assert train.main.returns == ["%loss", "%grad_x", "%grad_unused"]
    made = {r.name: op for op in train.main.ops for r in op.results}
    assert made["%grad_unused"].name == "constant"
    assert train.main.value_types()["%grad_x"].binds == ("S0", "C8")  # the symbol kept


@pytest.mark.parametrize("text, pipeline, message", [
    (MLP, "grad{wrt=%nope}", "wrt names %nope, which is not an input"),
    (MLP.replace("return %loss", "return %loss, %t"), "grad", "one scalar loss, it returns 2"),
    (MLP.replace("%loss = reduce(%s) {dims = [0, 1]} -> tensor<f32>",
                 "%loss = reduce(%s) {dims = [0]} -> tensor<4>"), "grad", "scalar float loss"),
    (MLP.replace("%t = tanh(%a)", "%t = rng_uniform() {seed = 1}").replace(
        "%d = sub(%t, %y)", "%d = sub(%t, %a)"), "grad", None),
])
def test_grad_errors_are_located(text, pipeline, message):
    module = parse_module(text, "in.mlir")
    if message is None:  # rng_uniform takes no operand: no adjoint needed, and it works
        run_pipeline(module, parse_pipeline(pipeline))
        return
    with pytest.raises(BladecError, match=message):
        run_pipeline(module, parse_pipeline(pipeline))


def test_a_sharded_listing_without_return_is_located_at_its_function():
    """Found by fuzzing: ``propagate`` (which grad runs first on a sharded listing) pinned
    the outputs of a function written without ``return`` and lost its location."""
    sample = SAMPLES / "reshard.mlir"
    text = "".join(line for line in sample.read_text().splitlines(keepends=True)
                   if line.strip() != "return %b")
    with pytest.raises(BladecError, match="scalar float loss") as err:
        run_pipeline(parse_module(text, "in.mlir"), parse_pipeline("grad"))
    assert err.value.loc.file == "in.mlir" and err.value.loc.line > 0


def test_an_op_without_adjoint_on_the_path_is_a_located_error(monkeypatch):
    from dataclasses import replace
    monkeypatch.setitem(REGISTRY, "tanh", replace(REGISTRY["tanh"], adjoint=None))
    with pytest.raises(BladecError, match="'tanh' has no adjoint rule") as err:
        run_pipeline(parse_module(MLP, "in.mlir"), parse_pipeline("grad"))
    assert str(err.value.loc) == "in.mlir:5:3"


def test_bad_options_and_orders_are_argument_errors():
    with pytest.raises(BladecError, match="save=some"):
        parse_pipeline("grad{save=some}")
    with pytest.raises(BladecError, match="wrt=w"):
        parse_pipeline("grad{wrt=w}")
    with pytest.raises(BladecError, match="'grad' after 'schedule'"):
        parse_pipeline("schedule,grad")
    res = invoke(["optimize", "-p", "grad{wrt=%q}", "-"], input=MLP)
    assert res.exit_code == 1 and "Traceback" not in res.output and "%q" in res.output


# -- grad{save=auto} -----------------------------------------------------------------------

SCALED = """\
func.func @main(%x: tensor<?x64, [@S0, @C64]>, %w: tensor<64x64>) {
  %s = reduce(%x) {dims = [1]} -> tensor<?>
  %s2 = broadcast_in_dim(%s) {dims = [0]} -> tensor<?x1>
  %h = broadcast_in_dim(%s2) {dims = [0, 1]} -> tensor<?x64>
  %p = dot(%x, %w) -> tensor<?x64>
  %g = logistic(%p) -> tensor<?x64>
  %q = mul(%g, %p) -> tensor<?x64>
  %t = mul(%q, %h) -> tensor<?x64>
  %u = tanh(%t) -> tensor<?x64>
  %loss = reduce(%u) {dims = [0, 1]} -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 4096}
}
"""


def test_broadcasts_are_made_again_and_save_auto_recomputes_cheap_values():
    """By default the backward re-emits the broadcast %h (64 floats a row) from %s2 (one)
    and saves the rest. The cheap recomputations (without save=auto's guard) also make
    %g = logistic(%p) again from %p, which the backward keeps anyway (mul's adjoint reads
    it), and %u = tanh(%t) by the chain of cheap ops back to %p and %s2; dots never. Here
    they lower the model peak at no corner of S0's range (it is the forward's), so
    save=auto, which recomputes only where the whole step's peak goes down, keeps the
    default's choices."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.ir import Module
    from bladec.passes.grad import differentiate
    from bladec.passes.saving import recompute_cheap
    from bladec.symbolic.shapes import analyze_shapes
    forward = parse_module(SCALED)
    n = len(forward.main.ops)
    every = run_pipeline(parse_module(SCALED), parse_pipeline("grad{wrt=%w}"))
    auto = run_pipeline(parse_module(SCALED), parse_pipeline("grad{wrt=%w,save=auto}"))
    made = {r.name: op for op in every.main.ops for r in op.results}
    assert made["%h.r0"].name == "broadcast_in_dim" and made["%h.r0"].operands == ["%s2"]
    assert "%h" not in {v for op in every.main.ops[n:] for v in op.operands}
    assert {r.name for op in every.main.ops for r in op.results if ".r" in r.name} == {"%h.r0"}
    assert [op.results for op in auto.main.ops] == [op.results for op in every.main.ops]
    cheap = recompute_cheap(forward, differentiate(forward.main, "%loss", ["%w"]), n)
    made = {r.name: op for op in cheap.ops for r in op.results}
    assert made["%g.r0"].name == "logistic" and made["%g.r0"].operands == ["%p"]
    assert made["%u.r0"].name == "tanh"
    assert not any(n.startswith("%p.") for n in made)
    module = Module([cheap], forward.shape_graph, forward.file)
    rng = np.random.default_rng(0)
    x = {"%x": rand(rng, (5, 64)), "%w": rand(rng, (64, 64)) / 8}
    a, _ = Executor(every, NumpyBackend()).run(x)
    b, _ = Executor(module, NumpyBackend()).run(x)
    assert all(np.array_equal(a[k], b[k]) for k in a)  # the same ops on the same values
    for s0 in (1, 64, 4096):
        peaks = [exact_peak(m.main, exact_sizes(analyze_shapes(m), {"S0": s0}))
                 for m in (every, module)]
        assert peaks[1] >= peaks[0], s0  # why save=auto keeps the default here


def test_the_llama_backward_reads_no_forward_broadcast():
    """samples/llama-loss-small.mlir broadcasts with the importer's ``broadcast_like``
    (a scalar scale and per-row sums to [B, H, S, S]): the backward makes each again from
    what it reads instead of keeping it (kept, they took grad's device peak at 8x256 from
    62.6 to 78.6 MiB, above the imported value_and_grad step's 64.1)."""

    from bladec.analysis.memory import exact_sizes
    from bladec.symbolic.shapes import analyze_shapes
    fills = {"broadcast", "broadcast_in_dim", "broadcast_like", "constant", "iota"}
    path = SAMPLES / "llama-loss-small.mlir"
    forward = parse_module(path.read_text(), str(path))
    made = {r.name: op for op in forward.main.ops for r in op.results}
    assert "broadcast_like" in {op.name for op in made.values()}
    sizes = exact_sizes(analyze_shapes(forward), {"S0": 8, "S1": 256})

    def spreads(name: str) -> bool:  # made larger than what it reads (not a reshape)
        op = made.get(name)
        return op is not None and op.name in fills and \
            sizes[name] > max([sizes[n] for n in op.operands[:1]] + [0])
    for pipeline in ("grad", "grad{save=auto}"):
        train = run_pipeline(forward, parse_pipeline(pipeline)).main
        read = {n for op in train.ops[len(forward.main.ops):] for n in op.operands}
        assert not [n for n in read if spreads(n)], pipeline
