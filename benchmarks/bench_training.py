"""bladec's training graphs against JAX's on the four function kinds of issue 35.

    python benchmarks/bench_training.py [--kinds mlp,attention,conv,gather] [--rounds 15]
        [--batch attention] [--out out/bench-training.md]

Each kind of bladec/models/blocks.py (a tanh MLP with softmax cross-entropy, a pre-LN
causal attention block with a GELU MLP, two convolutions with pooling, an MLP with
``take_along_axis``) at the shape of :data:`SHAPES`, one step = the loss and the
gradient of every parameter, side by side in one process:

- ``jit``: ``jax.jit(jax.value_and_grad(loss))``; ``jit, checkpoint P``: the loss under
  ``jax.checkpoint`` with the policy P of ``jax.checkpoint_policies``;
- ``grad`` and ``grad{save=auto}``: the forward loss imported with
  ``bladec.frontend.trace`` (batch and sequence symbolic), through the pass, run by
  bladec's runtime with no limit.

Device peak (DESIGN section 4): jit rows, XLA's ``argument + output + temp - alias``
bytes of the executable; bladec rows, the runtime's ``Report.peak_bytes``. Step time:
each round runs one step of every row, in a rotating order, after one untimed round;
the table gives each row's median and the median of its per-round ratio to jit's
(paired: the rounds see the same load). The JaxBackend's allocator setting (glibc keeps
freed memory) is made before any row runs, so jit runs under it too.

Largest batch (``--batch``, kinds with their sequence fixed at :data:`SHAPES`'): the
limit is jit's device peak at the kind's shape; for batches 1 to :data:`BATCH_MAX`,
a jit row fits where its executable's peak is within it, ``grad{save=auto}`` where
bladec's run at no limit peaks within it, and ``grad{save=auto},schedule,remat`` where
the runtime finds a plan whose device peak is within it (``Executor``'s fitting, the
device accounting). The search bisects between a batch that fits and one that does not
(fitting is monotone in the batch here).
"""
from __future__ import annotations

import argparse
import datetime
import math
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_device import xla_device_peak  # noqa: E402

from bladec.frontend import trace  # noqa: E402
from bladec.models import blocks  # noqa: E402
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend  # noqa: E402
from bladec.runtime.executor import Executor  # noqa: E402

SHAPES = {"mlp": (1024, 1), "attention": (8, 256), "conv": (64, 1), "gather": (1024, 1)}
POLICIES = ("nothing_saveable", "dots_with_no_batch_dims_saveable")
PIPELINES = ("grad", "grad{save=auto}")
MIB = 1 << 20
BATCH_MAX = 64


def jit_row(block: blocks.Block, args: tuple, policy: str | None
            ) -> tuple[int, Callable[[], Any]]:
    loss = block.loss
    if policy is not None:
        loss = jax.checkpoint(loss, policy=getattr(jax.checkpoint_policies, policy))
    compiled = jax.jit(jax.value_and_grad(loss)).lower(*args).compile()
    dev = jax.device_put(args)
    return xla_device_peak(compiled.memory_analysis()), lambda: compiled(*dev)


def bladec_row(block: blocks.Block, args: tuple, forward: Any, pipeline: str
               ) -> tuple[int, Callable[[], Any]]:
    executor = Executor(run_pipeline(forward, parse_pipeline(pipeline)), JaxBackend())
    flat = {"%params." + k: v for k, v in args[0].items()}
    flat.update({"%" + n: v for n, v in zip(block.data_names, args[1:])})
    inputs = {k: jax.device_put(v) for k, v in flat.items()}
    peak = [0]

    def call() -> Any:
        out, report = executor.run_arrays(inputs)
        peak[0] = max(peak[0], int(report.peak_bytes))
        return out
    jax.block_until_ready(call())
    return peak[0], call


