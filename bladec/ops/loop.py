"""The loop op: ``scan``, a body region run once per slice of its scanned inputs.

A scan over a length known only at run time (an RNN over a dynamic sequence) can not be
unrolled into the listing, so the listing has a loop op, written as JAX's ``lax.scan``:

    %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> T_h, T_hs body {
      %c = loop.arg() {index = 1} -> T_h         // operand 1 (a carry) as the body sees it
      %x = loop.arg() {index = 2} -> T_x         // one slice of %xs along its dim 0
      ...
      loop.yield(%c2, %y)                        // the next carries, then the step's outputs
    }

The operands are the constants (read by every step), the initial carries, and the scanned
inputs; the trip count is the scanned inputs' common leading dim (so the symbolic
analysis knows it as a symbol, and the stacked outputs have it as their leading dim).
The results are the final carries, then each per-step output stacked along a new dim 0
(``reverse = true`` runs the steps from the last slice to the first and stacks each
output at its step's index, as JAX does).

The body is isolated from the function around it: it reads only its ``loop.arg`` values
and what it defines, so the loop's operands are all it uses and every pass that
reasons about uses (liveness, the scheduler, remat, the runtime's segments) treats the
loop as one op. Its value names are unique in the function, so the analysis and the
runtime know every body value's dims by name.
"""
from __future__ import annotations

from bladec.adjoint import (Builder, backprop, depends_on, dims_of, make_type, needed_ops,
                            total)
from bladec.errors import BladecError
from bladec.ir import FLOAT_DTYPES, Op, TensorType, Value
from bladec.ops.registry import REGISTRY, VARIADIC, OpDef, RuleResult, ShapeCtx, register
from bladec.sharding import spec
from bladec.types import format_sharding

BODY, COND = "body", "cond"
ARG, YIELD = "loop.arg", "loop.yield"
WHILE_NAME = "while"
# a scan of a static length up to this many steps is unrolled where its length is known:
# by the importer (frontend/rules/loop.py) and by the runtime at a binding
# (runtime/specialization.py), so that a static trace and a specialized one agree
UNROLL_MAX = 16


def parts(op: Op) -> tuple[int, int, int]:
    """(constants, carries, scanned inputs) of a loop's operands (a ``while`` scans
    nothing: every operand after its constants is a carry)."""
    nc = int(op.attrs.get("num_consts", 0))
    if op.name == WHILE_NAME:
        return nc, len(op.operands) - nc, 0
    nk = int(op.attrs.get("num_carry", 0))
    return nc, nk, len(op.operands) - nc - nk


def body_args(op: Op, region: str = BODY) -> list[Op]:
    return [o for o in op.regions.get(region, []) if o.name == ARG]


def body_yield(op: Op, region: str = BODY) -> Op:
    body = op.regions.get(region) or []
    if not body or body[-1].name != YIELD:
        raise BladecError(f"the {region} of '{op.name}' must end with 'loop.yield'", op.loc)
    return body[-1]


def _check_args(ctx: ShapeCtx, region: str, slices_from: int) -> None:
    """Each ``loop.arg`` of ``region`` has its operand's dims (a slice's from
    ``slices_from`` on: operand dims after the first)."""
    op = ctx.op
    for arg in body_args(op, region):
        i = int(arg.attrs["index"])
        if not 0 <= i < len(op.operands):
            raise BladecError(f"'loop.arg' index {i} out of range for {len(op.operands)} "
                              "operand(s)", arg.loc)
        want = ctx.operands[i] if i < slices_from else ctx.operands[i][1:]
        have = ctx.values[arg.results[0].name]
        what = "slice of" if i >= slices_from else "operand"
        if len(have) != len(want):
            raise BladecError(f"'loop.arg' {arg.results[0].name} must have rank {len(want)} "
                              f"(the {what} {op.operands[i]}), declared {len(have)}", arg.loc)
        for j, (h, w) in enumerate(zip(have, want)):
            ctx.equal(h, w, f"dim {j} of {arg.results[0].name} and of the {what} "
                      f"{op.operands[i]}")


