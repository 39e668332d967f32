"""The ``grad`` pass: every adjoint rule against ``jax.grad`` of the op's own JAX lowering.

Each case is one op in a forward listing whose loss is ``sum(op(...) * r)``, ``r`` a
random cotangent, at shapes drawn at random (a dynamic first dim where the op allows
one). The reference differentiates the forward listing as JAX runs it (the backend's
lowering of each op, interpreted under ``jax.grad``); the training listing that ``grad``
writes runs through the executor like any listing. Also: the CLI's round trip, the
choice of inputs, and the errors.
"""
from __future__ import annotations

import numpy as np
import pytest

from bladec.errors import BladecError
from bladec.ops import REGISTRY
from bladec.ops.loop import with_bodies
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module as print_module
from bladec.runtime.backend import NumpyBackend, interpret, numpy_dtype
from bladec.runtime.executor import Executor
from bladec.runtime.jax_backend import JaxBackend, _JaxKernels
from bladec.verify import verify
from clirunner import make_runner

RTOL, ATOL = 2e-4, 2e-5  # f32; summation orders differ between the two


def listing(args: str, body: str, result: str, rtype: str) -> str:
    """A forward listing: ``body`` defines ``result`` of ``rtype``; the loss is the sum of
    ``result * %r``."""
    return (f"func.func @main({args}, %r: {rtype}) {{\n{body}\n"
            f"  %lr = mul({result}, %r) -> {rtype}\n"
            f"  %loss = reduce(%lr) {{dims = [{', '.join(map(str, range(_rank(rtype))))}]}}"
            f" -> tensor<{_dtype(rtype)}>\n  return %loss\n}}\n")


def _rank(t: str) -> int:
    inner = t[len("tensor<"):].split(",")[0].rstrip(">")
    return len([p for p in inner.split("x") if p and not p[0].isalpha()])


def _dtype(t: str) -> str:
    inner = t[len("tensor<"):].split(",")[0].rstrip(">")
    last = inner.split("x")[-1]
    return last if last and last[0].isalpha() else "f32"


def invoke(args: list[str], input: str | None = None):
    from bladec.cli import main
    return make_runner().invoke(main, args, input=input)


def check_grad(text: str, inputs: dict[str, np.ndarray], wrt: list[str],
               rtol: float = RTOL, atol: float = ATOL) -> dict[str, np.ndarray]:
    import jax
    module = parse_module(text, "<test>")
    verify(module, runnable=True)
    train = run_pipeline(module, parse_pipeline("grad{wrt=" + ",".join(wrt) + "}"))
    printed = print_module(train)
    again = parse_module(printed, "<printed>")
    verify(again, runnable=True)
    assert print_module(again) == printed  # round trip
    outs, _ = Executor(again, JaxBackend()).run(inputs)
    # reference: jax.grad of the forward listing's own lowering
    ex = Executor(module, JaxBackend())
    shapes = ex.shapes_for(ex.bind({k: v.shape for k, v in inputs.items()}))
    func = module.main
    specs = {id(op): [(shapes[r.name], r.type.dtype) for r in op.results]
             for op in with_bodies(func.ops)}
    names = [a.name for a in func.args]
    fn = interpret(_JaxKernels(), func.ops, names, func.outputs(), specs)
    pos = [names.index(w) for w in wrt]

    def loss(*trained):
        args = [jax.numpy.asarray(inputs[n]) for n in names]
        for p, t in zip(pos, trained):
            args[p] = jax.numpy.asarray(t)
        return fn(*args)[0]
    want = jax.grad(loss, argnums=tuple(range(len(wrt))))(*[inputs[w] for w in wrt])
    np.testing.assert_allclose(np.asarray(outs["%loss"], np.float64),
                               np.asarray(loss(*[inputs[w] for w in wrt]), np.float64),
                               rtol=rtol, atol=atol)
    got = {}
    for w, ref in zip(wrt, want):
        have = np.asarray(outs[f"%grad_{w[1:]}"], np.float64)
        np.testing.assert_allclose(have, np.asarray(ref, np.float64), rtol=rtol, atol=atol,
                                   err_msg=w)
        got[w] = have
    return got


def rand(rng: np.random.Generator, shape: tuple, dtype: str = "f32", low: float | None = None,
         high: float | None = None) -> np.ndarray:
    if low is not None:
        x = rng.uniform(low, high, shape)
    else:
        x = rng.standard_normal(shape)
    return x.astype(numpy_dtype(dtype))


def t(dims: list, dtype: str = "f32", dyn: bool = False) -> str:
    """A type text; ``dyn``: the first dim is ``?`` bound to @S0."""
    parts = ["?" if dyn and i == 0 else str(d) for i, d in enumerate(dims)]
    if dtype != "f32":
        parts.append(dtype)
    binds = ""
    if dyn:
        binds = ", [" + ", ".join(["@S0"] + [f"@C{d}" for d in dims[1:]]) + "]"
    return f"tensor<{'x'.join(parts)}{binds}>"


UNARY_DOMAIN = {"log": (0.5, 2.0), "sqrt": (0.5, 2.0), "rsqrt": (0.5, 2.0)}
SEEDS = [0, 1, 2]


def shape2(rng: np.random.Generator) -> tuple[int, int]:
    return int(rng.integers(1, 7)), int(rng.integers(1, 6))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt", "rsqrt", "tanh", "logistic",
                                  "abs", "sin", "cos", "square", "copy"])
def test_unary_adjoint(name, seed):
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    ty = t([m, n], dyn=True)
    lo, hi = UNARY_DOMAIN.get(name, (None, None))
    x = rand(rng, (m, n), low=lo, high=hi)
    if name == "abs":
        x = np.where(np.abs(x) < 0.1, 0.5, x).astype(np.float32)  # away from the kink
    text = listing(f"%x: {ty}", f"  %y = {name}(%x) -> {ty}", "%y", ty)
    check_grad(text, {"%x": x, "%r": rand(rng, (m, n))}, ["%x"])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "max", "min", "pow"])
