"""Reductions over a set of axes (boolean ``and``/``or`` reductions are min/max of 0/1)."""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import Translator

REDUCE = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
          "reduce_prod": "prod", "reduce_and": "min", "reduce_or": "max"}


@rule(*REDUCE)
def _reduce(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
            outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    axes = [int(d) for d in p["axes"]]
    if not axes:
        return x
    return tr.emit("reduce", [x], shape, dtype, {"dims": axes, "kind": REDUCE[tr.primitive]})

