"""Dims of the random listings (tests/support/randlisting.py) as polynomials over the free
symbols ``S0`` and ``S1``, computed independently of bladec's symbolic analysis so that
the generator's expectation and the analysis can disagree.
"""
from __future__ import annotations

# A dim is a polynomial over the free symbols: a sorted tuple of (monomial, coefficient)
# where a monomial is a sorted tuple of symbol names (repeats for powers).
Dim = tuple[tuple[tuple[str, ...], int], ...]

RANGES = {"S0": (1, 12), "S1": (1, 10)}
MAX_ELEMENTS = 3000          # at the largest binding; keeps every run fast
STATIC = (2, 3, 4, 5, 8)


def dconst(c: int) -> Dim:
    return (((), c),)


def dsym(s: str) -> Dim:
    return (((s,), 1),)


def _norm(terms: dict) -> Dim:
    return tuple(sorted((m, c) for m, c in terms.items() if c))


def dmul(a: Dim, b: Dim) -> Dim:
    out: dict = {}
    for ma, ca in a:
        for mb, cb in b:
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
    return _norm(out)


def dadd(a: Dim, b: Dim) -> Dim:
    out: dict = dict(a)
    for m, c in b:
        out[m] = out.get(m, 0) + c
    return _norm(out)


def is_static(d: Dim) -> bool:
    return all(not m for m, _ in d)


def static_value(d: Dim) -> int:
    return sum(c for _, c in d)


def evaluate(d: Dim, binding: dict[str, int]) -> int:
    total = 0
    for m, c in d:
        v = c
        for s in m:
            v *= binding[s]
        total += v
    return total


def dmax(d: Dim) -> int:
    return evaluate(d, {s: hi for s, (lo, hi) in RANGES.items()})


def dmin(d: Dim) -> int:
    return evaluate(d, {s: lo for s, (lo, hi) in RANGES.items()})


def numel_max(dims: list[Dim]) -> int:
    n = 1
    for d in dims:
        n *= dmax(d)
    return n
