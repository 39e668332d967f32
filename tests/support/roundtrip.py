"""The parser's round-trip contract as checks: IR compared by everything its equality
compares (attributes tagged, so that 1, 1.0 and True differ and nan equals nan), and
``parse(print(parse(text)))`` against ``parse(text)``. Used by tests/ir."""
from __future__ import annotations

import math
from typing import Any

from bladec.ir import Module, Op, SymRef
from bladec.parse import parse_module
from bladec.printer import format_module


def tagged(value: Any) -> Any:
    """An attribute as a comparable tagged tree: 1, 1.0 and True differ; nan equals nan."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, SymRef):
        return ("sym", value.name)
    assert isinstance(value, tuple), f"attribute of unexpected type {type(value)}"
    return ("list", tuple(tagged(v) for v in value))


def canonical(module: Module) -> Any:
    """Everything that IR equality compares, with attributes tagged (see :func:`tagged`)."""
    def op_view(op: Op) -> Any:
        return (op.name, tuple(op.operands), tuple(op.results),
                tuple((k, tagged(v)) for k, v in op.attrs.items()),
                tuple((k, tuple(op_view(o) for o in body)) for k, body in op.regions.items()))
    funcs = tuple((f.name, tuple(f.args), tuple(op_view(o) for o in f.ops),
                   None if f.returns is None else tuple(f.returns)) for f in module.funcs)
    graph = module.shape_graph
    sg = None if graph is None else (
        tuple((d.name, d.min, d.max) for d in graph.decls),
        tuple((r.lhs, r.kind, tuple(r.args)) for r in graph.relations))
    return funcs, sg


def as_written(module: Module) -> Any:
    """``canonical(module)`` with the printer's one documented rewrite applied: an
    undefined shape operand of ``dynamic_reshape`` becomes its ``shape`` attribute."""
    funcs, sg = canonical(module)
    out = []
    for name, args, ops, returns in funcs:
        defined = {a.name for a in args} | {r.name for op in ops for r in op[2]}
        new_ops = []
        for name_, operands, results, attrs, regions in ops:
            if name_ == "dynamic_reshape" and len(operands) == 2 and operands[1] not in defined:
                operands, attrs = operands[:1], attrs + (("shape", ("str", operands[1])),)
            new_ops.append((name_, operands, results, attrs, regions))
        out.append((name, args, tuple(new_ops), returns))
    return tuple(out), sg


def round_trip(text: str) -> tuple[Module, str]:
    """Parse, print, parse again, print again; check equality and idempotence."""
    ir = parse_module(text, "in.mlir")
    printed = format_module(ir)
    again = parse_module(printed, "printed.mlir")
    assert canonical(again) == as_written(ir)
    assert format_module(again) == printed
    return ir, printed


def one_op(text: str, func: int = 0) -> Op:
    (op,) = parse_module(text).funcs[func].ops
    return op
