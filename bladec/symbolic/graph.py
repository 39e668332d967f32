"""Writing the analysis back: the completed ``@symbolic_shape_graph`` and bound types.

The paper's relation syntax has ``Mul`` and ``Add`` over symbols and positive constants,
so a solved expression is written as a tree of such relations, naming each product that
is not yet a symbol with a new symbol (or one that already stands for it). After this,
every ``?`` dim of the listing is bound to a symbol whose meaning is in the graph.
"""
from __future__ import annotations

from bladec.analysis.version import versions
from bladec.ir import (NOWHERE, Func, Module, Op, Relation, ShapeGraph, SymbolDecl, TensorType,
                       Value)
from bladec.symbolic.expr import ONE, SymbolicExpr, sym
from bladec.symbolic.shapes import ShapeInfo
from bladec.symbolic.solver import _key


class _Writer:
    def __init__(self, info: ShapeInfo, old: ShapeGraph | None, taken: set[str]) -> None:
        self.info = info
        self.relations: list[Relation] = []
        self.names: dict[SymbolicExpr, str] = {sym(s): s for s in info.free}
        for s, e in sorted(info.subst.items(), key=lambda se: _key(se[0])):
            self.names.setdefault(e, s)
        self.old_ranges = {d.name: (d.min, d.max) for d in (old.decls if old else [])}
        self.declared: list[str] = []
        self.emitted: set[str] = set()
        self.wanted: set[str] = set()  # derived symbols whose relations the graph keeps
        self.taken = set(taken) | set(info.subst) | set(info.free)
        self.next = 1 + max((_key(s)[1] for s in self.taken if _key(s)[0] == 0), default=-1)
        self.loc = NOWHERE  # the op whose equation the relations being written state

    def fresh(self) -> str:
        name = f"S{self.next}"
        self.next += 1
        self.taken.add(name)
        return name

    def term_name(self, expr: SymbolicExpr) -> str:
        """A symbol or constant standing for ``expr`` (a polynomial with c > 0 terms)."""
        if expr.is_const:
            return f"C{expr.const}"
        if expr in self.names:
            name = self.names[expr]
            if name in self.info.subst and name not in self.emitted and name in self.wanted:
                self.define(name, self.info.subst[name])  # relations before their uses
            return name
        name = self.fresh()
        self.names[expr] = name
        self.define(name, expr)
        return name

    def define(self, name: str, expr: SymbolicExpr) -> None:
        """Emit relations stating ``name = expr`` (once per symbol)."""
        if name in self.emitted:
            return
        self.emitted.add(name)
        pos = SymbolicExpr({m: c for m, c in expr.terms.items() if c > 0})
        neg = SymbolicExpr({m: -c for m, c in expr.terms.items() if c < 0})
        if neg.terms:  # name + neg = pos, through a symbol that stands for both sides
            both, pending = self._side_name(pos)
            self.relations.append(Relation(both, "Add", [name, self.term_name(neg)], self.loc))
            if pending is not None:
                self._emit(both, pending)
        else:
            self._emit(name, pos)
        self.declared.append(name)

    def _side_name(self, expr: SymbolicExpr) -> tuple[str, SymbolicExpr | None]:
        """A symbol for ``expr``, and ``expr`` again when its relation is still to write.

        An existing symbol is reused, so that rewriting a written graph is idempotent; its
        own relation is written with the other derived symbols.
        """
        existing = self.names.get(expr)
        if existing is not None and not existing.startswith("C") and \
                (existing in self.info.subst or existing in self.emitted
                 or existing in self.info.atoms):  # (an atom: never eliminated on reading)
            return existing, None
        name = self.fresh()
        self.names[expr] = name
        self.declared.append(name)
        return name, expr

    def _emit(self, name: str, expr: SymbolicExpr) -> None:
        if len(expr.terms) == 1:
            (m, c), = expr.terms.items()
            factors = [f"C{c}"] if c != 1 or m == ONE else []
            factors += [s for s, p in m for _ in range(p)]
            if len(factors) == 1 and factors[0] == name:
                return
            self.relations.append(Relation(name, "Mul", factors, self.loc))
            return
        parts = [self.term_name(SymbolicExpr({m: c})) for m, c in
                 sorted(expr.terms.items(), key=lambda mc: [_key(s) for s, _ in mc[0]])]
        self.relations.append(Relation(name, "Add", parts, self.loc))


