"""Tests of bladec.symbolic.compare: the worked examples, soundness by property, sympy."""
from __future__ import annotations

import itertools
import random

import pytest
import sympy
from hypothesis import given, settings, strategies as st

from bladec.symbolic.compare import Comparator, Order, compare, max_terms, sample_points
from bladec.symbolic.expr import SymbolicExpr, const, sym, values_at

S0, S1, S2 = sym("S0"), sym("S1"), sym("S2")
NAMES = ("S0", "S1", "S2")


def holds(order: Order, lhs: int, rhs: int) -> bool:
    return {
        Order.LT: lhs < rhs, Order.LE: lhs <= rhs, Order.EQ: lhs == rhs,
        Order.GE: lhs >= rhs, Order.GT: lhs > rhs, Order.UNKNOWN: True,
    }[order]


# -- the paper's worked examples (DESIGN.md sections 3, 5, 6) --------------------------

def test_listing1_broadcast_sizes():
    # S0 = 12*S1: %1084 has 11008*S1 elements, %1085 has 1024*S0 = 12288*S1.
    size_1085 = (1024 * S0).subs({"S0": 12 * S1})
    assert size_1085 == 12288 * S1
    assert compare(11008 * S1, size_1085) is Order.LT
    assert compare(size_1085, 11008 * S1) is Order.GT


def test_schedule_impacts():
    dot_impact = 11008 * S1 - 12 * S1
    assert dot_impact == 10996 * S1
    assert compare(dot_impact, 4096 * S0.subs({"S0": 12 * S1})) is Order.LT
    assert compare(10996 * S1, 49152 * S1) is Order.LT


def test_remat_impacts():
    orders = [compare(e, 0) for e in (-11007 * S1, -11 * S1, 1 * S1)]
    assert orders == [Order.LT, Order.LT, Order.GT]


# -- unit cases -----------------------------------------------------------------------

@pytest.mark.parametrize("a, b, ranges, expected", [
    (S1, S1, None, Order.EQ),
    (const(3), const(5), None, Order.LT),
    (const(5), 5, None, Order.EQ),
    (S1, 0, None, Order.GT),
    (S1, 1, None, Order.GE),
    (S1, 2, None, Order.UNKNOWN),
    (S1, 2, {"S1": (2, None)}, Order.GE),
    (S1, 2, {"S1": (3, 9)}, Order.GT),
    (S1, 9, {"S1": (3, 9)}, Order.LE),
    (S1, 5, {"S1": (5, 5)}, Order.EQ),
    (S1 * S1, S1, None, Order.GE),                       # S1^2 - S1 >= 0
    (S1 * S1 + 1, S1, None, Order.GT),
    (2 * S0 * S1, 3 * S1, {"S0": (2, None)}, Order.GT),  # 2*S0*S1 - 3*S1 > 0
    (2 * S0 * S1, 3 * S1, None, Order.UNKNOWN),          # S0 = 1 breaks it
    (S0 * S1, S0 + S1, None, Order.UNKNOWN),
    (S0 * S1 + S1 * S1, S0 + S1, None, Order.GE),        # absorbers must be shared well
    (S1 * S1 + S0 * S1, S1 + S0, None, Order.GE),        # ... in either term order
    (S0 + S1 - S0 * S1, S1 * S1, None, Order.LE),        # found by hypothesis (flip)
    (10 * S1, S1 * S1, {"S1": (1, 10)}, Order.GE),        # upper-end domination
    (S0, S1, None, Order.UNKNOWN),
    (S0, S1, {"S0": (10, None), "S1": (1, 10)}, Order.GE),
    (S0 * 0, 0, {"S0": (0, 0)}, Order.EQ),
    (S0 * S1, 0, {"S0": (0, 0)}, Order.EQ),              # zero factor beats unbounded S1
    (S0, 0, {"S0": (0, None)}, Order.GE),
    (10**12 * S1 + 1, 10**12 * S1, None, Order.GT),      # exact with huge coefficients
    (10**12 * S1 * S1, 10**12 * S1 + 10**12 - 1, {"S1": (2, None)}, Order.GT),
])
def test_unit_cases(a, b, ranges, expected):
    assert compare(a, b, ranges) is expected
    assert compare(b, a, ranges) is expected.flip()


