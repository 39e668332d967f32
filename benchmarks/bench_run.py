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
price of XLA's inter-op concurrency. ``--malloc keep`` does what JaxBackend does off CPU
(keep freed memory in the process, so that big buffers are not unmapped and faulted in
again on every step; on CPU, one memory, it is off unless BLADEC_KEEP_FREED_MEMORY=1);
it is process-wide, every row under it, so compare two runs. ``--allocator`` (both by
default) runs the whole benchmark under glibc as it comes and under GLIBC_TUNABLES that
take the page faults away (benchmarks/allocator.py), one child process each. ``--ablate``
adds the lowest-limit plan with its cut points left where the planner chose them and
with every segment awaited, to show what sharing cut points and asynchronous dispatch
buy, side by side.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.support import allocator  # noqa: E402
from benchmarks.support.runreport import (  # noqa: E402
    bitwise_lines, goal_lines, header_lines, profile_lines, stream_lines, throughput_lines)
from benchmarks.support.shapestream import (  # noqa: E402
    StreamRow, batch_stream, record_lengths, stream_rows)
from benchmarks.support.throughput import Lineup, lineup, log, measure  # noqa: E402
from benchmarks.support.workload import (  # noqa: E402
    TRAINING_SAMPLES, Workload, listing, load_workload)


def keep_freed_memory() -> bool:
    """glibc: keep freed memory in the process (what JaxBackend does by default; see
    bladec.runtime.backends.allocator.keep_freed_memory_in_process)."""
    from bladec.runtime.backends.allocator import keep_freed_memory_in_process
    return keep_freed_memory_in_process()


def parser() -> argparse.ArgumentParser:
    """The flags of the module docstring's command line."""
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
    ap.add_argument("--malloc", choices=["default", "keep"], default="default",
                    help="keep (what JaxBackend does off CPU): mallopt so freed "
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
    allocator.add_option(ap)
    return ap


def throughput_table(w: Workload, args: argparse.Namespace, fuses: list[bool],
                     fractions: list[float]) -> Lineup:
    """Table 1: every configuration planned, then measured side by side."""
    table = lineup(w, args, fuses, fractions)
    measure(table.configs, args.repeats, args.seed, args.profile_rounds)
    log("table 1: done")
    return table


def stream_table(w: Workload, args: argparse.Namespace, fuse: bool
                 ) -> tuple[list[StreamRow], list[str]]:
    """Table 2: a stream of CodeAlpaca batch lengths within the sequence symbol's range,
    run at three paddings; its rows and its lines."""
    lengths, source = record_lengths(args.seed)
    lo, hi = w.probe.info.ranges.get(args.seq_symbol, (1, None))
    seqs = batch_stream(lengths, args.stream_steps, args.stream_batch, args.seed,
                        max(lo or 1, 1), min(hi or 1 << 30, args.stream_max_seq or 1 << 30))
    log(f"table 2: {len(seqs)} steps, three paddings")
    rows = stream_rows(w.scheduled, fuse, seqs, args.stream_batch, args.seq_symbol,
                       args.batch_symbol, args.pad_multiple, args.seed)
    return rows, stream_lines(rows, seqs, source, fuse, args)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Every table, printed as markdown; their figures returned for the tests."""
    args = parser().parse_args(argv)
    status = allocator.run_under(args.allocator, sys.argv[1:] if argv is None else argv,
                                 __file__)
    if status is not None:   # each allocator's tables came from a child process
        return {"text": "", "status": status}
    t_start = time.perf_counter()
    if args.malloc == "keep":
        keep_freed_memory()
    else:
        os.environ["BLADEC_KEEP_FREED_MEMORY"] = "0"
    if args.pin_cpu is not None:
        os.sched_setaffinity(0, {args.pin_cpu})
    path, rel, binding = listing(args)
    fuses = [bool(int(f)) for f in args.fuse.split(",") if f.strip()]
    fractions = [float(f) for f in args.limits.split(",") if f.strip()]
    w = load_workload(path, rel, binding, args.seed, log)

    table = throughput_table(w, args, fuses, fractions)
    lines = header_lines(w, args, table.configs)
    table1, results = throughput_lines(w, table, args.profile_rounds)
    table3, bitwise_b, bitwise_all = bitwise_lines(table, w.reference)
    rows, table2 = stream_table(w, args, fuses[0])
    goals_text, goals = goal_lines(table, fuses, fractions, bitwise_b)
    lines += table1 + table2 + table3 + goals_text
    if args.profile:
        lines += profile_lines(table, fuses, fractions, args.profile)
    lines.append("")
    lines.append(f"Total benchmark time: {time.perf_counter() - t_start:.0f} s. Command: "
                 f"python benchmarks/bench_run.py "
                 f"{' '.join(argv if argv is not None else sys.argv[1:])}")
    text = "\n".join(lines)
    print(text)
    return {"text": text, "bitwise": bitwise_b, "bitwise_all_fuse_off": bitwise_all,
            "goals": goals, "results": results, "stream": [r.__dict__ for r in rows],
            "peak": w.peak}


if __name__ == "__main__":
    main()
