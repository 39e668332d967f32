"""bladec's training graphs against JAX's on the four function kinds of issue 35 and the
small Llama.

    python benchmarks/bench_training.py [--kinds mlp,attention,conv,gather,llama]
        [--rounds 15] [--batch attention] [--out out/bench-training.md]

Each kind of bladec/models/blocks.py (a tanh MLP with softmax cross-entropy, a pre-LN
causal attention block with a GELU MLP, two convolutions with pooling, an MLP with
``take_along_axis``) and ``llama`` (the small Llama's loss of bladec/models/llama.py, its
forward listing samples/llama-loss-small.mlir, as benchmarks/bench_grad.py) at the shape
of :data:`SHAPES`, one step = the loss and the gradient of every parameter, side by side
in one process:

- ``jit``: ``jax.jit(jax.value_and_grad(loss))``; ``jit, checkpoint P``: the loss (the
  Llama: each decoder layer) under ``jax.checkpoint`` with the policy P of
  ``jax.checkpoint_policies``;
- ``grad`` and ``grad{save=auto}``: the forward loss imported with
  ``bladec.frontend.trace`` (batch and sequence symbolic), through the pass, run by an
  engine with no limit, each step through its hot path (runtime/dispatch.py, what
  ``bladec.jit`` calls once a signature has run: one executable called as jit's is);
  ``grad, general path``: the same as ``grad`` through ``Engine.call`` each step
  (binding, plan lookup, device accounting), where the difference is the runtime's host
  work, not the graph.

Device peak (DESIGN section 4): jit rows, XLA's ``argument + output + temp - alias``
bytes of the executable; bladec rows, the runtime's ``Report.peak_bytes``. Step time:
each round runs one step of every row, in a rotating order, after one untimed round;
the table gives each row's median and the median of its per-round ratio to jit's
(paired: the rounds see the same load), in wall time and in the process's CPU time.
A JaxBackend is made before any row runs, so that a process-wide allocator setting it
makes (``BLADEC_KEEP_FREED_MEMORY``) holds for jit's rows too, and at no limit bladec's
executable is checked to have jit's XLA options (none: JaxBackend.jit_options). The op
counts compare jit's optimized HLO with each bladec row's executable by family
(benchmarks/support/hlo.py).

Largest batch (``--batch``, kinds with their sequence fixed at :data:`SHAPES`'s): the
limit is jit's device peak at the kind's shape; for batches 1 to :data:`BATCH_MAX` or
4x the kind's own batch, whichever is larger (a search capped below the batch jit fits
says nothing),
a jit row fits where its executable's peak is within it, ``grad{save=auto}`` where
bladec's run at no limit peaks within it, and ``grad{save=auto},schedule,remat`` where
the runtime finds a plan whose device peak is within it (``Executor``'s fitting, the
device accounting). The search bisects between a batch that fits and one that does not
(fitting is monotone in the batch here).
"""
from __future__ import annotations

import argparse
import datetime
import functools
import math
import shlex
import statistics
import sys
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_grad  # noqa: E402
from bench_device import xla_device_peak  # noqa: E402
from support.hlo import FAMILIES, op_counts  # noqa: E402

from bladec.frontend import trace  # noqa: E402
from bladec.ir import Module  # noqa: E402
from bladec.models import blocks  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend  # noqa: E402
from bladec.runtime.engine import Engine  # noqa: E402
from bladec.runtime.executor import Executor  # noqa: E402
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402

SHAPES = {"mlp": (1024, 1), "attention": (8, 256), "conv": (64, 1), "gather": (1024, 1),
          "llama": (8, 256)}
POLICIES = ("nothing_saveable", "dots_with_no_batch_dims_saveable")
PIPELINES = ("grad", "grad{save=auto}")
GENERAL = "grad, general path"   # the row timed through Engine.call (no hot path)
MIB = 1 << 20
BATCH_MAX = 64


@dataclass
class Case:
    """One function kind at one shape: ``value_and_grad(policy)`` is
    ``jax.value_and_grad`` of its loss (under ``jax.checkpoint`` with the named policy),
    ``args`` its arguments, ``forward`` the forward listing bladec differentiates,
    ``inputs`` the same arguments by the listing's input names."""
    value_and_grad: Callable[[str | None], Callable[..., Any]]
    args: tuple
    forward: Module
    inputs: dict[str, np.ndarray]
    shape: str