def test_flip():
    assert [o.flip() for o in Order] == [Order.GT, Order.GE, Order.EQ, Order.LE, Order.LT,
                                         Order.UNKNOWN]
    assert all(o.flip().flip() is o for o in Order)


def test_bad_ranges():
    with pytest.raises(ValueError):
        compare(S0, S1, {"S0": (-1, 3)})
    with pytest.raises(ValueError):
        Comparator({"S0": (4, 3)})


def test_comparator_cache_and_counters():
    cmp = Comparator()
    assert cmp(S1, 2 * S1) is Order.LT
    assert cmp(S1 + S0, 2 * S1 + S0) is Order.LT   # same difference: a cache hit
    assert cmp(S0, S1) is Order.UNKNOWN
    assert (cmp.calls, cmp.hits, cmp.decided, cmp.unknown) == (3, 1, 2, 1)
    assert len(cmp.cache) == 2
    uncached = Comparator(cache=False)
    for _ in range(3):
        uncached(S1, 2 * S1)
    assert uncached.hits == 0 and not uncached.cache and uncached.decided == 3


def test_max_terms():
    exprs = [S0, S1, 2 * S1, S0 + 1, S1, 2 * S1]
    assert max_terms(exprs) == [2 * S1, S0 + 1]
    assert max_terms([S1, S1, S1]) == [S1]
    assert max_terms([]) == []
    # Under ranges that order S0 above S1 only S0-based terms survive.
    cmp = Comparator({"S0": (100, None), "S1": (1, 50)})
    assert max_terms([S1, S0, 2 * S1], cmp) == [S0]


def test_max_terms_keeps_pointwise_max():
    rng = random.Random(7)
    pool = [S0, S1, 2 * S1, S0 * S1, S0 + S1, S1 * S1, const(30), 3 * S0 - 2]
    for _ in range(200):
        exprs = rng.sample(pool, rng.randint(1, len(pool)))
        kept = max_terms(exprs)
        assert kept and all(k in exprs for k in kept)
        for s0, s1 in itertools.product(range(1, 8), repeat=2):
            b = {"S0": s0, "S1": s1}
            assert max(e.evaluate(b) for e in kept) == max(e.evaluate(b) for e in exprs)


def _max_terms_asking_every_pair(exprs, cmp):
    """max_terms as it was before it evaluated at sample points: every pair proved."""
    kept = []
    for e in exprs:
        if any(cmp(e, k).le for k in kept):
            continue
        kept = [k for k in kept if not cmp(k, e).le]
        kept.append(e)
    return kept


def test_max_terms_sampling_changes_nothing():
    """The sample points only skip proofs that can not succeed: the survivors are the
    same as when every pair is asked, under ranges bounded, unbounded and missing."""
    rng = random.Random(11)
    pool = [S0, S1, S2, 2 * S1, S0 * S1, S0 + S1, S1 * S1, const(30), 3 * S0 - 2, S0 * S2,
            S0 * S1 - S1, S1 + 64, 4 * S2 + S0, S0 * S1 * S2, const(1), S1 * S1 - S0 + 7]
    for trial in range(300):
        ranges = {}
        for name in NAMES:
            if rng.random() < 0.8:
                lo = rng.choice([0, 1, 2, 8, 100])
                ranges[name] = (lo, rng.choice([None, lo, lo + 3, lo + 1000]))
        cmp = Comparator(ranges)
        exprs = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
        assert max_terms(exprs, cmp) == _max_terms_asking_every_pair(exprs, cmp), ranges
        for point in sample_points(("S0", "S1", "S2"), ranges):
            for name, value in point.items():
                lo, hi = ranges.get(name, (1, None))
                assert lo <= value and (hi is None or value <= hi)
    exprs = [rng.choice(pool) for _ in range(40)]
    assert max_terms(exprs) == _max_terms_asking_every_pair(exprs, compare)


