"""Completing and checking the dims of an imported listing.

Where the analysis can not recover a dim from the ops alone (a ``reshape`` that splits
a dynamic dim, an ``iota`` whose length never meets an input's), the result of the op
that introduced it is bound to a symbol with its relation in ``@symbolic_shape_graph``
(a *hint*; :attr:`Imported.hints` lists them, and ``hints=False`` makes it an error).
With ``check=True`` (the default) every value's dims from the analysis are compared with
JAX's own at two bindings.
"""
from __future__ import annotations

import itertools
from typing import Any

from bladec.frontend.imported import Imported
from bladec.frontend.translate import JaxImportError
from bladec.ir import Op, Relation, SymbolDecl, Value
from bladec.ops.loop import with_bodies
from bladec.symbolic.expr import SymbolicExpr

# ops whose result dims their shape rule does not derive from operands: where a hint goes
_SOURCES = {"reshape", "dynamic_reshape", "iota", "constant", "rng_uniform",
            "broadcast_in_dim", "broadcast", "broadcast_like", "split_dim",
            "conv", "reduce_window"}  # (a stride over a dynamic dim: window.py)


def _determined(info: Any, inputs: list[str]) -> set[str]:
    """Free symbols the input shapes fix (as the runtime binds them: one at a time)."""
    known: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in inputs:
            for e in info.dims[name]:
                free = [s for s in e.symbols if s not in known]
                if len(free) == 1 and e.degree(free[0]) == 1:
                    known.add(free[0])
                    changed = True
        for s, atom in info.atoms.items():   # computed from its operands
            if s not in known and atom.symbols() <= known:
                known.add(s)
                changed = True
    return known


def complete_dims(imp: Imported, allow_hints: bool) -> None:
    """Bind the dims the analysis can not rediscover (hints), until none is left."""
    from bladec.symbolic.shapes import analyze_shapes
    func = imp.module.main
    inputs = [a.name for a in func.args]
    for _ in range(8):
        info = analyze_shapes(imp.module)
        known = _determined(info, inputs)
        loose = {s for s in info.free if s not in known}
        if not loose:
            return
        targets: list[Op] = []
        ops = with_bodies(func.ops)
        for s in sorted(loose):  # bind where each loose symbol is born
            users = [op for op in ops
                     if any(s in d.symbols for r in op.results for d in info.dims[r.name])]
            first = [op for op in users[:1] if op.name in _SOURCES]
            targets += first or [op for op in users if op.name in _SOURCES]
        targets = list({id(op): op for op in targets
                        if any(r.type.binds is None for r in op.results)}.values())
        if not targets:
            break
        if not allow_hints:
            names = ", ".join(r.name for op in targets[:5] for r in op.results)
            raise JaxImportError(f"the analysis can not relate the dims of {names} to the "
                                 "inputs' (hints=False)")
        for op in targets:
            for i, r in enumerate(op.results):
                if r.type.binds is None and any(d is None for d in r.type.dims):
                    binds = tuple(_hint_symbol(imp, e) for e in imp.jax_dims[r.name])
                    op.results[i] = Value(r.name, r.type.with_binds(binds))
                    imp.hints.append(r.name)
    info = analyze_shapes(imp.module)
    raise JaxImportError(f"the analysis leaves symbol(s) {', '.join(sorted(info.free))} "
                         "undetermined by the input shapes")


