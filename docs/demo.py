"""``make demo``: bladec's main job, shown on a real training step.

The small Llama's SGD training step (bladec/models/llama.py, ``llama.SMALL``) at batch 8 x
sequence 256: its device peak under ``jax.jit`` (XLA's own figure for the whole step), under
``bladec.jit`` with no limit, and under ``bladec.jit`` with a limit that ``jax.jit``
exceeds (half of jit's figure), the loss checked against jit's. Then the same step as a
listing (samples/llama-train-small.mlir, which ``bladec import
bladec.models.llama:small_train_spec`` writes) run by the command line's library at that
limit, with its memory timeline drawn to out/demo-timeline.png.

All figures are device figures (DESIGN.md section 4: held arrays plus the running
executable's XLA outputs and temporaries), measured, not modelled.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np

import bladec
from bladec.models import llama
from bladec.parse import parse_module
from bladec.runtime.session import run_listing
from bladec.runtime.timeline import write_timeline
from bladec.units import format_size

ROOT = Path(__file__).resolve().parents[1]
BATCH, SEQ = 8, 256
SAMPLE = ROOT / "samples" / "llama-train-small.mlir"
PICTURE = ROOT / "out" / "demo-timeline.png"


def step(params, tokens, targets, mask, lr):
    return llama.train_step(params, tokens, targets, mask, lr, llama.SMALL)


def jit_peak(args: tuple) -> int:
    """XLA's own figure for the whole step, as DESIGN section 4 counts a segment."""
    m = jax.jit(step).lower(*args).compile().memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
            - m.alias_size_in_bytes)


def main() -> int:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, llama.SMALL.vocab, (BATCH, SEQ + 1), dtype=np.int32)
    params = jax.device_put(llama.init_params(llama.SMALL))
    args = (params, ids[:, :-1], ids[:, 1:], np.ones((BATCH, SEQ), np.float32),
            np.float32(0.05))
    print(f"bladec demo: the small Llama's SGD training step at batch {BATCH} x sequence "
          f"{SEQ} (bladec/models/llama.py)")
    jitted = jit_peak(args)
    loss_jit, _ = jax.jit(step)(*args)
    print(f"  jax.jit                      device peak {format_size(jitted):>11}  "
          f"(XLA's own figure for the whole step)")
    free = bladec.jit(step)
    loss_free, _ = free(*args)
    print(f"  bladec.jit, no limit         device peak "
          f"{format_size(free.report().peak_bytes):>11}")
    limit = jitted // 2
    lean = bladec.jit(step, mem_limit=limit)
    loss, _ = lean(*args)
    r = lean.report()
    print(f"  bladec.jit, limit {format_size(limit):>9}  device peak "
          f"{format_size(r.peak_bytes):>11}  ({r.segments} segments, {r.evictions} "
          f"evictions, {r.recomputes} recomputes, {r.reloads} reloads)")
    drift = max(abs(float(loss) - float(loss_jit)), abs(float(loss_free) - float(loss_jit)))
    print(f"  loss {float(loss):.6f}, jax.jit's {float(loss_jit):.6f} (difference "
          f"{drift:.1e})")
    if r.peak_bytes > limit or drift > 1e-4:
        print("demo: the limit or the loss did not hold", file=sys.stderr)
        return 1
    module = parse_module(SAMPLE.read_text(), str(SAMPLE.relative_to(ROOT)))
    result = run_listing(module, None, limit=limit, dims={"S0": BATCH, "S1": SEQ})
    PICTURE.parent.mkdir(exist_ok=True)
    write_timeline(str(PICTURE), result, source=SAMPLE.name)
    print(f"  the same step as a listing ({SAMPLE.relative_to(ROOT)}) under that limit: "
          f"device peak {format_size(result.report.peak_bytes)}; its memory timeline, op "
          f"by op against the original order: {PICTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