# -- decision rate --------------------------------------------------------------------

def test_mono_symbol_linear_always_decided():
    cmp = Comparator(cache=False)
    coeffs = [0, 1, 2, 11, 12, 4096, 11008, 49152, 10**12]
    for c1, c2 in itertools.product(coeffs, repeat=2):
        for s in (S0, S1):
            assert cmp(c1 * s, c2 * s) is not Order.UNKNOWN
    # Same-sign coefficients in one symbol, any degree: decided as well.
    for c1, c2, k in itertools.product([1, 3, 7], [0, 2, 5], [0, 1, 9]):
        assert cmp(c1 * S1 * S1 + c2 * S1 + k, 0) in (Order.GT, Order.GE)
        assert cmp(0, c1 * S1 * S1 + c2 * S1 + k) in (Order.LT, Order.LE)
    assert cmp.unknown == 0


def test_realistic_impacts_mostly_decided():
    # Memory impacts as the scheduler sees them: products of a few symbols with big sizes.
    S0S1 = S0 * S1
    impacts = [4096 * S0S1, 11008 * S0S1, -4096 * S0S1, 32 * S0 * S1 * S1, 12 * S1,
               4096 * S0S1 + 32 * S0 * S1 * S1, 2 * 4096 * S0S1 - 11008 * S0, 128 * S0,
               -128 * S0, 0]
    cmp = Comparator(cache=False)
    for a, b in itertools.product(impacts, repeat=2):
        cmp(a, b)
    # The 24 undecided pairs are genuinely unordered (e.g. 4096*S0*S1 vs 32*S0*S1^2 flips
    # at S1 = 128; 8192*S0*S1 - 11008*S0 is negative at S1 = 1 and positive after).
    assert cmp.decision_rate >= 0.75


# -- soundness by property ------------------------------------------------------------

def _poly(nsym: int, min_size: int = 0) -> st.SearchStrategy[SymbolicExpr]:
    mono = st.tuples(*[st.integers(0, 2)] * nsym)
    term = st.tuples(mono, st.integers(-50, 50).filter(bool))   # a 0 term is no term

    def build(terms: list) -> SymbolicExpr:
        total = const(0)
        for powers, c in terms:
            t = const(c)
            for name, p in zip(NAMES, powers):
                for _ in range(p):
                    t = t * sym(name)
            total = total + t
        return total

    return st.lists(term, min_size=min_size, max_size=4).map(build)


# Strategies built once: constructing them inside the composite dominated the runtime.
_POLYS = {n: _poly(n, 1) for n in (1, 2, 3)}
_LO = st.integers(1, 4)
_HI_OFFSET = st.one_of(st.none(), st.integers(0, 20))
_NSYM = st.integers(1, 3)
_KIND = st.integers(0, 2)
_SEED = st.integers(0, 2**32)


@st.composite
def cases(draw):
    nsym = draw(_NSYM)
    a = draw(_POLYS[nsym])
    kind = draw(_KIND)
    if kind == 0:
        b = draw(_POLYS[nsym])
    elif kind == 1:
        b = const(0)
    else:
        b = a - draw(_POLYS[nsym])      # a small difference, the interesting case
    ranges = {}
    for name in NAMES[:nsym]:
        lo = draw(_LO)
        off = draw(_HI_OFFSET)
        ranges[name] = (lo, None if off is None else lo + off)
    # Symbols sometimes use the default range [1, inf) by being left out.
    if draw(st.booleans()):
        ranges.pop(NAMES[0])
    span = {n: ranges.get(n, (1, None)) for n in NAMES[:nsym]}
    caps = {n: (lo, lo + 60 if hi is None else hi) for n, (lo, hi) in span.items()}
    bindings = [{n: lo for n, (lo, _) in caps.items()},
                {n: hi for n, (_, hi) in caps.items()}]
    # Interior points from a drawn seed: far cheaper than drawing each integer.
    rng = random.Random(draw(_SEED))
    for _ in range(10):
        bindings.append({n: rng.randint(lo, hi) for n, (lo, hi) in caps.items()})
    return a, b, ranges, bindings


