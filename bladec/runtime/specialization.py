"""A listing specialized at one binding, its short loops unrolled: what a static trace of
the same step at that shape gives the planner.

The importer unrolls a ``lax.scan`` of a static length of at most ``UNROLL_MAX`` steps
(frontend/rules/loop.py), so that every step's values are ops of their own, which the
scheduler may reorder and remat may evict between steps; a scan over a symbolic length
(an RNN over a sequence of run-time length, as ``bladec.jit`` traces it once the length
changes) stays one loop op, whose operands and stacked results are all held while it
runs. At a binding the trip count is known, so the runtime can plan what a static trace
would: the listing with every dim fixed and each scan of at most ``UNROLL_MAX`` steps
unrolled the importer's way (a slice of each scanned input per step, the body's ops
once per step, the steps' outputs stacked with ``concatenate``), optimized again by the
default pipeline. The executor (executor.py, ``Executor._chosen``) runs it at a binding
where the loop op's plan does not fit a limit, and a refusal names the smaller of the
two smallest limits (issue 37: an LSTM LM over a scan at T=12, B=8, see BENCHMARKS.md).

Only the top-level ``scan`` ops whose bodies hold no region of their own are unrolled;
a ``while`` (its trip count is decided as it runs) and longer scans stay loop ops.
"""
from __future__ import annotations

from bladec.analysis.liveness import is_compute
from bladec.ir import Func, Module, Op, TensorType, Value, fresh_name
from bladec.ops.loop import ARG, BODY, UNROLL_MAX, YIELD, parts


def short_scans(func: Func, shapes: dict[str, tuple[int, ...]],
                most: int = UNROLL_MAX) -> list[Op]:
    """The top-level scans of ``func`` that :func:`specialized` unrolls at ``shapes``:
    a trip count of 1 to ``most`` and a body with no region inside."""
    found = []
    for op in func.ops:
        if op.name != "scan" or any(o.regions for o in op.regions.get(BODY, [])):
            continue
        nc, nk, nx = parts(op)
        if nx and 1 <= shapes[op.operands[nc + nk]][0] <= most:
            found.append(op)
    return found


def specialized(func: Func, shapes: dict[str, tuple[int, ...]],
                most: int = UNROLL_MAX) -> Module | None:
    """``func`` (a listing's main; its remat plan and schedule versions are left out)
    with every value's type fixed at ``shapes`` (each value's dims at one binding) and
    its short scans unrolled; None
    where it has no scan to unroll, or where a scan's final carry is a returned value
    (the function's outputs keep their names)."""
    unroll = {id(op) for op in short_scans(func, shapes, most)}
    returned = set(func.outputs())
    if not unroll or any(r.name in returned for op in func.ops if id(op) in unroll
                         for r in op.results[:parts(op)[1]]):
        return None
    types = func.value_types()
    fixed = Fixed(shapes, {n: t.dtype for n, t in types.items()})
    args = fixed.args(func)
    alias: dict[str, str] = {}
    ops: list[Op] = []
    for op in filter(is_compute, func.ops):   # (no schedule versions: optimized again)
        ops.extend(fixed.unrolled(op, alias) if id(op) in unroll
                   else [fixed.renamed(op, alias)])
    returns = [alias.get(n, n) for n in func.outputs()]
    return Module([Func(func.name, args, ops, returns, func.loc, func.return_loc)])


