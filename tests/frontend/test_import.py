"""The JAX importer (bladec/frontend/): small functions in, listings out.

Each function is traced with symbolic batch/sequence dims; the listing must verify,
print and parse back unchanged, run on both backends to what JAX computes, and bladec's
own analysis, which sees only the inputs' symbols and bare ``?`` dims elsewhere, must
rediscover every dim exactly as JAX's dimension expressions give it.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from bladec.cli import main
from bladec.errors import BladecError
from bladec.frontend import import_function, trace
from bladec.frontend.jax_import import check_dims, parse_ranges, parse_shapes
from bladec.parse import parse_module
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.symbolic.shapes import analyze_shapes
from bladec.verify import verify

from tests.support.clirunner import make_runner

# values only: each step at no limit in bladec's order alone (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

B, S = export.symbolic_shape("B, S")
F32, I32 = jnp.float32, jnp.int32


def spec(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


# -- the functions ------------------------------------------------------------------------

def mlp(x, w1, b1, w2):
    """A residual MLP over flattened tokens: reshape [B,S,D] -> [B*S,D] and back."""
    h = x.reshape(-1, x.shape[-1]) @ w1 + b1
    h = jax.nn.relu(h) + jax.nn.silu(h) * 0.5
    return x + (h @ w2).reshape(x.shape)


def softmax_fns(x):
    """softmax, log_softmax and logsumexp (custom_jvp and jit bodies to inline)."""
    return (jax.nn.softmax(x, axis=-1), jax.nn.log_softmax(x, axis=1),
            jax.scipy.special.logsumexp(x, axis=-1))


def chains(x, y):
    """concatenate along dynamic and static dims, slices and pads of dynamic tensors,
    merging reshapes, iota positions, transposes and batched contractions."""
    c = jnp.concatenate([x, y, x], axis=1)                    # [B, 3S, 8]
    d = jnp.concatenate([c, c[..., :3]], axis=-1)             # [B, 3S, 11]
    flat = d.reshape(-1, 11)                                  # [3BS, 11]
    pos = jnp.arange(x.shape[1], dtype=F32)                   # iota over S
    scaled = x * pos[None, :, None]
    padded = jnp.pad(scaled, ((0, 0), (0, 0), (2, 1)))        # [B, S, 11]
    scores = jnp.einsum("bsd,btd->bst", x, y)                 # batched dot_general
    parts = jnp.split(x, 2, axis=-1)
    return (flat.sum(axis=0), padded, jnp.transpose(scores, (0, 2, 1)),
            parts[0] * parts[1], d[..., 2:9:3] + d[..., 0:1])


def elementwise(x, n):
    """Every unary and binary op, comparisons, where (select_n order), clip, casts."""
    a = jnp.abs(x) + 0.5
    u = (jnp.sin(x) + jnp.cos(x) - jnp.tanh(x) + jax.nn.sigmoid(x) + jnp.exp(-a)
         + jnp.log(a) + jnp.sqrt(a) + jax.lax.rsqrt(a) + x ** 3 + jnp.square(x)
         + jnp.power(a, x) + 1.0 / a)
    v = jnp.where(x > 0.1, u, -u) + jnp.where(x <= -0.2, 2.0, x)
    w = jnp.clip(v, -3.0, 3.0) + jnp.maximum(x, 0.0) - jnp.minimum(u, n[..., None])
    mask = (x != 0) & (x < 1.0) | (x >= 2.0)
    k = n.astype(I32) * 3 - 1
    return w * mask.astype(F32), k, jnp.max(x, axis=(0, 2)), jnp.min(u, axis=1)


def embed_grad(table, ids, x):
    """The embedding pattern table[ids] and its gradient (a scatter-add)."""
    def loss(t):
        e = t[ids]
        return jnp.sum(e * x) + 0.5 * jnp.sum(e * e)
    return jax.value_and_grad(loss)(table)


def concat_grad(x, w):
    """A gradient through concatenate and slices: its backward pass has slices and pads."""
    def loss(w):
        h = jnp.concatenate([x @ w, jnp.tanh(x)], axis=-1)    # [B, S, 12]
        return jnp.sum(h[..., 2:10] ** 2)
    return jax.grad(loss)(w)


def passthrough(x, y):
    """Outputs that are inputs, repeats and literals are copied to values of their own."""
    z = x * 2.0
    return x, z, z, jnp.float32(3.0), y


CASES = {
    "mlp": (mlp, (spec(B, S, 16), spec(16, 32), spec(32), spec(32, 16))),
    "softmax": (softmax_fns, (spec(B, S, 10),)),
    "chains": (chains, (spec(B, S, 8), spec(B, S, 8))),
    "elementwise": (elementwise, (spec(B, S, 6), spec(B, S))),
    "embed_grad": (embed_grad, (spec(50, 8), spec(B, S, dtype=I32), spec(B, S, 8))),
    "concat_grad": (concat_grad, (spec(B, S, 6), spec(6, 6))),
    "passthrough": (passthrough, (spec(B, S), spec(3))),
}
BINDINGS = [(1, 1), (2, 5), (3, 8)]


def concrete(specs, b, s, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for sp in specs:
        shape = tuple(b if d is B else s if d is S else int(d) for d in sp.shape)
        if sp.dtype == I32:
            out.append(rng.integers(0, 50, shape).astype(np.int32))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


@pytest.fixture(scope="module")
def imported():
    return {name: trace(fn, specs, ranges={"B": (1, 64)}) for name, (fn, specs) in CASES.items()}


# -- the listing ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_listing_verifies_and_round_trips(imported, name):
    imp = imported[name]
    text = format_module(imp.module)
    verify(parse_module(text))
    assert format_module(parse_module(text)) == text
    func = imp.module.main
    # inputs are bound to the symbols, every derived dynamic dim is a bare '?'
    for arg in func.args:
        if None in arg.type.dims:
            assert arg.type.binds is not None
    for op in func.ops:
        for r in op.results:
            assert r.type.binds is None, f"{r.name} is bound: {format_module(imp.module)}"
    assert imp.hints == []
    decl = {d.name: (d.min, d.max) for d in imp.module.shape_graph.decls}
    assert decl["S0"] == (1, 64) and decl["S1"] == (1, None)
    assert imp.symbols == {"B": "S0", "S": "S1"}


def test_symbols_and_names():
    imp = trace(mlp, CASES["mlp"][1])
    text = imp.text()
    assert text.startswith("func.func @main(%x: tensor<?x?x16, [@S0, @S1, @C16]>, "
                           "%w1: tensor<16x32>, %b1: tensor<32>, %w2: tensor<32x16>) {\n")
    assert "  return %out\n" in text
    assert text.endswith("func.func @symbolic_shape_graph() {\n  SymbolicDim @S0\n"
                         "  SymbolicDim @S1\n}\n")
    # the merge [B,S,16] -> [B*S,16] says which dims it merges; its dims are the analysis's
    assert "merge_dims(%x) {dim = 0, count = 2} -> tensor<?x16>" in text


def _pytree_step(p, x):
    h = jnp.tanh(x @ p["h0"]["qkv"]) @ p["layers"][1]["w-out"]
    return h.sum(), jax.tree_util.tree_map(lambda a: a * 0.5, p)


def test_pytree_names_are_paths_with_dots():
    """Input and output leaves are named by their pytree paths, joined by dots (keys with
    other characters keep a ``_``), and the listing prints and parses back unchanged."""
    B, = export.symbolic_shape("B")
    f32 = jax.ShapeDtypeStruct
    p = {"h0": {"qkv": f32((4, 8), jnp.float32)},
         "layers": [{"w-out": f32((8, 2), jnp.float32)}, {"w-out": f32((8, 2), jnp.float32)}]}
    imp = trace(_pytree_step, (p, f32((B, 4), jnp.float32)))
    assert imp.input_names == ["%p.h0.qkv", "%p.layers.0.w_out", "%p.layers.1.w_out", "%x"]
    assert imp.output_names == ["%out0", "%out1.h0.qkv", "%out1.layers.0.w_out",
                                "%out1.layers.1.w_out"]
    text = format_module(imp.module)
    assert "dot_general(%x, %p.h0.qkv)" in text
    assert format_module(parse_module(text)) == text
    args = ({"h0": {"qkv": np.ones((4, 8), np.float32)},
             "layers": [{"w-out": np.full((8, 2), k, np.float32)} for k in (1.0, 2.0)]},
            np.ones((3, 4), np.float32))
    out, _ = Executor(parse_module(text), NumpyBackend()).run(imp.flatten_inputs(*args))
    np.testing.assert_allclose(out["%out0"], np.asarray(_pytree_step(*args)[0]), rtol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_analysis_rediscovers_jax_dims(imported, name):
    """The relations bladec derives agree with JAX's dimension expressions: with only the
    inputs bound, every value's dims are JAX's polynomials over the same symbols."""
    imp = imported[name]
    info = analyze_shapes(imp.module)
    assert info.free == ["S0", "S1"]
    assert not info.facts
    for value, dims in info.dims.items():
        assert dims == imp.jax_dims[value], value
    # and numerically at bindings, against the avals JAX gives at concrete shapes
    fn, specs = CASES[name]
    for b, s in BINDINGS[1:]:
        args = concrete(specs, b, s)
        closed = jax.make_jaxpr(fn)(*args)
        want = {tuple(v.aval.shape) for v in closed.jaxpr.outvars}
        got = {tuple(d.evaluate({"S0": b, "S1": s}) for d in info.dims[n])
               for n in imp.output_names}
        assert got == want
        check_dims(imp, [{"S0": b, "S1": s}])


def test_derived_dims_are_the_expected_formulas(imported):
    info = analyze_shapes(imported["chains"].module)
    shapes = {tuple(str(d) for d in info.dims[n]) for n in imported["chains"].output_names}
    assert ("11",) in shapes                          # flat.sum(axis=0)
    assert ("S0", "S1", "S1") in shapes               # the transposed scores
    assert ("S0", "3*S1", "3") in shapes              # d[..., 2:9:3] + d[..., 0:1]
    flat = [n for n, ds in info.dims.items() if [str(d) for d in ds] == ["3*S0*S1", "11"]]
    assert flat, "the merging reshape's dim 3*B*S is rediscovered"


# -- running it -------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", [NumpyBackend, JaxBackend], ids=["numpy", "jax"])
@pytest.mark.parametrize("name", CASES)
def test_runs_like_jax(imported, name, backend):
    imp = imported[name]
    fn, specs = CASES[name]
    executor = Executor(imp.module, backend())
    bindings = BINDINGS if backend is NumpyBackend else BINDINGS[1:2]
    for b, s in bindings:
        args = concrete(specs, b, s, seed=b * 10 + s)
        outputs, report = executor.run(imp.flatten_inputs(*args))
        assert report.binding == {"S0": b, "S1": s}
        got = imp.unflatten_outputs(outputs)
        want = jax.jit(fn)(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_select_n_operand_order():
    imp = trace(lambda x: jnp.where(x > 0, x, -10.0 * x), (spec(S),))
    text = imp.text()
    assert "select(" in text
    out, _ = Executor(imp.module, NumpyBackend()).run({"%x": np.array([-1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(out["%out"], [10.0, 2.0])


def test_decomposed_primitives_are_counted(imported):
    # a slice or split that keeps the dynamic dims whole stays a slice (limit -1 there)
    assert imported["chains"].decomposed["slice"] == 0
    assert "slice(%x) {start = [0, 0, 4], limit = [-1, -1, 8]} -> tensor<?x?x4>" in \
        imported["chains"].text()
    assert trace(shift, (spec(B, S, 10),)).decomposed["slice"] == 2   # S cut: gathers
    assert imported["chains"].decomposed["pad"] == 1
    assert imported["chains"].decomposed["split"] == 1
    assert imported["concat_grad"].decomposed["scatter-add (constant indices)"] == 1
    text = imported["embed_grad"].text()
    assert re.search(r"= gather\(%table, %\d+\) -> tensor<\?x\?x8>", text)
    assert re.search(r"= scatter_add\(%\d+, %\d+, %\d+\) -> tensor<50x8>", text)


# -- dims the analysis can not rediscover: hints ----------------------------------------------

def split_heads(x):
    return x.reshape(x.shape[0], x.shape[1] * 2, 4) * 3.0    # [B, S, 8] -> [B, 2S, 4]


def test_structured_reshapes_need_no_hint():
    """A split of a dynamic dim is a merge then a split_dim, whose rules relate the dims:
    the analysis derives 2*S without a hint."""
    specs = (spec(B, S, 8),)
    imp = trace(split_heads, specs, hints=False)
    text = imp.text()
    assert "merge_dims(%x) {dim = 1, count = 2} -> tensor<?x?>" in text
    assert "split_dim(%0) {dim = 1, sizes = [-1, 4]} -> tensor<?x?x4>" in text
    args = concrete(specs, 3, 5)
    out, _ = Executor(imp.module, NumpyBackend()).run(imp.flatten_inputs(*args))
    np.testing.assert_array_equal(out["%out"], np.asarray(split_heads(*args)))


def swap_batch(x):
    return jnp.sin(x.reshape(x.shape[1], x.shape[0], 8))      # [B, S, 8] -> [S, B, 8]


def test_hints_bind_a_reshape_that_reorders_dims():
    specs = (spec(B, S, 8),)
    imp = trace(swap_batch, specs)
    assert len(imp.hints) == 1
    text = imp.text()
    assert "reshape(%x) -> tensor<?x?x8, [@S1, @S0, @C8]>" in text
    verify(parse_module(text))
    args = concrete(specs, 3, 5)
    out, _ = Executor(imp.module, NumpyBackend()).run(imp.flatten_inputs(*args))
    np.testing.assert_allclose(out["%out"], np.asarray(swap_batch(*args)), rtol=1e-6)
    with pytest.raises(BladecError, match="can not relate the dims of"):
        trace(swap_batch, specs, hints=False)


def shift(x):
    """Slices of a dynamic dim: the gather's index iota has the length S - 1."""
    y = x[:, 1:]
    return y - x[:, :-1], y[..., 2:9:3]