def _check_sound(case) -> None:
    a, b, ranges, bindings = case
    order = compare(a, b, ranges)
    back = compare(b, a, ranges)
    assert back is order.flip()
    for binding in bindings:
        va, vb = a.evaluate(binding), b.evaluate(binding)
        assert holds(order, va, vb), (str(a), str(b), ranges, binding, order)


@settings(max_examples=500, deadline=None)
@given(cases())
def test_compare_is_sound(case):
    """A quarter of the campaign in ``make test``; the whole one below in ``make bench``."""
    _check_sound(case)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(cases())
def test_compare_is_sound_campaign(case):
    _check_sound(case)


def test_compare_is_sound_exhaustive_small_boxes():
    """Every point of small bounded boxes, on random polynomials with decided answers."""
    rng = random.Random(1)
    decided = 0
    for _ in range(400):
        ranges = {n: (lo, lo + rng.randint(0, 4)) for n in NAMES[:2]
                  for lo in [rng.randint(0, 3)]}
        d = const(0)
        for _ in range(rng.randint(1, 4)):
            t = const(rng.randint(-20, 20))
            for n in NAMES[:2]:
                for _ in range(rng.randint(0, 2)):
                    t = t * sym(n)
            d = d + t
        order = compare(d, 0, ranges)
        decided += order.decided
        for s0 in range(ranges["S0"][0], ranges["S0"][1] + 1):
            for s1 in range(ranges["S1"][0], ranges["S1"][1] + 1):
                assert holds(order, d.evaluate({"S0": s0, "S1": s1}), 0), (str(d), ranges)
    assert decided > 100


def test_upper_end_domination_is_sound():
    """Positive low-degree terms paying for negative multiples under finite upper ends."""
    rng = random.Random(5)
    decided = 0
    for _ in range(4000):
        ranges = {n: (lo, lo + rng.randint(0, 5)) for n in NAMES[:2]
                  for lo in [rng.randint(0, 3)]}
        if rng.random() < 0.3:
            ranges.pop("S1")           # S1 unbounded: only S0 may be the quotient
        d = const(rng.randint(-30, 30))
        for _ in range(rng.randint(1, 3)):
            base = sym(rng.choice(NAMES[:2])) if rng.random() < 0.7 else const(1)
            d = d + rng.randint(1, 80) * base - rng.randint(1, 6) * base * S0
        order = compare(d, 0, ranges)
        decided += order in (Order.GE, Order.GT, Order.LE, Order.LT)
        lo1, hi1 = ranges.get("S1", (1, None))
        hi1 = lo1 + 12 if hi1 is None else hi1
        for s0 in range(ranges["S0"][0], ranges["S0"][1] + 1):
            for s1 in range(lo1, hi1 + 1):
                assert holds(order, d.evaluate({"S0": s0, "S1": s1}), 0), (str(d), ranges)
    assert decided > 1000


# -- sympy cross-check ----------------------------------------------------------------

def _to_sympy(e: SymbolicExpr) -> sympy.Expr:
    syms = {n: sympy.Symbol(n, integer=True, positive=True) for n in e.symbols}
    return sympy.Add(*[c * sympy.Mul(*[syms[s] ** p for s, p in m]) for m, c in e.terms.items()])


