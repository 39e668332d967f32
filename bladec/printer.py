"""IR to text: the canonical form of a listing, which parses back to an equal IR.

One exception to "equal": an undefined shape operand of ``dynamic_reshape`` (Listing 1's
``%new_shape``, accepted with a warning: the result type is the target shape) is
written as the attribute ``{shape = "%new_shape"}`` instead, with the op taking only
its data operand. The operand carries no meaning, and a listing bladec wrote should
parse without a warning: otherwise every stage of ``bladec optimize x | bladec
optimize -`` repeats the warning about the user's original listing.
"""
from __future__ import annotations

import json

from bladec.ir import SHAPE_GRAPH, Attr, Func, Mesh, Module, Op, ShapeGraph, SymRef
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


def format_op(op: Op, indent: str = INDENT, defined: set[str] | None = None) -> str:
    """``defined``: the names defined in the function, when known; a ``dynamic_reshape``
    shape operand outside it is written as its ``shape`` attribute (see the module)."""
    text = indent
    if op.results:
        text += ", ".join(op.result_names) + " = "
    operands, attrs = op.operands, op.attrs
    if (op.name == "dynamic_reshape" and len(operands) == 2 and defined is not None
            and operands[1] not in defined and "shape" not in attrs):
        operands, attrs = operands[:1], {**attrs, "shape": operands[1]}
    text += f"{op.name}({', '.join(operands)})"
    if attrs:
        text += " " + format_attrs(attrs)
    if op.results:
        text += " -> " + ", ".join(format_type(r.type) for r in op.results)
    for name, body in op.regions.items():
        inner = "".join(format_op(o, indent + INDENT, defined) + "\n" for o in body)
        text += f" {name} {{\n{inner}{indent}}}"
    return text


def _defined(ops: list[Op]) -> set[str]:
    """Every result name of ``ops`` and of the ops in their regions."""
    names: set[str] = set()
    for op in ops:
        names.update(op.result_names)
        for body in op.regions.values():
            names |= _defined(body)
    return names


def format_func(func: Func) -> str:
    args = ", ".join(f"{a.name}: {format_type(a.type)}" + (" {donate = true}" if a.donated else "")
                     for a in func.args)
    lines = [f"func.func @{func.name}({args}) {{"]
    defined = {a.name for a in func.args} | _defined(func.ops)
    lines += [format_op(op, INDENT, defined) for op in func.ops]
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


def format_mesh(mesh: Mesh) -> str:
    return "mesh " + format_attrs(dict(mesh.axes))


def format_module(module: Module) -> str:
    parts = [format_mesh(module.mesh)] if module.mesh is not None else []
    parts += [format_func(f) for f in module.funcs]
    if module.shape_graph is not None:
        parts.append(format_shape_graph(module.shape_graph))
    return "\n".join(parts) + "\n"