class Fixed:
    """The values' fixed types, and new names that avoid every name in the function."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str]) -> None:
        self.shapes = shapes
        self._dtypes = dtypes
        self.taken = set(dtypes)

    def type(self, name: str, dtype: str, shape: tuple[int, ...] | None = None
             ) -> TensorType:
        return TensorType(tuple(self.shapes[name] if shape is None else shape), dtype)

    def dtype(self, name: str) -> str:
        return self._dtypes[name]

    def args(self, func: Func) -> list[Value]:
        """``func``'s arguments, their types fixed."""
        return [Value(a.name, self.type(a.name, a.type.dtype), a.donated) for a in func.args]

    def fresh(self, name: str) -> str:
        return fresh_name(name, self.taken, ".")

    def renamed(self, op: Op, alias: dict[str, str], results: list[Value] | None = None
                ) -> Op:
        """A copy of ``op`` (its regions too) reading ``alias``'s names, its results'
        types fixed (or ``results``)."""
        return Op(op.name, [alias.get(n, n) for n in op.operands],
                  results if results is not None else
                  [Value(r.name, self.type(r.name, r.type.dtype)) for r in op.results],
                  dict(op.attrs),
                  {k: [self.renamed(o, alias) for o in region]
                   for k, region in op.regions.items()}, op.loc, list(op.operand_locs))

    def unrolled(self, scan: Op, alias: dict[str, str]) -> list[Op]:
        """The ops of ``scan``'s steps; its final carries join ``alias`` (the names the
        last step gives them), its stacked outputs keep their names."""
        nc, nk, nx = parts(scan)
        n = self.shapes[scan.operands[nc + nk]][0]
        scan = self.renamed(scan, alias)   # (its operands may be an earlier scan's carries)
        body = scan.regions[BODY]
        yields = next(o for o in body if o.name == YIELD).operands
        carry = list(scan.operands[nc:nc + nk])
        out: list[Op] = []
        steps: dict[int, list[str]] = {}
        for i in (reversed(range(n)) if scan.attrs.get("reverse") else range(n)):
            env: dict[str, str] = {}
            for op in body:
                if op.name == ARG:
                    k = int(op.attrs["index"])
                    name = op.results[0].name
                    env[name] = scan.operands[k] if k < nc else carry[k - nc] \
                        if k < nc + nk else self._slice(scan.operands[k], i, out)
                elif op.name != YIELD:
                    results = [Value(self.fresh(f"{r.name}.{i}"),
                                     self.type(r.name, r.type.dtype)) for r in op.results]
                    out.append(self.renamed(op, env, results))
                    env.update({r.name: v.name for r, v in zip(op.results, results)})
            stepped = [env.get(y, y) for y in yields]
            carry, steps[i] = stepped[:nk], stepped[nk:]
        alias.update({r.name: c for r, c in zip(scan.results[:nk], carry)})
        for k, r in enumerate(scan.results[nk:]):
            shape = self.shapes[r.name]
            pieces = []
            for i in range(n):
                name = r.name if n == 1 else self.fresh(f"{r.name}.{i}")
                pieces.append(name)
                out.append(Op("broadcast_in_dim", [steps[i][k]],
                              [Value(name, self.type(r.name, r.type.dtype, (1, *shape[1:])))],
                              {"dims": list(range(1, len(shape)))}))
            if n > 1:
                out.append(self.stacked(r, pieces))
        return out

    def stacked(self, r: Value, pieces: list[str]) -> Op:
        """The stacked value ``r`` (its name and fixed type) joined from ``pieces`` along
        dim 0: steps or chunks of a scan's stacked output."""
        return Op("concatenate", pieces, [Value(r.name, self.type(r.name, r.type.dtype))],
                  {"dim": 0})

    def rows(self, x: str, s: int, e: int, out: list[Op], name: str) -> str:
        """Rows ``s`` to ``e`` of ``x`` (a scan's scanned input: its steps, along dim 0)
        as a new value named after ``name``, its op appended to ``out``."""
        shape = self.shapes[x]
        rows = self.fresh(name)
        out.append(Op("slice", [x], [Value(rows, TensorType((e - s, *shape[1:]),
                                                            self._dtypes[x]))],
                      {"start": [s] + [0] * (len(shape) - 1), "limit": [e, *shape[1:]]}))
        return rows

    def _slice(self, x: str, i: int, out: list[Op]) -> str:
        """Step ``i`` of the scanned input ``x``: its slice along dim 0, that dim dropped."""
        shape = self.shapes[x]
        dtype = self._dtypes[x]
        one = self.rows(x, i, i + 1, out, f"{x}.at{i}")
        step = self.fresh(f"{x}.step{i}")
        out.append(Op("reshape", [one], [Value(step, TensorType(tuple(shape[1:]), dtype))]))
        return step
