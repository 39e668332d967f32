"""``lax.scan`` (and ``fori_loop``, which JAX writes as a scan) as the listing's loop op.

Which translation a scan gets:

- a static length of at most ``UNROLL_MAX`` (16) steps is unrolled (``rules/control.py``):
  every step's tensors are then ops of their own, which the scheduler may reorder and
  remat may evict between steps, and a short loop costs the listing few ops;
- a dynamic length (a symbol: an RNN over a sequence of run-time length), or a static one
  longer than that, becomes one ``scan`` op (bladec/ops/loop.py) with the body
  translated once into its region: the listing stays the size of one step, and the trip
  count is the scanned inputs' leading dim, so the analysis knows the stacked outputs'
  dims. The passes treat the loop as one op (they evict around it, never inside it).

The body is isolated: the scan's constants become operands read with ``scan.arg`` (a
constant known at import time is rebuilt inside instead), and inside the body a dynamic
dim is lent by the body's own arguments, never by a value outside.
"""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.rules.control import unroll_scan
from bladec.frontend.translate import JaxImportError, Lit, Translator, dim_to_expr, is_symbolic
from bladec.ops.loop import ARG, BODY, YIELD

UNROLL_MAX = 16  # static scans up to this many steps are unrolled (see the module)


@rule("scan")
def _scan(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    length = p["length"]
    if not is_symbolic(length) and int(length) <= UNROLL_MAX:
        return unroll_scan(tr, ins, p, outs)
    nc, ncarry = int(p["num_consts"]), int(p["num_carry"])
    operands: list[str] = []
    body_in: list = []          # what the body jaxpr's inputs are, inside the body
    arg_specs: list[tuple[int, tuple, str]] = []   # (operand index, shape, dtype)
    for k, x in enumerate(ins):
        if isinstance(x, Lit) and k < nc:
            body_in.append(x)   # a constant known now: rebuilt inside, not an operand
            continue
        x = tr.materialize(x, outs[k - nc][0] if nc <= k < nc + ncarry else None)
        have = tuple(tr.shapes[x])
        body_in.append(len(operands))
        arg_specs.append((len(operands), have if k < nc + ncarry else have[1:],
                          tr.types[x].dtype))
        operands.append(x)
    n_consts = sum(1 for k in range(nc) if not isinstance(ins[k], Lit))
    if len(ins) == nc + ncarry:
        # nothing scanned (a long fori_loop; JAX gives such a scan a static length): the
        # loop's trip count is a scanned input's leading dim, so scan an iota the body
        # does not read
        operands.append(tr.emit("iota", [], (int(length),), "i32", {"dim": 0}))
    trips = [tr.shapes[x][0] for x in operands[n_consts + ncarry:]]
    if any(not _same(t, length) for t in trips):
        raise JaxImportError(f"the scanned inputs' leading dims {trips} are not the scan's "
                             f"length {length}")
    body = p["jaxpr"]
    outer = tr.ops, tr.dim_sources, tr.dim_values
    tr.ops, tr.dim_sources, tr.dim_values = [], {}, {}
    try:
        args = {}
        for index, ashape, adtype in arg_specs:
            args[index] = name = tr.emit(ARG, [], ashape, adtype, {"index": index})
            for j, d in enumerate(ashape):
                if is_symbolic(d):
                    for s in dim_to_expr(d, tr.symbols).symbols:
                        tr.dim_sources.setdefault(s, []).append((name, j))
        env = [args[x] if isinstance(x, int) else x for x in body_in]
        res = tr.run(body.jaxpr, body.consts, env)
        yielded = [tr.materialize(r, outs[k][0] if k < ncarry else outs[k][0][1:])
                   for k, r in enumerate(res)]
        tr.emit_multi(YIELD, yielded, [])
        region = tr.ops
    finally:
        tr.ops, tr.dim_sources, tr.dim_values = outer
    results = tr.emit_multi("scan", operands, outs,
                            {"num_consts": n_consts, "num_carry": ncarry,
                             **({"reverse": True} if p.get("reverse") else {})})
    tr.ops[-1].regions[BODY] = region
    tr.decomposed["scan (loop op)"] += 1
    return results


def _same(a: object, b: object) -> bool:
    if is_symbolic(a) != is_symbolic(b):
        return False
    return bool(a == b) if is_symbolic(a) else int(a) == int(b)
