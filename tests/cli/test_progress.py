"""Progress on stderr (issue 16): a tqdm line on a terminal, nothing with --quiet or when
stderr is a file or a pipe; and ``bladec run`` of an optimized listing runs no passes."""
from __future__ import annotations

import io

import pytest

from bladec.cli import main
from bladec.cli.display import _ProgressLine

from tests.support.clirunner import make_runner
from tests.support.paths import ROOT

LISTING1 = ROOT / "samples" / "listing1-runnable.mlir"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _show(quiet: bool, stream: io.StringIO) -> str:
    with _ProgressLine(quiet, stream) as progress:
        progress.stage("optimizing: schedule")
        progress.stage("planning and compiling for S0=4")
        progress.tick()
        progress.tick()
    return stream.getvalue()


def test_progress_on_a_terminal() -> None:
    text = _show(False, _Terminal())
    assert "optimizing: schedule" in text and "planning and compiling for S0=4" in text
    assert "2 compiled" in text
    assert text.endswith("\r")   # the line is cleared when the work ends


@pytest.mark.parametrize("quiet, stream", [(True, _Terminal()), (False, io.StringIO())])
def test_no_progress_when_quiet_or_not_a_terminal(quiet, stream) -> None:
    assert _show(quiet, stream) == ""


@pytest.mark.parametrize("command", [["optimize"], ["run", "--dims", "S1=8", "--backend",
                                                    "numpy"]])
def test_cli_quiet_and_silent_off_a_terminal(command) -> None:
    runner = make_runner()
    for extra in ([], ["--quiet"], ["-q"]):
        result = runner.invoke(main, [*command, str(LISTING1), *extra])
        assert result.exit_code == 0, result.output
        # stderr is not a terminal here: only the listing's own warning, no progress
        assert "optimizing" not in result.stderr and "compil" not in result.stderr


def test_run_of_an_optimized_listing_runs_no_passes(tmp_path, monkeypatch) -> None:
    """The remat.plan that optimize writes marks a listing as optimized: `bladec run`
    runs it as it is unless -p asks for passes (about a fifth of a run's time before)."""
    runner = make_runner()
    optimized = runner.invoke(main, ["optimize", str(LISTING1)])
    assert optimized.exit_code == 0 and "remat.plan" in optimized.stdout
    path = tmp_path / "opt.mlir"
    path.write_text(optimized.stdout)
    ran = []
    import bladec.runtime.engine as engine
    real = engine.run_pipeline
    monkeypatch.setattr(engine, "run_pipeline", lambda m, p: ran.append(p) or real(m, p))
    args = ["run", str(path), "--dims", "S1=8", "--backend", "numpy", "--json"]
    assert runner.invoke(main, args).exit_code == 0 and ran == []
    assert runner.invoke(main, [*args, "-p", "analyze,schedule,remat"]).exit_code == 0
    assert [p.name for batch in ran for p in batch] == ["analyze", "schedule", "remat"]
    ran.clear()
    plain = runner.invoke(main, ["run", str(LISTING1), "--dims", "S1=8", "--backend", "numpy"])
    assert plain.exit_code == 0 and len(ran) == 3   # not optimized yet: the default passes


def test_persistent_compilation_cache_spares_a_second_process(tmp_path) -> None:
    """`--compilation-cache DIR` (or BLADEC_COMPILATION_CACHE): the first process stores
    its executables there, a second one with the same segments loads them and writes
    nothing (a miss would write its entry again). In subprocesses: JAX's cache setting is process-wide."""
    import json
    import os
    import subprocess
    import sys
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "bladec", "run", str(LISTING1), "--dims", "S1=8", "--json",
           "--compilation-cache", str(cache)]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    stored = sorted((f, os.stat(cache / f).st_mtime_ns) for f in os.listdir(cache))
    assert stored and json.loads(first.stdout)["compilations"] >= 1
    env.pop("BLADEC_COMPILATION_CACHE", None)
    again = subprocess.run(cmd[:-2], capture_output=True, text=True, timeout=300,
                           env={**env, "BLADEC_COMPILATION_CACHE": str(cache)})
    assert again.returncode == 0, again.stderr
    # every executable was found there: a miss would have written its entry anew
    assert sorted((f, os.stat(cache / f).st_mtime_ns) for f in os.listdir(cache)) == stored


def test_run_keeps_a_compilation_cache_by_default(tmp_path) -> None:
    """Without --compilation-cache, `bladec run` keeps its executables under
    $XDG_CACHE_HOME/bladec/xla, and a second process loads every one of them (a miss
    would write its entry anew); `off` keeps nothing, and an unusable default directory
    runs without a cache rather than failing."""
    import os
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "bladec", "run", str(LISTING1), "--dims", "S1=8", "-q"]
    env = {k: v for k, v in os.environ.items() if k != "BLADEC_COMPILATION_CACHE"}
    env.update(JAX_PLATFORMS="cpu", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    cache = tmp_path / "xdg" / "bladec" / "xla"

    def entries() -> list[tuple[str, int]]:
        return sorted((f, os.stat(cache / f).st_mtime_ns) for f in os.listdir(cache)
                      if f.endswith("-cache"))

    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    stored = entries()
    assert stored
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert entries() == stored
    peak = [line for line in first.stdout.splitlines() if line.startswith("peak:")]
    assert peak and peak[0] in again.stdout.splitlines()   # the loaded executable's figures
    # the report says which compilations were loads
    assert "loaded from the compilation cache" not in first.stdout
    assert "compilations: 1 (" in again.stdout
    assert "; 1 loaded from the compilation cache)" in again.stdout

    off = tmp_path / "off"
    none = subprocess.run([*cmd, "--compilation-cache", "off"], capture_output=True,
                          text=True, env={**env, "XDG_CACHE_HOME": str(off)}, timeout=300)
    assert none.returncode == 0, none.stderr
    assert not off.exists()
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory would go")
    unusable = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                              env={**env, "XDG_CACHE_HOME": str(blocked)})
    assert unusable.returncode == 0, unusable.stderr
    assert unusable.stderr == first.stderr   # the listing's own warning, nothing more
