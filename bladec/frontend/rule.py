"""The table from JAX primitive to translation rule, filled by :mod:`bladec.frontend.rules`.

Its own module, holding no rule, so that the translator (which looks rules up) and the
rule families (which use the translator) do not import each other.
"""
from __future__ import annotations

from typing import Any, Callable

Shape = tuple            # a JAX shape: ints and dimension expressions
Params = dict            # the equation's parameters (``eqn.params``)
Outs = list              # one (shape, listing dtype) per result of the equation
Result = Any             # a value name, a Lit, or a list of them (one per result)
# A rule: (translator, inputs (value names or Lits), params, shape and dtype of the first
# result, all results) -> the result value(s).
Rule = Callable[..., Result]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register a translation rule for the primitives ``names``."""
    def deco(fn: Rule) -> Rule:
        for n in names:
            if n in RULES:
                raise ValueError(f"primitive {n} has two rules")
            RULES[n] = fn
        return fn
    return deco
