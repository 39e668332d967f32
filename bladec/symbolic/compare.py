"""Ordering two symbolic expressions: ``<``, ``<=``, ``==``, ``>=``, ``>`` or unknown.

The scheduler and the remat pass ask "is this memory impact smaller than that one?" for
expressions whose symbols are only known to lie in ranges.  :func:`compare` answers with an
:class:`Order` that is *sound*: a decided answer holds for every integer assignment of the
symbols inside their ranges.  When no proof is found the answer is ``UNKNOWN`` and the caller
falls back to a heuristic; being wrong would silently pick a worse schedule, being unsure
only costs a tie-break.

Everything works on the canonical difference ``d = a - b`` and proves a lower bound of
``d`` (for ``>``/``>=``) and a lower bound of ``-d`` (for ``<``/``<=``):

1. ``d == 0`` is ``EQ``; a constant ``d`` is decided by its sign.
2. Interval bounds: over the box of ranges a monomial ``m`` lies in ``[min m, max m]`` (the
   max may be infinite), so a positive term contributes at least ``c*min m`` and a negative
   one at least ``c*max m``.
3. Domination: a negative term ``-r*m`` can be paid for by a positive term ``c*m*q`` whose
   monomial is a multiple of ``m``, because ``q >= qmin`` (the product of the low ends of
   q's symbols) gives ``c*m*q - r*m >= m*(c*qmin - r)``.  This is what proves
   ``S1^2 - S1 >= 0`` or ``2*S0*S1 - 3*S1 > 0`` (with ``S0 >= 2``) although the negative
   term is unbounded.  With finite upper ends the mirror image also holds: a positive term
   ``c*m`` pays for ``-r*m*q`` when ``c >= r*qmax``.  Absorption is greedy (not a search),
   and splits coefficients in integers, so no precision is lost and no floats are used.

Ranges assume every low end is ``>= 0`` (shape symbols are sizes); a symbol without a range
is ``[1, None]`` (a positive integer, unbounded).  With a negative low end the monotonicity
that steps 2 and 3 rely on fails, so such ranges are rejected with ``ValueError``.
"""
from __future__ import annotations

import enum
import operator
from typing import Callable, Iterable, Mapping, Optional

from .expr import Monomial, SymbolicExpr, values_at

__all__ = ["Order", "Ranges", "compare", "Comparator", "max_terms", "sample_points",
           "sampled", "may_be_le", "DEFAULT_RANGE"]

Ranges = Mapping[str, tuple[int, Optional[int]]]
"""Per-symbol inclusive ``(lo, hi)``; ``hi`` None means unbounded above; ``lo >= 0``."""

DEFAULT_RANGE: tuple[int, Optional[int]] = (1, None)
_NO_RANGES: dict[str, tuple[int, Optional[int]]] = {}


class Order(enum.Enum):
    """The proved relation of ``a`` to ``b`` (``a <op> b``)."""

    LT = "<"
    LE = "<="
    EQ = "=="
    GE = ">="
    GT = ">"
    UNKNOWN = "unknown"

    def flip(self) -> "Order":
        """The relation of ``b`` to ``a``: swaps the direction, keeps EQ and UNKNOWN."""
        return _FLIP[self]

    @property
    def decided(self) -> bool:
        return self is not Order.UNKNOWN

    @property
    def le(self) -> bool:
        """True when ``a <= b`` is proved (LT, LE or EQ)."""
        return self is Order.LT or self is Order.LE or self is Order.EQ

    @property
    def ge(self) -> bool:
        """True when ``a >= b`` is proved (GT, GE or EQ)."""
        return self is Order.GT or self is Order.GE or self is Order.EQ

    def __str__(self) -> str:
        return self.value


_FLIP = {
    Order.LT: Order.GT, Order.GT: Order.LT,
    Order.LE: Order.GE, Order.GE: Order.LE,
    Order.EQ: Order.EQ, Order.UNKNOWN: Order.UNKNOWN,
}


def _check_ranges(ranges: Ranges) -> None:
    for s, (lo, hi) in ranges.items():
        if lo < 0:
            raise ValueError(f"range of {s} starts below 0 ({lo}); compare assumes sizes >= 0")
        if hi is not None and hi < lo:
            raise ValueError(f"empty range for {s}: [{lo}, {hi}]")


