"""The per-batch schedule: which batched call runs which invocations, in what order.

Every invocation's depth was computed while its instance was traced (value.py), so the
schedule is array work: per group, a stable sort of the invocations by depth and a
split where the depth changes, each part padded to its bucket as one index array (the
rows of the operands and of the outputs, one column each). Calls run in order of depth;
at one depth the groups are independent. Invocations whose results nothing reads (an
instance's loss) are moved to the last depth, one call for all instances however deep
each one is. ``static_depth=False`` is the ablation that
finds the depths as a dynamic-graph batcher does, by walking every invocation on the
host in recording order; ``batched=False`` runs every invocation as a call of its own
(the unbatched reference that batching is measured against).

Buckets: a call's count is rounded up to the next of 8, 12, 16, 24, 32, 48, 64, 80, 96,
112, 128, 160, ... (powers of two with halves, then quarters, between them): at most a
third of a small call and a fifth of a large one is padding, and a kernel sees
O(log n) distinct sizes, so its executables stay few. Buffers and tables keep the
rows of earlier batches where a batch fits them, else take the power of two of half as
much again (so that a slightly larger batch does not make every kernel compile again).
Padded lanes read row 0 of each buffer and write row 1, which no instance uses (value.py):
:func:`padding_row` is the index row of a padded lane.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.batching.value import BufferKey, Group, Recording


def bucket(n: int, smallest: int = 1) -> int:
    """``n`` rounded up to the next size of the ladder (at least ``smallest``): below 64
    the powers of two and the halves between them, from 64 on quarters (64, 80, 96,
    112, 128, 160, ...), where padding costs real arithmetic."""
    n = max(int(n), smallest, 1)
    if n <= 2:
        return n
    p = 1 << (n - 1).bit_length()          # next power of two
    steps = 4 if p > 64 else 2
    step = p // 2 // steps                  # p/2 + k*step, k = 1..steps
    return p // 2 + -(-(n - p // 2) // step) * step


def _power(n: int) -> int:
    """Rows of a buffer or table: the next power of two (at least 8). Coarser than the
    calls' buckets: every kernel reading a buffer compiles again when its size changes,
    while a larger buffer costs only its memory."""
    return max(8, 1 << (max(n, 1) - 1).bit_length())


def padding_row(group: Group) -> np.ndarray:
    """The index row of a padded lane of ``group``'s calls: operands and data read at
    row 0, outputs written at row 1, residuals at row 0 of their own buffers."""
    n_in = len(group.operand_keys) + len(group.data_keys)
    row = np.zeros(n_in + len(group.out_keys) + 1, np.int32)
    row[n_in:n_in + len(group.out_keys)] = 1
    return row


def all_lanes(calls: list["Call"], group: Group, floor: int = 0) -> np.ndarray:
    """One index over every invocation of ``group`` in ``calls`` (its calls at every
    depth, their padded lanes left out), padded to the bucket of its rows or of
    ``floor``, whichever is larger: the index of a call that serves the whole batch's
    invocations at once (the weights' part of the backward, program.backward_fn)."""
    rows = np.concatenate([c.index[:c.count] for c in calls])
    lanes = bucket(max(len(rows), floor))
    if lanes == len(rows):
        return rows
    return np.concatenate([rows, np.broadcast_to(padding_row(group),
                                                 (lanes - len(rows), rows.shape[1]))])


def grown(n: int, floor: int) -> int:
    """Rows for ``n`` given ``floor`` rows so far: the floor where ``n`` fits, else the
    power of two of half as much again as ``n``, so that batches a little larger than
    the largest so far (the maximum over more and more batches rises slowly) do not
    make every kernel compile again at each new power of two."""
    return floor if n <= floor else _power(n + n // 2)


@dataclass
class Call:
    """One batched call: ``count`` invocations of ``group`` at ``depth``, their rows in
    ``index`` (``bucket(count)`` rows, the padding all zeros). A stacked call
    (:func:`stacked`) serves ``siblings`` (``group`` first) at once: ``index`` is
    ``[lanes, len(siblings), width]``, column ``j`` the lanes of ``siblings[j]``."""
    depth: int
    group: Group
    index: np.ndarray
    count: int
    siblings: tuple[Group, ...] = ()
    steps: int = 1     # > 1: a run of calls, index [lanes, steps, ...] (:func:`runs`)


def sibling_key(group: Group) -> tuple:
    """What groups share to be stacked: the cell, its input structure, operand kinds
    and buffers and the shapes of the shared leaves, all but *which* shared leaves
    (the two directions of a BiLSTM: one cell, two sets of weights)."""
    kinds = tuple(("shared",) if k[0] == "shared" else k for k in group.kinds)
    return (group.cell, group.in_tree, kinds, group.shared_specs)


# A stacked call's lanes (the largest sibling's bucket, times the siblings) may be at
# most this much more than the separate calls' lanes together; beyond, the padding of
# the smaller siblings costs more arithmetic than the launches saved.
STACK_SLACK = 1.25


def stacked(calls: list[Call]) -> list[Call]:
    """``calls`` with the calls at one depth of groups that differ only in which
    shared leaves they read (:func:`sibling_key`) made one call: their index arrays
    side by side (each padded to the largest's bucket), the weights stacked on a new
    leading axis by the caller, so that one kernel runs one batched product per
    weight instead of one launch per group. Every call costs 0.3-0.7 ms of launch and
    argument handling beyond its arithmetic at the sizes of these models (the BiLSTM
    at batch 64 makes two calls per depth, one per direction, with the same lanes).
    Calls at one depth are independent (schedule order), so joining them is safe."""
    slots: list[list[Call]] = []
    at: dict[tuple, int] = {}       # (depth, sibling key) -> its slot
    keys: dict[int, tuple] = {}     # per group: its sibling key (made once, not per call)
    for call in calls:
        sibling = keys.get(id(call.group))
        if sibling is None:
            sibling = keys[id(call.group)] = sibling_key(call.group)
        key = (call.depth, sibling)
        if key in at:
            slots[at[key]].append(call)
        else:
            at[key] = len(slots)
            slots.append([call])
    out: list[Call] = []
    for group_calls in slots:
        lanes = max(len(c.index) for c in group_calls)
        if len(group_calls) < 2 or \
                lanes * len(group_calls) > STACK_SLACK * sum(len(c.index) for c in group_calls):
            out.extend(group_calls)
            continue
        first = group_calls[0]
        index = np.empty((lanes, len(group_calls), first.index.shape[1]), np.int32)
        index[:] = padding_row(first.group)[None]
        for j, c in enumerate(group_calls):
            index[:len(c.index), j] = c.index
        out.append(Call(first.depth, first.group, index,
                        sum(c.count for c in group_calls),
                        tuple(c.group for c in group_calls)))
    return out


# The lengths a run of calls is cut into (:func:`runs`), longest first: each is an
# executable of its own per bucket of lanes, so few lengths keep compilations few. No
# runs of 2 or 3: a TreeLSTM's node calls meet one bucket at two or three consecutive
# depths now and then, each time at other buckets, and with runs of 2 a batch of 64
# compiled in 5 of the 15 batches after warm-up (0 of 15 without; 2026-12-07), for
# a call saved here and there.
RUN_LENGTHS = (16, 8, 4)


def runs(calls: list[Call]) -> list[Call]:
    """``calls`` with each stretch of consecutive calls (in execution order) of one
    group, or one set of stacked siblings, whose index arrays have one shape (the same
    bucket of lanes) made calls of several steps: one executable runs the steps one
    after the other, in order, each reading what the step before wrote (program.py
    :func:`~bladec.batching.program.run_fn`). Nothing runs between the calls of a
    stretch, so running them as one is the same sequence of work; what goes is a call's
    fixed cost per step: the launch, the arguments, and the weights streamed into the
    cache again after the host's dispatch (a BiLSTM at batch 64 runs 45 calls of 8-64
    lanes, each a product against one 512 x 1024 weight pair; stretches of one bucket
    are 5-15 depths long). A stretch is cut greedily into :data:`RUN_LENGTHS` (a rest
    shorter than the shortest stays plain calls); the index of a run is the steps' indices side by side
    on a new axis 1 (``[lanes, steps, width]``, or ``[lanes, steps, k, width]`` for
    stacked calls)."""
    out: list[Call] = []
    i = 0
    while i < len(calls):
        j = i + 1
        while j < len(calls) and _same_kernel(calls[i], calls[j]):
            j += 1
        while i < j:
            n = next((m for m in RUN_LENGTHS if m <= j - i), 1)
            part = calls[i:i + n]
            out.append(part[0] if n == 1 else Call(
                part[0].depth, part[0].group, np.stack([c.index for c in part], axis=1),
                sum(c.count for c in part), part[0].siblings, n))
            i += n
    return out


def _same_kernel(a: Call, b: Call) -> bool:
    """Whether ``b`` runs the kernel that ``a`` runs, on an index of the same shape."""
    return a.group is b.group and a.steps == b.steps == 1 and \
        a.index.shape == b.index.shape and \
        tuple(map(id, a.siblings)) == tuple(map(id, b.siblings))


@dataclass
class Schedule:
    calls: list[Call] = field(default_factory=list)
    rows: dict[BufferKey, int] = field(default_factory=dict)     # buffer -> bucketed rows
    tables: dict[BufferKey, np.ndarray] = field(default_factory=dict)
    depths: int = 0
    seconds: float = 0.0


def _sinks_last(recording: Recording, groups: list[Group], slots_of: list[np.ndarray],
                depths_of: list[np.ndarray]) -> None:
    """Invocations whose results no invocation reads (an instance's loss, its output)
    moved to the last depth: they can run at any depth after their operands', and
    together they are one call instead of one per depth at which instances end (the
    program phase of ACRoBat, found from the index arrays: which rows are read)."""
    read = {key: np.zeros(rows, bool) for key, rows in recording.rows.items()}
    for group, slots in zip(groups, slots_of):
        for col, key in enumerate(group.operand_keys):
            read[key][slots[:, col]] = True
    last = _deepest(depths_of)
    for group, slots, depths in zip(groups, slots_of, depths_of):
        n_in = len(group.operand_keys) + len(group.data_keys)
        if not group.out_keys:
            continue
        sink = np.ones(len(slots), bool)
        for col, key in enumerate(group.out_keys, n_in):
            sink &= ~read[key][slots[:, col]]
        depths[sink] = last


def _deepest(depths_of: list[np.ndarray]) -> int:
    """The batch's deepest depth (0 for an empty batch)."""
    return max((int(d.max()) for d in depths_of if len(d)), default=0)


def _calls(depths_of: list[np.ndarray]) -> int:
    """Batched calls that depths make: one per group and distinct depth."""
    return sum(len(np.unique(d)) for d in depths_of)


def _aligned(recording: Recording, groups: list[Group], slots_of: list[np.ndarray],
             depths_of: list[np.ndarray]) -> bool:
    """Each instance's invocations moved later by as much as the instance ends before
    the batch's deepest (those that read no result kept at depth 0), where that makes
    fewer calls; in place, True if so. Early depths align what instances do first;
    aligned ends, what they do last: an early-exit model's layers, which follow a
    chain as long as the instance, become one call per layer instead of one per layer
    and length. The move keeps every reader deeper than its writer within an
    instance; a result read across instances (a model that keeps one) is checked, and
    the move dropped if any reader would not be deeper."""
    starts = np.asarray(recording.starts)
    if len(starts) < 2:
        return False
    last = _deepest(depths_of)
    owner = [np.searchsorted(starts, np.asarray(g.order), side="right") - 1 for g in groups]
    top = np.zeros(len(starts), np.int64)
    for who, depths in zip(owner, depths_of):
        np.maximum.at(top, who, depths)
    shift = last - top
    moved = [depths if not group.operand_keys else depths + shift[who]
             for group, who, depths in zip(groups, owner, depths_of)]
    if _calls(moved) >= _calls(depths_of):
        return False
    written = {key: np.zeros(rows, np.int64) for key, rows in recording.rows.items()}
    for group, slots, depths in zip(groups, slots_of, moved):
        n_in = len(group.operand_keys) + len(group.data_keys)
        for col, key in enumerate(group.out_keys, n_in):
            written[key][slots[:, col]] = depths
    for group, slots, depths in zip(groups, slots_of, moved):
        for col, key in enumerate(group.operand_keys):
            if np.any(written[key][slots[:, col]] >= depths):
                return False
    depths_of[:] = moved
    return True


def walked_depths(recording: Recording) -> dict[int, np.ndarray]:
    """The ablation of inline depths: every invocation visited on the host in recording
    order, its depth one more than its operands' (looked up by buffer row), as a
    batcher that builds the whole dataflow graph first must do. By id(group)."""
    order = []
    for group in recording.groups.values():
        n_lazy = len(group.operand_keys)
        n_in = n_lazy + len(group.data_keys)
        for i, (pos, slot) in enumerate(zip(group.order, group.slots.tolist())):
            order.append((pos, group, i, slot[:n_lazy], slot[n_in:]))
    order.sort(key=lambda t: t[0])
    produced: dict[tuple[BufferKey, int], int] = {}
    out = {id(g): np.zeros(g.count, np.int64) for g in recording.groups.values()}
    for _, group, i, operands, outputs in order:
        depth = -1
        for key, row in zip(group.operand_keys, operands):
            d = produced[(key, row)]
            if d > depth:
                depth = d
        depth += 1
        out[id(group)][i] = depth
        for key, row in zip(group.out_keys, outputs):
            produced[(key, row)] = depth
    return out


def schedule(recording: Recording, *, static_depth: bool = True, batched: bool = True,
             sinks_last: bool = True, align: bool = True, smallest: int = 8,
             floor: dict[Any, int] | None = None) -> Schedule:
    """The calls of a recorded batch, by depth, and the sizes of its buffers.

    ``align``: where the early depths make more calls than there are depths (a group
    spread over several depths: instances that differ in length before the same
    steps), try aligning the instances' ends (:func:`_aligned`, a few array operations
    per group) and keep whichever makes fewer calls.
    ``smallest``: the smallest bucket of a batched call. ``floor``: rows already
    allocated per buffer and table by earlier batches; a buffer is never made smaller
    than that (a smaller batch reuses the larger buffer's executables instead of
    compiling for a smaller size), and ``floor`` is raised to the sizes used."""
    floor = {} if floor is None else floor
    import time
    start = time.perf_counter()
    walked = None if static_depth else walked_depths(recording)
    groups = list(recording.groups.values())
    slots_of = [g.slots for g in groups]
    depths_of = [np.asarray(g.depths) if walked is None else walked[id(g)] for g in groups]
    if batched and sinks_last:
        if align and _calls(depths_of) > 1 + _deepest(depths_of):
            _aligned(recording, groups, slots_of, depths_of)
        _sinks_last(recording, groups, slots_of, depths_of)
    parts: list[tuple[int, int, Call]] = []
    for g_index, group in enumerate(groups):
        slots, depths = slots_of[g_index], depths_of[g_index]
        # the last column: each invocation's row in the group's residual buffers
        # (residual.py), in call order, from 1 (row 0 for padded lanes)
        slots = np.concatenate([slots, np.zeros((len(slots), 1), np.int32)], axis=1)
        if not batched:
            slots[:, -1] = np.arange(1, len(slots) + 1)
            for i in range(len(slots)):
                parts.append((int(depths[i]), g_index,
                              Call(int(depths[i]), group, slots[i:i + 1].copy(), 1)))
                # one invocation per call: the bucket is 1, the unbatched reference
            continue
        # one array for all of the group's calls, each call a view of it: the
        # invocations in order of depth, each call's lanes padded to its bucket
        order = np.argsort(depths, kind="stable")
        sorted_depths = depths[order]
        starts = np.flatnonzero(np.diff(sorted_depths, prepend=-1))
        counts = np.diff(starts, append=len(order))
        slots[order, -1] = np.arange(1, len(slots) + 1)
        sizes = [bucket(c, smallest) for c in counts.tolist()]
        offsets = np.cumsum([0, *sizes])
        index = np.empty((int(offsets[-1]), slots.shape[1]), np.int32)
        index[:] = padding_row(group)
        index[np.repeat(offsets[:-1] - starts, counts) + np.arange(len(order))] = \
            slots[order]
        for start, count, at, size in zip(starts.tolist(), counts.tolist(),
                                          offsets.tolist(), sizes):
            d = int(sorted_depths[start])
            parts.append((d, g_index, Call(d, group, index[at:at + size], count)))
    parts.sort(key=lambda t: (t[0], t[1]))
    out = Schedule(calls=[c for _, _, c in parts])
    out.depths = 1 + max((c.depth for c in out.calls), default=-1)
    for key, rows in recording.rows.items():
        out.rows[key] = floor[("rows", key)] = grown(rows, floor.get(("rows", key), 0))
    for key, items in recording.data.items():
        shape, dtype = key
        size = floor[("data", key)] = grown(len(items), floor.get(("data", key), 0))
        table = np.zeros((size, *shape), dtype=np.dtype(dtype))
        if len(items) > 1:
            table[1:len(items)] = np.asarray(items[1:], dtype=np.dtype(dtype)).reshape(
                len(items) - 1, *shape)
        out.tables[key] = table
    out.seconds = time.perf_counter() - start
    return out


def describe(s: Schedule) -> dict[str, Any]:
    """Counts for a report: calls, depths, invocations, padded lanes."""
    lanes = sum(len(c.index) for c in s.calls)
    real = sum(c.count for c in s.calls)
    return {"calls": len(s.calls), "depths": s.depths, "invocations": real,
            "padding": (lanes - real) / lanes if lanes else 0.0}
