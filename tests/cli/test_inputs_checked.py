"""Inputs that were let through (issue 30, item 4): non-ASCII digits and repeated symbols
in ``--dims``/``--pad``, relations no integers satisfy, a listing of several functions
with no ``@main``, ``bladec.jit`` options it can check at construction, ``report()``
before the first step. Each is a located error or one line, exit 1."""
from __future__ import annotations

import numpy as np
import pytest

import bladec
from bladec.cli import main
from bladec.errors import BladecError
from bladec.units import parse_dims
from bladec.runtime.padding import parse_pad
from tests.support.clirunner import make_runner
from tests.support.runtimecase import LISTING1

ONE = """func.func @{name}(%x: tensor<4>) {{
  %a = {op}(%x) -> tensor<4>
  return %a
}}
"""


def _invoke(*args: str):
    return make_runner().invoke(main, list(args))


def _one_error(result, text: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr, result.exception)
    lines = [x for x in result.stderr.strip().splitlines() if ": warning: " not in x]
    assert len(lines) == 1 and text in lines[0], result.stderr
    return lines[0]


@pytest.mark.parametrize("dims, said", [
    ("S1=²", "bad --dims entry 'S1=²' (expected SYMBOL=POSITIVE_INT)"),
    ("S1=٣", "bad --dims entry 'S1=٣'"),
    ("S1=64,S1=32", "--dims gives S1 twice (S1=64 and S1=32)"),
    ("S1=64,@S1=64", "--dims gives S1 twice"),
])
def test_bad_dims_are_one_line_exit_1(dims: str, said: str) -> None:
    for command in (["run", str(LISTING1), "--backend", "numpy"], ["analyze", str(LISTING1)]):
        line = _one_error(_invoke(*command, "--dims", dims, "-q")
                          if command[0] == "run" else _invoke(*command, "--dims", dims),
                          said)
        assert line.startswith("error: ")


def test_bad_pads_are_errors() -> None:
    with pytest.raises(BladecError, match="bad --pad entry 'S1=²'"):
        parse_pad("S1=²")
    with pytest.raises(BladecError, match="--pad gives S1 twice"):
        parse_pad(("S1=8", "S1=16"))
    assert parse_dims("S0=3, S1=4") == {"S0": 3, "S1": 4}


def _relations(tmp_path, *relations: str, symbols: int = 2) -> str:
    args = ", ".join(f"%x{i}: tensor<?, [@S{i}]>" for i in range(symbols))
    decls = "\n".join(f"  SymbolicDim @S{i}" for i in range(symbols))
    body = "\n".join(f"  {r}" for r in relations)
    path = tmp_path / "relations.mlir"
    path.write_text(f"func.func @main({args}) {{\n  %a = tanh(%x0) -> tensor<?, [@S0]>\n"
                    f"  return %a\n}}\nfunc.func @symbolic_shape_graph() {{\n{decls}\n"
                    f"{body}\n}}\n")
    return str(path)


@pytest.mark.parametrize("relations, line", [
    (("@S0 = Add @C7", "@S0 = Mul @C12, @S1"), 9),
    (("@S0 = Mul @C12, @S1", "@S0 = Add @C7"), 9),
    (("@S0 = Mul @C12, @S1", "@S0 = Add @C30"), 9),
])
def test_relations_no_integer_satisfies_are_located_errors(tmp_path, relations, line
                                                           ) -> None:
    path = _relations(tmp_path, *relations)
    for command in (["analyze", path], ["optimize", path],
                    ["run", path, "--backend", "numpy", "-q"]):
        said = _one_error(_invoke(*command), f"{path}:{line}:3: error: ")
        assert "S1" in said


def test_a_relation_whose_coefficients_share_a_factor_the_constant_lacks(tmp_path) -> None:
    """2*S1 + 2*S2 = 7: no range check sees it (both symbols are free), the gcd does."""
    path = _relations(tmp_path, "@S3 = Add @S1, @S2", "@S0 = Mul @C2, @S3", "@S0 = Add @C7",
                      symbols=4)
    said = _one_error(_invoke("analyze", path), f"{path}:12:3: error: contradiction: ")
    assert said.endswith("it makes 2*S1 + 2*S2 - 7 = 0, which no integers solve")
    ok = _relations(tmp_path, "@S3 = Add @S1, @S2", "@S0 = Mul @C2, @S3", "@S0 = Add @C8",
                    symbols=4)
    assert _invoke("analyze", ok).exit_code == 0


