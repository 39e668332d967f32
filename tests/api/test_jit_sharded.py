"""``bladec.jit`` on globally sharded ``jax.Array``\\ s (api/sharded.py), against
``jax.jit`` with the same ``out_shardings``: in one process of 8 CPU devices, and in two
processes of 4 devices each over jax.distributed (gloo collectives). JAX fixes its
device count when its backend starts, so both run outside the test's process
(tests/support/jit_mesh_check.py): the one-process check in the session's mesh worker,
the two processes as subprocesses.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

CHECK = [sys.executable, "-m", "tests.support.jit_mesh_check"]
ENV = {**os.environ, "XLA_FLAGS": "", "JAX_PLATFORMS": "cpu"}


def _report(out: str) -> dict:
    # gloo prints its connections on stdout too: the report is the last line
    return json.loads(out.strip().splitlines()[-1])


def _check(report: dict) -> None:
    # the outputs split as out_shardings asks, as jax.jit's are
    assert report["same_sharding"] == [True, True, True]
    assert report["specs"][1] == "P(None, 'model')"
    assert max(report["diff"]) < 1e-6
    # the cross-entropy's gather, its scatter and the mean's size read keep the batch
    # split: the propagated step has no gathering collective
    assert report["gathers"] == 0
    assert 0 < report["peak"] < report["whole_input_bytes"]


def test_one_process_of_8_devices(mesh_worker):
    # run by the session's 8-device worker (tests/support/meshworker.py): no JAX start
    done = mesh_worker.run(CHECK + ["one"], env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = _report(done.stdout)
    _check(report)
    # a second batch size: traced again with the batch symbolic (4 blocks of S1 rows;
    # the first trace was of whole arrays, whose hot path the split ones did not take)
    assert max(report["diff_second"]) < 1e-6
    assert "S1=32" in report["second"] and "3 trace(s)" in report["second"]
    assert "device peak per device of 8" in report["second"]   # a mesh's figures are per device


@pytest.mark.slow   # issue 36: 4.7 s; `make test` keeps one process of 8 devices (above) and
# two processes through jax.distributed (tests/runtime/test_sharded_run.py)
def test_two_processes_hold_their_own_shards():
    """Each process holds its devices' blocks only (the parameters, split over model,
    whole; half of the batch), and gets its own blocks of the outputs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen(CHECK + ["cluster", str(i), str(port)], cwd=ROOT, env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        report = _report(out)
        assert report["process"] == i and report["devices"] == 8
        _check(report)
        params = (16 * 32 + 32 * 8) * 4
        assert report["own_input_bytes"] == params + (64 * 16 * 4 + 64 * 4) // 2
