"""Schedule versions: other orders of a function's ops, and the choice among them.

Which order of a graph has the lowest peak can depend on the binding: two branches whose
sizes cross inside the declared ranges (``512*S0`` against ``512*S1``) want opposite
orders, and no single order is right for every binding. The ``schedule`` pass then
writes a few orders, each one a function of its own named by ``schedule.versions`` at
the top of ``@main``; once the symbols are bound, the runtime evaluates the exact peak of
each (the memory model of DESIGN.md section 4, one walk per version) and runs the lowest,
``@main`` on ties. The orders are decided at compile time from the declared ranges; only
the choice among them waits for the shapes.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable

from bladec.analysis.memory import exact_peak
from bladec.errors import BladecError
from bladec.ir import NOWHERE, Func, Module, Op, SymRef
from bladec.ops.annotation import VERSIONS
from bladec.symbolic.binding import basis, basis_range, bounds, sample
from bladec.symbolic.shapes import ShapeInfo

UNBOUNDED_HIGH = 4096  # the high end assumed for a symbol declared without a maximum


def version_names(func: Func) -> list[str]:
    """The functions ``func``'s ``schedule.versions`` op names, in order."""
    for op in func.ops:
        if op.name == VERSIONS.name:
            return [ref.name for ref in op.attrs.get("funcs", ())]
    return []


def versions(module: Module, func: Func | None = None) -> list[Func]:
    """``func`` (default: main) followed by its other versions."""
    func = func or module.main
    by_name = {f.name: f for f in module.funcs}
    out = [func]
    for name in version_names(func):
        if name not in by_name:
            raise BladecError(f"schedule.versions names @{name}, which is not a function",
                              func.loc)
        out.append(by_name[name])
    return out


def choose(funcs: list[Func], sizes: dict[str, int]) -> tuple[int, int]:
    """(index, peak bytes) of the version with the lowest exact peak; the first on ties."""
    best, best_peak = 0, exact_peak(funcs[0], sizes)
    for i, f in enumerate(funcs[1:], 1):
        peak = exact_peak(f, sizes)
        if peak < best_peak:
            best, best_peak = i, peak
    return best, best_peak


def map_versions(module: Module, fn: Callable[[Func], Func]) -> Module:
    """The module with ``fn`` applied to main and to each of its versions."""
    changed = {id(f): fn(f) for f in versions(module)}
    return Module([changed.get(id(f), f) for f in module.funcs], module.shape_graph,
                  module.file, module.mesh)


def with_versions(module: Module, primary: list[Op], others: list[list[Op]]) -> Module:
    """Main in the order ``primary`` and one function per order in ``others``.

    Earlier versions of main are replaced; the new ones are named ``@main.v1``, ...
    """
    main = module.main
    old = set(version_names(main))
    taken = {f.name for f in module.funcs if f.name not in old}
    names: list[str] = []
    for k in itertools.count(1):
        if len(names) == len(others):
            break
        if f"{main.name}.v{k}" not in taken:
            names.append(f"{main.name}.v{k}")
    head = [Op(VERSIONS.name, [], [], {"funcs": tuple(SymRef(n) for n in names)})] \
        if names else []
    new_main = Func(main.name, main.args, head + primary, main.returns, main.loc,
                    main.return_loc)
    extra = [Func(n, main.args, order, main.returns, main.loc, main.return_loc)
             for n, order in zip(names, others)]
    funcs: list[Func] = []
    for f in module.funcs:
        if f is main:
            funcs.append(new_main)
            funcs.extend(extra)
        elif f.name not in old:
            funcs.append(f)
    return Module(funcs, module.shape_graph, module.file, module.mesh)


def symbol_range(info: ShapeInfo, symbol: str) -> tuple[int, int]:
    """The range of a symbol as the relations bound it, with :data:`UNBOUNDED_HIGH` for
    no maximum."""
    return basis_range(bounds(info), symbol, UNBOUNDED_HIGH)


def corners(info: ShapeInfo, limit: int = 8) -> list[dict[str, int]]:
    """Bindings at the ends of the ranges: every corner of the basis symbols (the free
    ones that determine the rest, bladec/symbolic/binding.py) for up to three of them;
    beyond that all-low, all-high, and each symbol high alone, at most ``limit``. Each
    satisfies the relations: a corner with no integer solution moves to a nearby point."""
    free = basis(info)
    if not free:
        return sample(info, [{}])
    b = bounds(info)
    ends = {s: basis_range(b, s, UNBOUNDED_HIGH) for s in free}
    if 2 ** len(free) <= limit:
        points = [dict(zip(free, c)) for c in itertools.product(*(ends[s] for s in free))]
    else:
        low = {s: ends[s][0] for s in free}
        points = [low, {s: ends[s][1] for s in free}]
        points += [{**low, s: ends[s][1]} for s in free]
    return sample(info, points[:limit])


def _log_point(lo: int, hi: int, t: float) -> int:
    """The point a fraction ``t`` of the way from ``lo`` to ``hi`` on a log scale, always
    within [lo, hi]: float rounding near a huge end (max = 10**23) must not step outside
    the range, and beyond floats (10**400) the point is the end itself."""
    if t <= 0:
        return lo
    if t >= 1:
        return hi
    a, b = math.log(lo), math.log(hi)
    try:
        value = int(round(math.exp(a + (b - a) * t)))
    except OverflowError:
        value = hi
    return min(hi, max(lo, value))


def log_grid(info: ShapeInfo, points: int = 256) -> list[dict[str, int]]:
    """About ``points`` bindings spread log-uniformly over the basis symbols' ranges (a
    grid), each completed to satisfy the relations (points with no solution nearby are
    left out). Floats only place the points between the ends: the ends are the exact
    integers and every point is clamped into ``[lo, hi]`` by integer comparison (a float
    rounds a range end near the dimension limit, 2^48, off by one or more)."""
    free = basis(info)
    if not free:
        return sample(info, [{}])
    b = bounds(info)
    per_axis = max(2, int(points ** (1 / len(free))))
    axes = []
    for s in free:
        lo, hi = basis_range(b, s, UNBOUNDED_HIGH)
        axes.append(sorted({_log_point(lo, hi, k / (per_axis - 1)) for k in range(per_axis)}))
    grid = itertools.islice(itertools.product(*axes), 4 * points)
    return sample(info, [dict(zip(free, p)) for p in grid])


def no_binding(info: ShapeInfo) -> BladecError:
    """The error for relations that no sampled binding satisfies, at the op that made
    the last of them."""
    loc = info.relation_loc(info.free) or info.relation_loc(info.subst) or NOWHERE
    return BladecError(f"found no values of the symbols that satisfy the relations "
                       f"{'; '.join(info.relations())} within their ranges", loc)
