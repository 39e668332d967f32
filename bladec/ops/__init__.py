"""The op registry: what each op of the listing language means.

Each op is an :class:`OpDef`: its arity, its attributes, and a shape rule. A shape rule
is written once over :class:`SymbolicExpr` dims and serves twice: the verifier runs it
with the listing's static dims (a mismatch of two known numbers is an error) and the
symbolic analysis runs it with every dim bound to a symbol (an equality becomes a
relation). An op's adjoint rule (reverse mode, the ``grad`` pass) sits beside its shape
rule, written with bladec/adjoint.py's builder. Families of ops live in the modules
of this folder (the gathers and scatters in indexing/), over the registry in registry.py;
docs/ops.md is written from the ``doc`` strings here.
"""
from bladec.ops.registry import (ATTR_KINDS, REGISTRY, VARIADIC, Dims, FlopRule, OpDef,  # noqa: F401
                                 RelationSink, RuleResult, ShapeCtx, apply_rule, lookup, numel,
                                 register)
# the families, imported so that they register (in this order: the registry's)
from bladec.ops import elementwise, shape, contraction, reduction  # noqa: F401
from bladec.ops.indexing import row  # noqa: F401
from bladec.ops import annotation, collective, special, selection  # noqa: F401
from bladec.ops.indexing import addressing  # noqa: F401
from bladec.ops import window, loop  # noqa: F401
