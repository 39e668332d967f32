"""Recorders generated per argument pattern: the trace's hot path as straight-line code.

A cell invocation is recorded once per invocation of every instance (a TreeLSTM batch of
64: 3,200 of them), and the general fast path (``Recording.invoke``) walks its arguments
item by item to build a key, looks the key up, and only then records: about 3 us of
Python per invocation, 90% of the trace (the model's own recursion is 0.2 us of it).

Where a cell is called again and again with arguments of one pattern (a parameter
subtree, then tuples of lazy values of one buffer each, then an integer), the pattern
is compiled once into a Python function that checks exactly what the key would have
told (the same objects, types, tuple lengths, buffers and recording) and records the
invocation in the same order and with the same rows as the general path: the
records of a trace are the same with and without it (tests/batching/test_recorder.py).
Any argument outside the pattern makes it answer :data:`MISS`, and the general path
records that invocation as before (and says why where it is an error).

The source of a pattern depends only on its shape and its buffer codes; what one
recording binds (its group, tables, parameter ids) is passed to the compiled factory,
so a batch makes its recorders by calling factories, not by compiling.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

MISS = object()          # a recorder's answer for arguments outside its pattern
# recorders generated per cell: the patterns a cell is called with (a BiLSTM's first
# step and the others); a cell called with more records the rest by the general path
PER_CELL = 4

# A leaf's kind is coded as one int, so that a signature is a tuple of ints (cheap to
# hash once per invocation): 4k for a lazy value of buffer k, 4i+1 for shared
# parameter i, 4t+2 for data table t. The fast path's keys (Recording.invoke) add 4s+3
# for a whole subtree s of the parameters (a dict of weights passed as one argument) and
# a negative int for a tuple or list of n items.
LAZY, SHARED_LEAF, DATA, SUBTREE = 0, 1, 2, 3

_FACTORIES: dict[str, Callable] = {}     # source -> its compiled factory
_MAX_FACTORIES = 1024                    # (patterns are few: a bound, not a budget)


class _Builder:
    """The guards and reads of one pattern, written while walking one invocation's
    arguments the way ``Recording._walk`` does."""

    def __init__(self, recording: Any, lazy_type: type, integral: frozenset) -> None:
        self.recording, self.lazy_type, self.integral_types = recording, lazy_type, integral
        self.lines: list[str] = []
        self.lazies: list[str] = []      # names of the lazy operands, in walk order
        self.data: list[tuple[str, str]] = []   # (name, table binding), in walk order
        self.integral = True             # every data leaf of an integral type
        self.bound: dict[str, Any] = {}  # names the factory binds -> values
        self._names = 0

    def bind(self, value: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.bound)}"
        self.bound[name] = value
        return name

    def unpack(self, names: list[str], source: str) -> None:
        """``names = source``, a sequence of exactly that length (else MISS): an
        unpacking that fails costs less than a length check that passes."""
        if not names:
            self.lines.append(f"if len({source}): return MISS")
            return
        self.lines.append(f"try: {', '.join(names)}, = {source}")
        self.lines.append("except ValueError: return MISS")

    def fresh(self) -> str:
        self._names += 1
        return f"v{self._names}"

    def item(self, name: str, x: Any) -> bool:
        """Guard and read ``x`` (held in variable ``name``); False where the general
        path's walk would not take it."""
        rec = self.recording
        t = type(x)
        if t is self.lazy_type:
            if x.recording is not rec:
                return False
            self.lines.append(f"if type({name}) is not Lazy or {name}.code != {x.code} "
                              f"or {name}.recording is not rec: return MISS")
            self.lazies.append(name)
            return True
        if rec.subtrees.get(id(x)) is not None:   # the same parameters (held while the
            self.lines.append(f"if {name} is not {self.bind(x, 'P')}: return MISS")  # trace
            return True                                                  # runs)
        if t is tuple or t is list:
            kind = "tuple" if t is tuple else "list"
            names = [self.fresh() for _ in x]
            self.lines.append(f"if type({name}) is not {kind}: return MISS")
            self.unpack(names, name)
            return all(self.item(n, y) for n, y in zip(names, x))
        found = rec._table_of.get(t)
        if found is None:
            if t is not np.ndarray:
                return False
            found = rec._array_table(x)
            self.lines.append(f"if type({name}) is not ndarray or {name}.shape != "
                              f"{x.shape!r} or {name}.dtype != "
                              f"{self.bind(x.dtype, 'D')}: return MISS")
        else:
            self.lines.append(f"if type({name}) is not {self.bind(t, 'K')}: return MISS")
        self.integral = self.integral and t in self.integral_types
        self.data.append((name, self.bind(found[1], "T")))
        return True


