"""Lazy values and cells: what a per-instance model calls while it is being traced.

A model is plain Python over one instance's structure (a tree, a sequence, a loop with
a fixed bound) that calls *cells*, JAX functions of one invocation's arrays. While
bladec.autobatch traces an instance, a cell call runs nothing: it records an
invocation in the :class:`Recording` and returns :class:`Lazy` placeholders, one per
output leaf, each naming a row of a state buffer (one buffer per leaf shape and dtype)
that the batched kernels will write. The depth of each invocation (one more than its
deepest lazy operand, 0 without one) is computed here, inline, as ACRoBat does: the
schedule is then a sort by depth, never a walk over the graph of invocations.

A cell argument's leaves are of three kinds: :class:`Lazy` (another invocation's
result: read from a state buffer through an index array), *shared* (a leaf of the
parameters the autobatched call was given: every invocation reads the same array, so it
is passed whole and never gathered), and *data* (anything else: a word id, a label, a
NumPy array: collected per batch into a table and read through an index array too).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from bladec.batching.recorder import (DATA, LAZY, MISS, PER_CELL, SHARED_LEAF, recorder,
                                      subtree_codes)
from bladec.errors import BladecError

BufferKey = tuple[tuple[int, ...], str]      # (leaf shape, dtype name)


class Lazy:
    """One leaf of a cell's output in a recorded instance: a row of a state buffer.

    It has a shape and a dtype but no value until the batch runs; using it as an array
    (arithmetic, ``float()``, ``if``) outside a cell is an error, since the point of a
    trace is that nothing runs until every instance of the batch is recorded."""
    __slots__ = ("code", "row", "depth", "recording")

    def __init__(self, code: int, row: int, depth: int, recording: "Recording") -> None:
        self.code, self.row, self.depth, self.recording = code, row, depth, recording

    @property
    def key(self) -> BufferKey:
        """The state buffer: the leaf's shape and dtype."""
        return self.recording.keys[self.code >> 2]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.key[0]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.key[1])

    def __repr__(self) -> str:
        return f"Lazy({self.key[1]}{list(self.key[0])}, row {self.row}, depth {self.depth})"

    def _refuse(self, *_: Any) -> Any:
        raise BladecError("a lazy value (a cell's result while bladec.autobatch traces an "
                          "instance) has no value yet: compute with it inside a cell, and "
                          "branch only on the instance's structure (or mask inside a cell)")

    __bool__ = __float__ = __int__ = __index__ = __array__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = _refuse
    __getitem__ = __neg__ = __abs__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse


class Group:
    """The invocations of one cell with one signature (operand kinds, shapes, and which
    shared leaves): the unit that one batched kernel serves. ``flat`` holds, per
    invocation, ``width`` ints: the rows of its lazy operands, then the rows of its
    data operands, then the rows of its outputs (one flat list, extended per invocation:
    cheaper to record than a tuple per invocation and read by NumPy in one go);
    ``depths`` its depth."""

    def __init__(self, cell: "Cell", signature: tuple, in_tree: Any, kinds: tuple,
                 out_keys: tuple[BufferKey, ...], out_tree: Any,
                 out_codes: tuple[int, ...]) -> None:
        self.cell, self.signature, self.in_tree = cell, signature, in_tree
        self.kinds = kinds                    # per input leaf: ("lazy"|"data", key) or
                                              # ("shared", parameter index)
        self.out_keys, self.out_tree, self.out_codes = out_keys, out_tree, out_codes
        self.out_numbers = tuple(c >> 2 for c in out_codes)
        # how the outputs are handed back: one Lazy, a flat tuple of them, or a pytree
        self.out_form = 0 if out_tree.num_nodes == 1 and out_tree.num_leaves == 1 else \
            1 if out_tree == _tuple_tree(len(out_codes)) else 2
        # lists while the batch is traced, arrays after (Recording.finish)
        self.flat: list[int] | np.ndarray = []
        self.depths: list[int] | np.ndarray = []
        self.order: list[int] | np.ndarray = []   # recording order (the depth ablation)
        self.operand_keys = tuple(k[1] for k in kinds if k[0] == "lazy")
        self.data_keys = tuple(k[1] for k in kinds if k[0] == "data")
        self.width = len(self.operand_keys) + len(self.data_keys) + len(out_codes)
        self.shared = tuple(k[1] for k in kinds if k[0] == "shared")
        self.shared_specs: tuple = ()         # (shape, dtype) of each shared leaf
        # what a kernel depends on, the same in every batch (``signature`` numbers the
        # buffers in the order one recording met them)
        self.identity: tuple = (cell, in_tree, kinds)

    @property
    def count(self) -> int:
        """Invocations recorded."""
        return len(self.depths)

    def avals(self, lanes: int | None = None) -> list[Any]:
        """The cell's input leaves as ``jax.ShapeDtypeStruct``\\ s: the shared ones as
        they are, the others one invocation's (``lanes`` None) or ``lanes``
        invocations'."""
        import jax
        shared = iter(self.shared_specs)
        out = []
        for kind, key in self.kinds:
            shape, dtype = next(shared) if kind == "shared" else (
                key[0] if lanes is None else (lanes, *key[0]), key[1])
            out.append(jax.ShapeDtypeStruct(shape, np.dtype(dtype)))
        return out

    @property
    def slots(self) -> np.ndarray:
        """The rows per invocation, one line each (``count`` x ``width``)."""
        return np.asarray(self.flat, np.int32).reshape(len(self.depths), self.width)


