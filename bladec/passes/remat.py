"""``remat``: rematerialization points decided from symbolic shapes (paper section 2.3).

At compile time no shape is known, so this pass does not decide what to evict; it
writes down every choice the runtime may make, with what each costs in symbolic bytes:

* after each op, ``remat.evict(...)`` lists the candidates: tensors resident there,
  not used by the next op, used again later (graph inputs belong to the caller);
* before each later use of a candidate, ``remat.regenerate(%t) {reload = true}`` with,
  where one pays off, a ``recompute { ... }`` region: the smallest producer subgraph,
  grown op by op, whose memory impact (bytes of %t minus bytes kept alive only to
  recompute it) is provably positive; a producer with no operands (a constant, an
  iota) joins the subgraph as soon as it is needed, since keeping its value alive
  would cost memory and recomputing it costs nothing it depends on;
* candidates whose eviction can not lower the peak for any binding are pruned: every
  step during which they would be away is provably no higher than memory that no plan
  can avoid (the inputs, operands and results of some op). ``remat.plan`` at the top of
  the function counts points, candidates and pruned ones.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import symbolic_lower_bound, symbolic_timeline
from bladec.analysis.version import map_versions
from bladec.ir import Func, Module, Op
from bladec.ops import REGISTRY
from bladec.passes.pipeline import IntOption, register
from bladec.passes.schedule import natural_key
from bladec.symbolic.compare import Order, may_be_le, sampled
from bladec.symbolic.expr import SymbolicExpr, const
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

MAX_RECOMPUTE_OPS = 8
_ZERO = const(0)


@dataclass
class RecomputeStep:
    """One subgraph of the search: its ops (program order) and memory impact in bytes."""
    ops: list[Op]
    keep: list[str]          # values kept resident only so that the recompute can run
    impact: SymbolicExpr


class RematPlanner:
    def __init__(self, func: Func, info: ShapeInfo, max_ops: int = MAX_RECOMPUTE_OPS) -> None:
        self.func = func
        self.info = info
        self.max_ops = max_ops
        self.ops = [op for op in func.ops if is_compute(op)]
        self.producer = {r.name: i for i, op in enumerate(self.ops) for r in op.results}
        self.inputs = {a.name for a in func.args}
        self.outputs = set(func.outputs())
        self.uses: dict[str, list[int]] = {}
        for i, op in enumerate(self.ops):
            for name in dict.fromkeys(op.operands):
                if name in self.producer:
                    self.uses.setdefault(name, []).append(i)
        self.last_use = {name: uses[-1] for name, uses in self.uses.items()}
        # per op, read once: the search asks them for every site and every growth step
        self._recomputable = [REGISTRY[op.name].recomputable for op in self.ops]
        self._results = [op.result_names for op in self.ops]
        # what the searches ask again and again (exact answers, remembered): the bytes
        # of a set of kept values, and whether one value is provably the larger
        self._kept_bytes: dict[tuple[str, ...], SymbolicExpr] = {}
        self._larger: dict[tuple[str, str], bool] = {}

    # -- recompute search -----------------------------------------------------------
    def _free_at(self, name: str, j: int) -> bool:
        """Resident at op j anyway: a graph input, an output, or used at or after j."""
        if name in self.inputs or name not in self.producer:
            return True
        if name in self.outputs and self.producer[name] < j:
            return True
        return self.last_use.get(name, -1) >= j

    def recompute_search(self, target: str, j: int) -> list[RecomputeStep]:
        """The subgraphs tried for regenerating ``target`` before op j, smallest first."""
        return [RecomputeStep([self.ops[i] for i in members], keep, impact)
                for members, keep, impact in self._search(target, j)]

    def _search(self, target: str, j: int) -> list[tuple[list[int], list[str], SymbolicExpr]]:
        """:meth:`recompute_search` with each subgraph as its op indices (in program
        order): the remat pass runs it for every regeneration site (about 2,000 on the
        paper-size training step) and keeps only the last subgraph's ops."""
        start = self.producer[target]
        if not self._recomputable[start]:
            return []
        producer, ops, recomputable = self.producer, self.ops, self._recomputable
        nbytes, cmp = self.info.nbytes, self.info.compare
        members = {start}
        produced = set(self._results[start])
        trail: list[tuple[list[int], list[str], SymbolicExpr]] = []
        while True:
            keep = self._kept(members, produced, j)
            # a value made from nothing (a constant, an iota) is recomputed along with
            # the rest rather than kept alive for it
            made_from_nothing = [producer[k] for k in keep
                                 if not ops[producer[k]].operands
                                 and recomputable[producer[k]]]
            if made_from_nothing:
                members.update(made_from_nothing)
                for i in made_from_nothing:
                    produced.update(self._results[i])
                keep = self._kept(members, produced, j)
            held = self._kept_bytes.get(tuple(keep))
            if held is None:
                held = self._kept_bytes[tuple(keep)] = sum((nbytes(k) for k in keep), _ZERO)
            impact = nbytes(target) - held
            trail.append((sorted(members), keep, impact))
            if cmp(impact, _ZERO) is Order.GT or len(members) >= self.max_ops:
                return trail
            grow = [k for k in keep if recomputable[producer[k]]]
            if not grow:
                return trail
            # grow towards the costliest input first; names break ties
            biggest = grow[0]
            for k in grow[1:]:
                larger = self._larger.get((k, biggest))
                if larger is None:
                    larger = self._larger[(k, biggest)] = \
                        cmp(nbytes(k), nbytes(biggest)) is Order.GT
                if larger:
                    biggest = k
            members.add(producer[biggest])
            produced.update(self._results[producer[biggest]])

    def _kept(self, members: set[int], produced: set[str], j: int) -> list[str]:
        """The values the subgraph ``members`` reads from outside (``produced``: what it
        makes) that would stay resident only for it, in name order."""
        needed: dict[str, None] = {}
        free_at = self._free_at
        for i in sorted(members):
            for name in self.ops[i].operands:
                if name not in produced and name not in needed and not free_at(name, j):
                    needed[name] = None
        return sorted(needed, key=natural_key)

    def recompute_region(self, target: str, j: int) -> list[Op] | None:
        trail = self._search(target, j)
        if trail and self.info.compare(trail[-1][2], _ZERO) is Order.GT:
            return [self.ops[i] for i in trail[-1][0]]
        return None

    # -- evict points ---------------------------------------------------------------
    def _dominated_steps(self) -> list[bool]:
        """Steps whose memory is provably within memory no eviction plan can avoid."""
        steps = symbolic_timeline(self.func, self.info, self.ops).steps
        floor = symbolic_lower_bound(self.func, self.info)
        values = sampled(steps + floor, self.info.ranges)
        at_floor = values[len(steps):]
        cmp = self.info.compare
        return [any(may_be_le(values[i], at) and cmp(m, f).le
                    for f, at in zip(floor, at_floor)) for i, m in enumerate(steps)]

    def plan(self) -> tuple[dict[int, list[str]], dict[int, int], dict[tuple[str, int], None]]:
        """Candidates after each op, pruned counts, and the (tensor, use) pairs to regenerate."""
        n = len(self.ops)
        dominated = self._dominated_steps()
        open_steps = [0] * (n + 1)  # prefix count of steps that are not dominated
        for k in range(n):
            open_steps[k + 1] = open_steps[k] + (not dominated[k])
        lists: list[list[str]] = [[] for _ in range(n)]
        pruned_from = [0] * (n + 1)  # differences: pruned candidates after each op
        regen: dict[tuple[str, int], None] = {}
        for name in sorted(self.uses, key=natural_key):  # so each list comes out sorted
            uses = self.uses[name]
            points = [self.producer[name]] + uses  # evictable after its definition or a use
            for a, b in zip(points, uses):
                # after op i for a <= i < b - 1 (op i+1 does not use it; op b does); pruned
                # where no step up to op b is open: from the first i + 1 whose prefix
                # count of open steps reaches op b's (the counts never decrease)
                end = b - 1
                if end <= a:
                    continue
                cut = max(a, bisect_left(open_steps, open_steps[b], a + 1, b + 1) - 1)
                for i in range(a, min(cut, end)):
                    lists[i].append(name)
                if cut > a:
                    regen[(name, b)] = None
                if cut < end:
                    pruned_from[cut] += 1
                    pruned_from[end] -= 1
        evict = {i: names for i, names in enumerate(lists) if names}
        pruned: dict[int, int] = {}
        count = 0
        for i in range(n):
            count += pruned_from[i]
            if count:
                pruned[i] = count
        return evict, pruned, regen