def recorder(recording: Any, group: Any, args: tuple, lazy_type: type,
             integral: frozenset, unflatten: Callable) -> Callable[[tuple], Any] | None:
    """A function ``record(args)`` for the pattern of ``args``, just recorded by
    ``recording`` (value.Recording) as an invocation of ``group``: the invocation's
    outputs (``lazy_type`` values, in ``unflatten``'s tree where they are not one value
    or a flat tuple), or :data:`MISS`. Integer data of the types ``integral`` are
    deduplicated on as the recording does. None where the pattern has a part the
    general walk does not read."""
    b = _Builder(recording, lazy_type, integral)
    names = [f"a{i}" for i in range(len(args))]
    b.unpack(names, "args")
    if not all(b.item(n, x) for n, x in zip(names, args)):
        return None
    body = list(b.lines)
    pure = recording._pure is not None and not b.lazies and b.integral
    if pure:   # Recording._pure_key: the same group on the same integers
        body.append(f"key = (group, {''.join(n + ', ' for n, _ in b.data)})")
        body.append("found = memo.get(key)")
        body.append("if found is not None: return found")
    if b.lazies:
        body.append(f"d = {b.lazies[0]}.depth")
        for n in b.lazies[1:]:
            body.append(f"if {n}.depth > d: d = {n}.depth")
        body.append("d += 1")
    else:
        body.append("d = 0")
    rows = [f"{n}.row" for n in b.lazies]
    for i, (n, table) in enumerate(b.data):
        body.append(f"x{i} = len({table}); {table}.append({n})")
        rows.append(f"x{i}")
    outs = []
    made: list[str] = []            # the outputs made, each slot set in place
    taken: dict[int, int] = {}      # per buffer number: the outputs' rows taken from it
    for number, code in zip(group.out_numbers, group.out_codes):
        k = taken[number] = taken.get(number, 0) + 1
        row = f"r{number}" + (f" + {k - 1}" if k > 1 else "")
        rows.append(row)
        out = f"o{len(outs)}"
        outs.append(out)
        made.append(f"{out} = new(Lazy); {out}.code = {code}; {out}.row = {row}; "
                    f"{out}.depth = d; {out}.recording = rec")
    for number, k in taken.items():   # one read and write per buffer
        body.append(f"r{number} = nr[{number}]; nr[{number}] = r{number} + {k}")
    # (a lazy value's slots set here, not by its __init__: 90 against 140 ns a value,
    # two or more per invocation)
    body.extend(made)
    body.append(f"flat.extend(({', '.join(rows)},))")
    body.append("depths.append(d)")
    body.append("n = rec.invocations; order.append(n); rec.invocations = n + 1")
    form = group.out_form
    result = outs[0] if form == 0 else f"({', '.join(outs)},)" if form == 1 else \
        f"unflatten(out_tree, [{', '.join(outs)}])"
    if pure:
        body.append(f"out = memo[key] = {result}")
        body.append("return out")
    else:
        body.append(f"return {result}")
    params = ["Lazy", "rec", "group", "nr", "flat", "depths", "order", "memo", "MISS",
              "ndarray", "unflatten", "out_tree", "new", *b.bound]
    source = (f"def factory({', '.join(params)}):\n"
              f"    def record(args):\n" +
              "".join(f"        {line}\n" for line in body) +
              "    return record\n")
    factory = _FACTORIES.get(source)
    if factory is None:
        scope: dict[str, Any] = {}
        exec(compile(source, "<bladec.batching.recorder>", "exec"), scope)
        factory = scope["factory"]
        if len(_FACTORIES) < _MAX_FACTORIES:
            _FACTORIES[source] = factory
    return factory(lazy_type, recording, group, recording._next_row, group.flat,
                   group.depths, group.order, recording._pure, MISS, np.ndarray,
                   unflatten, group.out_tree, object.__new__, *b.bound.values())


def subtree_codes(params: Any, shared_ids: dict[int, int]) -> dict[int, int]:
    """Fast-path codes of the parameters: id of a leaf -> 4i+1 (its flat index i), id
    of a dict, list or tuple all of whose leaves are parameters -> 4s+3 (s numbers such
    containers). Other pytree nodes get none (the general path reads them)."""
    codes = {leaf: i * 4 + SHARED_LEAF for leaf, i in shared_ids.items()}
    if params is not None:
        _coded(params, shared_ids, codes)
    return codes


def _coded(x: Any, shared_ids: dict[int, int], codes: dict[int, int]) -> bool:
    """Whether ``x`` is a parameter or a container of parameters only (coding such
    containers in ``codes``). A function of the module, not a closure that calls itself:
    such a closure is a reference cycle, garbage only the collector frees."""
    t = type(x)
    if t is dict or t is list or t is tuple:
        children = x.values() if t is dict else x
        if all([_coded(c, shared_ids, codes) for c in children]):
            codes[id(x)] = len(codes) * 4 + SUBTREE
            return True
        return False
    return id(x) in shared_ids
