"""``schedule``: memory-aware list scheduling on symbolic shapes (paper section 2.2, Alg. 1).

The scheduler walks from the graph outputs towards the inputs. The ready set holds the ops
whose users are all placed; each step places one of them in front of the ops placed so
far. An op's memory impact is what it does going forward: bytes of the results it
allocates minus bytes of the operands whose last use it is (the operands nobody placed
after it needs). The op placed next, i.e. as late as possible, is the one whose impact is
largest by ``compare``: big allocations go late and ops that free a lot go early. When
``compare`` can not order two impacts, the op that shortens tensor lifetimes more by
topology wins. Candidates are visited in a fixed order of their names, so the schedule
depends on the graph alone and not on the listing's order: scheduling is idempotent.

The same scheduler over exact sizes for one binding is the exact-shape oracle
(:func:`exact_order`), what a static-shape compiler would produce.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import exact_sizes, peak_terms, symbolic_timeline
from bladec.analysis.version import corners, log_grid, versions, with_versions
from bladec.errors import BladecError
from bladec.ir import Func, Module, Op
from bladec.passes import IntOption, register
from bladec.symbolic.compare import Order
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

T = TypeVar("T")
_NUM = re.compile(r"(\d+)")
MAX_VERSIONS = 4    # orders kept at most, main included
MIN_GAIN = 0.001    # a version must lower some binding's peak by this fraction


def op_name(op: Op) -> str:
    """What names an op in an order: its first result, else the op's own name."""
    return op.results[0].name if op.results else op.name


def natural_key(name: str) -> tuple:
    """``%2`` before ``%10``: names compared with their numbers as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM.split(name))


@dataclass
class Decision(Generic[T]):
    """One step of the walk: the candidates with their impacts, and why one won."""
    candidates: list[tuple[Op, T]]
    chosen: Op
    how: str  # "compare", "fallback" (compare said unknown), "tie" (equal impacts), "only"


@dataclass
class ListScheduler(Generic[T]):
    func: Func
    size: Callable[[str], T]
    cmp: Callable[[T, T], Order]
    zero: T
    log: bool = False
    decisions: list[Decision[T]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ops = [op for op in self.func.ops if is_compute(op)]
        self.index = {id(op): i for i, op in enumerate(self.ops)}
        self.producer: dict[str, int] = {r.name: i for i, op in enumerate(self.ops)
                                         for r in op.results}
        self.inputs = {a.name for a in self.func.args}
        self.outputs = set(self.func.outputs())
        consumers: list[set[int]] = [set() for _ in self.ops]
        self.users: dict[str, set[int]] = {}
        for i, op in enumerate(self.ops):
            for name in op.operands:
                self.users.setdefault(name, set()).add(i)
                if name in self.producer:
                    consumers[self.producer[name]].add(i)
        self.pending = [len(c) for c in consumers]
        self.depth = self._depths()
        self.names = [natural_key(op_name(op)) for op in self.ops]
        self.live: set[str] = {o for o in self.outputs if o in self.producer}
        self._impact: dict[int, T] = {}

    def _depths(self) -> list[int]:
        """Longest path from the inputs: ops deeper in the graph belong later."""
        depth = [0] * len(self.ops)
        for i, op in enumerate(self.ops):  # the listing is in a topological order
            for name in op.operands:
                if name in self.producer:
                    depth[i] = max(depth[i], depth[self.producer[name]] + 1)
        return depth

    # -- memory impact --------------------------------------------------------------
    def _newly_live(self, op: Op) -> list[str]:
        """Operands whose last use this op would be: nobody placed after it needs them."""
        return [n for n in dict.fromkeys(op.operands)
                if n in self.producer and n not in self.live and n not in self.outputs]

    def impact(self, i: int) -> T:
        """Bytes op i allocates minus bytes it frees, going forward (cached until it changes)."""
        cached = self._impact.get(i)
        if cached is not None:
            return cached
        op = self.ops[i]
        total = self.zero
        for r in op.results:
            if r.name in self.live or r.name in self.outputs:
                total = total + self.size(r.name)
        for name in self._newly_live(op):
            total = total - self.size(name)
        self._impact[i] = total
        return total

    def _lifetime_key(self, i: int) -> tuple:
        op = self.ops[i]
        ended = sum(1 for r in op.results if r.name in self.live)
        return (ended - len(self._newly_live(op)), self.depth[i], self.names[i])

    # -- the walk -------------------------------------------------------------------
    def choose(self, ready: list[int]) -> tuple[int, str]:
        """Algorithm 1's CompareAndChoose folded over the ready set."""
        best, how = ready[0], "only"
        for i in ready[1:]:
            order = self.cmp(self.impact(i), self.impact(best))
            if order in (Order.GT, Order.GE):  # a proved >= is as good as > here
                best, how = i, "compare"
            elif order in (Order.LT, Order.LE):
                how = "compare" if how == "only" else how
            elif order is Order.EQ:
                if self._lifetime_key(i) > self._lifetime_key(best):
                    best = i
                how = "tie" if how in ("only", "tie") else how
            else:
                if self._lifetime_key(i) > self._lifetime_key(best):
                    best = i
                how = "fallback"
        return best, how

    def place(self, i: int) -> None:
        op = self.ops[i]
        touched: set[int] = set()
        for r in op.results:
            self.live.discard(r.name)
        for name in self._newly_live(op):
            self.live.add(name)
            touched.update(self.users.get(name, ()))
        self._impact.pop(i, None)
        for j in touched:
            self._impact.pop(j, None)
        for p in {self.producer[n] for n in op.operands if n in self.producer}:
            self.pending[p] -= 1

    def run(self) -> list[Op]:
        ready = sorted((i for i, n in enumerate(self.pending) if n == 0), key=self._name_key)
        placed: list[int] = []
        while ready:
            best, how = self.choose(ready)
            if self.log:
                self.decisions.append(Decision([(self.ops[i], self.impact(i)) for i in ready],
                                               self.ops[best], how))
            ready.remove(best)
            before = {p for p in set(self.producer.get(n, -1) for n in self.ops[best].operands)
                      if p >= 0}
            self.place(best)
            placed.append(best)
            newly = [p for p in before if self.pending[p] == 0]
            if newly:
                ready = sorted(ready + newly, key=self._name_key)
        placed.reverse()
        return [self.ops[i] for i in placed]

    def _name_key(self, i: int) -> tuple:
        return self.names[i]


