"""Adjoint rules of the elementwise, special-function and conversion ops, each against
``jax.grad`` of the op's own JAX lowering (tests/support/gradcheck.py says how)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.gradcheck import SEEDS, check_grad, listing, rand, shape2, t

UNARY_DOMAIN = {"log": (0.5, 2.0), "sqrt": (0.5, 2.0), "rsqrt": (0.5, 2.0)}


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
