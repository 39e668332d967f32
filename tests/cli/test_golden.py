"""Golden tests: the ``// RUN:`` lines of every sample, checked with ``filecheck``.

A sample states how it is tested, LLVM lit style::

    // RUN: bladec optimize -p none %s | filecheck %s

``%s`` is the sample's path. A RUN line is a pipeline of ``bladec ...`` stages, run in
process through click's test runner (each stage's stdout is the next one's stdin), ending
in ``filecheck ...``, run as the ``filecheck`` command of the PyPI package against the
sample's ``// CHECK:`` lines. Every ``bladec`` stage must exit 0.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bladec.cli import main

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

SAMPLES = ROOT / "samples"
RUN_PREFIX = "// RUN:"


def run_lines(path: Path) -> list[str]:
    return [line.split(RUN_PREFIX, 1)[1].strip()
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.lstrip().startswith(RUN_PREFIX)]


def split_pipeline(command: str) -> list[list[str]]:
    """``a b | c d`` to ``[["a", "b"], ["c", "d"]]``, with shell quoting."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars="|")
    lexer.whitespace_split = True
    stages: list[list[str]] = [[]]
    for token in lexer:
        if token == "|":
            stages.append([])
        else:
            stages[-1].append(token)
    if any(not stage for stage in stages):
        raise ValueError(f"empty stage in RUN line {command!r}")
    return stages


def run_pipeline(command: str, sample: Path) -> tuple[int, str]:
    """Run one RUN line; return (exit status, diagnostics) of the stage that decided it."""
    stages = split_pipeline(command.replace("%s", shlex.quote(str(sample))))
    data = ""
    runner = make_runner()
    for stage in stages:
        tool, args = stage[0], stage[1:]
        if tool == "bladec":
            result = runner.invoke(main, args, input=data, catch_exceptions=False)
            if result.exit_code != 0:
                return result.exit_code, f"`{shlex.join(stage)}` failed:\n{result.stderr}"
            data = result.stdout
        elif tool == "filecheck":
            # the venv's own scripts first: `make test` runs its python without activating it
            exe = shutil.which("filecheck", path=str(Path(sys.executable).parent)) or \
                shutil.which("filecheck")
            assert exe is not None, "the `filecheck` command (PyPI package filecheck) is missing"
            proc = subprocess.run([exe, *args], input=data, capture_output=True, text=True,
                                  timeout=60)
            if proc.returncode != 0:
                return proc.returncode, (f"`{shlex.join(stage)}` failed:\n{proc.stderr}"
                                         f"{proc.stdout}\n--- its input ---\n{data}")
            data = proc.stdout
        else:
            raise ValueError(f"unsupported tool {tool!r} in RUN line {command!r}")
    return 0, ""


CASES = [pytest.param(path, i, cmd, id=f"{path.name}:{i}")
         for path in sorted(SAMPLES.glob("*.mlir"))
         for i, cmd in enumerate(run_lines(path))]


def test_samples_have_golden_run_lines():
    names = {case.values[0].name for case in CASES}
    assert {"ops.mlir", "listing1-golden.mlir"} <= names
    for case in CASES:
        assert "filecheck" in case.values[2], case.values[2]


@pytest.mark.parametrize("sample, index, command", CASES)
def test_run_line(sample: Path, index: int, command: str):
    status, message = run_pipeline(command, sample)
    assert status == 0, message


# -- the harness itself can fail ---------------------------------------------------------

def test_split_pipeline():
    assert split_pipeline("bladec optimize -p 'a,b{x=1}' f | filecheck f --x") == [
        ["bladec", "optimize", "-p", "a,b{x=1}", "f"], ["filecheck", "f", "--x"]]
    with pytest.raises(ValueError):
        split_pipeline("bladec optimize f | | filecheck f")


def _with_checks(tmp_path: Path, checks: str) -> Path:
    text = (SAMPLES / "listing1.mlir").read_text(encoding="utf-8")
    path = tmp_path / "l1.mlir"
    path.write_text(text + "// RUN: bladec optimize -p none %s | filecheck %s\n" + checks,
                    encoding="utf-8")
    return path


def test_harness_passes_matching_checks(tmp_path: Path):
    path = _with_checks(tmp_path, "// CHECK: %3 = dot(%2, %arg1)\n"
                                  "// CHECK-NEXT: %4 = reduce(%3)\n")
    (command,) = run_lines(path)
    assert run_pipeline(command, path) == (0, "")


def test_harness_reports_a_wrong_check(tmp_path: Path):
    path = _with_checks(tmp_path, "// CHECK: %3 = dot(%2, %arg1)\n"
                                  "// CHECK-NEXT: %1084 = broadcast(%4)\n")
    (command,) = run_lines(path)
    status, message = run_pipeline(command, path)
    assert status != 0
    assert "%1084 = broadcast(%4)" in message


def test_harness_reports_a_failing_bladec_stage(tmp_path: Path):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main(%a: tensor<4>) {\n  %b = nope(%a) -> tensor<4>\n}\n"
                    "// RUN: bladec optimize -p none %s | filecheck %s\n// CHECK: nope\n",
                    encoding="utf-8")
    (command,) = run_lines(path)
    status, message = run_pipeline(command, path)
    assert status == 1
    assert "bad.mlir:2:3: error: unknown op 'nope'" in message


def test_unsupported_tool_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="unsupported tool 'cat'"):
        run_pipeline("cat %s | filecheck %s", tmp_path / "x.mlir")


# -- samples/ops.mlir is the op zoo -------------------------------------------------------

def test_ops_sample_uses_every_registered_op():
    from bladec.ir import walk
    from bladec.ops import REGISTRY
    from bladec.parse import parse_module

    # ops.mlir is the zoo of the core ops; ops-*.mlir add families of their own (the
    # importer's ops in ops-import.mlir), so that branches adding ops touch their own file;
    # the collectives need a mesh: samples/sharded.mlir is their zoo
    used = set()
    paths = sorted(SAMPLES.glob("ops*.mlir")) + [SAMPLES / "sharded.mlir",
                                                  SAMPLES / "mlp-train-sharded.mlir"]
    for path in paths:
        module = parse_module(path.read_text(encoding="utf-8"))
        used |= {op.name for func in module.funcs for op in walk(func.ops)}
    # schedule.versions needs a second copy of the function; diamond.mlir's RUN lines
    # check it, as the schedule pass writes it.
    used.add("schedule.versions")
    assert sorted(set(REGISTRY) - used) == [], "add these ops to samples/ops*.mlir"
    assert used <= set(REGISTRY)


@pytest.mark.parametrize("name", [p.name for p in sorted(SAMPLES.glob("ops*.mlir"))])
def test_ops_sample_verifies_without_warnings(name: str):
    result = make_runner().invoke(main, ["optimize", str(SAMPLES / name)])
    assert result.exit_code == 0, (result.stdout + result.stderr)
    assert result.stderr == ""
