"""Regression tests for the bugs the CLI fuzzer (tests/fuzz/test_fuzz.py) found, each reduced
to a small listing; each exited 3 or failed `optimize` with a message that had no place
in the listing."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bladec.analysis.version import log_grid
from bladec.cli import main
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.symbolic.shapes import analyze_shapes
from bladec.errors import BladecError
from bladec.verify import verify

from tests.support.clirunner import make_runner
from tests.support.paths import SAMPLES


@pytest.fixture
def runner() -> CliRunner:
    return make_runner()


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "f.mlir"
    path.write_text(text, encoding="utf-8")
    return str(path)


HUGE_RANGE = """\
func.func @main(%a: tensor<?x4, [@S0, @C4]>, %b: tensor<?x4, [@S1, @C4]>) {
  %c = exp(%a) -> tensor<?x4, [@S0, @C4]>
  %d = exp(%b) -> tensor<?x4, [@S1, @C4]>
  return %c, %d
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 3, max = 99999999999999999999999}
  SymbolicDim @S1 {min = 1, max = 10}
}
"""


def test_log_grid_stays_inside_a_huge_range(runner, tmp_path):
    """Was: "S0=100000000000000058720256 is outside its range" (float rounding at the top)."""
    info = analyze_shapes(parse_module(HUGE_RANGE))
    grid = log_grid(info)
    # inside the range (the bug stepped outside it); the top point is near the end, not
    # at it, since the sampler completes points through float-placed basis values
    assert 10**22 <= max(b["S0"] for b in grid) <= 99999999999999999999999
    assert min(b["S0"] for b in grid) == 3
    result = runner.invoke(main, ["optimize", _write(tmp_path, HUGE_RANGE)])
    assert result.exit_code == 0, result.stderr


# S1 is derived (S1 = S0 + 4, from the concatenation) but keeps its declared range
# [1, 10]: the corner S0 = 12 of the free symbol's range makes it 16.
DERIVED_RANGE = """\
func.func @main(%a: tensor<?, [@S0]>, %b: tensor<4>, %y: tensor<?, [@S1]>, %w: tensor<?x8, [@S0, @C8]>) {
  %c = concatenate(%b, %a) {dim = 0} -> tensor<?, [@S1]>
  %d = add(%c, %y) -> tensor<?, [@S1]>
  %e = exp(%w) -> tensor<?x8, [@S0, @C8]>
  %f = reduce(%e) {dims = [0], kind = "sum"} -> tensor<8>
  %g = reduce(%d) {dims = [0], kind = "sum"} -> tensor<f32>
  return %f, %g
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 12}
  SymbolicDim @S1 {min = 1, max = 10}
}
"""

# A product bound to a constant: S0*S1 = 1 is kept as a fact, true at one point only.
PRODUCT_FACT = """\
func.func @main(%x: tensor<1x8, [@S2, @C8]>, %p: tensor<?x8, [@S0, @C8]>) {
  %a = exp(%x) -> tensor<?x8, [@S2, @C8]>
  %b = exp(%p) -> tensor<?x8, [@S0, @C8]>
  %r = reduce(%b) {dims = [0], kind = "sum"} -> tensor<8>
  return %a, %r
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 1, max = 64}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
"""


@pytest.mark.parametrize("text", [DERIVED_RANGE, PRODUCT_FACT], ids=["derived", "fact"])
def test_schedule_skips_range_corners_the_relations_forbid(runner, tmp_path, text):
    """Was: optimize failing with "the binding makes S1 = 16, outside its range [1, 10]"
    or "the binding breaks the relation S0*S1 - 1 = 0", no location, no binding given."""
    module = parse_module(text)
    info = analyze_shapes(module)
    assert info.free  # the corners of these ranges are not all bindings
    result = runner.invoke(main, ["optimize", _write(tmp_path, text)])
    assert result.exit_code == 0, result.stderr
    assert run_pipeline(module, parse_pipeline("analyze,schedule{versions=4},remat"))


SELF_SHAPE = """\
func.func @main(%arg0: tensor<?, [@S0]>, %arg1: tensor<12x4>) {
  %2 = dynamic_reshape(%arg0, %2) -> tensor<?x12, [@S1, @C12]>
  %3 = dot(%2, %arg1) -> tensor<?x4, [@S1, @C4]>
  return %3
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
  SymbolicDim @S1
  @S0 = Mul @C12, @S1
}
"""


@pytest.mark.parametrize("shape, col", [("%2", 31), ("%3", 31)])
def test_shape_operand_defined_later_is_a_located_error(runner, tmp_path, shape, col):
    """Was: accepted with the 'not defined' warning, then a cycle that the schedule pass
    untied by losing an operand: exit 3 in remat ("not enough values to unpack")."""
    path = _write(tmp_path, SELF_SHAPE.replace("%arg0, %2)", f"%arg0, {shape})"))
    result = runner.invoke(main, ["optimize", path])
    assert result.exit_code == 1
    assert result.stderr == f"{path}:2:{col}: error: {shape} is used before its definition\n"


def test_undefined_shape_operand_still_only_warns(runner, tmp_path):
    path = _write(tmp_path, SELF_SHAPE.replace("%arg0, %2)", "%arg0, %new_shape)"))
    result = runner.invoke(main, ["optimize", path])
    assert result.exit_code == 0 and "warning: %new_shape is not defined" in result.stderr


EMPTY_REDUCE = """\
func.func @main(%a: tensor<0x3xDT>) {
  %b = reduce(%a) {dims = [0], kind = "KIND"} -> tensor<3xDT>
  %c = reduce(%a) {dims = [1], kind = "KIND"} -> tensor<0xDT>
  return %b, %c
}
"""


@pytest.mark.parametrize("dtype", ["f32", "i32", "i1"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_empty_max_and_min_reductions_are_located_errors(dtype, kind):
    """Was: "zero-size array to reduction operation maximum which has no identity" (exit 3)
    on both backends. The verifier refuses a max or min over a zero-size dim at its op
    (issue 14: such a reduction has no value), before anything runs."""
    text = EMPTY_REDUCE.replace("DT", dtype).replace("KIND", kind)
    with pytest.raises(BladecError, match=f"a {kind} over dim 0, of size 0, has no value") as err:
        verify(parse_module(text))
    assert err.value.loc.line == 2


def test_analyze_names_the_missing_dims_before_asking_for_them(runner):
    """Was: "--mem-limit needs --dims" although --dims was given (without every symbol)."""
    listing1 = SAMPLES / "diamond.mlir"
    result = runner.invoke(main, ["analyze", str(listing1), "--dims", "S0=20",
                                  "--mem-limit", "1MiB"])
    assert result.exit_code == 1
    assert "no value for symbol(s) S1" in result.stderr


def test_analyze_of_a_static_listing_takes_a_limit_without_dims(runner, tmp_path):
    path = _write(tmp_path, "func.func @main(%a: tensor<4x4>) {\n"
                            "  %b = exp(%a) -> tensor<4x4>\n  return %b\n}\n")
    fits = runner.invoke(main, ["analyze", path, "--mem-limit", "1KiB"])
    assert fits.exit_code == 0 and "fits within" in fits.stdout
    assert runner.invoke(main, ["analyze", path, "--mem-limit", "100"]).exit_code == 4


def test_a_range_emptied_by_the_relations_is_an_error_not_a_division_by_zero(tmp_path):
    """Was: ZeroDivisionError (exit 3) in the range propagation of the analysis when a
    constant dim made a product's other factor's range empty (fuzz case 261 of seed 14:
    mlp-train with one dim bound to @C4 instead of @S2)."""
    text = (SAMPLES / "mlp-train.mlir").read_text()
    text = text.replace("%dhb = mul(%da, %t3) -> tensor<?x512, [@S2, @C512]>",
                        "%dhb = mul(%da, %t3) -> tensor<?x512, [@C4, @C512]>")
    path = tmp_path / "m.mlir"
    path.write_text(text)
    result = make_runner().invoke(main, ["optimize", str(path)])
    assert result.exit_code in (0, 1), result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("op, attrs", [
    ("broadcast_in_dim", "{dims = [-1, 2]}"),
    ("broadcast_like", "{dims = [-1, 2], source = [-1, -1, -1], axis = [-1, -1, -1]}"),
])
def test_dims_that_repeat_once_negative_entries_count_from_the_end(runner, tmp_path, op,
                                                                      attrs):
    """``dims = [-1, 2]`` into a rank-3 result names dim 2 twice; the repeat was checked
    before -1 was read as 2, and the NumPy backend's reshape then failed (exit 3; the
    10,000-case fuzz found it)."""
    operands = "%a" if op == "broadcast_in_dim" else "%a, %a"
    text = ("func.func @main(%a: tensor<4x4>) {\n"
            f"  %b = {op}({operands}) {attrs} -> tensor<5x4x4>\n"
            "  return %b\n}\n")
    result = runner.invoke(main, ["run", _write(tmp_path, text), "--backend", "numpy"])
    assert result.exit_code == 1, result.output
    assert "f.mlir:2:3: error:" in result.stderr and "'dims'" in result.stderr


REPEATED_REDUCE_DIMS = """\
func.func @main(%x: tensor<?x?, [@S0, @S1]>) {
  %r = reduce(%x) {dims = [0, -2], kind = "sum"} -> tensor<?, [@S1]>
  return %r
}
"""


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_reduce_over_a_dim_named_twice_is_a_located_error(runner, tmp_path, backend):
    """Was: exit 3, "internal error: ValueError: duplicate value in 'axis'" from either
    backend's kernel (the shape rule had merged the repeated dims into one)."""
    path = _write(tmp_path, REPEATED_REDUCE_DIMS)
    for args in (["optimize", path], ["run", path, "--dims", "S0=3,S1=4", "--backend",
                                      backend]):
        result = runner.invoke(main, args)
        assert result.exit_code == 1, result.output + result.stderr
        assert f"{path}:2:3: error: 'reduce': 'dims' has repeated entries" in result.stderr


HUGE_STRIDE = """\
func.func @main(%x: tensor<4x6xi32>) {
  %s = slice(%x) {start = [0, 1], limit = [1, 3], strides = [1, 9223372036854775808]} -> tensor<1x1xi32>
  return %s
}
"""


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_an_attribute_entry_past_the_dimension_limit_is_a_located_error(runner, tmp_path,
                                                                        backend):
    """Was: NumPy ran it (Python integers have no bound) and JAX failed with exit 3
    ("slice strides must have every element be an integer type"); found by the fuzz run
    that compares the two backends."""
    path = _write(tmp_path, HUGE_STRIDE)
    result = runner.invoke(main, ["run", path, "--backend", backend])
    assert result.exit_code == 1, result.output + result.stderr
    assert (f"{path}:2:3: error: 'slice' attribute 'strides': 9223372036854775808 is "
            "beyond the dimension limit (281474976710656)") in result.stderr
