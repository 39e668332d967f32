"""Calls, control flow and annotations.

- ``jit``/``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call`` and
  ``remat``/``checkpoint`` are inlined: their bodies translate into the same listing (the
  listing has one function, and bladec's own scheduler and remat decide what JAX's
  checkpoint policies would). ``checkpoint_name`` (primitive ``name``), sharding
  annotations and optimization barriers are identities; so is ``stop_gradient``, except
  in a forward listing for the ``grad`` pass, which keeps it as its own op.
- ``cond`` (and ``lax.switch``) translates every branch and selects the results by the
  index (clamped into range, as ``lax.cond`` does): the listing has no regions that run
  conditionally, and a training step's branches are cheap and pure.
- ``scan`` (also ``fori_loop`` with static bounds, which JAX writes as a scan): a short
  static one is unrolled here (:func:`unroll_scan`), others become the listing's loop op
  (rules/loop.py says which and why), as is ``while`` (``while_loop``, and ``fori_loop``
  with bounds known only at run time).
"""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.rules.shape import reshape_to, slice_to
from bladec.frontend.translate import KEY_TRANSPARENT, JaxImportError, Lit, Translator

INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr",
          "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
          "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}
KEY_TRANSPARENT.update(INLINE)
IDENTITY = ("sharding_constraint", "device_put", "optimization_barrier",
            "mesh_cast", "reshard", "name")


@rule(*INLINE)
def _inline(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
            outs: Outs) -> Result:
    sub = p.get(INLINE[tr.primitive])
    if sub is None:
        sub = next((p[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in p), None)
    if sub is None:
        raise JaxImportError(f"cannot find the body of '{tr.primitive}' to inline")
    inner, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, [])
    return tr.run(inner, consts, ins)


@rule(*IDENTITY)
def _identity(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
              outs: Outs) -> Result:
    return list(ins)


@rule("stop_gradient")
def _stop_gradient(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                   outs: Outs) -> Result:
    """The identity in a differentiated step; kept as the listing's op in a forward
    listing the ``grad`` pass differentiates (``trace(stop_gradients=True)``)."""
    if tr.stop_gradients and not isinstance(ins[0], Lit):
        return [tr.emit("stop_gradient", [ins[0]], shape, dtype)]
    return list(ins)


@rule("cond")
def _cond(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    index, *operands = ins
    branches = p["branches"]
    if isinstance(index, Lit):  # known at import time: only that branch
        k = min(max(int(index.value), 0), len(branches) - 1)
        return tr.run(branches[k].jaxpr, branches[k].consts, operands)
    results = [tr.run(b.jaxpr, b.consts, operands) for b in branches]
    if len(branches) == 1:
        return results[0]
    tr.decomposed["cond (every branch, selected)"] += 1
    chosen = []
    for k, (oshape, odtype) in enumerate(outs):
        acc = tr.broadcast_to(results[-1][k], oshape)
        at = tr.broadcast_to(index, oshape)
        for j in reversed(range(len(branches) - 1)):  # index <= 0 takes branch 0
            pred = tr.emit("compare", [at, tr.constant(j, oshape, tr.dtype(index))], oshape,
                           "i1", {"direction": "LE" if j == 0 else "EQ"})
            acc = tr.emit("select", [pred, tr.broadcast_to(results[j][k], oshape), acc],
                          oshape, odtype)
        chosen.append(acc)
    return chosen


def unroll_scan(tr: Translator, ins: list, p: Params, outs: Outs) -> Result:
    """A scan of static length as its steps (rules/loop.py decides which scans)."""
    length = int(p["length"])
    nc, ncarry = int(p["num_consts"]), int(p["num_carry"])
    consts, carry, xs = ins[:nc], list(ins[nc:nc + ncarry]), ins[nc + ncarry:]
    body = p["jaxpr"]
    steps: dict[int, list] = {}
    tr.decomposed["scan (unrolled steps)"] += length
    for i in (reversed(range(length)) if p.get("reverse") else range(length)):
        res = tr.run(body.jaxpr, body.consts, list(consts) + carry
                     + [_step(tr, x, i) for x in xs])
        carry, steps[i] = list(res[:ncarry]), list(res[ncarry:])
    stacked = []
    for k, (oshape, odtype) in enumerate(outs[ncarry:]):
        if length == 0:
            stacked.append(tr.constant(0, oshape, odtype))
            continue
        parts = []
        for i in range(length):
            y = tr.materialize(steps[i][k], oshape[1:])
            parts.append(tr.emit("broadcast_in_dim", [y], (1,) + tuple(oshape[1:]), odtype,
                                 {"dims": list(range(1, len(oshape)))}))
        stacked.append(parts[0] if length == 1 else
                       tr.emit("concatenate", parts, oshape, odtype, {"dim": 0}))
    return carry + stacked


def _step(tr: Translator, x: str | Lit, i: int) -> str:
    """Element i of x along its first dim."""
    x = tr.materialize(x)
    have = list(tr.shapes[x])
    dtype = tr.types[x].dtype
    limit = [i + 1] + have[1:]
    one = slice_to(tr, x, [i] + [0] * (len(have) - 1), limit, [1] * len(have),
                   [1] + have[1:], dtype)
    return reshape_to(tr, one, have[1:], dtype)
