"""Helpers the shape-analysis tests share (tests/symbolic/test_shapes.py and
test_shapes_samples.py, tests/analysis/test_memory_model.py): listings are written as text
and parsed with ``parse_module``; every listing starts on its first line, so the line
numbers asserted for errors are the lines of the text as written."""
from __future__ import annotations

import textwrap

import pytest

from bladec.errors import BladecError
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.symbolic.expr import SymbolicExpr, sym
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

from tests.support.paths import ROOT

SAMPLES = sorted((ROOT / "samples").glob("*.mlir"))
S0, S1, S2, S3, S4, S5 = (sym(f"S{i}") for i in range(6))


def listing(text: str) -> str:
    """Dedented text whose first line is line 1."""
    return textwrap.dedent(text).lstrip("\n")


def analyze(text: str) -> tuple[Module, ShapeInfo]:
    module = parse_module(listing(text))
    return module, analyze_shapes(module)


def canon(info: ShapeInfo, name: str) -> SymbolicExpr:
    return info.canon(sym(name))


def error_of(text: str) -> BladecError:
    with pytest.raises(BladecError) as exc:
        analyze(text)
    return exc.value


LISTING1 = (ROOT / "samples" / "listing1.mlir").read_text()
LISTING1_NO_GRAPH = LISTING1[:LISTING1.index("func.func @symbolic_shape_graph")]

FACT = """
    func.func @main(%a: tensor<?x?, [@S0, @S1]>) {
      %1 = reshape(%a) -> tensor<?x?, [@S2, @S3]>
    }
"""
