"""Bad input through the command line: `FILE:LINE:COL: error: message`, exit 1, no traceback.

Each case is a listing with a ``¦`` marking where the error must be reported (the marker
is removed before the file is written), and a fragment of the message. The location is
the first character of the token at fault: the undefined operand, the misspelled element
type, the second definition.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result

from bladec.cli import main

from tests.support.clirunner import make_runner
from tests.support.errorcase import H, SG, assert_error, check_file, located, optimize
from tests.support.paths import ROOT

CASES = {
    # -- syntax -----------------------------------------------------------------------
    "missing_comma": (H + "  %c = add(%a ¦%a) -> tensor<4>\n}\n",
                      "unexpected '%a'; expected ')' or ','"),
    "stray_character": (H + "  %c = add(%a, %a) -> tensor<4> ¦$\n}\n",
                        "unexpected character '$'"),
    "unterminated_string": (H + '  %c = compare(%a, %a) {direction = ¦"LT} -> tensor<4xi1>\n}\n',
                            "unexpected character '\"'"),
    "trailing_comma_in_attrs": (H + "  %c = transpose(%b) {perm = [1, 0],¦} -> tensor<8x4>\n}\n",
                                "unexpected '}'; expected a name"),
    "missing_arrow_type": (H + "  %c = add(%a, %a) -> tensor<4>, \n¦}\n",
                           "expected a tensor type"),
    "stray_closing_brace": (H + "  return %a\n}\n¦}\n", "unexpected '}'"),
    "truncated_mid_type": (H + "  %c = add(%a, %a) -> ¦tens", "expected a tensor type"),
    "truncated_mid_operands": (H + "  %c = add(%a,¦", "unexpected end of file"),
    "truncated_after_header": (H[:-1] + "¦\n", "unexpected end of file"),
    "truncated_in_region": (H + "  remat.regenerate(%a) recompute {\n    %c = copy(%a) -> tensor<4xf32>¦",
                            "unexpected end of file"),
    "comment_only_file": ("¦// nothing here\n", "no function"),
    "only_shape_graph": ("¦" + SG + "  SymbolicDim @S0\n}\n", "no function besides"),
    # -- values -----------------------------------------------------------------------
    "undefined_value": (H + "  %c = add(%a, ¦%zz) -> tensor<4>\n}\n", "use of undefined value %zz"),
    "undefined_value_spelled_out": (H + "  %c = add(%a, // the first\n           ¦%zz) -> tensor<4>\n}\n",
                                    "use of undefined value %zz"),
    "use_before_definition": (H + "  %c = add(%a, ¦%d) -> tensor<4>\n  %d = copy(%a) -> tensor<4>\n}\n",
                              "use of undefined value %d"),
    "undefined_evict_operand": (H + "  remat.evict(%a, ¦%nope)\n}\n", "use of undefined value %nope"),
    "redefinition": (H + "  %c = add(%a, %a) -> tensor<4>\n  ¦%c = add(%a, %a) -> tensor<4>\n}\n",
                     "redefinition of %c"),
    "redefinition_of_argument": (H + "  ¦%a = copy(%a) -> tensor<4>\n}\n", "redefinition of %a"),
    "return_of_undefined": (H + "  %c = add(%a, %a) -> tensor<4>\n  ¦return %c, %zz\n}\n",
                            "return of undefined value %zz"),
    "statement_after_return": (H + "  return %a\n  ¦%c = add(%a, %a) -> tensor<4>\n}\n",
                               "statement after 'return'"),
    "function_defined_twice": (H + "  return %a\n}\n¦" + H + "  return %a\n}\n",
                               "function @main defined twice"),
    # -- ops and attributes -----------------------------------------------------------
    "unknown_op": (H + "  ¦%c = frobnicate(%a, %a) -> tensor<4>\n}\n", "unknown op 'frobnicate'"),
    "unknown_op_without_results": (H + "  ¦frobnicate(%a)\n}\n", "unknown op 'frobnicate'"),
    "too_few_operands": (H + "  ¦%c = add(%a) -> tensor<4>\n}\n", "'add' takes 2 operand(s), got 1"),
    "too_many_operands": (H + "  ¦%c = neg(%a, %a) -> tensor<4>\n}\n", "'neg' takes 1 operand(s), got 2"),
    "op_result_count": (H + "  ¦%c, %d = add(%a, %a) -> tensor<4>, tensor<4>\n}\n",
                        "'add' defines 1 result(s), got 2"),
    "fewer_types_than_results": (H + "  ¦%c, %d = add(%a, %a) -> tensor<4>\n}\n",
                                 "'add' defines 2 result(s) but gives 1 type(s)"),
    "more_types_than_results": (H + "  ¦%c = add(%a, %a) -> tensor<4>, tensor<4>\n}\n",
                                "'add' defines 1 result(s) but gives 2 type(s)"),
    "no_type_for_result": (H + "  ¦%c = add(%a, %a)\n}\n", "defines 1 result(s) but gives 0 type(s)"),
    "missing_required_attribute": (H + "  ¦%c = transpose(%b) -> tensor<8x4>\n}\n",
                                   "'transpose' needs attribute 'perm'"),
    "missing_dot_general_contract": (H + "  ¦%c = dot_general(%b, %b) {lhs_contract = [0]} "
                                     "-> tensor<8x8>\n}\n",
                                     "'dot_general' needs attribute 'rhs_contract'"),
    "unknown_attribute": (H + "  ¦%c = add(%a, %a) {bogus = 1} -> tensor<4>\n}\n",
                          "'add' has no attribute 'bogus' (known: none)"),
    "attribute_string_for_ints": (H + '  ¦%c = transpose(%b) {perm = "x"} -> tensor<8x4>\n}\n',
                                  "'transpose' attribute 'perm' must be a list of integers"),
    "attribute_nested_list_for_ints": (H + "  ¦%c = transpose(%b) {perm = [[1], [0]]} -> tensor<8x4>\n}\n",
                                       "'transpose' attribute 'perm' must be a list of integers"),
    "attribute_bool_in_ints": (H + "  ¦%c = broadcast_in_dim(%a) {dims = [0, true]} -> tensor<4x3>\n}\n",
                               "'broadcast_in_dim' attribute 'dims' must be a list of integers"),
    "attribute_float_for_int": (H + "  ¦%c = integer_pow(%a) {exponent = 2.5} -> tensor<4>\n}\n",
                                "'integer_pow' attribute 'exponent' must be an integer"),
    "attribute_int_for_bool": (H + "  ¦remat.regenerate(%a) {reload = 1}\n}\n",
                               "'remat.regenerate' attribute 'reload' must be true or false"),
    "attribute_given_twice": (H + "  %c = transpose(%b) {perm = [1, 0], ¦perm = [0, 1]} -> tensor<8x4>\n}\n",
                              "attribute 'perm' given twice"),
    "bad_compare_direction": (H + '  ¦%c = compare(%a, %a) {direction = "LTE"} -> tensor<4xi1>\n}\n',
                              "'compare': direction must be one of EQ, NE, LT, LE, GT, GE"),
    "bad_reduce_kind": (H + '  ¦%c = reduce(%b) {dims = [1], kind = "avg"} -> tensor<4>\n}\n',
                        "'reduce': kind must be one of sum, max, min, prod"),
    "reduce_dim_out_of_range": (H + "  ¦%c = reduce(%b) {dims = [2]} -> tensor<4>\n}\n",
                                "'reduce': dimension 2 out of range for rank 2"),
    "transpose_not_a_permutation": (H + "  ¦%c = transpose(%b) {perm = [0, 0]} -> tensor<4x4>\n}\n",
                                    "is not a permutation of 0..1"),
    "unknown_convert_dtype": (H + '  ¦%c = convert(%a) {dtype = "f99"} -> tensor<4>\n}\n',
                              "'convert': unknown dtype 'f99'"),
    "select_predicate_not_i1": (H + "  ¦%c = select(%a, %a, %a) -> tensor<4>\n}\n",
                                "the predicate (operand 0) must be i1, got f32"),
    "gather_float_ids": (H + "  ¦%c = gather(%b, %a) -> tensor<4x8>\n}\n",
                         "indices (operand 1) must be i32 or i64, got f32"),
    "regenerate_without_branch": (H + "  ¦remat.regenerate(%a)\n}\n",
                                  "needs 'reload = true' or a 'recompute' region"),
    "recompute_without_target": (H + "  %c = copy(%a) -> tensor<4>\n  ¦remat.regenerate(%c) recompute {\n"
                                 "    %d = copy(%a) -> tensor<4>\n  }\n}\n",
                                 "the recompute region must end by defining %c"),
    "regenerate_unknown_region": (H + "  %c = copy(%a) -> tensor<4>\n  ¦remat.regenerate(%c) {reload = true} "
                                  "again {\n    %c = copy(%a) -> tensor<4>\n  }\n}\n",
                                  "'remat.regenerate' has no region 'again'"),
    "region_given_twice": (H + "  %c = copy(%a) -> tensor<4>\n  remat.regenerate(%c) recompute {\n  } "
                           "¦recompute {\n  }\n}\n", "region 'recompute' given twice"),
    # -- shapes and types -------------------------------------------------------------
    "add_static_dims_differ": ("func.func @main(%a: tensor<4>, %b: tensor<5>) {\n"
                               "  ¦%c = add(%a, %b) -> tensor<4>\n}\n",
                               "'add': dim 0 of operands 0 and 1 must be equal, got 4 and 5"),
    "add_ranks_differ": (H + "  ¦%c = add(%a, %b) -> tensor<4>\n}\n",
                         "'add': operand 1 has rank 2, operand 0 has rank 1"),
    "add_dtypes_differ": ("func.func @main(%a: tensor<4>, %b: tensor<4xf16>) {\n"
                          "  ¦%c = add(%a, %b) -> tensor<4>\n}\n", "operand 1 is f16, operand 0 is f32"),
    "dot_contracting_dims_differ": ("func.func @main(%a: tensor<3x4>, %b: tensor<5x6>) {\n"
                                    "  ¦%c = dot(%a, %b) -> tensor<3x6>\n}\n",
                                    "contracting dims (last of operand 0, first of operand 1) must be "
                                    "equal, got 4 and 5"),
    "dot_general_contracting_dims_differ": (
        "func.func @main(%a: tensor<2x3x4>, %b: tensor<2x5x6>) {\n"
        "  ¦%c = dot_general(%a, %b) {lhs_batch = [0], rhs_batch = [0], lhs_contract = [2], "
        "rhs_contract = [1]} -> tensor<2x3x6>\n}\n",
        "'dot_general': contracting dims 2 and 1 must be equal, got 4 and 5"),
    "declared_result_dim_wrong": (H + "  ¦%c = add(%a, %a) -> tensor<5>\n}\n",
                                  "'add': dim 0 of %c must be equal, got 5 and 4"),
    "declared_result_rank_wrong": (H + "  ¦%c = add(%a, %a) -> tensor<4x1>\n}\n",
                                   "'add': result %c must have rank 1, declared 2"),
    "declared_result_dtype_wrong": (H + "  ¦%c = add(%a, %a) -> tensor<4xf16>\n}\n",
                                    "'add': result %c must have element type f32, declared f16"),
    "reshape_element_count": (H + "  ¦%c = reshape(%b) -> tensor<5x7>\n}\n",
                              "'reshape': element count must be equal, got 32 and 35"),
    "slice_past_the_end": (H + "  ¦%c = slice(%a) {start = [0], limit = [5]} -> tensor<5>\n}\n",
                           "'slice': dim 0 sliced up to 5, but the dim is 4"),
    "bad_dtype_in_argument": ("func.func @main(%a: tensor<4x¦f33>) {\n  return %a\n}\n",
                              "unknown element type 'f33'"),
    "bad_dtype_in_result_one_token": (H + "  %c, %d = copy(%a) -> tensor<4>, tensor<4x¦q8>\n}\n",
                                      "unknown element type 'q8'"),
    "bad_dtype_in_result_spelled_out": (H + "  %c = copy(%a) -> // the type follows\n"
                                        "     tensor<4x¦q8>\n}\n", "unknown element type 'q8'"),
    "dtype_not_last": ("func.func @main(%a: tensor<4x¦f32x4>) {\n  return %a\n}\n",
                       "bad dimension 'f32' in tensor type"),
    "negative_dim": ("func.func @main(%a: tensor<¦-1>) {\n  return %a\n}\n",
                     "bad dimension '-1' in tensor type"),
    "empty_dim": ("func.func @main(%a: tensor<4x¦>) {\n  return %a\n}\n", "bad dimension ''"),
    "dim_too_large": ("func.func @main(%a: tensor<¦99999999999999999999x4>) {\n  return %a\n}\n",
                      "dimension 99999999999999999999 is too large"),
    "bind_count_mismatch": ("func.func @main(%a: tensor<?x4, ¦[@S0]>) {\n  return %a\n}\n",
                            "tensor type has 2 dims but 1 bound symbols"),
    "bind_not_a_symbol": ("func.func @main(%a: tensor<?, [¦@Q]>) {\n  return %a\n}\n",
                          "expected a symbol '@S..' or constant '@C..', got '@Q'"),
    "bind_bad_constant": ("func.func @main(%a: tensor<?, [¦@Cx]>) {\n  return %a\n}\n",
                          "constant dim '@Cx' must be '@C' followed by digits"),
    "binds_without_brackets": ("func.func @main(%a: tensor<?, ¦@S0>) {\n  return %a\n}\n",
                               "expected '[@S0, ...]' after ','"),
    "constant_binding_disagrees": ("func.func @main(%a: tensor<4, ¦[@C5]>) {\n  return %a\n}\n",
                                   "dim 0 is 4 but is bound to @C5"),
    "constant_binding_disagrees_2d": ("func.func @main(%a: tensor<?x12, ¦[@S1, @C13]>) {\n  return %a\n}\n",
                                      "dim 1 is 12 but is bound to @C13"),
    # -- what can never run (every command refuses it) -------------------------------
    "reduce_max_over_empty_dim": ("func.func @main(%a: tensor<4x0>) {\n"
                                  '  ¦%c = reduce(%a) {dims = [1], kind = "max"} -> tensor<4>\n}\n',
                                  "'reduce': a max over dim 1, of size 0, has no value"),
    "reduce_min_over_empty_dim_no_dims": ("func.func @main(%a: tensor<4x0>) {\n"
                                          '  ¦%c = reduce(%a) {kind = "min"} -> tensor<4>\n}\n',
                                          "'reduce': a min over dim 1, of size 0, has no value"),
    "constant_above_i32": ("func.func @main() {\n  ¦%c = constant() {value = 99999999999999999999} "
                           "-> tensor<4xi32>\n}\n",
                           "'constant': value 99999999999999999999 is outside the range of i32"),
    "constant_negative_u8": ("func.func @main() {\n  ¦%c = constant() {value = -1} -> tensor<4xu8>\n}\n",
                             "'constant': value -1 is outside the range of u8 [0, 255]"),
    "constant_i8_just_above": ("func.func @main() {\n  ¦%c = constant() {value = 128} -> tensor<4xi8>\n}\n",
                               "value 128 is outside the range of i8 [-128, 127]"),
    "constant_float_above_i64": ("func.func @main() {\n  ¦%c = constant() {value = 1e19} -> tensor<4xi64>\n}\n",
                                 "is outside the range of i64"),
    "constant_inf_as_integer": ("func.func @main() {\n  ¦%c = constant() {value = 1e999} -> tensor<4xi32>\n}\n",
                                "value inf is not a number of type i32"),
    "constant_two_as_i1": ("func.func @main() {\n  ¦%c = constant() {value = 2} -> tensor<4xi1>\n}\n",
                           "value 2 is outside the range of i1 [0, 1]"),
    "iota_of_i1": ("func.func @main() {\n  ¦%c = iota() {dim = 0} -> tensor<4xi1>\n}\n",
                   "'iota': the result can not be i1"),
    "rng_uniform_of_i32": ("func.func @main() {\n  ¦%c = rng_uniform() {seed = 1} -> tensor<4xi32>\n}\n",
                           "'rng_uniform': the result must have a float type"),
    "rng_uniform_seed_too_large": ("func.func @main() {\n  ¦%c = rng_uniform() {seed = 99999999999999999999} "
                                   "-> tensor<4xf32>\n}\n",
                                   "'rng_uniform': seed 99999999999999999999 is outside [0, 2^63 - 1]"),
    "rng_uniform_negative_seed": ("func.func @main() {\n  ¦%c = rng_uniform() {seed = -1} -> tensor<4xf32>\n}\n",
                                  "seed -1 is outside [0, 2^63 - 1]"),
    "integer_pow_negative_on_integers": ("func.func @main(%a: tensor<4xi32>) {\n"
                                         "  ¦%c = integer_pow(%a) {exponent = -2} -> tensor<4xi32>\n}\n",
                                         "'integer_pow': a negative exponent needs a float type, got i32"),
    "exp_of_integers": ("func.func @main(%a: tensor<4xi32>) {\n  ¦%c = exp(%a) -> tensor<4xi32>\n}\n",
                        "'exp': needs a float type, got i32"),
    "neg_of_i1": ("func.func @main(%a: tensor<4xi1>) {\n  ¦%c = neg(%a) -> tensor<4xi1>\n}\n",
                  "'neg': is not defined on i1"),
    "scatter_add_of_i1": ("func.func @main(%a: tensor<4xi1>, %i: tensor<2xi32>, %u: tensor<2xi1>) {\n"
                          "  ¦%c = scatter_add(%a, %i, %u) -> tensor<4xi1>\n}\n",
                          "'scatter_add': can not add truth values (i1)"),
    "gather_from_no_rows": ("func.func @main(%a: tensor<0x2>, %i: tensor<3xi32>) {\n"
                            "  ¦%c = gather(%a, %i) -> tensor<3x2>\n}\n",
                            "'gather': the table (operand 0) has no rows to pick from"),
    # -- the dimension limit (bladec/types.py MAX_DIM) ----------------------------------
    "relation_constant_of_40_digits": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n  SymbolicDim @S1\n"
                                       "  @S0 = Mul ¦@C1234567890123456789012345678901234567890, @S1\n}\n",
                                       "constant '@C12345678901234567890...' is too large (at most "
                                       "281474976710656)"),
    "relation_constant_just_above_the_limit": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n"
                                               "  @S0 = Mul ¦@C281474976710657\n}\n",
                                               "constant '@C281474976710657' is too large"),
    "range_starts_above_the_limit": (H + "  return %a\n}\n" + SG + "  SymbolicDim ¦@S0 {min = 281474976710657}\n}\n",
                                     "the range of @S0 starts at 281474976710657, above the largest dimension"),
    "reshape_derives_a_dim_above_the_limit": (
        "func.func @main(%a: tensor<?, [@S0]>) {\n  ¦%c = reshape(%a) -> tensor<12x?, [@C12, @S1]>\n"
        "  return %c\n}\n" + SG + "  SymbolicDim @S0\n  SymbolicDim @S1\n  @S1 = Mul @C281474976710656\n}\n",
        "'reshape': this makes S0 = 3377699720527872, a number above the largest dimension"),
    "relation_product_above_the_limit": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n"
                                         "  ¦@S0 = Mul @C281474976710656, @C2\n}\n",
                                         "relation @S0 = Mul @C281474976710656, @C2: this makes S0 = "
                                         "562949953421312"),
    "derived_coefficient_above_the_limit": (
        "func.func @main(%a: tensor<?, [@S0]>) {\n  ¦%c = reshape(%a) -> tensor<16777216x16777217x?, "
        "[@C16777216, @C16777217, @S1]>\n  return %c\n}\n",
        "'reshape': this makes S0 = 281474993487872*S1, a number above"),
    "element_count_above_the_limit_in_a_fact": (
        "func.func @main(%a: tensor<?x?, [@S0, @S1]>) {\n  ¦%c = reshape(%a) -> tensor<281474976710656x4>\n"
        "  return %c\n}\n",
        "'reshape': this makes S0*S1 = 1125899906842624, a number above the largest dimension"),
    # -- the symbolic shape graph -----------------------------------------------------
    "duplicate_symbolic_dim": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n  ¦SymbolicDim @S0\n}\n",
                               "SymbolicDim @S0 declared twice"),
    "relation_on_undeclared_symbol": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n"
                                      "  ¦@S0 = Mul @C12, @S1\n}\n", "relation uses undeclared symbol @S1"),
    "relation_lhs_undeclared": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S1\n"
                                "  ¦@S0 = Mul @C12, @S1\n}\n", "relation uses undeclared symbol @S0"),
    "unknown_relation_kind": (H + "  return %a\n}\n" + SG + "  SymbolicDim @S0\n  SymbolicDim @S1\n"
                              "  @S0 = ¦Div @C12, @S1\n}\n", "unknown relation 'Div' (expected Mul, Add, FloorDiv, CeilDiv, Mod, Min, Max)"),
    "symbol_named_like_a_constant": (H + "  return %a\n}\n" + SG + "  ¦SymbolicDim @C12\n}\n",
                                     "symbol names start with 'S', got @C12"),
    "empty_symbol_range": (H + "  return %a\n}\n" + SG + "  SymbolicDim ¦@S0 {min = 0}\n}\n",
                           "empty or non-positive range [0, None] for @S0"),
    "bad_symbol_range_key": (H + "  return %a\n}\n" + SG + "  SymbolicDim ¦@S0 {step = 2}\n}\n",
                             "SymbolicDim takes only integer 'min' and 'max', got 'step'"),
    "op_in_shape_graph": (H + "  return %a\n}\n" + SG + "  ¦%c = copy(%a) -> tensor<4>\n}\n",
                          "only SymbolicDim and relations may appear in @symbolic_shape_graph"),
    "symbolic_dim_in_main": (H + "  ¦SymbolicDim @S0\n}\n",
                             "'SymbolicDim' may appear only in @symbolic_shape_graph"),
    "second_shape_graph": (H + "  return %a\n}\n" + SG + "}\n¦" + SG + "}\n",
                           "second @symbolic_shape_graph function"),
    # -- schedule versions ------------------------------------------------------------
    "version_names_no_function": (
        H + "  ¦schedule.versions() {funcs = [@main.v1]}\n  %c = exp(%a) -> tensor<4>\n"
        "  return %c\n}\n", "'schedule.versions': @main.v1 names no function"),
    "version_names_itself": (
        H + "  ¦schedule.versions() {funcs = [@main]}\n  return %a\n}\n",
        "'schedule.versions': @main names itself"),
    "version_not_first": (
        H + "  %c = exp(%a) -> tensor<4>\n  ¦schedule.versions() {funcs = [@v]}\n"
        "  return %c\n}\n", "'schedule.versions' must be the first op of its function"),
    "version_funcs_not_names": (
        H + "  ¦schedule.versions() {funcs = [1, 2]}\n  return %a\n}\n",
        "attribute 'funcs' must be a list of @names"),
    "version_with_other_ops": (
        H + "  schedule.versions() {funcs = [@v]}\n  %c = exp(%a) -> tensor<4>\n"
        "  %d = neg(%c) -> tensor<4>\n  return %d\n}\n"
        "¦func.func @v(%a: tensor<4xf32>, %b: tensor<4x8>) {\n  %c = exp(%a) -> tensor<4>\n"
        "  %d = abs(%c) -> tensor<4>\n  return %d\n}\n",
        "@v does not hold the same arguments, ops and results as @main"),
}


@pytest.mark.parametrize("text, fragment", list(CASES.values()), ids=list(CASES))
def test_bad_listing(tmp_path: Path, text: str, fragment: str):
    source, line, col = located(text)
    check_file(tmp_path, source, line, col, fragment)


def test_many_distinct_bad_inputs():
    assert len(CASES) >= 20
    assert len({text for text, _ in CASES.values()}) == len(CASES)


def test_error_on_line_3_gives_path_line_3(tmp_path: Path):
    """The acceptance point of the issue: `path:3:COL: error:` and exit 1."""
    path = tmp_path / "model.mlir"
    path.write_text("// a model\n\nfunc.func @main(%a: tensor<4>) { %c = nope(%a) -> tensor<4>\n}\n",
                    encoding="utf-8")
    result = optimize(path)
    assert result.exit_code == 1
    assert result.stderr == f"{path}:3:34: error: unknown op 'nope'\n"
    assert result.stdout == ""


def test_error_on_stdin_is_named_stdin():
    result = make_runner().invoke(main, ["optimize", "-"],
                                input=H + "  %c = add(%a, %zz) -> tensor<4>\n}\n")
    assert_error(result, "<stdin>", 2, 16, "use of undefined value %zz")


def test_missing_file(tmp_path: Path):
    path = tmp_path / "missing.mlir"
    assert_error(optimize(path), str(path), 1, 1, "cannot read")


def test_listing1_warning_is_printed_with_exit_0():
    path = ROOT / "samples" / "listing1.mlir"
    result = optimize(path)
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stderr == (f"{path}:3:31: warning: %new_shape is not defined; "
                             "the result type is taken as the target shape\n")
    assert "error" not in result.stderr
    assert "%new_shape" in result.stdout


# -- `bladec run`: what can not run is a located error, on either backend ----------------------

RUN_ONLY = ("reduce_max_over_empty_dim", "constant_above_i32", "constant_negative_u8",
            "iota_of_i1", "rng_uniform_of_i32", "rng_uniform_seed_too_large",
            "relation_constant_of_40_digits", "reshape_derives_a_dim_above_the_limit",
            "gather_from_no_rows")


def run_file(path: Path, *args: str) -> Result:
    return make_runner().invoke(main, ["run", str(path), *args])


@pytest.mark.parametrize("name", RUN_ONLY)
def test_run_refuses_what_optimize_refuses(tmp_path: Path, name: str):
    source, line, col = located(CASES[name][0])
    path = tmp_path / "bad.mlir"
    path.write_text(source, encoding="utf-8")
    assert_error(run_file(path, "--backend", "numpy"), str(path), line, col, CASES[name][1])


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_listing1_broadcast_can_not_run(backend: str):
    """The paper's Listing 1 broadcasts 12x11008 to 4096x?: `optimize` and `analyze` take
    it as printed, `run` names the op (it was `internal error: ValueError`, exit 3)."""
    path = ROOT / "samples" / "listing1.mlir"
    result = run_file(path, "--dims", "S1=2", "--backend", backend)
    assert_error(result, str(path), 2, 3, "'broadcast': operand dim 0 (12) can not broadcast "
                                          "to result dim 0 (4096)")
    for command in (["optimize"], ["analyze", "--dims", "S1=2"]):
        assert make_runner().invoke(main, [*command, str(path)]).exit_code == 0


BROADCAST_BY_BINDING = ("func.func @main(%a: tensor<?, [@S0]>) {\n"
                        "  %c = broadcast(%a) -> tensor<4x?, [@C4, @S1]>\n  return %c\n}\n")


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_broadcast_that_fails_only_once_bound(tmp_path: Path, backend: str):
    """Nothing static says S0 can not broadcast to S1; the binding S0=3, S1=5 does."""
    path = tmp_path / "b.mlir"
    path.write_text(BROADCAST_BY_BINDING, encoding="utf-8")
    result = run_file(path, "--dims", "S0=3,S1=5", "--backend", backend)
    assert_error(result, str(path), 2, 3, "'broadcast': operand shape [3] can not broadcast "
                                          "to [4, 5]")
    for dims in ("S0=5,S1=5", "S0=1,S1=5"):  # equal, or 1: both run
        ok = run_file(path, "--dims", dims, "--backend", backend)
        assert ok.exit_code == 0, ok.stdout + ok.stderr


@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("exponent", [10 ** 6, 10 ** 12, -(10 ** 12) - 1])
def test_integer_pow_with_a_huge_exponent_does_not_hang(tmp_path: Path, backend: str,
                                                        exponent: int):
    """It multiplied `exponent` times: 10^12 hung both backends, 10^6 hung JAX's tracing."""
    path = tmp_path / "pow.mlir"
    path.write_text("func.func @main(%a: tensor<5>) {\n  %c = integer_pow(%a) "
                    f"{{exponent = {exponent}}} -> tensor<5>\n  return %c\n}}\n", encoding="utf-8")
    import numpy as np
    np.savez(tmp_path / "in.npz", a=np.array([1, -1, 0.5, 2, 1.5], np.float32))
    result = run_file(path, "--inputs", str(tmp_path / "in.npz"), "--outputs",
                      str(tmp_path / "out.npz"), "--backend", backend)
    assert result.exit_code == 0, result.stdout + result.stderr
    got = np.load(tmp_path / "out.npz")["c"]
    odd = exponent % 2 == 1
    want = [1, -1 if odd else 1, 0, np.inf, np.inf] if exponent > 0 else \
        [1, -1 if odd else 1, np.inf, 0, 0]
    np.testing.assert_array_equal(got, np.array(want, np.float32))