def test_binary_adjoint(name, seed):
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    ty = t([m, n], dyn=True)
    a = rand(rng, (m, n), low=0.5, high=2.0) if name == "pow" else rand(rng, (m, n))
    b = rand(rng, (m, n), low=0.5, high=2.0) if name in ("div", "pow") else rand(rng, (m, n))
    text = listing(f"%a: {ty}, %b: {ty}", f"  %y = {name}(%a, %b) -> {ty}", "%y", ty)
    check_grad(text, {"%a": a, "%b": b, "%r": rand(rng, (m, n))}, ["%a", "%b"])


def test_max_min_ties_split_the_gradient():
    ty = t([4])
    for name in ("max", "min"):
        text = listing(f"%a: {ty}, %b: {ty}", f"  %y = {name}(%a, %b) -> {ty}", "%y", ty)
        a = np.array([1, 2, 3, 4], np.float32)
        got = check_grad(text, {"%a": a, "%b": np.array([1, 0, 3, 9], np.float32),
                                "%r": np.ones(4, np.float32)}, ["%a", "%b"])
        assert got["%a"][0] == 0.5 and got["%a"][2] == 0.5


def test_same_value_twice_sums_both_uses():
    ty = t([3, 2], dyn=True)
    text = listing(f"%x: {ty}", f"  %y = mul(%x, %x) -> {ty}", "%y", ty)
    rng = np.random.default_rng(0)
    x, r = rand(rng, (3, 2)), rand(rng, (3, 2))
    got = check_grad(text, {"%x": x, "%r": r}, ["%x"])
    np.testing.assert_allclose(got["%x"], 2 * x * r, rtol=1e-6)


def test_stop_gradient_passes_nothing_back():
    """d/dx sum(x * stop_gradient(x) * r) = stop_gradient(x) * r, as JAX has it."""
    rng = np.random.default_rng(5)
    ty = t([4, 3], dyn=True)
    body = f"  %s = stop_gradient(%x) -> {ty}\n  %y = mul(%x, %s) -> {ty}"
    x, r = rand(rng, (4, 3)), rand(rng, (4, 3))
    got = check_grad(listing(f"%x: {ty}", body, "%y", ty), {"%x": x, "%r": r}, ["%x"])
    np.testing.assert_allclose(got["%x"], x * r, rtol=1e-6)


@pytest.mark.parametrize("n", [3, 2, 1, 0, -2])
def test_integer_pow_adjoint(n):
    rng = np.random.default_rng(n + 10)
    ty = t([5, 3], dyn=True)
    text = listing(f"%x: {ty}", f"  %y = integer_pow(%x) {{exponent = {n}}} -> {ty}", "%y", ty)
    check_grad(text, {"%x": rand(rng, (5, 3), low=0.5, high=2.0), "%r": rand(rng, (5, 3))},
               ["%x"])


def test_compare_and_select_adjoints():
    """No gradient through the comparison; select routes each side's share."""
    rng = np.random.default_rng(3)
    ty, ti1 = t([6, 2], dyn=True), t([6, 2], "i1", dyn=True)
    body = (f"  %c = compare(%a, %b) {{direction = \"LT\"}} -> {ti1}\n"
            f"  %y = select(%c, %a, %b) -> {ty}")
    text = listing(f"%a: {ty}, %b: {ty}", body, "%y", ty)
    check_grad(text, {"%a": rand(rng, (6, 2)), "%b": rand(rng, (6, 2)),
                      "%r": rand(rng, (6, 2))}, ["%a", "%b"])


def test_convert_adjoints():
    """f32 -> f16 -> f32 passes the cotangent back through both casts; an integer input
    converted to a float gets no gradient and stops none."""
    rng = np.random.default_rng(4)
    ty, th, ti = t([4, 3], dyn=True), t([4, 3], "f16", dyn=True), t([4, 3], "i32", dyn=True)
    body = (f"  %h = convert(%x) {{dtype = \"f16\"}} -> {th}\n"
            f"  %f = convert(%h) {{dtype = \"f32\"}} -> {ty}\n"
            f"  %k = convert(%i) {{dtype = \"f32\"}} -> {ty}\n"
            f"  %y = mul(%f, %k) -> {ty}")
    text = listing(f"%x: {ty}, %i: {ti}", body, "%y", ty)
    check_grad(text, {"%x": rand(rng, (4, 3)), "%i": rng.integers(-3, 3, (4, 3)).astype(np.int32),
                      "%r": rand(rng, (4, 3))}, ["%x"], rtol=2e-3, atol=2e-3)


# digamma from 0.2: its adjoint's reflection (x < 1/2) and recurrence branches both
SPECIAL_DOMAIN = {"erf_inv": (-0.9, 0.9), "lgamma": (0.5, 3.0), "log1p": (-0.5, 2.0),
                  "digamma": (0.2, 9.0)}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["erf", "erfc", "erf_inv", "lgamma", "digamma", "log1p",
                                  "expm1", "floor", "ceil", "round"])
def test_special_adjoint(name, seed):
    """The special functions of bladec/ops/special.py; the rounding ones pass zeros."""
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    ty = t([m, n], dyn=True)
    lo, hi = SPECIAL_DOMAIN.get(name, (None, None))
    text = listing(f"%x: {ty}", f"  %y = {name}(%x) -> {ty}", "%y", ty)
    check_grad(text, {"%x": rand(rng, (m, n), low=lo, high=hi), "%r": rand(rng, (m, n))},
               ["%x"])


@pytest.mark.parametrize("seed", SEEDS)
def test_rem_adjoint(seed):
    """Both signs of a and b, and quotients above 1 (trunc(a/b) is not 0)."""
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    ty = t([m, n], dyn=True)
    a = rand(rng, (m, n), low=-5.0, high=5.0)
    b = (rand(rng, (m, n), low=0.7, high=2.0) * rng.choice([-1, 1], (m, n))).astype(np.float32)
    text = listing(f"%a: {ty}, %b: {ty}", f"  %y = rem(%a, %b) -> {ty}", "%y", ty)
    check_grad(text, {"%a": a, "%b": b, "%r": rand(rng, (m, n))}, ["%a", "%b"])


def _dyn2(m: int, n: int, k: int = 2) -> str:
    """A rank-3 type whose first two dims are dynamic (@S0, @S1)."""
    return f"tensor<?x?x{k}, [@S0, @S1, @C{k}]>"


