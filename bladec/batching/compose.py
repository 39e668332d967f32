"""Invocations whose every lazy operand comes from a cell that reads one integer,
recorded again as invocations of a composed cell that reads those integers.

Why: tabulation (weights/tabulate.py) makes a table of what a cell computes from the
weights and one integer operand. A TreeLSTM's node reads its children's states, lazy
values, so nothing of its product is tabulated, although a node whose children are
both leaves is a function of two words: ``U @ [h(w1); h(w2)]`` is ``U[:, :H] @ h(w1) +
U[:, H:] @ h(w2)``, two rows of two tables. Recorded as an invocation of ``node`` on
``leaf(w1)`` and ``leaf(w2)`` composed, such a node is tabulated whole: a third of a
random binary tree's nodes (those over two leaves) run no product at all.

The pass runs on a traced batch (:func:`compose`), before it is scheduled: per group of
invocations, NumPy finds those whose lazy operands are all outputs of *producers*
(groups that read no lazy value and one integer, and that are tabulated: model.py's
``tabulated`` says which) and moves them into a group of the composed cell, where that
group is tabulated too.
That group reads, per operand, the row of the producer's integer in the data table
the producer read it from, and writes the consumer's outputs, at the consumer's depth.
Only invocations with no lazy operand left are composed: a node over one leaf and one
node, composed, would split each depth's node calls in three (measured: more
launches, smaller products, and the same weights streamed three times, for a net
loss). A producer still runs where anything else reads its outputs.

Composed cells are made once per consumer cell, argument structure and producers (kept
on the consumer cell), so that every batch's composed group has the same identity and
finds its kernels compiled.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from bladec.batching.value import Cell, Group, Lazy, Recording
from bladec.batching.weights.tabulate import indexes

# an operand read through its producer: the producer's cell, argument structure and
# leaf kinds ("shared" or "data"), where each of its shared leaves is in the composed
# cell's last argument, and which of its output leaves the operand is
Inlined = tuple[Cell, Any, tuple[str, ...], tuple[int, ...], int]


def compose(recording: Recording, tabulated: Callable[[Group], bool],
            outputs: list[Any]) -> None:
    """Move the invocations of ``recording`` whose lazy operands are all outputs of
    producers into groups of composed cells, where ``tabulated`` holds for both the
    producers and the composed group (in place; inside the trace's ``tracing`` block,
    which the new groups' shapes are taken in). ``outputs``: per instance, the model's
    output leaves (the producers' invocations they read stay)."""
    producers = [g for g in recording.groups.values()
                 if not g.operand_keys and len(g.data_keys) == 1 and
                 indexes(g.data_keys[0]) and g.count and tabulated(g)]
    if not producers:
        return
    made = _made_by(recording, producers)
    for group in list(recording.groups.values()):
        if group.operand_keys and all(k in made for k in group.operand_keys):
            _split(recording, group, producers, made, tabulated)
    _unread_dropped(recording, producers, outputs)


def _unread_dropped(recording: Recording, producers: list[Group], outputs: list[Any]
                    ) -> None:
    """The producers none of whose outputs anything reads any more (neither an
    invocation nor the model's outputs) dropped: their consumers compute them. A
    producer some of whose invocations are read runs whole: dropping the others saved
    0.5 ms a TreeLSTM batch of 64, and its calls' lanes then varied from batch to batch
    enough to compile a new bucket in 1 of 25 batches after warm-up (0 of 25 whole)."""
    read = {key: np.zeros(rows, bool) for key, rows in recording.rows.items()}
    for group in recording.groups.values():
        if group.operand_keys:
            slots = group.slots
            for c, key in enumerate(group.operand_keys):
                read[key][slots[:, c]] = True
    for leaves in outputs:
        for leaf in leaves:
            if type(leaf) is Lazy:
                read[leaf.key][leaf.row] = True
    for group in producers:
        slots = group.slots
        kept = np.zeros(len(slots), bool)
        for j, key in enumerate(group.out_keys):
            kept |= read[key][slots[:, 1 + j]]
        if not kept.any():
            del recording.groups[group.signature]


def _made_by(recording: Recording, producers: list[Group]) -> dict[Any, np.ndarray]:
    """Per state buffer the producers write: per row, the producer (its place in
    ``producers`` plus one, 0 for none), the output leaf and the producer's data row."""
    rows = recording.rows
    made: dict[Any, np.ndarray] = {}
    for p, group in enumerate(producers, start=1):
        slots = group.slots   # the data row, then the output rows
        for j, key in enumerate(group.out_keys):
            table = made.get(key)
            if table is None:
                table = made[key] = np.zeros((rows[key], 3), np.int64)
            table[slots[:, 1 + j]] = np.stack(
                [np.full(len(slots), p), np.full(len(slots), j), slots[:, 0]], axis=1)
    return made


def _split(recording: Recording, group: Group, producers: list[Group],
           made: dict[Any, np.ndarray], tabulated: Callable[[Group], bool]) -> None:
    """``group``'s invocations whose lazy operands all come from producers moved into
    composed groups, one per pattern of producers and output leaves, where the composed
    group is tabulated; the rest stay."""
    slots = group.slots
    lazy = len(group.operand_keys)
    # per invocation and lazy operand: (producer, output leaf, data row)
    sources = np.stack([made[key][slots[:, c]] for c, key in enumerate(group.operand_keys)],
                       axis=1)
    pattern = sources[:, :, :2].reshape(len(slots), 2 * lazy)
    left = np.all(pattern[:, 0::2] > 0, axis=1)
    if not left.any():
        return
    depths, order = group.depths, group.order   # arrays (Recording.finish)
    rest = ~left
    while left.any():   # one composed group per pattern of producers (most batches: one)
        row = pattern[np.argmax(left)]
        these = left & np.all(pattern == row, axis=1)
        left &= ~these
        chosen = [(producers[int(p) - 1], int(j)) for p, j in row.reshape(lazy, 2)]
        target = _composed_group(recording, group, chosen)
        if not tabulated(target):   # composed, it would compute its producers again
            rest |= these
            if not target.count:
                del recording.groups[target.signature]
            continue
        data_rows = iter(range(lazy, lazy + len(group.data_keys)))
        operand = iter(range(lazy))
        columns = []
        for kind, _ in group.kinds:   # the composed cell's data in its leaves' order
            if kind == "lazy":
                columns.append(sources[these, next(operand), 2])
            elif kind == "data":
                columns.append(slots[these, next(data_rows)])
        columns.extend(slots[these, lazy + len(group.data_keys) + k]
                       for k in range(len(group.out_keys)))
        _extend(target, np.stack(columns, axis=1), depths[these], order[these])
    group.flat = slots[rest].reshape(-1)
    group.depths, group.order = depths[rest], order[rest]
    if not len(group.depths):
        del recording.groups[group.signature]


def _extend(group: Group, slots: np.ndarray, depths: np.ndarray, order: np.ndarray
            ) -> None:
    """Invocations added to a group as arrays (Group.slots reads them as they are)."""
    group.flat = np.concatenate([np.asarray(group.flat, np.int32),
                                 slots.astype(np.int32).reshape(-1)])
    group.depths = np.concatenate([np.asarray(group.depths, np.int64), depths])
    group.order = np.concatenate([np.asarray(group.order, np.int64), order])


def _composed_group(recording: Recording, group: Group,
                    chosen: list[tuple[Group, int]]) -> Group:
    """The group (new in this batch or met before in it) of ``group``'s cell composed
    with ``chosen`` (per lazy operand: its producer and output leaf)."""
    places: dict[int, int] = {}   # parameter index -> place in the last argument
    inlined: list[Inlined] = []
    kinds: list[tuple[str, Any]] = []
    lazy = iter(chosen)
    for kind, key in group.kinds:
        if kind == "lazy":
            producer, j = next(lazy)
            refs = tuple(places.setdefault(i, len(places))
                         for k, i in producer.kinds if k == "shared")
            inlined.append((producer.cell, producer.in_tree,
                            tuple(k for k, _ in producer.kinds), refs, j))
            kinds.append(("data", producer.data_keys[0]))
        else:
            kinds.append((kind, key))
    kinds.extend(("shared", i) for i in places)
    positions = tuple(i for i, (kind, _) in enumerate(group.kinds) if kind == "lazy")
    cell = _composed_cell(group.cell, group.in_tree, positions, tuple(inlined))
    from jax import tree_util
    leaves = group.in_tree.num_leaves
    in_tree = tree_util.tree_structure(
        (*tree_util.tree_unflatten(group.in_tree, [0] * leaves), (0,) * len(places)))
    return recording.group_of(cell, in_tree, kinds)


def _composed_cell(consumer: Cell, in_tree: Any, lazy: tuple[int, ...],
                   inlined: tuple[Inlined, ...]) -> Cell:
    """One cell per consumer, argument structure and producers (kept on the consumer,
    so that every batch records the same cell and finds its kernels). ``lazy``: the
    places of the operands ``inlined`` replaces among the consumer's argument leaves."""
    memo = consumer.__dict__.setdefault("_composed", {})
    key = (in_tree, lazy, inlined)
    found = memo.get(key)
    if found is not None:
        return found

    def fn(*args: Any) -> Any:
        from jax import tree_util
        *own, extra = args
        flat = tree_util.tree_leaves(tuple(own))
        for pos, (cell, tree, kinds, refs, j) in zip(lazy, inlined):
            shared = iter(refs)
            operands = [extra[next(shared)] if kind == "shared" else flat[pos]
                        for kind in kinds]
            flat[pos] = tree_util.tree_leaves(
                cell.fn(*tree_util.tree_unflatten(tree, operands)))[j]
        return consumer.fn(*tree_util.tree_unflatten(in_tree, flat))

    names = ",".join(cell.name for cell, *_ in inlined)
    found = memo[key] = Cell(fn, name=f"{consumer.name}<{names}>")
    return found