# -- bounds of one monomial ----------------------------------------------------------

def _mono_min(m: Monomial, ranges: Ranges) -> int:
    """Smallest value of ``m`` over the box: every low end is >= 0, so take the lows."""
    v = 1
    for s, p in m:
        r = ranges.get(s)
        lo = 1 if r is None else r[0]
        if lo != 1:
            v *= lo if p == 1 else lo ** p
    return v


def _mono_max(m: Monomial, ranges: Ranges) -> Optional[int]:
    """Largest value of ``m`` over the box, None for +infinity.

    A factor whose range is ``[0, 0]`` makes the monomial identically 0, even when another
    factor is unbounded, so zero wins over infinity.
    """
    v = 1
    inf = False
    for s, p in m:
        r = ranges.get(s)
        if r is None:
            inf = True
            continue
        hi = r[1]
        if hi is None:
            inf = True
        elif hi == 0:
            return 0
        elif hi != 1:
            v *= hi if p == 1 else hi ** p
    return None if inf else v


def _quotient(m2: Monomial, m: Monomial) -> Optional[dict[str, int]]:
    """``m2 / m`` as powers when ``m`` divides ``m2`` and they differ, else None."""
    q = dict(m2)
    for s, p in m:
        p2 = q.get(s, 0)
        if p2 < p:
            return None
        if p2 == p:
            del q[s]
        else:
            q[s] = p2 - p
    return q or None


def _q_min(q: dict[str, int], ranges: Ranges) -> int:
    v = 1
    for s, p in q.items():
        r = ranges.get(s)
        lo = 1 if r is None else r[0]
        v *= lo ** p
    return v


def _q_max(q: dict[str, int], ranges: Ranges) -> Optional[int]:
    v = 1
    for s, p in q.items():
        r = ranges.get(s)
        if r is None or r[1] is None:
            return None
        v *= r[1] ** p
    return v


# -- lower bound of a polynomial -----------------------------------------------------

def _deg(m: Monomial) -> int:
    return sum(p for _, p in m)


