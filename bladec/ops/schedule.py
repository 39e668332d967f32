"""The op that the ``schedule`` pass writes when one order can not suit every binding.

``schedule.versions() {funcs = [@main.v1, @main.v2]}`` at the top of ``@main`` names other
functions holding the same ops in other orders. Which order has the lowest peak can
depend on the binding (two branches whose sizes cross inside the declared ranges); the
runtime evaluates each version's peak for the binding it gets and runs the lowest
(bladec/analysis/version.py). The op itself does nothing at run time.
"""
from __future__ import annotations

from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register


def _no_results(ctx: ShapeCtx) -> list[RuleResult]:
    return []


VERSIONS = register(OpDef(
    "schedule.versions",
    "`schedule.versions() {funcs = [@main.v1, ...]}`: other orders of this function's ops; "
    "for each binding the runtime runs the order with the lowest peak (this function on "
    "ties).",
    _no_results, 0, 0, 0, attrs={"funcs": "symrefs"}))
