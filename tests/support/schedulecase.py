"""What the ``schedule`` pass's tests (tests/passes/test_schedule*.py) check orders with:
a sample loaded and verified, the compute ops of a function and their names, the peak of
the version the runtime would run, and why an order is not a topological permutation."""
from __future__ import annotations

import math
import random
from pathlib import Path

from bladec.analysis.liveness import is_compute
from bladec.ir import Func, Module, Op
from bladec.analysis.version import choose, versions
from bladec.parse import parse_module
from bladec.verify import verify


def load(path: Path) -> Module:
    module = parse_module(path.read_text(encoding="utf-8"), str(path))
    verify(module)
    return module


def compute_ops(func: Func) -> list[Op]:
    return [op for op in func.ops if is_compute(op)]


def names(ops: list[Op]) -> list[str]:
    return [op.results[0].name if op.results else op.name for op in ops if is_compute(op)]


def versioned_peak(module: Module, sizes: dict[str, int]) -> int:
    """The peak of the version the runtime runs for these sizes (the lowest)."""
    return choose(versions(module), sizes)[1]


def topological_problem(func: Func, order: list[Op]) -> str | None:
    """Why ``order`` is not a topological permutation of func's compute ops (None: it is)."""
    ops = compute_ops(func)
    order = compute_ops(Func("order", [], order))
    if sorted(map(id, order)) != sorted(map(id, ops)):
        if sorted(names(order)) != sorted(names(ops)):
            return f"not the same ops: {sorted(names(order))} vs {sorted(names(ops))}"
    defined = {a.name for a in func.args}
    produced = {r.name for op in ops for r in op.results}
    for op in order:
        for name in op.operands:
            if name in produced and name not in defined:
                return f"{names([op])[0]} uses {name} before its definition"
        defined.update(r.name for r in op.results)
    return None


def random_binding(rng: random.Random, ranges: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Log-uniform inside the ranges."""
    out = {}
    for s, (lo, hi) in ranges.items():
        out[s] = min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
    return out
