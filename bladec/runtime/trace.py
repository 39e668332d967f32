"""An execution trace: ops, evictions and regenerations in the order the runtime runs them.

The planner (policy.py) builds a trace for one binding; the executor runs it; and
:func:`simulate` measures it with the memory model of DESIGN.md section 4, applied to
the trace: a value is resident from the step that makes it (an op, a reload, a
recompute) until its last use in the trace or until it is evicted; graph inputs
always, outputs from their definition on. That one measurement is what ``run`` checks
against the limit and reports.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bladec.ir import Op


@dataclass
class Step:
    """``kind`` is "op", "evict" or "regen"; ``method`` is "reload" or "recompute"."""
    kind: str
    op: Op | None = None
    value: str | None = None
    method: str | None = None
    region: list[Op] = field(default_factory=list)
    index: int = -1  # the compute op's index for "op" steps


@dataclass
class Measure:
    memory: list[int]      # bytes after each op of the trace (regions included), before frees
    peak: int
    inputs: int


def last_uses(trace: list[Step]) -> dict[str, int]:
    """The trace position of each value's last use (by an op or a recompute region)."""
    last: dict[str, int] = {}
    for pos, step in enumerate(trace):
        if step.kind == "op":
            for n in step.op.operands:
                last[n] = pos
        elif step.kind == "regen" and step.method == "recompute":
            inner = {r for op in step.region for r in op.result_names}
            for op in step.region:
                for n in op.operands:
                    if n not in inner:
                        last[n] = pos
    return last


def simulate(trace: list[Step], sizes: dict[str, int], inputs: list[str],
             outputs: set[str]) -> Measure:
    last = last_uses(trace)
    pinned = set(inputs) | outputs
    base = sum(sizes[n] for n in inputs)
    resident: set[str] = set()
    total = base
    memory: list[int] = []

    def free_dead(names: list[str], pos: int) -> None:
        nonlocal total
        for n in names:
            if n in resident and n not in pinned and last.get(n, -1) <= pos:
                resident.discard(n)
                total -= sizes[n]

    for pos, step in enumerate(trace):
        if step.kind == "op":
            results = step.op.result_names
            for r in results:
                resident.add(r)
                total += sizes[r]
            memory.append(total)
            free_dead(step.op.operands, pos)
            free_dead(results, pos)
        elif step.kind == "evict":
            if step.value in resident:
                resident.discard(step.value)
                total -= sizes[step.value]
        elif step.method == "reload":
            resident.add(step.value)
            total += sizes[step.value]
            memory.append(total)
        else:  # recompute: run the region's ops, keep only the regenerated value
            temps: list[str] = []
            for i, op in enumerate(step.region):
                for r in op.result_names:
                    temps.append(r)
                    total += sizes[r]
                memory.append(total)
                needed = {n for later in step.region[i + 1:] for n in later.operands}
                for r in list(temps):
                    if r not in needed and r != step.value:
                        temps.remove(r)
                        total -= sizes[r]
            resident.add(step.value)
            for r in temps:
                if r != step.value:
                    total -= sizes[r]
            # what the region read from outside and nothing later reads is freed
            inner = {r for op in step.region for r in op.result_names}
            free_dead([n for op in step.region for n in op.operands if n not in inner], pos)
    return Measure(memory, max(memory, default=base), base)
