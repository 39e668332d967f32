"""The ``scan`` loop op (bladec/ops/loop.py) as array code, over a backend's kernels.

The body is interpreted like a segment (bladec/runtime/backend.py's ``interpret``, handed
in as ``compile_body`` so that this module needs no runtime import) and the kernels run
the loop: ``jax.lax.scan`` on the JAX backend, so the loop is one XLA while loop inside
the segment's executable whatever the trip count; a Python loop on the NumPy backend,
which stacks each step's outputs at the step's index. Both run the same body ops on the
same slices in the same order, so in bitwise mode they agree bit for bit where the
body's ops do.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from bladec.emit.lower import Kernels, OutSpec
from bladec.ir import Op
from bladec.ops.loop import ARG, BODY, YIELD, body_args, body_yield, parts

# (body ops, the names of their inputs, the names of their outputs) -> the body as a function
BodyCompiler = Callable[[list[Op], list[str], list[str]], Callable[..., list]]
# (step, carries, scanned inputs, reverse, stacked output specs) -> (carries, stacked)
Step = Callable[[list, list], tuple[list, list]]


def run_scan(K: Kernels, op: Op, args: list, out: OutSpec,
             compile_body: BodyCompiler) -> list:
    nc, nk, _ = parts(op)
    consts, carry, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    arg_ops = body_args(op)
    index = [int(a.attrs["index"]) for a in arg_ops]
    inner = [o for o in op.regions[BODY] if o.name not in (ARG, YIELD)]
    fn = compile_body(inner, [a.results[0].name for a in arg_ops], body_yield(op).operands)

    def step(c: list, x: list) -> tuple[list, list]:
        operands = list(consts) + list(c) + list(x)
        results = fn(*[operands[i] for i in index])
        return list(results[:nk]), list(results[nk:])

    final, stacked = K.scan(step, list(carry), list(xs), bool(op.attrs.get("reverse", False)),
                            out[nk:])
    return [K.materialize(v) for v in list(final) + list(stacked)]


def numpy_scan(np: Any, dtype: Callable[[str], Any], step: Step, carry: list,
               xs: Sequence, reverse: bool, ys: OutSpec) -> tuple[list, list]:
    """The loop in Python: step i reads slice i of each scanned input; outputs are
    stacked at their step's index (from the last slice down when ``reverse``)."""
    length = xs[0].shape[0]
    per_step: list[list] = [[] for _ in range(length)]
    for i in (reversed(range(length)) if reverse else range(length)):
        carry, per_step[i] = step(carry, [x[i] for x in xs])
    stacked = [np.stack([s[k] for s in per_step]) if length else np.zeros(shape, dtype(d))
               for k, (shape, d) in enumerate(ys)]
    return carry, stacked
