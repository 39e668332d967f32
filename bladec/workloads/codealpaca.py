"""CodeAlpaca batches for supervised fine-tuning, as in the paper's evaluation (section 3).

Each record is written in the Alpaca prompt format and tokenized with the Llama-2
SentencePiece model; a batch is ``batch_size`` records drawn at random, padded to its
longest record, so every batch has its own sequence length (the dynamic-shape workload).
The loss covers the response tokens only; padding and the prompt are masked out. The
data stays in ../shared (its licence forbids copying it into the repository).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "codealpaca" / "code_alpaca_2k.json"
TOKENIZER = ROOT.parent / "shared" / "data" / "llama2-tokenizer" / "tokenizer.model"

PROMPT_WITH_INPUT = ("Below is an instruction that describes a task, paired with an input that "
                     "provides further context. Write a response that appropriately completes "
                     "the request.\n\n### Instruction:\n{instruction}\n\n### Input:\n{input}"
                     "\n\n### Response:\n")
PROMPT_NO_INPUT = ("Below is an instruction that describes a task. Write a response that "
                   "appropriately completes the request.\n\n### Instruction:\n{instruction}"
                   "\n\n### Response:\n")
PAD = 0


@dataclass
class Example:
    ids: list[int]        # prompt + response + EOS, starting with BOS
    prompt_len: int


@dataclass
class Batch:
    tokens: np.ndarray    # [B, S] int32 inputs
    targets: np.ndarray   # [B, S] int32 next tokens
    mask: np.ndarray      # [B, S] float32, 1 where the target is a response token

    @property
    def shape(self) -> tuple[int, int]:
        return self.tokens.shape  # type: ignore[return-value]

    @property
    def real_tokens(self) -> int:
        return int(self.mask.sum())


def load_examples(data: Path = DATA, tokenizer: Path = TOKENIZER,
                  max_len: int | None = None) -> list[Example]:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer))
    records = json.loads(Path(data).read_text())
    out = []
    for r in records:
        template = PROMPT_WITH_INPUT if r.get("input") else PROMPT_NO_INPUT
        prompt = [sp.bos_id()] + sp.encode(template.format(**r))
        ids = prompt + sp.encode(r["output"]) + [sp.eos_id()]
        if max_len is not None:
            ids = ids[:max_len]
        out.append(Example(ids, min(len(prompt), len(ids))))
    return out


def make_batch(examples: list[Example], pad_to: int | None = None,
               vocab: int | None = None) -> Batch:
    """Pad to the longest record (or ``pad_to``); ``vocab`` folds ids for a smaller model."""
    seq = max(len(e.ids) for e in examples) - 1
    if pad_to is not None:
        seq = max(seq, pad_to)
    b = len(examples)
    tokens = np.full((b, seq), PAD, np.int32)
    targets = np.full((b, seq), PAD, np.int32)
    mask = np.zeros((b, seq), np.float32)
    for i, e in enumerate(examples):
        ids = np.asarray(e.ids, np.int64)
        if vocab is not None:
            ids = ids % vocab
        n = len(ids) - 1
        tokens[i, :n] = ids[:-1]
        targets[i, :n] = ids[1:]
        mask[i, max(e.prompt_len - 1, 0):n] = 1.0
    return Batch(tokens, targets, mask)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def batches(examples: list[Example], batch_size: int, steps: int, seed: int = 0
            ) -> list[list[Example]]:
    """``steps`` random batches of ``batch_size`` records (the same for every mode)."""
    rng = np.random.default_rng(seed)
    return [[examples[i] for i in rng.choice(len(examples), batch_size, replace=False)]
            for _ in range(steps)]
