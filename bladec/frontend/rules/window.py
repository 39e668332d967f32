"""Windowed primitives: ``conv_general_dilated`` (and so its gradients, which JAX writes
as convolutions with dilations, swapped dimension numbers and batch groups),
``reduce_window_sum/max/min`` (pooling, and the gradient of average pooling) and
``select_and_scatter_add`` (the gradient of max pooling), each one listing op."""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import JaxImportError, Translator


def _flat(pairs: tuple) -> list[int]:
    return [int(v) for lo_hi in pairs for v in lo_hi]


@rule("conv_general_dilated")
def _conv(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
          outs: Outs) -> Result:
    lhs, rhs = (tr.materialize(x) for x in ins)
    dn = p["dimension_numbers"]
    attrs = {"lhs_spec": [int(d) for d in dn.lhs_spec], "rhs_spec": [int(d) for d in dn.rhs_spec],
             "out_spec": [int(d) for d in dn.out_spec],
             "strides": [int(s) for s in p["window_strides"]], "padding": _flat(p["padding"]),
             "lhs_dilation": [int(s) for s in p["lhs_dilation"]],
             "rhs_dilation": [int(s) for s in p["rhs_dilation"]]}
    if int(p.get("feature_group_count", 1)) != 1:
        attrs["feature_groups"] = int(p["feature_group_count"])
    if int(p.get("batch_group_count", 1)) != 1:
        attrs["batch_groups"] = int(p["batch_group_count"])
    have = tr.dtype(lhs)
    y = tr.emit("conv", [lhs, rhs], shape, have, attrs)
    return y if have == dtype else tr.emit("convert", [y], shape, dtype, {"dtype": dtype})


_WINDOW = {"reduce_window_sum": "sum", "reduce_window_max": "max", "reduce_window_min": "min"}


@rule(*_WINDOW)
def _reduce_window(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                   outs: Outs) -> Result:
    x = tr.materialize(ins[0])
    attrs = {"kind": _WINDOW[tr.primitive], "window": [int(k) for k in p["window_dimensions"]],
             "strides": [int(s) for s in p["window_strides"]], "padding": _flat(p["padding"])}
    for name, key in (("base_dilation", "base_dilation"), ("window_dilation", "window_dilation")):
        vals = [int(v) for v in p.get(key, ())]
        if any(v != 1 for v in vals):
            attrs[name] = vals
    return tr.emit("reduce_window", [x], shape, dtype, attrs)


@rule("select_and_scatter_add")
def _select_and_scatter_add(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
                            outs: Outs) -> Result:
    source, x = (tr.materialize(v) for v in ins)
    select = getattr(p.get("select_prim"), "name", str(p.get("select_prim")))
    if select != "ge":
        raise JaxImportError(f"cannot import select_and_scatter_add selecting by '{select}' "
                             "(only max pooling's 'ge')")
    attrs = {"window": [int(k) for k in p["window_dimensions"]],
             "strides": [int(s) for s in p["window_strides"]], "padding": _flat(p["padding"])}
    return tr.emit("select_and_scatter_add", [source, x], shape, dtype, attrs)
