"""What ``bladec analyze`` reports, as one plain dict (printed as text or JSON by the CLI).

The per-step figures are main's; with schedule versions, ``versions`` gives each one's
symbolic peak and, for a binding, ``version`` and ``peak_bytes`` are of the version the
runtime would run (the lowest peak)."""
from __future__ import annotations

import math
from typing import Any

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import (exact_lower_bound, exact_sizes, exact_timeline,
                                    peak_terms, symbolic_lower_bound, symbolic_timeline)
from bladec.analysis.version import choose, versions
from bladec.errors import BladecError
from bladec.ir import Func, Module, Op
from bladec.symbolic.binding import bounds
from bladec.symbolic.expr import SymbolicExpr, format_expr
from bladec.symbolic.shapes import ShapeInfo, _key, analyze_shapes
from bladec.types import format_type

SEARCH_CAP = 1 << 40


def formula(terms: list[SymbolicExpr]) -> str:
    """A max of terms as text: the term itself when there is only one."""
    if len(terms) == 1:
        return format_expr(terms[0])
    return "max(" + ", ".join(format_expr(t) for t in terms) + ")"


def analysis_report(module: Module, dims: dict[str, int] | None = None,
                    limit: int | None = None, solve: str | None = None) -> dict[str, Any]:
    func = module.main
    orders = versions(module)
    info = analyze_shapes(module)
    types = func.value_types()
    binding = dict(dims or {})
    solution = None
    if solve is not None:
        if limit is None:
            raise BladecError("--solve needs --mem-limit")
        solution = solve_max(module, info, binding, limit, solve)
        binding[solve] = solution
    if not binding and limit is not None and solve is None and info.free:
        raise BladecError("--mem-limit needs --dims (to say whether the peak fits) or --solve")
    # any symbols that determine the rest; a static listing needs none to be exact
    full = info.bind(binding) if binding or (limit is not None and not info.free) else None
    if full is not None:
        binding = {s: full[s] for s in info.free}
    sizes = exact_sizes(info, binding) if full is not None else None
    index, peak = choose(orders, sizes) if sizes is not None else (0, None)
    shown = orders[index]  # the order the runtime would run for this binding
    timeline = symbolic_timeline(shown, info)
    report: dict[str, Any] = {
        "symbols": sorted([*info.free, *info.subst], key=_key),
        "free_symbols": list(info.free),
        "ranges": {s: [lo, hi] for s, (lo, hi) in info.ranges.items()},
        "relations": info.relations(),
        "values": {name: {"shape": [format_expr(d) for d in ds], "dtype": info.dtypes[name],
                          "type": format_type(types[name]) if name in types else None,
                          "bytes": format_expr(info.nbytes(name))}
                   for name, ds in info.dims.items()},
        "version": shown.name,
        "steps": [{"op": op_label(op), "bytes": format_expr(b)}
                  for op, b in zip(_compute_ops(shown), timeline.steps)],
        "peak": formula(peak_terms(timeline, info.compare)),
        "lower_bound": formula(symbolic_lower_bound(func, info)),
    }
    if module.mesh is not None:  # sharded: every size above is a device's own blocks
        report["mesh"] = dict(module.mesh.axes)
        for name, value in report["values"].items():
            value["blocks"] = info.ways.get(name, 1)
    if len(orders) > 1:
        report["versions"] = {f.name: formula(peak_terms(symbolic_timeline(f, info), info.compare))
                              for f in orders}
    if solution is not None:
        report["solution"] = {solve: solution}
        report["mem_limit"] = limit
    if sizes is not None:
        report["dims"] = full
        report["bytes_at"] = sizes
        report["step_bytes"] = exact_timeline(shown, sizes).steps
        report["peak_bytes"] = peak
        report["lower_bound_bytes"] = exact_lower_bound(func, sizes)
        if limit is not None:
            report["mem_limit"] = limit
            report["fits"] = peak <= limit
    return report


def solve_max(module: Module, info: ShapeInfo, binding: dict[str, int], limit: int,
              symbol: str) -> int:
    """The largest value of ``symbol`` whose exact peak fits ``limit`` (peak is monotone),
    the other symbols given or derived from ``binding`` and it; where the relations
    have no integer solution for some values (``S0*S1 = 256``), the search skips them and
    may stop below a larger value that has one."""
    free = [s for s in info.free if s not in info.atoms]
    if symbol in info.atoms:
        raise BladecError(f"{symbol} = {info.atoms[symbol]} follows from its operands: solve "
                          f"for one of them ({', '.join(free)})")
    if symbol not in info.free:
        raise BladecError(f"can only solve for a free symbol ({', '.join(free)}), "
                          f"not {symbol}")
    lo, hi = info.ranges.get(symbol, (1, None))
    implied_lo, implied_hi = bounds(info)[symbol]  # what the relations leave it
    lo = max(lo, implied_lo)
    hi = min(SEARCH_CAP if hi is None else hi, SEARCH_CAP if implied_hi == math.inf
             else int(implied_hi))

    orders = versions(module)

    def peak(v: int) -> int:  # the other symbols follow from --dims and v (ShapeInfo.bind)
        return choose(orders, exact_sizes(info, {**binding, symbol: v}))[1]

    def fits(v: int) -> bool:
        """A value with no integer solution of the relations does not fit."""
        try:
            return peak(v) <= limit
        except BladecError:
            return False

    if not fits(lo):
        need = peak(lo)
        raise BladecError(f"no value of {symbol} fits: even {symbol}={lo} peaks at {need} bytes")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def op_label(op: Op) -> str:
    names = ", ".join(op.result_names)
    return f"{names} = {op.name}" if names else op.name


def _compute_ops(func: Func) -> list[Op]:
    return [op for op in func.ops if is_compute(op)]