def _tuple_tree(n: int) -> Any:
    return _tree.structure((0,) * n)


_PYTHON_SCALARS = {int: "int32", float: "float32", bool: "bool"}
# data an invocation is deduplicated on (Recording.invoke): equal values are the same
# argument (not so for floats: 0.0 == -0.0); the table code in the key tells the types
_INTEGRAL = frozenset({int, bool, np.int8, np.int16, np.int32, np.int64, np.uint8,
                       np.uint16, np.uint32, np.uint64, np.bool_})


class _Fallback(Exception):
    """An argument the fast path does not read (a pytree node other than a tuple, a
    list or a dict of parameters): the invocation is recorded by the general path."""


class Recording:
    """The invocations of every instance of one batch, grouped by signature, with the
    rows of each state buffer and data table allocated as they are recorded. Rows 0 and 1
    of every state buffer are reserved: padded lanes of a bucket read row 0 (zeros,
    never written) and write row 1, so that state buffers can be kept from batch to
    batch without clearing them (every other row read in a batch is written first in
    it). Row 0 of a data table is a spare for padded lanes to read.

    ``subtrees``: id of a container of the parameters (a dict, list or tuple whose
    leaves are all parameters) -> its number, so that passing ``params["node"]`` to a
    cell is one step of the fast path, not a flattening of the dict per invocation
    (:func:`subtree_codes`)."""

    def __init__(self, shared_ids: dict[int, int], params: Any = None,
                 dedupe: bool = True, specialize: bool = True) -> None:
        self.shared_ids = shared_ids          # id(parameter leaf) -> its flat index
        # per cell: recorders generated for its argument patterns (recorder.py), tried
        # before the general path; None: none are made (the ablation)
        self.recorders: dict[Any, list[Callable]] | None = {} if specialize else None
        # invocations that read no lazy value, keyed by their group and integer data:
        # their outputs (_deduped)
        self._pure: dict[tuple, Any] | None = {} if dedupe else None
        self.subtrees = subtree_codes(params, shared_ids)
        self.groups: dict[tuple, Group] = {}
        self._fast: dict[tuple, Group] = {}   # fast key (invoke) -> its group
        self.keys: list[BufferKey] = []       # buffer (and table) keys by number
        self._numbers: dict[BufferKey, int] = {}
        self._next_row: list[int] = []        # per buffer number: rows used (0, 1 spare)
        self._tables: dict[BufferKey, list[Any]] = {}
        self._table_of: dict[Any, tuple[int, list[Any]]] = {}   # scalar type -> table
        self._arrays: dict[tuple, tuple[int, list[Any]]] = {}   # (shape, dtype) -> table
        self.invocations = 0
        self.starts: list[int] = []           # per instance: its first invocation's number

    def finish(self) -> None:
        """The trace is over: its memo of deduplicated outputs goes (it holds lazy
        values, which hold the recording: a cycle that only Python's collector would
        free, where reference counting frees the rest of the batch's records), and each
        group's records become arrays once (the passes after the trace, compose.py and
        schedule.py, read them as arrays: converted per reading, a TreeLSTM batch of
        64 converted its node group's 9,000 ints three times)."""
        self._pure = None
        self.release()
        self.recorders = None     # they hold the groups' lists, which become arrays
        for group in self.groups.values():
            group.flat = np.asarray(group.flat, np.int32)
            group.depths = np.asarray(group.depths, np.int64)
            group.order = np.asarray(group.order, np.int64)

    def release(self) -> None:
        """The cells' hold on this recording's recorders dropped (at its end, or when
        its trace stops on an error)."""
        for cell in self.recorders or ():
            if cell.live is not None and cell.live[0] is self:
                cell.live = None

    def group_of(self, cell: "Cell", in_tree: Any, kinds: list[tuple[str, Any]]) -> Group:
        """The batch's group of ``cell`` on leaves of these ``kinds`` (per leaf:
        ``("data", buffer key)`` or ``("shared", parameter index)``), made where it is
        new: the groups that compose.py adds after the trace."""
        codes = [self.number(key) * 4 + DATA if kind == "data" else key * 4 + SHARED_LEAF
                 for kind, key in kinds]
        signature = (cell, in_tree, *codes)
        found = self.groups.get(signature)
        if found is None:
            found = self.groups[signature] = self._group(cell, signature, in_tree)
        return found

    def number(self, key: BufferKey) -> int:
        n = self._numbers.get(key)
        if n is None:
            n = self._numbers[key] = len(self.keys)
            self.keys.append(key)
            self._next_row.append(2)
        return n

    @property
    def rows(self) -> dict[BufferKey, int]:
        """Rows used per state buffer (the spare rows 0 and 1 included)."""
        return {self.keys[n]: r for n, r in enumerate(self._next_row) if r > 2}

    @property
    def data(self) -> dict[BufferKey, list[Any]]:
        """Per data table: its rows (row 0 a spare ``None``)."""
        return {k: v for k, v in self._tables.items() if len(v) > 1}

    def _table(self, leaf: Any) -> tuple[int, list[Any]]:
        """The data table for a leaf (Python and NumPy scalars by type, arrays by
        shape/dtype)."""
        t = type(leaf)
        found = self._table_of.get(t)
        if found is not None:
            return found
        if t in _PYTHON_SCALARS:
            key: BufferKey = ((), _PYTHON_SCALARS[t])
        else:
            array = np.asarray(leaf)
            if array.dtype == object:
                raise BladecError(f"cannot pass a {t.__name__} to a cell (cell arguments "
                                  f"are arrays, numbers and lazy values)")
            dtype = {"float64": "float32", "int64": "int32"}.get(array.dtype.name,
                                                                 array.dtype.name)
            key = (tuple(array.shape), dtype)
        code = self.number(key) * 4 + DATA
        table = self._tables.setdefault(key, [None])
        if t in _PYTHON_SCALARS or isinstance(leaf, np.generic):
            self._table_of[t] = (code, table)     # one table per scalar type
        return code, table

    def invoke(self, cell: "Cell", args: tuple) -> Any:
        """Record one invocation: its group, operand rows, output rows and depth, and
        return its outputs as lazy values. The fast path reads the arguments without
        flattening them as pytrees: its key (the cell and, per argument, a lazy value's
        buffer, a data table, a parameter subtree or a tuple's length) names the group
        that the general path found for the same key the first time."""
        key: list[Any] = [cell]
        rows: list[int] = []      # lazy rows, then data rows (appended after the walk)
        data: list[Any] = []
        try:
            depth = self._walk(args, key, rows, data)
        except _Fallback:
            return self._invoke_general(cell, args)
        fast = tuple(key)
        group = self._fast.get(fast)
        if group is None:
            return self._invoke_general(cell, args, fast)
        return self._deduped(group, rows, data, depth)

    def _deduped(self, group: Group, rows: list[int], data: list[tuple[list[Any], Any]],
                 depth: int) -> Any:
        """Record an invocation of ``group`` (``rows``: its lazy operands' rows; its
        data appended to their tables here), or return the outputs of the same
        invocation recorded earlier in the batch (:meth:`_pure_key`)."""
        pure = self._pure_key(group, data) if depth < 0 else None
        if pure is not None:
            outs = self._pure.get(pure)
            if outs is not None:
                return outs
        for table, leaf in data:
            rows.append(len(table))
            table.append(leaf)
        outs = self._record(group, rows, depth)
        if pure is not None:
            self._pure[pure] = outs
        return outs

    def _pure_key(self, group: Group, data: list[tuple[list[Any], Any]]) -> tuple | None:
        """The key an invocation that reads no lazy value is deduplicated on (its group
        and its data), or None where its data are not all integers (a leaf's word id).
        A cell is a JAX function, so an invocation with the same arguments has the same
        outputs, and the batch computes them once (a tree LSTM's repeated words); both
        trace paths key on the group object (hashed by identity: a signature tuple, its
        pytree definition among it, cost a hash per invocation)."""
        if self._pure is None:
            return None
        key: list[Any] = [group]
        for _, leaf in data:
            if type(leaf) not in _INTEGRAL:
                return None
            key.append(leaf)
        return tuple(key)

    def _walk(self, items: Any, key: list[Any], rows: list[int], data: list[Any]) -> int:
        """The fast path over a sequence of arguments (see :meth:`invoke`): the deepest
        lazy operand's depth (-1 without one)."""
        depth = -1
        for x in items:
            t = type(x)
            if t is Lazy:
                if x.recording is not self:
                    raise _Fallback   # the general path says why
                key.append(x.code)
                rows.append(x.row)
                if x.depth > depth:
                    depth = x.depth
                continue
            index = self.subtrees.get(id(x))
            if index is not None:
                key.append(index)
            elif t is tuple or t is list:
                key.append(-2 * len(x) - (t is list) - 1)
                for y in x:   # a cell's state pair (h, c): its lazy values read inline
                    if type(y) is Lazy and y.recording is self:
                        key.append(y.code)
                        rows.append(y.row)
                        if y.depth > depth:
                            depth = y.depth
                    else:     # anything else as the walk reads it
                        d = self._walk((y,), key, rows, data)
                        if d > depth:
                            depth = d
            else:
                found = self._table_of.get(t)
                if found is None:
                    if t is not np.ndarray:
                        raise _Fallback
                    found = self._array_table(x)
                key.append(found[0])
                data.append((found[1], x))
        return depth

    def _array_table(self, x: np.ndarray) -> tuple[int, list[Any]]:
        shape_type = (x.shape, x.dtype)
        found = self._arrays.get(shape_type)
        if found is None:
            found = self._arrays[shape_type] = self._table(x)
        return found

    def _record(self, group: Group, rows: list[int], depth: int) -> Any:
        next_row = self._next_row
        outs = []
        depth += 1
        for n, code in zip(group.out_numbers, group.out_codes):
            r = next_row[n]
            next_row[n] = r + 1
            rows.append(r)
            outs.append(Lazy(code, r, depth, self))
        group.flat += rows
        group.depths.append(depth)
        group.order.append(self.invocations)
        self.invocations += 1
        form = group.out_form
        if form == 1:
            return tuple(outs)
        return outs[0] if form == 0 else _tree.unflatten(group.out_tree, outs)

    def _invoke_general(self, cell: "Cell", args: tuple, fast: tuple | None = None) -> Any:
        """Record one invocation by flattening its arguments as pytrees (the first
        invocation of a fast key, and arguments the fast path does not read)."""
        leaves, in_tree = _tree.flatten(args)
        sig: list[Any] = [cell, in_tree]
        lazy_rows: list[int] = []
        data: list[tuple[list[Any], Any]] = []
        depth = -1
        shared_ids = self.shared_ids
        for leaf in leaves:
            if type(leaf) is Lazy:
                if leaf.recording is not self:
                    raise BladecError(f"cell {cell.name}: a lazy value of another trace "
                                      f"(values do not cross batches)")
                sig.append(leaf.code)
                lazy_rows.append(leaf.row)
                if leaf.depth > depth:
                    depth = leaf.depth
                continue
            index = shared_ids.get(id(leaf))
            if index is not None:
                sig.append(index * 4 + SHARED_LEAF)
                continue
            code, table = self._table(leaf)
            sig.append(code)
            data.append((table, leaf))
        signature = tuple(sig)
        group = self.groups.get(signature)
        if group is None:
            group = self.groups[signature] = self._group(cell, signature, in_tree)
        if fast is not None:
            self._fast[fast] = group
        outs = self._deduped(group, lazy_rows, data, depth)
        if fast is not None and self.recorders is not None:
            made = self.recorders.get(cell)
            if made is None:
                made = self.recorders[cell] = []
                cell.live = (self, made)
            if len(made) < PER_CELL:
                fn = recorder(self, group, args, Lazy, _INTEGRAL, _tree.unflatten)
                if fn is not None:
                    made.append(fn)
        return outs

    def _group(self, cell: "Cell", signature: tuple, in_tree: Any) -> Group:
        kinds = []
        for code in signature[2:]:
            kind, n = code & 3, code >> 2
            kinds.append(("shared", n) if kind == SHARED_LEAF else
                         ("lazy" if kind == LAZY else "data", self.keys[n]))
        out_keys, out_tree = cell.out_spec(in_tree, tuple(kinds))
        out_codes = tuple(self.number(k) * 4 + LAZY for k in out_keys)
        group = Group(cell, signature, in_tree, tuple(kinds), out_keys, out_tree, out_codes)
        shared = _SHARED[-1]
        group.shared_specs = tuple((tuple(np.shape(shared[i])), np.dtype(shared[i].dtype).name)
                                   for i in group.shared)
        group.identity = (cell, in_tree, group.kinds, group.shared_specs)
        return group


