"""Fingerprints: what the shape analysis of a function reads, as a hashable value.

A run analyzes the same listing more than once (the ``analyze`` pass, then the runtime's
reference copy of the listing as written; ``schedule`` and ``remat`` the analyzed one),
and the analysis of the paper-size training step costs about 0.2 s each time. Reusing an
earlier analysis is sound only when everything it read is the same, so the key is made
of the contents (op names, operands, result values with their types, attributes,
regions, locations, the shape graph, the mesh), not of object identities: IR objects
are mutable, and the JAX importer rewrites result types and the shape graph in place
between two analyses of one module. A key costs one walk over the ops, a few percent of
an analysis.
"""
from __future__ import annotations

import gc
from collections import Counter, OrderedDict
from contextlib import contextmanager
from dataclasses import fields
from operator import attrgetter
from typing import Any, Callable, Hashable, Iterator

from bladec.ir import Func, Loc, Module, Op, ShapeGraph, TensorType, Value


def freeze(value: Any) -> Hashable:
    """An attribute value as a hashable one: lists as tuples, dicts as sorted items
    (the parser gives tuples and scalars; passes may build lists)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    return value


# Types, values and locations as tuples of their fields, which hash in C: hashing the
# frozen dataclasses themselves runs their generated __hash__ in Python, a few times per op
# (a third of the time of a key on a 10,000-op listing). Every field is taken, so a field
# added to one of them joins the key (tests/passes/test_schedule_scale.py checks the Value's).
_type_key = attrgetter(*(f.name for f in fields(TensorType)))
_loc_key = attrgetter(*(f.name for f in fields(Loc)))


def value_key(v: Value) -> tuple:
    """A value (an argument, an op's result) by its fields: name, type, donation."""
    return (v.name, _type_key(v.type), v.donated)


def op_key(op: Op) -> tuple:
    """One op as the analysis sees it, its regions included."""
    regions = tuple((name, tuple(op_key(o) for o in ops)) for name, ops in op.regions.items()) \
        if op.regions else ()
    attrs = tuple(sorted(op.attrs.items())) if op.attrs else ()
    try:
        hash(attrs)   # (the parser's attributes are: the common case, no recursion)
    except TypeError:
        attrs = freeze(op.attrs)
    return (op.name, tuple(op.operands), tuple(map(value_key, op.results)), attrs, regions,
            _loc_key(op.loc))


def graph_key(graph: ShapeGraph | None) -> tuple | None:
    """The ``@symbolic_shape_graph``: declarations with ranges, relations, locations."""
    if graph is None:
        return None
    return (tuple((d.name, d.min, d.max, _loc_key(d.loc)) for d in graph.decls),
            tuple((r.lhs, r.kind, tuple(r.args), _loc_key(r.loc)) for r in graph.relations),
            _loc_key(graph.loc))


def exact_key(module: Module, func: Func) -> tuple:
    """The key of the analysis of ``func`` as it is: its ops in their order."""
    return (True, *_common(module, func), tuple(op_key(op) for op in func.ops))


def loose_key(module: Module, func: Func, counted: Callable[[Op], bool]) -> tuple:
    """The key of an analysis that does not depend on the order of the ops (shapes.py):
    the ops that ``counted`` selects, as a multiset."""
    keys = Counter(op_key(op) for op in func.ops if counted(op))
    return (False, *_common(module, func), frozenset(keys.items()))


def _common(module: Module, func: Func) -> tuple:
    return (graph_key(module.shape_graph), module.mesh, tuple(map(value_key, func.args)),
            _loc_key(func.loc))


class Reuse:
    """The last few analyses, each under the key of what it read (``exact``: the ops in
    their order; else the order-free key), for :func:`bladec.symbolic.shapes.analyze_shapes`.

    A key is one walk of the ops (about 7 ms on the paper-size step); most analyses of a
    run find nothing to reuse (a listing loaded already optimized, the listing as written
    before any pass), so a look-up first asks a near key that costs no walk of the ops
    (how many ops ``counted`` selects, the shape graph, the arguments) and walks them only
    where an analysis kept has the same. The keys are a few small tuples per op, none in a
    cycle: the collector is off while they are built, as in the parser (on a 10,000-op
    listing its passes took three quarters of the time of a key). An attribute that can
    not be hashed: nothing is reused or kept.
    """

    def __init__(self, entries: int, counted: Callable[[Op], bool]) -> None:
        self.entries = entries
        self.counted = counted
        self._kept: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()  # key -> near, value

    def get(self, module: Module, func: Func) -> Any | None:
        """The analysis kept for ``func`` as it is now, or None."""
        near = self._near_key(module, func)
        if not any(n == near for n, _ in self._kept.values()):
            return None
        try:
            with _no_collector():
                key = loose_key(module, func, self.counted)
                found = self._kept.get(key)
                if found is None:   # (the exact key only where the loose one misses)
                    key = exact_key(module, func)
                    found = self._kept.get(key)
        except TypeError:   # an attribute that can not be hashed: nothing to reuse
            return None
        if found is None:
            return None
        self._kept.move_to_end(key)
        return found[1]

    def put(self, module: Module, func: Func, value: Any, order_free: bool) -> None:
        """Keep ``value``, the analysis of ``func`` as it is now (``order_free``: the same
        for its ops in any order); nothing where an attribute can not be hashed."""
        try:
            with _no_collector():
                key = loose_key(module, func, self.counted) if order_free else \
                    exact_key(module, func)
            hash(key)
        except TypeError:
            return
        if key in self._kept:   # (kept already: only newer now)
            self._kept.move_to_end(key)
            return
        self._kept[key] = (self._near_key(module, func), value)
        while len(self._kept) > self.entries:
            self._kept.popitem(last=False)

    def _near_key(self, module: Module, func: Func) -> tuple:
        return (sum(map(self.counted, func.ops)), *_common(module, func))


@contextmanager
def _no_collector() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
