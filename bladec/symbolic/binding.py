"""Bindings: values for every symbol from values of some of them, by solving the relations.

The analysis (shapes.py) leaves a listing's symbols in three kinds: free symbols, solved
symbols (``S0 = 12*S1``), and facts it could not solve for one symbol (``S0*S1 = 32*S2``,
from a reshape). The free symbols are then not independent: a binding that sets each of
them on its own breaks the facts. This module is the one place that turns a partial
binding (``--dims S0=8,S1=64``, input shapes, a grid point) into a full one: every
relation is an equation, and any equation with one unknown left is solved for it, integer
solutions only, until nothing changes; then every relation and range is checked, and a
value that breaks one names it. The schedule pass samples bindings the same way
(:func:`sample`): it sets a *basis* (the free symbols less one per fact) and derives the
rest, moving a point that has no integer solution to a nearby one that has.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Protocol

from bladec.errors import BladecError
from bladec.symbolic.expr import SymbolicExpr, _sym_order, format_expr



class SymbolSystem(Protocol):
    """What a binding needs of a shape analysis (shapes.py's ShapeInfo is one): the free
    symbols, the solved ones, the unsolved facts, the ranges, and a place to keep the
    relations as equations once built. A protocol, so that the analysis may use this
    module without this module knowing the analysis."""
    free: list[str]
    subst: dict[str, SymbolicExpr]
    facts: list[SymbolicExpr]
    ranges: dict[str, tuple[int, int | None]]
    derived_ranges: dict[str, tuple[int, int | None]]
    equations: list | None
    atoms: dict  # symbol -> atoms.Atom: computed from its operands, never given freely

Bounds = dict[str, tuple[int, float]]  # symbol -> (low, high), high may be math.inf
DIVISOR_SEARCH = 1 << 20  # candidate roots tried for an equation of higher degree
ROUNDING_STEPS = 16       # sample(): a point moves to multiples of 2, 4, ..., 2**16


@dataclass(frozen=True)
class Equation:
    """``expr == 0``; ``text`` names it to a user (``S0 = 12*S1``), or is a function that
    does (formatted only for a message: a listing has thousands of relations, and a
    binding that holds formats none). ``describe``, where given, words a contradiction
    from the values known then (an input's shape)."""
    expr: SymbolicExpr
    text: str | Callable[[], str]
    describe: Callable[[dict[str, int]], str] | None = None
    source: str | None = None  # where a value solved from it came from ("input %a dim 0")


def sides(expr: SymbolicExpr) -> str:
    """``expr = 0`` written with positive terms on both sides: ``S0*S1 = 32*S2``."""
    pos = SymbolicExpr({m: c for m, c in expr.terms.items() if c > 0})
    neg = SymbolicExpr({m: -c for m, c in expr.terms.items() if c < 0})
    if not pos.terms or not neg.terms:
        return f"{format_expr(expr)} = 0"
    first = max(expr.terms.items(), key=lambda mc: (sum(p for _, p in mc[0]), -mc[1]))[1]
    return f"{format_expr(pos)} = {format_expr(neg)}" if first > 0 else \
        f"{format_expr(neg)} = {format_expr(pos)}"


def relations(info: SymbolSystem) -> list[Equation]:
    """The analysis's solved symbols and facts as equations (cached on ``info``)."""
    if info.equations is None:
        info.equations = [Equation(SymbolicExpr({((s, 1),): 1}) - e, partial(_solved, s, e))
                          for s, e in info.subst.items()]
        info.equations += [Equation(f, sides(f)) for f in info.facts]
    return info.equations


def input_equation(name: str, j: int, expr: SymbolicExpr, shape: tuple[int, ...]
                   ) -> Equation:
    """Dim ``j`` of input ``name`` is ``shape[j]``; a contradiction names the input."""
    value = int(shape[j])

    def describe(known: dict[str, int]) -> str:
        if expr.symbols <= known.keys():
            at = f" = {expr.evaluate(known)} for {_values(known, expr.symbols)}" \
                if expr.symbols else ""
            return (f"input {name} has shape {tuple(shape)}, but the relations give its dim "
                    f"{j} = {format_expr(expr)}{at}")
        return f"input {name} dim {j} is {value}, which {format_expr(expr)} can not equal"
    return Equation(expr - value, lambda: f"input {name} dim {j} = {format_expr(expr)}", describe,
                    f"input {name} dim {j}")


def complete(info: SymbolSystem, given: dict[str, int], extra: Iterable[Equation] = ()
             ) -> dict[str, int]:
    """Every symbol's value from ``given`` and the equations ``extra``; checks the
    relations and ranges (a BladecError names what is broken or missing)."""
    symbols = set(info.free) | set(info.subst)
    known: dict[str, int] = {}
    for s, v in given.items():
        if s not in symbols:
            raise BladecError(f"unknown symbol {s} (symbols: {', '.join(_sorted(symbols))})")
        known[s] = int(v)
    for s in info.free:
        if s in known:
            _check_range(s, known[s], info.ranges.get(s, (1, None)))
    extra, rels = list(extra), relations(info)
    sources: dict[str, str] = {}
    atoms = info.atoms
    if atoms:
        _derive(atoms, known)
    if all(s in known for s in info.free) and not any(s in known for s in info.subst):
        for s, e in info.subst.items():  # the common case: no solving needed
            known[s] = e.evaluate(known)
        # ``s = e`` then holds by construction (e is over free symbols only): check the
        # rest (the facts, and the equations ``extra``)
        eqs = extra + rels[len(info.subst):]
    else:
        eqs = extra + rels
        _propagate(eqs, known, sources)
        while atoms and _derive(atoms, known):  # atoms of what the equations gave
            _propagate(eqs, known, sources)
    missing = [s for s in info.free if s not in known]
    if missing:
        raise BladecError(f"no value for symbol(s) {', '.join(missing)}; give them with "
                          f"--dims, or symbols that determine them (free symbols: "
                          f"{', '.join(info.free)})")
    for eq in eqs:
        if eq.expr.evaluate(known) != 0:
            raise BladecError(_broken(eq, known, sources=sources))
    for s, atom in atoms.items():
        if atom.value(known) != known[s]:
            raise BladecError(f"{_values(known, {s} | atom.symbols(), sources)} breaks the "
                              f"relation {s} = {atom}")
    order = _sorted(symbols)
    for s in order:
        if s in info.subst:
            rng = info.derived_ranges.get(s, (1, None))
            if _outside(known[s], rng):
                made = None if s in given else _solved(s, info.subst[s])
                _check_range(s, known[s], rng, made)
        else:
            _check_range(s, known[s], info.ranges.get(s, (1, None)))
    return {s: known[s] for s in order}


def _derive(atoms: dict, known: dict[str, int]) -> bool:
    """Compute the atoms whose operands are known (in place); whether any was."""
    found = progress = False
    while True:
        progress = False
        for s, atom in atoms.items():
            if s not in known and atom.symbols() <= known.keys():
                known[s] = atom.value(known)
                progress = found = True
        if not progress:
            return found


def _solved(s: str, e: SymbolicExpr) -> str:
    return f"{s} = {format_expr(e)}"


def _propagate(eqs: list[Equation], known: dict[str, int], sources: dict[str, str]) -> None:
    """Solve equations with one unknown left until none is left (in place); ``sources``
    gets where each value solved from an input came from."""
    pending = list(eqs)
    progress = True
    while progress:
        progress = False
        for eq in list(pending):
            unknown = [s for s in eq.expr.symbols if s not in known]
            if not unknown:
                pending.remove(eq)
            elif len(unknown) == 1:
                value = _solve(eq, unknown[0], known, sources)
                if value is not None:
                    known[unknown[0]] = value
                    if eq.source:
                        sources[unknown[0]] = eq.source
                    pending.remove(eq)
                    progress = True


def _solve(eq: Equation, x: str, known: dict[str, int], sources: dict[str, str]
           ) -> int | None:
    """The one positive integer root of ``eq`` in ``x``; None when it has several or
    the search would be too long; a BladecError when it has none."""
    coef: dict[int, int] = {}
    for m, c in eq.expr.terms.items():
        p = 0
        for s, k in m:
            if s == x:
                p = k
            else:
                c *= known[s] ** k
        coef[p] = coef.get(p, 0) + c
    coef = {p: c for p, c in coef.items() if c}
    if not coef:
        return None  # holds for every value: it determines nothing
    low = min(coef)
    coef = {p - low: c for p, c in coef.items()}  # x >= 1: divide out x**low
    degree = max(coef)
    if degree == 0:
        raise BladecError(_broken(eq, known, x, sources))
    if degree == 1:
        c0, c1 = coef.get(0, 0), coef[1]
        if c0 % c1:
            raise BladecError(_broken(eq, known, x, sources))
        return -c0 // c1
    roots = _positive_roots(coef)
    if roots is None or len(roots) > 1:
        return None
    if not roots:
        raise BladecError(_broken(eq, known, x, sources))
    return roots[0]


def _positive_roots(coef: dict[int, int]) -> list[int] | None:
    """Positive integer roots of ``sum c*x**p`` (constant term non-zero)."""
    def at(x: int) -> int:
        return sum(c * x ** p for p, c in coef.items())
    c0 = coef.get(0, 0)
    if c0 == 0:
        return []
    if all((c > 0) == (coef[max(coef)] > 0) for p, c in coef.items() if p):
        # monotone for x >= 1: bisect up to the root's bound |c0|
        lo, hi = 1, abs(c0)
        sign = 1 if coef[max(coef)] > 0 else -1
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if sign * at(mid) < 0 else (lo, mid)
        return [lo] if at(lo) == 0 else []
    if math.isqrt(abs(c0)) > DIVISOR_SEARCH:
        return None
    out = []
    for d in range(1, math.isqrt(abs(c0)) + 1):
        if c0 % d == 0:
            out += [r for r in {d, abs(c0) // d} if at(r) == 0]
    return sorted(set(out))


def _broken(eq: Equation, known: dict[str, int], x: str | None = None,
            sources: dict[str, str] | None = None) -> str:
    if eq.describe is not None:
        return eq.describe(known)
    vals = _values(known, eq.expr.symbols, sources)
    tail = f": no integer {x} satisfies it" if x else ""
    text = eq.text if isinstance(eq.text, str) else eq.text()
    return f"{vals} breaks the relation {text}{tail}" if vals else \
        f"the relation {text} does not hold{tail}"


def _values(known: dict[str, int], symbols: Iterable[str],
            sources: dict[str, str] | None = None) -> str:
    """``S0=8 (from input %a dim 0), S1=63``: the known values, and where they came from."""
    src = sources or {}
    return ", ".join(f"{s}={known[s]}" + (f" (from {src[s]})" if s in src else "")
                     for s in _sorted(symbols) if s in known)


def _check_range(s: str, v: int, rng: tuple[int, int | None], made: str | None = None
                 ) -> None:
    """A value out of its range; ``made``: the relation that made it (a solved symbol)."""
    lo, hi = rng
    if _outside(v, rng):
        span = f"[{lo}, {hi if hi is not None else 'inf'}]"
        raise BladecError(f"the binding makes {made} = {v}, outside its range {span}" if made
                          else f"{s}={v} is outside its range {span}")


def _outside(v: int, rng: tuple[int, int | None]) -> bool:
    lo, hi = rng
    return v < lo or (hi is not None and v > hi)


def _sorted(symbols: Iterable[str]) -> list[str]:
    return sorted(symbols, key=_sym_order)


# -- sampling -----------------------------------------------------------------------------

def basis(info: SymbolSystem) -> list[str]:
    """Free symbols that, set independently, determine the rest: one symbol per fact is
    left to be solved from it (one of degree 1, the newest first, as the analysis does)."""
    solved: set[str] = set()
    for f in info.facts:
        linear = [s for s in f.symbols if s not in solved and f.degree(s) == 1]
        if linear:
            solved.add(max(linear, key=_sym_order))
    return [s for s in info.free if s not in solved and s not in info.atoms]


def bounds(info: SymbolSystem, rounds: int = 8) -> Bounds:
    """Ranges of every symbol implied by the declared ones and the relations (interval
    propagation; sound, not tight): ``S1 = 10 - S0`` with ``S1 >= 1`` gives ``S0 <= 9``."""
    b: Bounds = {s: (lo, math.inf if hi is None else hi) for s, (lo, hi) in info.ranges.items()}
    for s in info.subst:
        lo, hi = info.derived_ranges.get(s, (1, None))
        b[s] = (lo, math.inf if hi is None else hi)
    for s in info.free:
        b.setdefault(s, (1, math.inf))
    eqs = [eq.expr for eq in relations(info)]
    for _ in range(rounds):
        changed = False
        for e in eqs:
            for m, c in e.terms.items():
                for x, p in m:
                    if p != 1:
                        continue
                    new = _narrow(e, m, c, x, b)
                    if new != b[x]:
                        b[x] = new
                        changed = True
        if not changed:
            break
    return b


def _narrow(e: SymbolicExpr, m: tuple, c: int, x: str, b: Bounds) -> tuple[int, float]:
    """x's bounds from ``c*x*M = -(the other terms)`` of ``e = 0`` (exact integers; an
    infinite end stays infinite)."""
    rlo: float = 0
    rhi: float = 0
    for m2, c2 in e.terms.items():
        if m2 != m:
            lo2, hi2 = _mono(m2, b)
            rlo, rhi = (rlo - c2 * hi2, rhi - c2 * lo2) if c2 > 0 else \
                (rlo - c2 * lo2, rhi - c2 * hi2)
    if c < 0:
        rlo, rhi, c = -rhi, -rlo, -c          # now c*x*M in [rlo, rhi] with c > 0
    mlo, mhi = _mono(tuple((s, k) for s, k in m if s != x), b)
    lo, hi = b[x]
    if rhi != math.inf:
        hi = min(hi, int(rhi) // (c * int(mlo)))
    if rlo != -math.inf and rlo > 0 and 0 < mhi != math.inf:  # mhi 0: an emptied range
        lo = max(lo, -(-int(rlo) // (c * int(mhi))))
    return lo, hi


def _mono(m: tuple, b: Bounds) -> tuple[int, float]:
    lo, hi = 1, 1
    for s, k in m:
        slo, shi = b[s]
        lo *= max(slo, 1) ** k
        hi = math.inf if math.inf in (shi, hi) else hi * shi ** k
    return lo, hi


def empty_bounds(b: Bounds) -> list[str]:
    """Symbols the relations leave no value for."""
    return [s for s, (lo, hi) in b.items() if hi < lo]


def sample(info: SymbolSystem, points: Iterable[dict[str, int]]) -> list[dict[str, int]]:
    """Bindings of the free symbols that satisfy every relation, one per point (a value
    for each basis symbol) that has one nearby, without repeats.

    A point is completed by :func:`complete`; one with no integer solution moves to the
    nearest multiples of 2, 4, 8, ... of its values (within the bounds) until one has.
    """
    b = bounds(info)
    out: dict[tuple, dict[str, int]] = {}
    for point in points:
        for k in range(ROUNDING_STEPS + 1):
            step = 1 << k
            trial = {}
            for s, v in point.items():
                lo, hi = b[s]
                r = max(step, round(v / step) * step)
                trial[s] = int(min(max(r, lo), hi))
            try:
                full = complete(info, trial)
            except BladecError:
                continue
            free = {s: full[s] for s in info.free}
            out.setdefault(tuple(sorted(free.items())), free)
            break
    return list(out.values())


def basis_range(b: Bounds, s: str, unbounded_high: int) -> tuple[int, int]:
    """A symbol's bounds with ``unbounded_high`` for no maximum (at least its low end)."""
    lo, hi = b[s]
    lo = max(lo, 1)
    return lo, int(max(lo, hi if hi != math.inf else max(unbounded_high, lo)))