class _Tree:
    """jax.tree_util's flatten and unflatten, looked up once (invoke is the hot path:
    one call per cell invocation of every instance)."""

    def __getattr__(self, name: str) -> Any:
        import jax
        self.flatten = jax.tree_util.tree_flatten
        self.unflatten = jax.tree_util.tree_unflatten
        self.structure = jax.tree_util.tree_structure
        return getattr(self, name)


_tree = _Tree()
_ACTIVE: list[Recording] = []


class Cell:
    """A JAX function of one invocation's arrays, batched by bladec.batching. Called
    outside a trace it runs as the plain function (the unbatched reference)."""

    def __init__(self, fn: Callable, name: str | None = None) -> None:
        if not callable(fn):
            raise BladecError(f"autobatch.cell needs a function, not {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "cell")
        self._shapes: dict[tuple, tuple] = {}
        # (the recording in progress, its recorders for this cell): read by each call
        # without a lookup in the recording (Recording.release drops it)
        self.live: tuple[Recording, list[Callable]] | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> Any:
        if _ACTIVE:
            recording = _ACTIVE[-1]
            live = self.live
            if live is not None and live[0] is recording:
                for record in live[1]:
                    out = record(args)
                    if out is not MISS:
                        return out
            return recording.invoke(self, args)
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"<autobatch cell {self.name}>"

    def abstract_args(self, in_tree: Any, kinds: tuple, shared: list[Any]) -> tuple:
        """The cell's arguments for one invocation as ``jax.ShapeDtypeStruct``\\ s."""
        import jax
        leaves = []
        for kind, key in kinds:
            if kind == "shared":
                x = shared[key]
                leaves.append(jax.ShapeDtypeStruct(np.shape(x), x.dtype))
            else:
                leaves.append(jax.ShapeDtypeStruct(key[0], np.dtype(key[1])))
        return jax.tree_util.tree_unflatten(in_tree, leaves)

    def out_spec(self, in_tree: Any, kinds: tuple) -> tuple[tuple[BufferKey, ...], Any]:
        """The state buffers of the outputs (shape and dtype per leaf) and their pytree
        structure, from ``jax.eval_shape`` once per signature."""
        shared = _SHARED[-1]
        memo = (in_tree, kinds, tuple((np.shape(shared[n]), str(shared[n].dtype))
                                      for kind, n in kinds if kind == "shared"))
        if memo not in self._shapes:
            import jax
            try:
                out = jax.eval_shape(self.fn, *self.abstract_args(in_tree, kinds, shared))
            except Exception as exc:   # the user's cell failed on these shapes
                raise BladecError(f"cell {self.name} fails on its arguments' shapes: "
                                  f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                                  ) from None
            leaves, out_tree = jax.tree_util.tree_flatten(out)
            keys = tuple((tuple(x.shape), np.dtype(x.dtype).name) for x in leaves)
            self._shapes[memo] = (keys, out_tree)
        return self._shapes[memo]


_SHARED: list[list[Any]] = []     # the flat parameter leaves of the trace in progress


class tracing:
    """``with tracing(recording, shared_leaves):`` cell calls record into ``recording``."""

    def __init__(self, recording: Recording, shared: list[Any]) -> None:
        self.recording, self.shared = recording, shared

    def __enter__(self) -> Recording:
        _ACTIVE.append(self.recording)
        _SHARED.append(self.shared)
        return self.recording

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.pop()
        _SHARED.pop()
        self.recording.release()


def cell(fn: Callable | None = None, *, name: str | None = None) -> Any:
    """Mark a JAX function as a cell: ``@autobatch.cell`` or ``@autobatch.cell(name=...)``.
    Its arguments are pytrees of arrays for one invocation; leaves of the autobatched
    call's parameters are shared by every invocation (never gathered)."""
    def wrap(f: Callable) -> Cell:
        return Cell(f, name)
    return wrap if fn is None else wrap(fn)
