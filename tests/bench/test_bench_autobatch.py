"""benchmarks/bench_autobatch.py: its markdown from rows, and (slow, `make bench`) the
run itself against DyNet at the issue's sizes, printing the table and checking what
must hold whatever the machine's load: the two systems compute the same losses, and
batching beats bladec's own unbatched execution at batch 64."""
from __future__ import annotations

import importlib.util

import pytest

from benchmarks import bench_autobatch as bench


def test_markdown_has_a_row_per_measurement():
    row = {"model": "treelstm", "hidden": 256, "batch": 64, "mode": "inference",
           "bladec_ms": 10.0, "dynet_ms": 20.0, "vs_dynet": 2.0, "bladec_cpu_ms": 5.0,
           "dynet_cpu_ms": 5.0, "vs_dynet_cpu": 1.0, "unbatched_ms": 50.0,
           "vs_unbatched": 5.0, "host_share": 0.1, "host_share_cpu": 0.08,
           "batches_compiling": 0, "batches": 3}
    ablation = {"model": "treelstm", "batch": 8, "variant": "all techniques", "ms": 1.0,
                "slowdown": 1.0, "cpu_ms": 2.0, "cpu_slowdown": 1.0, "host_ms": 0.1,
                "calls": 5, "mode": "inference"}
    training = dict(ablation, variant="product cotangents off", mode="training",
                    slowdown=1.25)
    text = bench.markdown([row], [ablation, training], "cmd")
    assert "| treelstm | 256 | 64 | inference | 10.0 | 20.0 | 2.00x |" in text
    assert "| 50.0 | 5.0x | 10% | 8% | 0/3 |" in text
    assert "| treelstm | 8 | inference | all techniques | 1.0 | 1.00x | 2.0 | 1.00x | 0.1 | 5 |" \
        in text
    assert "| treelstm | 8 | training | product cotangents off | 1.0 | 1.25x |" in text


def test_every_switch_of_the_options_is_ablated():
    """Each technique of bladec.autobatch's Options is switched off by one variant."""
    from bladec.batching.options import Options
    switched = {name for _, switches, _ in bench.ABLATIONS for name in switches}
    assert switched == set(Options.__dataclass_fields__)


@pytest.mark.slow
def test_benchmark_against_dynet(tmp_path, capsys):
    if importlib.util.find_spec("dynet") is None:
        pytest.skip("DyNet is not installed (pip install dynet38)")
    out = tmp_path / "autobatch.json"
    assert bench.main(["--warmup", "5", "--batches", "11", "--unbatched", "2",
                       "--ablation", "8", "--json", str(out)]) == 0
    import json
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 8
    for r in rows:
        assert r["first_batch_rel_diff"] <= 1e-4, r
        if r["batch"] == 64:
            assert r["vs_unbatched"] >= 4.0, r
