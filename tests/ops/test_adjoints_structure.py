"""Adjoint rules of the layout, selection, shape and contraction ops, each against
``jax.grad`` of the op's own JAX lowering (tests/support/gradcheck.py says how); the
indexing, window, convolution and loop ops' are test_adjoints_indexing.py's."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.gradcheck import SEEDS, check_grad, listing, rand, shape2, t


def _dyn2(m: int, n: int, k: int = 2) -> str:
    """A rank-3 type whose first two dims are dynamic (@S0, @S1)."""
    return f"tensor<?x?x{k}, [@S0, @S1, @C{k}]>"


def _same_shape(name: str, attrs: str, *extra: int):
    """A one-operand op whose result has its operand's shape, [m, n, *extra]."""
    def case(m: int, n: int) -> tuple:
        shape = [m, n, *extra]
        return ({"%x": shape}, f"  %y = {name}(%x) {{{attrs}}} -> {t(shape, dyn=True)}",
                t(shape, dyn=True))
    return case


# Ops of selection, layout, introspection and addressing: (args, body, result shape or
# type text) per (m, n); the first dim of each arg is dynamic (@S0) unless it says a type.
LAYOUT_CASES = {
    "reverse": _same_shape("reverse", "dims = [0, 2]", 2),
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
    "cumulative": _same_shape("cumulative", "dim = 0"),
    "cumulative_reverse": _same_shape("cumulative", "dim = 2, reverse = true", 3),
    "cumulative_max": _same_shape("cumulative", 'dim = 1, kind = "max"'),
    "cumulative_min_reverse": _same_shape("cumulative", 'dim = 0, kind = "min", reverse = true',
                                          2),
    "cumulative_prod": _same_shape("cumulative", 'dim = 0, kind = "prod"'),
    "cumulative_prod_reverse": _same_shape("cumulative", 'dim = 1, kind = "prod", reverse = true'),
    "cumulative_logsumexp": _same_shape("cumulative", 'dim = 1, kind = "logsumexp"', 2),
    "cumulative_logsumexp_reverse": _same_shape("cumulative",
                                                'dim = 0, kind = "logsumexp", reverse = true'),
    "sort": _same_shape("sort", "dim = 0"),
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


# two reversed cumulative kinds `make bench` (issue 36: 5 s; their forward twins and the
# reversed sum and product stay)
_LAYOUT_SLOW = ("cumulative_min_reverse", "cumulative_logsumexp_reverse")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow)
                                  if c in _LAYOUT_SLOW else c for c in sorted(LAYOUT_CASES)])
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
    "slice_whole_dim": lambda m, n: (     # limit -1: dim 0 kept whole, whatever it is
        {"%x": [m, n + 4]},
        f"  %y = slice(%x) {{start = [0, 2], limit = [-1, {n + 4}]}} -> {t([m, n + 2])}",
        [m, n + 2]),
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
