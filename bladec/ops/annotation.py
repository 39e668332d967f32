"""Ops that bladec's own passes write into a listing and its runtime reads: they compute
nothing.

The ops that the ``remat`` pass writes and the runtime reads (DESIGN.md section 6).

Their operands are checked by the verifier like any other op's; the recompute region of
``remat.regenerate`` is verified as a nested scope that sees the values defined before it.

The op that the ``schedule`` pass writes when one order can not suit every binding.

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


PLAN = register(OpDef(
    "remat.plan",
    "`remat.plan() {evict_points = N, candidates = C, pruned = P}`: a summary the remat "
    "pass writes at the top of the function; it does nothing at run time.",
    _no_results, 0, 0, 0, attrs={"evict_points": "int", "candidates": "int", "pruned": "int"}))
EVICT = register(OpDef(
    "remat.evict",
    "`remat.evict(%a, %b, ...)`: the tensors that may be evicted at this point, if memory "
    "runs short at run time; `{pruned = N}` counts candidates dropped at compile time.",
    _no_results, 0, None, 0, attrs={"pruned": "int"}))
REGENERATE = register(OpDef(
    "remat.regenerate",
    "`remat.regenerate(%t) {reload = true} recompute { ... }`: before a later use of %t, "
    "bring it back if it was evicted: by copying it back from host memory (reload), or by "
    "running the ops of the `recompute` region, which ends by defining %t.",
    _no_results, 1, 1, 0, attrs={"reload": "bool"}))


VERSIONS = register(OpDef(
    "schedule.versions",
    "`schedule.versions() {funcs = [@main.v1, ...]}`: other orders of this function's ops; "
    "for each binding the runtime runs the order with the lowest peak (this function on "
    "ties).",
    _no_results, 0, 0, 0, attrs={"funcs": "symrefs"}))
