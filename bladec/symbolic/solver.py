"""The solver of the shape analysis: equations between dims reduced by the substitutions
found so far and solved for one symbol where that is exact, a union-find over polynomials
whose representatives are the free symbols (bladec/symbolic/shapes.py states the idea).
Equations no symbol solves are kept as facts and retried; a contradiction is reported
at the op that stated it.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from bladec.errors import BladecError
from bladec.ir import Loc
from bladec.symbolic.expr import SymbolicExpr, format_expr
from bladec.types import MAX_DIM

_INDEX = re.compile(r"S(\d+)$")


@dataclass
class _Equation:
    expr: SymbolicExpr  # == 0
    loc: Loc
    why: str | Callable[[], str]  # a callable is formatted only for an error message
    prefer: str | None = None  # the symbol a declared relation defines
    who: str = "a relation"    # what stated it, for messages: "'reshape'", "relation @S0 = ..."

    @property
    def what(self) -> str:
        return self.why if isinstance(self.why, str) else self.why()


def _without_common_factor(e: SymbolicExpr) -> SymbolicExpr:
    """Divide out the symbols every term shares (they are positive, so = 0 is kept)."""
    monos = list(e.terms)
    common = {s: p for s, p in monos[0]}
    for m in monos[1:]:
        powers = dict(m)
        common = {s: min(p, powers[s]) for s, p in common.items() if s in powers}
        if not common:
            return e
    if not common:
        return e
    out = {}
    for m, c in e.terms.items():
        reduced = tuple((s, p - common.get(s, 0)) for s, p in m if p - common.get(s, 0) > 0)
        out[reduced] = c
    return SymbolicExpr(out)


def _check_integral(e: SymbolicExpr, eq: _Equation) -> None:
    """A linear equation whose symbols' coefficients share a factor the constant does
    not have (2*S1 + 2*S2 = 7) has no solution in integers: a contradiction where it
    is stated, not a listing that analyzes and then refuses every binding."""
    if not all(len(m) <= 1 and all(p == 1 for _, p in m) for m in e.terms):
        return
    const = e.terms.get((), 0)
    factor = math.gcd(*(c for m, c in e.terms.items() if m))
    if const and factor > 1 and const % factor:
        raise BladecError(f"contradiction: {eq.what}: it makes {format_expr(e)} = 0, which "
                          f"no integers solve", eq.loc)


def _fact_key(e: SymbolicExpr) -> tuple:
    """The same equation up to sign."""
    lead = max(e.terms.items(), key=lambda mc: (sum(p for _, p in mc[0]), str(mc[0])))[1]
    return (e if lead > 0 else -e).key()


def _key(name: str) -> tuple:
    m = _INDEX.match(name)
    return (0, int(m.group(1)), name) if m else (1, 0, name)


def _order(item: tuple[str, SymbolicExpr]) -> tuple:
    return _key(item[0])


class _Solver:
    """Collects equations and keeps the substitution map fully reduced.

    ``users`` indexes which solved symbols mention each symbol, so a new solution
    rewrites only the substitutions and facts that contain it (no quadratic rescans).
    """

    def __init__(self, ranges: dict[str, tuple[int, int | None]]) -> None:
        self.subst: dict[str, SymbolicExpr] = {}
        self.users: dict[str, set[str]] = {}
        self.facts: dict[tuple, _Equation] = {}
        self.ranges = ranges
        self.derived_ranges: dict[str, tuple[int, int | None]] = {}
        self.origins: dict[str, Loc] = {}  # solved symbol -> where its equation came from
        self.effective = 0  # equations that said something new
        self.atoms: set[str] | dict = set()  # atom symbols: never eliminated unpreferred

    def add(self, eq: _Equation) -> None:
        e = eq.expr.subs(self.subst)
        if not e.terms:
            return
        self.effective += 1
        e = _without_common_factor(e)  # S0*S1^2 = S1*S2 is S0*S1 = S2: symbols are >= 1
        if e.is_const:
            raise BladecError(f"contradiction: {eq.what}", eq.loc)
        target = self._pick(e, eq.prefer)
        if target is None:
            _check_integral(e, eq)
            key = _fact_key(e)
            if key not in self.facts:
                if any(abs(c) > MAX_DIM for c in e.terms.values()):
                    pos = SymbolicExpr({m: c for m, c in e.terms.items() if c > 0})
                    raise BladecError(f"{eq.who}: this makes {format_expr(pos)} = "
                                      f"{format_expr(pos - e)}, a number above the largest "
                                      f"dimension ({MAX_DIM})", eq.loc)
                self.facts[key] = _Equation(e, eq.loc, eq.why, eq.prefer, eq.who)
            return
        coef = e.terms[((target, 1),)]
        rest = e - SymbolicExpr({((target, 1),): coef})
        value = SymbolicExpr({m: -c // coef for m, c in rest.terms.items()})
        self._check_limit(target, value, eq)
        self._carry_range(target, value, eq)
        step = {target: value}
        for s in self.users.pop(target, ()):
            self.subst[s] = self.subst[s].subs(step)
            self._check_limit(s, self.subst[s], eq)
            for t in self.subst[s].symbols:
                self.users.setdefault(t, set()).add(s)
        self.subst[target] = value
        self.origins[target] = eq.loc
        for t in value.symbols:
            self.users.setdefault(t, set()).add(target)
        touched = [k for k, f in self.facts.items() if target in f.expr.symbols]
        for k in touched:
            self.add(self.facts.pop(k))

    def _check_limit(self, target: str, value: SymbolicExpr, eq: _Equation) -> None:
        """A solved dim has no number above the dimension limit of listings
        (bladec/types.py) in its formula: the graph written back would not parse."""
        if any(abs(c) > MAX_DIM for c in value.terms.values()):
            raise BladecError(f"{eq.who}: this makes {target} = {format_expr(value)}, a number "
                              f"above the largest dimension ({MAX_DIM})", eq.loc)

    def _carry_range(self, target: str, value: SymbolicExpr, eq: _Equation) -> None:
        """Move the eliminated symbol's range onto what it equals, or keep it to check."""
        lo, hi = self.ranges.pop(target, (1, None))
        if value.is_const:
            if value.const < lo or (hi is not None and value.const > hi):
                raise BladecError(f"contradiction: {eq.what} makes {target} = {value.const}, "
                                  f"outside [{lo}, {hi if hi else 'inf'}]", eq.loc)
            return
        self.derived_ranges[target] = (lo, hi)  # checked by bind(): dims are at least 1
        if len(value.terms) == 1:
            (m, c), = value.terms.items()
            if len(m) == 1 and m[0][1] == 1 and c > 0:  # target = c*s
                s = m[0][0]
                lo_s, hi_s = self.ranges.get(s, (1, None))
                lo_s = max(lo_s, -(-lo // c))
                if hi is not None:
                    hi_s = hi // c if hi_s is None else min(hi_s, hi // c)
                if hi_s is not None and hi_s < lo_s:
                    self.narrow(s, lo_s, hi_s, eq.loc, eq.what)
                self.ranges[s] = (lo_s, hi_s)

    def narrow(self, s: str, lo: int, hi: int | None, loc: Loc, what: str) -> None:
        if hi is not None and hi < lo:
            raise BladecError(f"contradiction: {what} leaves {s} no value "
                              f"(it would need {lo} <= {s} <= {hi})", loc)
        self.ranges[s] = (lo, hi)

    def _pick(self, e: SymbolicExpr, prefer: str | None) -> str | None:
        """The symbol to eliminate: linear, alone in its term, dividing everything else.

        A relation's left side is preferred, then the newest symbol, so the symbols a
        user names first stay free (Listing 1 keeps S1 and solves S0 = 12*S1).
        """
        # how many terms each symbol occurs in, and the signs of the coefficients, counted
        # once: asking per candidate made this quadratic in the terms (0.17 s of the
        # paper-size step's analysis went to the ranking alone)
        occurs = Counter(sym for m in e.terms for sym, _ in m)
        choices = []
        for m, c in e.terms.items():
            if len(m) != 1 or m[0][1] != 1:
                continue
            s = m[0][0]
            if occurs[s] != 1:   # linear, and alone in its term: in no other term
                continue
            if s in self.atoms:  # an atom is its operands' function (settled ones are not
                continue         # in the table any more)
            if abs(c) == 1 or all(c2 % c == 0 for m2, c2 in e.terms.items() if m2 != m):
                choices.append(s)
        if not choices:
            return None
        if prefer in choices:
            return prefer
        positive = sum(1 for c2 in e.terms.values() if c2 > 0)
        negative = len(e.terms) - positive

        def rank(s: str) -> tuple:
            # a solution with no negative coefficient can be written as Mul/Add relations:
            # every other term has the other sign (coefficients are never 0)
            representable = positive == 1 if e.terms[((s, 1),)] > 0 else negative == 1
            return (representable, _key(s))
        return max(choices, key=rank)
