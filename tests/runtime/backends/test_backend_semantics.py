"""The NumPy backend means what the JAX backend means, on the inputs where they differed.

Each case is a listing, inputs chosen at the edges (ids out of range, integers to
negative powers, floats outside an integer type, negative axes, bf16 contractions) and
the values JAX gives; both backends must give them. Then, per element type, every op
the verifier accepts runs on both backends in one listing, and the two agree: what one
backend accepts the other runs too, with the same values.
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from contextlib import contextmanager
from typing import Iterator

import jax
import numpy as np
import pytest

from bladec.cli import main
from bladec.errors import BladecError
from bladec.parse import parse_module
from bladec.runtime.backends.backend import NumpyBackend, numpy_dtype
from bladec.runtime.store.executables import ExecutableStore
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.executor import Executor
from bladec.verify import verify

from tests.support.clirunner import make_runner

# values only: each listing at no limit in bladec's order alone (13.1 -> 5.4 s of CPU)
pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")

BACKENDS = {"jax": JaxBackend, "numpy": NumpyBackend}
BF16 = numpy_dtype("bf16")


def run(text: str, backend: str, **inputs: np.ndarray) -> dict[str, np.ndarray]:
    module = parse_module(text, "<test>")
    verify(module, runnable=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow to inf is the point
        outputs, _ = Executor(module, BACKENDS[backend]()).run(
            {f"%{k}": v for k, v in inputs.items()})
    return {k.lstrip("%"): np.asarray(v) for k, v in outputs.items()}


def i32(*values: int) -> np.ndarray:
    return np.array(values, np.int32)


IDS = i32(-5, -1, 0, 3, 4, 100)
CASES = {
    # JAX's table[ids]: -1 is the last row, -5 wraps to -1 and is clamped to row 0
    "gather_out_of_range": (
        "func.func @main(%t: tensor<4x2>, %i: tensor<6xi32>) {\n"
        "  %c = gather(%t, %i) -> tensor<6x2>\n  return %c\n}\n",
        {"t": np.arange(8, dtype=np.float32).reshape(4, 2), "i": IDS},
        np.arange(8, dtype=np.float32).reshape(4, 2)[[0, 3, 0, 3, 3, 3]]),
    # JAX's base.at[ids].add(u): -1 adds to row 3, ids -5, 4 and 100 are dropped
    "scatter_add_out_of_range": (
        "func.func @main(%b: tensor<4x2>, %i: tensor<6xi32>, %u: tensor<6x2>) {\n"
        "  %c = scatter_add(%b, %i, %u) -> tensor<4x2>\n  return %c\n}\n",
        {"b": np.zeros((4, 2), np.float32), "i": IDS, "u": np.ones((6, 2), np.float32)},
        np.array([[1, 1], [0, 0], [0, 0], [2, 2]], np.float32)),
    "dot_of_bf16": (
        "func.func @main(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>) {\n"
        "  %c = dot(%a, %b) -> tensor<2x2xbf16>\n  return %c\n}\n",
        {"a": np.array([[1, 2, 3], [4, 5, 6]], BF16),
         "b": np.array([[1, 0], [0, 1], [1, 1]], BF16)},
        np.array([[4, 5], [10, 11]], BF16)),
    "dot_general_negative_axes": (
        "func.func @main(%a: tensor<2x3>, %b: tensor<3x2>) {\n"
        "  %c = dot_general(%a, %b) {lhs_contract = [-1], rhs_contract = [-2]} -> tensor<2x2>\n"
        "  return %c\n}\n",
        {"a": np.array([[1, 2, 3], [4, 5, 6]], np.float32),
         "b": np.array([[1, 0], [0, 1], [1, 1]], np.float32)},
        np.array([[4, 5], [10, 11]], np.float32)),
    "pow_of_integers_negative_exponent": (
        "func.func @main(%x: tensor<8xi32>, %y: tensor<8xi32>) {\n"
        "  %c = pow(%x, %y) -> tensor<8xi32>\n  return %c\n}\n",
        {"x": i32(2, 3, -2, 1, -1, -1, 0, 3), "y": i32(-1, -2, -1, -3, -3, -2, -1, 4)},
        i32(0, 0, 0, 1, -1, 1, 0, 81)),
    # XLA's integer division: truncated, a/0 is -1; JAX divided in f32 (2^30+1 rounded)
    "div_of_integers": (
        "func.func @main(%x: tensor<7xi32>, %y: tensor<7xi32>) {\n"
        "  %c = div(%x, %y) -> tensor<7xi32>\n  return %c\n}\n",
        {"x": i32(7, -7, 7, -7, 5, 0, 2 ** 30 + 1), "y": i32(2, 2, -2, -2, 0, 0, 1)},
        i32(3, -3, -3, 3, -1, -1, 2 ** 30 + 1)),
    "div_of_u8_by_zero": (
        "func.func @main(%x: tensor<2xu8>, %y: tensor<2xu8>) {\n"
        "  %c = div(%x, %y) -> tensor<2xu8>\n  return %c\n}\n",
        {"x": np.array([7, 200], np.uint8), "y": np.array([0, 3], np.uint8)},
        np.array([255, 66], np.uint8)),
    # XLA's float to integer conversion saturates; NumPy's wraps or gives INT_MIN
    "convert_float_to_u8_saturates": (
        "func.func @main(%x: tensor<9xf32>) {\n"
        "  %c = convert(%x) {dtype = \"u8\"} -> tensor<9xu8>\n  return %c\n}\n",
        {"x": np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 300, -1], np.float32)},
        np.array([0, 255, 0, 255, 0, 2, 0, 255, 0], np.uint8)),
    "convert_float_to_i32_saturates": (
        "func.func @main(%x: tensor<9xf32>) {\n"
        "  %c = convert(%x) {dtype = \"i32\"} -> tensor<9xi32>\n  return %c\n}\n",
        {"x": np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 300, -1], np.float32)},
        i32(0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31, 2, -2, 300, -1)),
    "integer_pow_of_integers_wraps": (
        "func.func @main(%x: tensor<3xi32>) {\n"
        "  %c = integer_pow(%x) {exponent = 33} -> tensor<3xi32>\n  return %c\n}\n",
        {"x": i32(2, -1, 3)}, i32(0, -1, np.int32(3) ** np.int32(33))),
    "constant_30_digits_as_bf16": (
        "func.func @main() {\n"
        "  %c = constant() {value = 100000000000000000000000000000} -> tensor<2xbf16>\n"
        "  return %c\n}\n", {}, np.full(2, 1e29, BF16)),
}


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("name", list(CASES))
def test_backends_give_jax_values(name: str, backend: str):
    text, inputs, want = CASES[name]
    got = run(text, backend, **inputs)["c"]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# -- every op the verifier accepts, per element type, on both backends -------------------

DTYPES = ["f32", "f16", "bf16", "i32", "i8", "u8", "i1"]  # f64, i64: the last test
UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "abs", "sin", "cos",
         "square", "copy"]
BINARY = ["add", "sub", "mul", "div", "max", "min", "pow"]


def _edge_values(dtype: str, n: int) -> np.ndarray:
    if dtype == "i1":
        return np.arange(n) % 3 == 0
    pool = {"u8": [0, 1, 2, 3, 7, 200, 255, 5]}.get(
        dtype, [-3, -2, -1, 0, 1, 2, 3, 7] if dtype.startswith("i") else
        [-2.5, -1, -0.0, 0.0, 0.5, 1, 2, 3.25])
    return np.array([pool[(7 * k + 3) % len(pool)] for k in range(n)]).astype(numpy_dtype(dtype))


def _op_lines(dtype: str) -> list[str]:
    t = f"tensor<8x{dtype}>"
    lines = [f"%{op} = {op}(%a) -> {t}" for op in UNARY]
    lines += [f"%{op} = {op}(%a, %b) -> {t}" for op in BINARY]
    lines += [f"%ipow{k} = integer_pow(%a) {{exponent = {n}}} -> {t}"
              for k, n in enumerate((0, 1, 2, 3, 7, -1, -2))]
    lines += [f"%r{kind} = reduce(%m) {{dims = [1], kind = \"{kind}\"}} -> tensor<2x{dtype}>"
              for kind in ("sum", "max", "min", "prod")]
    lines += [f"%dot = dot(%m, %n) -> tensor<2x2x{dtype}>",
              f"%iota = iota() {{dim = 0}} -> tensor<300x{dtype}>",
              "%cmp = compare(%a, %b) {direction = \"LT\"} -> tensor<8xi1>",
              f"%sel = select(%p, %a, %b) -> {t}",
              f"%gat = gather(%m, %ids) -> tensor<8x4x{dtype}>",
              f"%sca = scatter_add(%m, %ids, %u) -> tensor<2x4x{dtype}>"]
    lines += [f"%k{k} = constant() {{value = {v}}} -> tensor<3x{dtype}>"
              for k, v in enumerate(("0", "1", "-1", "2.5", "-2.5", "300", "1e30"))]
    lines += [f"%to_{o} = convert(%a) -> tensor<8x{o}>" for o in DTYPES]
    return lines


def _accepted(dtype: str) -> tuple[str, list[str]]:
    """The listing of every op line the verifier takes for ``dtype``; the lines refused."""
    head = (f"func.func @main(%a: tensor<8x{dtype}>, %b: tensor<8x{dtype}>, "
            f"%m: tensor<2x4x{dtype}>, %n: tensor<4x2x{dtype}>, %p: tensor<8xi1>, "
            f"%ids: tensor<8xi32>, %u: tensor<8x4x{dtype}>) {{\n")
    kept, refused = [], []
    for line in _op_lines(dtype):
        try:
            verify(parse_module(head + f"  {line}\n}}\n"), runnable=True)
            kept.append(line)
        except BladecError:
            refused.append(line)
    names = ", ".join(line.split(" = ")[0] for line in kept)
    return head + "".join(f"  {line}\n" for line in kept) + f"  return {names}\n}}\n", refused


@pytest.mark.parametrize("dtype", DTYPES)
def test_both_backends_run_what_the_verifier_accepts_and_agree(dtype: str):
    text, refused = _accepted(dtype)
    assert len(refused) < 20
    inputs = {"a": _edge_values(dtype, 8), "b": _edge_values(dtype, 8)[::-1].copy(),
              "m": _edge_values(dtype, 8).reshape(2, 4), "n": _edge_values(dtype, 8).reshape(4, 2),
              "p": np.arange(8) % 2 == 0, "ids": i32(-5, -1, 0, 1, 2, 3, 4, 100),
              "u": np.resize(_edge_values(dtype, 8), (8, 4))}
    jax_out, np_out = run(text, "jax", **inputs), run(text, "numpy", **inputs)
    assert sorted(jax_out) == sorted(np_out)
    for name in jax_out:
        j, n = jax_out[name], np_out[name]
        assert j.dtype == n.dtype and j.shape == n.shape, name
        # transcendental ops and reductions may round differently (NumPy's f16 runs in
        # f16, XLA's in f32); integers and truth values must be equal
        tol = 0 if j.dtype.kind in "iub" else 1e-2 if j.dtype in (BF16, np.float16) else 1e-5
        np.testing.assert_allclose(j.astype(np.float64), n.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True, err_msg=name)


def test_refusals_are_the_types_jax_does_not_define():
    """Integer types refuse the float-only ops and negative integer_pow; i1 also refuses
    neg, sub, iota and scatter_add: exactly where JAX's lax raises."""
    refused = {d: {line.split(" = ")[0] for line in _accepted(d)[1]} for d in DTYPES}
    assert refused["f32"] == set()  # floats take everything
    float_only = {f"%{op}" for op in ("exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "sin",
                                      "cos")}
    assert refused["i32"] == float_only | {"%ipow5", "%ipow6", "%k6"}
    assert refused["u8"] == float_only | {"%ipow5", "%ipow6", "%k2", "%k4", "%k5", "%k6"}
    assert refused["i1"] >= float_only | {"%neg", "%sub", "%iota", "%sca", "%k3", "%k5"}