def _check_carries(ctx: ShapeCtx, out: Op, nc: int, nk: int) -> list[RuleResult]:
    """The next carries ``out`` yields have the carries' dims; the carries as results."""
    op = ctx.op
    results: list[RuleResult] = []
    for k in range(nk):
        carry = ctx.operands[nc + k]
        new = ctx.values[out.operands[k]]
        if len(new) != len(carry):
            raise BladecError(f"'loop.yield': the next carry {out.operands[k]} has rank "
                              f"{len(new)}, the carry {op.operands[nc + k]} {len(carry)}",
                              out.loc)
        for j, (a, b) in enumerate(zip(new, carry)):
            ctx.equal(a, b, f"dim {j} of the next carry {out.operands[k]} and of the carry "
                      f"{op.operands[nc + k]}")
        results.append((list(carry), ctx.dtypes[nc + k]))
    return results


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
    _check_args(ctx, BODY, nc + nk)
    out = body_yield(op)
    if len(out.operands) != len(op.results):
        raise BladecError(f"'loop.yield' gives {len(out.operands)} value(s); the scan defines "
                          f"{len(op.results)} ({nk} carries and {len(op.results) - nk} "
                          "stacked outputs)", out.loc)
    if len(op.results) < nk:
        raise ctx.fail(f"defines {len(op.results)} result(s), fewer than its {nk} carries")
    results = _check_carries(ctx, out, nc, nk)
    for y in out.operands[nk:]:
        results.append(([trips] + list(ctx.values[y]), None))
    return results


def _scan_adjoint(b: Builder, op: Op, cots: list[str | None]) -> list[str | None]:
    """Reverse mode through a loop: a reverse scan over the carries each step started
    from, which a replay of the forward loop saves (stacked along the trip count). Its
    body replays the step from the saved carry and the step's slices, then runs the
    body's own adjoint rules (bladec/adjoint.py's ``backprop``) from the cotangents of
    the next carries (the backward loop's carries) and of the step's outputs (slices of
    the stacked outputs' cotangents); it yields the cotangents of the step's carries,
    the constants' cotangents summed over the steps, and the slices' cotangents, which
    the backward loop stacks in the forward order."""
    nc, nk, nx = parts(op)
    names = op.operands
    consts, carries, xs = names[:nc], names[nc:nc + nk], names[nc + nk:]
    if any(inner.regions for inner in op.regions[BODY]):
        raise b.fail(op, "a gradient through a loop whose body holds a loop is not "
                     "supported; import the differentiated step instead")
    flo = [b.type(n).dtype in FLOAT_DTYPES for n in names]
    trip = dims_of(b.type(xs[0]))[0]
    stacked = [make_type([trip] + dims_of(b.type(c)), b.type(c).dtype) for c in carries]
    step = body_yield(op)
    # the forward loop again, saving each step's starting carries
    fwd_args = [_arg(b, op, i, _slice_type(b, n) if i >= nc + nk else b.type(n))
                for i, n in enumerate(names)]
    where = {i: a.results[0].name for i, a in enumerate(fwd_args)}
    rename, ops = _replay(b, op, where)
    new_carries = [rename.get(n, n) for n in step.operands[:nk]]
    body = fwd_args + needed_ops(ops, new_carries) + [
        Op(YIELD, new_carries + [where[nc + k] for k in range(nk)], [], loc=op.loc)]
    saved = b.emit_results(SCAN.name, names, [b.type(c) for c in carries] + stacked,
                           dict(op.attrs))[nk:]
    b.ops[-1].regions[BODY] = body
    # the backward loop
    carry_cots = [cots[k] or b.const(0.0, carries[k]) for k in range(nk) if flo[nc + k]]
    accs = [b.const(0.0, c) for i, c in enumerate(consts) if flo[i]]
    y_cots = [(j, g) for j, g in enumerate(cots[nk:]) if g is not None]
    operands = list(consts) + carry_cots + accs + saved + list(xs) + [g for _, g in y_cots]
    n_carry = len(carry_cots) + len(accs)
    outer_ops, b.ops = b.ops, []
    try:
        arg = [b.emit(ARG, [], _slice_type(b, n) if i >= nc + n_carry else b.type(n),
                      {"index": i}) for i, n in enumerate(operands)]
        saved_args = arg[nc + n_carry:nc + n_carry + nk]
        x_args = arg[nc + n_carry + nk:nc + n_carry + nk + nx]
        y_args = arg[nc + n_carry + nk + nx:]
        where = {i: arg[i] for i in range(nc)}
        where.update({nc + k: saved_args[k] for k in range(nk)})
        where.update({nc + nk + k: x_args[k] for k in range(nx)})
        rename, replayed = _replay(b, op, where)
        b.ops.extend(replayed)
        seeds: dict[str, list[str]] = {}
        float_carries = [k for k in range(nk) if flo[nc + k]]
        for slot, k in enumerate(float_carries):
            seeds.setdefault(rename.get(step.operands[k], step.operands[k]), []).append(
                arg[nc + slot])
        for (j, _), y in zip(y_cots, y_args):
            seeds.setdefault(rename.get(step.operands[nk + j], step.operands[nk + j]),
                             []).append(y)
        sources = [where[i] for i in range(len(names)) if flo[i]]
        backprop(b, replayed, seeds, depends_on(replayed, set(sources)),
                 lambda o: REGISTRY[o.name].adjoint, f"the outputs of the loop at {op.loc}")
        out = [total(b, seeds, saved_args[k]) or b.const(0.0, saved_args[k])
               for k in float_carries]
        for slot, i in enumerate(i for i in range(nc) if flo[i]):
            g = total(b, seeds, where[i])
            acc = arg[nc + len(float_carries) + slot]
            out.append(acc if g is None else b.add(acc, g))
        out += [total(b, seeds, x_args[k]) or b.const(0.0, x_args[k])
                for k in range(nx) if flo[nc + nk + k]]
        b.ops.append(Op(YIELD, out, [], loc=op.loc))
        body = b.ops
    finally:
        b.ops = outer_ops
    types = [b.type(n) for n in carry_cots + accs] + \
        [b.type(x) for k, x in enumerate(xs) if flo[nc + nk + k]]
    attrs = {"num_consts": nc, "num_carry": n_carry}
    if not op.attrs.get("reverse", False):
        attrs["reverse"] = True
    res = iter(b.emit_results(SCAN.name, operands, types, attrs))
    b.ops[-1].regions[BODY] = body
    grads: list[str | None] = [None] * len(names)
    for k in range(nk):
        if flo[nc + k]:
            grads[nc + k] = next(res)
    for i in range(nc):
        if flo[i]:
            grads[i] = next(res)
    for k in range(nx):
        if flo[nc + nk + k]:
            grads[nc + nk + k] = next(res)
    return grads


