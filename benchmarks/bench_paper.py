"""The paper's Table 1 on this machine: Llama-2 SFT on CodeAlpaca, three modes side by side.

    python benchmarks/bench_paper.py [--steps 200] [--exact-budget 300] [--optimizer adam|sgd]
                                     [--out FILE] [--probe MODE:BATCHxLENGTH]

Batches of 14, 16 and 18 random CodeAlpaca records (Alpaca prompt, Llama-2 tokenizer;
the sequence length of a batch is its longest record) are trained for ``--steps`` steps
per batch size in each mode. Every mode trains its own copy of the model (Adam by
default: the optimizer state is what fine-tuning holds beside the parameters), all on the
same executor (bladec's JAX runtime with XLA fusion on: with it off every op is its own
kernel and compiles far slower), differing only in what the paper varies:

- dynamic: exact shapes, the imported order, no rematerialization;
- static: sequence padded to the next power of two, the order and remat plan made with
  the exact padded shapes (what a static-shape compiler does), one compilation per bucket;
- bladec: the symbolic schedule and remat plan made once for all shapes, the runtime
  finishing the plan under the limit; the sequence is padded to a multiple of
  BLADEC_PAD (not a power of two) only to bound the number of XLA compilations, the plan
  staying the same symbolic one (the loss masks the padding).

As the reference a JAX user would reach for, whole-graph ``jax.jit`` of the same training
step at exact shapes and at power-of-two padding; ``jax.jit`` applies no limit, so a jit
row whose peak (XLA's own figure) exceeds the limit is marked OOM beside what it reached.
Tokens/s count real tokens and include compilation; a second table gives the steady
state (steps that compiled nothing). A fine-tuning run is thousands of steps, so the
bucketed modes (static, bladec, jit-pow2) run ``--steps`` steps per batch size, enough
for their few compilations to amortize. The exact-shape modes (dynamic, jit-exact)
compile once per distinct sequence length, which on XLA never amortizes (over 200 steps
most batches bring a new length, and each compile of this step takes seconds on 2 cores):
they run until ``--exact-budget`` seconds per batch size are spent, and the table says
how many steps that was. On CPU the model is narrowed (see CPU_CONFIG; token
ids are folded into its vocabulary) and the limit is the dynamic mode's largest peak at
batch 14, so that the comparison is the paper's: dynamic fits 14. The paper-size memory
columns (4 layers, hidden 4096, a 40 GB card) are computed exactly from the plans of the
committed paper-size listing, without running.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jax
import numpy as np

from bladec.analysis.memory import exact_peak, exact_sizes
from bladec.errors import BladecError
from bladec.ir import Module
from bladec.models.llama import Config, adam_step, train_step
from bladec.passes.remat import RematPass
from bladec.passes.schedule import exact_order, reorder
from bladec.runtime.engine import Engine, unoptimized
from bladec.symbolic.shapes import analyze_shapes
from bladec.workloads.codealpaca import Batch, batches, load_examples, make_batch, next_pow2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support.training import CPU_CONFIG, Training, import_step  # noqa: E402

BATCH_SIZES = (14, 16, 18)
GIB = 1 << 30
PAPER_CARD = 40 * 10**9  # a 40 GB card
PAPER_TABLE = {  # Table 1 of the paper: tokens/s (peak GiB); None = OOM
    "dynamic": [(5662.34, 38.20), None, None],
    "static": [(5242.02, 35.75), (5429.38, 37.71), (5103.31, 38.92)],
    "bladec": [(5749.20, 35.76), (6078.71, 37.89), (5738.79, 39.18)],
}
PAPER_SAMPLES = {"adam": "llama-train-paper-adam.mlir", "sgd": "llama-train-paper.mlir"}
# bladec's sequence bucket. Each new bucket costs a plan and XLA compilations (one per
# segment, ~1-1.5 s each on 2 cores); a coarser bucket costs padded tokens every step. Over
# 16 steps per batch size, multiples of 128 beat 64 here (BENCHMARKS.md, issue 7).
BLADEC_PAD = 128
MODES = ("dynamic", "static", "bladec", "jit-exact", "jit-pow2")
EXACT_MODES = ("dynamic", "jit-exact")   # one compilation per distinct sequence length


@dataclass
class Cell:
    """One mode at one batch size, over all its steps."""
    tokens: int = 0
    seconds: float = 0.0
    steady_tokens: int = 0      # over the steps that compiled nothing
    steady_seconds: float = 0.0
    peak: int = 0
    compilations: int = 0
    steps: int = 0
    oom: bool = False           # a step did not fit the limit: the mode stopped there
    refused: tuple[int, int] | None = None  # the shape the limit was refused at: (batch,
    #                                         sequence as run, padded in a bucketed mode)
    smallest: int | None = None  # the smallest limit that refusal named, where it named one
    over: bool = False          # jit rows: XLA's peak exceeded the limit (no limit applies
    #                             to jax.jit, so it ran on; on a card that size it would not)
    losses: list[float] = field(default_factory=list)

    def add(self, tokens: int, seconds: float, compiled: int, peak: int) -> None:
        self.tokens += tokens
        self.seconds += seconds
        self.steps += 1
        self.compilations += compiled
        self.peak = max(self.peak, peak)
        if not compiled:
            self.steady_tokens += tokens
            self.steady_seconds += seconds

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    @property
    def steady_rate(self) -> float | None:
        return self.steady_tokens / self.steady_seconds if self.steady_seconds else None

    def refuse(self, bucket: tuple[int, int], error: BladecError) -> None:
        """Stop the mode here: the limit was refused at ``bucket``; the smallest limit the
        refusal named is kept (a LimitError's; another BladecError names none)."""
        self.oom, self.refused, self.smallest = True, bucket, _smallest(error)

    def oom_text(self) -> str:
        """"OOM", with where and by how much where the refusal said: "OOM at 18x640
        (smallest 1.31 GiB)"."""
        at = "" if self.refused is None else f" at {self.refused[0]}x{self.refused[1]}"
        least = "" if self.smallest is None else f" (smallest {self.smallest / GIB:.2f} GiB)"
        return "OOM" + at + least

    def text(self) -> str:
        if self.oom:
            return self.oom_text()
        figures = f"{self.peak / GIB:.3f} GiB, {self.compilations} comp., {self.steps} steps"
        if self.over:
            return f"OOM ({self.rate:,.0f} without a limit; {figures})"
        return f"{self.rate:,.0f} ({figures})"

    def steady_text(self) -> str:
        if self.oom:
            return "OOM"
        rate = self.steady_rate
        return "-" if rate is None else f"{rate:,.0f}" + (" (over)" if self.over else "")


def jax_step(cfg: Config, optimizer: str):
    """The training step as a JAX user runs it: one ``jax.jit`` of the whole step."""
    if optimizer == "adam":
        return jax.jit(lambda p, s, t, y, m, lr: adam_step(p, s, t, y, m, lr, cfg))
    return jax.jit(lambda p, t, y, m, lr: train_step(p, t, y, m, lr, cfg))


def static_module(module: Module, binding: dict[str, int]) -> Module:
    """What a static-shape compiler makes of the listing for one bucket: the exact-shape
    order and a remat plan for it."""
    plain = unoptimized(module)
    info = analyze_shapes(plain)
    sizes = exact_sizes(info, binding)
    ordered = reorder(plain.main, exact_order(plain.main, sizes))
    fixed = Module([ordered], plain.shape_graph, plain.file)
    return RematPass().apply(fixed)


def run_modes(cfg: Config, steps: int, seed: int, optimizer: str,
              exact_budget: float = float("inf")) -> tuple[dict[str, dict[int, Cell]], int]:
    examples = load_examples()
    step = import_step(cfg, next_pow2(max(len(e.ids) for e in examples)), optimizer)
    module = step.module
    plan = {bs: [make_batch(b, vocab=cfg.vocab) for b in batches(examples, bs, steps, seed + bs)]
            for bs in BATCH_SIZES}
    dynamic = Engine(unoptimized(module), passes=[])
    start = Training.start(cfg, optimizer, seed)
    limit = _limit(dynamic, step, start, plan[14])
    bladec = Engine(module)   # the default pipeline: analyze, schedule, remat
    statics: dict[tuple, Engine] = {}
    jit_step = jax_step(cfg, optimizer)
    xla_peaks: dict[tuple[int, int], int] = {}
    cells = {mode: {bs: Cell() for bs in BATCH_SIZES} for mode in MODES}
    models = {mode: Training.start(cfg, optimizer, seed) for mode in MODES}
    for bs in BATCH_SIZES:
        print(f"batch {bs}: sequence lengths {[b.shape[1] for b in plan[bs]]}", file=sys.stderr)
        for batch in plan[bs]:
            padded = _pad(batch)
            for mode in MODES:
                cell, model = cells[mode][bs], models[mode]
                if cell.oom or (mode in EXACT_MODES and cell.seconds >= exact_budget):
                    continue
                t0 = time.perf_counter()
                if mode.startswith("jit"):
                    args = model.args(batch if mode == "jit-exact" else padded)
                    before = jit_step._cache_size()
                    outputs = jax.block_until_ready(jit_step(*args))
                    seconds = time.perf_counter() - t0
                    shape = args[-2].shape
                    if shape not in xla_peaks:
                        xla_peaks[shape] = _xla_peak(jit_step, args)
                    cell.add(batch.real_tokens, seconds, jit_step._cache_size() - before,
                             xla_peaks[shape])
                    cell.over = cell.over or xla_peaks[shape] > limit
                    cell.losses.append(model.update(outputs))
                    continue
                if mode == "dynamic":
                    engine, b = dynamic, batch
                elif mode == "bladec":
                    engine, b = bladec, _pad(batch, BLADEC_PAD)
                else:
                    b = padded
                    if b.shape not in statics:  # its own order and remat plan: no passes
                        statics[b.shape] = Engine(
                            static_module(module, {"S0": b.shape[0], "S1": b.shape[1]}),
                            passes=[])
                    engine = statics[b.shape]
                try:
                    out, rep = engine.call(step.flatten_inputs(*model.args(b)), limit)
                    # the call dispatches its segments and returns: the step's time is
                    # until its outputs are there, as for the jit rows
                    jax.block_until_ready(out)
                except BladecError as error:
                    cell.refuse((b.shape[0], b.shape[1]), error)
                    continue
                cell.add(batch.real_tokens, time.perf_counter() - t0, rep.compilations,
                         rep.peak_bytes)
                cell.losses.append(model.update(step.unflatten_outputs(out)))
        # no shape recurs at another batch size: jax.jit's executables of this one would
        # only hold memory mappings (bladec bounds its own: backends/mappings.py)
        jit_step.clear_cache()
        print(f"batch {bs} done: {_mappings()} memory mappings, {_rss_mib()} MiB resident, "
              f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        for mode in MODES:   # kept should a later batch size not finish
            print(f"  {mode}: {cells[mode][bs].text()}; steady {cells[mode][bs].steady_text()}",
                  file=sys.stderr, flush=True)
    return cells, limit


def _limit(dynamic: Engine, step, start: Training, batches14: list[Batch]) -> int:
    """The limit: the dynamic mode's largest peak at batch 14 (so it fits 14, as in the
    paper), which is its peak at the longest sequence (the step grows with it)."""
    longest = max(batches14, key=lambda b: b.shape[1])
    return dynamic.device_peak(dynamic.binding(
        {n: v.shape for n, v in step.flatten_inputs(*start.args(longest)).items()}))


def probe(cfg: Config, steps: int, seed: int, optimizer: str, mode: str,
          bucket: tuple[int, int]) -> tuple[int, int | None, int | None]:
    """One bucketed mode (static or bladec) prepared at one bucket (batch, padded length)
    under the limit the table of ``steps`` steps runs under, nothing run: (limit, device
    peak or None, the smallest limit the refusal named or None). A refused cell's figures
    checked without running the table again."""
    examples = load_examples()
    step = import_step(cfg, next_pow2(max(len(e.ids) for e in examples)), optimizer)
    start = Training.start(cfg, optimizer, seed)
    limit = _limit(Engine(unoptimized(step.module), passes=[]), step, start, [
        make_batch(b, vocab=cfg.vocab) for b in batches(examples, 14, steps, seed + 14)])
    if mode == "bladec":
        engine = Engine(step.module)
    else:
        engine = Engine(static_module(step.module, {"S0": bucket[0], "S1": bucket[1]}),
                        passes=[])
    zeros = np.zeros(bucket, np.int32)
    shapes = {n: v.shape for n, v in step.flatten_inputs(*start.args(
        Batch(zeros, zeros, np.zeros(bucket, np.float32)))).items()}
    try:
        return limit, engine.device_peak(engine.binding(shapes), limit), None
    except BladecError as refused:
        return limit, None, _smallest(refused)


def _smallest(error: BladecError) -> int | None:
    """The smallest limit a refusal names: a LimitError's ``smallest`` (read by name: the
    benchmark reaches the runtime only through the engine), None for another error."""
    smallest = getattr(error, "smallest", None)
    return smallest if isinstance(smallest, int) else None


def _mappings() -> int | None:
    """The process's memory mappings (what vm.max_map_count bounds), where Linux says."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return maps.read().count(b"\n")
    except OSError:
        return None


def _rss_mib() -> int:
    """The process's peak resident memory so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _xla_peak(jitted, args: tuple) -> int:
    """XLA's own peak for one whole-graph call: arguments + outputs + temporaries."""
    cost = jitted.lower(*args).compile().memory_analysis()
    return (cost.argument_size_in_bytes + cost.output_size_in_bytes
            + cost.temp_size_in_bytes - cost.alias_size_in_bytes)


def _padded_length(s: int, multiple: int | None = None) -> int:
    """The next power of two (the static mode's bucket), or the next multiple of
    ``multiple`` (bladec's)."""
    return next_pow2(s) if multiple is None else -(-s // multiple) * multiple


def _pad(batch, multiple: int | None = None):
    """Zero-pad the sequence to its bucket (:func:`_padded_length`)."""
    b, s = batch.shape
    target = _padded_length(s, multiple)
    pad = ((0, 0), (0, target - s))
    return Batch(np.pad(batch.tokens, pad), np.pad(batch.targets, pad), np.pad(batch.mask, pad))


def paper_columns(steps: int, seed: int, optimizer: str, limit: int | None = None
                  ) -> tuple[dict[str, dict[int, str]], int]:
    """Peak GiB per mode at the paper's size, from the plans alone (no run).

    ``limit`` None: the dynamic mode's largest peak at batch 14, as on CPU (this SGD step
    keeps no optimizer state, so a 40 GB card holds every batch in every mode)."""
    examples = load_examples()
    path = Path(__file__).resolve().parents[1] / "samples" / PAPER_SAMPLES[optimizer]
    from bladec.parse import parse_module
    module = parse_module(path.read_text(), str(path))
    plain = unoptimized(module)
    info = analyze_shapes(plain)
    bladec = Engine(module, backend="numpy")   # plans only: nothing runs or compiles
    out: dict[str, dict[int, str]] = {m: {} for m in ("dynamic", "static", "bladec")}
    statics: dict[tuple, Engine] = {}
    runs = {bs: batches(examples, bs, steps, seed + bs) for bs in BATCH_SIZES}
    if limit is None:
        limit = max(exact_peak(plain.main, exact_sizes(info, {"S0": 14, "S1": max(
            len(e.ids) for e in recs) - 1})) for recs in runs[14])
    for bs in BATCH_SIZES:
        peaks: dict[str, list[int | None]] = {m: [] for m in out}
        for recs in runs[bs]:
            s = max(len(e.ids) for e in recs) - 1
            binding = {"S0": bs, "S1": s}
            peak = exact_peak(plain.main, exact_sizes(info, binding))
            peaks["dynamic"].append(peak if peak <= limit else None)
            key = (bs, _padded_length(s))
            if key not in statics:
                statics[key] = Engine(static_module(module, {"S0": key[0], "S1": key[1]}),
                                      passes=[], backend="numpy")
            padded = {"S0": bs, "S1": _padded_length(s, BLADEC_PAD)}  # as bladec runs it
            for mode, engine, b in (("static", statics[key], {"S0": key[0], "S1": key[1]}),
                                    ("bladec", bladec, padded)):
                try:
                    peaks[mode].append(engine.model_peak(b, limit))
                except BladecError:
                    peaks[mode].append(None)
        for mode, values in peaks.items():
            out[mode][bs] = ("OOM" if any(v is None for v in values)
                             else f"{max(values) / GIB:.2f} GiB")
    return out, limit


def goal_lines(cells: dict[str, dict[int, Cell]]) -> list[str]:
    """Whether bladec fits every batch the static mode fits, with a peak at most static's,
    and beats every other mode's tokens/s (compilation counted), per batch size. A jit row
    over the limit is OOM by the table's rule; one faster than bladec is named apart."""
    out = []
    for bs in BATCH_SIZES:
        ours, static = cells["bladec"][bs], cells["static"][bs]
        if ours.oom:
            out.append(f"- batch {bs}: bladec {ours.oom_text()}"
                       + ("" if static.oom else ", static fits: NOT MET"))
            continue
        peak = ("static OOM" if static.oom else
                f"peak {ours.peak / GIB:.3f} vs static {static.peak / GIB:.3f} GiB "
                f"({ours.peak / static.peak:.4f}x)")
        faster = [(m, c) for m, c in ((m, cells[m][bs]) for m in MODES if m != "bladec")
                  if not c.oom and c.rate >= ours.rate]
        behind = [f"{m} {c.rate:,.0f}" for m, c in faster if not c.over]
        speed = (f"tokens/s {ours.rate:,.0f} beats every other mode that fits" if not behind
                 else f"tokens/s {ours.rate:,.0f} NOT ahead of: " + ", ".join(behind))
        over = [f"{m} {c.rate:,.0f}" for m, c in faster if c.over]
        if over:  # jax.jit ran on past the limit: OOM by the table's rule, named all the same
            speed += " (faster only above the limit: " + ", ".join(over) + ")"
        out.append(f"- batch {bs}: fits; {peak}; {speed}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--exact-budget", type=float, default=300.0,
                    help="seconds per batch size for the exact-shape modes (dynamic, "
                    "jit-exact), which compile once per sequence length")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/bench-paper.md")
    ap.add_argument("--optimizer", choices=sorted(PAPER_SAMPLES), default="adam")
    ap.add_argument("--batch-sizes", default="14,16,18",
                    help="a subset of 14,16,18 (14 always runs: it sets the limit)")
    ap.add_argument("--probe", metavar="MODE:BATCHxLENGTH",
                    help="run no table: prepare static or bladec at one bucket under the "
                    "limit of --steps and say its peak or the smallest limit it names")
    args = ap.parse_args()
    if args.probe is not None:
        mode, _, bucket = args.probe.partition(":")
        batch, _, length = bucket.partition("x")
        if mode not in ("static", "bladec") or not (batch.isdigit() and length.isdigit()):
            ap.error("--probe: MODE:BATCHxLENGTH, MODE static or bladec (e.g. bladec:18x768)")
        limit, peak, smallest = probe(CPU_CONFIG, args.steps, args.seed, args.optimizer,
                                      mode, (int(batch), int(length)))
        said = (f"fits, device peak {peak} B ({peak / limit:.4f}x)" if peak is not None else
                "refused" if smallest is None else
                f"refused, smallest limit {smallest} B = {smallest / GIB:.4f} GiB "
                f"({smallest / limit:.4f}x)")
        print(f"{args.probe} under {limit} B = {limit / GIB:.4f} GiB: {said}")
        return
    global BATCH_SIZES
    try:
        chosen = {int(b) for b in args.batch_sizes.split(",")}
    except ValueError:
        chosen = set()
    if not chosen or not chosen <= set(BATCH_SIZES):
        ap.error("--batch-sizes: a subset of 14,16,18")
    BATCH_SIZES = tuple(b for b in BATCH_SIZES if b in chosen | {14})
    header = "| mode | " + " | ".join(f"batch {b}" for b in BATCH_SIZES) + " |"
    rule = "| --- " * (len(BATCH_SIZES) + 1) + "|"
    t0 = time.perf_counter()
    cells, limit = run_modes(CPU_CONFIG, args.steps, args.seed, args.optimizer,
                             args.exact_budget)
    tables = [("a 40 GB card", paper_columns(args.steps, args.seed, args.optimizer,
                                             PAPER_CARD)[0])]
    if args.optimizer == "sgd":  # no optimizer state: a 40 GB card holds every batch
        scaled, scaled_limit = paper_columns(args.steps, args.seed, args.optimizer)
        tables.append((f"limit {scaled_limit / GIB:.2f} GiB = dynamic's peak at batch 14",
                       scaled))
    lines = [f"## Table 1 on CPU: tokens/s (device peak, DESIGN.md section 4), {args.steps} steps per "
             f"batch size, {args.optimizer}, limit {limit / GIB:.3f} GiB",
             "", f"Model: {CPU_CONFIG}; jax {jax.__version__} on {jax.devices()[0].platform}.",
             "Throughput counts real (unpadded) tokens and includes compilation time; "
             f"dynamic and jit-exact stop after {args.exact_budget:.0f} s per batch size "
             "(each cell says how many steps it ran).", "",
             header, rule]
    for mode in MODES:
        lines.append(f"| {mode} | " + " | ".join(cells[mode][bs].text() for bs in BATCH_SIZES)
                     + " |")
    lines += ["", "jit rows: peak is XLA's own figure (arguments + outputs + temporaries); "
              "`jax.jit` applies no limit, so a row whose figure exceeds the limit ran on and "
              "is marked OOM with what it reached without one.", "",
              "Tokens/s over the steps that compiled nothing (steady state):", "",
              header, rule]
    for mode in MODES:
        lines.append(f"| {mode} | " + " | ".join(cells[mode][bs].steady_text()
                                                 for bs in BATCH_SIZES) + " |")
    lines += ["", "Goal (issue 7), side by side in this run:", ""] + goal_lines(cells)
    for title, table in tables:
        lines += ["", f"## Paper size (4 layers, hidden 4096, vocab 32000, {args.optimizer}), "
                  f"peak from the plans, {title}", "", header, rule]
        for mode in ("dynamic", "static", "bladec"):
            lines.append(f"| {mode} | " + " | ".join(table[mode][bs] for bs in BATCH_SIZES)
                         + " |")
    lines += ["", "## The paper's Table 1 (A100 40 GB), for reference", "",
              "| mode | batch 14 | batch 16 | batch 18 |", "| --- | --- | --- | --- |"]
    for mode, row in PAPER_TABLE.items():
        lines.append(f"| {mode} | " + " | ".join(
            "OOM" if c is None else f"{c[0]:,.2f} ({c[1]:.2f} GiB)" for c in row) + " |")
    lines += ["", "Every mode trains its own copy of the model from the same start; "
              "last loss per mode and batch size (they agree to float tolerance where "
              "the modes ran the same steps):", "",
              header, rule]
    for mode in MODES:
        lines.append(f"| {mode} | " + " | ".join(
            f"{cells[mode][bs].losses[-1]:.5f}" if cells[mode][bs].losses else "-"
            for bs in BATCH_SIZES) + " |")
    lines += ["", f"total time: {time.perf_counter() - t0:.0f} s"]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