def _lower_bound(pos: list[list], neg: list[tuple[Monomial, int]], ranges: Ranges) -> Optional[int]:
    """A lower bound of ``sum(pos) - sum(neg)`` over the box; None means -infinity.

    ``pos`` holds ``[monomial, coefficient]`` pairs with coefficient > 0 (mutated: the
    coefficients are used up by absorption), ``neg`` holds ``(monomial, r)`` with r > 0 for
    the term ``-r*monomial``.  The polynomial is split into pieces whose sum is exactly the
    input; the bound is the sum of each piece's own lower bound.

    The greedy order only depends on the monomials, never on dict order, so ``compare(a, b)``
    and ``compare(b, a)`` run the same proof and ``flip`` symmetry holds.  Negatives with the
    fewest possible absorbers go first, and each takes first from the absorbers that the
    fewest other negatives could use: this finds ``S0*S1 + S1^2 - S0 - S1 >= 0``, which
    taking absorbers in any order would miss.
    """
    lb = 0
    if pos and neg and (len(neg) > 1 or neg[0][0]):
        if len(pos) > 1:
            pos.sort()
        # Multiples of each negative monomial: (pos index, qmin) with qmin > 0.
        cands: list[list[tuple[int, int]]] = []
        demand = [0] * len(pos)
        for m, _ in neg:
            found: list[tuple[int, int]] = []
            if m:
                for j, entry in enumerate(pos):
                    q = _quotient(entry[0], m)
                    if q is not None:
                        qmin = _q_min(q, ranges)
                        if qmin:
                            found.append((j, qmin))
                            demand[j] += 1
            cands.append(found)
        order = range(len(neg))
        if len(neg) > 1:
            order = sorted(order, key=lambda i: (len(cands[i]), -_deg(neg[i][0]), neg[i][0]))
        for i in order:
            m, r = neg[i]
            found = cands[i]
            if len(found) > 1:
                found.sort(key=lambda jq: (demand[jq[0]], -jq[1], jq[0]))
            for j, qmin in found:
                entry = pos[j]
                c = entry[1]
                if not c:
                    continue
                # c*m*q - r*m >= m*(c*qmin - r): take a = ceil(r/qmin) of c if it suffices.
                a = -(-r // qmin)
                if a <= c:
                    entry[1] = c - a
                    lb += _mono_min(m, ranges) * (a * qmin - r)
                    r = 0
                    break
                entry[1] = 0
                r -= c * qmin      # piece c*m*(q - qmin) >= 0
            for j in range(len(found)):
                demand[found[j][0]] -= 1
            if r and m:
                # Mirror image: a positive divisor term c*m' pays for -r*m'*q when q <= qmax.
                for entry in pos:
                    c = entry[1]
                    if not c:
                        continue
                    q = _quotient(m, entry[0])
                    if q is None:
                        continue
                    qmax = _q_max(q, ranges)
                    if qmax is None:
                        continue
                    if not qmax:       # m is identically 0 over the box
                        r = 0
                        break
                    k = min(r, c // qmax)
                    if k:
                        entry[1] = c - k * qmax    # piece k*m'*(qmax - q) >= 0
                        r -= k
                        if not r:
                            break
            if r:
                mmax = _mono_max(m, ranges) if m else 1
                if mmax is None:
                    return None
                lb -= r * mmax
    else:
        for m, r in neg:
            mmax = _mono_max(m, ranges) if m else 1
            if mmax is None:
                return None
            lb -= r * mmax
    for m, c in pos:
        if c:
            lb += c * _mono_min(m, ranges) if m else c
    return lb


def _decide(d: dict[Monomial, int], ranges: Ranges) -> Order:
    """The order of ``d`` against 0, ``d`` a canonical term dict without zero coefficients."""
    if not d:
        return Order.EQ
    pos: list[list] = []
    neg: list[tuple[Monomial, int]] = []
    for m, c in d.items():
        if c > 0:
            pos.append([m, c])
        else:
            neg.append((m, -c))
    if not neg:
        # Lower bound needs only the lows; > 0 settles it without the upper side.
        lb: Optional[int] = 0
        for m, c in pos:
            lb += c * _mono_min(m, ranges) if m else c
        if lb > 0:
            return Order.GT
        ub = _lower_bound([], [(m, c) for m, c in pos], ranges)
        ub = None if ub is None else -ub
    elif not pos:
        ub = 0
        for m, r in neg:
            ub -= r * _mono_min(m, ranges) if m else r
        if ub < 0:
            return Order.LT
        lb = _lower_bound([], neg, ranges)
    else:
        lb = _lower_bound(pos, neg, ranges)
        if lb is not None and lb > 0:
            return Order.GT
        nlb = _lower_bound([[m, r] for m, r in neg], [(m, c) for m, c in d.items() if c > 0],
                           ranges)
        ub = None if nlb is None else -nlb
        if ub is not None and ub < 0:
            return Order.LT
    ge = lb is not None and lb >= 0
    le = ub is not None and ub <= 0
    if ge and le:
        return Order.EQ
    if ge:
        return Order.GE
    if le:
        return Order.LE
    return Order.UNKNOWN


def _lift(x: SymbolicExpr | int) -> SymbolicExpr:
    return x if isinstance(x, SymbolicExpr) else SymbolicExpr.lift(x)


def compare(a: SymbolicExpr | int, b: SymbolicExpr | int, ranges: Ranges | None = None) -> Order:
    """How ``a`` relates to ``b`` for every assignment of the symbols within ``ranges``.

    Sound but incomplete: a decided answer always holds; ``UNKNOWN`` means no proof was
    found (the relation may still hold, or differ between assignments).  Symbols missing
    from ``ranges`` range over ``[1, inf)``; every low end must be ``>= 0``.
    """
    if ranges:
        _check_ranges(ranges)
    else:
        ranges = _NO_RANGES
    return _decide((_lift(a) - _lift(b)).terms, ranges)


class Comparator:
    """:func:`compare` under fixed ranges, with a result cache and decision counters.

    The scheduler compares the same memory impacts over and over; the cache is keyed by the
    canonical difference, so ``(a, b)`` and ``(a + x, b + x)`` share an entry.  ``calls``,
    ``hits``, ``decided`` and ``unknown`` let benchmarks report how often the symbolic
    answer was enough (``decided + unknown == calls``; cache hits are counted in both).
    """

    __slots__ = ("ranges", "use_cache", "cache", "calls", "hits", "decided", "unknown")

    def __init__(self, ranges: Ranges | None = None, *, cache: bool = True) -> None:
        self.ranges: dict[str, tuple[int, Optional[int]]] = dict(ranges or {})
        _check_ranges(self.ranges)
        self.use_cache = cache
        self.cache: dict[frozenset, Order] = {}
        self.calls = 0
        self.hits = 0
        self.decided = 0
        self.unknown = 0

    def __call__(self, a: SymbolicExpr | int, b: SymbolicExpr | int) -> Order:
        self.calls += 1
        d = (_lift(a) - _lift(b)).terms   # (against zero: a's own terms, no copy)
        if self.use_cache:
            key = frozenset(d.items())
            order = self.cache.get(key)
            if order is None:
                order = self.cache[key] = _decide(d, self.ranges)
            else:
                self.hits += 1
        else:
            order = _decide(d, self.ranges)
        if order is Order.UNKNOWN:
            self.unknown += 1
        else:
            self.decided += 1
        return order

    @property
    def decision_rate(self) -> float:
        """Fraction of calls answered with a decided order (1.0 before any call)."""
        return self.decided / self.calls if self.calls else 1.0

    def reset_stats(self) -> None:
        self.calls = self.hits = self.decided = self.unknown = 0


def max_terms(exprs: Iterable[SymbolicExpr],
              cmp: Callable[[SymbolicExpr, SymbolicExpr], Order] | None = None) -> list[SymbolicExpr]:
    """The expressions not provably ``<=`` another one, in input order.

    This is how a peak over expressions that can't all be ordered is represented: as the
    max of the survivors.  Of provably equal expressions the first is kept.  Every dropped
    expression is ``<=`` one that was kept when it was dropped, and ``<=`` is transitive
    pointwise, so the max of the result equals the max of the input for every assignment;
    the result is never empty for a non-empty input.  ``cmp`` defaults to :func:`compare`
    without ranges.

    Most pairs are not ordered (a peak's steps grow and shrink), and a proof attempt
    costs far more than evaluating both sides: each expression is first evaluated at a
    few points of the ranges (:func:`sample_points`), and ``cmp`` is asked only where
    ``a <= b`` holds at every one of them. A sound ``cmp`` never proves what fails at a
    point of the box, so the result is the same, about 3x sooner on the paper-size
    training step's timelines.
    """
    exprs = list(exprs)
    if cmp is None:
        cmp = compare
    values = sampled(exprs, getattr(cmp, "ranges", None) or {})
    le = operator.le
    kept: list[int] = []
    for i, (e, v) in enumerate(zip(exprs, values)):
        # (the loops of ``any`` and a filter written out: the same calls of ``cmp`` in
        # the same order, without a generator per step of a 10^3-step timeline)
        for k in kept:
            if all(map(le, v, values[k])) and cmp(e, exprs[k]).le:
                break
        else:
            kept = [k for k in kept if not (all(map(le, values[k], v)) and cmp(exprs[k], e).le)]
            kept.append(i)
    return [exprs[k] for k in kept]


def sampled(exprs: list[SymbolicExpr], ranges: Ranges) -> list[tuple[int, ...]]:
    """Each expression's values at the same :func:`sample_points` (over all their
    symbols), for :func:`may_be_le`."""
    points = sample_points(frozenset().union(*(e.symbols for e in exprs)), ranges)
    return values_at(exprs, points)


def may_be_le(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether ``a <= b`` holds at every sample point, given their :func:`sampled`
    values: where it does not, no sound comparison can prove it, so asking is wasted."""
    return all(map(operator.le, a, b))


def sample_points(symbols: Iterable[str], ranges: Ranges) -> list[dict[str, int]]:
    """Points of the box of ``ranges`` (a symbol missing from it ranges over ``[1, inf)``)
    at which to evaluate expressions before trying to order them: every symbol at its low
    end, every symbol at its high end (twice the low end plus 64 where unbounded), and
    the low ends with one symbol at its high end. Any point of the box serves: a relation
    proved over the box holds at each of them."""
    lows: dict[str, int] = {}
    highs: dict[str, int] = {}
    for s in sorted(symbols):
        lo, hi = ranges.get(s, DEFAULT_RANGE)
        lows[s] = lo
        highs[s] = hi if hi is not None else 2 * lo + 64
    points = [lows, highs]
    if len(lows) > 1:
        points += [{**lows, s: highs[s]} for s in lows if highs[s] != lows[s]]
    return points