def _slice_type(b: Builder, name: str) -> TensorType:
    t = b.type(name)
    return make_type(dims_of(t)[1:], t.dtype)


def _arg(b: Builder, op: Op, index: int, t: TensorType) -> Op:
    name = b.fresh()
    b.types[name] = t
    return Op(ARG, [], [Value(name, t)], {"index": index}, loc=op.loc)


def _replay(b: Builder, op: Op, where: dict[int, str]) -> tuple[dict[str, str], list[Op]]:
    """The loop's body ops (not its arguments and yield) with fresh names, reading
    ``where[i]`` for the body's argument of operand ``i``; and the renaming."""
    rename = {a.results[0].name: where[int(a.attrs["index"])] for a in body_args(op)}
    out = []
    for inner in op.regions[BODY]:
        if inner.name in (ARG, YIELD):
            continue
        results = []
        for r in inner.results:
            rename[r.name] = b.fresh()
            b.types[rename[r.name]] = r.type
            results.append(Value(rename[r.name], r.type))
        out.append(Op(inner.name, [rename.get(n, n) for n in inner.operands], results,
                      dict(inner.attrs), loc=inner.loc))
    return rename, out


def _opaque(ctx: ShapeCtx) -> list[RuleResult]:
    """The body's block arguments and terminator: the enclosing scan's rule relates them."""
    return [(None, None) for _ in ctx.op.results]


SCAN = register(OpDef(
    "scan",
    "`%c, %ys = scan(%consts..., %carries..., %xs...) {num_consts = K, num_carry = C, "
    "reverse = false} -> ... body { ... loop.yield(%c2, %y) }`: JAX's `lax.scan` as a loop "
    "op: runs its body once per slice of the scanned inputs along dim 0 (the trip count, "
    "a symbol where the length is dynamic), threading the carries; results are the final "
    "carries, then each per-step output stacked along a new dim 0. The body is isolated: "
    "it reads only its `loop.arg` values.",
    _scan, 1, None, VARIADIC, attrs={"num_consts": "int", "num_carry": "int", "reverse": "bool"},
    # The recompute cost model and region copying work op by op; a loop's work is its
    # body's times a run-time count, so remat evicts around a loop but never re-runs one.
    recomputable=False, adjoint=_scan_adjoint))
ARG_DEF = register(OpDef(
    ARG,
    "`%x = loop.arg() {index = I} -> T`: inside a loop's region, operand I of the loop as "
    "one step sees it: a constant or the current carry, or for a scanned input of a `scan` "
    "its slice at the step's index (dim 0 dropped).",
    _opaque, 0, 0, 1, attrs={"index": "int"}, required=frozenset({"index"})))
YIELD_DEF = register(OpDef(
    YIELD,
    "`loop.yield(%values...)`: the last op of a loop's region: of a `scan` body, the next "
    "carries then the step's outputs (stacked by the scan); of a `while` body, the next "
    "carries; of a `while` cond, the condition (an i1 scalar).",
    _opaque, 0, None, 0))


