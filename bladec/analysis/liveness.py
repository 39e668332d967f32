"""Liveness in program order: where each value is defined, last used, and freed.

This is the memory model of DESIGN.md section 4 in one walk: graph inputs are resident
throughout, outputs from their definition to the end, every other value from the op
that defines it to its last use. ``remat.*`` and ``schedule.*`` ops are bookkeeping, not
uses: the plan they describe evicts nothing unless the runtime decides to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from bladec.ir import Func, Op

T = TypeVar("T")


BOOKKEEPING = ("remat.", "schedule.")


def is_compute(op: Op) -> bool:
    """False for the ops passes write for the runtime to read (remat plans, versions)."""
    return not op.name.startswith(BOOKKEEPING)


@dataclass
class Liveness:
    ops: list[Op]                 # the compute ops, in program order
    last_use: dict[str, int]      # value -> index (into ops) of its last use
    inputs: list[str]             # graph inputs (resident throughout)
    outputs: set[str]             # graph outputs (resident to the end)
    pinned: frozenset[str]        # inputs and outputs: never freed
    defined: frozenset[str]       # values that occupy memory (not undefined shape operands)

    @classmethod
    def of(cls, func: Func, ops: list[Op] | None = None) -> "Liveness":
        """Liveness of ``func`` in its own order, or in the order ``ops``."""
        ops = [op for op in (func.ops if ops is None else ops) if is_compute(op)]
        last_use: dict[str, int] = {}
        for i, op in enumerate(ops):
            for name in op.operands:
                last_use[name] = i
        inputs = [a.name for a in func.args]
        outputs = set(func.outputs())
        defined = frozenset(inputs) | {r.name for op in ops for r in op.results}
        kept = frozenset(a.name for a in func.args if not a.donated)  # donated: freed at last use
        return cls(ops, last_use, inputs, outputs, kept | outputs, defined)

    def freed_after(self, i: int) -> list[str]:
        """Values that die at step i: operands last used here and unused results."""
        op = self.ops[i]
        dead = [n for n in dict.fromkeys(op.operands) if self.last_use[n] == i
                and n not in self.pinned and n in self.defined]
        dead += [r.name for r in op.results
                 if r.name not in self.last_use and r.name not in self.pinned]
        return dead


@dataclass
class Timeline(Generic[T]):
    """Memory at each step (after allocating the op's results, before freeing)."""
    steps: list[T]
    inputs: T


def memory_timeline(live: Liveness, size: Callable[[str], T], zero: T) -> Timeline[T]:
    """The one memory model, over any size arithmetic (symbolic or exact bytes)."""
    inputs = zero
    for name in live.inputs:
        inputs = inputs + size(name)
    resident = inputs
    steps: list[T] = []
    for i, op in enumerate(live.ops):
        for r in op.results:
            resident = resident + size(r.name)
        steps.append(resident)
        for name in live.freed_after(i):
            resident = resident - size(name)
    return Timeline(steps, inputs)
