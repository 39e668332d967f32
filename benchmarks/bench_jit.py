"""Compile seconds and stream time: ``bladec.jit`` against ``jax.jit`` on a CodeAlpaca stream.

    python benchmarks/bench_jit.py [--steps 20] [--batch 8] [--pad 64] [--limit-fraction 0.6]

The small Llama training step (bladec/models/llama.py, SGD) over ``--steps`` random
CodeAlpaca batches of ``--batch`` records (token ids folded into the model's vocabulary),
every sequence padded to a multiple of ``--pad`` (the same buckets for every mode), each
mode training its own copy of the model from the same start, side by side in one process:

- jax.jit: the whole step, one executable per bucket (compile seconds: its ahead-of-time
  ``lower().compile()`` of each new bucket); and again with the XLA options bladec's
  backend compiles with, where it has any (on CPU: XLA's LLVM fusion emitters,
  runtime/jax_backend.py), for comparison (the goals are judged against the first);
- bladec.jit, no limit, with and without a coarse bucket serving a finer one;
- bladec.jit under a limit of ``--limit-fraction`` of the largest device peak without one,
  with and without a coarse bucket serving a finer one (``coarse=False``).

Each mode's seconds are the wall time of its steps, compiling included (each step waits
for its loss), and the process's CPU time over them (fairer on shared cores); compile
seconds likewise, wall and CPU, over the compilations alone. The goal of issue 16:
under the limit, no more than 1.2x the compile seconds of jax.jit at the same buckets;
without a limit, total time within 1.1x of jax.jit's. Losses are compared with
jax.jit's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support import allocator  # noqa: E402
import bladec  # noqa: E402
from bladec.models import llama  # noqa: E402
from bladec.runtime.engine import make_backend  # noqa: E402
from bladec.workloads.codealpaca import batches, load_examples, make_batch  # noqa: E402

CFG = llama.SMALL
DYNAMIC = {"tokens": "B,S", "targets": "B,S", "mask": "B,S"}


def step(params, tokens, targets, mask, lr):
    return llama.train_step(params, tokens, targets, mask, lr, CFG)


def stream(steps: int, batch: int, pad: int, seed: int) -> list[tuple]:
    examples = load_examples()
    out = []
    for records in batches(examples, batch, steps, seed):
        b = make_batch(records, vocab=CFG.vocab)
        s = -(-b.shape[1] // pad) * pad
        b = make_batch(records, pad_to=s, vocab=CFG.vocab)
        out.append((b.tokens, b.targets, b.mask, b.real_tokens))
    return out


def run_jax(data: list[tuple], options: dict | None = None) -> dict:
    """jax.jit of the whole step, compiled ahead of time once per bucket (``options``:
    XLA compiler options, as ``bladec.jit``'s backend passes its own)."""
    jitted = jax.jit(step)
    compiled: dict[tuple, object] = {}
    params = jax.device_put(llama.init_params(CFG, seed=1))
    losses, compile_s, compile_cpu, total = [], 0.0, 0.0, 0.0
    cpu = time.process_time()
    for tokens, targets, mask, _ in data:
        t0 = time.perf_counter()
        args = (params, tokens, targets, mask, np.float32(0.01))
        if tokens.shape not in compiled:
            c0, p0 = time.perf_counter(), time.process_time()
            compiled[tokens.shape] = jitted.lower(*args).compile(compiler_options=options)
            compile_s += time.perf_counter() - c0
            compile_cpu += time.process_time() - p0
        loss, params = compiled[tokens.shape](*args)
        losses.append(float(loss))
        total += time.perf_counter() - t0
    return {"seconds": total, "compile_seconds": compile_s, "compile_cpu": compile_cpu,
            "compilations": len(compiled),
            "losses": losses, "peak": None, "cpu": time.process_time() - cpu}


def run_bladec(data: list[tuple], pad: int, limit: int | None, coarse: bool = True) -> dict:
    """bladec.jit with the same padding (the batches come padded already; ``pad`` lets a
    coarse bucket serve a finer one, padding further)."""
    fn = bladec.jit(step, mem_limit=limit, dynamic=DYNAMIC, pad={"S": pad}, coarse=coarse)
    params = jax.device_put(llama.init_params(CFG, seed=1))
    losses, total, peak = [], 0.0, 0
    cpu = time.process_time()
    for tokens, targets, mask, _ in data:
        t0 = time.perf_counter()
        loss, params = fn(params, tokens, targets, mask, np.float32(0.01))
        losses.append(float(loss))
        total += time.perf_counter() - t0
        peak = max(peak, fn.report().peak_bytes)
    r = fn.report()
    return {"seconds": total, "compile_seconds": r.total_compile_seconds,
            "compile_cpu": r.total_compile_cpu_seconds,
            "compilations": r.total_compilations, "losses": losses, "peak": peak,
            "trace_seconds": r.trace_seconds, "buckets": r.buckets,
            "cpu": time.process_time() - cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--pad", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit-fraction", type=float, default=0.6)
    allocator.add_option(ap)
    args = ap.parse_args()
    status = allocator.run_under(args.allocator, sys.argv[1:], __file__)
    if status is not None:   # each allocator's table came from a child process
        sys.exit(status)
    print(f"{allocator.describe()}; every mode in this process, under the same one")
    data = stream(args.steps, args.batch, args.pad, args.seed)
    seqs = [d[0].shape[1] for d in data]
    print(f"{args.steps} batches of {args.batch}, sequence padded to multiples of "
          f"{args.pad}: {seqs} ({len(set(seqs))} buckets)", file=sys.stderr)
    rows = {"jax.jit": run_jax(data)}
    options = getattr(make_backend("jax"), "compile_options", {})
    if options:   # what jax.jit would take with the XLA options bladec compiles with
        rows[f"jax.jit, bladec's XLA options ({_show(options)})"] = run_jax(data, options)
    rows["bladec.jit, no limit"] = run_bladec(data, args.pad, None)
    rows["bladec.jit, no limit, no coarse bucket"] = run_bladec(data, args.pad, None, False)
    limit = int(args.limit_fraction * rows["bladec.jit, no limit"]["peak"])
    rows[f"bladec.jit, limit {args.limit_fraction}x"] = run_bladec(data, args.pad, limit)
    rows[f"bladec.jit, limit {args.limit_fraction}x, no coarse bucket"] = \
        run_bladec(data, args.pad, limit, coarse=False)
    base = rows["jax.jit"]
    print("| mode | device peak | compilations | compile s | vs jax.jit | compile CPU s "
          "| vs jax.jit | stream s | vs jax.jit | stream CPU s | vs jax.jit "
          "| largest loss difference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, r in rows.items():
        diff = max(abs(a - b) for a, b in zip(r["losses"], base["losses"]))
        peak = "-" if r["peak"] is None else f"{r['peak'] / 2**20:.2f} MiB"
        print(f"| {name} | {peak} | {r['compilations']} | {r['compile_seconds']:.1f} | "
              f"{r['compile_seconds'] / base['compile_seconds']:.2f}x | "
              f"{r['compile_cpu']:.1f} | {r['compile_cpu'] / base['compile_cpu']:.2f}x | "
              f"{r['seconds']:.1f} | "
              f"{r['seconds'] / base['seconds']:.2f}x | {r['cpu']:.1f} | "
              f"{r['cpu'] / base['cpu']:.2f}x | {diff:.1e} |")
    free = rows["bladec.jit, no limit"]
    limited = rows[f"bladec.jit, limit {args.limit_fraction}x"]
    c = limited["compile_seconds"] / base["compile_seconds"]
    c_cpu = limited["compile_cpu"] / base["compile_cpu"]
    same = rows["bladec.jit, no limit, no coarse bucket"]
    t = max(free["seconds"], same["seconds"]) / base["seconds"]
    print(f"\nlimit {limit} bytes; goals: compile seconds under the limit <= 1.2x jax.jit's: "
          f"{c:.2f}x, {'met' if c <= 1.2 else 'NOT met'} (CPU time: {c_cpu:.2f}x, "
          f"{'met' if c_cpu <= 1.2 else 'NOT met'}); stream time without a limit <= "
          f"1.1x jax.jit's (the slower of the two no-limit rows): {t:.2f}x, {'met' if t <= 1.1 else 'NOT met'}")


def _show(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items())


if __name__ == "__main__":
    main()
