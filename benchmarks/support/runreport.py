"""bench_run.py's report: the text of its tables and goals, from what throughput.py and
shapestream.py measured.

Apart from the measuring, so that a change to what a table says cannot change what is
measured; every function returns lines of markdown, in the order the report prints them.
"""
from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

from bladec.units import format_size

from benchmarks.support import allocator
from benchmarks.support.shapestream import StreamRow
from benchmarks.support.throughput import Config, Lineup, profile_steps
from benchmarks.support.workload import SCHEDULED, UNSCHEDULED, Workload


def median_ratio(num: list[float], den: list[float]) -> float:
    """Median over rounds of num[i] / den[i] (a speed ratio when given times reversed)."""
    return statistics.median(a / b for a, b in zip(num, den))


def speed(ref: Config, c: Config) -> tuple[float, float]:
    """How many times faster ``c`` is than ``ref``: best-of ratio, median per-round ratio."""
    return min(ref.times) / min(c.times), median_ratio(ref.times, c.times)


def fmt_pair(r: tuple[float, float]) -> str:
    """A speed pair as the table shows it: best-of, then the median in parentheses."""
    return f"{r[0]:.2f}x ({r[1]:.2f}x)"


def per_step(c: Config, attr: str) -> float:
    """The mean of a Report field over ``c``'s timed steps."""
    return statistics.mean(getattr(r, attr) for r in c.reports) if c.reports else 0.0


def host_ms(c: Config) -> float:
    """Milliseconds a profiled step spent outside compiled segments (median)."""
    if not c.profiled:
        return 0.0
    return 1e3 * statistics.median(r.seconds - sum(r.segment_seconds) for r in c.profiled)


def same(out: list[np.ndarray] | None, reference: list[np.ndarray]) -> bool:
    """Bit for bit: the same dtypes, shapes and bytes as ``reference``."""
    return out is not None and len(out) == len(reference) and all(
        a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        for a, b in zip(out, reference))


def maxdiff(out: list[np.ndarray], reference: list[np.ndarray]) -> float:
    """The largest difference from ``reference``, relative to each output's largest value."""
    return max(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))
                         / (np.max(np.abs(b.astype(np.float64))) or 1.0)))
               for a, b in zip(out, reference))


def verdict(ok_best: bool, ok_median: bool) -> str:
    """A goal is met only where the best-of and the median ratios both meet it."""
    if ok_best and ok_median:
        return "met"
    if ok_best or ok_median:
        return "borderline (best-of and median disagree: noise)"
    return "NOT met"


def header_lines(w: Workload, args: argparse.Namespace, configs: list[Config]) -> list[str]:
    """The title (listing, binding, platform, rounds, CPUs), the peaks and the passes'
    time, and each configuration's note (a limit below the feasible minimum)."""
    import jax
    lines: list[str] = []
    say = lines.append
    rel, ops, binding, peak = w.rel, w.ops, w.binding, w.peak
    dev = jax.devices()[0]
    say(f"## bench_run: {rel} ({ops} compute ops), "
        + ", ".join(f"{k}={v}" for k, v in binding.items())
        + f", {dev.platform} (jax {jax.__version__}), {args.repeats} interleaved rounds, "
        f"malloc: {args.malloc}, {allocator.describe()}, CPUs: "
        + (f"1 (pinned to CPU {args.pin_cpu})" if args.pin_cpu is not None
           else str(len(os.sched_getaffinity(0)))))
    say("")
    say(f"Unconstrained peak of the scheduled listing: {format_size(peak)} ({peak} bytes); "
        f"without schedule: {format_size(w.unsched_peak)}; unoptimized listing: "
        f"{format_size(w.reference_peak)}. Passes: {SCHEDULED} "
        f"{w.sched_seconds * 1e3:.0f} ms, {UNSCHEDULED} {w.unsched_seconds * 1e3:.0f} ms.")
    for c in configs:
        if c.note:
            say(f"- {c.label}: {c.note}")
    return lines