def symbolic_scheduler(func: Func, info: ShapeInfo, log: bool = False) -> ListScheduler:
    from bladec.symbolic.expr import const
    return ListScheduler(func, info.nbytes, info.compare, const(0), log)


def _int_cmp(a: int, b: int) -> Order:
    return Order.LT if a < b else Order.GT if a > b else Order.EQ


def exact_order(func: Func, sizes: dict[str, int]) -> list[Op]:
    """The exact-shape oracle: what :class:`SchedulePass` does, with the numbers of one
    binding: the same walk, kept only when it is no worse than the listing's order."""
    from bladec.analysis.memory import exact_peak
    order = ListScheduler(func, sizes.__getitem__, _int_cmp, 0).run()
    plain = [op for op in func.ops if is_compute(op)]
    return order if exact_peak(func, sizes, order) <= exact_peak(func, sizes, plain) else plain


def provably_no_worse(new: list, old: list, info: ShapeInfo) -> bool:
    """Every term of the new peak is at most some term of the old one, for all bindings."""
    ok = (Order.LT, Order.LE, Order.EQ)
    return all(any(info.compare(t, u) in ok for u in old) for t in new)


def reorder(func: Func, order: list[Op]) -> Func:
    return Func(func.name, func.args, order, func.returns, func.loc, func.return_loc)


def bindable(info: ShapeInfo, bindings: list[dict[str, int]]) -> list[dict[str, int]]:
    """The full bindings (every symbol) of those of ``bindings`` that the relations allow.

    Corners and grid points are drawn from the free symbols' declared ranges, but a
    derived symbol has a declared range too, and facts the analysis could not solve
    (S0*S1 = 64) hold only at some points: such points are no binding any run can have,
    and are skipped rather than failing the pass."""
    out = []
    for b in bindings:
        try:
            out.append(info.bind(b))
        except BladecError:
            continue
    return out


