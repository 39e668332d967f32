"""Primitives that order or pick by value: ``argmax``/``argmin``, the cumulative scans
(``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``), ``sort`` (also
``jnp.argsort``: an iota sorted along as values) and ``top_k``; one listing op each."""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import JaxImportError, Translator


@rule("argmax", "argmin")
def _arg(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
         outs: Outs) -> Result:
    axes = [int(d) for d in p["axes"]]
    if len(axes) != 1:
        raise JaxImportError(f"cannot import {tr.primitive} over {len(axes)} axes (only one)")
    return tr.emit(tr.primitive, [tr.materialize(ins[0])], shape, dtype, {"dim": axes[0]})


CUMULATIVE = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min",
              "cumlogsumexp": "logsumexp"}


@rule(*CUMULATIVE)
def _cumulative(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                outs: Outs) -> Result:
    attrs = {"dim": int(p["axis"]), "kind": CUMULATIVE[tr.primitive]}
    if p.get("reverse"):
        attrs["reverse"] = True
    return tr.emit("cumulative", [tr.materialize(ins[0])], shape, dtype, attrs)


@rule("sort")
def _sort(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    xs = [tr.materialize(x) for x in ins]
    attrs = {"dim": int(p["dimension"]), "num_keys": int(p.get("num_keys", 1))}
    return tr.emit_multi("sort", xs, outs, attrs)


@rule("top_k")
def _top_k(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
           outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    axis = int(p.get("axis", -1))
    if axis not in (-1, len(tr.shapes[x]) - 1):
        raise JaxImportError("cannot import top_k along a dim other than the last")
    return tr.emit_multi("top_k", [x], outs, {"k": int(p["k"])})
