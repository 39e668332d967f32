"""Symbolic shape analysis: every dim of every value as a polynomial over free symbols.

Every dim of a listing is named by a symbol (its bound ``@Sn``, a constant, or a fresh
symbol for an unbound ``?``). Op shape rules (bladec/ops) and the relations of
``@symbolic_shape_graph`` give equations between those names. Each equation is reduced
by the substitutions found so far and then solved for one symbol where that is exact
(``S0 - 12*S1 = 0`` gives ``S0 := 12*S1``): the substitution map is a union-find whose
representatives are the free symbols, extended from plain equality to polynomials, so
each independent equation removes one free symbol. Equations that can not be solved that
way (``S0*S1 = S2*S3``) are kept as facts and retried; a reduced equation that is a
non-zero constant is a contradiction, reported at the op that caused it. The solver is
bladec/symbolic/solver.py; this module states the equations and reads the result.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from bladec.errors import BladecError
from bladec.analysis.liveness import is_compute
from bladec.ir import DTYPE_BYTES, NOWHERE, Func, Loc, Module, Op, TensorType
from bladec.ops import ShapeCtx, apply_rule, lookup
from bladec.ops.loop import REGIONS, with_bodies
from bladec.sharding import splits
from bladec.symbolic.atoms import RELATION_KINDS, Atom, AtomTable, relation_value
from bladec.symbolic.binding import bounds, complete, empty_bounds
from bladec.symbolic.compare import Comparator
from bladec.symbolic.expr import SymbolicExpr, const, format_expr, sym
from bladec.symbolic.fingerprint import Reuse
from bladec.symbolic.solver import _INDEX, _Equation, _Solver, _key, _order
from bladec.verify import type_dims


@dataclass
class ShapeInfo:
    """The result of the analysis of one function."""
    free: list[str]                        # symbols nothing else determines
    subst: dict[str, SymbolicExpr]         # solved symbol -> expression over free symbols
    facts: list[SymbolicExpr]              # unsolved equations (== 0) over free symbols
    ranges: dict[str, tuple[int, int | None]]
    dims: dict[str, list[SymbolicExpr]]    # value name -> canonical dims
    names: dict[str, list[str | None]]     # value name -> the symbol naming each dim
    dtypes: dict[str, str]
    declared: set[str] = field(default_factory=set)
    derived_ranges: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    # value name -> how many blocks a sharded value is cut into (absent: 1); sizes are
    # per device (DESIGN section 12), and the analysis made every split dim a multiple
    ways: dict[str, int] = field(default_factory=dict)
    _cmp: Comparator | None = None
    _nbytes: dict[str, SymbolicExpr] = field(default_factory=dict, repr=False)
    _by_shape: dict[tuple, SymbolicExpr] = field(default_factory=dict, repr=False)
    origins: dict[str, Loc] = field(default_factory=dict)  # solved symbol -> its op
    fact_locs: list[Loc] = field(default_factory=list)     # each fact's op
    equations: list | None = field(default=None, repr=False)  # binding.relations' cache
    # quotient and bound dims (atoms.py): symbols a binding computes from their operands
    atoms: dict[str, Atom] = field(default_factory=dict)

    def relation_loc(self, symbols: Iterable[str]) -> Loc | None:
        """Where the last relation that mentions any of ``symbols`` came from (the op
        that completed a system with no solution)."""
        wanted = set(symbols)
        locs = [self.origins[s] for s, e in self.subst.items()
                if s in self.origins and (s in wanted or e.symbols & wanted)]
        locs += [loc for f, loc in zip(self.facts, self.fact_locs) if f.symbols & wanted]
        return max(locs, key=lambda loc: (loc.line, loc.col), default=None)

    def canon(self, expr: SymbolicExpr) -> SymbolicExpr:
        return expr.subs(self.subst)

    def numel(self, value: str) -> SymbolicExpr:
        out = const(1)
        for d in self.dims[value]:
            out = out * d
        return out

    def nbytes(self, value: str) -> SymbolicExpr:
        """Bytes of a value (cached: every memory walk asks for every value)."""
        out = self._nbytes.get(value)
        if out is None:
            shape = (tuple(self.dims[value]), self.dtypes[value])  # values share shapes
            out = self._by_shape.get(shape)
            if out is None:
                out = self._by_shape[shape] = self.numel(value) * DTYPE_BYTES[shape[1]]
            k = self.ways.get(value, 1)
            if k > 1:
                out = exact_quotient(out, k)
            self._nbytes[value] = out
        return out

    @property
    def compare(self) -> Comparator:
        """A cached comparator that knows the free symbols' ranges."""
        if self._cmp is None:
            self._cmp = Comparator(self.ranges)
        return self._cmp

    def relations(self) -> list[str]:
        """Solved symbols as user-facing equations, e.g. ``S0 = 12*S1``."""
        out = [f"{s} = {format_expr(e)}" for s, e in sorted(self.subst.items(), key=_order)
               if s in self.declared or not e.is_const]
        out += [f"{format_expr(f)} = 0" for f in self.facts]
        out += [f"{s} = {a}" for s, a in self.atoms.items()]
        return out

    def bind(self, binding: dict[str, int], extra: Iterable = ()) -> dict[str, int]:
        """Values of every symbol from values of any that determine them (and the
        equations ``extra``, such as input shapes), solved from the relations in integers
        and checked against every relation and range (bladec/symbolic/binding.py)."""
        return complete(self, binding, extra)