# Ops of selection, layout, introspection and addressing: (args, body, result shape or
# type text) per (m, n); the first dim of each arg is dynamic (@S0) unless it says a type.
LAYOUT_CASES = {
    "reverse": lambda m, n: ({"%x": [m, n, 2]},
                             f"  %y = reverse(%x) {{dims = [0, 2]}} -> {t([m, n, 2], dyn=True)}",
                             t([m, n, 2], dyn=True)),
    "split_dim": lambda m, n: ({"%x": [m, 6]},
                               f"  %y = split_dim(%x) {{dim = 1, sizes = [2, 3]}} -> "
                               f"{t([m, 2, 3], dyn=True)}", t([m, 2, 3], dyn=True)),
    "split_dim_dynamic": lambda m, n: (
        {"%x": [2 * m, n]}, f"  %y = split_dim(%x) {{dim = 0, sizes = [-1, 2]}} -> "
        f"tensor<?x2x{n}>", f"tensor<?x2x{n}>"),
    "merge_dims": lambda m, n: ({"%x": [m, n, 2]},
                                "  %y = merge_dims(%x) {dim = 0, count = 2} -> tensor<?x2>",
                                "tensor<?x2>"),
    "merge_dims_two_dynamic": lambda m, n: (
        {"%x": _dyn2(m, n)}, "  %y = merge_dims(%x) {dim = 0, count = 2} -> tensor<?x2>",
        "tensor<?x2>"),
    "merge_dims_trailing": lambda m, n: (
        {"%x": [m, n, 2]}, f"  %y = merge_dims(%x) {{dim = 1, count = 2}} -> "
        f"{t([m, 2 * n], dyn=True)}", t([m, 2 * n], dyn=True)),
    "broadcast_like": lambda m, n: (
        {"%x": f"tensor<{n}>", "%ref": [m, n]},
        f"  %y = broadcast_like(%x, %ref) {{dims = [1], source = [0, 0], axis = [0, 1]}} -> "
        f"{t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "cumulative": lambda m, n: ({"%x": [m, n]},
                                f"  %y = cumulative(%x) {{dim = 0}} -> {t([m, n], dyn=True)}",
                                t([m, n], dyn=True)),
    "cumulative_reverse": lambda m, n: (
        {"%x": [m, n, 3]}, f"  %y = cumulative(%x) {{dim = 2, reverse = true}} -> "
        f"{t([m, n, 3], dyn=True)}", t([m, n, 3], dyn=True)),
    "cumulative_max": lambda m, n: (
        {"%x": [m, n]}, f"  %y = cumulative(%x) {{dim = 1, kind = \"max\"}} -> "
        f"{t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "cumulative_min_reverse": lambda m, n: (
        {"%x": [m, n, 2]}, f"  %y = cumulative(%x) {{dim = 0, kind = \"min\", reverse = true}}"
        f" -> {t([m, n, 2], dyn=True)}", t([m, n, 2], dyn=True)),
    "cumulative_prod": lambda m, n: (
        {"%x": [m, n]}, f"  %y = cumulative(%x) {{dim = 0, kind = \"prod\"}} -> "
        f"{t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "cumulative_prod_reverse": lambda m, n: (
        {"%x": [m, n]}, f"  %y = cumulative(%x) {{dim = 1, kind = \"prod\", reverse = true}}"
        f" -> {t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "cumulative_logsumexp": lambda m, n: (
        {"%x": [m, n, 2]}, f"  %y = cumulative(%x) {{dim = 1, kind = \"logsumexp\"}} -> "
        f"{t([m, n, 2], dyn=True)}", t([m, n, 2], dyn=True)),
    "cumulative_logsumexp_reverse": lambda m, n: (
        {"%x": [m, n]}, f"  %y = cumulative(%x) {{dim = 0, kind = \"logsumexp\", "
        f"reverse = true}} -> {t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "sort": lambda m, n: ({"%x": [m, n]},
                          f"  %y = sort(%x) {{dim = 0}} -> {t([m, n], dyn=True)}",
                          t([m, n], dyn=True)),
    # two keys (the first has ties), a float payload: every operand gets its share
    "sort_keys_and_values": lambda m, n: (
        {"%x": [m, n], "%v": [m, n]},
        f"  %k = round(%x) -> {t([m, n], dyn=True)}\n"
        f"  %a, %b, %y = sort(%k, %v, %x) {{dim = 1, num_keys = 2}} -> {t([m, n], dyn=True)}, "
        f"{t([m, n], dyn=True)}, {t([m, n], dyn=True)}\n"
        f"  %w = mul(%b, %y) -> {t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "top_k": lambda m, n: ({"%x": [m, n + 2]},
                           f"  %y, %i = top_k(%x) {{k = 2}} -> {t([m, 2], dyn=True)}, "
                           f"{t([m, 2], 'i32', dyn=True)}", t([m, 2], dyn=True)),
    # integer results pass nothing back; the float path beside them does
    "argmax": lambda m, n: (
        {"%x": [m, n]}, f"  %a = argmax(%x) {{dim = 1}} -> {t([m], 'i32', dyn=True)}\n"
        f"  %af = convert(%a) {{dtype = \"f32\"}} -> {t([m], dyn=True)}\n"
        f"  %s = reduce(%x) {{dims = [1]}} -> {t([m], dyn=True)}\n"
        f"  %y = mul(%s, %af) -> {t([m], dyn=True)}", t([m], dyn=True)),
    "argmin": lambda m, n: (
        {"%x": [m, n]}, f"  %a = argmin(%x) {{dim = 0}} -> {t([n], 'i32')}\n"
        f"  %af = convert(%a) {{dtype = \"f32\"}} -> {t([n])}\n"
        f"  %s = reduce(%x) {{dims = [0]}} -> {t([n])}\n"
        f"  %y = mul(%s, %af) -> {t([n])}", t([n])),
    # bits: no gradient through them (integers); the float path beside them gets its own
    "bits": lambda m, n: (
        {"%x": [m, n]},
        f"  %u = bitcast(%x) {{dtype = \"u32\"}} -> {t([m, n], 'u32', dyn=True)}\n"
        f"  %l = shift_left(%u, %u) -> {t([m, n], 'u32', dyn=True)}\n"
        f"  %s = shift_right_logical(%u, %l) -> {t([m, n], 'u32', dyn=True)}\n"
        f"  %a = bit_and(%s, %l) -> {t([m, n], 'u32', dyn=True)}\n"
        f"  %o = bit_or(%a, %u) -> {t([m, n], 'u32', dyn=True)}\n"
        "  %k = constant() {value = 7} -> tensor<2xu32>\n"
        f"  %h, %g = threefry(%k, %o, %u) -> {t([m, n], 'u32', dyn=True)}, "
        f"{t([m, n], 'u32', dyn=True)}\n"
        f"  %b = bit_xor(%h, %g) -> {t([m, n], 'u32', dyn=True)}\n"
        f"  %bf = convert(%b) {{dtype = \"f32\"}} -> {t([m, n], dyn=True)}\n"
        f"  %y = mul(%x, %bf) -> {t([m, n], dyn=True)}", t([m, n], dyn=True)),
    "dim_size": lambda m, n: (
        {"%x": [m, n]}, f"  %c = dim_size(%x) {{dim = 0}} -> tensor<i32>\n"
        "  %cf = convert(%c) {dtype = \"f32\"} -> tensor<f32>\n"
        f"  %cb = broadcast_in_dim(%cf) {{dims = []}} -> {t([m, n], dyn=True)}\n"
        f"  %y = div(%x, %cb) -> {t([m, n], dyn=True)}", t([m, n], dyn=True)),
}


