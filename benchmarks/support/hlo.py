"""Op counts of an XLA executable's optimized HLO by family: where one training graph
costs more than another after XLA has fused both (benchmarks/bench_training.py).

Kernels are what the entry computation runs: its fusions (``kLoop``: elementwise and
reductions; ``kCustom``: a library kernel, on CPU a dot with what XLA fused into it), its
unfused dots and copies, and its materialized broadcasts (a fusion that only broadcasts:
an array of one constant, such as a zero cotangent, or a smaller array written out at a
larger shape, because the kernel that reads it, a library dot, could not fuse it: the
memory and the writes are paid for what a fused use reads for free). The other families
count instructions anywhere, inside fusions too (a transpose fused into a loop still
reads across strides; a divide costs several multiplies).
"""
from __future__ import annotations

import re
from collections import Counter

FAMILIES = ("kernels", "loop fusions", "dot kernels", "copies", "broadcasts written", "transpose",
            "broadcast", "reduce", "divide", "compare+select", "instructions")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%[\w.-]+ = \S+ ([\w-]+)\((.*)$")
_COMPUTATION = re.compile(r"^(ENTRY )?%([\w.-]+) ")
_FILL_OPS = {"parameter", "constant", "broadcast"}


def _computations(text: str) -> tuple[dict[str, list[tuple[str, str]]], str]:
    """Each computation's instructions as (opcode, rest of the line), and the entry's name."""
    comps: dict[str, list[tuple[str, str]]] = {}
    entry, current = "", None
    for line in text.splitlines():
        head = _COMPUTATION.match(line)
        if head and line.rstrip().endswith("{"):
            current = head.group(2)
            comps[current] = []
            if head.group(1):
                entry = current
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            comps[current].append((m.group(1), m.group(2)))
    return comps, entry


def op_counts(text: str) -> Counter:
    """Counts of :data:`FAMILIES` in the optimized HLO ``text`` (``as_text()``)."""
    comps, entry = _computations(text)
    out: Counter = Counter({f: 0 for f in FAMILIES})
    for opcode, rest in comps.get(entry, []):
        if opcode in ("parameter", "constant", "bitcast", "tuple", "get-tuple-element"):
            continue
        out["kernels"] += 1
        called = re.search(r"calls=%([\w.-]+)", rest)
        body = {op for op, _ in comps.get(called.group(1), [])} if called else set()
        if opcode == "fusion":
            kind = re.search(r"kind=(\w+)", rest)
            if kind and kind.group(1) == "kCustom":
                out["dot kernels"] += 1
            else:
                out["loop fusions"] += 1
            if body and body <= _FILL_OPS:
                out["broadcasts written"] += 1
        elif opcode == "dot":
            out["dot kernels"] += 1
        elif opcode == "copy":
            out["copies"] += 1
        elif opcode == "broadcast":
            out["broadcasts written"] += 1
    for ops in comps.values():
        for opcode, _ in ops:
            if opcode in ("transpose", "broadcast", "reduce", "divide"):
                out[opcode] += 1
            elif opcode in ("compare", "select"):
                out["compare+select"] += 1
            if opcode not in ("parameter", "bitcast", "tuple", "get-tuple-element"):
                out["instructions"] += 1
    return out