def timed(calls: dict[str, Callable[[], Any]], rounds: int
          ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and process CPU seconds of each call per round (the CPU time of all the
    process's threads: less moved by other processes on a shared machine)."""
    wall: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    names = list(calls)
    for i in range(rounds + 1):
        for name in names[i % len(names):] + names[:i % len(names)]:
            start, c = time.perf_counter(), time.process_time()
            jax.block_until_ready(calls[name]())
            if i:
                wall[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - c)
    return wall, cpu


def kind_rows(kind: str, rounds: int) -> list[tuple[str, int, float, float, float, float]]:
    """(config, device peak, median seconds, median paired ratio to jit, the same two of
    CPU time) per row."""
    block = blocks.BLOCKS[kind]
    batch, seq = SHAPES[kind]
    args = blocks.args(block, batch, seq)
    forward = trace(**blocks.spec(block)).module
    peaks, calls = {}, {}
    for policy in (None, *POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        peaks[name], calls[name] = jit_row(block, args, policy)
    for pipeline in PIPELINES:
        peaks[pipeline], calls[pipeline] = bladec_row(block, args, forward, pipeline)
    wall, cpu = timed(calls, rounds)

    def paired(t: dict[str, list[float]], name: str) -> float:
        return statistics.median(a / b for a, b in zip(t[name], t["jit"]))
    return [(name, peaks[name], statistics.median(wall[name]), paired(wall, name),
             statistics.median(cpu[name]), paired(cpu, name)) for name in calls]


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def largest(fit: Callable[[int], bool], top: int = BATCH_MAX) -> int:
    """The largest batch in 1..top where ``fit`` holds (0: none), ``fit`` monotone."""
    lo, hi = 0, top + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fit(mid) else (lo, mid)
    return lo


def batch_rows(kind: str) -> tuple[int, list[tuple[str, int]]]:
    """jit's peak at the kind's shape (the limit) and each config's largest batch."""
    block = blocks.BLOCKS[kind]
    batch, seq = SHAPES[kind]
    limit = jit_row(block, blocks.args(block, batch, seq), None)[0]
    forward = trace(**blocks.spec(block)).module
    rows = []
    for policy in (None, *POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        rows.append((name, largest(lambda b: jit_row(
            block, blocks.args(block, b, seq), policy)[0] <= limit)))
        print(rows[-1], flush=True)
    rows.append(("grad{save=auto}", largest(lambda b: bladec_row(
        block, blocks.args(block, b, seq), forward, "grad{save=auto}")[0] <= limit)))
    print(rows[-1], flush=True)
    pipe = "grad{save=auto},schedule,remat"
    executor = Executor(run_pipeline(forward, parse_pipeline(pipe)), JaxBackend())

    def fits(b: int) -> bool:
        args = blocks.args(block, b, seq)
        shapes = {"%params." + k: v.shape for k, v in args[0].items()}
        shapes.update({"%" + n: v.shape for n, v in zip(block.data_names, args[1:])})
        return executor.fits(executor.bind(shapes), limit)
    rows.append((pipe + " (under the limit)", largest(fits)))
    print(rows[-1], flush=True)
    return limit, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default=",".join(SHAPES))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch", default="", help="kinds for the largest-batch table")
    ap.add_argument("--out", default=None)
    opts = ap.parse_args(argv)
    JaxBackend()  # its allocator setting, before any row (jit's included) runs
    command = "python benchmarks/bench_training.py " + " ".join(
        map(shlex.quote, argv if argv is not None else sys.argv[1:]))
    lines = [f"`{command.strip()}` ({datetime.date.today()}, {jax.devices()[0].platform}, "
             f"JAX {jax.__version__})", ""]
    if opts.kinds:
        lines += ["| kind | shape | config | device peak MiB | x jit | x grad | median step ms "
                  "| x jit (paired) | median CPU ms | x jit (paired) |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    ratios: dict[str, list[float]] = {p: [] for p in PIPELINES}
    cpus: dict[str, list[float]] = {p: [] for p in PIPELINES}
    for kind in opts.kinds.split(",") if opts.kinds else []:
        rows = kind_rows(kind, opts.rounds)
        by = {r[0]: r for r in rows}
        b, s = SHAPES[kind]
        shape = f"{b}x{s}" if blocks.BLOCKS[kind].sequence else str(b)
        for name, peak, sec, ratio, cpu, cpu_ratio in rows:
            lines.append(f"| {kind} | {shape} | {name} | {peak / MIB:.2f} | "
                         f"{peak / by['jit'][1]:.3f} | {peak / by['grad'][1]:.3f} | "
                         f"{sec * 1e3:.2f} | {ratio:.3f} | {cpu * 1e3:.2f} | {cpu_ratio:.3f} |")
            if name in ratios:
                ratios[name].append(ratio)
                cpus[name].append(cpu_ratio)
        print("\n".join(lines[-len(rows):]), flush=True)
    lines.append("")
    for name, rs in ratios.items() if opts.kinds else []:
        lines.append(f"- {name}: geometric mean of the paired ratios to jit over {len(rs)} "
                     f"kinds: step time {_geomean(rs):.3f}, CPU time {_geomean(cpus[name]):.3f}")
    for kind in opts.batch.split(",") if opts.batch else []:
        limit, rows = batch_rows(kind)
        b, s = SHAPES[kind]
        lines += ["", f"Largest batch at sequence {s} under {limit / MIB:.2f} MiB (jit's device "
                  f"peak at {b}x{s}):", "", "| config | batch | x jit |", "| --- | ---: | ---: |"]
        jit = dict(rows)["jit"]
        lines += [f"| {name} | {n} | {n / max(jit, 1):.2f} |" for name, n in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.out:
        Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
