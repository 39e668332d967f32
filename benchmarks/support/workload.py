"""bench_run.py's workload: the training listing, its binding, its scheduled and
unscheduled versions, random inputs and the unoptimized reference run on them.

Every table of the benchmark runs this one workload; loading it once, apart from the
tables, keeps the passes' time and the reference's outputs in one place.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from bladec.analysis.liveness import is_compute
from bladec.ir import Module
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.runtime.executor import Executor, unoptimized
from bladec.runtime.backends.jax_backend import JaxBackend

ROOT = Path(__file__).resolve().parent.parent
TRAINING_SAMPLES = ["samples/attention.mlir", "samples/mlp-train.mlir"]
DEFAULT_DIMS = {"samples/attention.mlir": "S0=8,S1=256", "samples/mlp-train.mlir": "S0=16,S1=512"}
SCHEDULED = "analyze,schedule,remat"
UNSCHEDULED = "analyze,remat"


def pick_sample(root: Path = ROOT) -> Path:
    """The training sample with the most compute ops."""
    found = [root / s for s in TRAINING_SAMPLES if (root / s).exists()]
    if not found:
        raise SystemExit("no training sample found (expected one of "
                         + ", ".join(TRAINING_SAMPLES) + "); give --sample")
    return max(found, key=lambda p: len([op for op in load(p).main.ops if is_compute(op)]))


def load(path: Path) -> Module:
    """The listing at ``path``, its path kept for error messages."""
    return parse_module(path.read_text(), str(path))


def parse_dims(text: str) -> dict[str, int]:
    """``"S0=8,@S1=256"`` -> ``{"S0": 8, "S1": 256}``."""
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        out[key.strip().lstrip("@")] = int(value)
    return out


@dataclass
class Workload:
    """The listing at its binding, as every table runs it."""
    rel: str                        # the listing's path, relative to ROOT where it is below
    binding: dict[str, int]
    original: Module
    scheduled: Module               # SCHEDULED's listing
    unscheduled: Module             # UNSCHEDULED's listing
    sched_seconds: float            # time of the SCHEDULED passes
    unsched_seconds: float
    probe: Executor                 # the scheduled listing on a fused JaxBackend
    inputs: dict[str, np.ndarray]
    ops: int                        # compute ops of the scheduled listing
    reference: list[np.ndarray]     # the unoptimized listing's outputs, fuse=False
    reference_peak: int             # its planned peak
    peak: int                       # the scheduled listing's peak at no limit
    unsched_peak: int


def listing(args: argparse.Namespace) -> tuple[Path, str, dict[str, int]]:
    """``--sample`` (or the largest training sample), its path as the report names it
    (relative to ROOT where it is below), and ``--dims`` (or the sample's default)."""
    path = Path(args.sample) if args.sample else pick_sample()
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return path, rel, parse_dims(args.dims or DEFAULT_DIMS.get(rel, "S0=8,S1=256"))


def load_workload(path: Path, rel: str, binding: dict[str, int], seed: int,
                  log: Callable[[str], None]) -> Workload:
    """The listing at ``path``, its passes run and timed, ``binding`` narrowed to its free
    symbols, and the reference outputs computed on ``seed``'s inputs."""
    original = load(path)
    t = time.perf_counter()
    scheduled = run_pipeline(original, parse_pipeline(SCHEDULED))
    t_sched = time.perf_counter() - t
    t = time.perf_counter()
    unscheduled = run_pipeline(original, parse_pipeline(UNSCHEDULED))
    t_unsched = time.perf_counter() - t
    probe = Executor(scheduled, JaxBackend())
    binding = {s: binding[s] for s in probe.info.free if s in binding} or binding
    inputs = probe.random_inputs(binding, seed)
    ops = len(probe.versions[0].ops)

    log(f"{rel}: {ops} compute ops at {binding}")
    # the reference: the unoptimized listing, fuse=False
    ref_ex = Executor(unoptimized(original), JaxBackend(bitwise=True))
    ref_out, ref_report = ref_ex.run(inputs)
    reference = [ref_out[n] for n in ref_ex.outputs]
    peak = probe.plan(binding, None).peak
    unsched_peak = Executor(unscheduled, JaxBackend()).plan(binding, None).peak
    return Workload(rel, binding, original, scheduled, unscheduled, t_sched, t_unsched, probe,
                    inputs, ops, reference, ref_report.planned_peak_bytes, peak, unsched_peak)