def strip_remat(func: Func) -> Func:
    return Func(func.name, func.args, [op for op in func.ops if not op.name.startswith("remat.")],
                func.returns, func.loc, func.return_loc)


def rematerialize(func: Func, info: ShapeInfo, max_ops: int = MAX_RECOMPUTE_OPS) -> Func:
    func = strip_remat(func)
    planner = RematPlanner(func, info, max_ops)
    evict, pruned, regen = planner.plan()
    before: dict[int, list[Op]] = {}
    for name, j in sorted(regen, key=lambda t: (t[1], natural_key(t[0]))):
        region = planner.recompute_region(name, j)
        before.setdefault(j, []).append(Op(
            "remat.regenerate", [name], [], {"reload": True},
            {"recompute": [_copy(op) for op in region]} if region else {}))
    head = [op for op in func.ops if not is_compute(op)]  # schedule.versions stays first
    out: list[Op] = head + [Op("remat.plan", [], [], {
        "evict_points": len(evict), "candidates": sum(map(len, evict.values())),
        "pruned": sum(pruned.values())})]
    for i, op in enumerate(planner.ops):
        out.extend(before.get(i, []))
        out.append(op)
        if i in evict:
            attrs = {"pruned": pruned[i]} if pruned.get(i) else {}
            out.append(Op("remat.evict", list(evict[i]), [], attrs))
    return Func(func.name, func.args, out, func.returns, func.loc, func.return_loc)


def _copy(op: Op) -> Op:
    return Op(op.name, list(op.operands), list(op.results), dict(op.attrs), {}, op.loc,
              op.operand_locs)


@register
class RematPass:
    name = "remat"
    options = {"max_recompute": IntOption(MAX_RECOMPUTE_OPS, 1, 1024,
                                          "ops in a recompute region at most")}

    def __init__(self, max_recompute: int | str = MAX_RECOMPUTE_OPS) -> None:
        self.max_ops = self.options["max_recompute"].parse(self.name, "max_recompute",
                                                           str(max_recompute))

    def apply(self, module: Module) -> Module:
        info = analyze_shapes(module)
        return map_versions(module, lambda f: rematerialize(f, info, self.max_ops))
