"""Choosing the CPUs XLA's CPU client is given (runtime/backends/cpus.py): on one CPU its
compiler splits no loop fusion; the count is checked, and a client already started is
an error, not a silent no-op."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bladec.errors import BladecError
from bladec.runtime.backends.cpus import client_started, confine

ROOT = Path(__file__).resolve().parents[3]
ALLOWED = len(os.sched_getaffinity(0))

# a loop fusion large enough that XLA splits it over its pool where it has several threads
_SPLIT = """
import json, os, sys
from bladec.runtime.backends.cpus import confine
if sys.argv[1] != "all":
    confine(int(sys.argv[1]))
import jax, jax.numpy as jnp
x = jnp.ones((1024, 1024))
hlo = jax.jit(lambda x: jnp.tanh(x) * 2 + jnp.exp(x)).lower(x).compile().as_text()
print(json.dumps({"cpus": len(os.sched_getaffinity(0)),
                  "split": "outer_dimension_partitions" in hlo}))
"""


def _split(cpus: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _SPLIT, cpus], capture_output=True,
                         text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_on_one_cpu_no_loop_fusion_is_split() -> None:
    assert _split("1") == {"cpus": 1, "split": False}


@pytest.mark.skipif(ALLOWED < 2, reason="one CPU: XLA splits nothing anyway")
def test_on_every_cpu_xla_splits_the_fusion() -> None:
    """The other side: what --cpus 1 takes away is there without it."""
    assert _split("all") == {"cpus": ALLOWED, "split": True}


@pytest.mark.parametrize("cpus", [0, -1, ALLOWED + 1])
def test_a_count_beyond_the_cpus_is_refused(cpus: int) -> None:
    before = os.sched_getaffinity(0)
    with pytest.raises(BladecError, match=f"this process may use {ALLOWED} CPU"):
        confine(cpus)
    assert os.sched_getaffinity(0) == before


def test_a_started_client_is_refused_and_nothing_changes() -> None:
    import jax.numpy as jnp
    jnp.ones(2).block_until_ready()
    assert client_started()
    before = os.sched_getaffinity(0)
    with pytest.raises(BladecError, match="has started already"):
        confine(1)
    assert os.sched_getaffinity(0) == before


def _tiny_model(tmp_path: Path) -> None:
    from tests.support.autobatchcase import make_batch
    (tmp_path / "tinytree.py").write_text(
        "from bladec.models.treelstm import model, init_params as _init\n"
        "def init_params():\n    return _init(hidden=4, vocab=30, classes=3)\n")
    (tmp_path / "trees.json").write_text(json.dumps(make_batch("treelstm", 3, 4, (2, 4))))


def test_cli_runs_on_one_cpu_with_the_same_outputs(tmp_path: Path) -> None:
    _tiny_model(tmp_path)
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    cmd = [sys.executable, "-m", "bladec", "autobatch", "tinytree:model", "trees.json",
           "--json", "--batch", "2"]
    runs = [subprocess.run(cmd + extra, capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=300) for extra in ([], ["--cpus", "1"])]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    outputs = [[json.loads(x)["output"] for x in r.stdout.splitlines()] for r in runs]
    assert len(outputs[0]) == 3 and outputs[1] == outputs[0]


def test_cli_errors_are_one_line(tmp_path: Path, monkeypatch) -> None:
    from tests.support.clirunner import make_runner

    from bladec.cli import main
    _tiny_model(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "trees.json",
                                    "--cpus", "0"])
    assert r.exit_code == 1
    assert r.stderr.strip() == (f"error: --cpus 0: this process may use {ALLOWED} CPU"
                                f"{'' if ALLOWED == 1 else 's'} (give 1 to {ALLOWED})")
    # in this test process XLA's client is running: choosing now would change nothing
    import jax.numpy as jnp
    jnp.ones(2).block_until_ready()
    r = make_runner().invoke(main, ["autobatch", "tinytree:model", "trees.json",
                                    "--cpus", "1"])
    assert r.exit_code == 1 and "has started already" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
