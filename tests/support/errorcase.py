"""Checking located errors: a listing with a ``¦`` marking where the error must be
reported (the marker is removed before the file is written) goes through ``bladec
optimize``, which must exit 1 with exactly one `FILE:LINE:COL: error:` line naming the
marked place. Used by the CLI's error tests (tests/cli/test_errors*.py) and the loop op's
(tests/ops/test_loop.py)."""
from __future__ import annotations

from pathlib import Path

from click.testing import Result

from bladec.cli import main

from tests.support.clirunner import make_runner

MARK = "¦"
H = "func.func @main(%a: tensor<4xf32>, %b: tensor<4x8>) {\n"
SG = "func.func @symbolic_shape_graph() {\n"


def located(text: str) -> tuple[str, int, int]:
    """Remove the marker; return the text and the marker's 1-based line and column."""
    assert text.count(MARK) == 1, "a case marks exactly one location"
    at = text.index(MARK)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return text.replace(MARK, ""), line, col


def optimize(path: Path) -> Result:
    return make_runner().invoke(main, ["optimize", str(path)])


def assert_error(result: Result, file: str, line: int, col: int, fragment: str) -> None:
    """Exit 1 with exactly one located error line on stderr and nothing on stdout."""
    assert "Traceback" not in (result.stdout + result.stderr)
    assert "internal error" not in (result.stdout + result.stderr)
    assert result.exit_code == 1, (result.stdout + result.stderr)
    assert result.stdout == ""
    errors = [ln for ln in result.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"{file}:{line}:{col}: error: "), errors[0][:300]
    assert fragment in errors[0], errors[0][:300]


def check_file(tmp_path: Path, text: str | bytes, line: int, col: int, fragment: str) -> None:
    path = tmp_path / "bad.mlir"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    assert_error(optimize(path), str(path), line, col, fragment)
