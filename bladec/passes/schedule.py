"""``schedule``: memory-aware list scheduling on symbolic shapes (paper section 2.2, Alg. 1).

The scheduler walks from the graph outputs towards the inputs. The ready set holds the ops
whose users are all placed; each step places one of them in front of the ops placed so
far. An op's memory impact is what it does going forward: bytes of the results it
allocates minus bytes of the operands whose last use it is (the operands nobody placed
after it needs). The op placed next, i.e. as late as possible, is the one whose impact is
largest by ``compare``: big allocations go late and ops that free a lot go early. When
``compare`` can not order two impacts, the op that shortens tensor lifetimes more by
topology wins. Candidates meet in a knockout tournament laid out in the order of their
names (a winner tree, so a step costs log n matches per op whose impact changed, not a scan
of the ready set), so the schedule depends on the graph alone and not on the listing's
order: scheduling is idempotent. Where the candidates' order is total (always with exact
sizes) the winner is the candidate that beats every other.

The same scheduler over exact sizes for one binding is the exact-shape oracle
(:func:`exact_order`), what a static-shape compiler would produce.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Generic, Sequence, TypeVar

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import exact_peak, exact_sizes, peak_terms, symbolic_timeline
from bladec.analysis.optimal import optimal_order
from bladec.analysis.polish import polish_order
from bladec.analysis.version import corners, log_grid, no_binding, versions, with_versions
from bladec.ir import Func, Module, Op
from bladec.passes.pipeline import IntOption, register
from bladec.symbolic.compare import Order
from bladec.symbolic.expr import SymbolicExpr, const, values_at
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

T = TypeVar("T")
_NUM = re.compile(r"(\d+)")
MAX_VERSIONS = 4    # orders kept at most, main included
MIN_GAIN = 0.001    # a version must lower some binding's peak by this fraction
EXACT_POINTS = 8    # grid bindings (beside the corners) whose optimal order is a candidate
EXACT_STATES = 5_000    # the optimal search's budget per binding: sets of ops scheduled
EXACT_OPS = 64      # graphs of more ops are not searched (each set costs work per op)
EXACT_MISSES = 2    # bindings whose search exceeds the budget before no more are searched


def op_name(op: Op) -> str:
    """What names an op in an order: its first result, else the op's own name."""
    return op.results[0].name if op.results else op.name


