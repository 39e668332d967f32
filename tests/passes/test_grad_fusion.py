"""The ``grad`` pass's training graphs compile to no more work than JAX's own: on the
training benchmark's function kinds (bladec/models/blocks.py, and the small Llama), the
optimized HLO of bladec's whole step in XLA's order has at most the kernels, loop
fusions, transposes, copies, divides and materialized broadcasts of
``jax.jit(jax.value_and_grad(f))``'s (benchmarks/support/hlo.py counts them). A rule
that transposes after a dot, materializes a zero cotangent or divides where JAX
multiplies shows up here as a count over jit's.

Not compared: compares and selects (``jax.nn.relu`` is a ``custom_jvp`` with a one-select
rule; imported it is ``max``, whose adjoint is ``lax.max``'s tie rule: two more per
ReLU, inside the same fusion), and broadcasts inside fusions (free there)."""
from __future__ import annotations

import pytest

from benchmarks import bench_training
from benchmarks.support.hlo import op_counts

BOUNDED = ("kernels", "loop fusions", "dot kernels", "copies", "broadcasts written",
           "transpose", "divide")
SLOW = ("attention", "llama")   # 2.4 and 3.6 s of CPU; the others under 1.5 s


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW
                                  else k for k in bench_training.SHAPES])
def test_grad_compiles_to_no_more_than_jax(kind, monkeypatch):
    monkeypatch.setenv("BLADEC_NO_LIMIT_ORDER", "xla")
    c = bench_training.case(kind, 2)
    jit = op_counts(bench_training.jit_row(c, None)[2].as_text())
    peak, _, executable, order = bench_training.bladec_row(c, "grad")
    assert order == "XLA"
    ours = op_counts(executable.as_text())
    over = {f: (ours[f], jit[f]) for f in BOUNDED if ours[f] > jit[f]}
    assert not over, f"{kind}: (grad's, jit's) counts where grad's are higher: {over}"