class _Sink:
    def __init__(self, solver: _Solver, table: AtomTable | None = None,
                 made: Callable[[], None] | None = None) -> None:
        self.solver = solver
        self.lower: list[tuple[SymbolicExpr, int, Op, str]] = []
        self.table = table
        self.made = made  # told when an op made an atom (its name depends on the order)

    def atom(self, kind: str, a: SymbolicExpr, b: SymbolicExpr, op: Op) -> SymbolicExpr:
        """A quotient or bound dim an op's rule makes (a strided window's extent)."""
        assert self.table is not None
        before = len(self.table.defs)
        value = relation_value(self.table, kind, [a.subs(self.solver.subst),
                                                  b.subs(self.solver.subst)],
                               self.solver.ranges, None, op.loc)
        if len(self.table.defs) != before and self.made is not None:
            self.made()
        return value

    def equal(self, a: SymbolicExpr, b: SymbolicExpr, op: Op, what: str) -> None:
        if a == b:  # most shape rules restate what the types already say
            return
        self.solver.add(_Equation(a - b, op.loc, lambda: f"'{op.name}': {what} must be "
                                  f"equal, got {format_expr(a)} and {format_expr(b)}",
                                  who=f"'{op.name}'"))

    def at_least(self, a: SymbolicExpr, bound: int, op: Op, what: str) -> None:
        self.lower.append((a, bound, op, what))


def analyze_shapes(module: Module, func: Func | None = None) -> ShapeInfo:
    """Analyze ``func`` (default: the module's main function) and its shape graph.

    An analysis is reused where everything it read is the same (fingerprint.py: the
    contents, not object identities). Passes analyze the module they are given, and
    ``schedule`` only reorders ops: where the ops told the analysis nothing that the
    shape graph and the types do not already say (every dim bound, every op's equation
    reducing to 0; so after ``analyze``), the result does not depend on the order of the
    ops, and the analysis of the same ops in another order is reused (the values listed
    in the new order). Any other analysis is reused for the same ops in the same order
    (the runtime analyzes the listing as written again, after the ``analyze`` pass did).
    """
    func = func or module.main
    hit = _REUSE.get(module, func)
    if hit is not None:
        return _in_order(hit, func)
    info, order_free = _analyze(module, func)
    _REUSE.put(module, func, info, order_free)
    return info


REUSE_ENTRIES = 4
_REUSE = Reuse(REUSE_ENTRIES, is_compute)


