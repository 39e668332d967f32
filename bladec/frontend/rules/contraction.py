"""Contractions: ``dot_general`` with its batch and contracting dims."""
from __future__ import annotations

from typing import Any

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import Translator


@rule("dot_general")
def _dot_general(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                 outs: Outs) -> Result:
    a, b = (tr.materialize(x) for x in ins)
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    for i, x in enumerate((a, b)):
        if tr.dtype(x) != dtype:
            x = tr.emit("convert", [x], tr.shapes[x], dtype, {"dtype": dtype})
            a, b = (x, b) if i == 0 else (a, x)
    attrs: dict[str, Any] = {}
    if lb:
        attrs["lhs_batch"] = [int(d) for d in lb]
        attrs["rhs_batch"] = [int(d) for d in rb]
    attrs["lhs_contract"] = [int(d) for d in lc]
    attrs["rhs_contract"] = [int(d) for d in rc]
    return tr.emit("dot_general", [a, b], shape, dtype, attrs)