def _shape_of(text: str, m: int, n: int) -> tuple[int, ...]:
    """The runtime shape of a case's type text: ? dims are m (first) then n, as the cases
    build them (a split dynamic dim has m elements per part of 2)."""
    inner = text[len("tensor<"):].split(",")[0].rstrip(">")
    parts = [p for p in inner.split("x") if p and not p[0].isalpha()]
    fill = iter([m, n])
    return tuple(next(fill) if p == "?" else int(p) for p in parts)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_selection_and_layout_adjoints(case, seed):
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    args, body, out = LAYOUT_CASES[case](m, n)
    types = {k: v if isinstance(v, str) else t(v, dyn=True) for k, v in args.items()}
    text = listing(", ".join(f"{k}: {v}" for k, v in types.items()), body,
                   "%w" if "%w =" in body else "%y", out)
    shapes = {k: (tuple(v) if not isinstance(v, str) else
                  (m, n, 2) if v.startswith("tensor<?x?") else _shape_of(v, m, n))
              for k, v in args.items()}
    inputs = {k: rand(rng, s) for k, s in shapes.items()}
    if case.startswith("cumulative_prod"):  # a zero: the product rule, not y / x
        inputs["%x"].flat[rng.integers(inputs["%x"].size)] = 0.0
    if case == "sort_keys_and_values":
        inputs["%x"] = (inputs["%x"] * 1.5).astype(np.float32)  # round(x): ties in key 1
    unbound = {"split_dim_dynamic": (m, 2, n), "merge_dims": (m * n, 2),
               "merge_dims_two_dynamic": (m * n, 2)}  # result ?s that are not m or n
    out_shape = unbound.get(case) or _shape_of(out, m, n)
    inputs["%r"] = rand(rng, out_shape)
    check_grad(text, inputs, list(args))


