"""What compiling a plan's segments costs against compiling the whole step once.

    python benchmarks/bench_compile.py [--bindings 18x384,18x448,18x512] [--optimizer adam]

A plan that evicts runs as several XLA executables (one per segment), and every new
binding compiles them anew; on the CPU Llama training step of bench_paper.py this is the
cost that separates bladec from the static mode's fewer buckets. For each binding, a
fresh executor compiles the step without a limit (one executable) and under bench_paper's
limit (the dynamic mode's peak at 14x407), and this prints the seconds spent lowering
and compiling, the first and the next run, the fusions XLA made, and how many of those
fused kernels are distinct within each executable (XLA compiles a kernel once per
executable, so kernels repeated across segments are compiled again).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support.training import CPU_CONFIG, Training, import_step  # noqa: E402

from bladec.runtime.engine import Engine, optimize, unoptimized  # noqa: E402
from bladec.workloads.codealpaca import Batch  # noqa: E402

_COMPUTATION = re.compile(r"^(%?[\w.\-]+) ", re.M)   # a computation's header line
_NAME = re.compile(r"%[\w.\-]+")
_METADATA = re.compile(r", metadata=\{[^}]*\}")


def fused_kernels(hlo: str) -> tuple[int, int]:
    """(fused computations, distinct ones) in an executable's HLO text; two are the same
    kernel when their bodies agree once value names and metadata are ignored."""
    bodies = []
    for block in re.split(r"\n(?=\S)", hlo):
        header = _COMPUTATION.match(block)
        if header and "fused" in header.group(1) and "{" in block:
            body = block.split("{", 1)[1]
            bodies.append(_METADATA.sub("", _NAME.sub("%", body)))
    return len(bodies), len(set(bodies))


def compile_cost(engine: Engine, inputs: dict, limit: int | None) -> dict:
    """The first run (plans and compiles) and the second (runs), with the kernels."""
    _, first = engine.call(inputs, limit)
    _, second = engine.call(inputs, limit)
    kernels = [fused_kernels(e.as_text()) for e in engine.backend.executables()]
    return {"segments": first.segments, "compile_s": first.compile_seconds,
            "first_s": first.seconds, "second_s": second.seconds,
            "fusions": sum(k[0] for k in kernels), "distinct": sum(k[1] for k in kernels)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bindings", default="18x384,18x448,18x512")
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="adam")
    args = ap.parse_args()
    step = import_step(CPU_CONFIG, 1024, args.optimizer)
    optimized = optimize(step.module)   # once; every engine below runs it as it is
    start = Training.start(CPU_CONFIG, args.optimizer, seed=0)

    def inputs(b: int, s: int) -> dict:
        zeros = np.zeros((b, s), np.int32)
        return step.flatten_inputs(*start.args(Batch(zeros, zeros, np.ones((b, s), np.float32))))

    dynamic = Engine(unoptimized(step.module), passes=[])
    limit = dynamic.model_peak({"S0": 14, "S1": 407})
    print(f"{args.optimizer} step, {len(step.module.main.ops)} ops, limit {limit} bytes")
    print("| binding | plan | executables | compile s | first run s | next run s | fusions "
          "| distinct kernels |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for text in args.bindings.split(","):
        b, s = (int(x) for x in text.split("x"))
        for name, lim in (("whole step", None), ("under the limit", limit)):
            row = compile_cost(Engine(optimized), inputs(b, s), lim)
            print(f"| {b}x{s} | {name} | {row['segments']} | {row['compile_s']:.2f} | "
                  f"{row['first_s']:.2f} | {row['second_s']:.2f} | {row['fusions']} | "
                  f"{row['distinct']} |", flush=True)


if __name__ == "__main__":
    main()
