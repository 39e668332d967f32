"""One Python process with JAX on 8 CPU devices that runs the sharded checks' commands
in turn, so that a test module's checks share one Python and JAX start (about 2.5 s of
CPU each) instead of paying one per command.

JAX fixes its device count when its backend starts, so the rest of the suite, on one
device, can not run them in its own process. A command is what the tests used to start
as a subprocess (``[sys.executable, "-m", "bladec", "run", ...]``,
``[sys.executable, "benchmarks/bench_reshard.py", ...]``): the worker runs the module or
script as ``__main__`` with that ``sys.argv``, its stdout and stderr captured, its exit
status from ``SystemExit`` (an uncaught exception: its traceback on stderr, status 1, as
Python does), and answers with a :class:`subprocess.CompletedProcess`; JAX's caches are
cleared after each command. Tests that are about processes (two processes over
jax.distributed, a fresh process's cache or RSS) keep their own subprocesses.

A command that outlives its timeout kills the worker (``subprocess.TimeoutExpired``); a
worker that dies fails the command with the end of its log; either way the next
command starts a fresh worker.

    python -m tests.support.meshworker      # the worker: JSON lines in, JSON lines out
"""
from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.paths import ROOT

# The worker runs with the suite's XLA flags and 8 host devices, on the CPU platform. A
# command may ask for LLVM's level 0 besides (the sharded checks set it themselves): it
# changes code generation's speed only, not what is computed or the buffers.
DEVICES = "--xla_force_host_platform_device_count=8"
LEVEL_0 = "--xla_backend_optimization_level=0"
FIXED = ("XLA_FLAGS", "JAX_PLATFORMS")


# CPU seconds the workers of this process spent in commands, as they report it: the
# suite's per-test CPU log (tests/conftest.py) counts it with the test's subprocesses,
# since a worker is waited for only when the session ends.
COMMANDS_CPU = [0.0]


class MeshWorker:
    """The client: starts the worker at its first command, and again after a crash."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._log: Path | None = None

    def _start(self) -> subprocess.Popen:
        fd, log = tempfile.mkstemp(prefix="bladec-meshworker-", suffix=".log")
        self._log = Path(log)
        flags = os.environ.get("XLA_FLAGS", "").split()
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": " ".join(flags + [DEVICES] * (DEVICES not in flags))}
        with os.fdopen(fd, "w") as err:
            return subprocess.Popen([sys.executable, "-m", "tests.support.meshworker"],
                                    cwd=ROOT, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err, text=True)

    def _log_tail(self) -> str:
        return self._log.read_text(errors="replace")[-3000:] if self._log else ""

    def _died(self, when: str) -> AssertionError:
        """The failure of a command whose worker died, with the end of its log; the
        worker is closed, so the next command starts a fresh one."""
        log = self._log_tail()
        self.close()
        return AssertionError(f"the mesh worker died {when}:\n{log}")

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None

    def run(self, args: list[str], env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """``subprocess.run(args, env=env, capture_output=True, text=True, timeout=...)``
        from the repository root, run by the worker. ``args[0]`` is the Python
        interpreter; ``env``'s XLA flags must be among the worker's."""
        if args[0] != sys.executable or len(args) < 2:
            raise ValueError(f"not a Python command: {args}")
        env = dict(os.environ if env is None else env)
        unknown = set(env.get("XLA_FLAGS", "").split()) - set(
            os.environ.get("XLA_FLAGS", "").split()) - {DEVICES, LEVEL_0}
        if unknown:
            raise ValueError(f"the mesh worker runs without {sorted(unknown)}")
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self._proc = self._start()
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        request = {"args": args[1:], "env": {k: v for k, v in env.items() if k not in FIXED}}
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            raise self._died(f"before {args[1:]}")
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise subprocess.TimeoutExpired(args, timeout)
        line = proc.stdout.readline()
        if not line:
            proc.wait()
            raise self._died(f"(status {proc.returncode}) running {args[1:]}")
        answer = json.loads(line)
        COMMANDS_CPU[0] += answer["cpu"]
        return subprocess.CompletedProcess(args, answer["returncode"], answer["stdout"],
                                           answer["stderr"])


def _run_one(args: list[str], env: dict[str, str]) -> dict:
    """One command, as ``python ARGS`` would run it in a fresh process with ``env``."""
    import runpy
    import traceback
    saved_env, saved_argv, saved_path = dict(os.environ), sys.argv, list(sys.path)
    out, err = io.StringIO(), io.StringIO()
    saved_streams = sys.stdout, sys.stderr
    os.environ.clear()
    os.environ.update({**env, **{k: saved_env[k] for k in FIXED if k in saved_env}})
    sys.stdout, sys.stderr = out, err
    code = 0
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            sys.path.insert(0, str(Path(args[0]).resolve().parent))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - as the interpreter reports one
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout, sys.stderr = saved_streams
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.environ.clear()
        os.environ.update(saved_env)
    return {"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def serve() -> None:
    """Answers each JSON line on stdin with one on the stdout it started with; what the
    commands' C++ parts write to file descriptor 1 goes to stderr (the client's log)."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import gc
    import jax
    assert jax.device_count() == 8, jax.devices()
    for line in sys.stdin:
        request = json.loads(line)
        start = time.process_time()
        answer = _run_one(request["args"], request["env"])
        jax.clear_caches()
        gc.collect()
        answer["cpu"] = time.process_time() - start
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