def _hint_symbol(imp: Imported, e: SymbolicExpr) -> str:
    """A symbol (or constant) name for ``e``, with relations in the shape graph."""
    graph = imp.module.shape_graph
    if e.is_const:
        return f"C{e.const}"
    if len(e.terms) == 1:
        (m, c), = e.terms.items()
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]
    cache = getattr(imp, "_hint_cache", None)
    if cache is None:
        cache = {}
        setattr(imp, "_hint_cache", cache)
    if e in cache:
        return cache[e]

    def fresh() -> str:
        taken = {d.name for d in graph.decls}
        name = next(f"S{i}" for i in itertools.count() if f"S{i}" not in taken)
        graph.decls.append(SymbolDecl(name))
        return name

    def positive(p: SymbolicExpr) -> str:  # a polynomial with positive coefficients
        if p in cache:
            return cache[p]
        terms = []
        for m, c in sorted(p.terms.items()):
            args = ([f"C{c}"] if c != 1 or not m else []) + [s for s, k in m for _ in range(k)]
            if len(args) == 1:
                terms.append(args[0])
            else:
                t = fresh()
                graph.relations.append(Relation(t, "Mul", args))
                terms.append(t)
        if len(terms) == 1 and not terms[0].startswith("C"):
            name = terms[0]
        else:
            name = fresh()
            graph.relations.append(Relation(name, "Add", terms))
        cache[p] = name
        return name

    pos = SymbolicExpr({m: c for m, c in e.terms.items() if c > 0})
    neg = SymbolicExpr({m: -c for m, c in e.terms.items() if c < 0})
    if not neg.terms:
        name = positive(pos)
    else:  # name + neg = pos
        name = fresh()
        graph.relations.append(Relation(positive(pos), "Add",
                                        [name, f"C{neg.const}" if neg.is_const
                                         else positive(neg)]))
    cache[e] = name
    return name


def check_dims(imp: Imported, bindings: list[dict[str, int]] | None = None) -> None:
    """Every value's dims from bladec's analysis equal JAX's at each binding (of the
    input symbols); raise :class:`JaxImportError` naming the first difference."""
    from bladec.symbolic.binding import input_equation
    from bladec.symbolic.shapes import analyze_shapes
    info = analyze_shapes(imp.module)
    graph = imp.module.shape_graph
    inputs = list({s for s in imp.symbols.values()})
    if bindings is None:
        ranges = {d.name: (d.min, d.max) for d in graph.decls}
        bindings = []
        for k in (0, 1):
            b = {}
            for i, s in enumerate(sorted(inputs)):
                lo, hi = ranges.get(s, (1, None))
                v = lo + 2 + k * (3 + i) + i
                b[s] = v if hi is None else max(lo, min(hi, v))
            bindings.append(b)
    for b in bindings:
        b = imp.jax_binding(b)
        shapes = {a.name: tuple(e.evaluate(b) for e in imp.jax_dims[a.name])
                  for a in imp.module.main.args}
        full = info.bind({}, [input_equation(a.name, j, e, shapes[a.name])
                              for a in imp.module.main.args
                              for j, e in enumerate(info.dims[a.name])])
        for name, dims in info.dims.items():
            got = [d.evaluate(full) for d in dims]
            want = [e.evaluate(b) for e in imp.jax_dims[name]]
            if got != want:
                raise JaxImportError(f"bladec's analysis gives {name} the shape {got} at "
                                     f"{b}, JAX gives {want}")


def write_atoms(imp: Imported, tr: Any) -> None:
    """The translator's quotient and bound dims into the shape graph (``@S5 = FloorDiv
    @S6, @C4``, operands named by relations), and the inputs' compound dims (``4*Hp``)
    bound to symbols with their relations."""
    graph = imp.module.shape_graph
    imp.atoms = dict(tr.atoms.defs)
    taken = {d.name for d in graph.decls}
    graph.decls += [SymbolDecl(name) for name in tr.atoms.defs if name not in taken]
    for name, atom in tr.atoms.defs.items():
        graph.relations.append(Relation(name, atom.kind,
                                        [_hint_symbol(imp, e) for e in atom.args]))
    if not tr.compound:
        return
    args = imp.module.main.args
    for i, a in enumerate(args):
        binds = list(a.type.binds or ())
        for j in range(len(binds)):
            if (a.name, j) in tr.compound:
                binds[j] = _hint_symbol(imp, tr.compound[(a.name, j)])
        if binds != list(a.type.binds or ()):
            args[i] = Value(a.name, a.type.with_binds(tuple(binds)), a.donated)