def candidate_orders(plain: Func, info: ShapeInfo) -> list[list[Op]]:
    """Orders worth keeping as versions: the exact-size walk at each corner of the
    declared ranges (where sizes that cross inside the ranges are furthest apart)."""
    out = []
    for binding in bindable(info, corners(info)):
        sizes = exact_sizes(info, binding)
        out.append(ListScheduler(plain, sizes.__getitem__, _int_cmp, 0).run())
    return out


def pick_versions(plain: Func, info: ShapeInfo, primary: list[Op],
                  candidates: list[list[Op]], most: int) -> list[list[Op]]:
    """Up to ``most`` orders that, beside ``primary``, lower the peak the most over a grid
    of the declared ranges (greedy set cover by the sum of log peaks).

    An order joins only if it lowers the best peak of some grid point by at least
    :data:`MIN_GAIN`; ties are broken by the order's names, so the result depends on the
    graph and not on the order candidates come in.
    """
    grid = bindable(info, log_grid(info))
    pkey = _order_key(primary)
    unique: dict[tuple, list[Op]] = {}
    for order in candidates:
        unique.setdefault(_order_key(order), order)
    unique.pop(pkey, None)
    if most <= 0 or not unique or not grid:
        return []

    def peaks(order: list[Op]) -> list[float]:
        terms = peak_terms(symbolic_timeline(plain, info, order), info.compare)
        return [math.log(max(1, max(t.evaluate(b) for t in terms))) for b in grid]

    best = peaks(primary)
    pool = {k: peaks(order) for k, order in sorted(unique.items())}
    chosen: list[list[Op]] = []
    while pool and len(chosen) < most:
        gains = {k: (sum(max(0.0, b - v) for b, v in zip(best, vals)),
                     max(b - v for b, v in zip(best, vals))) for k, vals in pool.items()}
        k = max(pool, key=lambda k: gains[k][0])  # the first in name order on ties
        if gains[k][1] < math.log1p(MIN_GAIN):
            break
        best = [min(b, v) for b, v in zip(best, pool.pop(k))]
        chosen.append(unique[k])
    return chosen


def _order_key(order: list[Op]) -> tuple:
    return tuple(map(op_name, order))


@register
class SchedulePass:
    """Reorder the main function's ops to lower peak memory for every binding.

    Main gets the symbolic walk's order when its peak is provably no worse than the
    current one (else it keeps the current order). When orders found at the ends of the
    declared ranges do better for some bindings, up to ``versions - 1`` of them are kept
    as versions (bladec/analysis/version.py) and the runtime picks the lowest peak per
    binding; ``schedule{versions=1}`` gives the single order of the paper's Algorithm 1.
    A remat plan already in the listing is dropped: it describes the order it was made
    for (run ``remat`` after ``schedule``).
    """
    name = "schedule"
    options = {"versions": IntOption(MAX_VERSIONS, 1, 16, "orders kept at most")}
    discards = {"remat": "drops the remat plan (schedule reorders the ops, and remat's "
                         "evict and regenerate points describe the old order)"}

    def __init__(self, versions: int | str = MAX_VERSIONS) -> None:
        self.versions = self.options["versions"].parse(self.name, "versions", str(versions))

    def apply(self, module: Module) -> Module:
        func = module.main
        plain = reorder(func, [op for op in func.ops if is_compute(op)])
        info = analyze_shapes(module)
        order = symbolic_scheduler(plain, info).run()
        old_peak = peak_terms(symbolic_timeline(plain, info), info.compare)
        new_peak = peak_terms(symbolic_timeline(plain, info, order), info.compare)
        primary = order if provably_no_worse(new_peak, old_peak, info) else plain.ops
        others: list[list[Op]] = []
        if self.versions > 1:
            earlier = [[op for op in f.ops if is_compute(op)] for f in versions(module)[1:]]
            candidates = [plain.ops, order, *candidate_orders(plain, info), *earlier]
            others = pick_versions(plain, info, primary, candidates, self.versions - 1)
        return with_versions(module, primary, others)