@contextmanager
def x64(on: bool) -> Iterator[None]:
    """JAX's 64-bit mode, set for the block (it is process-wide: restored after)."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


def test_64_bit_types_agree_in_jax_s_64_bit_mode():
    text = ("func.func @main(%a: tensor<2xi64>) {\n  %k = constant() {value = 1099511627776} "
            "-> tensor<2xi64>\n  %c = add(%a, %k) -> tensor<2xi64>\n  return %c\n}\n")
    a = np.array([1, 2], np.int64)
    with x64(True):
        got = run(text, "jax", a=a)["c"]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, run(text, "numpy", a=a)["c"])


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_convert_float_to_i64_runs(backend: str):
    """The saturation bounds of i64 (+-2^63) once overflowed JAX's int32 arguments."""
    text = ("func.func @main(%x: tensor<5xf32>) {\n"
            "  %c = convert(%x) {dtype = \"i64\"} -> tensor<5xi64>\n  return %c\n}\n")
    with x64(True):
        got = run(text, backend, x=np.array([2.7, -2.7, np.nan, 300, -1e9], np.float32))["c"]
    assert got.dtype == np.int64
    assert got.tolist() == [2, -2, 0, 300, -1_000_000_000]


# 64-bit element types on the JAX backend: JAX makes them 32-bit unless its 64-bit mode is
# on, so the backend refuses them at the value that has one (a located error, exit 1)
# where the mode is off. Found by a fuzz run that compared the two backends' outputs:
# i64 came back int32, and an f64 input ended in an internal error.
WIDE = """\
func.func @main(%a: tensor<4xf32>) {
  %c = constant() {value = 3000000000} -> tensor<4xi64>
  %i = iota() {dim = 0} -> tensor<4xi64>
  %s = add(%c, %i) -> tensor<4xi64>
  %w = convert(%a) {dtype = "f64"} -> tensor<4xf64>
  %b = mul(%w, %w) -> tensor<4xf64>
  return %s, %b
}
"""


