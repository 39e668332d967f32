"""What the OS sees: each row of the Llama training step in a fresh process of its own.

On a CPU device the device's arrays, the host copies of evicted values, the allocator's
kept memory and the compiled executables all land in one RAM, so the figure a user of
the machine sees is the process's peak resident set (``ru_maxrss``), and a row's cost
is its growth over a process that only imports JAX and makes the inputs (DESIGN.md
section 4). Each row (a baseline, ``jax.jit``, a ``jax.checkpoint`` policy, bladec at a
limit) runs in a child process, since ``ru_maxrss`` only grows; the parent gives every
child the same environment, allocator settings included (``GLIBC_TUNABLES`` must be set
before a process starts, so a setting is compared only across children), and reports
RSS growth, step wall and CPU time (medians) and minor page faults per step.

``--allocator default`` is glibc as it comes; ``tuned`` sets allocator.py's
``TUNED`` (one arena, so XLA's worker threads do not take big buffers
from arenas of their own, which glibc maps afresh and unmaps on every free; large
buffers from the heap and the heap not trimmed, so freed memory is reused, not faulted
in again). A limit is given as bytes or as a fraction of jit's device peak (``0.5x``).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support.allocator import ALLOCATORS  # noqa: E402
TINY = dict(vocab=64, hidden=16, intermediate=32, heads=2, layers=1)


def _usage() -> dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"rss": r.ru_maxrss * 1024, "cpu": r.ru_utime + r.ru_stime, "sys": r.ru_stime,
            "minflt": r.ru_minflt}


def _code_bytes(executable: Any) -> int:
    """An executable's own memory by XLA: generated code and constants."""
    m = executable.memory_analysis()
    return int(getattr(m, "generated_code_size_in_bytes", 0)
               + getattr(m, "constant_size_in_bytes", 0))


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One row in this process: build it, run ``warmup`` + ``steps`` steps, and say
    what the process held at its peak and what each step cost."""
    import jax
    import numpy as np
    from benchmarks.bench_device import make_args, step_fn
    from bladec.models.llama import Config, import_spec
    cfg = Config(**spec["config"])
    batch, seq, optimizer = spec["batch"], spec["seq"], spec["optimizer"]
    args = jax.device_put(make_args(cfg, optimizer, batch, seq))
    jax.block_until_ready(args)
    carried = 2 if optimizer == "adam" else 1
    out: dict[str, Any] = {"row": spec["row"]}
    row = spec["row"]
    if row == "baseline":
        out.update(_usage())
        return out
    if row == "bladec":
        from bladec.frontend.jax_import import trace
        from bladec.passes import parse_pipeline, run_pipeline
        from bladec.runtime.backends.jax_backend import JaxBackend
        from bladec.runtime.engine import Engine
        imported = trace(**import_spec(cfg, batch, seq, optimizer))
        optimized = run_pipeline(imported.module, parse_pipeline("analyze,schedule,remat"))
        engine = Engine(optimized, backend=JaxBackend())
        limit = spec.get("limit")
        report: dict[str, Any] = {}

        def call(a: tuple) -> Any:
            leaves = jax.tree_util.tree_leaves(a)
            outs, rep = engine.call(dict(zip(imported.input_names, leaves)), limit=limit)
            report.update(peak_bytes=rep.peak_bytes, host_peak_bytes=rep.host_peak_bytes,
                          segments=rep.segments, reloads=rep.reloads,
                          recomputes=rep.recomputes,
                          recomputed_ops=rep.recomputed_ops, executables=rep.executables,
                          peak_counts=rep.peak_counts)
            return imported.unflatten_outputs(outs)

        def totals() -> dict[str, Any]:
            # read once after the steps, not in them: the executables' memory_analysis()
            # over every executable compiled (rejected plans' too) cost the limited row
            # 150-300 ms of CPU per step, counted as its step time until 2026-11-27
            return {"compile_cpu": engine.backend.compile_cpu_seconds,
                    "code_bytes": sum(_code_bytes(e) for e in engine.backend.executables())}
    else:
        policy = None if row == "jit" else row.split(":")[1]
        options = {"xla_disable_hlo_passes": "cse_barrier_expander"} \
            if row.endswith(":kept") else {}
        compiled = jax.jit(step_fn(cfg, optimizer, policy)).lower(*args).compile(
            compiler_options=options)
        m = compiled.memory_analysis()
        report = {"peak_bytes": m.argument_size_in_bytes + m.output_size_in_bytes
                  + m.temp_size_in_bytes - m.alias_size_in_bytes,
                  "code_bytes": _code_bytes(compiled)}

        def totals() -> dict[str, Any]:
            return {}

        def call(a: tuple) -> Any:
            return compiled(*a)
    walls, cpus, faults = [], [], []
    before_steps = None
    for i in range(spec["warmup"] + spec["steps"]):
        u0, t0 = _usage(), time.perf_counter()
        result = call(args)
        jax.block_until_ready(result)
        t1, u1 = time.perf_counter(), _usage()
        _, *new = result
        args = (*new, *args[carried:])
        if i == 0:
            before_steps = u0
        if i >= spec["warmup"]:
            walls.append(t1 - t0)
            cpus.append(u1["cpu"] - u0["cpu"])
            faults.append(u1["minflt"] - u0["minflt"])
    out.update(_usage())
    out.update(report, **totals(), rss_before_steps=before_steps["rss"],
               wall=statistics.median(walls), cpu_time=statistics.median(cpus),
               faults=statistics.median(faults))
    del np
    return out


def run_child(spec: dict[str, Any], allocator: str | None,
              variant: dict[str, str] | None = None) -> dict[str, Any]:
    """``spec`` in a fresh process under ``allocator`` (GLIBC_TUNABLES, or none), with
    the environment ``variant`` adds (bladec's settings compared on one load)."""
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if allocator:
        env["GLIBC_TUNABLES"] = allocator
    env.update(variant or {})
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"row": spec["row"], "error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parse_limit(text: str, jit_peak: int) -> int | None:
    if text == "none":
        return None
    return int(float(text[:-1]) * jit_peak) if text.endswith("x") else int(text)


def measure(config: dict[str, int], optimizer: str, batch: int, seq: int, rows: list[str],
            limits: list[str], allocator: str | None, steps: int, warmup: int,
            variants: list[str] = ("",)) -> list[dict[str, Any]]:
    """Every row in a fresh process, baseline and jit first (bladec's limits as
    fractions are of jit's device peak, each run once per variant: ``NAME=VALUE``
    settings of the environment, "" for none); RSS growth over the baseline."""
    spec = {"config": config, "optimizer": optimizer, "batch": batch, "seq": seq,
            "steps": steps, "warmup": warmup}
    base = run_child(dict(spec, row="baseline"), allocator)
    jit = run_child(dict(spec, row="jit"), allocator)
    results = [base, jit]
    for row in rows:
        if row != "jit":
            results.append(run_child(dict(spec, row=row), allocator))
    for text in limits:
        limit = parse_limit(text, jit["peak_bytes"])
        for variant in variants:
            settings = dict(v.split("=", 1) for v in variant.split(";") if v)
            r = run_child(dict(spec, row="bladec", limit=limit), allocator, settings)
            r["limit"], r["limit_text"] = limit, text + (f" {variant}" if variant else "")
            results.append(r)
    for r in results:
        if "rss" in r:
            r["growth"] = r["rss"] - base["rss"]
    return results


def table(results: list[dict[str, Any]]) -> list[str]:
    mib = 1 << 20
    jit = results[1]
    lines = ["| row | device peak MiB | host peak MiB | RSS growth MiB | x jit | wall ms | "
             "CPU ms | x jit CPU | faults/step | code MiB | recomputes (ops) | compile CPU s |",
             "|---" * 12 + "|"]
    for r in results[1:]:
        name = r["row"] + (f" @ {r['limit_text']}" if "limit_text" in r else "")
        if "error" in r:
            lines.append(f"| {name} | refused: {r['error'][:120]} |" + " |" * 10)
            continue
        lines.append(
            f"| {name} | {r['peak_bytes'] / mib:.1f} | {r.get('host_peak_bytes', 0) / mib:.1f}"
            f" | {r['growth'] / mib:.0f} | {r['growth'] / jit['growth']:.2f} | "
            f"{r['wall'] * 1e3:.0f} | {r['cpu_time'] * 1e3:.0f} | "
            f"{r['cpu_time'] / jit['cpu_time']:.2f} | {r['faults']:.0f} | "
            f"{r.get('code_bytes', 0) / mib:.1f} | "
            f"{r.get('recomputes', 0)} ({r.get('recomputed_ops', 0)}) | "
            f"{r.get('compile_cpu', 0):.1f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", choices=("cpu", "tiny"), default="cpu")
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    ap.add_argument("--shape", default="8x256")
    ap.add_argument("--rows", default="jit",
                    help="jit and checkpoint:POLICY[:kept], comma-separated")
    ap.add_argument("--limits", default="none,0.5x",
                    help="bladec's rows: none, bytes, or a fraction of jit's peak (0.5x)")
    ap.add_argument("--allocator", choices=("default", "tuned", "both"), default="both")
    ap.add_argument("--variants", default="",
                    help="bladec's rows again per variant: NAME=VALUE settings of the "
                    "environment (;-separated), variants comma-separated, empty for none")
    ap.add_argument("--steps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    from bench_paper import CPU_CONFIG   # noqa: E402 (the model the issue measured)
    from dataclasses import asdict
    config = asdict(CPU_CONFIG) if args.model == "cpu" else TINY
    batch, seq = (int(x) for x in args.shape.split("x"))
    names = ("default", "tuned") if args.allocator == "both" else (args.allocator,)
    dump = {"command": "python benchmarks/bench_rss.py " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"), "runs": {}}
    for name in names:
        results = measure(config, args.optimizer, batch, seq,
                          [r for r in args.rows.split(",") if r],
                          [x for x in args.limits.split(",") if x], ALLOCATORS[name],
                          args.steps, args.warmup, args.variants.split(",") or [""])
        dump["runs"][name] = results
        print(f"\n{args.optimizer} {args.shape}, allocator {name} "
              f"({ALLOCATORS[name] or 'glibc defaults'}):")
        print("\n".join(table(results)), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
