"""``propagate``: every value's sharding, from the arguments' (DESIGN section 12).

A user shards the inputs (a mesh declaration and sharded argument types: the batch over
``data``, the attention heads and the MLP's hidden units over ``model``) and writes the
ops as on one device; this pass gives every result a sharded type and inserts the
collectives an op needs, the way XLA's SPMD partitioner completes ``in_shardings``:

- each op keeps its operands' splits where it can run on blocks split that way (the
  rules of bladec/ops/collective.py, which the verifier then checks): elementwise ops
  take the most split operand's sharding (a replicated operand is sliced, no
  communication), contractions keep batch and free dims split and leave partial sums
  over split contracting dims, gathers and scatter-adds follow their ids; ops that
  work along some dims (slices, sorts, windows, ``gather_slices`` of
  ``take_along_axis``: bladec/ops/partition.py) have those dims made whole and keep the
  others split, and ``dim_size`` reads the global size of a split value as it is;
- a partial sum stays one through linear ops (add, scale, transpose, broadcast, sum,
  contraction) and is ``all_reduce``\\ d where a non-linear op, or a sum with a value
  that is not partial the same way, first needs the whole: with column-parallel then
  row-parallel weights this is Megatron-LM's one all_reduce per block, found, not
  written;
- a constant, iota or broadcast that a consumer wants split otherwise is emitted again
  at that split (each device makes only its own block) instead of resharded;
- a result type the listing declares with a sharding is a constraint (like
  ``with_sharding_constraint``): the result is resharded to it; outputs are never left
  partial;
- an op with no rule for split values gets replicated operands (always correct, and
  visible in the listing as reshards).

The reshards it writes are ``redistribute``'s to lower. Run it first: ``-p
propagate,redistribute,analyze,schedule,remat``.
"""
from __future__ import annotations

from dataclasses import replace

from bladec.errors import BladecError
from bladec.ir import Func, Mesh, Module, Op, TensorType, Value, fresh_name
from bladec.ops.collective import (
    BLOCKWISE,
    SHARD_RULES,
    STRUCTURAL,
    linear_in_partials,
    result_layout,
)
from bladec.ops.loop import ARG, BODY, COND, LOOPS, REGIONS, YIELD, body_yield, parts
from bladec.ops.partition import DEMANDS as PASSTHROUGH
from bladec.passes.pipeline import register
from bladec.sharding import spec, splits, ways
from bladec.types import Sharding
from bladec.verify import verify

Layout = tuple[Sharding, tuple[str, ...]]  # a sharding and the axes of partial sums
GENERATORS = frozenset({"constant", "iota", "broadcast_in_dim", "broadcast_like"})


class _Unreachable(Exception):
    """No collective turns the value into the wanted layout (partial sums from whole)."""


@register
class PropagatePass:
    name = "propagate"

    def __init__(self, backward: bool = False) -> None:
        # ``backward`` (the grad pass's, not a pipeline option): a collective whose operand
        # arrives split otherwise than it was written for is a reshard to its declared
        # result; in a user's listing that is an error
        self.backward = backward
        self.notes: list[str] = []

    def apply(self, module: Module) -> Module:
        if module.mesh is None:
            return module
        runs = [_Propagation(f, module.mesh, self.backward) for f in module.funcs]
        out = replace(module, funcs=[r.run() for r in runs])
        # why a loop's carry lost its split (the listing shows where: its reshards)
        self.notes = [n for r in runs for n in r.notes]
        try:  # the input's rules were not checked (its results had no shardings yet)
            verify(out)
        except BladecError as exc:
            raise RuntimeError(f"'propagate' wrote a listing that does not verify: "
                               f"{exc.diagnostic}") from exc
        return out


def layout(t: TensorType) -> Layout:
    return spec(t), tuple(sorted(t.partial))


def typed(t: TensorType, lay: Layout) -> TensorType:
    """``t`` split as ``lay``; an unsplit whole value prints as a plain type."""
    if not any(lay[0]) and not lay[1]:
        return t.with_sharding(None)
    return t.with_sharding(lay[0], lay[1])


def _axes(sharding: Sharding) -> set[str]:
    return {a for axes in sharding for a in axes}


def _valid(lay: Layout) -> bool:
    used = [a for axes in lay[0] for a in axes] + list(lay[1])
    return len(used) == len(set(used))


def _without(sharding: Sharding, axes: set[str]) -> Sharding:
    return tuple(tuple(a for a in d if a not in axes) for d in sharding)


