"""``make demo``: bladec's main job, shown on a real training step.

A Llama SGD training step (bladec/models/llama.py at the width the benchmarks run on
CPU: 4 layers, hidden 128, vocabulary 2048) at batch 8 x sequence 256: its device peak under ``jax.jit`` (XLA's own figure for the whole step), under
``bladec.jit`` with no limit, and under ``bladec.jit`` with a limit that ``jax.jit``
exceeds (0.8x jit's figure, which a CPU reaches too: there host copies share the
device's memory and only recomputes lower the peak; where a limit can not be met, the
refusal names the smallest that works and the demo runs there), the loss checked
against jit's. Then the same step as a
listing (what ``bladec import`` makes of it) run by the command line's library at that
limit, with its memory timeline drawn to out/demo-timeline.png.

All figures are device figures (DESIGN.md section 4: held arrays plus the running
executable's XLA outputs and temporaries), measured, not modelled.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import jax
import numpy as np

import bladec
from bladec.errors import BladecError
from bladec.frontend.jax_import import trace
from bladec.models import llama
from bladec.runtime.session import run_listing
from bladec.runtime.timeline import write_timeline
from bladec.units import format_size

ROOT = Path(__file__).resolve().parents[1]
BATCH, SEQ = 8, 256
CONFIG = llama.Config(vocab=2048, hidden=128, intermediate=344, heads=4, layers=4)
PICTURE = ROOT / "out" / "demo-timeline.png"
SMALLEST = re.compile(r"smallest limit that works is [^(]*\((\d+) bytes")


def step(params, tokens, targets, mask, lr):
    return llama.train_step(params, tokens, targets, mask, lr, CONFIG)


def jit_peak(args: tuple) -> int:
    """XLA's own figure for the whole step, as DESIGN section 4 counts a segment."""
    m = jax.jit(step).lower(*args).compile().memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
            - m.alias_size_in_bytes)


def main() -> int:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, CONFIG.vocab, (BATCH, SEQ + 1), dtype=np.int32)
    params = jax.device_put(llama.init_params(CONFIG))
    args = (params, ids[:, :-1], ids[:, 1:], np.ones((BATCH, SEQ), np.float32),
            np.float32(0.05))
    print(f"bladec demo: a Llama SGD training step ({CONFIG.layers} layers, hidden "
          f"{CONFIG.hidden}) at batch {BATCH} x sequence {SEQ} (bladec/models/llama.py)")
    jitted = jit_peak(args)
    loss_jit, _ = jax.jit(step)(*args)
    print(f"  jax.jit                      device peak {format_size(jitted):>11}  "
          f"(XLA's own figure for the whole step)")
    free = bladec.jit(step)
    loss_free, _ = free(*args)
    print(f"  bladec.jit, no limit         device peak "
          f"{format_size(free.report().peak_bytes):>11}")
    limit = jitted * 4 // 5
    lean = bladec.jit(step, mem_limit=limit)
    try:
        loss, _ = lean(*args)
    except BladecError as exc:   # the limit can not be met: the message names one that can
        print(f"  bladec.jit, limit {format_size(limit):>9}  refused: {exc}")
        found = SMALLEST.search(str(exc))
        if found is None:
            raise
        limit = int(found.group(1))
        lean = bladec.jit(step, mem_limit=limit)
        loss, _ = lean(*args)
    r = lean.report()
    print(f"  bladec.jit, limit {format_size(limit):>9}  device peak "
          f"{format_size(r.peak_bytes):>11}  ({r.segments} segments, {r.evictions} "
          f"evictions, {r.recomputes} recomputes, {r.reloads} reloads; "
          f"{format_size(limit)} is {limit / jitted:.2f}x jit's figure)")
    drift = max(abs(float(loss) - float(loss_jit)), abs(float(loss_free) - float(loss_jit)))
    print(f"  loss {float(loss):.6f}, jax.jit's {float(loss_jit):.6f} (difference "
          f"{drift:.1e})")
    if r.peak_bytes > limit or drift > 1e-4:
        print("demo: the limit or the loss did not hold", file=sys.stderr)
        return 1
    module = trace(**llama.import_spec(CONFIG, BATCH, SEQ)).module
    result = run_listing(module, None, limit=limit, dims={"S0": BATCH, "S1": SEQ})
    PICTURE.parent.mkdir(exist_ok=True)
    write_timeline(str(PICTURE), result, source="the Llama step")
    print(f"  the same step as a listing under that limit: device peak "
          f"{format_size(result.report.peak_bytes)}; its memory timeline, op by op against "
          f"the original order: {PICTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
