"""The importer's corpus (tests/support/corpus.py): import, relations, and runs under limits.

    python benchmarks/bench_corpus.py [--backend jax|numpy] [--size bench|run] [--out FILE]
                                      [--only NAME,...]

For each training step: ops in its listing, the seconds ``trace`` takes (with its dims
check), hints with and without hints allowed (0 means every dim of every value was proved
by bladec's own analysis), then at the step's ``bench`` binding (``--size run``: the smaller
one `make test` runs at): the unconstrained peak, the
limit tried (half of it; where no plan fits half, the smallest limit that works, as the
runtime names it), the peak reached under it, evictions, and the largest difference from
calling the JAX function (``jax.jit``) directly. Peaks are the runtime's device peak
(DESIGN.md section 4) on the chosen backend.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.corpus import all_steps, run_under_half  # noqa: E402

from bladec.frontend import trace  # noqa: E402
from bladec.ir import walk  # noqa: E402
from bladec.runtime.backends.backend import NumpyBackend  # noqa: E402
from bladec.symbolic.shapes import analyze_shapes  # noqa: E402


def _backend(name: str):
    if name == "numpy":
        return NumpyBackend()
    from bladec.runtime.backends.jax_backend import JaxBackend
    return JaxBackend()


def measure(name: str, st, backend: str, size: str) -> dict:
    t0 = time.perf_counter()
    imp = trace(**st.spec())
    seconds = time.perf_counter() - t0
    bare = trace(**st.spec(), hints=False)
    info = analyze_shapes(bare.module)
    proved = sum(1 for v, dims in info.dims.items() if dims == bare.jax_dims[v])
    binding = st.bench if size == "bench" else st.run
    run = run_under_half(imp, st, binding, lambda: _backend(backend))
    note = f"{run.limit / run.base:.2f}x (smallest)" if run.smallest else "0.5x"
    want = jax.tree_util.tree_leaves(jax.jit(st.fn)(*run.args))
    got = jax.tree_util.tree_leaves(imp.unflatten_outputs(run.outputs))
    diff = max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))))
               for g, w in zip(got, want))
    return {"model": name, "ops": sum(1 for _ in walk(imp.module.main.ops)), "import_s": seconds,
            "hints": len(imp.hints), "hints_off": len(bare.hints), "proved": proved,
            "values": len(info.dims), "binding": binding, "base": run.base,
            "limit": run.limit, "note": note, "peak": run.report.peak_bytes,
            "evictions": run.report.evictions, "diff": diff}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("jax", "numpy"), default="jax")
    ap.add_argument("--size", choices=("bench", "run"), default="bench",
                    help="the steps' bench binding, or the smaller one of make test")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--out", default=None, help="also write the table here")
    args = ap.parse_args()
    steps = all_steps()
    names = [n for n in args.only.split(",") if n] or list(steps)
    lines = ["| model | ops | import s | hints (with / without) | dims proved without hints "
             "| binding | peak, no limit | limit | peak under it | evictions | max diff vs JAX |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        r = measure(name, steps[name], args.backend, args.size)
        binding = ",".join(f"{k}={v}" for k, v in r["binding"].items())
        lines.append(f"| {name} | {r['ops']} | {r['import_s']:.2f} | {r['hints']} / "
                     f"{r['hints_off']} | {r['proved']} of {r['values']} | {binding} | "
                     f"{r['base']} | {r['limit']} ({r['note']}) | {r['peak']} | "
                     f"{r['evictions']} | {r['diff']:.1e} |")
        print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