def _whole(t: TensorType) -> Layout:
    return ((),) * t.rank, ()


class _Propagation:
    def __init__(self, func: Func, mesh: Mesh, backward: bool = False) -> None:
        self.func, self.mesh, self.backward = func, mesh, backward
        self.types: dict[str, TensorType] = {a.name: a.type for a in func.args}
        self.producer: dict[str, Op] = {}
        self.out: list[Op] = []
        self.converted: dict[tuple[str, Layout], str] = {}
        self.cloned: set[int] = set()  # generators emitted again at another split
        self.taken = set(func.value_types())  # region values' names too
        self.outputs = set(func.outputs())
        self.notes: list[str] = []  # why a loop's carry lost its split

    def run(self) -> Func:
        self.walk()
        # the outputs are pinned (reshards may now follow the last op); a function
        # without 'return' keeps its own location for errors about its outputs
        where = self.func.return_loc if self.func.returns is not None else self.func.loc
        return replace(self.func, ops=self.kept(), returns=self.func.outputs(),
                       return_loc=where)

    def walk(self) -> None:
        for op in self.func.ops:
            if op.name in LOOPS:
                self._loop(op)
            elif op.regions:
                raise BladecError(f"'propagate' runs before 'remat' (it found '{op.name}' "
                                  "with a region)", op.loc)
            elif not op.results:
                self.out.append(op)
            elif op.name in SHARD_RULES:
                self._collective(op)
            else:
                self._op(op)

    def kept(self) -> list[Op]:
        """The ops written, less generators cloned at another split and no longer read."""
        used = {o for op in self.out for o in op.operands}
        return [op for op in self.out if id(op) not in self.cloned
                or any(r.name in used or r.name in self.outputs for r in op.results)]

    # -- emitting --------------------------------------------------------------------

    def _emit(self, op: Op) -> None:
        self.out.append(op)
        for r in op.results:
            self.types[r.name] = r.type
            self.producer[r.name] = op

    def _fresh(self, base: str) -> str:
        return fresh_name(base, self.taken)

    def convert(self, name: str, want: Layout, at: Op, into: str | None = None) -> str:
        """The value ``name`` in layout ``want`` (a new value, or ``into`` if given)."""
        src = self.types[name]
        have = layout(src)
        want = (want[0], tuple(sorted(want[1])))
        if have == want and into is None:
            return name
        key = (name, want)
        if key in self.converted and into is None:
            return self.converted[key]
        target = into or self._fresh(f"{name}.{'r' if not want[1] else 'p'}")
        gen = self.producer.get(name)
        if gen is not None and gen.name in GENERATORS and self._regenerate(gen, want, target):
            self.converted[key] = target
            return target
        if want[1] and want[1] != have[1]:
            raise _Unreachable(name)
        cur = name
        if have[1] and not want[1]:
            done = have[0] == want[0]
            reduced = target if done else self._fresh(f"{name}.sum")
            self._emit(Op("all_reduce", [cur], [Value(reduced, typed(src, (have[0], ())))],
                          loc=at.loc))
            self.converted[(name, (have[0], ()))] = cur = reduced
            if done:
                return cur
        self._emit(Op("reshard", [cur], [Value(target, typed(src, want))], loc=at.loc))
        self.converted[key] = target
        return target

    def _regenerate(self, gen: Op, want: Layout, name: str) -> bool:
        """Emit the generator ``gen`` again with its result split as ``want``, if its
        rule allows (each device makes its block; no communication)."""
        t = gen.results[0].type
        clone = replace(gen, results=[Value(name, t.with_sharding(want[0], want[1]))])
        try:
            have = result_layout(clone, [self.types[o] for o in gen.operands])
        except BladecError:
            return False
        if (have[0], tuple(sorted(have[1]))) != want:
            return False
        clone.results[0] = Value(name, typed(t, want))
        self._emit(clone)
        self.cloned.add(id(gen))
        return True

    # -- loops -----------------------------------------------------------------------

    def _loop(self, op: Op) -> None:
        """A ``scan`` or ``while`` run per device, as XLA's partitioner runs a while loop:
        its body propagated from the carries' splits. A carry keeps its split where the
        body yields it split the same way (a fixed point: no collective per step); where
        the body yields it split otherwise, the initial carry is resharded to that split
        once before the loop if the body then keeps it, and otherwise it is carried whole
        (the body's split changes every step). Scanned inputs keep every split but
        their dim 0 (the steps), constants theirs; nothing enters a region partial."""
        nc, nk, _ = parts(op)
        ins = [self.types[o] for o in op.operands]
        lays = [(spec(t), ()) for t in ins[:nc + nk]] + \
            [(((),) + spec(t)[1:], ()) for t in ins[nc + nk:]]
        tries = [lays[nc:nc + nk]]
        while True:
            carries = tries[-1]
            regions, yielded, nested = self._regions(
                op, lays[:nc] + carries + lays[nc + nk:], carries, len(tries) == 3)
            natural = yielded[:nk]
            if natural == carries or len(tries) == 3:
                break
            if len(tries) == 1 and all(self._fits(t, y) for t, y in zip(ins[nc:], natural)):
                tries.append(natural)  # resharded once at the loop's entry
            else:  # the changing carries whole
                tries.append([c if c == y else _whole(t) for c, y, t in
                              zip(carries, natural, ins[nc:])])
                if len(tries) == 2:
                    tries.append(tries[-1])
        carries = tries[-1]
        self.notes.extend(nested)
        self.notes.extend(
            f"{op.loc}: carry {op.operands[nc + k]} of '{op.name}' " + (
                "resharded before the loop to the split its body keeps" if any(c[0]) else
                "carried whole: the body does not keep its split from step to step")
            for k, (c, first) in enumerate(zip(carries, tries[0])) if c != first)
        final = lays[:nc] + carries + lays[nc + nk:]
        operands = [self.convert(o, w, op) for o, w in zip(op.operands, final)]
        lays_out = carries + [(((),) + y[0], ()) for y in yielded[nk:]]
        results, after = [], []
        for r, lay in zip(op.results, lays_out):
            declared = r.type.sharding
            if declared is None or (declared, tuple(sorted(r.type.partial))) == lay:
                results.append(Value(r.name, typed(r.type, lay), r.donated))
            else:  # a declared split: a constraint, made so right after the loop
                inner = self._fresh(f"{r.name}.s")
                results.append(Value(inner, typed(r.type, lay), r.donated))
                after.append((inner, (declared, tuple(sorted(r.type.partial))), r.name))
        self._emit(replace(op, operands=operands, results=results, regions=regions))
        for inner, want, name in after:
            self.convert(inner, want, op, into=name)

    def _regions(self, op: Op, lays: list[Layout], carries: list[Layout], force: bool
                 ) -> tuple[dict[str, list[Op]], list[Layout], list[str]]:
        """The loop's regions propagated with its operands (as one step sees them) split
        as ``lays``; the layouts the body yields (non-partial); the notes of loops
        inside. ``force``: the next carries are converted to ``carries`` in the body
        (what a step then gathers)."""
        regions: dict[str, list[Op]] = {}
        yielded: list[Layout] = []
        notes: list[str] = []
        for region in REGIONS[op.name]:
            body = op.regions[region]
            args = [a for a in body if a.name == ARG]
            sliced = parts(op)[0] + parts(op)[1]  # a scanned input's slice: dims 1...
            typed_args = [Value(a.results[0].name, typed(a.results[0].type, (
                lays[i][0][1:] if i >= sliced else lays[i][0], ())))
                for a in args for i in [int(a.attrs["index"])]]
            out = body_yield(op, region)
            sub = _Propagation(Func(f"{op.name}.{region}", typed_args,
                                    [o for o in body if o.name not in (ARG, YIELD)],
                                    list(out.operands)), self.mesh, self.backward)
            sub.taken = self.taken
            sub.walk()
            notes += sub.notes
            names = []
            for k, name in enumerate(out.operands):
                have = layout(sub.types[name])
                want = (have[0], ())
                if region == COND:
                    want = _whole(sub.types[name])
                elif force and k < len(carries):
                    want = carries[k]
                names.append(sub.convert(name, want, out))
                if region == BODY:
                    yielded.append((spec(sub.types[names[-1]]), ()))
            arg_ops = [replace(a, results=[v]) for a, v in zip(args, typed_args)]
            regions[region] = arg_ops + sub.kept() + [replace(out, operands=names)]
        return regions, yielded, notes

    # -- ops -------------------------------------------------------------------------

    def _collective(self, op: Op) -> None:
        """A collective the listing wrote: kept, its result retyped from its operand."""
        x = op.operands[0]
        t = self.types[x]
        if op.name == "all_reduce":
            self._emit(replace(op, results=[replace(op.results[0], type=typed(
                op.results[0].type, (spec(t), ())))]))
            return
        if t.partial:
            x = self.convert(x, (spec(t), ()), op)
        result = op.results[0]
        declared = result.type.sharding if self.backward else None
        try:
            rule = SHARD_RULES[op.name](self.mesh, op, spec(t))
        except BladecError:
            if declared is None:
                raise
            rule = ()  # it can not apply to the operand's split: reshard below
        if declared is not None and rule is not None and rule != declared:
            # a cotangent that arrives split otherwise than the collective's adjoint was
            # written for: every collective is the identity on the global array, so a
            # reshard to the declared split (a constraint, as for any op) is the same value
            self.convert(x, (declared, ()), op, into=result.name)
            return
        lay = (rule, ()) if rule is not None else (spec(result.type), ())
        self._emit(replace(op, operands=[x], results=[replace(result, type=typed(
            result.type, lay))]))

    def _op(self, op: Op) -> None:
        ins = [self.types[o] for o in op.operands]
        try:
            wants = _demand(self.mesh, op, ins)
            operands, lay = self._try(op, wants)
        except (BladecError, _Unreachable):
            operands, lay = self._try(op, [_whole(t) for t in ins])
        results = []
        after: list[tuple[str, Layout, str]] = []
        for r in op.results:
            declared = r.type.sharding
            final = (declared, tuple(sorted(r.type.partial))) if declared is not None else \
                (lay[0], () if r.name in self.outputs else lay[1])
            if final == lay:
                results.append(Value(r.name, typed(r.type, lay), r.donated))
            else:  # a constraint, or an output: made so right after the op
                inner = self._fresh(f"{r.name}.{'p' if lay[1] else 's'}")
                results.append(Value(inner, typed(r.type, lay), r.donated))
                after.append((inner, final, r.name))
        self._emit(replace(op, operands=operands, results=results))
        for inner, final, name in after:
            self.convert(inner, final, op, into=name)

    def _try(self, op: Op, wants: list[Layout]) -> tuple[list[str], Layout]:
        """Convert the operands as ``wants`` says, then the results' layout by the rule
        (whole values for an op without one)."""
        mark = len(self.out)
        try:
            operands = [self.convert(o, w, op) for o, w in zip(op.operands, wants)]
            types = [self.types[o] for o in operands]
            if op.name not in BLOCKWISE and op.name not in STRUCTURAL:
                if any(any(spec(t)) or t.partial for t in types):
                    raise BladecError(f"'{op.name}' has no sharding rule", op.loc)
                return operands, _whole(op.results[0].type)
            probe = op
            if op.name in ("reshape", "dynamic_reshape"):  # the rule checks a declared
                # split: offer dim 0's
                out = op.results[0].type
                guess = (spec(types[0])[0],) + ((),) * (out.rank - 1) if out.rank else ()
                probe = replace(op, results=[Value(r.name, r.type.with_sharding(guess))
                                             for r in op.results])
            elif op.name not in ("constant", "iota"):  # new dims of broadcasts: whole
                probe = replace(op, results=[Value(r.name, r.type.with_sharding(None))
                                             for r in op.results])
            want, partial, _ = result_layout(probe, types)
            lay = (want, tuple(sorted(partial)))
            for r in op.results:
                if not self._fits(r.type, lay):
                    raise BladecError(f"{r.name} can not be split {lay}", op.loc)
            return operands, lay
        except (BladecError, _Unreachable):
            self._undo(mark)
            raise

    def _undo(self, mark: int) -> None:
        """Forget the conversions emitted for an attempt that failed."""
        dropped = {r.name for op in self.out[mark:] for r in op.results}
        del self.out[mark:]
        self.converted = {k: v for k, v in self.converted.items() if v not in dropped}

    def _fits(self, t: TensorType, lay: Layout) -> bool:
        return _valid(lay) and all(d is None or d % k == 0
                                   for d, k in zip(t.dims, splits(self.mesh, lay[0])))


