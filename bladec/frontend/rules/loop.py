"""The loops: ``lax.scan`` (and ``fori_loop``, which JAX writes as a scan with static
bounds) and ``while`` (``lax.while_loop``, and ``fori_loop`` with bounds known only at
run time), as the listing's loop ops (bladec/ops/loop.py).

Which translation a scan gets:

- a static length of at most ``UNROLL_MAX`` (16) steps is unrolled (``rules/control.py``):
  every step's tensors are then ops of their own, which the scheduler may reorder and
  remat may evict between steps, and a short loop costs the listing few ops;
- a dynamic length (a symbol: an RNN over a sequence of run-time length), or a static one
  longer than that, becomes one ``scan`` op with the body translated once into its
  region: the listing stays the size of one step, and the trip count is the scanned
  inputs' leading dim, so the analysis knows the stacked outputs' dims. The passes treat
  the loop as one op (they evict around it, never inside it); at a binding where that
  does not fit a limit, the runtime rewrites a gradient's forward and backward loops
  into checkpointed chunks (runtime/checkpoint.py), and the ops between them that work
  step by step on the stacked outputs (a language model's loss) into the same chunks
  (runtime/rows.py).

A ``while`` always becomes the ``while`` op (its trip count is decided as it runs; it
stacks nothing, so its memory does not depend on the count). The grad pass has an
adjoint for ``scan``, none for ``while`` (as JAX, which does not reverse-differentiate
``while_loop`` either).

A region is isolated: the loop's constants become operands read with ``loop.arg`` (a
constant known at import time is rebuilt inside instead), and inside a region a dynamic
dim is lent by the region's own arguments, never by a value outside.
"""
from __future__ import annotations

from typing import Any

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.rules.control import unroll_scan
from bladec.frontend.translate import (JaxImportError, Lit, Translator,
                                       is_symbolic, same_dim)
from bladec.ir import Op
from bladec.ops.loop import ARG, BODY, COND, UNROLL_MAX, YIELD


@rule("scan")
def _scan(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    length = p["length"]
    if not is_symbolic(length) and int(length) <= UNROLL_MAX:
        return unroll_scan(tr, ins, p, outs)
    nc, ncarry = int(p["num_consts"]), int(p["num_carry"])
    carry_shapes = [o[0] for o in outs[:ncarry]]
    operands, env, specs = _operands(tr, ins, nc, carry_shapes)
    n_consts = len(operands) - len(ins) + nc
    if len(ins) == nc + ncarry:
        # nothing scanned (a long fori_loop; JAX gives such a scan a static length): the
        # loop's trip count is a scanned input's leading dim, so scan an iota the body
        # does not read
        operands.append(tr.emit("iota", [], (int(length),), "i32", {"dim": 0}))
    trips = [tr.shapes[x][0] for x in operands[n_consts + ncarry:]]
    if any(not same_dim(t, length) for t in trips):
        raise JaxImportError(f"the scanned inputs' leading dims {trips} are not the scan's "
                             f"length {length}")
    body = _region(tr, p["jaxpr"], env, specs,
                   carry_shapes + [o[0][1:] for o in outs[ncarry:]])
    results = tr.emit_multi("scan", operands, outs,
                            {"num_consts": n_consts, "num_carry": ncarry,
                             **({"reverse": True} if p.get("reverse") else {})})
    tr.ops[-1].regions[BODY] = body
    tr.decomposed["scan (loop op)"] += 1
    return results


@rule("while")
def _while(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    """``lax.while_loop`` (and ``fori_loop`` with bounds known only at run time) as the
    listing's ``while`` op: its cond and body translated once each into their regions;
    the constants of both are the loop's constant operands."""
    ncc, nbc = int(p["cond_nconsts"]), int(p["body_nconsts"])
    nc = ncc + nbc
    carry_shapes = [o[0] for o in outs]
    operands, env, specs = _operands(tr, ins, nc, carry_shapes)
    n_consts = len(operands) - len(ins) + nc
    carries = env[nc:]
    cond = _region(tr, p["cond_jaxpr"], env[:ncc] + carries, specs, [()])
    body = _region(tr, p["body_jaxpr"], env[ncc:nc] + carries, specs, carry_shapes)
    results = tr.emit_multi("while", operands, outs, {"num_consts": n_consts})
    tr.ops[-1].regions.update({COND: cond, BODY: body})
    tr.decomposed["while (loop op)"] += 1
    return results


def _operands(tr: Translator, ins: list, nc: int, carry_shapes: list
              ) -> tuple[list[str], list, dict[int, tuple[tuple, str]]]:
    """The loop's operands (constants known at import time are left out: a region
    rebuilds them), each input as a region sees it (the Lit, or the operand's index),
    and per operand index the shape and dtype its ``loop.arg`` has (a scanned input's
    without dim 0)."""
    ncarry = len(carry_shapes)
    operands: list[str] = []
    env: list = []
    specs: dict[int, tuple[tuple, str]] = {}
    for k, x in enumerate(ins):
        if isinstance(x, Lit) and k < nc:
            env.append(x)
            continue
        x = tr.materialize(x, carry_shapes[k - nc] if nc <= k < nc + ncarry else None)
        have = tuple(tr.shapes[x])
        env.append(len(operands))
        specs[len(operands)] = (have if k < nc + ncarry else have[1:], tr.types[x].dtype)
        operands.append(x)
    return operands, env, specs


def _region(tr: Translator, closed: Any, env: list, specs: dict[int, tuple[tuple, str]],
            yield_shapes: list) -> list[Op]:
    """``closed`` (a closed jaxpr) translated into a region of its own: a ``loop.arg``
    for each operand it reads (``env``: a Lit, or an operand index), its results
    yielded. Dynamic dims inside are lent by the region's own arguments."""
    outer = tr.ops, tr.dim_sources, tr.dim_values
    tr.ops, tr.dim_sources, tr.dim_values = [], {}, {}
    try:
        args = {}
        for index in sorted({x for x in env if isinstance(x, int)}):
            ashape, adtype = specs[index]
            args[index] = name = tr.emit(ARG, [], ashape, adtype, {"index": index})
            for j, d in enumerate(ashape):
                if is_symbolic(d):
                    for s in tr.dim(d).symbols:
                        tr.dim_sources.setdefault(s, []).append((name, j))
        res = tr.run(closed.jaxpr, closed.consts,
                     [args[x] if isinstance(x, int) else x for x in env])
        tr.emit_multi(YIELD, [tr.materialize(r, s) for r, s in zip(res, yield_shapes)], [])
        return tr.ops
    finally:
        tr.ops, tr.dim_sources, tr.dim_values = outer


