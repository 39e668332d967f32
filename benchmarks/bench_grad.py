"""Training graphs made by bladec's ``grad`` against JAX's: device peak, step time, batch.

    python benchmarks/bench_grad.py [--shapes 8x256,8x512] [--steps 5] [--limit-shape 8x256]
        [--amp-steps 20] [--out out/bench-grad.md]

The small Llama (bladec/models/llama.py ``SMALL``, the config of samples/llama-loss-small.mlir),
one step = the loss and the gradient of every parameter, side by side in one process:

- ``jit``: ``jax.jit(jax.value_and_grad(loss_fn))``, and the same with each decoder layer
  under ``jax.checkpoint`` with each policy of ``llama.REMAT_POLICIES``;
- ``import``: ``jax.value_and_grad(loss_fn)`` imported as a listing (JAX differentiated it)
  and run by bladec's runtime (pipeline ``analyze``);
- ``grad``: the forward listing samples/llama-loss-small.mlir through ``grad``,
  ``grad{save=auto}`` and ``amp,grad`` (bf16 contractions), run by bladec's runtime.

Device peak (DESIGN section 4): jit rows, XLA's ``argument + output + temp - alias`` bytes
of the executable; bladec rows, the runtime's ``Report.peak_bytes`` (held arrays plus each
running segment's outputs and temporaries). Step time: the median of ``--steps`` steps
after one untimed round, one step of every row per round in a rotating order.

Largest batch under a fixed limit, per ``--limit-shape`` (``BxS``, comma separated): the
limit is jit's device peak at BxS; for batches from 1 to 32 (the listing's range) at that
sequence length, jit and the ``nothing_saveable`` checkpoint row fit where their
executable's peak is within it, bladec's ``grad{save=auto},schedule,remat`` where the
runtime finds a plan whose device peak is within it. The search starts at a candidate
(jit's: B; bladec's: the largest batch whose plan the per-op model meets, nothing
compiled), steps away from it by 1, 2, 4, ... and bisects; bladec's probes keep their
plans and compiled segments in one executor and do not search the smallest limit of a
refusal. Throughput is tokens per second at the largest batch that fits, the median of
``--steps`` steps, every row's steps interleaved; bladec's row then runs once profiled
(seconds per segment, evictions, reloads, recomputes).

Loss after ``--amp-steps`` SGD steps (lr 0.5, one fixed batch): f32 ``grad`` against
``amp,grad``, both applying the update to f32 weights.
"""
from __future__ import annotations

import argparse
import datetime
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

from benchmarks.support.devicereport import MIB, mib, xla_device_peak  # noqa: E402

from bladec.frontend.jax_import import trace  # noqa: E402
from bladec.models import llama  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.executor import Executor  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend  # noqa: E402
from bladec.runtime.planning.limit import LimitError  # noqa: E402

CFG = llama.SMALL
LOSS = ROOT / "samples" / "llama-loss-small.mlir"
NAMES = llama._leaf_names(llama.param_shapes(CFG), "params")
MAX_BATCH = 32
BLADEC = {"import (JAX value_and_grad)": None, "grad": "grad",
          "grad{save=auto}": "grad{save=auto}", "amp,grad": "amp,grad"}