@functools.lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple:
    """``%2`` before ``%10``: names compared with their numbers as numbers (cached: each
    pass sorts the same names, and a scheduler is built once per corner binding)."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM.split(name))


@dataclass
class Decision(Generic[T]):
    """One step of the walk: the candidates with their impacts, and why one won."""
    candidates: list[tuple[Op, T]]
    chosen: Op
    how: str  # "compare", "fallback" (compare said unknown), "tie" (equal impacts), "only"


@dataclass
class Topology:
    """What a walk needs of a function's graph and nothing of its sizes: built once and
    shared by the walks of one pass (the symbolic one and one per corner binding)."""
    ops: list[Op]
    producer: dict[str, int]
    inputs: set[str]
    outputs: set[str]
    users: dict[str, set[int]]
    consumers: list[int]   # how many ops use each op's results
    depth: list[int]       # longest path from the inputs: deeper ops belong later
    names: list[tuple]     # natural_key of each op's name
    rank: list[int]        # each op's position in name order

    @classmethod
    def of(cls, func: Func) -> "Topology":
        ops = [op for op in func.ops if is_compute(op)]
        producer = {r.name: i for i, op in enumerate(ops) for r in op.results}
        consumers: list[set[int]] = [set() for _ in ops]
        users: dict[str, set[int]] = {}
        depth = [0] * len(ops)
        for i, op in enumerate(ops):  # the listing is in a topological order
            for name in op.operands:
                users.setdefault(name, set()).add(i)
                if name in producer:
                    consumers[producer[name]].add(i)
                    depth[i] = max(depth[i], depth[producer[name]] + 1)
        names = [natural_key(op_name(op)) for op in ops]
        rank = [0] * len(ops)
        for r, i in enumerate(sorted(range(len(ops)), key=names.__getitem__)):
            rank[i] = r
        return cls(ops, producer, {a.name for a in func.args}, set(func.outputs()), users,
                   [len(c) for c in consumers], depth, names, rank)


@dataclass
class ListScheduler(Generic[T]):
    func: Func
    size: Callable[[str], T]
    cmp: Callable[[T, T], Order]
    zero: T
    log: bool = False
    decisions: list[Decision[T]] = field(default_factory=list)
    topology: Topology | None = None  # of ``func``; built here when not given

    def __post_init__(self) -> None:
        top = self.topology = self.topology or Topology.of(self.func)
        self.ops = top.ops
        self.producer = top.producer
        self.inputs = top.inputs
        self.outputs = top.outputs
        self.users = top.users
        self.depth = top.depth
        self.names = top.names
        self.rank = top.rank
        self.pending = list(top.consumers)
        self.live: set[str] = {o for o in self.outputs if o in self.producer}
        self._impact: dict[int, T] = {}
        self._key: dict[int, tuple] = {}
        if self.cmp is _int_cmp:   # exact sizes (the oracle, the corner walks): plain ints
            self.beats = self._beats_exact  # type: ignore[method-assign]

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
        """Cached with the impact: both change only when an operand of op i becomes live."""
        cached = self._key.get(i)
        if cached is None:
            op = self.ops[i]
            ended = sum(1 for r in op.results if r.name in self.live)
            cached = self._key[i] = (ended - len(self._newly_live(op)), self.depth[i],
                                     self.names[i])
        return cached

    # -- the walk -------------------------------------------------------------------
    def beats(self, i: int, held: int) -> bool:
        """Whether candidate ``i`` wins over ``held``, which comes before it by name.

        A proved ``>`` or ``>=`` impact wins (as good as ``>`` here); equal impacts and
        impacts ``compare`` can not order go to the op that shortens lifetimes more.
        """
        a, b = self.impact(i), self.impact(held)
        order = Order.EQ if a is b or a == b else self.cmp(a, b)
        if order in (Order.GT, Order.GE):
            return True
        if order in (Order.LT, Order.LE):
            return False
        return self._lifetime_key(i) > self._lifetime_key(held)

    def _beats_exact(self, i: int, held: int) -> bool:
        """:meth:`beats` where impacts are ints ordered by ``_int_cmp``: the same answer
        without an Order per match (four of the schedule pass's five walks)."""
        a, b = self.impact(i), self.impact(held)
        if a != b:
            return a > b
        return self._lifetime_key(i) > self._lifetime_key(held)

    def choose(self, ready: list[int]) -> tuple[int, str]:
        """Algorithm 1's CompareAndChoose over ``ready``: the winner of the same
        tournament :meth:`run` keeps, and how it won."""
        tree = _Tournament(self.rank, self.beats)
        for i in ready:
            tree.set(i)
        best = tree.winner
        return best, self.how(ready, best)

    def how(self, ready: list[int], best: int) -> str:
        """Why ``best`` won: "only", "compare" (impacts ordered), "tie" (all equal), or
        "fallback" (``compare`` could not order some impact, topology decided)."""
        if len(ready) == 1:
            return "only"
        orders = {self.cmp(self.impact(i), self.impact(best)) for i in ready if i != best}
        if Order.UNKNOWN in orders:
            return "fallback"
        return "tie" if orders == {Order.EQ} else "compare"

    def place(self, i: int) -> list[int]:
        """Place op i; return the ops whose impact changed (their cache is dropped)."""
        op = self.ops[i]
        touched: set[int] = set()
        for r in op.results:
            self.live.discard(r.name)
        for name in self._newly_live(op):
            self.live.add(name)
            touched.update(self.users.get(name, ()))
        touched.add(i)
        for j in touched:
            self._impact.pop(j, None)
            self._key.pop(j, None)
        for p in {self.producer[n] for n in op.operands if n in self.producer}:
            self.pending[p] -= 1
        return list(touched)

    def run(self) -> list[Op]:
        """The walk. The ready set is a tournament tree over the ops in name order, so a
        step costs the log of the graph's size per op whose standing changed, not a scan
        of the whole ready set (thousands of independent outputs are all ready at once)."""
        tree = _Tournament(self.rank, self.beats)
        for i, n in enumerate(self.pending):
            if n == 0:
                tree.set(i)
        placed: list[int] = []
        while tree.count:
            best = tree.winner
            if self.log:
                ready = sorted(tree.members(), key=self._name_key)
                self.decisions.append(Decision([(self.ops[i], self.impact(i)) for i in ready],
                                               self.ops[best], self.how(ready, best)))
            tree.clear(best)
            before = {p for p in set(self.producer.get(n, -1) for n in self.ops[best].operands)
                      if p >= 0}
            changed = self.place(best)
            placed.append(best)
            for j in changed:
                if tree.has(j):
                    tree.set(j)  # its impact changed: replay its matches
            for p in sorted(before):
                if self.pending[p] == 0:
                    tree.set(p)
        placed.reverse()
        return [self.ops[i] for i in placed]

    def _name_key(self, i: int) -> tuple:
        return self.names[i]


class _Tournament:
    """A winner tree over op indices: leaf ``rank[i]`` holds op i while it is ready.

    Each inner node keeps the winner of its two halves, the left (earlier name) holding
    against the right, so setting or clearing a leaf replays only the matches on its path
    to the root. Where ``beats`` is a strict total order (always with exact sizes, and
    whenever ``compare`` orders the candidates consistently) the root is the candidate
    that beats every other, the same op a scan of the ready set in name order keeps.
    """

    def __init__(self, rank: list[int], beats: Callable[[int, int], bool]) -> None:
        self.rank = rank
        self.beats = beats
        self.size = 1 << max(0, (len(rank) - 1).bit_length())
        self.node = [-1] * (2 * self.size)
        self.count = 0

    @property
    def winner(self) -> int:
        return self.node[1]

    def has(self, i: int) -> bool:
        return self.node[self.size + self.rank[i]] == i

    def members(self) -> list[int]:
        return [i for i in self.node[self.size:] if i >= 0]

    def set(self, i: int) -> None:
        """Add op i, or replay its matches after its impact changed."""
        k = self.size + self.rank[i]
        if self.node[k] < 0:
            self.count += 1
        self.node[k] = i
        self._replay(k)

    def clear(self, i: int) -> None:
        k = self.size + self.rank[i]
        if self.node[k] >= 0:
            self.count -= 1
        self.node[k] = -1
        self._replay(k)

    def _replay(self, k: int) -> None:
        node, beats = self.node, self.beats
        k //= 2
        while k:
            a, b = node[2 * k], node[2 * k + 1]
            node[k] = a if b < 0 else b if a < 0 else (b if beats(b, a) else a)
            k //= 2


def symbolic_scheduler(func: Func, info: ShapeInfo, log: bool = False,
                       topology: Topology | None = None) -> ListScheduler:
    return ListScheduler(func, info.nbytes, info.compare, const(0), log, topology=topology)


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


def candidate_orders(plain: Func, info: ShapeInfo, topology: Topology | None = None,
                     polish: bool = False) -> list[list[Op]]:
    """Orders worth keeping as versions: the exact-size walk at each corner of the
    declared ranges (where sizes that cross inside the ranges are furthest apart), and
    with ``polish`` each of them after the local search across its peak
    (analysis/polish.py) at that corner, where that lowers it."""
    topology = topology or Topology.of(plain)
    out = []
    for binding in corners(info):
        sizes = exact_sizes(info, binding)
        walk = ListScheduler(plain, sizes.__getitem__, _int_cmp, 0, topology=topology).run()
        out.append(walk)
        if polish:
            better = polish_order(plain, sizes, walk)
            if better != walk:
                out.append(better)
    return out


def exact_orders(plain: Func, info: ShapeInfo, known: Sequence[list[Op]] = (),
                 polish: bool = False) -> list[list[Op]]:
    """The optimal order (analysis/optimal.py, dynamic programming over the sets of ops
    scheduled) at each corner of the declared ranges and at :data:`EXACT_POINTS` bindings
    spread over their grid, where the graph is small enough: none for more than
    :data:`EXACT_OPS` ops, nor once a binding's search exceeds :data:`EXACT_STATES` sets
    (a budget in work, not in seconds, so that the listing written does not depend on
    the machine). The list scheduler's order can be a few percent off the optimum where
    several small values compete (on samples/attention.mlir 4.6% at worst, equal on 15
    of 24 bindings); these orders then become versions where they lower the peak
    (:func:`pick_versions`).

    With ``polish``, at each binding the lowest of ``known`` (orders the pass has) after
    the local search across its peak (analysis/polish.py) bounds the search, which then
    keeps only the sets under its peak and so reaches the optimum of larger graphs within
    the budget; where it still does not, that order stands in for the optimum (and
    after :data:`EXACT_MISSES` such bindings, the others are not searched)."""
    if len(plain.ops) > EXACT_OPS:
        return []
    grid = log_grid(info)
    step = max(1, len(grid) // EXACT_POINTS)
    # the search breaks ties by position: by names, the orders depend on the graph alone
    # and scheduling stays idempotent
    named = reorder(plain, sorted(plain.ops, key=lambda op: natural_key(op_name(op))))
    out: list[list[Op]] = []
    misses = 0
    for binding in corners(info) + grid[step // 2::step][:EXACT_POINTS]:
        sizes = exact_sizes(info, binding)
        start = bound = None
        if polish and known:
            start = polish_order(plain, sizes, min(
                known, key=lambda order: exact_peak(plain, sizes, order)))
            bound = exact_peak(plain, sizes, start)
        found = None if misses >= EXACT_MISSES else \
            optimal_order(named, sizes, EXACT_STATES, at_most=bound)
        if found is not None:
            out.append(found[1])
        elif start is None:
            return []   # too large here: too large at every binding alike
        else:
            misses += 1
            out.append(start)
    return out


def pick_versions(plain: Func, info: ShapeInfo, primary: list[Op],
                  candidates: list[list[Op]], most: int,
                  known: dict[tuple, list[SymbolicExpr]] | None = None) -> list[list[Op]]:
    """Up to ``most`` orders that, beside ``primary``, lower the peak the most over a grid
    of the declared ranges (greedy set cover by the sum of log peaks).

    An order joins only if it lowers the best peak of some grid point by at least
    :data:`MIN_GAIN`; ties are broken by the order's names, so the result depends on the
    graph and not on the order candidates come in. ``known``: the symbolic peak terms
    of orders already evaluated, by :func:`_order_key`.
    """
    grid = [info.bind(b) for b in log_grid(info)]
    if not grid:
        raise no_binding(info)
    pkey = _order_key(primary)
    unique: dict[tuple, list[Op]] = {}
    for order in candidates:
        unique.setdefault(_order_key(order), order)
    unique.pop(pkey, None)
    if most <= 0 or not unique or not grid:
        return []

    def peaks(order: list[Op]) -> list[float]:
        terms = (known or {}).get(_order_key(order))
        if terms is None:
            terms = peak_terms(symbolic_timeline(plain, info, order), info.compare)
        at = values_at(terms, grid)   # per term, its value at each point
        return [math.log(max(1, max(column))) for column in zip(*at)]

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
    options = {"versions": IntOption(MAX_VERSIONS, 1, 16, "orders kept at most"),
               "exact": IntOption(1, 0, 1, "1: optimal orders of small graphs among the "
                                           "candidate versions (exact_orders)"),
               "polish": IntOption(1, 0, 1, "1: the corners' orders after a local search "
                                            "across their peaks among the candidates "
                                            "(analysis/polish.py)")}
    discards = {"remat": "drops the remat plan (schedule reorders the ops, and remat's "
                         "evict and regenerate points describe the old order)"}

    def __init__(self, versions: int | str = MAX_VERSIONS, exact: int | str = 1,
                 polish: int | str = 1) -> None:
        self.versions = self.options["versions"].parse(self.name, "versions", str(versions))
        self.exact = self.options["exact"].parse(self.name, "exact", str(exact))
        self.polish = self.options["polish"].parse(self.name, "polish", str(polish))

    def apply(self, module: Module) -> Module:
        func = module.main
        plain = reorder(func, [op for op in func.ops if is_compute(op)])
        info = analyze_shapes(module)
        topology = Topology.of(plain)
        order = symbolic_scheduler(plain, info, topology=topology).run()
        old_peak = peak_terms(symbolic_timeline(plain, info), info.compare)
        new_peak = peak_terms(symbolic_timeline(plain, info, order), info.compare)
        primary = order if provably_no_worse(new_peak, old_peak, info) else plain.ops
        others: list[list[Op]] = []
        if self.versions > 1:
            earlier = [[op for op in f.ops if is_compute(op)] for f in versions(module)[1:]]
            listed = [plain.ops, order,
                      *candidate_orders(plain, info, topology, bool(self.polish))]
            candidates = [*listed, *(exact_orders(plain, info, listed, bool(self.polish))
                                     if self.exact else []), *earlier]
            known = {_order_key(plain.ops): old_peak, _order_key(order): new_peak}
            others = pick_versions(plain, info, primary, candidates, self.versions - 1,
                                   known)
        return with_versions(module, primary, others)
