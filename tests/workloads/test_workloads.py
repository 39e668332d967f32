"""The CodeAlpaca pipeline of the paper benchmark (reads ../shared/data)."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.workloads.codealpaca import (DATA, PAD, batches, load_examples, make_batch,
                                         next_pow2)


@pytest.fixture(scope="module")
def examples():
    assert DATA.exists(), f"the shared data is missing: {DATA}"
    return load_examples()


def test_records_tokenize_in_the_alpaca_format(examples):
    assert len(examples) == 2017
    lengths = [len(e.ids) for e in examples]
    assert 30 <= min(lengths) and max(lengths) <= 1000  # SOURCE.md: about 40 to 680 tokens
    assert all(e.ids[0] == 1 and e.ids[-1] == 2 for e in examples)  # Llama-2 BOS and EOS
    assert all(0 < e.prompt_len < len(e.ids) for e in examples)


def test_batches_have_their_own_sequence_lengths(examples):
    runs = batches(examples, 16, 20, seed=3)
    seqs = {make_batch(b).shape[1] for b in runs}
    assert len(seqs) >= 10                       # the dynamic-shape workload
    assert batches(examples, 16, 20, seed=3)[0][0] is runs[0][0]   # seeded


def test_batch_targets_mask_and_padding(examples):
    recs = batches(examples, 14, 1, seed=0)[0]
    b = make_batch(recs)
    assert b.tokens.shape == b.targets.shape == b.mask.shape == (14, max(len(e.ids) for e in recs) - 1)
    for i, e in enumerate(recs):
        n = len(e.ids) - 1
        assert list(b.tokens[i, :n]) == e.ids[:-1] and list(b.targets[i, :n]) == e.ids[1:]
        assert (b.tokens[i, n:] == PAD).all() and (b.mask[i, n:] == 0).all()
        assert b.mask[i, : e.prompt_len - 1].sum() == 0      # the prompt is not trained on
        assert b.mask[i, e.prompt_len - 1: n].all()          # the response is
    assert b.real_tokens == sum(len(e.ids) - e.prompt_len for e in recs)
    folded = make_batch(recs, vocab=256)
    assert folded.tokens.max() < 256 and np.array_equal(folded.mask, b.mask)
    padded = make_batch(recs, pad_to=next_pow2(b.shape[1]))
    assert padded.shape[1] == next_pow2(b.shape[1]) and padded.real_tokens == b.real_tokens


def test_next_pow2():
    assert [next_pow2(n) for n in (1, 2, 3, 64, 65, 680)] == [1, 2, 4, 64, 128, 1024]