def case(kind: str, batch: int | None = None) -> Case:
    """``kind`` at its shape of :data:`SHAPES` (``batch``: another batch).
    ``llama``: the small Llama's loss (bladec/models/llama.py ``SMALL``) against
    samples/llama-loss-small.mlir, its forward listing, as benchmarks/bench_grad.py
    runs them, each decoder layer under the checkpoint policy."""
    b, s = SHAPES[kind]
    b = batch or b
    if kind == "llama":
        args = bench_grad.batch_args(b, s)
        forward = parse_module(bench_grad.LOSS.read_text(), str(bench_grad.LOSS))
        return Case(bench_grad.value_and_grad, args, forward, bench_grad.flat_inputs(args),
                    f"{b}x{s}")
    block = blocks.BLOCKS[kind]

    def value_and_grad(policy: str | None) -> Callable[..., Any]:
        loss = block.loss
        if policy is not None:
            loss = jax.checkpoint(loss, policy=getattr(jax.checkpoint_policies, policy))
        return jax.value_and_grad(loss)
    args = blocks.args(block, b, s)
    inputs = {"%params." + k: v for k, v in args[0].items()}
    inputs.update({"%" + n: v for n, v in zip(block.data_names, args[1:])})
    return Case(value_and_grad, args, trace(**blocks.spec(block)).module, inputs,
                f"{b}x{s}" if block.sequence else str(b))


def jit_row(c: Case, policy: str | None) -> tuple[int, Callable[[], Any], Any]:
    """Device peak, one step, and the executable."""
    compiled = jax.jit(c.value_and_grad(policy)).lower(*c.args).compile()
    dev = jax.device_put(c.args)
    return xla_device_peak(compiled.memory_analysis()), lambda: compiled(*dev), compiled


def bladec_row(c: Case, pipeline: str, hot: bool = True
               ) -> tuple[int, Callable[[], Any], Any, str]:
    """Device peak, one step, the executable of ``c``'s forward through ``pipeline``,
    run by an :class:`Engine` with no limit, and the order it runs in (``bladec`` held
    inside the executable, or ``XLA``'s own: runtime/planning/wholestep.py picks the
    one with the lower device peak). ``hot``: each step through the
    engine's hot path (runtime/dispatch.py: what ``bladec.jit`` calls once a signature
    has run), else through :meth:`Engine.call` (binding, plan lookup, accounting)."""
    engine = Engine(c.forward, passes=pipeline, backend=JaxBackend())
    inputs = {k: jax.device_put(v) for k, v in c.inputs.items()}
    _, report = engine.call(inputs)
    run = engine.executor.prepare(report.binding, None)   # cached: the run of the call
    executable = run.steps[0].fn.executable if len(run.steps) == 1 else None
    options = run.steps[0].fn.options() if len(run.steps) == 1 else None
    if options:   # a timing against jit's needs jit's XLA options (none given)
        raise AssertionError(f"{pipeline}: the run at no limit is compiled with XLA "
                             f"options {options}, jax.jit's with none")
    key = getattr(run.steps[0].fn, "key", None) if len(run.steps) == 1 else None
    order = "XLA" if isinstance(key, tuple) and key[-1] == "xla_order" else "bladec"
    if not hot:
        return int(report.peak_bytes), lambda: engine.call(inputs)[0], executable, order
    names = list(engine.inputs)
    dispatch = engine.dispatcher(report, None, names, list(engine.outputs))
    if dispatch is None:
        raise AssertionError(f"{pipeline}: the run at no limit is not one executable")
    values = [inputs[n] for n in names]
    return int(report.peak_bytes), lambda: dispatch(values), executable, order


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


