"""Exit codes as the README's table says: every user mistake is 1 (or 2 for click usage),
never 3, with a clear message; `analyze` exits 4 when the peak does not fit.

Each case here exited 3 (an "internal error") or was silently accepted before.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bladec.cli import EXIT_CODES, main
from bladec.errors import BladecError
from bladec.passes import IntOption, parse_pipeline
from bladec.passes.remat import RematPass
from bladec.passes.schedule import SchedulePass

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

LISTING1 = ROOT / "samples" / "listing1.mlir"
RUNNABLE = ROOT / "samples" / "listing1-runnable.mlir"


@pytest.fixture
def runner() -> CliRunner:
    return make_runner()


def _run(runner: CliRunner, *args: str):
    return runner.invoke(main, ["run", str(RUNNABLE), "--backend", "numpy", *args])


def _user_error(result, *words: str) -> None:
    """Exit 1, one `error:` line on stderr containing ``words``, no traceback."""
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    for w in words:
        assert w in errors[0], (w, errors[0])
    assert "Traceback" not in result.output and "internal error" not in result.stderr


def _usage_error(result, *words: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert "Usage:" in result.stderr and "Traceback" not in result.output
    for w in words:
        assert w in result.stderr, (w, result.stderr)


# -- output paths: checked before the work -------------------------------------------------

def test_optimize_unwritable_output(runner, tmp_path):
    out = tmp_path / "no" / "such" / "dir" / "x.mlir"
    result = runner.invoke(main, ["optimize", str(LISTING1), "-o", str(out)])
    _user_error(result, "cannot write -o", "does not exist")
    assert result.stdout == ""


def test_output_under_a_file_is_not_a_directory(runner, tmp_path):
    (tmp_path / "f").write_text("x")
    result = runner.invoke(main, ["optimize", str(LISTING1), "-o", str(tmp_path / "f" / "x")])
    _user_error(result, "is not a directory")


def test_import_unwritable_output_is_checked_first(runner, tmp_path):
    result = runner.invoke(main, ["import", "no_such_module_xyz:f", "-o",
                                  str(tmp_path / "nodir" / "x.mlir")])
    _user_error(result, "cannot write -o")  # the path, not the import, is named


@pytest.mark.parametrize("option, name", [("--outputs", "o.npz"), ("--timeline", "t.png"),
                                          ("--timeline", "t.csv")])
def test_run_unwritable_paths_are_refused_before_the_run(runner, tmp_path, option, name):
    result = _run(runner, "--dims", "S1=2", option, str(tmp_path / "nodir" / name))
    _user_error(result, f"cannot write {option}")
    assert result.stdout == ""  # nothing ran


def test_run_bad_timeline_suffix_is_refused_before_the_run(runner, tmp_path):
    result = _run(runner, "--dims", "S1=2", "--timeline", str(tmp_path / "t.txt"))
    _user_error(result, ".csv or .png")
    assert result.stdout == ""


def test_run_prints_its_report_when_saving_fails(runner, tmp_path, monkeypatch):
    from bladec.runtime import session

    def full_disk(self, path):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(session.RunResult, "save_outputs", full_disk)
    timeline = tmp_path / "t.csv"
    result = _run(runner, "--dims", "S1=2", "--outputs", str(tmp_path / "o.npz"),
                  "--timeline", str(timeline))
    _user_error(result, "cannot write --outputs", "No space left on device")
    assert "binding: S1=2" in result.stdout  # the report came first
    assert timeline.exists()  # and the other file was still written


def _failing_runs(monkeypatch, message: str) -> None:
    """Every compiled segment of the JAX backend compiles as usual and fails when run,
    with ``message`` (as jaxlib's runtime errors say it)."""
    from bladec.runtime.backends import jax_backend

    class Failing:
        def __init__(self, executable):
            self.executable = executable

        def __getattr__(self, name):
            return getattr(self.executable, name)

        def __call__(self, *args):
            raise RuntimeError(message)

    compile_ = jax_backend.LazyCompiled.compile
    monkeypatch.setattr(jax_backend.LazyCompiled, "compile",
                        lambda self: Failing(compile_(self)))


def test_device_out_of_memory_is_a_user_error(runner, monkeypatch):
    """An allocator that refuses an allocation (seen on an H100 with the allocator
    capped under the limit: XLA's RESOURCE_EXHAUSTED) exits 1 with one line saying
    what to do, not 3 with "internal error"."""
    _failing_runs(monkeypatch, "RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                  "118.52MiB with allocator GPU_0_bfc on device 0.\nmore")
    result = runner.invoke(main, ["run", str(RUNNABLE), "--dims", "S1=2"])
    _user_error(result, "the device ran out of memory", "118.52MiB",
                "XLA_PYTHON_CLIENT_MEM_FRACTION")
    assert "more" not in result.stderr   # the first line of XLA's message only


def test_device_out_of_memory_outside_a_run_is_a_user_error(runner, monkeypatch):
    """XLA runs asynchronously: the status can surface where outputs are read, outside
    the engine's call; the command line still says it in one line and exits 1."""
    from bladec.runtime import session

    def exhausted(self, path):
        raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                           "35.00MiB with allocator GPU_0_bfc on device 0.")
    monkeypatch.setattr(session.RunResult, "save_outputs", exhausted)
    result = runner.invoke(main, ["run", str(RUNNABLE), "--dims", "S1=2", "--outputs",
                                  "o.npz"])
    _user_error(result, "the device ran out of memory", "35.00MiB")


def test_other_runtime_failures_stay_bugs(runner, monkeypatch):
    _failing_runs(monkeypatch, "INTERNAL: something else")
    result = runner.invoke(main, ["run", str(RUNNABLE), "--dims", "S1=2"])
    assert result.exit_code == 3 and "internal error" in result.stderr


# -- pipelines: a declared option schema per pass ----------------------------------------

@pytest.mark.parametrize("pipeline, words", [
    ("schedule{versions=0}", ["versions=0", "'schedule'", "[1, 16]", "default 4"]),
    ("schedule{versions=abc}", ["versions=abc", "[1, 16]"]),
    ("schedule{versions=17}", ["versions=17", "[1, 16]"]),
    ("remat{max_recompute=x}", ["max_recompute=x", "'remat'", "[1, 1024]", "default 8"]),
    ("remat{max_recompute=-3}", ["max_recompute=-3", "[1, 1024]"]),
    ("remat{keep=2}", ["unknown option 'keep'", "max_recompute=N"]),
    ("analyze{x=1}", ["'analyze' takes no options"]),
    ("remat,schedule", ["'schedule' after 'remat'", "drops the remat plan",
                        "put 'remat' after 'schedule'"]),
    ("analyze,remat,verify,schedule{versions=1}", ["'schedule' after 'remat'"]),
])
def test_bad_pass_options_are_usage_errors(runner, pipeline, words):
    for command in (["optimize", str(LISTING1)], ["run", str(RUNNABLE), "--dims", "S1=2"]):
        result = runner.invoke(main, [*command, "-p", pipeline])
        _usage_error(result, *words)
        assert result.stdout == ""
    with pytest.raises(BladecError):
        parse_pipeline(pipeline)


def test_good_pass_options_still_work(runner):
    passes = parse_pipeline("analyze, schedule{versions=2}, remat{max-recompute=3}")
    assert passes[1].versions == 2 and passes[2].max_ops == 3
    for ok in ("schedule,remat", "remat", "schedule,schedule,remat", "remat,remat"):
        assert parse_pipeline(ok)


def test_pass_constructors_check_their_options_too():
    assert SchedulePass(versions="2").versions == 2 and RematPass(3).max_ops == 3
    with pytest.raises(BladecError, match=r"versions=0 .*\[1, 16\]"):
        SchedulePass(versions=0)
    with pytest.raises(BladecError, match="max_recompute=x"):
        RematPass(max_recompute="x")


def test_int_option_describes_itself():
    opt = IntOption(4, 1, None, "orders")
    assert opt.describe("k") == "k=N (orders, N in [1, inf], default 4)"
    assert opt.parse("p", "k", " 12 ") == 12
    with pytest.raises(BladecError, match="k=0"):
        opt.parse("p", "k", "0")


# -- run's values ------------------------------------------------------------------------------

def test_negative_seed_is_a_usage_error(runner):
    _usage_error(_run(runner, "--dims", "S1=2", "--seed", "-1"), "--seed")


def test_huge_dims_are_refused_before_allocating(runner):
    result = _run(runner, "--dims", "S1=999999999999")
    _user_error(result, "this run needs", "S1=999999999999", "memory")


def test_dims_beyond_the_dimension_limit_are_an_argument_error(runner):
    result = _run(runner, "--dims", "S1=99999999999999999999999")
    _user_error(result, "S1=99999999999999999999999", "dims are at most")


@pytest.mark.parametrize("command", ["run", "analyze"])
def test_empty_mem_limit_is_an_error_not_no_limit(runner, command):
    path = RUNNABLE if command == "run" else LISTING1
    args = ["--backend", "numpy"] if command == "run" else []
    result = runner.invoke(main, [command, str(path), "--dims", "S1=2", "--mem-limit", "",
                                  *args])
    _user_error(result, "bad size ''")


# -- --inputs files ----------------------------------------------------------------------------

ARG1 = np.zeros((12, 11008), np.float32)


def _write_inputs(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.npz"
    if kind == "rank0":
        np.savez(path, arg0=np.float32(1), arg1=ARG1)
    elif kind == "object":
        np.savez(path, arg0=np.array([None, 1], dtype=object), arg1=ARG1)
    elif kind == "npy":
        path = tmp_path / "a.npy"
        np.save(path, np.zeros(24, np.float32))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "broken":
        path.write_bytes(b"PK\x03\x04" + b"not a zip" * 20)
    elif kind == "truncated":
        np.savez(path, arg0=np.zeros(24, np.float32), arg1=ARG1)
        path.write_bytes(path.read_bytes()[:300])
    elif kind == "text":
        path.write_text("arg0 = [1, 2, 3]\n")
    return path


@pytest.mark.parametrize("kind, words", [
    ("rank0", ["'arg0'", "rank 0", "rank 1"]),
    ("object", ["'arg0'", "object array"]),
    ("npy", [".npy", "numpy.savez"]),
    ("empty", ["cannot read inputs", "not an .npz"]),
    ("broken", ["cannot read inputs", "not an .npz"]),
    ("truncated", ["cannot read"]),
    ("text", ["cannot read inputs"]),
])
def test_bad_inputs_files_are_user_errors(runner, tmp_path, kind, words):
    path = _write_inputs(tmp_path, kind)
    _user_error(_run(runner, "--inputs", str(path)), path.name, *words)


def test_extra_arrays_in_inputs_are_named_in_a_warning(runner, tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, arg0=np.zeros(24, np.float32), arg1=ARG1, junk=np.zeros(3), old=np.ones(2))
    result = _run(runner, "--inputs", str(path))
    assert result.exit_code == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if "in.npz" in line]
    assert len(warning) == 1 and warning[0].startswith("warning: ")
    assert "junk, old" in warning[0] and "ignored" in warning[0]
    exact = tmp_path / "exact.npz"
    np.savez(exact, arg0=np.zeros(24, np.float32), arg1=ARG1)
    assert "ignored" not in _run(runner, "--inputs", str(exact)).stderr


# -- analyze: exit 4 when the peak does not fit ----------------------------------------------

def test_analyze_exit_4_is_documented(runner):
    assert "4" in EXIT_CODES and "does not fit" in EXIT_CODES
    help_text = runner.invoke(main, ["analyze", "--help"]).stdout
    assert "exit 4" in help_text and "Exit codes" in help_text
    assert runner.invoke(main, ["analyze", str(LISTING1), "--dims", "S1=100", "--mem-limit",
                                "1KiB"]).exit_code == 4
    assert runner.invoke(main, ["analyze", str(LISTING1), "--dims", "S1=100", "--mem-limit",
                                "1GiB"]).exit_code == 0


def test_readme_exit_code_table_matches_the_cli():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d) \| (.+) \|$", readme, flags=re.M))
    assert sorted(table) == ["0", "1", "2", "3", "4"]
    assert "bug" in table["3"] and "analyze" in table["4"]
    assert "--seed -1" in table["2"] and "pass option" in table["2"]
    for code in table:
        assert f"{code} " in EXIT_CODES


