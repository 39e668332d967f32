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
        return SymbolicExpr({ONE: value})

    # -- arithmetic ---------------------------------------------------------------
    def __add__(self, other: "ExprLike") -> "SymbolicExpr":
        other = SymbolicExpr.lift(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            v = out.get(m, 0) + c
            if v:
                out[m] = v
            else:
                del out[m]
        return SymbolicExpr._own(out)

    __radd__ = __add__

    def __neg__(self) -> "SymbolicExpr":
        return SymbolicExpr._own({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: "ExprLike") -> "SymbolicExpr":
        return self + (-SymbolicExpr.lift(other))

    def __rsub__(self, other: "ExprLike") -> "SymbolicExpr":
        return SymbolicExpr.lift(other) - self

    def __mul__(self, other: "ExprLike") -> "SymbolicExpr":
        if isinstance(other, int) and not isinstance(other, bool):
            return SymbolicExpr({m: c * other for m, c in self.terms.items()})
        other = SymbolicExpr.lift(other)
        out: dict[Monomial, int] = {}
        for ma, ca in self.terms.items():
            for mb, cb in other.terms.items():
                m = _mono_mul(ma, mb)
                out[m] = out.get(m, 0) + ca * cb
        return SymbolicExpr(out)

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
        total = SymbolicExpr()
        for m, c in self.terms.items():
            term = SymbolicExpr({ONE: c})
            rest: list[tuple[str, int]] = []
            for s, p in m:
                if s in mapping:
                    for _ in range(p):
                        term = term * mapping[s]
                else:
                    rest.append((s, p))
            total = total + term * SymbolicExpr({tuple(rest): 1})
        return total

    def evaluate(self, binding: Mapping[str, int]) -> int:
        """The exact integer value under a binding of every symbol (KeyError if unbound)."""
        total = 0
        for m, c in self.terms.items():
            v = c
            for s, p in m:
                v *= binding[s] ** p
            total += v
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