@pytest.mark.parametrize("a, b, ranges", [
    (11008 * S1, 12288 * S1, None),
    (S1 * S1, S1, None),
    (2 * S0 * S1, 3 * S1, {"S0": (2, None)}),
    (10 * S1, S1 * S1, {"S1": (1, 10)}),
    (4096 * S0 * S1 + 32 * S0 * S1 * S1, 11008 * S0 * S1, {"S1": (300, None)}),
    (S0 * S1 * S1 - 5 * S0 * S1 + 7, const(0), {"S1": (5, None)}),
])
def test_agrees_with_sympy(a, b, ranges):
    order = compare(a, b, ranges)
    assert order.decided
    diff = sympy.expand(_to_sympy(a) - _to_sympy(b))
    rel = {Order.LT: sympy.Lt, Order.LE: sympy.Le, Order.EQ: sympy.Eq,
           Order.GE: sympy.Ge, Order.GT: sympy.Gt}[order]
    ranges = ranges or {}
    names = sorted((a - b).symbols)
    rng = random.Random(3)
    for _ in range(20):
        point = {}
        for n in names:
            lo, hi = ranges.get(n, (1, None))
            point[n] = rng.randint(lo, lo + 500 if hi is None else hi)
        value = diff.subs({sympy.Symbol(n, integer=True, positive=True): v
                           for n, v in point.items()})
        assert rel(value, 0) == sympy.true
        assert int(value) == (a - b).evaluate(point)
    # Where the ranges are unbounded above, shifting S = lo + x (x >= 0) and expanding
    # must not give sympy a proof of the opposite sign.
    xs = {n: sympy.Symbol(f"x_{n}", nonnegative=True, integer=True) for n in names}
    shifted = sympy.expand(diff.subs({sympy.Symbol(n, integer=True, positive=True):
                                      ranges.get(n, (1, None))[0] + xs[n] for n in names}))
    if order in (Order.GT, Order.GE):
        assert shifted.is_negative is not True
    if order in (Order.LT, Order.LE):
        assert shifted.is_positive is not True


# -- the arithmetic's fast paths ----------------------------------------------------------

_ARITH_MONOS = st.lists(st.tuples(st.sampled_from(["S0", "S1", "S2"]), st.integers(1, 3)),
                  max_size=2, unique_by=lambda sp: sp[0]).map(lambda m: tuple(sorted(m)))
_ARITH_POLYS = st.dictionaries(_ARITH_MONOS, st.integers(-6, 6), max_size=4).map(SymbolicExpr)


def _sp(e: SymbolicExpr) -> sympy.Expr:
    x = {n: sympy.Symbol(n) for n in ("S0", "S1", "S2")}
    return sympy.Add(*[c * sympy.Mul(*[x[s] ** p for s, p in m]) for m, c in e.terms.items()])


@settings(max_examples=150, deadline=None)
@given(_ARITH_POLYS, _ARITH_POLYS, st.integers(-3, 3),
       st.dictionaries(st.sampled_from(["S0", "S1", "S2"]), _ARITH_POLYS, max_size=2))
def test_arithmetic_agrees_with_sympy_and_keeps_its_term_order(a, b, k, mapping):
    """expr.py works on the dicts directly (no intermediate expressions, a sum with zero
    is the other operand); the values are sympy's, no zero coefficient is kept, and a sum
    lists the left operand's monomials first, then the new ones in the right's order
    (printed formulas follow it)."""
    x = {n: sympy.Symbol(n) for n in ("S0", "S1", "S2")}
    for got, want in [(a + b, _sp(a) + _sp(b)), (a - b, _sp(a) - _sp(b)),
                      (a * b, _sp(a) * _sp(b)), (a * k, _sp(a) * k), (k - a, k - _sp(a)),
                      (-a, -_sp(a)),
                      (a.subs(mapping), _sp(a).subs({x[s]: _sp(e) for s, e in mapping.items()},
                                                   simultaneous=True))]:
        assert sympy.expand(_sp(got) - want) == 0
        assert 0 not in got.terms.values()
    order = [m for m in a.terms if m in (a + b).terms] + \
        [m for m in b.terms if m not in a.terms]
    assert list((a + b).terms) == order


@settings(max_examples=100, deadline=None)
@given(st.lists(_ARITH_POLYS, max_size=5),
       st.lists(st.fixed_dictionaries({n: st.integers(1, 50) for n in ("S0", "S1", "S2")}),
                max_size=4))
def test_values_at_is_evaluate_at_each_point(exprs, points):
    assert values_at(exprs, points) == [tuple(e.evaluate(p) for p in points) for e in exprs]