def batch_args(batch: int, seq: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    params = llama.init_params(CFG, seed)
    tokens = rng.integers(0, CFG.vocab, (batch, seq)).astype(np.int32)
    targets = rng.integers(0, CFG.vocab, (batch, seq)).astype(np.int32)
    return params, tokens, targets, np.ones((batch, seq), np.float32)


def flat_inputs(args: tuple) -> dict[str, Any]:
    params, tokens, targets, mask = args
    out = dict(zip(NAMES, jax.tree_util.tree_leaves(params)))
    out.update({"%tokens": tokens, "%targets": targets, "%mask": mask})
    return out


def value_and_grad(policy: str | None) -> Callable[..., Any]:
    return jax.value_and_grad(lambda p, t, y, m: llama.loss_fn(p, t, y, m, CFG, policy))


def imported_module() -> Any:
    """``jax.value_and_grad(loss_fn)`` as JAX differentiates it, imported."""
    params, tokens, targets, mask, _ = llama.train_specs(CFG)
    grads = ["%grad_" + n[1:] for n in NAMES]
    return trace(fn=value_and_grad(None), arg_specs=(params, tokens, targets, mask),
                 arg_names=["params", "tokens", "targets", "mask"],
                 ranges={"B": (1, MAX_BATCH), "S": (1, 512)},
                 output_names=["loss"] + grads).module


def listings() -> dict[str, Any]:
    forward = parse_module(LOSS.read_text(), str(LOSS))
    out = {}
    for name, pipeline in BLADEC.items():
        out[name] = (run_pipeline(imported_module(), parse_pipeline("analyze"))
                     if pipeline is None else run_pipeline(forward, parse_pipeline(pipeline)))
    return out


def jit_row(policy: str | None, args: tuple) -> tuple[int, Callable[[], Any]]:
    compiled = jax.jit(value_and_grad(policy)).lower(*args).compile()
    dev = jax.device_put(args)
    return xla_device_peak(compiled.memory_analysis()), lambda: compiled(*dev)


def bladec_row(module: Any, args: tuple, limit: int | None = None
               ) -> tuple[int, Callable[[], Any]]:
    """``module``: a listing, or an Executor (whose plans and compiled segments are
    reused). Inputs and outputs stay device arrays, as jit's do."""
    executor = module if isinstance(module, Executor) else Executor(module, JaxBackend())
    inputs = {k: jax.device_put(v) for k, v in flat_inputs(args).items()}
    peak = [0]

    def call() -> Any:
        out, report = executor.run_arrays(inputs, limit=limit)
        peak[0] = max(peak[0], int(report.peak_bytes))
        return out
    call()
    return peak[0], call


def timed(calls: dict[str, Callable[[], Any]], steps: int) -> dict[str, float]:
    """Median seconds per step; one step of every row per round, rotated, after one
    untimed round."""
    times: dict[str, list[float]] = {k: [] for k in calls}
    names = list(calls)
    for i in range(steps + 1):
        for name in names[i % len(names):] + names[:i % len(names)]:
            start = time.perf_counter()
            jax.block_until_ready(calls[name]())
            if i:
                times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def peaks_and_times(batch: int, seq: int, steps: int, mods: dict[str, Any]) -> list[tuple]:
    args = batch_args(batch, seq)
    peaks, calls = {}, {}
    for policy in (None, *llama.REMAT_POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        peaks[name], calls[name] = jit_row(policy, args)
    for name, module in mods.items():
        peaks[name], calls[name] = bladec_row(module, args)
    times = timed(calls, steps)
    return [(k, peaks[k], times[k]) for k in calls]


def fits(make: Callable[[int], bool], start: int) -> int:
    """The largest batch in 1..MAX_BATCH for which ``make(batch)`` holds (monotone):
    from ``start`` (a candidate near the answer) by steps of 1, 2, 4, ... up while it
    holds, or down while it does not, then bisection of the bracket."""
    lo, hi = 0, MAX_BATCH + 1  # make(lo) holds (or lo is 0), make(hi) does not
    probe, step = max(1, min(start, MAX_BATCH)), 1
    up = make(probe)
    lo, hi = (probe, hi) if up else (lo, probe)
    while hi - lo > 1:
        probe = (lo + hi) // 2 if (hi <= MAX_BATCH and lo > 0) else \
            (min(lo + step, MAX_BATCH) if up else max(hi - step, 1))
        if not lo < probe < hi:
            probe = (lo + hi) // 2
        if make(probe):
            lo = probe
        else:
            hi = probe
        step *= 2
    return lo


BATCH_POLICIES = ("nothing_saveable",)  # the least memory of the policies here
BATCH_PIPELINES = ("grad{save=auto},schedule,remat",)


def model_candidate(executor: Executor, seq: int, limit: int) -> int:
    """The largest batch whose plan the per-op model meets under ``limit`` (nothing
    compiled; a bisection, the model's refusals being monotone in the batch): where the
    search on the device starts. Only a candidate: the device peak is what fits."""
    lo, hi = 0, MAX_BATCH + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            executor.plan(batch_binding(executor, mid, seq), limit)
            lo = mid
        except LimitError:
            hi = mid
    return max(lo, 1)


def batch_binding(executor: Executor, batch: int, seq: int) -> dict[str, int]:
    return executor.bind({k: np.shape(v) for k, v in flat_inputs(batch_args(batch, seq)).items()})


def largest_batches(seq: int, limit: int, start: int, steps: int, forward: Any
                    ) -> tuple[list[tuple], dict[str, Any]]:
    """jit, the checkpoint policy of least memory, and bladec's grad{save=auto} through
    schedule,remat under ``limit``; each bladec probe asks the runtime whether a plan
    fits by the device accounting (``Executor.fits``: no search for the smallest limit
    of a refusal), plans and compiled segments kept for the timed run. Two more rows at
    bladec's batch say where its time goes: the same listing with no limit (what fitting
    costs: evictions, reloads, recomputes, cuts) and jit (over the limit: what the batch
    alone gives). Returns the rows (config, batch, fits, device peak, tokens/s, step
    seconds) and bladec's profiled run report at its batch."""
    calls: dict[str, Callable[[], Any]] = {}
    found: dict[str, tuple[int, bool, int]] = {}   # name -> batch, within the limit, peak
    for policy in (None, *BATCH_POLICIES):
        name = "jit" if policy is None else f"jit, checkpoint {policy}"
        b = fits(lambda n: jit_row(policy, batch_args(n, seq))[0] <= limit, start)
        print(f"{name}: largest batch {b}", flush=True)
        if b:
            peak, calls[name] = jit_row(policy, batch_args(b, seq))
            found[name] = (b, True, peak)
    reports: dict[str, Any] = {}
    for pipe in BATCH_PIPELINES:
        executor = Executor(run_pipeline(forward, parse_pipeline(pipe)), JaxBackend())
        candidate = model_candidate(executor, seq, limit)
        print(f"{pipe}: the model's candidate batch {candidate}", flush=True)

        def ok(n: int, executor: Executor = executor, pipe: str = pipe) -> bool:
            cpu = time.process_time()
            fit = executor.fits(batch_binding(executor, n, seq), limit)
            print(f"{pipe} at batch {n}: {'fits' if fit else 'refused'} "
                  f"({time.process_time() - cpu:.1f} s CPU)", flush=True)
            return fit
        b = fits(ok, candidate)
        if not b:
            continue
        peak, calls[pipe] = bladec_row(executor, batch_args(b, seq), limit)
        assert peak <= limit, (peak, limit)
        found[pipe] = (b, True, peak)
        inputs = {k: jax.device_put(v) for k, v in flat_inputs(batch_args(b, seq)).items()}
        for _ in range(2):  # the second: warm, as the timed steps are
            reports[pipe] = executor.run_arrays(inputs, limit=limit, profile=True)[1]
        goal = -(-3 * found["jit"][0] // 2) if "jit" in found else 0
        if 0 < goal < b and executor.fits(batch_binding(executor, goal, seq), limit):
            # the goal's batch (1.5x jit's): fewer evictions than at the largest
            peak, calls[f"{pipe}, batch {goal}"] = bladec_row(executor, batch_args(goal, seq),
                                                              limit)
            found[f"{pipe}, batch {goal}"] = (goal, peak <= limit, peak)
        name = f"{pipe}, no limit"
        peak, calls[name] = bladec_row(executor, batch_args(b, seq))
        found[name] = (b, peak <= limit, peak)
        name = f"jit at batch {b}"
        if name not in found:
            peak, calls[name] = jit_row(None, batch_args(b, seq))
            found[name] = (b, peak <= limit, peak)
    times = timed(calls, steps)
    rows = [(name, b, within, peak, b * seq / times[name], times[name])
            for name, (b, within, peak) in found.items()]
    return rows, reports


def amp_losses(steps: int, batch: int, seq: int, forward: Any) -> dict[str, list[float]]:
    args = batch_args(batch, seq, seed=1)
    out: dict[str, list[float]] = {}
    for pipe in ("grad", "amp,grad"):
        executor = Executor(run_pipeline(forward, parse_pipeline(pipe)), JaxBackend())
        inputs = {k: np.asarray(v) for k, v in flat_inputs(args).items()}
        losses = []
        for _ in range(steps):
            res, _ = executor.run(inputs)
            losses.append(float(res["%loss"]))
            for n in NAMES:
                inputs[n] = inputs[n] - np.float32(0.5) * np.asarray(res["%grad_" + n[1:]])
        out[pipe] = losses
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="8x256,8x512")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--limit-shape", default="8x256")
    ap.add_argument("--amp-steps", type=int, default=20)
    ap.add_argument("--parts", default="peaks,batch,amp",
                    help="which tables: peaks (per shape), model (the per-op model's peaks), "
                    "batch (largest under a limit), amp")
    ap.add_argument("--out", default=None)
    opts = ap.parse_args(argv)
    command = "python benchmarks/bench_grad.py " + " ".join(map(shlex.quote, argv or sys.argv[1:]))
    lines = [f"`{command.strip()}` ({datetime.date.today()}, {jax.devices()[0].platform}, "
             f"JAX {jax.__version__})", ""]
    parts = set(opts.parts.split(","))
    mods = listings() if parts & {"peaks", "model"} else {}
    if "model" in parts:
        lines += model_table(mods)
    goals: list[tuple[bool, str]] = []
    for shape in opts.shapes.split(",") if "peaks" in parts else []:
        b, s = map(int, shape.split("x"))
        rows = peaks_and_times(b, s, opts.steps, mods)
        by = {r[0]: r for r in rows}
        jit, imp = by["jit"], by["import (JAX value_and_grad)"]
        lines += [f"#### {b}x{s}: one step (loss and gradients), no limit", "",
                  "| config | device peak MiB | x jit | x import | median step ms | x jit | "
                  "x import |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name, peak, sec in rows:
            lines.append(f"| {name} | {mib(peak)} | {peak / jit[1]:.3f} | {peak / imp[1]:.3f} | "
                         f"{sec * 1e3:.1f} | {sec / jit[2]:.3f} | {sec / imp[2]:.3f} |")
        lines.append("")
        g = by["grad"]
        goals.append((g[1] / imp[1] <= 1.02,
                      f"{b}x{s}: grad's device peak {mib(g[1])} MiB is {g[1] / imp[1]:.3f}x the "
                      f"imported step's {mib(imp[1])} MiB (goal: at most 2% above)"))
        goals.append((g[2] <= 1.05 * imp[2],
                      f"{b}x{s}: grad's step {g[2] * 1e3:.1f} ms is {g[2] / imp[2]:.3f}x the "
                      f"imported step's {imp[2] * 1e3:.1f} ms (goal: at most 5% slower)"))
        print("\n".join(lines[-len(rows) - 4:]), flush=True)
    limit_shapes = [tuple(map(int, s.split("x"))) for s in opts.limit_shape.split(",")]
    lb, ls = limit_shapes[0]
    forward = parse_module(LOSS.read_text(), str(LOSS))
    for b, s in limit_shapes if "batch" in parts else []:
        lines += batch_table(b, s, opts.steps, forward, goals)
    if "amp" in parts:
        lines += amp_table(opts.amp_steps, lb, ls, forward)
    lines += ["#### Goals", ""] + [f"- {'met' if ok else 'NOT met'}: {text}" for ok, text in goals]
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.out:
        Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.out).write_text(text)
    return 0


def batch_table(lb: int, ls: int, steps: int, forward: Any,
                goals: list[tuple[bool, str]]) -> list[str]:
    limit = jit_row(None, batch_args(lb, ls))[0]
    rows, reports = largest_batches(ls, limit, lb, steps, forward)
    lines = [f"#### Largest batch at sequence {ls} under {mib(limit)} MiB (jit's device peak "
              f"at {lb}x{ls}), median of {steps} steps", "",
              "| config | batch | x jit | device peak MiB | median step ms | tokens/s | x jit |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    jit = next(r for r in rows if r[0] == "jit")
    lines += [f"| {n}{'' if within else ' (over the limit)'} | {b} | {b / max(jit[1], 1):.2f} | "
              f"{mib(peak)} | {sec * 1e3:.1f} | {tps:.0f} | {tps / max(jit[4], 1e-9):.2f} |"
              for n, b, within, peak, tps, sec in rows]
    lines.append("")
    for pipe, report in reports.items():
        seg = report.segment_seconds
        lines += [f"{pipe} at its batch (one warm profiled run): device peak "
                  f"{mib(report.peak_bytes)} MiB, {report.segments} segments "
                  f"({report.executables} executables), {report.evictions} evictions, "
                  f"{report.reloads} reloads, {report.recomputes} recomputes, host copies at "
                  f"most {mib(report.host_peak_bytes)} MiB, {report.compilations} "
                  f"compilations; ms per segment {', '.join(f'{t * 1e3:.0f}' for t in seg)} "
                  f"(sum {sum(seg) * 1e3:.0f})", ""]
    for pipe in BATCH_PIPELINES:
        # the goal holds where one batch of at least 1.5x jit's runs under the limit
        # at 0.9x jit's tokens/s or more: the largest that fits, or the goal's own
        ours = [r for r in rows if r[0] == pipe or r[0].startswith(f"{pipe}, batch ")]
        if not ours:
            goals.append((False, f"at sequence {ls}, {pipe} fits no batch"))
            continue
        best = max(ours, key=lambda r: (r[1] >= 1.5 * jit[1] and r[4] >= 0.9 * jit[4], r[1]))
        goals.append((best[1] >= 1.5 * jit[1] and best[4] >= 0.9 * jit[4],
                      f"at sequence {ls}, {pipe} runs batch {best[1]} under the limit "
                      f"against jit's {jit[1]} ({best[1] / max(jit[1], 1):.2f}x, goal >= 1.5x)"
                      f" at {best[4] / max(jit[4], 1e-9):.2f}x its tokens/s (goal >= 0.9x); "
                      f"its largest is {ours[0][1]}, at {ours[0][4] / max(jit[4], 1e-9):.2f}x"))
    print("\n".join(lines), flush=True)
    return lines


MODEL_BINDINGS = ((1, 64), (8, 256), (8, 512), (32, 512))


def model_table(mods: dict[str, Any]) -> list[str]:
    """The per-op model's peak (not the device's) of each listing at several bindings."""
    from bladec.analysis.memory import exact_peak, exact_sizes
    from bladec.symbolic.shapes import analyze_shapes
    lines = ["| listing | " + " | ".join(f"{b}x{s}" for b, s in MODEL_BINDINGS) + " |",
             "| --- |" + " ---: |" * len(MODEL_BINDINGS)]
    for name, module in mods.items():
        info = analyze_shapes(module)
        peaks = [exact_peak(module.main, exact_sizes(info, {"S0": b, "S1": s})) / MIB
                 for b, s in MODEL_BINDINGS]
        lines.append(f"| {name} | " + " | ".join(f"{p:.1f}" for p in peaks) + " |")
    return lines + [""]


def amp_table(steps: int, lb: int, ls: int, forward: Any) -> list[str]:
    losses = amp_losses(steps, lb, ls, forward)
    f32, amp = losses["grad"], losses["amp,grad"]
    lines = [f"#### Mixed precision: loss over {steps} SGD steps (lr 0.5) at {lb}x{ls}",
             "", "| step | f32 grad | amp,grad (bf16 contractions) |", "| ---: | ---: | ---: |"]
    lines += [f"| {i + 1} | {a:.6f} | {c:.6f} |" for i, (a, c) in enumerate(zip(f32, amp))
              if i in (0, 4, 9, 14, len(f32) - 1)]
    return lines + [""]


if __name__ == "__main__":
    sys.exit(main())