SHAPE_CASES = {
    # name: (args with shapes, body, result, result type) built per seed
    "broadcast_in_dim": lambda m, n: (
        {"%x": [n]}, f"  %y = broadcast_in_dim(%x) {{dims = [1]}} -> {t([m, n])}", [m, n]),
    "broadcast_in_dim_ones": lambda m, n: (
        {"%x": [m, 1]}, f"  %y = broadcast_in_dim(%x) {{dims = [0, 1]}} -> {t([m, n])}", [m, n]),
    "broadcast_in_dim_permuted": lambda m, n: (
        {"%x": [m, n]}, f"  %y = broadcast_in_dim(%x) {{dims = [2, 0]}} -> {t([n, 3, m])}",
        [n, 3, m]),
    "broadcast": lambda m, n: ({"%x": [n]}, f"  %y = broadcast(%x) -> {t([m, n])}", [m, n]),
    "reshape": lambda m, n: ({"%x": [m, n]}, f"  %y = reshape(%x) -> {t([m * n])}", [m * n]),
    "dynamic_reshape": lambda m, n: (
        {"%x": [m, n]}, f"  %y = dynamic_reshape(%x) {{shape = \"%s\"}} -> {t([n, m])}", [n, m]),
    "transpose": lambda m, n: (
        {"%x": [m, n, 2]}, f"  %y = transpose(%x) {{perm = [2, 0, 1]}} -> {t([2, m, n])}",
        [2, m, n]),
    "concatenate": lambda m, n: (
        {"%x": [m, n], "%z": [m, 2]},
        f"  %y = concatenate(%x, %z) {{dim = 1}} -> {t([m, n + 2])}", [m, n + 2]),
    "slice": lambda m, n: (
        {"%x": [m + 3, n + 4]},
        f"  %y = slice(%x) {{start = [1, 2], limit = [{m + 2}, {n + 4}], strides = [2, 1]}}"
        f" -> {t([(m + 2) // 2, n + 2])}", [(m + 2) // 2, n + 2]),
    "dot": lambda m, n: ({"%x": [m, 3], "%z": [3, n]},
                         f"  %y = dot(%x, %z) -> {t([m, n])}", [m, n]),
    "dot_vector_matrix": lambda m, n: ({"%x": [m], "%z": [m, n]},
                                       f"  %y = dot(%x, %z) -> {t([n])}", [n]),
    "dot_matrix_vector": lambda m, n: ({"%x": [m, n], "%z": [n]},
                                       f"  %y = dot(%x, %z) -> {t([m])}", [m]),
    "dot_general_batched": lambda m, n: (
        {"%x": [2, m, 3], "%z": [2, 3, n]},
        f"  %y = dot_general(%x, %z) {{lhs_batch = [0], rhs_batch = [0], lhs_contract = [2], "
        f"rhs_contract = [1]}} -> {t([2, m, n])}", [2, m, n]),
    "dot_general_shuffled": lambda m, n: (
        {"%x": [3, 2, m, 4], "%z": [n, 4, 2, 3]},
        f"  %y = dot_general(%x, %z) {{lhs_batch = [1], rhs_batch = [2], lhs_contract = [3, 0], "
        f"rhs_contract = [1, 3]}} -> {t([2, m, n])}", [2, m, n]),
    "reduce_sum": lambda m, n: (
        {"%x": [m, 3, n]}, f"  %y = reduce(%x) {{dims = [0, 2]}} -> {t([3])}", [3]),
    "reduce_trailing": lambda m, n: ({"%x": [m, n]}, f"  %y = reduce(%x) -> {t([m])}", [m]),
    "reduce_max": lambda m, n: (
        {"%x": [m, n]}, f"  %y = reduce(%x) {{dims = [1], kind = \"max\"}} -> {t([m])}", [m]),
    "reduce_min": lambda m, n: (
        {"%x": [m, n]}, f"  %y = reduce(%x) {{dims = [0], kind = \"min\"}} -> {t([n])}", [n]),
    "reduce_prod": lambda m, n: (
        {"%x": [m, n]}, f"  %y = reduce(%x) {{dims = [1], kind = \"prod\"}} -> {t([m])}", [m]),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_shape_and_contraction_adjoints(case, seed):
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    args, body, out = SHAPE_CASES[case](m, n)
    text = listing(", ".join(f"{k}: {t(v)}" for k, v in args.items()), body, "%y", t(out))
    positive = case == "reduce_prod"
    inputs = {k: rand(rng, tuple(v), low=0.5 if positive else None, high=1.5)
              for k, v in args.items()}
    inputs["%r"] = rand(rng, tuple(out))
    check_grad(text, inputs, list(args))


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_adjoint(seed):
    """Repeated ids accumulate; ids from the end and out of range as the gather reads them."""
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    rows = 5
    body = f"  %y = gather(%tab, %ids) -> {t([m, n, 3], dyn=True)}"
    text = listing(f"%tab: {t([rows, 3])}, %ids: {t([m, n], 'i32', dyn=True)}", body, "%y",
                   t([m, n, 3], dyn=True))
    ids = rng.integers(-7, 9, (m, n)).astype(np.int32)
    check_grad(text, {"%tab": rand(rng, (rows, 3)), "%ids": ids,
                      "%r": rand(rng, (m, n, 3))}, ["%tab"])


@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_add_adjoint(seed):
    rng = np.random.default_rng(seed)
    m, _ = shape2(rng)
    body = f"  %y = scatter_add(%base, %ids, %u) -> {t([4, 3])}"
    text = listing(f"%base: {t([4, 3])}, %ids: {t([m], 'i32', dyn=True)}, "
                   f"%u: {t([m, 3], dyn=True)}", body, "%y", t([4, 3]))
    ids = rng.integers(-6, 7, (m,)).astype(np.int32)
    check_grad(text, {"%base": rand(rng, (4, 3)), "%ids": ids, "%u": rand(rng, (m, 3)),
                      "%r": rand(rng, (4, 3))}, ["%base", "%u"])


def _gather_slices_case(rng: np.random.Generator, m: int, mode: str) -> tuple:
    """Two gathers: windows of 3 rows (the whole of dim 1 by -1) at random, overlapping
    and partly out-of-range starts; and one element of each row of a dynamic-row x
    (``take_along_axis``: a batching dim), with repeated columns."""
    ty, ti = t([m, 6], dyn=True), t([m, 3, 1], "i32", dyn=True)
    tw, tz = t([7, 5]), t([m, 1], "i32", dyn=True)
    body = (f"  %w = gather_slices(%a, %s) {{offset_dims = [1, 2], collapsed_slice_dims = [], "
            f"start_index_map = [0], slice_sizes = [3, -1], mode = \"{mode}\"}} -> "
            f"{t([m, 3, 5], dyn=True)}\n"
            f"  %e = gather_slices(%x, %i) {{offset_dims = [], collapsed_slice_dims = [1], "
            f"start_index_map = [1], operand_batching_dims = [0], start_indices_batching_dims "
            f"= [0], slice_sizes = [1, 1], mode = \"{mode}\"}} -> {t([m, 3], dyn=True)}\n"
            f"  %ws = reduce(%w) {{dims = [1, 2]}} -> {t([m], dyn=True)}\n"
            f"  %wb = broadcast_in_dim(%ws) {{dims = [0]}} -> {t([m, 3], dyn=True)}\n"
            f"  %y = add(%e, %wb) -> {t([m, 3], dyn=True)}")
    args = f"%a: {tw}, %s: {tz}, %x: {ty}, %i: {ti}"
    inputs = {"%a": rand(rng, (7, 5)), "%s": rng.integers(-1, 7, (m, 1)).astype(np.int32),
              "%x": rand(rng, (m, 6)), "%i": rng.integers(-1, 7, (m, 3, 1)).astype(np.int32),
              "%r": rand(rng, (m, 3))}
    return listing(args, body, "%y", t([m, 3], dyn=True)), inputs, ["%a", "%x"]


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("seed", SEEDS)
def test_gather_slices_adjoint(seed, mode):
    rng = np.random.default_rng(seed)
    m, _ = shape2(rng)
    text, inputs, wrt = _gather_slices_case(rng, m + 1, mode)
    got = check_grad(text, inputs, wrt)
    assert np.abs(got["%a"]).sum() > 0 and np.abs(got["%x"]).sum() > 0


def _scatter_slices_case(rng: np.random.Generator, m: int, kind: str, mode: str) -> tuple:
    """Two scatters: windows of 2 rows of a static base at starts from a dynamic list;
    and one element into each row of a dynamic-row base (a batching dim). For set and mul
    the starts are distinct and the windows do not overlap (JAX differentiates those only
    so); for add, min and max they repeat and overlap."""
    unique = kind in ("set", "mul")
    tb, ts, tu = t([2 * m + 2, 4]), t([m, 1], "i32", dyn=True), t([m, 2, 4], dyn=True)
    tx, ti, tv = t([m, 5], dyn=True), t([m, 2, 1], "i32", dyn=True), t([m, 2], dyn=True)
    body = (f"  %w = scatter_slices(%a, %s, %u) {{update_window_dims = [1, 2], "
            f"scatter_dims_to_operand_dims = [0], kind = \"{kind}\", mode = \"{mode}\"}} "
            f"-> {tb}\n"
            f"  %e = scatter_slices(%x, %i, %v) {{update_window_dims = [], inserted_window_dims "
            f"= [1], scatter_dims_to_operand_dims = [1], operand_batching_dims = [0], "
            f"scatter_indices_batching_dims = [0], kind = \"{kind}\", mode = \"{mode}\"}} "
            f"-> {tx}\n"
            f"  %ws = reduce(%w) -> {t([2 * m + 2])}\n"
            f"  %es = reduce(%e) {{dims = [0]}} -> {t([5])}\n"
            f"  %wb = broadcast_in_dim(%ws) {{dims = [0]}} -> {t([2 * m + 2, 5])}\n"
            f"  %eb = broadcast_in_dim(%es) {{dims = [1]}} -> {t([2 * m + 2, 5])}\n"
            f"  %y = mul(%wb, %eb) -> {t([2 * m + 2, 5])}")
    if unique:
        starts = 2 * rng.permutation(m + 1)[:m, None]
        cols = np.stack([rng.permutation(5)[:2] for _ in range(m)])[..., None]
    else:
        # JAX's min/max rule reads the windows back in fill mode whatever the scatter's:
        # a clamped start would differ there, so clip-mode starts are in range
        lo = 0 if kind in ("min", "max") and mode == "clip" else -1
        starts = rng.integers(lo, 2 * m + 1 - lo, (m, 1))
        cols = rng.integers(lo, 5 - lo, (m, 2, 1))
    # scatter_mul's gradient grows with the products: updates near 1 keep it in range
    low, high = (0.5, 1.5) if kind == "mul" else (None, None)
    inputs = {"%a": rand(rng, (2 * m + 2, 4)), "%s": starts.astype(np.int32),
              "%u": rand(rng, (m, 2, 4), low=low, high=high), "%x": rand(rng, (m, 5)),
              "%i": cols.astype(np.int32), "%v": rand(rng, (m, 2), low=low, high=high),
              "%r": rand(rng, (2 * m + 2, 5))}
    args = f"%a: {tb}, %s: {ts}, %u: {tu}, %x: {tx}, %i: {ti}, %v: {tv}"
    return listing(args, body, "%y", t([2 * m + 2, 5])), inputs


@pytest.mark.parametrize("kind", ["set", "add", "min", "max", "mul"])
@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_slices_adjoint(seed, kind):
    rng = np.random.default_rng(seed)
    m, _ = shape2(rng)
    text, inputs = _scatter_slices_case(rng, m, kind, "clip" if seed != 1 else "fill")
    if kind == "mul":   # jax.grad refuses scatter_mul's updates (no unique_indices flag)
        check_grad(text, inputs, ["%a", "%x"])
        _check_scatter_mul_updates(text, inputs)
    else:
        check_grad(text, inputs, ["%a", "%u", "%x", "%v"])


def _check_scatter_mul_updates(text: str, inputs: dict[str, np.ndarray]) -> None:
    """The updates' cotangent of a scatter-mul against jax.grad of the same listing with
    the scatters declared unique (what JAX needs to differentiate them)."""
    import jax
    import jax.numpy as jnp
    train = run_pipeline(parse_module(text, "<test>"), parse_pipeline("grad{wrt=%u,%v}"))
    outs, _ = Executor(train, JaxBackend()).run(inputs)
    dn = jax.lax.ScatterDimensionNumbers((1, 2), (), (0,))
    bn = jax.lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))

    def loss(u, v):
        w = jax.lax.scatter_mul(inputs["%a"], inputs["%s"], u, dn, unique_indices=True)
        e = jax.lax.scatter_mul(inputs["%x"], inputs["%i"], v, bn, unique_indices=True)
        return (jnp.outer(w.sum(1), e.sum(0)) * inputs["%r"]).sum()
    want = jax.grad(loss, argnums=(0, 1))(inputs["%u"], inputs["%v"])
    for name, ref in zip(("u", "v"), want):
        np.testing.assert_allclose(outs[f"%grad_{name}"], ref, rtol=RTOL, atol=ATOL)


def _window_out(shape: list[int], window: list[int], strides: list[int], pads: list[int],
                base: list[int], dil: list[int]) -> list[int]:
    return [((n - 1) * bd + 1 + pads[2 * j] + pads[2 * j + 1] - ((k - 1) * d + 1)) // s + 1
            for j, (n, k, s, bd, d) in enumerate(zip(shape, window, strides, base, dil))]


# kind, window, strides, padding, base dilation, window dilation (rank 3; the first dim
# dynamic where every stride over it is 1)
REDUCE_WINDOW_CASES = {
    "sum_dynamic": ("sum", [1, 3, 2], [1, 1, 1], [0, 0, 1, 1, 0, 1], [1, 1, 1], [1, 1, 1]),
    "sum_strided_dilated": ("sum", [2, 3, 2], [2, 2, 3], [1, 0, 0, 1, 2, 1], [1, 2, 1],
                            [1, 1, 2]),
    "sum_base_dilated_dynamic": ("sum", [2, 2, 1], [1, 1, 1], [0, 1, 0, 0, 0, 0], [2, 1, 1],
                                 [1, 2, 1]),
    "max_dynamic": ("max", [1, 2, 3], [1, 2, 1], [0, 0, 0, 1, 1, 1], [1, 1, 1], [1, 1, 1]),
    "max_strided": ("max", [2, 3, 3], [2, 2, 2], [0, 1, 1, 1, 1, 1], [1, 1, 1], [1, 1, 1]),
    "min_dynamic": ("min", [2, 2, 2], [1, 2, 1], [1, 0, 0, 1, 0, 0], [1, 1, 1], [1, 1, 1]),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", sorted(REDUCE_WINDOW_CASES))
def test_reduce_window_adjoint(case, seed):
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    kind, window, strides, pads, base, dil = REDUCE_WINDOW_CASES[case]
    shape = [m + 2, 7, n + 5]
    out = _window_out(shape, window, strides, pads, base, dil)
    dyn = strides[0] == 1
    attrs = (f"kind = \"{kind}\", window = {window}, strides = {strides}, padding = {pads}, "
             f"base_dilation = {base}, window_dilation = {dil}")
    ty = t(out, dyn=dyn)
    if dyn and out[0] != shape[0]:  # another dynamic dim than x's: the analysis names it
        ty = "tensor<?x" + "x".join(map(str, out[1:])) + ">"
    body = f"  %y = reduce_window(%x) {{{attrs}}} -> {ty}"
    text = listing(f"%x: {t(shape, dyn=dyn)}", body, "%y", ty)
    check_grad(text, {"%x": rand(rng, tuple(shape)), "%r": rand(rng, tuple(out))}, ["%x"])


# window, strides, padding (rank 3, the first dim dynamic where its stride is 1)
SELECT_SCATTER_CASES = {
    "dynamic_overlapping": ([1, 2, 3], [1, 2, 1], [0, 0, 0, 1, 1, 1]),
    "strided_overlapping": ([2, 3, 2], [2, 2, 1], [0, 1, 1, 1, 0, 0]),
    "dynamic_tiled": ([2, 2, 1], [1, 2, 1], [1, 0, 0, 1, 0, 0]),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", sorted(SELECT_SCATTER_CASES))
def test_select_and_scatter_add_adjoint(case, seed):
    """The source's cotangent is g at each window's first largest; x gets none (zeros, as
    JAX)."""
    rng = np.random.default_rng(seed)
    m, n = shape2(rng)
    window, strides, pads = SELECT_SCATTER_CASES[case]
    shape = [m + 2, 7, n + 4]
    src = _window_out(shape, window, strides, pads, [1] * 3, [1] * 3)
    dyn = strides[0] == 1 and src[0] == shape[0]
    attrs = f"window = {window}, strides = {strides}, padding = {pads}"
    body = f"  %y = select_and_scatter_add(%s, %x) {{{attrs}}} -> {t(shape, dyn=dyn)}"
    text = listing(f"%s: {t(src, dyn=dyn)}, %x: {t(shape, dyn=dyn)}", body, "%y",
                   t(shape, dyn=dyn))
    inputs = {"%s": rand(rng, tuple(src)), "%x": rand(rng, tuple(shape)),
              "%r": rand(rng, tuple(shape))}
    got = check_grad(text, inputs, ["%s", "%x"])
    assert np.abs(got["%s"]).min() > 0   # every window picks a real element
    # ties in most windows: the op (and its lowerings) picks the first largest, and so
    # must its adjoint; jax.grad's select_and_gather_add differs there in padded windows
    inputs["%x"] = np.round(inputs["%x"]).astype(np.float32)
    train = run_pipeline(parse_module(text), parse_pipeline("grad{wrt=%s}"))
    for backend in (JaxBackend(), NumpyBackend()):
        outs, _ = Executor(train, backend).run(inputs)
        np.testing.assert_allclose(outs["%grad_s"], _first_largest(inputs["%x"], inputs["%r"],
                                                                   window, strides, pads))


def _first_largest(x: np.ndarray, g: np.ndarray, window: list[int], strides: list[int],
                   pads: list[int]) -> np.ndarray:
    """g at the first largest element (row-major) of each window of x padded with -inf."""
    from numpy.lib.stride_tricks import sliding_window_view
    width = [(pads[2 * j], pads[2 * j + 1]) for j in range(x.ndim)]
    xp = np.pad(x, width, constant_values=-np.inf)
    gp = np.pad(g, width)
    steps = tuple(slice(None, None, s) for s in strides)
    xw = sliding_window_view(xp, window)[steps]
    gw = sliding_window_view(gp, window)[steps]
    flat = xw.reshape(xw.shape[:x.ndim] + (-1,))
    pick = np.argmax(flat, axis=-1)[..., None]
    return np.take_along_axis(gw.reshape(flat.shape), pick, axis=-1)[..., 0]


# lhs shape and spec, rhs shape and spec, out spec, strides, padding, lhs and rhs dilation,
# feature and batch groups; the first dim of lhs (and of the result) dynamic where "dyn"
CONV_CASES = {
    "nhwc_dynamic_batch": ([0, 6, 5, 3], [0, 3, 1, 2], [3, 2, 3, 4], [3, 2, 0, 1],
                           [0, 3, 1, 2], [1, 1], [1, 1, 0, 1], [1, 1], [1, 1], 1, 1, "dyn"),
    "nchw_strided_dilated": ([2, 3, 9, 0], [0, 1, 2, 3], [4, 3, 2, 3], [0, 1, 2, 3],
                             [0, 1, 2, 3], [2, 1], [1, 2, 0, 0], [1, 2], [2, 1], 1, 1, ""),
    "dynamic_width": ([0, 2, 3], [1, 2, 0], [4, 3, 3], [0, 1, 2], [1, 2, 0], [1], [1, 1],
                      [1], [1], 1, 1, "dyn"),
    "feature_groups": ([3, 4, 0], [0, 1, 2], [6, 2, 3], [0, 1, 2], [0, 2, 1], [2], [1, 0],
                       [1], [1], 2, 1, ""),
    "batch_groups": ([4, 3, 0], [0, 1, 2], [4, 3, 2], [0, 1, 2], [0, 1, 2], [1], [0, 1],
                     [1], [2], 1, 2, ""),
}


def _conv_out(lhs, ls, rhs, rs, os, strides, pads, ld, rd, fg, bg) -> list[int]:
    out = [0] * len(lhs)
    out[os[0]], out[os[1]] = lhs[ls[0]] // bg, rhs[rs[0]]
    for i in range(len(lhs) - 2):
        span = (lhs[ls[2 + i]] - 1) * ld[i] + 1 + pads[2 * i] + pads[2 * i + 1]
        out[os[2 + i]] = (span - ((rhs[rs[2 + i]] - 1) * rd[i] + 1)) // strides[i] + 1
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_adjoint(case, seed):
    """Against jax.grad of lax.conv_general_dilated: the 0 in a case's lhs shape is drawn
    at random (4 to 9), so that strides and dilations meet uneven sizes."""
    rng = np.random.default_rng(seed)
    lhs, ls, rhs, rs, os, strides, pads, ld, rd, fg, bg, dyn = CONV_CASES[case]
    lhs = [int(rng.integers(4, 10)) if n == 0 else n for n in lhs]
    if dyn:
        lhs[0] = int(rng.integers(1, 7))
    out = _conv_out(lhs, ls, rhs, rs, os, strides, pads, ld, rd, fg, bg)
    attrs = (f"lhs_spec = {ls}, rhs_spec = {rs}, out_spec = {os}, strides = {strides}, "
             f"padding = {pads}, lhs_dilation = {ld}, rhs_dilation = {rd}, "
             f"feature_groups = {fg}, batch_groups = {bg}")
    tout = t(out, dyn=bool(dyn))
    body = f"  %y = conv(%x, %k) {{{attrs}}} -> {tout}"
    text = listing(f"%x: {t(lhs, dyn=bool(dyn))}, %k: {t(rhs)}", body, "%y", tout)
    check_grad(text, {"%x": rand(rng, tuple(lhs)), "%k": rand(rng, tuple(rhs)),
                      "%r": rand(rng, tuple(out))}, ["%x", "%k"])


SCAN_LOSS = """
func.func @main(%w: tensor<4x4>, %k: tensor<i32>, %h0: tensor<?x4, [@S0, @C4]>, %xs: tensor<?x?x4, [@S1, @S0, @C4]>) {
  %h, %hs, %ks = scan(%w, %k, %h0, %xs) {num_consts = 2, num_carry = 1REVERSE} -> tensor<?x4>, tensor<?x?x4>, tensor<?xi32> body {
    %bw = loop.arg() {index = 0} -> tensor<4x4>
    %bk = loop.arg() {index = 1} -> tensor<i32>
    %c = loop.arg() {index = 2} -> tensor<?x4>
    %x = loop.arg() {index = 3} -> tensor<?x4>
    %d = dot(%c, %bw) -> tensor<?x4>
    %s = add(%d, %x) -> tensor<?x4>
    %n = tanh(%s) -> tensor<?x4>
    %y = mul(%n, %x) -> tensor<?x4>
    loop.yield(%n, %y, %bk)
  }
  %a = reduce(%hs) {dims = [0, 1, 2]} -> tensor<f32>
  %q = mul(%h, %h) -> tensor<?x4>
  %b = reduce(%q) {dims = [0, 1]} -> tensor<f32>
  %loss = add(%a, %b) -> tensor<f32>
  return %loss
}
"""


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_scan_adjoint(reverse):
    """A reverse loop over the carries a replay of the forward loop saves: gradients of
    the constant, the initial carry and the scanned input (an integer constant and an
    integer stacked output carry none), over 5 steps and over 1."""
    text = SCAN_LOSS.replace("REVERSE", ", reverse = true" if reverse else "")
    rng = np.random.default_rng(7)
    for steps in (5, 1):
        check_grad(text, {"%w": rand(rng, (4, 4)) * 0.5, "%k": np.int32(3),
                          "%h0": rand(rng, (3, 4)), "%xs": rand(rng, (steps, 3, 4))},
                   ["%w", "%h0", "%xs"])


# Which cases cover which op: every op with a float input must be tested.
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
# their shard_map lowering (tests/test_sharded_run.py, tests/sharded_check.py grads).
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


def test_default_trains_every_static_float_input():
    """%x and %y have a dynamic dim: data. %w and %bias are the weights."""
    train = run_pipeline(parse_module(MLP), parse_pipeline("grad"))
    assert train.main.returns == ["%loss", "%grad_w", "%grad_bias"]
    types = train.main.value_types()
    assert types["%grad_w"].dims == (8, 4) and types["%grad_bias"].dims == (4,)


def test_cli_optimize_grad_round_trips_and_run_matches_jax_grad(tmp_path):
    """The acceptance test: optimize -p grad prints a training listing that parses,
    verifies and prints the same; run of it gives jax.grad's gradients."""
    import jax
    src = tmp_path / "mlp.mlir"
    src.write_text(MLP)
    res = invoke(["optimize", "-p", "grad", str(src)])
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
    and saves the rest; save=auto also recomputes %g = logistic(%p) from %p, which the
    backward keeps anyway (mul's adjoint reads it), and %u = tanh(%t) by the chain of
    cheap ops back to %p and %s2. Dots are never recomputed."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.symbolic.shapes import analyze_shapes
    forward = len(parse_module(SCALED).main.ops)
    every = run_pipeline(parse_module(SCALED), parse_pipeline("grad"))
    auto = run_pipeline(parse_module(SCALED), parse_pipeline("grad{save=auto}"))
    for module in (every, auto):
        made = {r.name: op for op in module.main.ops for r in op.results}
        assert made["%h.r0"].name == "broadcast_in_dim" and made["%h.r0"].operands == ["%s2"]
        assert not any(n.startswith("%p.") for n in made)
        backward = module.main.ops[forward:]
        assert "%h" not in {n for op in backward for n in op.operands}
    assert {r.name for op in every.main.ops for r in op.results if ".r" in r.name} == {"%h.r0"}
    made = {r.name: op for op in auto.main.ops for r in op.results}
    assert made["%g.r0"].name == "logistic" and made["%g.r0"].operands == ["%p"]
    assert made["%u.r0"].name == "tanh"
    rng = np.random.default_rng(0)
    x = {"%x": rand(rng, (5, 64)), "%w": rand(rng, (64, 64)) / 8}
    a, _ = Executor(every, NumpyBackend()).run(x)
    b, _ = Executor(auto, NumpyBackend()).run(x)
    assert all(np.array_equal(a[k], b[k]) for k in a)  # the same ops on the same values
    for s0 in (1, 64, 4096):
        peaks = [exact_peak(m.main, exact_sizes(analyze_shapes(m), {"S0": s0}))
                 for m in (every, auto)]
        assert peaks[1] <= peaks[0], s0  # strictly lower on the Llama (test_grad_llama)


def test_the_llama_backward_reads_no_forward_broadcast():
    """samples/llama-loss-small.mlir broadcasts with the importer's ``broadcast_like``
    (a scalar scale and per-row sums to [B, H, S, S]): the backward makes each again from
    what it reads instead of keeping it (kept, they took grad's device peak at 8x256 from
    62.6 to 78.6 MiB, above the imported value_and_grad step's 64.1)."""
    from pathlib import Path

    from bladec.analysis.memory import exact_sizes
    from bladec.symbolic.shapes import analyze_shapes
    fills = {"broadcast", "broadcast_in_dim", "broadcast_like", "constant", "iota"}
    path = Path(__file__).resolve().parent.parent / "samples" / "llama-loss-small.mlir"
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