# -- padding beyond the multiple asked for is said ---------------------------------------------

PADDED = """\
func.func @main(%x: tensor<?x?, [@S0, @S1]>) {
  %y = exp(%x) -> tensor<?x?, [@S0, @S1]>
  return %y
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 32}
  SymbolicDim @S1 {min = 1, max = 4096}
}
"""


def test_pad_multiple_beyond_a_max_is_a_warning(runner, tmp_path):
    """--pad-multiple 64 pads a batch of 4 to its declared max 32 (one shape for every
    batch, as padding means to), and says so: it is not the multiple asked for."""
    path = tmp_path / "p.mlir"
    path.write_text(PADDED, encoding="utf-8")
    result = runner.invoke(main, ["run", str(path), "--backend", "numpy", "--dims",
                                  "S0=4,S1=100", "--pad-multiple", "64", "--json"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ("warning: padding S0=4 to 32, its declared maximum, not to a "
                             "multiple of 64 (the next one, 64, is beyond the maximum): 8x "
                             "the size; give --pad S0=N for another multiple\n")
    assert '"S0": 32' in result.stdout and '"S1": 128' in result.stdout
    quiet = runner.invoke(main, ["run", str(path), "--backend", "numpy", "--dims",
                                 "S0=4,S1=100", "--pad-multiple", "8"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_help_names_every_pass_option_and_range(runner):
    text = " ".join(runner.invoke(main, ["optimize", "--help"]).stdout.split())
    assert ("schedule{versions=N in 1..16 (default 4),exact=N in 0..1 (default 1),"
            "polish=N in 0..1 (default 1)}") in text
    assert "remat{max_recompute=N in 1..1024 (default 8)}" in text
    assert "Exit codes:" in text


@pytest.mark.parametrize("args", [
    ["--outputs", "DIR"], ["--timeline", "DIR"], ["--pad-multiple", "0"], ["--seed", "x"]])
# (a missing --inputs file is a user error, exit 1, as a missing listing: test_messages.py)
def test_click_checked_values_are_usage_errors_as_the_readme_says(runner, tmp_path, args):
    args = [a.replace("DIR", str(tmp_path)) for a in args]
    _usage_error(_run(runner, "--dims", "S1=2", *args))
