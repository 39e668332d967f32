"""benchmarks/bench_run.py: a tiny run of every table, and (slow) the real benchmark; the
stream of table 2 (benchmarks/support/shapestream.py) on its own."""
from __future__ import annotations

import numpy as np
import pytest


pytest.importorskip("jax")

from benchmarks import bench_run as bench  # noqa: E402
from benchmarks.support import shapestream as stream  # noqa: E402

# A training step of one tanh layer: few ops, so every compilation is quick.
TINY = """\
func.func @main(%x: tensor<?x?x8, [@S0, @S1, @C8]>, %y: tensor<?x?x8, [@S0, @S1, @C8]>, %w: tensor<8x8>) {
  %one = constant() {value = 1.0} -> tensor<f32>
  %oneb = broadcast_in_dim(%one) {dims = []} -> tensor<?x8, [@S2, @C8]>
  %x2 = reshape(%x) -> tensor<?x8, [@S2, @C8]>
  %y2 = reshape(%y) -> tensor<?x8, [@S2, @C8]>
  %h = dot(%x2, %w) -> tensor<?x8, [@S2, @C8]>
  %t = tanh(%h) -> tensor<?x8, [@S2, @C8]>
  %d = sub(%t, %y2) -> tensor<?x8, [@S2, @C8]>
  %sq = mul(%d, %d) -> tensor<?x8, [@S2, @C8]>
  %loss = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %t2 = mul(%t, %t) -> tensor<?x8, [@S2, @C8]>
  %dt = sub(%oneb, %t2) -> tensor<?x8, [@S2, @C8]>
  %dh = mul(%d, %dt) -> tensor<?x8, [@S2, @C8]>
  %dw = dot_general(%x2, %dh) {lhs_contract = [0], rhs_contract = [0]} -> tensor<8x8>
  %wn = sub(%w, %dw) -> tensor<8x8>
  return %loss, %wn
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 16, max = 2048}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
"""


def _check_tables(text: str) -> None:
    for heading in ("### 1. Throughput", "### 2. Compilations", "### 3. Bitwise check",
                    "### Goals"):
        assert heading in text
    assert "| (a) whole-graph jax.jit, fusion on | none |" in text
    assert "| (b) bladec, no limit | none |" in text
    assert "(d) bladec, schedule, 0.5x" in text
    assert "| no padding |" in text
    assert "bit for bit: yes" in text


def test_tiny_benchmark(tmp_path, capsys):
    listing = tmp_path / "tiny-train.mlir"
    listing.write_text(TINY)
    result = bench.main(["--sample", str(listing), "--dims", "S0=2,S1=16", "--repeats", "2",
                         "--limits", "0.5", "--fuse", "0", "--no-unscheduled",
                         "--no-jit-nofuse", "--stream-steps", "3", "--stream-batch", "1",
                         "--stream-max-seq", "40", "--ablate", "--profile-rounds", "1",
                         "--allocator", "default"])
    text = capsys.readouterr().out
    _check_tables(text)
    assert "cut points not shared" in text and "every segment awaited" in text
    assert "| XLA temp |" in text
    assert result["bitwise"] and result["bitwise_all_fuse_off"]
    assert [r["label"] for r in result["stream"]][0] == "no padding"
    unpadded, padded = result["stream"][0], result["stream"][1]
    assert unpadded["compilations"] == unpadded["distinct"] >= 1
    assert padded["compilations"] <= unpadded["compilations"]


def test_padding_matches_the_session():
    """pad_inputs pads as `bladec run` does: symbols=None as --pad-multiple (every free
    symbol, each at most its declared max), a set as --pad S=N for each."""
    from bladec.parse import parse_module
    from bladec.runtime.backends.backend import NumpyBackend
    from bladec.runtime.executor import Executor
    from bladec.runtime.padding import pad_inputs, padding_multiples
    ex = Executor(parse_module(TINY), NumpyBackend())
    inputs = ex.random_inputs({"S0": 3, "S1": 17})
    ours = stream.pad_inputs(ex, inputs, 8, None)
    theirs = pad_inputs(ex, inputs, padding_multiples(ex, None, 8))
    assert {n: a.shape for n, a in ours.items()} == {n: a.shape for n, a in theirs.items()}
    assert ours["%x"].shape == (8, 24, 8)
    only_seq = stream.pad_inputs(ex, inputs, 8, {"S1"})
    assert only_seq["%x"].shape == (3, 24, 8) and only_seq["%w"].shape == (8, 8)
    assert np.array_equal(only_seq["%x"][:, :17], inputs["%x"])
    assert not only_seq["%x"][:, 17:].any()
    # S0 is at most 64: a multiple of 100 stops there, and says so
    from bladec.errors import BladecWarning
    with pytest.warns(BladecWarning, match="padding S0=3 to 64, its declared maximum"):
        assert stream.pad_inputs(ex, inputs, 100, {"S0"})["%x"].shape == (64, 17, 8)


def test_batch_stream_is_seeded_and_clipped():
    lengths = np.arange(10, 1000, 7)
    a = stream.batch_stream(lengths, 20, 4, seed=1, lo=16, hi=500)
    assert a == stream.batch_stream(lengths, 20, 4, seed=1, lo=16, hi=500)
    assert len(a) == 20 and all(16 <= s <= 500 for s in a)


@pytest.mark.slow
def test_benchmark_run(capsys):
    """The real benchmark with fewer rounds: every table, and bitwise equality."""
    result = bench.main(["--repeats", "3", "--allocator", "default"])
    text = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + text)
    _check_tables(text)
    assert result["bitwise"] and result["bitwise_all_fuse_off"]
    assert len(result["stream"]) == 3