def _while(ctx: ShapeCtx) -> list[RuleResult]:
    op = ctx.op
    nc, nk, _ = parts(op)
    if nc < 0 or nk < 1:
        raise ctx.fail(f"needs num_consts ({nc}) operands and at least one carry after "
                       f"them; it has {len(op.operands)} operand(s)")
    for region in (COND, BODY):
        _check_args(ctx, region, len(op.operands))
    pred = body_yield(op, COND)
    if len(pred.operands) != 1 or ctx.values[pred.operands[0]]:
        raise BladecError("'loop.yield' of the cond region gives one scalar (the "
                          "condition)", pred.loc)
    out = body_yield(op, BODY)
    if len(out.operands) != nk or len(op.results) != nk:
        raise BladecError(f"'loop.yield' of the body gives {len(out.operands)} value(s) and "
                          f"the loop defines {len(op.results)}; it has {nk} carries", out.loc)
    return _check_carries(ctx, out, nc, nk)


WHILE = register(OpDef(
    WHILE_NAME,
    "`%c... = while(%consts..., %carries...) {num_consts = K} -> ... cond { ... "
    "loop.yield(%p) } body { ... loop.yield(%c2...) }`: JAX's `lax.while_loop` (and "
    "`fori_loop` with bounds known only at run time): runs `body` while `cond` yields true "
    "(an i1 scalar), threading the carries; the results are the final carries. Both "
    "regions read only their `loop.arg` values (operand I whole, a constant or the current "
    "carry). The trip count is decided as it runs, so nothing is stacked: the loop's "
    "memory is its carries and its regions' temporaries.",
    _while, 1, None, VARIADIC, attrs={"num_consts": "int"}, recomputable=False))
LOOPS = (SCAN.name, WHILE.name)
REGIONS = {SCAN.name: (BODY,), WHILE.name: (COND, BODY)}


def with_bodies(ops: list[Op]) -> list[Op]:
    """``ops`` with each loop's region ops just before it (nested loops alike): the order
    in which the analysis defines values, and the ops whose results the runtime sizes."""
    out: list[Op] = []
    for op in ops:
        for region in REGIONS.get(op.name, ()):
            out.extend(with_bodies(op.regions.get(region, [])))
        out.append(op)
    return out


def check_loop_sharding(op: Op, operands: list[TensorType], inner: dict[str, TensorType]
                        ) -> None:
    """A loop on a mesh runs per device, its regions on each device's blocks (XLA's
    partitioned while loop): each ``loop.arg`` is split as its operand (a scanned
    input's slice as its dims after the first, which must be whole: every device runs
    every step), nothing enters or leaves a region as partial sums, a carry is split
    alike as it enters, as the body yields it and as the loop's result, a ``scan``'s
    stacked output as its step's value with dim 0 whole, a ``while``'s condition whole.
    ``inner``: the types of the values the regions define."""
    nc, nk, _ = parts(op)

    def fail(msg: str, loc=op.loc) -> BladecError:
        return BladecError(f"'{op.name}' on a mesh: {msg}", loc)
    for i, t in enumerate(operands):
        if t.partial:
            raise fail(f"operand {op.operands[i]} holds partial sums: all_reduce it first")
        if i >= nc + nk and spec(t)[0]:
            raise fail(f"the scanned input {op.operands[i]} is split along dim 0 (the "
                       f"steps) {format_sharding(spec(t))}; every device runs every step")
    for region in REGIONS[op.name]:
        for arg in body_args(op, region):
            i = int(arg.attrs["index"])
            want = spec(operands[i])[1:] if i >= nc + nk else spec(operands[i])
            have = arg.results[0].type
            if spec(have) != want or have.partial:
                raise fail(f"'loop.arg' {arg.results[0].name} is split "
                           f"{format_sharding(spec(have), have.partial)}, its operand "
                           f"{op.operands[i]} {format_sharding(want)}", arg.loc)
        out = body_yield(op, region)
        for k, name in enumerate(out.operands):
            t = inner[name]
            if t.partial:
                raise fail(f"'loop.yield' of partial sums {name}: all_reduce it first",
                           out.loc)
            if region == COND:
                if any(spec(t)):
                    raise fail("the condition must be whole", out.loc)
                continue
            res = op.results[k].type
            want = spec(t) if k < nk else ((),) + spec(t)
            if k < nk and spec(operands[nc + k]) != want:
                raise fail(f"the next carry {name} is split {format_sharding(want)}, the "
                           f"carry {op.operands[nc + k]} "
                           f"{format_sharding(spec(operands[nc + k]))}", out.loc)
            if spec(res) != want or res.partial:
                raise fail(f"result {op.results[k].name} must be split "
                           f"{format_sharding(want)} (as its body yields it)")
