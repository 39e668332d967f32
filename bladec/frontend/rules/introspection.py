"""Shape information as values: ``dim_as_value`` (a symbolic dim used as a number)."""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import JaxImportError, Lit, Translator
from bladec.symbolic.expr import SymbolicExpr


@rule("dim_as_value")
def _dim_as_value(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                  outs: Outs) -> Result:
    return dim_value(tr, p["dim"] if "dim" in p else p["dimension"], dtype)


def dim_value(tr: Translator, d: object, dtype: str) -> str | Lit:
    """A JAX dim (an int or a dimension expression) as a scalar of ``dtype`` (i32 or i64):
    each symbol read off an input with ``dim_size`` (once per symbol), combined with
    scalar ``mul`` and ``add``; a quotient or bound (an atom) with ``div``, ``min`` or
    ``max`` of its operands' values (sizes: no negative operand to round)."""
    return expr_value(tr, tr.dim(d), dtype)


def expr_value(tr: Translator, e: SymbolicExpr, dtype: str) -> str | Lit:
    """:func:`dim_value` of a dim already an expression over the listing's symbols."""
    if e.is_const:
        return Lit(e.const, dtype)
    total: str | None = None
    for m, c in sorted(e.terms.items()):
        term: str | None = None if m else tr.constant(c, (), dtype)
        for s, k in m:
            for _ in range(k):
                v = _dim_value(tr, s, dtype)
                term = v if term is None else tr.emit("mul", [term, v], (), dtype)
        if m and c != 1:
            term = tr.emit("mul", [term, tr.constant(c, (), dtype)], (), dtype)
        total = term if total is None else tr.emit("add", [total, term], (), dtype)
    assert total is not None
    return total


def _dim_value(tr: Translator, symbol: str, dtype: str) -> str:
    key = (symbol, dtype)
    if key not in tr.dim_values and symbol in tr.atoms.defs:
        atom = tr.atoms.defs[symbol]
        a, b = (tr.materialize(expr_value(tr, e, dtype), ()) for e in atom.args)
        op = {"FloorDiv": "div", "Min": "min", "Max": "max"}[atom.kind]
        tr.dim_values[key] = tr.emit(op, [a, b], (), dtype)
    if key not in tr.dim_values:
        sources = tr.dim_sources.get(symbol)
        scaled = _scaled_input(tr, symbol) if not sources else None
        if scaled is not None:           # an input of dim c*symbol: its size over c
            (name, j), c = scaled
            size = tr.emit("dim_size", [name], (), dtype, {"dim": j})
            tr.dim_values[key] = tr.emit("div", [size, tr.constant(c, (), dtype)], (), dtype)
            return tr.dim_values[key]
        if not sources:
            raise JaxImportError(f"no input has the dim @{symbol} to read its size from")
        kept = [src for src in sources if src[0] not in tr.donated] or sources
        name, j = kept[0]
        tr.dim_values[key] = tr.emit("dim_size", [name], (), dtype, {"dim": j})
    return tr.dim_values[key]


def _scaled_input(tr: Translator, symbol: str) -> tuple[tuple[str, int], int] | None:
    """An input dim ``c*symbol`` (a compound size of the spec) and ``c``."""
    for where, e in tr.compound.items():
        if len(e.terms) == 1:
            (m, c), = e.terms.items()
            if m == ((symbol, 1),) and c > 0 and where[0] not in tr.donated:
                return where, c
    return None