def write_back(module: Module, info: ShapeInfo, func: Func | None = None) -> Module:
    """Bind every dim of ``func`` (default: main) and of its versions, and complete the
    shape graph."""
    func = func or module.main
    known: dict[SymbolicExpr, str] = {}  # an expression -> the first symbol that names it
    for s, e in sorted(info.subst.items(), key=lambda se: _key(se[0])):
        known.setdefault(e, s)
    types: dict[str, tuple[list[int | None], list[str]]] = {}
    for name, dims in info.dims.items():
        binds: list[str] = []
        out_dims: list[int | None] = []
        for j, d in enumerate(dims):
            if d.is_const:
                binds.append(f"C{d.const}")
                out_dims.append(d.const)
            elif len(d.terms) == 1 and d.terms.get(((next(iter(d.symbols)), 1),)) == 1:
                binds.append(next(iter(d.symbols)))
                out_dims.append(None)
            else:
                binds.append(known.get(d) or info.names[name][j] or "")
                out_dims.append(None)
        types[name] = (out_dims, binds)

    used: set[str] = set()

    def retype(v: Value) -> Value:
        dims, binds = types[v.name]
        symbolic = any(d is None for d in dims)
        keep = v.type.binds is not None or symbolic
        t = TensorType(tuple(dims), v.type.dtype, tuple(binds) if keep and dims else None,
                       v.type.sharding, v.type.partial)
        used.update(b for b in (t.binds or ()) if not b.startswith("C"))
        return Value(v.name, t, v.donated)

    def retype_ops(ops: list[Op]) -> list[Op]:
        return [Op(op.name, op.operands, [retype(r) for r in op.results], op.attrs,
                   {k: retype_ops(body) for k, body in op.regions.items()}, op.loc,
                   op.operand_locs) for op in ops]

    new_funcs = {id(f): Func(f.name, [retype(a) for a in f.args], retype_ops(f.ops),
                             f.returns, f.loc, f.return_loc) for f in versions(module, func)}
    old = module.shape_graph
    writer = _Writer(info, old, used)
    derived = sorted((s for s in info.subst if s in used or s in info.declared), key=_key)
    writer.wanted = set(derived)
    for s, atom in info.atoms.items():  # @S7 = FloorDiv @S8, @C4: operands named first
        writer.loc = info.origins.get(s, NOWHERE)
        args = [writer.term_name(e) for e in atom.args]
        writer.relations.append(Relation(s, atom.kind, args, writer.loc))
    for s in derived:
        writer.loc = info.origins.get(s, NOWHERE)
        writer.define(s, info.subst[s])
    for k, fact in enumerate(info.facts):  # pos = neg: a symbol for pos, then neg
        writer.loc = info.fact_locs[k] if k < len(info.fact_locs) else NOWHERE
        pos = SymbolicExpr({m: c for m, c in fact.terms.items() if c > 0})
        neg = SymbolicExpr({m: -c for m, c in fact.terms.items() if c < 0})
        both, pending = writer._side_name(pos)
        if pending is not None:
            writer._emit(both, pending)
        writer._emit(both, neg)
    names = sorted(set(info.free) | set(writer.declared) | used, key=_key)
    decls = []
    for name in names:
        lo, hi = info.ranges.get(name, writer.old_ranges.get(name, (1, None)))
        decls.append(SymbolDecl(name, lo, hi))
    graph = ShapeGraph(decls, writer.relations, old.loc if old else func.loc)
    funcs = [new_funcs.get(id(f), f) for f in module.funcs]
    return Module(funcs, graph, module.file, module.mesh)