def kind_rows(kind: str, rounds: int
              ) -> tuple[list[tuple[str, int, float, float, float, float]], dict[str, Any]]:
    """(config, device peak, median seconds, median paired ratio to jit, the same two of
    CPU time) per row, and the op counts (support/hlo.py) of jit's executable and of each
    bladec row's (and under "orders", the order each bladec row ran in)."""
    c = case(kind)
    peaks, calls, counts = {}, {}, {}
    for policy in (None, *POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        peaks[name], calls[name], executable = jit_row(c, policy)
        if policy is None:
            counts[name] = op_counts(executable.as_text())
    orders = {}
    for pipeline in PIPELINES:
        row = bladec_row(c, pipeline)
        peaks[pipeline], calls[pipeline], executable, orders[pipeline] = row
        counts[pipeline] = op_counts(executable.as_text())
    peaks[GENERAL], calls[GENERAL], _, _ = bladec_row(c, "grad", hot=False)
    counts["orders"] = orders
    wall, cpu = timed(calls, rounds)

    def paired(t: dict[str, list[float]], name: str) -> float:
        return statistics.median(a / b for a, b in zip(t[name], t["jit"]))
    rows = [(name, peaks[name], statistics.median(wall[name]), paired(wall, name),
             statistics.median(cpu[name]), paired(cpu, name)) for name in calls]
    return rows, counts


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def largest_batch(fit: Callable[[int], bool], top: int = BATCH_MAX) -> int:
    """The largest batch in 1..top where ``fit`` holds (0: none), ``fit`` monotone."""
    lo, hi = 0, top + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fit(mid) else (lo, mid)
    return lo


def batch_rows(kind: str) -> tuple[int, list[tuple[str, int]]]:
    """jit's peak at the kind's shape (the limit) and each config's largest batch."""
    limit = jit_row(case(kind), None)[0]
    top = max(BATCH_MAX, 4 * SHAPES[kind][0])
    largest = functools.partial(largest_batch, top=top)
    rows = []
    for policy in (None, *POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        rows.append((name, largest(lambda b: jit_row(case(kind, b), policy)[0] <= limit)))
        print(rows[-1], flush=True)
    rows.append(("grad{save=auto}", largest(
        lambda b: bladec_row(case(kind, b), "grad{save=auto}")[0] <= limit)))
    print(rows[-1], flush=True)
    pipe = "grad{save=auto},schedule,remat"
    c = case(kind)
    executor = Executor(run_pipeline(c.forward, parse_pipeline(pipe)), JaxBackend())

    def fits(b: int) -> bool:
        shapes = {k: np.shape(v) for k, v in case(kind, b).inputs.items()}
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
    ratios: dict[str, list[float]] = {p: [] for p in (*PIPELINES, GENERAL)}
    cpus: dict[str, list[float]] = {p: [] for p in ratios}
    counted: list[tuple[str, dict[str, Any]]] = []
    kinds = opts.kinds.split(",") if opts.kinds else []
    for kind in kinds:
        rows, counts = kind_rows(kind, opts.rounds)
        counted.append((kind, counts))
        by = {r[0]: r for r in rows}
        shape = case(kind).shape
        for name, peak, sec, ratio, cpu, cpu_ratio in rows:
            lines.append(f"| {kind} | {shape} | {name} | {peak / MIB:.2f} | "
                         f"{peak / by['jit'][1]:.3f} | {peak / by['grad'][1]:.3f} | "
                         f"{sec * 1e3:.2f} | {ratio:.3f} | {cpu * 1e3:.2f} | {cpu_ratio:.3f} |")
            if name in ratios:
                ratios[name].append(ratio)
                cpus[name].append(cpu_ratio)
        print("\n".join(lines[-len(rows):]), flush=True)
    lines.append("")
    for name, rs in ratios.items() if kinds else []:
        lines.append(f"- {name}: geometric mean of the paired ratios to jit over {len(rs)} "
                     f"kinds: step time {_geomean(rs):.3f}, CPU time {_geomean(cpus[name]):.3f}")
    if counted:
        configs = ["jit", *PIPELINES]
        lines += ["", "Op counts of the optimized HLO (benchmarks/support/hlo.py), "
                  + ", ".join(configs) + ":", "",
                  "| kind | " + " | ".join(FAMILIES) + " |",
                  "| --- |" + " ---: |" * len(FAMILIES)]
        for kind, counts in counted:
            lines.append(f"| {kind} | " + " | ".join(
                "/".join(str(counts[c][f]) for c in configs) for f in FAMILIES) + " |")
        lines += ["", "Order at no limit (the lower device peak; XLA's on a tie): " + "; ".join(
            f"{kind} " + ", ".join(f"{p} {o}'s" for p, o in counts["orders"].items())
            for kind, counts in counted)]
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