def test_without_jax_64_bit_mode_a_wide_value_is_a_located_error(tmp_path) -> None:
    path = tmp_path / "wide.mlir"
    path.write_text(WIDE)
    with x64(False):
        with pytest.raises(BladecError) as err:
            Executor(parse_module(WIDE, str(path)), JaxBackend())
        assert str(err.value).startswith(f"{path}:2:3: error: '%c' is i64")
        result = make_runner().invoke(main, ["run", str(path), "--compilation-cache", "off"])
        assert result.exit_code == 1
        assert "JAX_ENABLE_X64=1" in result.stderr and "Traceback" not in result.output
        assert make_runner().invoke(main, ["run", str(path), "--backend", "numpy"]
                                    ).exit_code == 0


def test_with_jax_64_bit_mode_wide_values_run_as_on_numpy() -> None:
    inputs = {"%a": np.array([1.5, -2.0, 3.25, 1e20], np.float32)}
    expected, _ = Executor(parse_module(WIDE), NumpyBackend()).run(inputs)
    with x64(True):
        outputs, _ = Executor(parse_module(WIDE), JaxBackend()).run(inputs)
        outputs = {k: np.asarray(v) for k, v in outputs.items()}
    for name in ("%s", "%b"):
        assert outputs[name].dtype == expected[name].dtype
        assert outputs[name].tobytes() == expected[name].tobytes()
    assert outputs["%s"][0] == 3_000_000_000   # past i32's range: not wrapped
    assert 1e39 < outputs["%b"][3] < 1e41        # past f32's range: not inf


