"""benchmarks/bench_grad.py's largest-batch search: the answer from any candidate, in few
probes (each probe plans and compiles a step; the search at sequence 256 used to take
more than 10 minutes)."""
from __future__ import annotations

import pytest

from benchmarks import bench_grad


@pytest.mark.parametrize("answer", [0, 1, 7, 8, 12, 31, 32])
@pytest.mark.parametrize("candidate", [1, 8, 12, 16, 32])
def test_largest_batch_search_from_any_candidate(answer, candidate):
    probes: list[int] = []

    def make(n: int) -> bool:
        assert 1 <= n <= bench_grad.MAX_BATCH and n not in probes
        probes.append(n)
        return n <= answer
    assert bench_grad.fits(make, candidate) == answer
    assert len(probes) <= 11
    if abs(answer - candidate) <= 1 and answer:
        assert len(probes) <= 2   # a good candidate costs one probe either side
