"""Compile seconds and stream time: ``bladec.jit`` against ``jax.jit`` on a CodeAlpaca stream.

    python benchmarks/bench_jit.py [--steps 20] [--batch 8] [--pad 64] [--limit-fraction 0.6]
                                   [--paired N]

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
jax.jit's. ``--paired N`` then alternates jax.jit and bladec.jit under the limit alone, N
rounds, for a ratio of compile CPU measured in the same period (issue 32's goal: 1.2x).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
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


def fresh_step(fn=step):
    """``fn`` (:func:`step`) as a new function object: JAX caches a function's tracing
    and its executables by the function, so a round of ``--paired`` compiles as the
    first did."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def stream(steps: int, batch: int, pad: int, seed: int) -> list[tuple]:
    examples = load_examples()
    out = []
    for records in batches(examples, batch, steps, seed):
        b = make_batch(records, vocab=CFG.vocab)
        s = -(-b.shape[1] // pad) * pad
        b = make_batch(records, pad_to=s, vocab=CFG.vocab)
        out.append((b.tokens, b.targets, b.mask, b.real_tokens))
    return out


def run_jax(data: list[tuple], options: dict | None = None, fn=step) -> dict:
    """jax.jit of the whole step, compiled ahead of time once per bucket (``options``:
    XLA compiler options, as ``bladec.jit``'s backend passes its own)."""
    jitted = jax.jit(fn)
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


def run_bladec(data: list[tuple], pad: int, limit: int | None, coarse: bool = True,
               function=step) -> dict:
    """bladec.jit with the same padding (the batches come padded already; ``pad`` lets a
    coarse bucket serve a finer one, padding further)."""
    fn = bladec.jit(function, mem_limit=limit, dynamic=DYNAMIC, pad={"S": pad}, coarse=coarse)
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
    ap.add_argument("--paired", type=int, default=0, metavar="N",
                    help="then N rounds of jax.jit and bladec.jit under the limit alone, "
                         "alternated (which goes first swaps each round), each with a new "
                         "function object: the compile CPU ratio per round and its median")
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
    if args.paired:
        paired(data, args.pad, limit, args.paired, args.limit_fraction)


def paired(data: list[tuple], pad: int, limit: int, rounds: int, fraction: float) -> None:
    """Compile CPU under the limit against jax.jit's, alternated round by round in this
    process: the table's rows run minutes apart, and on shared cores the CPU seconds of
    one compilation swing by a third between such periods (BENCHMARKS.md, issue 32)."""
    ratios = []
    print(f"\n| round | first | jax.jit compile CPU s | bladec.jit {fraction}x compile CPU s "
          f"| compilations (jit, bladec) | x jax.jit | device peak | largest loss difference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in range(rounds):
        order = ("jax.jit", "bladec.jit") if r % 2 == 0 else ("bladec.jit", "jax.jit")
        got = {name: run_jax(data, fn=fresh_step()) if name == "jax.jit"
               else run_bladec(data, pad, limit, function=fresh_step()) for name in order}
        j, b = got["jax.jit"], got["bladec.jit"]
        ratios.append(b["compile_cpu"] / j["compile_cpu"])
        diff = max(abs(x - y) for x, y in zip(j["losses"], b["losses"]))
        print(f"| {r} | {order[0]} | {j['compile_cpu']:.2f} | {b['compile_cpu']:.2f} | "
              f"{j['compilations']}, {b['compilations']} | {ratios[-1]:.2f}x | "
              f"{b['peak'] / 2**20:.2f} MiB | {diff:.1e} |")
    print(f"\npaired median: {statistics.median(ratios):.2f}x jax.jit's compile CPU "
          f"({', '.join(f'{x:.2f}' for x in ratios)}); goal 1.2x: "
          f"{'met' if statistics.median(ratios) <= 1.2 else 'NOT met'} (every round: "
          f"{'met' if max(ratios) <= 1.2 else 'NOT met'})")


def _show(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items())


if __name__ == "__main__":
    main()
