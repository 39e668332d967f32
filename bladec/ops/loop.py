"""The loop op: ``scan``, a body region run once per slice of its scanned inputs.

A scan over a length known only at run time (an RNN over a dynamic sequence) can not be
unrolled into the listing, so the listing has a loop op, written as JAX's ``lax.scan``:

    %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> T_h, T_hs body {
      %c = scan.arg() {index = 1} -> T_h         // operand 1 (a carry) as the body sees it
      %x = scan.arg() {index = 2} -> T_x         // one slice of %xs along its dim 0
      ...
      scan.yield(%c2, %y)                        // the next carries, then the step's outputs
    }

The operands are the constants (read by every step), the initial carries, and the scanned
inputs; the trip count is the scanned inputs' common leading dim (so the symbolic
analysis knows it as a symbol, and the stacked outputs have it as their leading dim).
The results are the final carries, then each per-step output stacked along a new dim 0
(``reverse = true`` runs the steps from the last slice to the first and stacks each
output at its step's index, as JAX does).

The body is isolated from the function around it: it reads only its ``scan.arg`` values
and what it defines, so the loop's operands are all it uses and every pass that
reasons about uses (liveness, the scheduler, remat, the runtime's segments) treats the
loop as one op. Its value names are unique in the function, so the analysis and the
runtime know every body value's dims by name.
"""
from __future__ import annotations

from bladec.errors import BladecError
from bladec.ir import Op
from bladec.ops import VARIADIC, OpDef, RuleResult, ShapeCtx, register

BODY = "body"
ARG, YIELD = "scan.arg", "scan.yield"


def parts(op: Op) -> tuple[int, int, int]:
    """(constants, carries, scanned inputs) of a scan's operands."""
    nc, nk = int(op.attrs.get("num_consts", 0)), int(op.attrs.get("num_carry", 0))
    return nc, nk, len(op.operands) - nc - nk


def body_args(op: Op) -> list[Op]:
    return [o for o in op.regions.get(BODY, []) if o.name == ARG]


def body_yield(op: Op) -> Op:
    body = op.regions.get(BODY) or []
    if not body or body[-1].name != YIELD:
        raise BladecError("the body of 'scan' must end with 'scan.yield'", op.loc)
    return body[-1]


def _scan(ctx: ShapeCtx) -> list[RuleResult]:
    op = ctx.op
    nc, nk, nx = parts(op)
    if nc < 0 or nk < 0 or nx < 1:
        raise ctx.fail(f"needs num_consts + num_carry ({nc} + {nk}) operands and at least "
                       f"one scanned input after them; it has {len(op.operands)} operand(s)")
    xs = ctx.operands[nc + nk:]
    for k, x in enumerate(xs):
        if not x:
            raise ctx.fail(f"scanned input {op.operands[nc + nk + k]} is a scalar: it has no "
                           "dim 0 to scan over")
    trips = xs[0][0]
    for k, x in enumerate(xs[1:], 1):
        ctx.equal(x[0], trips, f"the leading dims (trip counts) of {op.operands[nc + nk]} "
                  f"and {op.operands[nc + nk + k]}")
    for arg in body_args(op):
        i = int(arg.attrs["index"])
        if not 0 <= i < len(op.operands):
            raise BladecError(f"'scan.arg' index {i} out of range for {len(op.operands)} "
                              "operand(s)", arg.loc)
        want = ctx.operands[i] if i < nc + nk else ctx.operands[i][1:]
        have = ctx.values[arg.results[0].name]
        what = "slice of" if i >= nc + nk else "operand"
        if len(have) != len(want):
            raise BladecError(f"'scan.arg' {arg.results[0].name} must have rank {len(want)} "
                              f"(the {what} {op.operands[i]}), declared {len(have)}", arg.loc)
        for j, (h, w) in enumerate(zip(have, want)):
            ctx.equal(h, w, f"dim {j} of {arg.results[0].name} and of the {what} "
                      f"{op.operands[i]}")
    out = body_yield(op)
    if len(out.operands) != len(op.results):
        raise BladecError(f"'scan.yield' gives {len(out.operands)} value(s); the scan defines "
                          f"{len(op.results)} ({nk} carries and {len(op.results) - nk} "
                          "stacked outputs)", out.loc)
    if len(op.results) < nk:
        raise ctx.fail(f"defines {len(op.results)} result(s), fewer than its {nk} carries")
    results: list[RuleResult] = []
    for k in range(nk):
        carry = ctx.operands[nc + k]
        new = ctx.values[out.operands[k]]
        if len(new) != len(carry):
            raise BladecError(f"'scan.yield': the next carry {out.operands[k]} has rank "
                              f"{len(new)}, the carry {op.operands[nc + k]} {len(carry)}",
                              out.loc)
        for j, (a, b) in enumerate(zip(new, carry)):
            ctx.equal(a, b, f"dim {j} of the next carry {out.operands[k]} and of the carry "
                      f"{op.operands[nc + k]}")
        results.append((list(carry), ctx.dtypes[nc + k]))
    for y in out.operands[nk:]:
        results.append(([trips] + list(ctx.values[y]), None))
    return results


def _opaque(ctx: ShapeCtx) -> list[RuleResult]:
    """The body's block arguments and terminator: the enclosing scan's rule relates them."""
    return [(None, None) for _ in ctx.op.results]


SCAN = register(OpDef(
    "scan",
    "`%c, %ys = scan(%consts..., %carries..., %xs...) {num_consts = K, num_carry = C, "
    "reverse = false} -> ... body { ... scan.yield(%c2, %y) }`: JAX's `lax.scan` as a loop "
    "op: runs its body once per slice of the scanned inputs along dim 0 (the trip count, "
    "a symbol where the length is dynamic), threading the carries; results are the final "
    "carries, then each per-step output stacked along a new dim 0. The body is isolated: "
    "it reads only its `scan.arg` values.",
    _scan, 1, None, VARIADIC, attrs={"num_consts": "int", "num_carry": "int", "reverse": "bool"},
    # The recompute cost model and region copying work op by op; a loop's work is its
    # body's times a run-time count, so remat evicts around a loop but never re-runs one.
    recomputable=False))
ARG_DEF = register(OpDef(
    ARG,
    "`%x = scan.arg() {index = I} -> T`: inside a `scan` body, operand I of the scan as "
    "one step sees it: a constant or the current carry, or for a scanned input its slice "
    "at the step's index (dim 0 dropped).",
    _opaque, 0, 0, 1, attrs={"index": "int"}, required=frozenset({"index"})))
YIELD_DEF = register(OpDef(
    YIELD,
    "`scan.yield(%carries..., %ys...)`: the last op of a `scan` body: the next carries, "
    "then the step's outputs (stacked by the scan).",
    _opaque, 0, None, 0))


def with_bodies(ops: list[Op]) -> list[Op]:
    """``ops`` with each scan's body ops just before it (nested loops alike): the order
    in which the analysis defines values, and the ops whose results the runtime sizes."""
    out: list[Op] = []
    for op in ops:
        if op.name == SCAN.name:
            out.extend(with_bodies(op.regions.get(BODY, [])))
        out.append(op)
    return out