def test_hints_bind_a_slice_of_a_dynamic_dim():
    specs = (spec(B, S, 10),)
    imp = trace(shift, specs)
    assert imp.hints and "@S1 = Add @S2, @C1" in imp.text()
    info = analyze_shapes(imp.module)
    for b, s in [(2, 2), (3, 9)]:
        check_dims(imp, [{"S0": b, "S1": s}])
        args = concrete(specs, b, s)
        out, _ = Executor(imp.module, NumpyBackend()).run(imp.flatten_inputs(*args))
        for got, want in zip(imp.unflatten_outputs(out), shift(*args)):
            np.testing.assert_array_equal(got, np.asarray(want))
    assert {len(info.dims[n]) for n in imp.output_names} == {3}


# -- errors ---------------------------------------------------------------------------------------

def test_unsupported_primitive_is_named():
    with pytest.raises(BladecError, match="cannot import JAX primitive 'population_count'"):
        import_function(lambda x: jax.lax.population_count(x), (spec(B, S, dtype=I32),))
    with pytest.raises(BladecError, match="primitive 'cholesky'"):
        import_function(lambda x: jnp.linalg.cholesky(x), (spec(3, 3),))


def _fori_dynamic(x):
    return jax.lax.fori_loop(0, x.shape[0], lambda i, h: h * 0.5 + 1.0, x)


