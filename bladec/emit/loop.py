"""The loop ops (bladec/ops/loop.py) as array code, over a backend's kernels.

A region is interpreted like a segment (bladec/runtime/backend.py's ``interpret``, handed
in as ``compile_body`` so that this module needs no runtime import) and the kernels run
the loop: ``jax.lax.scan`` and ``jax.lax.while_loop`` on the JAX backend, so the loop is
one XLA while loop inside the segment's executable whatever the trip count; a Python
loop on the NumPy backend, which stacks a scan's outputs at each step's index. Both run
the same region ops on the same values in the same order, so in bitwise mode they agree
bit for bit where the regions' ops do.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from bladec.emit.lower import Kernels, OutSpec
from bladec.ir import Op
from bladec.ops.loop import ARG, BODY, COND, YIELD, body_args, body_yield, parts

# (body ops, the names of their inputs, the names of their outputs) -> the body as a function
BodyCompiler = Callable[[list[Op], list[str], list[str]], Callable[..., list]]
# (step, carries, scanned inputs, reverse, stacked output specs) -> (carries, stacked)
Step = Callable[[list, list], tuple[list, list]]


def run_loop(K: Kernels, op: Op, args: list, out: OutSpec,
             compile_body: BodyCompiler) -> list:
    """A ``scan`` or ``while`` on ``args``: its results, cast as the listing declares."""
    return (run_scan if op.name == "scan" else run_while)(K, op, args, out, compile_body)


def _region(op: Op, region: str, compile_body: BodyCompiler
            ) -> Callable[[list], list]:
    """The region as a function of the loop's operands as one step sees them."""
    arg_ops = body_args(op, region)
    index = [int(a.attrs["index"]) for a in arg_ops]
    inner = [o for o in op.regions[region] if o.name not in (ARG, YIELD)]
    fn = compile_body(inner, [a.results[0].name for a in arg_ops],
                      body_yield(op, region).operands)
    return lambda operands: list(fn(*[operands[i] for i in index]))


def run_while(K: Kernels, op: Op, args: list, out: OutSpec,
              compile_body: BodyCompiler) -> list:
    nc = parts(op)[0]
    consts = list(args[:nc])
    cond, body = _region(op, COND, compile_body), _region(op, BODY, compile_body)
    final = K.while_loop(lambda c: cond(consts + list(c))[0],
                         lambda c: body(consts + list(c)), list(args[nc:]))
    return [K.materialize(v) for v in final]


def run_scan(K: Kernels, op: Op, args: list, out: OutSpec,
             compile_body: BodyCompiler) -> list:
    nc, nk, _ = parts(op)
    consts = list(args[:nc])
    carry, xs = args[nc:nc + nk], args[nc + nk:]
    fn = _region(op, BODY, compile_body)

    def step(c: list, x: list) -> tuple[list, list]:
        results = fn(consts + list(c) + list(x))
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


def numpy_while(cond: Callable[[list], Any], body: Callable[[list], list], carry: list
                ) -> list:
    """The loop in Python: the body while the condition (an i1 scalar) holds."""
    while bool(cond(carry)):
        carry = body(carry)
    return carry
