"""Table 2 of bench_run.py: compilations over a stream of steps of varying shapes.

Its own module because it measures something else than table 1: not the speed of one
binding, but how many compilations a stream of bindings costs, whose sequence lengths are
those of random batches of CodeAlpaca records, unpadded and padded as ``bladec run`` pads.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Module
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
ALPACA = ("Below is an instruction that describes a task{ctx}. Write a response that "
          "appropriately completes the request.\n\n### Instruction:\n{instruction}\n\n"
          "{input}### Response:\n{output}")


def record_lengths(seed: int) -> tuple[np.ndarray, str]:
    """Token counts of CodeAlpaca records with the Alpaca template, or a seeded stand-in."""
    path = DATA / "codealpaca" / "code_alpaca_2k.json"
    model = DATA / "llama2-tokenizer" / "tokenizer.model"
    try:
        import sentencepiece
        records = json.loads(path.read_text())
        sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
        texts = [ALPACA.format(
            ctx=", paired with an input that provides further context" if r["input"] else "",
            instruction=r["instruction"],
            input=f"### Input:\n{r['input']}\n\n" if r["input"] else "",
            output=r["output"]) for r in records]
        lengths = np.array([len(ids) + 1 for ids in sp.encode(texts)])  # + BOS
        return lengths, f"CodeAlpaca 2k, Llama-2 tokenizer ({len(lengths)} records)"
    except Exception as exc:  # noqa: BLE001 - any missing piece: the stand-in
        rng = np.random.default_rng(seed)
        lengths = np.clip(rng.lognormal(np.log(110), 0.6, 2017), 40, 680).astype(int)
        return lengths, f"log-normal stand-in (median 110, 40..680 tokens; {type(exc).__name__})"


def batch_stream(lengths: np.ndarray, steps: int, batch: int, seed: int,
                 lo: int, hi: int) -> list[int]:
    """Sequence length of each of ``steps`` random batches: the longest record, clipped."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        idx = rng.choice(len(lengths), size=batch, replace=False)
        out.append(int(np.clip(lengths[idx].max(), lo, hi)))
    return out


def pad_inputs(ex: Executor, inputs: dict[str, np.ndarray], multiple: int,
               symbols: set[str] | None) -> dict[str, np.ndarray]:
    """Zero-pad the inputs so that each of ``symbols`` (None: every free symbol) becomes
    a multiple of ``multiple``, at most its declared maximum: what ``bladec run`` does
    with ``pad={s: multiple}`` (``--pad S=N``), or with ``--pad-multiple N`` for None."""
    from bladec.runtime.padding import pad_inputs as session_pad, padding_multiples
    if symbols is None:
        multiples = padding_multiples(ex, None, multiple)
    else:
        multiples = padding_multiples(ex, {s: multiple for s in symbols}, None)
    return session_pad(ex, inputs, multiples)


@dataclass
class StreamRow:
    """One padding's line of table 2: its compilations, and what the padding cost."""
    label: str
    compilations: int = 0
    distinct: int = 0
    seconds: float = 0.0
    first_seconds: float = 0.0
    tokens: int = 0
    padded_tokens: int = 0
    ran: bool = True
    error: str = ""


def run_stream(module: Module, fuse: bool, seqs: list[int], batch: int, seq_sym: str,
               batch_sym: str, multiple: int | None, symbols: set[str] | None, label: str,
               execute: bool = True, seed: int = 0) -> StreamRow:
    """Every step of ``seqs`` at no limit, padded to ``multiple`` where given; with
    ``execute=False`` the distinct bindings are counted instead (one compilation each at
    no limit), for a padding that is too slow, or not possible, to run."""
    ex = Executor(module, JaxBackend(bitwise=not fuse))
    row = StreamRow(label)
    seen: set[tuple] = set()
    for i, s in enumerate(seqs):
        binding = {batch_sym: batch, seq_sym: s}
        inputs = ex.random_inputs(binding, seed + i)
        if multiple:
            inputs = pad_inputs(ex, inputs, multiple, symbols)
        shapes = tuple(sorted((n, a.shape) for n, a in inputs.items()))
        try:
            padded = ex.bind({n: a.shape for n, a in inputs.items()})
        except BladecError as exc:  # e.g. a padded dim past the symbol's declared range
            row.error = row.error or str(exc).removeprefix("error: ")
            row.ran = False
            continue
        row.tokens += batch * s
        row.padded_tokens += padded[batch_sym] * padded[seq_sym]
        new = shapes not in seen
        seen.add(shapes)
        if not execute:
            row.compilations += int(new)  # no limit: one segment per binding
            continue
        t = time.perf_counter()
        _, report = ex.run(inputs)
        dt = time.perf_counter() - t
        row.seconds += dt
        if report.compilations:
            row.first_seconds += dt
        row.compilations += report.compilations
    row.distinct = len(seen)
    row.ran = execute and not row.error
    return row


def stream_rows(module: Module, fuse: bool, seqs: list[int], batch: int, seq_sym: str,
                batch_sym: str, multiple: int, seed: int) -> list[StreamRow]:
    """Table 2's three paddings: none; ``seq_sym`` to a multiple of ``multiple``; every
    free symbol to one (counted, not run)."""
    return [
        run_stream(module, fuse, seqs, batch, seq_sym, batch_sym, None, None, "no padding",
                   seed=seed),
        run_stream(module, fuse, seqs, batch, seq_sym, batch_sym, multiple, {seq_sym},
                   f"--pad {seq_sym}={multiple}: {seq_sym} to a multiple of {multiple}",
                   seed=seed),
        run_stream(module, fuse, seqs, batch, seq_sym, batch_sym, multiple, None,
                   f"--pad-multiple {multiple}: every free symbol ({batch_sym} too), each "
                   "at most its declared maximum", execute=False, seed=seed),
    ]
