"""IR to text: the canonical form of a listing, which parses back to an equal IR."""
from __future__ import annotations

import json

from bladec.ir import SHAPE_GRAPH, Attr, Func, Module, Op, ShapeGraph, SymRef
from bladec.types import format_type

INDENT = "  "


def format_attr(value: Attr) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, SymRef)):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".eEn") else text + ".0"
    if isinstance(value, str):  # JSON escapes are Python escapes too, so this parses back
        return json.dumps(value, ensure_ascii=False)
    return "[" + ", ".join(format_attr(v) for v in value) + "]"


def format_attrs(attrs: dict[str, Attr]) -> str:
    return "{" + ", ".join(f"{k} = {format_attr(v)}" for k, v in attrs.items()) + "}"


def format_op(op: Op, indent: str = INDENT) -> str:
    text = indent
    if op.results:
        text += ", ".join(op.result_names) + " = "
    text += f"{op.name}({', '.join(op.operands)})"
    if op.attrs:
        text += " " + format_attrs(op.attrs)
    if op.results:
        text += " -> " + ", ".join(format_type(r.type) for r in op.results)
    for name, body in op.regions.items():
        inner = "".join(format_op(o, indent + INDENT) + "\n" for o in body)
        text += f" {name} {{\n{inner}{indent}}}"
    return text


def format_func(func: Func) -> str:
    args = ", ".join(f"{a.name}: {format_type(a.type)}" for a in func.args)
    lines = [f"func.func @{func.name}({args}) {{"]
    lines += [format_op(op) for op in func.ops]
    if func.returns is not None:
        lines.append(f"{INDENT}return" + (" " + ", ".join(func.returns) if func.returns else ""))
    lines.append("}")
    return "\n".join(lines)


def format_shape_graph(graph: ShapeGraph) -> str:
    lines = [f"func.func @{SHAPE_GRAPH}() {{"]
    for d in graph.decls:
        rng = {}
        if d.min != 1:
            rng["min"] = d.min
        if d.max is not None:
            rng["max"] = d.max
        lines.append(f"{INDENT}SymbolicDim @{d.name}" + (" " + format_attrs(rng) if rng else ""))
    lines += [f"{INDENT}{r}" for r in graph.relations]
    lines.append("}")
    return "\n".join(lines)


def format_module(module: Module) -> str:
    parts = [format_func(f) for f in module.funcs]
    if module.shape_graph is not None:
        parts.append(format_shape_graph(module.shape_graph))
    return "\n".join(parts) + "\n"
