"""The GPU check of the device-memory promise (``make bench-gpu``; needs a GPU).

For the small Llama training step and the paper-size Adam step, at limits of 0.8x and
0.5x of whole-graph ``jax.jit``'s own peak (XLA's memory analysis of the same listing):

1. ``bladec run --mem-limit L --json`` in a fresh process with
   ``XLA_PYTHON_CLIENT_PREALLOCATE=false``: the allocator's own peak
   (``device_peak_bytes``, from ``memory_stats()['peak_bytes_in_use']``) against the limit
   and against bladec's device peak (``peak_bytes``);
2. the same with ``XLA_PYTHON_CLIENT_MEM_FRACTION`` set to the limit as a hard cap, and a
   plain ``jax.jit`` run of the unoptimized listing under the same cap (expected to run
   out of memory where bladec runs).

Each run is its own process, so each allocator peak is that run's. Prints a markdown
table; ``--json`` writes the rows. About 10-20 minutes on one GPU, most of it compiling
the paper-size step.

    python benchmarks/bench_gpu.py [--json out/bench-gpu.json] [--case small] [--fractions 0.8,0.5]

``--case`` keeps the cases whose sample name holds the word (``small``, ``paper``), so a
short lease can measure one case; ``--fractions`` sets the limits. Each row also gives the
``bladec run``'s wall seconds, compiling included.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = [("samples/llama-train-small.mlir", "S0=8,S1=512"),
         ("samples/llama-train-paper-adam.mlir", "S0=8,S1=512")]
FRACTIONS = (0.8, 0.5)

JIT_PEAK = """
import sys, jax
from bladec.source import load_module
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend, whole_graph, xla_total_bytes
from bladec.units import parse_dims
ex = Executor(load_module(sys.argv[1]), JaxBackend())
binding = parse_dims(sys.argv[2])
compiled = whole_graph(list(ex.func.ops), ex.inputs, ex.outputs, ex.shapes_for(binding),
                       ex.info.dtypes)
print(xla_total_bytes(compiled))
if len(sys.argv) > 3:  # run it too (under the caller's memory cap)
    inputs = ex.random_inputs(binding)
    jax.block_until_ready(compiled(*[jax.device_put(inputs[n]) for n in ex.inputs]))
    print("ran")
"""


def _env(cap: int | None, total: int | None) -> dict[str, str]:
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    if cap is not None and total:
        env["XLA_PYTHON_CLIENT_MEM_FRACTION"] = f"{cap / total:.4f}"
    return env


def _device_total() -> int | None:
    out = subprocess.run([sys.executable, "-c", "import jax; d = jax.devices()[0]; "
                          "print(d.platform, (d.memory_stats() or {}).get('bytes_limit', 0))"],
                         capture_output=True, text=True, cwd=ROOT,
                         # the whole memory: a cap is a fraction of it, not of JAX's
                         # default pool (0.75 of it)
                         env=dict(_env(None, None), XLA_PYTHON_CLIENT_MEM_FRACTION="1.0"))
    platform, limit = out.stdout.split()
    if platform != "gpu":
        sys.exit(f"bench_gpu needs a GPU (jax sees {platform}); nothing measured")
    return int(limit) or None


def _bladec(sample: str, dims: str, limit: int, env: dict[str, str]) -> dict:
    cmd = [sys.executable, "-m", "bladec", "run", sample, "--dims", dims, "--mem-limit",
           str(limit), "--json"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = round(time.perf_counter() - start, 1)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1], "exit": out.returncode,
                "seconds": seconds}
    return {**json.loads(out.stdout), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--case", default=None, help="keep the samples whose name holds this")
    parser.add_argument("--fractions", default=",".join(map(str, FRACTIONS)))
    args = parser.parse_args()
    fractions = [float(f) for f in args.fractions.split(",")]
    total = _device_total()
    rows = []
    print("| sample | binding | limit | bladec peak | allocator peak | within | seconds | "
          "capped: bladec | capped: jax.jit |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for sample, dims in CASES:
        if args.case and args.case not in sample:
            continue
        jit = subprocess.run([sys.executable, "-c", JIT_PEAK, sample, dims],
                             capture_output=True, text=True, env=_env(None, None), cwd=ROOT)
        if jit.returncode != 0:
            print(f"| {sample} | {dims} | jax.jit failed: "
                  f"{(jit.stderr.strip().splitlines() or ['?'])[-1]} |", flush=True)
            continue
        jit_peak = int(jit.stdout.split()[0])
        for f in fractions:
            limit = int(f * jit_peak)
            free = _bladec(sample, dims, limit, _env(None, total))
            capped = _bladec(sample, dims, limit, _env(limit, total))
            jit_capped = subprocess.run([sys.executable, "-c", JIT_PEAK, sample, dims, "run"],
                                        capture_output=True, text=True,
                                        env=_env(limit, total), cwd=ROOT)
            row = {"sample": sample, "dims": dims, "jit_peak": jit_peak, "fraction": f,
                   "limit": limit, "bladec": free, "capped_bladec_ok": "error" not in capped,
                   "capped_jit_ok": "ran" in jit_capped.stdout}
            rows.append(row)
            peak, alloc = free.get("peak_bytes"), free.get("device_peak_bytes")
            within = alloc is not None and alloc <= limit
            if "error" in free:
                peak = f"refused (exit {free['exit']}): {free['error']}"
            print(f"| {sample} | {dims} | {f}x = {limit} | {peak} | {alloc} | {within} | "
                  f"{free['seconds']} | "
                  f"{'ran' if row['capped_bladec_ok'] else capped.get('error')} | "
                  f"{'ran' if row['capped_jit_ok'] else 'out of memory'} |", flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