def exact_quotient(expr: SymbolicExpr, k: int) -> SymbolicExpr:
    """``expr / k`` where the analysis made ``expr`` a multiple of ``k`` (a sharded value's
    bytes: every split dim was bound to ``k_dim`` times a symbol)."""
    if any(c % k for c in expr.terms.values()):
        raise ValueError(f"{expr} is not a multiple of {k}")
    return SymbolicExpr({m: c // k for m, c in expr.terms.items()})


def _in_order(info: ShapeInfo, func: Func) -> ShapeInfo:
    names = [a.name for a in func.args] + [r.name for op in with_bodies(func.ops)
                                           for r in op.results]
    if list(info.dims) == names:
        return info
    return replace(info, dims={n: info.dims[n] for n in names},
                   names={n: info.names[n] for n in names})


def _analyze(module: Module, func: Func) -> tuple[ShapeInfo, bool]:
    """The analysis, and whether it would be the same for the ops in any order."""
    used = {b for v in _all_types(func) for b in (v.binds or ()) if b.startswith("S")}
    graph = module.shape_graph
    ranges: dict[str, tuple[int, int | None]] = {}
    declared: set[str] = set()
    if graph is not None:
        for d in graph.decls:
            ranges[d.name] = (d.min, d.max)
            declared.add(d.name)
    taken = used | declared
    counter = itertools.count(1 + max((_key(s)[1] for s in taken if _INDEX.match(s)), default=-1))

    fresh_used = []

    def fresh() -> str:
        fresh_used.append(True)
        return f"S{next(counter)}"

    solver = _Solver(ranges)
    table = AtomTable(lambda: f"S{next(counter)}")  # (not ``fresh``: no op makes atoms)
    solver.atoms = table.defs
    if graph is not None:
        for rel in graph.relations:
            args = [const(int(a[1:])) if a.startswith("C") and a[1:].isdigit() else sym(a)
                    for a in rel.args]
            if rel.kind in RELATION_KINDS:
                name = rel.lhs if rel.lhs not in solver.subst and rel.lhs not in table.defs \
                    and all(rel.lhs not in a.symbols for a in args) else None
                value = relation_value(table, rel.kind, [a.subs(solver.subst) for a in args],
                                       solver.ranges, name, rel.loc)
                if value != sym(rel.lhs):
                    solver.add(_Equation(sym(rel.lhs) - value, rel.loc, f"relation {rel} "
                                         "contradicts the relations before it", prefer=rel.lhs,
                                         who=f"relation {rel}"))
                continue
            rhs = args[0]
            for a in args[1:]:
                rhs = rhs * a if rel.kind == "Mul" else rhs + a
            solver.add(_Equation(sym(rel.lhs) - rhs, rel.loc, f"relation {rel} contradicts "
                                 "the relations before it", prefer=rel.lhs, who=f"relation {rel}"))

    dims: dict[str, list[SymbolicExpr]] = {}
    names: dict[str, list[str | None]] = {}
    dtypes: dict[str, str] = {}

    ways: dict[str, int] = {}
    multiples: set[tuple] = set()  # (dim, k) already required to be a multiple

    def define(name: str, t: TensorType, loc: Loc) -> None:
        fresh_names: dict[int, str] = {}

        def unknown(j: int) -> SymbolicExpr:
            fresh_names[j] = fresh()
            return sym(fresh_names[j])
        dims[name] = type_dims(t, unknown)
        names[name] = [t.binds[j] if t.binds is not None else fresh_names.get(j)
                       for j in range(t.rank)]
        dtypes[name] = t.dtype
        if t.sharding is not None and module.mesh is not None and any(t.sharding):
            split = splits(module.mesh, t.sharding)
            ways[name] = math.prod(split)
            for j, k in enumerate(split):
                key = (dims[name][j].key(), k)
                if k == 1 or dims[name][j].is_const or key in multiples:
                    continue
                multiples.add(key)
                if all(c % k == 0 for c in dims[name][j].subs(solver.subst).terms.values()):
                    continue  # proved a multiple by the relations so far
                # else the split requires one: dim = k * (a new symbol)
                solver.add(_Equation(dims[name][j] - const(k) * sym(fresh()), loc,
                                     f"dim {j} of {name} is split {k} ways",
                                     who=f"the sharding of {name}"))

    for arg in func.args:
        define(arg.name, arg.type, func.loc)
    sink = _Sink(solver, table, lambda: fresh_used.append(True))
    said = solver.effective

    def block(ops: list[Op]) -> None:
        """Define and relate each op's results; a loop's body first (its rule reads the
        body's dims, which share the function's symbols)."""
        for op in ops:
            opdef = lookup(op)
            for region in REGIONS.get(op.name, ()):
                block(op.regions.get(region, []))
            for r in op.results:
                define(r.name, r.type, op.loc)
            known = [o for o in op.operands if o in dims]
            if not is_compute(op):
                continue
            ctx = ShapeCtx(op, [dims[o] for o in known], [dtypes[o] for o in known],
                           [r.type for r in op.results], [dims[r.name] for r in op.results],
                           sink, dims if op.name in REGIONS else {})
            apply_rule(opdef, ctx)
    block(func.ops)
    for a, bound, op, what in sink.lower:
        ca = a.subs(solver.subst)
        if ca.is_const and ca.const < bound:
            raise BladecError(f"'{op.name}': {what}, but the dim is {ca.const}", op.loc)
        if len(ca.terms) == 1 and ca.terms.get(next(iter(ca.terms))) == 1:
            (m,) = ca.terms
            if len(m) == 1 and m[0][1] == 1:
                s = m[0][0]
                lo, hi = solver.ranges.get(s, (1, None))
                solver.narrow(s, max(lo, bound), hi, op.loc, f"'{op.name}': {what}")
    if table.defs:
        def equate(name: str, value: SymbolicExpr) -> None:
            solver.add(_Equation(sym(name) - value, solver.origins.get(name, NOWHERE),
                                 f"{name} = {format_expr(value)}", prefer=name))
        table.settle(lambda e: e.subs(solver.subst), solver.ranges,
                     lambda s: s in solver.subst, equate)
        said_ranges = {d.name: (d.min, d.max) for d in graph.decls} if graph else {}
        solver.ranges.update(table.ranges({s: r for s, r in solver.ranges.items()
                                           if s not in table.defs or s in said_ranges}))
    solved: dict[SymbolicExpr, SymbolicExpr] = {}  # values share a few distinct dims

    def canonical(d: SymbolicExpr) -> SymbolicExpr:
        out = solved.get(d)
        if out is None:
            out = solved[d] = d.subs(solver.subst)
        return out
    canon = {v: [canonical(d) for d in ds] for v, ds in dims.items()}
    all_syms = set(solver.subst) | {s for ds in dims.values() for d in ds for s in d.symbols}
    all_syms |= declared | set(table.defs)
    all_syms |= {s for a in table.defs.values() for e in a.args for s in e.symbols}
    free = sorted({s for s in all_syms if s not in solver.subst}
                  | {s for e in solver.subst.values() for s in e.symbols}, key=_key)
    full_ranges = {s: solver.ranges.get(s, (1, None)) for s in free}
    info = ShapeInfo(free, dict(solver.subst),
                     [f.expr.subs(solver.subst) for f in solver.facts.values()],
                     full_ranges, canon, names, dtypes, declared,
                     derived_ranges=dict(solver.derived_ranges), ways=ways,
                     origins=solver.origins,
                     fact_locs=[f.loc for f in solver.facts.values()], atoms=dict(table.defs))
    if info.facts or any(hi is not None for _, hi in info.derived_ranges.values()) or \
            any(c < 0 for e in info.subst.values() for c in e.terms.values()):
        implied = bounds(info)  # ranges the relations imply: empty means no solution
        empty = empty_bounds(implied)
        if empty:
            s = empty[0]
            lo, hi = implied[s]
            raise BladecError(f"the relations {'; '.join(info.relations())} leave {s} no "
                              f"value (it would need {lo} <= {s} <= {hi})",
                              info.relation_loc(empty) or NOWHERE)
    return info, solver.effective == said and not fresh_used


def _all_types(func: Func):
    for a in func.args:
        yield a.type
    for op in with_bodies(func.ops):
        for r in op.results:
            yield r.type
