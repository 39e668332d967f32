"""Run-time cost of bladec on JAX against a whole-graph ``jax.jit`` (DESIGN.md sections 7, 9).

Three tables, every ratio measured side by side in one process (the machines are noisy):

1. Throughput of one training step of the largest training sample at fixed shapes:
   (a) a whole-graph ``jax.jit`` of the listing (every compute op lowered with
   ``bladec.emit.lower.run_op`` inside one jitted function, XLA fusion on), and the same
   with fusion off as a reference; (b) the bladec ``Executor`` at no limit with
   ``JaxBackend(bitwise=True)``; (c) the same with ``fuse=True``; (d) the Executor at 0.7x
   and 0.5x of the unconstrained peak of the scheduled listing (or the smallest limit the
   planner meets, when 0.5x is below it), for both fuse settings, on the listing of
   ``analyze,schedule,remat`` and on that of ``analyze,remat``; (e) the segments of the
   lowest-limit plan run without any eviction, which separates what the segmentation
   costs from what the copies cost. Configurations run in interleaved rounds (a shuffled
   order per round); steps/s from the best and the median step; ratios best-of against
   best-of and, beside them, the median of per-round ratios. Compilation (and planning)
   is excluded from steps/s: the first step of each configuration is timed apart.
2. Compilations over a stream of steps whose sequence lengths are those of random batches
   of CodeAlpaca records (Llama-2 tokenizer and Alpaca template when sentencepiece and
   the data are there; a seeded log-normal fit of them otherwise), unpadded and padded
   to a multiple of 64, summing ``Report.compilations``.
3. Bitwise: the outputs of (b) (and of every fuse=False limited run) against the
   unoptimized listing run on ``JaxBackend(bitwise=True)``.

Goals (from the issue): at no limit at least 0.8x the steps/s of the whole-graph jit;
at 0.5x the peak at most 30% slower than at no limit.

    python benchmarks/bench_run.py [--sample samples/attention.mlir] [--dims S0=8,S1=256]
        [--repeats 20] [--stream-steps 50] [--pad-multiple 64] [--pin-cpu 0]
        [--malloc keep|default] [--ablate] [--profile 5]

On a shared 2-core machine ``--pin-cpu 0`` gives steady numbers (best ~ median), at the
price of XLA's inter-op concurrency. ``--malloc default`` turns off what JaxBackend does
by default (keep freed memory in the process, so that big buffers are not unmapped and
faulted in again on every step); it is process-wide, so compare two runs. ``--ablate``
adds the lowest-limit plan with its cut points left where the planner chose them and
with every segment awaited, to show what sharing cut points and asynchronous dispatch
buy, side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bladec.analysis.liveness import is_compute  # noqa: E402
from bladec.errors import BladecError  # noqa: E402
from bladec.ir import Module  # noqa: E402
from bladec.parse import parse_module  # noqa: E402
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.backend import interpret  # noqa: E402
from bladec.runtime.jax_backend import JaxBackend  # noqa: E402
from bladec.runtime.executor import Executor, Report, unoptimized  # noqa: E402
from bladec.units import format_size  # noqa: E402

TRAINING_SAMPLES = ["samples/attention.mlir", "samples/mlp-train.mlir"]
DEFAULT_DIMS = {"samples/attention.mlir": "S0=8,S1=256", "samples/mlp-train.mlir": "S0=16,S1=512"}
DATA = ROOT.parent / "shared" / "data"
SCHEDULED = "analyze,schedule,remat"
UNSCHEDULED = "analyze,remat"
ALPACA = ("Below is an instruction that describes a task{ctx}. Write a response that "
          "appropriately completes the request.\n\n### Instruction:\n{instruction}\n\n"
          "{input}### Response:\n{output}")


_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Progress on stderr (the tables go to stdout)."""
    print(f"[{time.perf_counter() - _T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def keep_freed_memory() -> bool:
    """glibc: keep freed memory in the process (what JaxBackend does by default; see
    bladec.runtime.jax_backend.keep_freed_memory_in_process)."""
    from bladec.runtime.jax_backend import keep_freed_memory_in_process
    return keep_freed_memory_in_process()


# -- the workload --------------------------------------------------------------------------
def pick_sample(root: Path = ROOT) -> Path:
    """The training sample with the most compute ops."""
    found = [root / s for s in TRAINING_SAMPLES if (root / s).exists()]
    if not found:
        raise SystemExit("no training sample found (expected one of "
                         + ", ".join(TRAINING_SAMPLES) + "); give --sample")
    return max(found, key=lambda p: len([op for op in load(p).main.ops if is_compute(op)]))


def load(path: Path) -> Module:
    return parse_module(path.read_text(), str(path))


def parse_dims(text: str) -> dict[str, int]:
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        out[key.strip().lstrip("@")] = int(value)
    return out


def whole_graph_jit(module: Module, ex: Executor, binding: dict[str, int],
                    fuse: bool = True) -> Callable[[dict[str, np.ndarray]], list[np.ndarray]]:
    """The listing as one jitted function of its inputs at the shapes of ``binding``."""
    import jax
    shapes = ex.shapes_for(binding)
    ops = [op for op in module.main.ops if is_compute(op)]
    K = JaxBackend(bitwise=not fuse).K  # fuse=False: the same barriers as bladec's segments
    specs = {id(op): [(shapes[r], ex.info.dtypes[r]) for r in op.result_names] for op in ops}
    names, outs = list(ex.inputs), list(ex.outputs)

    fn = interpret(K, ops, names, outs, specs)

    options = {} if fuse else {"xla_disable_hlo_passes": "fusion"}
    state: dict[str, Any] = {}

    def step(inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        args = [inputs[n] for n in names]
        if "exe" not in state:
            state["exe"] = jax.jit(fn).lower(*args).compile(compiler_options=options)
        return [np.asarray(x) for x in state["exe"](*args)]
    return step


# -- table 1 -------------------------------------------------------------------------------
@dataclass
class Config:
    label: str
    step: Callable[..., tuple[list[np.ndarray], Report | None]]  # step(profile=False)
    fuse: bool
    kind: str                 # "jit" or "bladec"
    limit: int | None = None
    note: str = ""
    plan_seconds: float = 0.0
    first_seconds: float = 0.0
    compilations: int = 0
    times: list[float] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    profiled: list[Report] = field(default_factory=list)  # steps run with profile=True
    outputs: list[np.ndarray] | None = None


def smallest_limit(ex: Executor, binding: dict[str, int], limit: int) -> int | None:
    """None when ``limit`` is met; else the smallest limit the planner meets."""
    try:
        ex.plan(binding, limit)
        return None
    except BladecError as exc:
        m = re.search(r"smallest limit that works is .*?\((\d+) bytes", str(exc))
        if m:
            return int(m.group(1))
    lo, hi = limit, max(limit, 1) * 64
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            ex.plan(binding, mid)
            hi = mid
        except BladecError:
            lo = mid + 1
    return lo


def bladec_config(label: str, module: Module, fuse: bool, inputs: dict[str, np.ndarray],
                  binding: dict[str, int], limit: int | None, note: str = "",
                  consolidate: bool = True) -> Config:
    ex = Executor(module, JaxBackend(bitwise=not fuse), consolidate=consolidate)
    ex.cost  # the copy bandwidth is measured once per process: not part of planning
    t = time.perf_counter()
    ex.plan(binding, limit)
    plan_seconds = time.perf_counter() - t

    def step(profile: bool = False) -> tuple[list[np.ndarray], Report]:
        out, report = ex.run(inputs, limit, profile=profile)
        return [out[n] for n in ex.outputs], report
    return Config(label, step, fuse, "bladec", limit, note, plan_seconds)


def split_only_config(label: str, module: Module, fuse: bool, inputs: dict[str, np.ndarray],
                      binding: dict[str, int], limit: int) -> Config:
    """The compiled segments of the plan at ``limit`` (recomputed ops included), run with
    no eviction and no reload: what the segmentation alone costs, without the copies."""
    ex = Executor(module, JaxBackend(bitwise=not fuse))
    prepared = ex.prepare(binding, limit)
    segments = [(s.fn, s.inputs, s.outputs, s.free) for s in prepared.segment_steps()]
    keep = set(ex.inputs) | set(ex.outputs)

    def step(profile: bool = False) -> tuple[list[np.ndarray], Report]:
        report = Report(limit=limit)
        start = time.perf_counter()
        before = ex.backend.compilations
        env = {n: ex.backend.put(np.asarray(inputs[n])) for n in ex.inputs}
        for fn, ins, outs, free in segments:
            t = time.perf_counter()
            results = fn([env[n] for n in ins])
            if profile:
                for x in results:
                    x.block_until_ready()
                report.segment_seconds.append(time.perf_counter() - t)
            env.update(zip(outs, results))
            for n in free:
                if n not in keep and n in env:
                    ex.backend.delete(env.pop(n))
        out = [ex.backend.fetch(env[n]) for n in ex.outputs]
        report.segments = len(segments)
        report.compilations = ex.backend.compilations - before
        report.seconds = time.perf_counter() - start
        report.peak_bytes = prepared.device.peak
        return out, report
    return Config(label, step, fuse, "bladec", limit, "")


def measure(configs: list[Config], repeats: int, seed: int, profile_rounds: int = 3
            ) -> None:
    for c in configs:  # the first step: tracing, planning, compilation
        log(f"  first step: {c.label}")
        t = time.perf_counter()
        out, report = c.step()
        c.first_seconds = time.perf_counter() - t
        c.compilations = report.compilations if report else 1
        c.outputs = out
    rng = random.Random(seed)
    for _ in range(repeats):
        order = list(configs)
        rng.shuffle(order)
        for c in order:
            t = time.perf_counter()
            _, report = c.step()
            c.times.append(time.perf_counter() - t)
            if report is not None:
                c.reports.append(report)
    for c in configs:  # the split between compiled segments and the host, apart
        if c.kind == "bladec":
            for _ in range(profile_rounds):
                c.profiled.append(c.step(profile=True)[1])


def median_ratio(num: list[float], den: list[float]) -> float:
    """Median over rounds of num[i] / den[i] (a speed ratio when given times reversed)."""
    return statistics.median(a / b for a, b in zip(num, den))


def speed(ref: Config, c: Config) -> tuple[float, float]:
    """How many times faster ``c`` is than ``ref``: best-of ratio, median per-round ratio."""
    return min(ref.times) / min(c.times), median_ratio(ref.times, c.times)


def fmt_pair(r: tuple[float, float]) -> str:
    return f"{r[0]:.2f}x ({r[1]:.2f}x)"


def profile_steps(c: Config, steps: int, top: int = 14) -> str:
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        c.step()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    return "\n".join(line for line in text.splitlines()[text.count("\n", 0, 0):]
                     if line.strip()).strip()


def per_step(c: Config, attr: str) -> float:
    return statistics.mean(getattr(r, attr) for r in c.reports) if c.reports else 0.0


def host_ms(c: Config) -> float:
    if not c.profiled:
        return 0.0
    return 1e3 * statistics.median(r.seconds - sum(r.segment_seconds) for r in c.profiled)


# -- table 2 -------------------------------------------------------------------------------
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
    from bladec.runtime.session import pad_inputs as session_pad, padding_multiples
    if symbols is None:
        multiples = padding_multiples(ex, None, multiple)
    else:
        multiples = padding_multiples(ex, {s: multiple for s in symbols}, None)
    return session_pad(ex, inputs, multiples)


@dataclass
class StreamRow:
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


# -- the benchmark -------------------------------------------------------------------------
def fmt_ratio(x: float) -> str:
    return f"{x:.2f}x"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", default=None, help="listing (default: the largest training "
                    "sample of " + ", ".join(TRAINING_SAMPLES) + ")")
    ap.add_argument("--dims", default=None, help="binding for table 1, e.g. S0=8,S1=256")
    ap.add_argument("--repeats", type=int, default=20, help="timed rounds per configuration")
    ap.add_argument("--limits", default="0.7,0.5", help="fractions of the unconstrained peak")
    ap.add_argument("--fuse", default="0,1", help="JaxBackend fuse settings to measure")
    ap.add_argument("--no-unscheduled", action="store_true",
                    help="skip the limited runs of the analyze,remat listing")
    ap.add_argument("--stream-steps", type=int, default=50)
    ap.add_argument("--stream-batch", type=int, default=4, help="records per batch (S0)")
    ap.add_argument("--stream-max-seq", type=int, default=None,
                    help="clip the stream's sequence lengths (a quick run)")
    ap.add_argument("--no-jit-nofuse", action="store_true",
                    help="skip the whole-graph jit with fusion off (a reference row)")
    ap.add_argument("--batch-symbol", default="S0")
    ap.add_argument("--seq-symbol", default="S1")
    ap.add_argument("--pad-multiple", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-explain", action="store_true",
                    help="skip the split-only rows (the lowest-limit plan's segments, no "
                    "evictions), which separate the cost of segmentation from that of copies")
    ap.add_argument("--malloc", choices=["default", "keep"], default="keep",
                    help="keep (what JaxBackend does unless told not to): mallopt so freed "
                    "memory stays in the process (no mmap/munmap and page faults per large "
                    "buffer); default: glibc's own behaviour (BLADEC_KEEP_FREED_MEMORY=0)")
    ap.add_argument("--profile-rounds", type=int, default=3,
                    help="steps per configuration run with profile=True, for the split of "
                    "time between compiled segments and the host")
    ap.add_argument("--ablate", action="store_true",
                    help="also run the lowest limit with the planner's cut points left "
                    "where it chose them (Executor(consolidate=False)) and with every "
                    "segment awaited (profile=True), side by side")
    ap.add_argument("--pin-cpu", type=int, default=None, metavar="CPU",
                    help="run on that one CPU only (set before JAX starts its threads): "
                    "steadier numbers on a shared machine, no inter-op concurrency")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also cProfile N steps of (b) and of the lowest-limit fuse=off run")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    if args.malloc == "keep":
        keep_freed_memory()
    else:
        os.environ["BLADEC_KEEP_FREED_MEMORY"] = "0"
    if args.pin_cpu is not None:
        os.sched_setaffinity(0, {args.pin_cpu})
    path = Path(args.sample) if args.sample else pick_sample()
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    binding = parse_dims(args.dims or DEFAULT_DIMS.get(rel, "S0=8,S1=256"))
    fuses = [bool(int(f)) for f in args.fuse.split(",") if f.strip()]
    fractions = [float(f) for f in args.limits.split(",") if f.strip()]

    import jax
    original = load(path)
    t = time.perf_counter()
    scheduled = run_pipeline(original, parse_pipeline(SCHEDULED))
    t_sched = time.perf_counter() - t
    t = time.perf_counter()
    unscheduled = run_pipeline(original, parse_pipeline(UNSCHEDULED))
    t_unsched = time.perf_counter() - t
    probe = Executor(scheduled, JaxBackend())
    binding = {s: binding[s] for s in probe.info.free if s in binding} or binding
    inputs = probe.random_inputs(binding, args.seed)
    ops = len(probe.versions[0].ops)

    log(f"{rel}: {ops} compute ops at {binding}")
    # the reference: the unoptimized listing, fuse=False
    ref_ex = Executor(unoptimized(original), JaxBackend(bitwise=True))
    ref_out, ref_report = ref_ex.run(inputs)
    reference = [ref_out[n] for n in ref_ex.outputs]
    peak = probe.plan(binding, None).peak
    unsched_peak = Executor(unscheduled, JaxBackend()).plan(binding, None).peak

    configs: list[Config] = []
    jit_ex = Executor(unoptimized(original), JaxBackend())
    for fuse in (True,) if args.no_jit_nofuse else (True, False):
        f = whole_graph_jit(original, jit_ex, binding, fuse)
        configs.append(Config(f"(a) whole-graph jax.jit, fusion {'on' if fuse else 'off'}",
                              (lambda f=f: (f(inputs), None)), fuse, "jit"))
    jit_on = configs[0]
    base: dict[bool, Config] = {}
    for fuse in fuses:
        c = bladec_config(f"({'c' if fuse else 'b'}) bladec, no limit", scheduled, fuse,
                          inputs, binding, None)
        base[fuse] = c
        configs.append(c)
    limited: list[tuple[str, float, Config]] = []
    listings = [("schedule", scheduled)] + ([] if args.no_unscheduled
                                            else [("no schedule", unscheduled)])
    for frac in fractions:
        limit = int(frac * peak)
        for lname, listing in listings:
            probe_l = Executor(listing, JaxBackend())
            need = smallest_limit(probe_l, binding, limit)
            use, note = limit, ""
            if need is not None:
                use = need
                note = (f"{frac}x = {format_size(limit)} is below the feasible minimum; "
                        f"ran at the minimum {format_size(need)} = {need / peak:.2f}x")
            for fuse in fuses:
                c = bladec_config(f"(d) bladec, {lname}, {frac}x, fuse={'on' if fuse else 'off'}",
                                  listing, fuse, inputs, binding, use, note)
                configs.append(c)
                limited.append((lname, frac, c))
    if not args.no_explain and fractions:
        low_frac = min(fractions)
        for lname, frac, c in limited:
            if lname == "schedule" and frac == low_frac:
                configs.append(split_only_config(
                    f"(e) split only: the segments of {lname} {frac}x, no eviction, "
                    f"fuse={'on' if c.fuse else 'off'}", scheduled, c.fuse, inputs, binding,
                    c.limit))
    log(f"table 1: {len(configs)} configurations, first steps")
    if args.ablate and fractions:
        low_frac = min(fractions)
        for lname, frac, c in list(limited):
            if lname != "schedule" or frac != low_frac:
                continue
            tag = f"{lname}, {frac}x, fuse={'on' if c.fuse else 'off'}"
            loose = bladec_config(f"(f) bladec, {tag}, cut points not shared", scheduled,
                                  c.fuse, inputs, binding, c.limit, consolidate=False)
            configs.append(loose)
            limited.append((lname + " (cuts not shared)", frac, loose))
            blocking = bladec_config(f"(g) bladec, {tag}, every segment awaited", scheduled,
                                     c.fuse, inputs, binding, c.limit)
            plain_step = blocking.step
            blocking.step = lambda profile=False, f=plain_step: f(profile=True)
            configs.append(blocking)
            limited.append((lname + " (awaited)", frac, blocking))
    measure(configs, args.repeats, args.seed, args.profile_rounds)
    log("table 1: done")

    lines: list[str] = []
    say = lines.append
    dev = jax.devices()[0]
    say(f"## bench_run: {rel} ({ops} compute ops), "
        + ", ".join(f"{k}={v}" for k, v in binding.items())
        + f", {dev.platform} (jax {jax.__version__}), {args.repeats} interleaved rounds, "
        f"malloc: {args.malloc}, CPUs: "
        + (f"1 (pinned to CPU {args.pin_cpu})" if args.pin_cpu is not None
           else str(len(os.sched_getaffinity(0)))))
    say("")
    say(f"Unconstrained peak of the scheduled listing: {format_size(peak)} ({peak} bytes); "
        f"without schedule: {format_size(unsched_peak)}; unoptimized listing: "
        f"{format_size(ref_report.planned_peak_bytes)}. Passes: {SCHEDULED} "
        f"{t_sched * 1e3:.0f} ms, {UNSCHEDULED} {t_unsched * 1e3:.0f} ms.")
    for c in configs:
        if c.note:
            say(f"- {c.label}: {c.note}")
    say("")
    say("### 1. Throughput (compile excluded)")
    say("")
    say("| configuration | limit | steps/s (best) | steps/s (median) | vs jit (a) "
        "| vs bladec no limit | segments | evict/reload/recompute per step "
        "| segments ms/step | host ms/step | device peak | XLA temp | plan ms | first step s "
        "| compilations |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for c in configs:
        best, med = min(c.times), statistics.median(c.times)
        vs_jit = speed(jit_on, c)
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
        say(f"| {c.label} | {lim} | {1 / best:.2f} | {1 / med:.2f} | "
            f"{fmt_pair(vs_jit)} | {fmt_pair(vs_base) if vs_base else '-'} | {segs} | "
            f"{erc} | {sm} | {hm} | {pk} | {xt} | {pm} | {c.first_seconds:.2f} "
            f"| {c.compilations} |")
        results.append({"label": c.label, "limit": c.limit, "best_s": best, "median_s": med,
                        "vs_jit": vs_jit, "vs_base": vs_base,
                        "first_s": c.first_seconds, "compilations": c.compilations})
    say("")
    say("Ratios are speed ratios (>1 is faster): best-of-rounds step time against best-of, "
        "then in parentheses the median over rounds of the per-round ratio (the rounds "
        "interleave every configuration, so the two see the same load). 'vs bladec no "
        "limit' is against the same fuse setting. Timed steps dispatch asynchronously; "
        f"{args.profile_rounds} more steps per configuration run with profile=True (each "
        "segment awaited and timed): segments ms/step is the best of their time inside "
        "compiled segments, host ms/step the median of Report.seconds minus that (binding "
        "and plan lookup, puts, fetches, offloads and reloads not overlapped with a "
        "segment). peak: the device peak (held arrays plus each running segment's XLA "
        "outputs and temporaries, DESIGN.md section 4); XLA temp: the most temporary "
        "bytes one segment's executable needs (from its memory analysis, part of the "
        "peak). first step: trace, plan, compile and run; planning alone is "
        "the plan ms column.")

    # -- 3. bitwise ----------------------------------------------------------------------
    def same(out: list[np.ndarray] | None) -> bool:
        return out is not None and len(out) == len(reference) and all(
            a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
            for a, b in zip(out, reference))

    def maxdiff(out: list[np.ndarray]) -> float:
        return max(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))
                             / (np.max(np.abs(b.astype(np.float64))) or 1.0)))
                   for a, b in zip(out, reference))

    bitwise_b = same(base[False].outputs) if False in base else False
    # -- 2. compilations over a stream ---------------------------------------------------
    lengths, source = record_lengths(args.seed)
    lo, hi = probe.info.ranges.get(args.seq_symbol, (1, None))
    seqs = batch_stream(lengths, args.stream_steps, args.stream_batch, args.seed,
                        max(lo or 1, 1), min(hi or 1 << 30, args.stream_max_seq or 1 << 30))
    stream_fuse = fuses[0]
    log(f"table 2: {len(seqs)} steps, three paddings")
    rows = [
        run_stream(scheduled, stream_fuse, seqs, args.stream_batch, args.seq_symbol,
                   args.batch_symbol, None, None, "no padding", seed=args.seed),
        run_stream(scheduled, stream_fuse, seqs, args.stream_batch, args.seq_symbol,
                   args.batch_symbol, args.pad_multiple, {args.seq_symbol},
                   f"--pad {args.seq_symbol}={args.pad_multiple}: {args.seq_symbol} to a "
                   f"multiple of {args.pad_multiple}", seed=args.seed),
        run_stream(scheduled, stream_fuse, seqs, args.stream_batch, args.seq_symbol,
                   args.batch_symbol, args.pad_multiple, None,
                   f"--pad-multiple {args.pad_multiple}: every free symbol "
                   f"({args.batch_symbol} too), each at most its declared maximum",
                   execute=False, seed=args.seed),
    ]
    say("")
    say(f"### 2. Compilations over {args.stream_steps} steps of varying shapes (no limit, "
        f"fuse={'on' if stream_fuse else 'off'})")
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
    say("")
    say("### 3. Bitwise check")
    say("")
    say(f"(b) bladec no limit, fuse=off, equals the unoptimized listing on "
        f"JaxBackend(bitwise=True) bit for bit: {'yes' if bitwise_b else 'no'}")
    bitwise_all = bitwise_b
    for lname, frac, c in limited:
        if not c.fuse:
            ok = same(c.outputs)
            bitwise_all = bitwise_all and ok
            say(f"- {c.label}: {'yes' if ok else 'no'}")
    for c in configs:
        if c.fuse and c.outputs is not None:
            say(f"- {c.label} (fusion on; not expected bitwise): max relative difference "
                f"{maxdiff(c.outputs):.1e}")

    # -- goals ---------------------------------------------------------------------------
    say("")
    say("### Goals")
    say("")
    goals: dict[str, bool] = {}

    def verdict(ok_best: bool, ok_median: bool) -> str:
        if ok_best and ok_median:
            return "met"
        if ok_best or ok_median:
            return "borderline (best-of and median disagree: noise)"
        return "NOT met"
    for fuse in fuses:
        best, med = speed(jit_on, base[fuse])
        key = f"no limit >= 0.8x whole-graph jit (fuse={'on' if fuse else 'off'})"
        goals[key] = best >= 0.8
        say(f"- {key}: {best:.2f}x best-of, {med:.2f}x median -> "
            f"{verdict(best >= 0.8, med >= 0.8)}")
    low = min(fractions) if fractions else None
    for lname, frac, c in limited:
        if frac != low or "(" in lname:  # not the ablation rows
            continue
        best, med = (1 / x for x in speed(base[c.fuse], c))  # time ratios: >1 is slower
        key = (f"{lname}, {frac}x{' (feasible minimum)' if c.note else ''}, "
               f"fuse={'on' if c.fuse else 'off'}: at most 1.3x the no-limit step time")
        goals[key] = best <= 1.3
        say(f"- {key}: {best:.2f}x best-of, {med:.2f}x median -> "
            f"{verdict(best <= 1.3, med <= 1.3)}")
    say(f"- bitwise (b) == unoptimized: {'yes' if bitwise_b else 'no'}")
    if args.profile:
        targets = [base[f] for f in fuses if not f][:1] + [
            c for lname, frac, c in limited if not c.fuse and frac == low][:1]
        for c in targets:
            say("")
            say(f"Profile of {args.profile} steps of {c.label} (top functions by own time):")
            say("")
            say("```text")
            say(profile_steps(c, args.profile))
            say("```")
    say("")
    say(f"Total benchmark time: {time.perf_counter() - t_start:.0f} s. Command: "
        f"python benchmarks/bench_run.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    text = "\n".join(lines)
    print(text)
    return {"text": text, "bitwise": bitwise_b, "bitwise_all_fuse_off": bitwise_all,
            "goals": goals, "results": results, "stream": [r.__dict__ for r in rows],
            "peak": peak}


if __name__ == "__main__":
    main()
