"""An LSTM language model over a ``lax.scan`` under its smallest limit: what
checkpointed scans (bladec/runtime/checkpoint.py) let it fit in (issue 37).

    python benchmarks/bench_checkpoint.py [--hidden 128] [--vocab 256] [--T 64] [--B 16]
        [--steps 5]

The step (tests/support/lstmlm.py: ``value_and_grad`` and SGD, the parameters donated)
is traced with T and B symbolic, as ``bladec.jit`` traces it once the length changes, and
run on the JAX backend: the device peak with no limit (DESIGN.md section 4), the limit a
refusal names (the smallest that runs), checked to run and to be refused one byte under,
and the CPU seconds of a step at each (median of ``--steps`` runs after one warm-up; the
same inputs, the same backend). Prints one markdown row.
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
from jax import export

from bladec.frontend import trace
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.engine import optimize
from bladec.runtime.executor import Executor
from bladec.runtime.planning.limit import LimitError
from tests.support.lstmlm import LstmLM


def _seconds(ex: Executor, inputs: dict, limit: int | None, steps: int) -> float:
    ex.run(inputs, limit=limit)
    times = []
    for _ in range(steps):
        cpu = time.process_time()
        ex.run(inputs, limit=limit)
        times.append(time.process_time() - cpu)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--T", type=int, default=64)
    parser.add_argument("--B", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5)
    a = parser.parse_args()
    model = LstmLM(a.hidden, a.vocab)
    T, B = export.symbolic_shape("T, B")
    sym = trace(model.step, model.specs(T, B), donate_argnums=(0,),
                ranges={"T": (1, 1024), "B": (1, 1024)})
    ex = Executor(optimize(sym.module), JaxBackend())
    binding = sym.binding(T=a.T, B=a.B)
    free = ex.prepare(binding, None).device.peak
    cpu = time.process_time()
    try:
        ex.prepare(binding, 1)
        raise SystemExit("a limit of one byte ran")
    except LimitError as refused:
        named = refused.smallest
    search = time.process_time() - cpu
    assert ex.prepare(binding, named).device.peak <= named
    try:
        ex.prepare(binding, named - 1)
        raise SystemExit(f"one byte under the limit named ({named - 1}) ran")
    except LimitError:
        pass
    inputs = sym.flatten_inputs(*model.args({"T": a.T, "B": a.B}, 0))
    _, report = ex.run(inputs, limit=named)
    assert report.peak_bytes <= named
    base = _seconds(ex, inputs, None, a.steps)
    under = _seconds(ex, inputs, named, a.steps)
    print("| model | shape | no-limit device peak B | smallest limit B | ratio | step CPU s "
          "(no limit / smallest) | search CPU s |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: |")
    print(f"| LSTM LM hidden {a.hidden} vocab {a.vocab} | T={a.T} B={a.B} | {free:,} | "
          f"{named:,} | **{named / free:.3f}** | {base:.3f} / {under:.3f} "
          f"({under / base:.2f}x) | {search:.1f} |")
    print(f"(jax {jax.__version__}, {report.segments} segments under the limit)")


if __name__ == "__main__":
    main()
