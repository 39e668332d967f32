"""bladec's device peak at no limit against ``jax.jit``'s XLA total, per corpus step
(issue 33 item 2: "no worse than jit at no limit").

    python benchmarks/bench_jit_ratio.py [--size run|bench] [--only NAME,...]

For each step of tests/support/corpus.py and corpus_quotient.py at its ``run`` (or
``bench``) binding: ``jax.jit`` of the step with the spec's donations, XLA's own
``argument + output + temp - alias`` bytes of ``compiled.memory_analysis()``; and the
step imported (``trace``), optimized (``analyze,schedule,remat``) and run by the
runtime's Engine (as ``bladec.jit`` runs it, XLA fusion on) with no limit:
``Report.peak_bytes``, the runtime's device peak (DESIGN.md section 4), and the ratio.
Also bladec's peak with the listing's own order (``-p analyze``): where that is lower,
the schedule made it worse. Figures are of the machine this runs on (on CPU: XLA:CPU's
buffer assignment, no allocator statistics).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.corpus import all_steps  # noqa: E402
from tests.support.corpus_quotient import quotient_steps  # noqa: E402

from bladec.frontend import trace  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend, xla_total_bytes  # noqa: E402
from bladec.runtime.engine import Engine  # noqa: E402


def measure(name: str, st, size: str) -> dict:
    binding = st.bench if size == "bench" else st.run
    args = st.make(binding, 1)
    compiled = jax.jit(st.fn, donate_argnums=st.donate_argnums).lower(*args).compile()
    jit_total = xla_total_bytes(compiled)
    imp = trace(**st.spec(), sizes=dict(binding))   # einsum's order at these sizes
    leaves = dict(zip(imp.input_names, jax.tree_util.tree_leaves(args)))
    row = {"model": name, "binding": binding, "jit": jit_total}
    for label, pipeline in (("bladec", "analyze,schedule,remat"), ("listing order", "analyze")):
        engine = Engine(imp.module, passes=pipeline, backend=JaxBackend())
        _, report = engine.call(dict(leaves), limit=None)
        row[label] = int(report.peak_bytes)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=["run", "bench"], default="run")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    steps = {**all_steps(), **quotient_steps()}
    names = [n for n in steps if not a.only or n in a.only.split(",")]
    print(f"device: {jax.devices()[0].platform}; size: {a.size}")
    print("| model | binding | jax.jit XLA total | bladec, no limit | ratio | listing order |")
    print("|---|---|---:|---:|---:|---:|")
    for n in names:
        r = measure(n, steps[n], a.size)
        dims = ",".join(f"{k}={v}" for k, v in r["binding"].items())
        print(f"| {n} | {dims} | {r['jit']} | {r['bladec']} | {r['bladec'] / r['jit']:.3f} "
              f"| {r['listing order']} ({r['listing order'] / r['jit']:.3f}) |", flush=True)


if __name__ == "__main__":
    main()