def test_several_functions_and_no_main_is_a_located_error(tmp_path) -> None:
    path = tmp_path / "two.mlir"
    path.write_text(ONE.format(name="f", op="tanh") + ONE.format(name="g", op="exp"))
    for command in (["analyze", str(path)], ["optimize", str(path)],
                    ["run", str(path), "--backend", "numpy", "-q"]):
        _one_error(_invoke(*command), f"{path}:1:1: error: no @main: this listing has 2 "
                   "functions (@f, @g); name the one to run @main")


def test_one_function_runs_whatever_its_name(tmp_path) -> None:
    path = tmp_path / "one.mlir"
    path.write_text(ONE.format(name="step", op="tanh"))
    result = _invoke("run", str(path), "--backend", "numpy", "-q", "--json")
    assert result.exit_code == 0, result.stderr


def test_a_byte_order_mark_is_accepted_and_columns_count_after_it(tmp_path) -> None:
    path = tmp_path / "bom.mlir"
    path.write_bytes(b"\xef\xbb\xbf" + LISTING1.read_bytes())
    plain = _invoke("analyze", str(LISTING1), "--json")
    marked = _invoke("analyze", str(path), "--json")
    assert marked.exit_code == 0 and marked.stdout == plain.stdout
    path.write_bytes(b"\xef\xbb\xbf" + b"func.func @main(%x: tensor<4>) { bad }\n")
    _one_error(_invoke("analyze", str(path)), f"{path}:1:38: error: unexpected '}}'")


# --- bladec.jit's options, checked at construction --------------------------------------

def _step(x, w):
    return x @ w


@pytest.mark.parametrize("options, said", [
    ({"pad": -4}, "pad must be a positive multiple"),
    ({"pad": 0}, "pad must be a positive multiple"),
    ({"pad": True}, "pad must be a positive multiple"),
    ({"pad": {"B": 0}}, "pad must be a positive multiple"),
    ({"donate_argnums": (5,)}, "donate_argnums [5] out of range: the function takes 2 "
                               "positional argument(s)"),
    ({"donate_argnums": (True,)}, "donate_argnums must be argument positions"),
    ({"dynamic": {"x": "B,_"}, "ranges": {"S": (1, 64)}},
     "ranges names S, not a dim that dynamic names (it names: B)"),
    ({"dynamic": {"x": "B,_"}, "pad": {"T": 8}}, "pad names T, not a dim that dynamic names"),
    ({"ranges": {"B": (0, 8)}}, "ranges: bad range (0, 8) for 'B'"),
    ({"ranges": {"B": (9, 8)}}, "ranges: bad range (9, 8) for 'B'"),
    ({"ranges": {"B": 8}}, "ranges: bad range 8 for 'B'"),
    ({"ranges": [("B", 1, 8)]}, "ranges must be a dict"),
])
def test_jit_options_are_checked_at_construction(options, said) -> None:
    with pytest.raises(BladecError) as err:
        bladec.jit(_step, **options)
    assert said in str(err.value)


def test_jit_options_that_hold_are_kept() -> None:
    def variadic(*args):
        return args[0]
    bladec.jit(variadic, donate_argnums=(5,))           # *args: any position may come
    f = bladec.jit(_step, dynamic={"x": "B,_"}, ranges={"B": (1, 64)}, pad={"B": 8},
                   donate_argnums=1)
    x, w = np.ones((5, 3), np.float32), np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, w)), x @ w)
    assert f.report().binding == {"B": 8}


def test_report_before_the_first_step_is_an_error() -> None:
    f = bladec.jit(_step)
    with pytest.raises(BladecError, match="has not been called yet: no step to report"):
        f.report()
