"""Adjoint rules of the indexing (gather, scatter and their slice forms), window,
convolution and loop ops, each against ``jax.grad`` of the op's own JAX lowering
(tests/support/gradcheck.py says how)."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

from tests.support.gradcheck import ATOL, RTOL, SEEDS, check_grad, listing, rand, shape2, t
from tests.support.order import one_order


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


_KINDS = ["set", "add", "min", "max", "mul"]


@pytest.mark.parametrize("seed, kind", [  # draw 1 is the one in mode "fill": `make test`
    # checks it on "set", `make bench` on the other kinds (issue 36)
    *((0, k) for k in _KINDS), (1, "set"),
    *(pytest.param(1, k, marks=pytest.mark.slow) for k in _KINDS if k != "set"),
    *(pytest.param(2, k, marks=pytest.mark.slow) for k in _KINDS)])
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
    with one_order():   # the numbers, not the order (as check_grad)
        outs, _ = Executor(train, JaxBackend()).run(inputs)
    dn = jax.lax.ScatterDimensionNumbers((1, 2), (), (0,))
    bn = jax.lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))

    def loss(u, v):
        w = jax.lax.scatter_mul(inputs["%a"], inputs["%s"], u, dn, unique_indices=True)
        e = jax.lax.scatter_mul(inputs["%x"], inputs["%i"], v, bn, unique_indices=True)
        return (jnp.outer(w.sum(1), e.sum(0)) * inputs["%r"]).sum()
    # jitted (as check_grad's reference): eagerly, each primitive compiled on its own
    want = jax.jit(jax.grad(loss, argnums=(0, 1)))(inputs["%u"], inputs["%v"])
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
@pytest.mark.parametrize("case", [  # two of the three windows: `make bench` (issue 36: 5 s)
    c if c == "dynamic_overlapping" else pytest.param(c, marks=pytest.mark.slow)
    for c in sorted(SELECT_SCATTER_CASES)])
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
        with one_order():   # the numbers, not the order (as check_grad)
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


@pytest.mark.parametrize("reverse", [  # reversed: `make bench` (issue 36)
    pytest.param(False, id="forward"),
    pytest.param(True, id="reverse", marks=pytest.mark.slow)])
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