def test_jax_s_configuration_is_part_of_an_executable_s_key(tmp_path) -> None:
    store = ExecutableStore(str(tmp_path))
    segment = ((("add", "[]", (), ()),), (), (), ())
    with x64(False):
        narrow = store.key(JaxBackend(), segment, {})
    with x64(True):
        wide = store.key(JaxBackend(), segment, {})
    assert narrow != wide


def test_rng_uniform_draws_the_same_numbers_on_both_backends():
    """NumPy drew from its own generator: the same listing gave other numbers there
    (found by the fuzz run that compared the backends). Both draw JAX's now."""
    text = ("func.func @main() {\n"
            "  %a = rng_uniform() {seed = 7} -> tensor<3x5xf32>\n"
            "  %b = rng_uniform() {seed = 9223372036854775807} -> tensor<4xbf16>\n"
            "  %c = rng_uniform() {seed = 0} -> tensor<2xf16>\n"
            "  return %a, %b, %c\n}\n")
    jax_out, numpy_out = run(text, "jax"), run(text, "numpy")
    for name in ("a", "b", "c"):
        assert numpy_out[name].dtype == jax_out[name].dtype
        assert numpy_out[name].tobytes() == jax_out[name].tobytes()
    assert 0 <= numpy_out["a"].min() and numpy_out["a"].max() < 1
    assert len(set(numpy_out["a"].ravel().tolist())) == 15


def test_a_sharded_listing_s_wide_value_is_refused_as_well(tmp_path) -> None:
    """The mesh backend runs on JAX too: the same refusal, at the same place (in a
    process of its own: the mesh's devices are set before JAX starts)."""
    path = tmp_path / "mesh64.mlir"
    path.write_text("mesh {x = 2}\nfunc.func @main(%a: tensor<8xf64, {x}>) {\n"
                    "  %b = add(%a, %a) -> tensor<8xf64, {x}>\n  return %b\n}\n")
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    done = subprocess.run([sys.executable, "-m", "bladec", "run", str(path), "-q"],
                          capture_output=True, text=True, env={**env, "JAX_PLATFORMS": "cpu"},
                          timeout=300)
    assert done.returncode == 1
    assert done.stderr.startswith(f"{path}:2:1: error: '%a' is f64: 64-bit element types")
