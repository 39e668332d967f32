"""Does bladec's op order reach XLA? (issue 13 item 4)

Whole-graph executables of the same listing, by XLA's own accounting (arguments +
outputs + temporaries - aliased), at several bindings:

- imported: the listing in the order it was imported, fused (plain ``jax.jit``);
- scheduled: bladec's schedule pass order (the version the runtime would pick), fused;
- chained: the scheduled order enforced inside the executable: each op's operands pass
  through one ``lax.optimization_barrier`` together with the previous op's results, so
  XLA can not start an op before the one bladec put before it (fusion across ops is
  then impossible too);
- bitwise: every op behind its own barrier, fusion off (bladec's --bitwise mode).

    python benchmarks/bench_order.py [--sample samples/llama-train-small.mlir]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bladec.analysis.liveness import is_compute  # noqa: E402
from bladec.analysis.memory import exact_sizes  # noqa: E402
from bladec.analysis.version import choose, versions  # noqa: E402
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.executor import Executor  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend, whole_graph, xla_total_bytes  # noqa: E402
from bladec.source import load_module  # noqa: E402


def xla_bytes(func, ex: Executor, shapes: dict, mode: str) -> int:
    ops = [op for op in func.ops if is_compute(op)]
    mode = {"chained": "ordered"}.get(mode, mode)
    return xla_total_bytes(whole_graph(ops, ex.inputs, ex.outputs, shapes, ex.info.dtypes, mode))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", default="samples/llama-train-small.mlir")
    parser.add_argument("--bindings", default="2x64,8x128,8x256,8x512,16x256")
    args = parser.parse_args()
    imported = load_module(args.sample)
    scheduled = run_pipeline(imported, parse_pipeline("analyze,schedule"))
    ex = Executor(imported, JaxBackend())
    print(f"{args.sample}: XLA bytes of one whole-graph executable (MiB), ratio to imported")
    print("| binding | imported | scheduled | chained | bitwise | model: imported | "
          "model: scheduled |")
    print("|---|---|---|---|---|---|---|")
    for b in args.bindings.split(","):
        s0, s1 = (int(x) for x in b.split("x"))
        binding = {"S0": s0, "S1": s1}
        shapes = ex.shapes_for(binding)
        sizes = exact_sizes(ex.info, binding)
        funcs = versions(scheduled)
        best_index, peaks = choose(funcs, sizes)[:2] if len(funcs) > 1 else (0, None)
        order = funcs[best_index]
        from bladec.analysis.memory import exact_peak
        base = xla_bytes(imported.main, ex, shapes, "fused")
        row = [base, xla_bytes(order, ex, shapes, "fused"), xla_bytes(order, ex, shapes,
               "chained"), xla_bytes(order, ex, shapes, "bitwise")]
        cells = " | ".join(f"{v / 2**20:.1f} ({v / base:.2f}x)" for v in row)
        print(f"| {b} | {cells} | {exact_peak(imported.main, sizes) / 2**20:.1f} | "
              f"{exact_peak(order, sizes) / 2**20:.1f} |")


if __name__ == "__main__":
    main()