def _while_halving(x):
    return jax.lax.while_loop(lambda c: jnp.max(jnp.abs(c[1])) > 1e-3,
                              lambda c: (c[0] + 1, c[1] * 0.5), (0, x))


@pytest.mark.parametrize("fn", [_fori_dynamic, _while_halving])
def test_while_loops_become_the_while_op(fn):
    """A loop whose trip count is decided as it runs (bounds from a dynamic dim, a
    condition on the values) is the listing's ``while`` op; it runs like JAX."""
    imp = import_function(fn, (spec(S, 4),))
    assert "while" in {op.name for op in imp.main.ops}
    executor = Executor(imp, NumpyBackend())
    for rows in (1, 3):
        x = np.linspace(-2.0, 3.0, rows * 4, dtype=np.float32).reshape(rows, 4)
        out, _ = executor.run({"%x": x})
        for got, want in zip(out.values(), jax.tree_util.tree_leaves(jax.jit(fn)(x))):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_gradient_through_while_is_refused():
    """JAX does not reverse-differentiate while_loop; neither does bladec's grad pass."""
    with pytest.raises(BladecError, match="[Rr]everse-mode differentiation"):
        import_function(jax.grad(lambda x: jnp.sum(_fori_dynamic(x))), (spec(S, 4),))


def test_bad_specs():
    with pytest.raises(BladecError, match="non-uniform constant"):
        import_function(lambda x: x + np.arange(3, dtype=np.float32), (spec(S, 3),))
    import_function(lambda x: x * 2, (spec(2 * S),))   # a compound size: a symbol, related
    with pytest.raises(BladecError, match="must be a polynomial of dimension variables"):
        import_function(lambda x: x * 2, (spec(S // 2),))
    with pytest.raises(BladecError, match="ranges given for unknown"):
        import_function(lambda x: x * 2, (spec(S),), ranges={"T": (1, 4)})
    with pytest.raises(BladecError, match="bad shape spec"):
        parse_shapes("x")
    with pytest.raises(BladecError, match="bad --range"):
        parse_ranges("B=0:4")
    assert parse_ranges("B=1:32,S=:512,T=4:") == {"B": (1, 32), "S": (1, 512), "T": (4, None)}


# -- the command line ------------------------------------------------------------------------

def test_cli_import_with_shapes(tmp_path):
    runner = make_runner()
    out = tmp_path / "mlp.mlir"
    result = runner.invoke(main, ["import", f"{__name__}:mlp", "--shapes",
                                  "x:B,S,16; w1:16,32; b1:32; w2:32,16", "--range",
                                  "B=1:32,S=1:512", "-o", str(out)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "imported" in result.stderr and "B -> @S0, S -> @S1" in result.stderr
    text = out.read_text()
    assert text == format_module(trace(mlp, CASES["mlp"][1],
                                       ranges={"B": (1, 32), "S": (1, 512)}).module)
    result = runner.invoke(main, ["optimize", str(out)])
    assert result.exit_code == 0, result.stdout + result.stderr


def _tree_mlp(p, x):
    return jnp.tanh(x @ p["h0"]["qkv"]) @ p["out"]["w-out"]


def test_cli_import_pytree_shapes(tmp_path):
    """Dotted --shapes names make an argument a pytree of dicts, named back by path."""
    runner = make_runner()
    out = tmp_path / "tree.mlir"
    result = runner.invoke(main, ["import", f"{__name__}:_tree_mlp", "--shapes",
                                  "p.h0.qkv:4,8; p.out.w-out:8,2; x:B,4", "-o", str(out)])
    assert result.exit_code == 0, result.stdout + result.stderr
    text = out.read_text()
    assert text.startswith("func.func @main(%p.h0.qkv: tensor<4x8>, %p.out.w_out: "
                           "tensor<8x2>, %x: tensor<?x4, [@S0, @C4]>)")
    for shapes, message in [("p:4,8; p.h0:4; x:B,4", "itself an array"),
                            ("p.h0:4; p.h0:4; x:B,4", "twice"),
                            ("p.h0.a:4; p.h0:4; x:B,4", "both as an array and as a tree"),
                            ("p.:4; x:B,4", "ends in a dot")]:
        result = runner.invoke(main, ["import", f"{__name__}:_tree_mlp", "--shapes", shapes])
        assert result.exit_code == 1 and message in result.stderr, (shapes, result.stderr)


def test_cli_import_errors():
    runner = make_runner()
    for args, message in [
        (["import", "no_such_module_x:f", "--shapes", "x:B"], "cannot import module"),
        (["import", f"{__name__}:mlp", "--shapes", "x:B,S,16"], "missing w1"),
        (["import", f"{__name__}:nothing", "--shapes", "x:B"], "has no attribute"),
        (["import", f"{__name__}:mlp"], "give --shapes"),
        (["import", f"{__name__}:mlp", "--shapes", "x:B,S,16:q8"], "unknown dtype"),
    ]:
        result = runner.invoke(main, args)
        assert result.exit_code == 1, (args, result.stdout, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
