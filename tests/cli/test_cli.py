"""The command line on good input: `bladec optimize`, pipes, `-o`, `-p`, `--version`, help."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bladec import __version__
from bladec.cli import main
from bladec.parse import parse_module
from bladec.printer import format_module

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

LISTING1 = ROOT / "samples" / "listing1.mlir"
OPS = ROOT / "samples" / "ops.mlir"


@pytest.fixture
def runner() -> CliRunner:
    return make_runner()


def test_optimize_listing1(runner):
    result = runner.invoke(main, ["optimize", str(LISTING1)])
    assert result.exit_code == 0, (result.stdout + result.stderr)
    out = result.stdout
    assert out.startswith("func.func @main(%arg0: tensor<?, [@S0]>, %arg1: tensor<12x11008>) {\n")
    assert "  %3 = dot(%2, %arg1) -> tensor<?x11008, [@S1, @C11008]>\n" in out
    assert out.endswith("func.func @symbolic_shape_graph() {\n  SymbolicDim @S0\n"
                        "  SymbolicDim @S1\n  @S0 = Mul @C12, @S1\n}\n")
    # The output is a listing with the same ops (the passes may reorder or add remat ops).
    ops = {op.name for op in parse_module(out).main.ops}
    assert {"broadcast", "dynamic_reshape", "dot", "reduce"} <= ops
    # The undefined shape operand is a warning on stderr, not part of the listing.
    assert "warning" not in out
    assert "warning: %new_shape is not defined" in result.stderr


def test_optimize_output_pipes_into_optimize_stdin(runner):
    first = runner.invoke(main, ["optimize", str(LISTING1)])
    assert first.exit_code == 0, first.output
    second = runner.invoke(main, ["optimize", "-"], input=first.stdout)
    assert second.exit_code == 0, second.output
    assert second.stdout == first.stdout
    third = runner.invoke(main, ["optimize", "-"], input=second.stdout)
    assert third.stdout == first.stdout


def test_file_defaults_to_stdin(runner):
    text = LISTING1.read_text(encoding="utf-8")
    result = runner.invoke(main, ["optimize", "-p", "none"], input=text)
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stdout == format_module(parse_module(text))
    # Diagnostics about stdin name it <stdin>.
    assert "<stdin>:3:31: warning: %new_shape is not defined" in result.stderr


def test_output_file(runner, tmp_path: Path):
    out = tmp_path / "canonical.mlir"
    result = runner.invoke(main, ["optimize", "-p", "none", str(LISTING1), "-o", str(out)])
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stdout == ""
    written = out.read_text(encoding="utf-8")
    assert written == format_module(parse_module(LISTING1.read_text(encoding="utf-8")))
    # --output is the long spelling, and it overwrites.
    again = runner.invoke(main, ["optimize", "-p", "none", str(OPS), "--output", str(out)])
    assert again.exit_code == 0, again.output
    assert "@symbolic_shape_graph" in out.read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") != written


def test_pipeline_none_prints_canonical_form(runner):
    result = runner.invoke(main, ["optimize", "-p", "none", str(OPS)])
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stderr == ""
    assert result.stdout == format_module(parse_module(OPS.read_text(encoding="utf-8")))
    assert "//" not in result.stdout  # comments are not kept


def test_pipeline_verify_explicitly(runner):
    result = runner.invoke(main, ["optimize", "-p", "verify", str(OPS)])
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stdout == format_module(parse_module(OPS.read_text(encoding="utf-8")))


@pytest.mark.parametrize("pipeline", ["nosuchpass", "verify,nosuchpass", "verify{bogus=1}",
                                      "verify{novalue}", "verify,,verify"])
def test_bad_pipeline_is_a_usage_error(runner, pipeline):
    result = runner.invoke(main, ["optimize", "-p", pipeline, str(LISTING1)])
    assert result.exit_code == 2, (result.stdout + result.stderr)
    assert "Usage:" in result.stderr
    assert "Traceback" not in (result.stdout + result.stderr)
    assert result.stdout == ""


def test_unknown_pass_names_the_known_ones(runner):
    result = runner.invoke(main, ["optimize", "-p", "nosuchpass", str(LISTING1)])
    assert result.exit_code == 2
    assert "unknown pass 'nosuchpass'" in result.stderr
    assert "verify" in result.stderr


def test_usage_errors(runner):
    assert runner.invoke(main, ["frobnicate"]).exit_code == 2
    assert runner.invoke(main, ["optimize", "--no-such-option", str(LISTING1)]).exit_code == 2
    assert runner.invoke(main, ["optimize", "a.mlir", "b.mlir"]).exit_code == 2


def test_version(runner):
    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"bladec, version {__version__}\n"


def test_group_help_shows_examples(runner):
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert "bladec optimize samples/listing1.mlir" in result.stdout
    assert "cat model.mlir | bladec optimize - | bladec optimize -" in result.stdout
    assert "optimize" in result.stdout
    assert runner.invoke(main, ["-h"]).stdout == result.stdout


def test_optimize_help_shows_examples_and_options(runner):
    result = runner.invoke(main, ["optimize", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert "bladec optimize -p none samples/listing1.mlir" in result.stdout
    for option in ("-p, --passes", "-o, --output", "'none'"):
        assert option in result.stdout


def test_python_dash_m_version():
    """`python -m bladec` is a working entry point (one subprocess: it is slow)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "bladec", "--version"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"bladec, version {__version__}\n"
