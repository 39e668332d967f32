"""Quotient and bound dims: ``floordiv``, ``ceildiv``, ``mod``, ``min`` and ``max``.

A strided window makes ``floordiv(H - 4, 4) + 1``, a clamped slice ``min(64, P)``, a
capacity ``ceil(1.25*k*T/E)``. None is a polynomial, and the scheduler's comparisons and
memory walks run on polynomials (expr.py). So each such term is an *atom*: a symbol like
any other for the polynomial machinery (with a range derived from its operands' ranges,
so that ``compare`` stays sound over it), that a binding computes from its operands
instead of taking it as given (binding.py). Only three kinds are kept:

- ``FloorDiv(a, b)``; ``ceildiv(a, b) = floordiv(a + b - 1, b)`` and
  ``mod(a, b) = a - b*floordiv(a, b)`` are written with it;
- ``Min(a, b)`` and ``Max(a, b)`` (more operands fold pairwise).

Every atom is put in a canonical form (:func:`canonical`), so that the same quantity
reached two ways is one symbol: terms of the dividend that the divisor divides come out
of the quotient (``floordiv(8*S0 + 5, 4) = 2*S0 + floordiv(5, 4)``), constants fold, a
``min``/``max`` that the ranges decide is the operand it picks, and the operands are
shifted by a constant so that the atom's own lowest value is exactly 1 (symbols are
positive sizes: DESIGN section 3; ``floordiv(S0, 4)`` with ``S0 >= 1`` is written
``floordiv(S0 + 4, 4) - 1``), which keeps every assumption of the polynomial code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from bladec.errors import BladecError
from bladec.symbolic.compare import compare
from bladec.symbolic.expr import SymbolicExpr, const, format_expr, sym

KINDS = ("FloorDiv", "Min", "Max")
# the relation kinds of the listing (DESIGN section 2) that define atoms, with their arity
RELATION_KINDS = {"FloorDiv": 2, "CeilDiv": 2, "Mod": 2, "Min": None, "Max": None}

Range = tuple[int, Optional[int]]
Ranges = Mapping[str, Range]


@dataclass(frozen=True)
class Atom:
    """``kind(args[0], args[1])`` over symbols (and earlier atoms)."""
    kind: str
    args: tuple[SymbolicExpr, SymbolicExpr]

    def key(self) -> tuple:
        return (self.kind, self.args[0].key(), self.args[1].key())

    def symbols(self) -> frozenset[str]:
        return self.args[0].symbols | self.args[1].symbols

    def value(self, binding: Mapping[str, int]) -> int:
        a, b = (e.evaluate(binding) for e in self.args)
        return apply(self.kind, a, b)

    def __str__(self) -> str:
        name = {"FloorDiv": "floordiv", "Min": "min", "Max": "max"}[self.kind]
        return f"{name}({format_expr(self.args[0])}, {format_expr(self.args[1])})"


def apply(kind: str, a: int, b: int) -> int:
    if kind == "FloorDiv":
        if b <= 0:
            raise BladecError(f"floordiv by {b}: the divisor of a dimension must be positive")
        return a // b
    return min(a, b) if kind == "Min" else max(a, b)


def interval(e: SymbolicExpr, ranges: Ranges) -> tuple[float, float]:
    """Lowest and highest value of ``e`` over the box of ``ranges`` (a symbol missing
    from it is ``[1, inf)``); ``-inf``/``inf`` where unbounded. Sound, not tight."""
    lo: float = 0
    hi: float = 0
    for m, c in e.terms.items():
        mlo: float = 1
        mhi: float = 1
        for s, p in m:
            slo, shi = ranges.get(s, (1, None))
            mlo *= slo ** p
            mhi = math.inf if shi is None or mhi == math.inf else mhi * shi ** p
        if c > 0:
            lo += c * mlo
            hi = math.inf if mhi == math.inf else hi + c * mhi
        else:
            lo = -math.inf if mhi == math.inf else lo + c * mhi
            hi += c * mlo
    return lo, hi


def atom_range(atom: Atom, ranges: Ranges) -> Range:
    """The values ``atom`` takes over the box (its operands' intervals)."""
    (alo, ahi), (blo, bhi) = (interval(e, ranges) for e in atom.args)
    if atom.kind == "FloorDiv":   # a negative dividend is lowest over the least divisor
        if alo >= 0:
            lo = alo // bhi if bhi != math.inf else 0
        else:
            lo = alo // blo
        if ahi == math.inf:
            hi = math.inf
        elif ahi >= 0:
            hi = ahi // blo
        else:
            hi = ahi // bhi if bhi != math.inf else -1
    elif atom.kind == "Min":
        lo, hi = min(alo, blo), min(ahi, bhi)
    else:
        lo, hi = max(alo, blo), max(ahi, bhi)
    return int(lo) if lo != -math.inf else -(1 << 62), None if hi == math.inf else int(hi)


Namer = Callable[[Atom], str]


def canonical(kind: str, a: SymbolicExpr, b: SymbolicExpr, ranges: Ranges,
              name_of: Namer) -> SymbolicExpr:
    """``kind(a, b)`` as a polynomial over symbols and at most one atom, in canonical
    form; ``name_of`` gives the symbol of an atom (an existing one for the same key).
    ``kind`` is one of the relation kinds (CeilDiv and Mod rewritten here). A divisor
    that may be below 1, or a dividend with no lower bound, is a BladecError."""
    if kind == "CeilDiv":
        return canonical("FloorDiv", a + b - 1, b, ranges, name_of)
    if kind == "Mod":
        return a - b * canonical("FloorDiv", a, b, ranges, name_of)
    if kind == "FloorDiv":
        return _floordiv(a, b, ranges, name_of)
    if kind not in ("Min", "Max"):
        raise ValueError(f"unknown atom kind {kind}")
    if a.is_const and b.is_const:
        return const(min(a.const, b.const) if kind == "Min" else max(a.const, b.const))
    order = compare(a, b, ranges)
    if order.le:
        return a if kind == "Min" else b
    if order.ge:
        return b if kind == "Min" else a
    lo = atom_range(Atom(kind, (a, b)), ranges)[0]
    if lo <= -(1 << 61):
        raise BladecError(f"{kind.lower()}({format_expr(a)}, {format_expr(b)}) has no lower "
                          "bound (give its symbols ranges)")
    shift = 1 - lo                     # the atom's lowest value made 1: kind(a+k, b+k) - k
    args = sorted((a + shift, b + shift), key=lambda e: e.key())
    return sym(name_of(Atom(kind, (args[0], args[1])))) - shift


def _floordiv(a: SymbolicExpr, b: SymbolicExpr, ranges: Ranges, name_of: Namer
              ) -> SymbolicExpr:
    blo, _ = interval(b, ranges)
    if blo < 1:
        raise BladecError(f"floordiv by {format_expr(b)}, which may be below 1 (a divisor "
                          "of a dimension must be positive)")
    if b.is_const:
        k = b.const
        if k == 1:
            return a
        # terms the divisor divides come out: floordiv(k*q + r, k) = q + floordiv(r, k)
        q = SymbolicExpr({m: c // k for m, c in a.terms.items()})
        r = a - q * k
        if r.is_const:
            return q + r.const // k
        return q + _atom_floordiv(r, b, ranges, name_of)
    if a.is_const and a.const == 0:
        return const(0)
    if a == b:
        return const(1)
    exact = _monomial_quotient(a, b)
    if exact is not None:
        return exact
    return _atom_floordiv(a, b, ranges, name_of)


def _atom_floordiv(a: SymbolicExpr, b: SymbolicExpr, ranges: Ranges, name_of: Namer
                   ) -> SymbolicExpr:
    lo, hi = atom_range(Atom("FloorDiv", (a, b)), ranges)
    if lo <= -(1 << 61):
        raise BladecError(f"floordiv({format_expr(a)}, {format_expr(b)}): the dividend has no "
                          "lower bound (give its symbols ranges)")
    if hi is not None and lo == hi:
        return const(lo)
    shift = 1 - lo                     # floordiv(a + k*b, b) - k, lowest value 1
    return sym(name_of(Atom("FloorDiv", (a + b * shift, b)))) - shift


def _monomial_quotient(a: SymbolicExpr, b: SymbolicExpr) -> SymbolicExpr | None:
    """``a / b`` when ``b`` is one monomial that divides every term of ``a``."""
    if len(b.terms) != 1:
        return None
    (mb, cb), = b.terms.items()
    out = {}
    powers_b = dict(mb)
    for m, c in a.terms.items():
        if c % cb:
            return None
        powers = dict(m)
        for s, p in powers_b.items():
            if powers.get(s, 0) < p:
                return None
            powers[s] -= p
        out[tuple(sorted((s, p) for s, p in powers.items() if p))] = c // cb
    return SymbolicExpr(out)


class AtomTable:
    """The atoms of one analysis (or import) by symbol, and by canonical key, in the
    order they were made (an atom's operands use only symbols and earlier atoms)."""

    def __init__(self, fresh: Callable[[], str]) -> None:
        self.fresh = fresh
        self.defs: dict[str, Atom] = {}
        self.by_key: dict[tuple, str] = {}

    def name_of(self, atom: Atom) -> str:
        name = self.by_key.get(atom.key())
        if name is None:
            name = self.fresh()
            self.by_key[atom.key()] = name
            self.defs[name] = atom
        return name

    def make(self, kind: str, args: list[SymbolicExpr], ranges: Ranges,
             name: str | None = None) -> SymbolicExpr:
        """``kind`` of ``args`` (Min/Max fold over two or more); ``name``: the symbol to
        give the atom if one is made and the result is that atom alone."""
        before = set(self.defs)
        out = args[0]
        for nxt in args[1:]:
            out = canonical(kind, out, nxt, ranges, self.name_of)
        last = next(reversed(self.defs), None)
        if name is not None and last is not None and last not in before and out == sym(last):
            atom = self.defs.pop(last)          # nothing refers to the newest atom yet
            self.defs[name] = atom
            self.by_key[atom.key()] = name
            out = sym(name)
        if isinstance(ranges, dict):   # a new atom's range, for the atoms made over it
            for new in self.defs:
                if new not in before and new not in ranges:
                    lo, hi = atom_range(self.defs[new], ranges)
                    ranges[new] = (max(lo, 1), hi)
        return out

    def drop(self, name: str) -> None:
        atom = self.defs.pop(name)
        self.by_key.pop(atom.key(), None)

    def ranges(self, ranges: Ranges) -> dict[str, Range]:
        """Each atom's range from its operands', in order (atoms over atoms)."""
        box = dict(ranges)
        out = {}
        for name, atom in self.defs.items():
            lo, hi = atom_range(atom, box)
            slo, shi = box.get(name, (1, None))
            lo, hi = max(lo, slo, 1), hi if shi is None else (shi if hi is None else min(hi, shi))
            out[name] = box[name] = (lo, hi)
        return out

    def settle(self, subst: Callable[[SymbolicExpr], SymbolicExpr], ranges: Ranges,
               solved: Callable[[str], bool], equate: Callable[[str, SymbolicExpr], None]
               ) -> None:
        """Rewrite every atom over the final substitutions until none changes: an atom
        whose operands became such that it folds (constants, an exact quotient, a
        decided ``min``), or that now equals another, is dropped and ``equate(name,
        value)`` states ``name = value`` (the solver then eliminates ``name``). An atom
        some other relation solved keeps its definition, as a check for bindings."""
        changed = True
        while changed:
            changed = False
            for name in list(self.defs):
                atom = self.defs.get(name)
                if atom is None:
                    continue
                args = (subst(atom.args[0]), subst(atom.args[1]))
                if solved(name):
                    if args != atom.args:
                        self.drop(name)
                        self.defs[name] = Atom(atom.kind, args)
                        self.by_key.setdefault(self.defs[name].key(), name)
                    continue
                self.drop(name)
                if any(name in e.symbols for e in args):  # an operand solved over it
                    if _folds_to(atom.kind, args, ranges, sym(name)):
                        continue                        # now says nothing: name = name
                    self.defs[name] = Atom(atom.kind, args)
                    self.by_key.setdefault(self.defs[name].key(), name)
                    continue
                value = self.make(atom.kind, list(args), ranges, name=name)
                if value != sym(name):
                    equate(name, value)
                    changed = True


class _NeedsAtom(Exception):
    pass


def _folds_to(kind: str, args: tuple[SymbolicExpr, SymbolicExpr], ranges: Ranges,
              want: SymbolicExpr) -> bool:
    """Whether ``kind(args)`` is ``want`` without any atom."""
    def refuse(atom: Atom) -> str:
        raise _NeedsAtom
    try:
        return canonical(kind, args[0], args[1], ranges, refuse) == want
    except (_NeedsAtom, BladecError):
        return False


def relation_value(table: AtomTable, kind: str, args: list[SymbolicExpr], ranges: Ranges,
                   name: str | None, where: object) -> SymbolicExpr:
    """A relation's right side (``@S2 = FloorDiv @S0, @C4``) through the table; a
    BladecError from the operands is given the relation's location ``where``."""
    arity = RELATION_KINDS[kind]
    if (arity is not None and len(args) != arity) or len(args) < 2:
        raise BladecError(f"'{kind}' takes {arity or 'at least 2'} operands, got {len(args)}",
                          where)  # type: ignore[arg-type]
    try:
        return table.make(kind, args, ranges, name)
    except BladecError as exc:
        raise BladecError(str(exc.diagnostic.message), where) from None  # type: ignore[arg-type]