# -- what each op wants of its operands -----------------------------------------------

def _demand(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    """Per operand, the layout to bring it to before ``op`` runs on blocks."""
    name = op.name
    if name in BLOCKWISE:
        return _blockwise(mesh, op, ins)
    rule = _DEMANDS.get(name)
    if rule is not None:
        return rule(mesh, op, ins)
    if name in PASSTHROUGH:  # bladec/ops/partition.py: worked-along dims made whole
        return PASSTHROUGH[name](op, ins)
    if name in STRUCTURAL:  # broadcasts, transposes, constants: as they are
        return [layout(t) for t in ins]
    return [_whole(t) for t in ins]


def _blockwise(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    """The most split operand's sharding for all (the first among equals); partial sums
    kept where the op is linear in them, else summed first."""
    target = max((spec(t) for t in ins), key=lambda s: ways(mesh, s))
    parts = [tuple(sorted(t.partial)) for t in ins]
    if not linear_in_partials(op.name, parts) or any(set(p) & _axes(target) for p in parts):
        parts = [()] * len(ins)
    return [(target, p) for p in parts]


def _reduce(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    """Sums over split dims leave partial sums; a max or min needs its dims whole."""
    if op.attrs.get("kind", "sum") == "sum":
        return [layout(ins[0])]
    rank_out = op.results[0].type.rank
    dims = set(op.attrs.get("dims", range(rank_out, ins[0].rank)))
    return [(tuple(() if d in dims else axes for d, axes in enumerate(spec(ins[0]))), ())]


def _dot(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    """Paired (batch and contracting) dims split alike, the more split side winning;
    no axis twice in an operand or in the result; one partial operand at most."""
    a, b = [list(spec(t)) for t in ins]
    pa, pb = (tuple(sorted(t.partial)) for t in ins)
    if op.name == "dot":
        lb, rb, lc, rc = [], [], [len(a) - 1], [0]
    else:
        lb, rb = list(op.attrs.get("lhs_batch", ())), list(op.attrs.get("rhs_batch", ()))
        lc, rc = list(op.attrs["lhs_contract"]), list(op.attrs["rhs_contract"])
    pairs = [*zip(lb, rb), *zip(lc, rc)]
    taken: set[str] = set()
    for i, j in pairs:
        pick = a[i] if ways(mesh, (a[i],)) >= ways(mesh, (b[j],)) else b[j]
        pick = tuple(x for x in pick if x not in taken)
        taken |= set(pick)
        a[i] = b[j] = pick
    for side, paired in ((a, lb + lc), (b, rb + rc)):
        for d in range(len(side)):
            if d not in paired:
                side[d] = tuple(x for x in side[d] if x not in taken)
    kept = taken | {x for d in range(len(a)) if d not in lb + lc for x in a[d]}
    for d in range(len(b)):
        if d not in rb + rc:
            b[d] = tuple(x for x in b[d] if x not in kept)
    if pa and pb:
        pb = ()
    result_axes = kept | _axes(tuple(b))
    if set(pa) & result_axes:
        pa = ()
    if set(pb) & result_axes:
        pb = ()
    return [(tuple(a), pa), (tuple(b), pb)]


def _gather(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    table, ids = ins
    idx = spec(ids)
    rest = _without(spec(table)[1:], _axes(idx))
    part = tuple(sorted(table.partial)) if not set(table.partial) & _axes(idx) else ()
    return [(((),) + rest, part), (idx, ())]


def _scatter_add(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    base, ids, updates = ins
    idx = spec(ids)
    rest = _without(spec(base)[1:], _axes(idx))
    part = tuple(sorted(updates.partial))
    if set(part) & (_axes(idx) | _axes(rest)):
        part = ()
    need = tuple(sorted({*part, *_axes(idx)}))
    return [(((),) + rest, need), (idx, ()), (idx + rest, part)]


def _concatenate(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    d = op.attrs["dim"] % ins[0].rank
    target = max((spec(t) for t in ins), key=lambda s: ways(mesh, s))
    target = target[:d] + ((),) + target[d + 1:]
    parts = [tuple(sorted(t.partial)) for t in ins]
    keep = all(p == parts[0] for p in parts) and not set(parts[0]) & _axes(target)
    return [(target, p if keep else ()) for p in parts]


def _reshape(mesh: Mesh, op: Op, ins: list[TensorType]) -> list[Layout]:
    """Blocks of dim 0 are contiguous pieces of the elements: only dim 0 stays split."""
    s = spec(ins[0])
    return [(s[:1] + ((),) * (len(s) - 1), tuple(sorted(ins[0].partial)))] + \
        [_whole(t) for t in ins[1:]]  # a dynamic_reshape's shape vector


_DEMANDS = {"reduce": _reduce, "dot": _dot, "dot_general": _dot, "gather": _gather,
            "scatter_add": _scatter_add, "concatenate": _concatenate, "reshape": _reshape,
            "dynamic_reshape": _reshape}