def throughput_lines(w: Workload, lineup: Lineup, profile_rounds: int
                     ) -> tuple[list[str], list[dict]]:
    """Table 1, and its figures for the caller's result."""
    configs, base, peak = lineup.configs, lineup.base, w.peak
    lines: list[str] = []
    say = lines.append
    say("")
    say("### 1. Throughput (compile excluded)")
    say("")
    say("| configuration | limit | steps/s (best) | steps/s (median) | vs jit (a) "
        "| CPU ms/step (median) | CPU vs jit (a) "
        "| vs bladec no limit | segments | evict/reload/recompute per step "
        "| segments ms/step | host ms/step | device peak | XLA temp | plan ms | first step s "
        "| compilations |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for c in configs:
        best, med = min(c.times), statistics.median(c.times)
        vs_jit = speed(lineup.jit, c)
        ref = base.get(c.fuse) if c.kind == "bladec" else None
        vs_base = speed(ref, c) if ref is not None else None
        if c.reports:
            r = c.reports[-1]
            erc = (f"{per_step(c, 'evictions'):.0f}/{per_step(c, 'reloads'):.0f}/"
                   f"{per_step(c, 'recomputes'):.0f}")
            segs, pk = f"{per_step(c, 'segments'):.0f}", format_size(r.peak_bytes)
            sm = (f"{1e3 * min(sum(r.segment_seconds) for r in c.profiled):.1f}"
                  if c.profiled else "-")
            xt = format_size(max((m["temp_bytes"] for r in c.reports
                                  for m in r.segment_memory), default=0))
            hm, pm = f"{host_ms(c):.1f}", f"{c.plan_seconds * 1e3:.1f}"
        else:
            erc, segs, pk, sm, hm, pm, xt = "-", "1", "-", "-", "-", "-", "-"
        lim = "none" if c.limit is None else f"{format_size(c.limit)} ({c.limit / peak:.2f}x)"
        cpu = statistics.median(c.cpu_times) if c.cpu_times else None
        jit_cpu = statistics.median(lineup.jit.cpu_times) if lineup.jit.cpu_times else None
        cpu_text = "-" if cpu is None else f"{cpu * 1e3:.1f}"
        cpu_vs = f"{cpu / jit_cpu:.2f}x" if cpu and jit_cpu else "-"
        say(f"| {c.label} | {lim} | {1 / best:.2f} | {1 / med:.2f} | "
            f"{fmt_pair(vs_jit)} | {cpu_text} | {cpu_vs} | "
            f"{fmt_pair(vs_base) if vs_base else '-'} | {segs} | "
            f"{erc} | {sm} | {hm} | {pk} | {xt} | {pm} | {c.first_seconds:.2f} "
            f"| {c.compilations} |")
        results.append({"label": c.label, "limit": c.limit, "best_s": best, "median_s": med,
                        "cpu_median_s": cpu,
                        "vs_jit": vs_jit, "vs_base": vs_base,
                        "first_s": c.first_seconds, "compilations": c.compilations})
    say("")
    say("Ratios are speed ratios (>1 is faster): best-of-rounds step time against best-of, "
        "then in parentheses the median over rounds of the per-round ratio (the rounds "
        "interleave every configuration, so the two see the same load). 'vs bladec no "
        "limit' is against the same fuse setting. Timed steps dispatch asynchronously; "
        f"{profile_rounds} more steps per configuration run with profile=True (each "
        "segment awaited and timed): segments ms/step is the best of their time inside "
        "compiled segments, host ms/step the median of Report.seconds minus that (binding "
        "and plan lookup, puts, fetches, offloads and reloads not overlapped with a "
        "segment). peak: the device peak (held arrays plus each running segment's XLA "
        "outputs and temporaries, DESIGN.md section 4); XLA temp: the most temporary "
        "bytes one segment's executable needs (from its memory analysis, part of the "
        "peak). first step: trace, plan, compile and run; planning alone is "
        "the plan ms column.")
    return lines, results


def stream_lines(rows: list[StreamRow], seqs: list[int], source: str, fuse: bool,
                 args: argparse.Namespace) -> list[str]:
    """Table 2: the stream's sequence lengths, and each padding's compilations."""
    lines: list[str] = []
    say = lines.append
    say("")
    say(f"### 2. Compilations over {args.stream_steps} steps of varying shapes (no limit, "
        f"fuse={'on' if fuse else 'off'})")
    say("")
    say(f"Sequence lengths: the longest of {args.stream_batch} random records per batch, "
        f"{source}, seed {args.seed}: min {min(seqs)}, median {int(np.median(seqs))}, "
        f"max {max(seqs)}, {len(set(seqs))} distinct.")
    say("")
    say("| padding | compilations (sum of Report.compilations) | distinct bindings | "
        "tokens computed / real | stream seconds | of which first-seen bindings |")
    say("|---|---|---|---|---|---|")
    for r in rows:
        secs = f"{r.seconds:.1f}" if r.ran else "not run"
        first = f"{r.first_seconds:.1f}" if r.ran else "-"
        comp = str(r.compilations) if r.ran else \
            f"{r.compilations} (one per distinct binding; not run)"
        if r.error:
            comp = f"fails: {r.error}"
        tokens = f"{r.padded_tokens / r.tokens:.2f}x" if r.tokens and not r.error else "-"
        say(f"| {r.label} | {comp} | {r.distinct} | {tokens} | {secs} | {first} |")
    return lines


def bitwise_lines(lineup: Lineup, reference: list[np.ndarray]) -> tuple[list[str], bool, bool]:
    """Table 3: (b), and every fuse=off limited run, against the unoptimized listing bit
    for bit; the fused runs' largest difference. Also whether (b) was bitwise, and whether
    every fuse=off run was."""
    base = lineup.base
    bitwise_b = same(base[False].outputs, reference) if False in base else False
    lines: list[str] = []
    say = lines.append
    say("")
    say("### 3. Bitwise check")
    say("")
    say(f"(b) bladec no limit, fuse=off, equals the unoptimized listing on "
        f"JaxBackend(bitwise=True) bit for bit: {'yes' if bitwise_b else 'no'}")
    bitwise_all = bitwise_b
    for lname, frac, c in lineup.limited:
        if not c.fuse:
            ok = same(c.outputs, reference)
            bitwise_all = bitwise_all and ok
            say(f"- {c.label}: {'yes' if ok else 'no'}")
    for c in lineup.configs:
        if c.fuse and c.outputs is not None:
            say(f"- {c.label} (fusion on; not expected bitwise): max relative difference "
                f"{maxdiff(c.outputs, reference):.1e}")
    return lines, bitwise_b, bitwise_all


def goal_lines(lineup: Lineup, fuses: list[bool], fractions: list[float], bitwise_b: bool
               ) -> tuple[list[str], dict[str, bool]]:
    """The issue's goals, each with its best-of and median ratio, and each met or not
    (by the best-of ratio) for the caller's result."""
    base = lineup.base
    lines: list[str] = []
    say = lines.append
    say("")
    say("### Goals")
    say("")
    goals: dict[str, bool] = {}
    for fuse in fuses:
        best, med = speed(lineup.jit, base[fuse])
        key = f"no limit >= 0.8x whole-graph jit (fuse={'on' if fuse else 'off'})"
        goals[key] = best >= 0.8
        say(f"- {key}: {best:.2f}x best-of, {med:.2f}x median -> "
            f"{verdict(best >= 0.8, med >= 0.8)}")
    low = min(fractions) if fractions else None
    for lname, frac, c in lineup.limited:
        if frac != low or "(" in lname:  # not the ablation rows
            continue
        best, med = (1 / x for x in speed(base[c.fuse], c))  # time ratios: >1 is slower
        key = (f"{lname}, {frac}x{' (feasible minimum)' if c.note else ''}, "
               f"fuse={'on' if c.fuse else 'off'}: at most 1.3x the no-limit step time")
        goals[key] = best <= 1.3
        say(f"- {key}: {best:.2f}x best-of, {med:.2f}x median -> "
            f"{verdict(best <= 1.3, med <= 1.3)}")
    say(f"- bitwise (b) == unoptimized: {'yes' if bitwise_b else 'no'}")
    return lines, goals


def profile_lines(lineup: Lineup, fuses: list[bool], fractions: list[float], steps: int
                  ) -> list[str]:
    """cProfile of ``steps`` steps of (b) and of the lowest-limit fuse=off run: this runs
    them, after every table is measured."""
    low = min(fractions) if fractions else None
    lines: list[str] = []
    say = lines.append
    targets = [lineup.base[f] for f in fuses if not f][:1] + [
        c for lname, frac, c in lineup.limited if not c.fuse and frac == low][:1]
    for c in targets:
        say("")
        say(f"Profile of {steps} steps of {c.label} (top functions by own time):")
        say("")
        say("```text")
        say(profile_steps(c, steps))
        say("```")
    return lines
