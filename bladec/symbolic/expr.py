"""SymbolicExpr: a polynomial with integer coefficients over shape symbols.

The canonical form is a mapping from monomial to coefficient, where a monomial is a
sorted tuple of ``(symbol, power)`` pairs and the constant term has the empty monomial.
Two expressions are equal exactly when their canonical forms are equal, so equality and
hashing are cheap; this is the representation the scheduler compares in its inner loop
(sympy is kept for solving and for cross-checks in tests, see DESIGN.md section 3).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Union

Monomial = tuple[tuple[str, int], ...]
ONE: Monomial = ()


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for sym, p in b:
        powers[sym] = powers.get(sym, 0) + p
    return tuple(sorted(powers.items()))


def _poly_mul(a: Mapping[Monomial, int], b: Mapping[Monomial, int]) -> dict[Monomial, int]:
    """The terms of the product, in the order of (a's term, b's term), no zero kept."""
    out: dict[Monomial, int] = {}
    get = out.get
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = _mono_mul(ma, mb)
            out[m] = get(m, 0) + ca * cb
    return {m: c for m, c in out.items() if c}


class SymbolicExpr:
    """An immutable polynomial; build with :func:`sym`, :func:`const` and arithmetic."""

    __slots__ = ("terms", "_hash", "_symbols")

    def __init__(self, terms: Mapping[Monomial, int] | None = None) -> None:
        self.terms: dict[Monomial, int] = {m: c for m, c in (terms or {}).items() if c}
        self._hash: int | None = None
        self._symbols: frozenset[str] | None = None

    # -- construction -------------------------------------------------------------
    @staticmethod
    def _own(terms: dict[Monomial, int]) -> "SymbolicExpr":
        """Wrap ``terms``, a fresh dict with no zero coefficient (arithmetic's fast path:
        no copy, no filter)."""
        e = SymbolicExpr.__new__(SymbolicExpr)
        e.terms = terms
        e._hash = None
        e._symbols = None
        return e

    @staticmethod
    def lift(value: "ExprLike") -> "SymbolicExpr":
        if isinstance(value, SymbolicExpr):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"cannot make a SymbolicExpr of {value!r}")
        return SymbolicExpr._own({ONE: value} if value else {})

    # -- arithmetic ---------------------------------------------------------------
    # The scheduler, the remat pass and the memory walks add and compare sizes in their
    # inner loops (about 10^5 additions on the paper-size training step), so these work
    # on the dicts directly: no intermediate expression, a sum with zero is the other
    # operand itself (expressions are immutable), and the terms come out in the order
    # the plain definitions give (the left operand's, then new monomials), which the
    # printed formulas and the comparisons' proofs follow.
    def __add__(self, other: "ExprLike") -> "SymbolicExpr":
        if not isinstance(other, SymbolicExpr):
            other = SymbolicExpr.lift(other)
        if not other.terms:
            return self
        if not self.terms:
            return other
        out = dict(self.terms)
        get = out.get
        for m, c in other.terms.items():
            v = get(m, 0) + c
            if v:
                out[m] = v
            else:
                del out[m]
        return SymbolicExpr._own(out)

    __radd__ = __add__

    def __neg__(self) -> "SymbolicExpr":
        return SymbolicExpr._own({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: "ExprLike") -> "SymbolicExpr":
        if not isinstance(other, SymbolicExpr):
            other = SymbolicExpr.lift(other)
        if not other.terms:
            return self
        out = dict(self.terms)
        get = out.get
        for m, c in other.terms.items():
            v = get(m, 0) - c
            if v:
                out[m] = v
            else:
                del out[m]
        return SymbolicExpr._own(out)

    def __rsub__(self, other: "ExprLike") -> "SymbolicExpr":
        return SymbolicExpr.lift(other) - self

    def __mul__(self, other: "ExprLike") -> "SymbolicExpr":
        if isinstance(other, int) and not isinstance(other, bool):
            if not other:
                return SymbolicExpr._own({})
            return SymbolicExpr._own({m: c * other for m, c in self.terms.items()})
        other = SymbolicExpr.lift(other)
        return SymbolicExpr._own(_poly_mul(self.terms, other.terms))

    __rmul__ = __mul__

    # -- inspection ---------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and ONE in self.terms)

    @property
    def const(self) -> int:
        """The constant term (the whole value when :attr:`is_const`)."""
        return self.terms.get(ONE, 0)

    @property
    def symbols(self) -> frozenset[str]:
        """The symbols that occur (cached: substitution asks for them on every call)."""
        if self._symbols is None:
            self._symbols = frozenset(s for m in self.terms for s, _ in m)
        return self._symbols

    def degree(self, symbol: str) -> int:
        return max((dict(m).get(symbol, 0) for m in self.terms), default=0)

    def subs(self, mapping: Mapping[str, "SymbolicExpr"]) -> "SymbolicExpr":
        """Replace symbols by expressions (symbols not in ``mapping`` stay)."""
        if not mapping or not (self.symbols & mapping.keys()):
            return self
        total: dict[Monomial, int] = {}
        get = total.get
        for m, c in self.terms.items():
            term: dict[Monomial, int] = {ONE: c}
            rest: list[tuple[str, int]] = []
            for s, p in m:
                e = mapping.get(s)
                if e is None:
                    rest.append((s, p))
                else:
                    for _ in range(p):
                        term = _poly_mul(term, e.terms)
            left = tuple(rest)
            for mt, ct in term.items():  # times the symbols left: no two terms meet
                mm = _mono_mul(mt, left)
                v = get(mm, 0) + ct
                if v:
                    total[mm] = v
                else:
                    del total[mm]
        return SymbolicExpr._own(total)

    def evaluate(self, binding: Mapping[str, int]) -> int:
        """The exact integer value under a binding of every symbol (KeyError if unbound)."""
        total = 0
        for m, c in self.terms.items():
            for s, p in m:
                c *= binding[s] if p == 1 else binding[s] ** p
            total += c
        return total

    # -- identity -----------------------------------------------------------------
    def key(self) -> tuple:
        return tuple(sorted(self.terms.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):
            other = SymbolicExpr.lift(other)
        return isinstance(other, SymbolicExpr) and self.terms == other.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.key())
        return self._hash

    def __repr__(self) -> str:
        return f"SymbolicExpr({self})"

    def __str__(self) -> str:
        return format_expr(self)


ExprLike = Union[SymbolicExpr, int]


def values_at(exprs: Iterable[SymbolicExpr], points: list[Mapping[str, int]]
              ) -> list[tuple[int, ...]]:
    """Each expression's values at the same bindings (:meth:`SymbolicExpr.evaluate` at
    each point), with each monomial's values worked out once for all of them: the steps
    of a timeline, a thousand of them, share a handful of monomials, and comparisons
    sample every step (compare.py), the schedule pass every peak over a grid."""
    mono: dict[Monomial, list[int]] = {}
    zero = [0] * len(points)
    out = []
    for e in exprs:
        totals = zero
        for m, c in e.terms.items():
            at = mono.get(m)
            if at is None:
                at = mono[m] = [_mono_value(m, p) for p in points]
            totals = [t + c * x for t, x in zip(totals, at)]
        out.append(tuple(totals))
    return out


def _mono_value(m: Monomial, binding: Mapping[str, int]) -> int:
    v = 1
    for s, p in m:
        v *= binding[s] if p == 1 else binding[s] ** p
    return v


def sym(name: str) -> SymbolicExpr:
    return SymbolicExpr({((name, 1),): 1})


def const(value: int) -> SymbolicExpr:
    return SymbolicExpr.lift(value)


def product(items: Iterable[ExprLike]) -> SymbolicExpr:
    out = const(1)
    for item in items:
        out = out * item
    return out


def _sym_order(name: str) -> tuple:
    """Order S2 before S10: a symbol's name split into its text and number."""
    stem = name.rstrip("0123456789")
    digits = name[len(stem):]
    return (stem, int(digits) if digits else -1, name)


def _mono_text(m: Monomial) -> str:
    return "*".join(s if p == 1 else f"{s}^{p}" for s, p in sorted(m, key=lambda sp: _sym_order(sp[0])))


def format_expr(expr: SymbolicExpr) -> str:
    """Human-readable canonical text: highest degree first, e.g. ``11008*S1 + 4``."""
    if not expr.terms:
        return "0"
    order = sorted(expr.terms.items(),
                   key=lambda mc: (-sum(p for _, p in mc[0]), [_sym_order(s) for s, _ in mc[0]]))
    parts: list[str] = []
    for i, (m, c) in enumerate(order):
        sign = "-" if c < 0 else "+"
        mag = abs(c)
        body = str(mag) if not m else (_mono_text(m) if mag == 1 else f"{mag}*{_mono_text(m)}")
        if i == 0:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append(f" {sign} {body}")
    return "".join(parts)
