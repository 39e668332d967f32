"""The batched kernels of one group (a cell with one signature), as JAX functions.

A forward call reads each lazy operand of its invocations through a column of the index
array (``jnp.take`` inside the kernel, so the gather is fused into the cell's code: no
contiguous copy is made on the host or as a kernel of its own), runs the cell vmapped
over the invocations with the shared leaves passed whole (``in_axes=None``: a matmul of
the batch against one weight, never a gather of the weight), and writes each output
into its state buffer at the output rows (a scatter into the donated buffer, in place).

The backward call of the same group re-reads the operands, evaluates the cell under
``jax.vjp`` with the outputs of its matrix products read from the residual buffers that
the training forward (:func:`keeping_fn`) wrote (residual.py: only the products' own
transposes run; the elementwise rest, cheap, is recomputed), reads the output
cotangents from the adjoint buffers at the output rows and adds the operands'
cotangents into the adjoint buffers at the operand rows (``scatter-add``: a value with
several uses sums them), and the shared leaves' cotangents into their accumulators.
``jax.vjp`` rather than bladec's ``grad`` pass because the backward kernel is not the
gradient of a scalar loss of the cell: it takes incoming cotangents and scatters its own
into a buffer; written as a JAX function it is imported like the forward one, whole.

Groups that differ only in which weights they read (siblings, schedule.stacked) run at
one depth as one call in inference (:func:`stacked_fn`): the cell vmapped over the
siblings too, each weight stacked ``[k, ...]``.

The ablations: ``fused=False`` makes the gathers and the scatter kernels of their own
(copies into contiguous operands and back, as a dynamic batcher's memcpy does);
``shared=False`` gathers the shared leaves per invocation like any operand.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from bladec.batching.residual import recording, replaying, weight_grads
from bladec.batching.value import BufferKey, Group


@dataclass(frozen=True)
class Layout:
    """Which arrays a group's kernels take, in which order, and its index columns."""
    written: tuple[BufferKey, ...]     # output buffers (donated)
    read: tuple[BufferKey, ...]        # operand buffers not written
    tables: tuple[BufferKey, ...]      # data tables
    lazy_cols: tuple[int, ...]         # per input leaf of kind lazy: its column
    data_cols: tuple[int, ...]
    out_cols: tuple[int, ...]
    width: int                         # the index's columns, the residual rows' last

    @staticmethod
    def of(group: Group) -> "Layout":
        written = tuple(dict.fromkeys(group.out_keys))
        read = tuple(k for k in dict.fromkeys(group.operand_keys) if k not in written)
        tables = tuple(dict.fromkeys(group.data_keys))
        nl, nd, no = len(group.operand_keys), len(group.data_keys), len(group.out_keys)
        return Layout(written, read, tables, tuple(range(nl)), tuple(range(nl, nl + nd)),
                      tuple(range(nl + nd, nl + nd + no)), nl + nd + no + 1)

    @property
    def res_col(self) -> int:
        """The column of each lane's row in the group's residual buffers
        (residual.py)."""
        return self.width - 1


def _batched_cell(group: Group, shared: bool) -> Any:
    """The cell vmapped over its invocations: lazy and data leaves batched, shared leaves
    (with ``shared``) not."""
    import jax
    axes = [None if (kind == "shared" and shared) else 0 for kind, _ in group.kinds]
    in_axes = jax.tree_util.tree_unflatten(group.in_tree, axes)
    return jax.vmap(group.cell.fn, in_axes=tuple(in_axes))


def flat_cell(group: Group, shared: bool = True) -> Any:
    """The batched cell as a function of its input leaves, returning its output
    leaves."""
    import jax
    cell = _batched_cell(group, shared)

    def flat(*leaves: Any) -> list[Any]:
        return jax.tree_util.tree_leaves(
            cell(*jax.tree_util.tree_unflatten(group.in_tree, list(leaves))))
    return flat


def flipped(group: Group, avals: list[Any]) -> tuple[bool, ...]:
    """Per shared leaf of ``group``: whether the batched cell reads it only as the
    left side ``W`` of a product ``W @ x`` (a matrix contracted on its last dim, no batch
    dims). Such a weight is passed to the forward kernels (inference and training)
    transposed, once per batch (:func:`forward_fn`, :func:`keeping_fn`), so that the
    product reads it as XLA:CPU's GEMM (YNNPACK) takes its right operand, instead of
    repacking the whole matrix in every call: in the TreeLSTM batch of 64 at hidden 256
    that repacking was 5.7% of the batch's CPU time (perf, 2026-11-28), 14 repackings
    of the same weights a batch. The training forward computes a kept product right
    operand first (residual.recording): before, its product came out as
    ``[features, n]`` (read by the gates and kept), and with the weight transposed XLA
    ran its own loop instead of the library GEMM (BiLSTM's kernels twice as slow).
    ``avals``: the cell's input leaves (the batched ones at any batch size)."""
    import jax
    closed = jax.make_jaxpr(flat_cell(group))(*avals)
    invars = closed.jaxpr.invars
    positions = [i for i, (kind, _) in enumerate(group.kinds) if kind == "shared"]
    out = []
    for i in positions:
        var = invars[i]
        uses = [e for e in closed.jaxpr.eqns if any(v is var for v in e.invars)]
        out.append(len(var.aval.shape) == 2 and bool(uses) and
                   var not in closed.jaxpr.outvars and all(
            e.primitive.name == "dot_general" and e.invars[0] is var and
            e.invars[1] is not var and
            e.params["dimension_numbers"] == (((1,), (1,)), ((), ()))
            for e in uses))
    return tuple(out)


def _unflipped(weights: tuple, flips: tuple[bool, ...]) -> tuple:
    """The weights as the cell takes them: those passed transposed turned back (XLA
    folds the transpose into the product's dimension numbers). The last two axes, so
    that siblings' weights stacked on a leading axis (:func:`stacked_fn`) turn too."""
    return (tuple(w.swapaxes(-1, -2) if f else w for w, f in zip(weights, flips))
            if flips else weights)


def _gathered_leaves(group: Group, layout: Layout, weights: tuple | None, buffers: dict,
                     tables: dict, index: Any, shared: bool) -> list[Any]:
    """The cell's input leaves for the invocations of ``index``, read from the buffers
    (``weights`` None: the lazy and data leaves only)."""
    import jax.numpy as jnp
    leaves = []
    lazy = iter(layout.lazy_cols)
    data = iter(layout.data_cols)
    w = iter(weights or ())
    for kind, key in group.kinds:
        if kind == "shared" and weights is None:
            continue
        if kind == "lazy":
            leaves.append(_take(buffers[key], index[..., next(lazy)]))
        elif kind == "data":
            leaves.append(_take(tables[key], index[..., next(data)]))
        else:
            x = next(w)
            if not shared:   # the ablation: every invocation reads its own copy
                zero = jnp.zeros_like(index[:, 0])
                x = _take(x[None], zero)
            leaves.append(x)
    return leaves


def _take(buffer: Any, rows: Any) -> Any:
    """``buffer[rows]`` with the rows promised in bounds (no clamping, no fill)."""
    return buffer.at[rows].get(mode="promise_in_bounds")


def _scatter(buffers: dict, keys: tuple, outs: list, index: Any, cols: tuple, add: bool
             ) -> dict:
    for key, col, value in zip(keys, cols, outs):
        at = buffers[key].at[index[..., col]]
        buffers[key] = at.add(value, mode="promise_in_bounds") if add else \
            at.set(value, mode="promise_in_bounds")
    return buffers


def forward_fn(group: Group, layout: Layout, shared: bool = True,
               flips: tuple[bool, ...] = ()) -> Any:
    """``f(weights, written, read, tables, index) -> written``: one fused call (the
    weights of ``flips`` given transposed: :func:`flipped`)."""
    return _forward(flat_cell(group, shared), group, layout, shared, flips)


def stacked_fn(group: Group, layout: Layout, flips: tuple[bool, ...] = ()) -> Any:
    """The forward of a stacked call (schedule.stacked): ``f(weights, written, read,
    tables, index) -> written`` where each weight is the siblings' leaves stacked on a
    leading axis ``[k, ...]`` and ``index`` is ``[n, k, width]``. The cell is vmapped
    over the lanes (weights whole) and that over the siblings (weight ``j`` with
    column ``j``): each product becomes one batched product ``[k, n, .] x [k, ., .]``
    in one kernel instead of ``k`` kernels."""
    import jax
    lanes = flat_cell(group, True)
    axes = [0 if kind == "shared" else 1 for kind, _ in group.kinds]
    return _forward(jax.vmap(lanes, in_axes=tuple(axes), out_axes=1), group, layout,
                    True, flips)


def _forward(cell: Callable, group: Group, layout: Layout, shared: bool,
             flips: tuple[bool, ...]) -> Any:
    """The call around ``cell``: operands gathered through ``index``, results scattered
    into the written buffers."""
    def fn(weights: tuple, written: tuple, read: tuple, tables: tuple, index: Any) -> tuple:
        weights = _unflipped(weights, flips)
        buffers = dict(zip(layout.written, written)) | dict(zip(layout.read, read))
        leaves = _gathered_leaves(group, layout, weights, buffers,
                                  dict(zip(layout.tables, tables)), index, shared)
        buffers = _scatter(buffers, group.out_keys, cell(*leaves), index, layout.out_cols,
                           False)
        return tuple(buffers[k] for k in layout.written)
    return fn


def run_fn(step: Callable, steps: int) -> Any:
    """A run of ``steps`` calls of one forward kernel (schedule.runs) as one:
    ``f(weights, written, read, tables, index)`` with ``index`` ``[n, steps, ...]``,
    ``step`` (:func:`forward_fn` or :func:`stacked_fn`) applied to each step's index in
    turn, the written buffers carried from step to step. A Python loop, so the listing
    holds the steps one after the other (the importer unrolls a short scan the same
    way): XLA sees straight-line code and keeps each product on the library GEMM."""
    def fn(weights: tuple, written: tuple, read: tuple, tables: tuple, index: Any) -> tuple:
        for j in range(steps):
            written = step(weights, written, read, tables, index[:, j])
        return written
    return fn


def keeping_fn(group: Group, layout: Layout, flips: tuple[bool, ...] = ()) -> Any:
    """The training forward: ``f(weights, written, read, tables, residuals, index) ->
    (*written, *residuals)``, the cell's products kept in ``residuals`` (residual.py)."""
    cell = flat_cell(group, True)

    def fn(weights: tuple, written: tuple, read: tuple, tables: tuple, kept: tuple,
           index: Any) -> tuple:
        weights = _unflipped(weights, flips)
        buffers = dict(zip(layout.written, written)) | dict(zip(layout.read, read))
        leaves = _gathered_leaves(group, layout, weights, buffers,
                                  dict(zip(layout.tables, tables)), index, True)
        outs, products = recording(cell, leaves, index.shape[0])
        buffers = _scatter(buffers, group.out_keys, outs, index, layout.out_cols, False)
        rows = index[:, layout.res_col]
        kept = tuple(k.at[rows].set(p, mode="promise_in_bounds")
                     for k, p in zip(kept, products))
        return (*(buffers[k] for k in layout.written), *kept)
    return fn


def gather_fn(group: Group, layout: Layout) -> Any:
    """Ablation: the operands copied into contiguous arrays by a kernel of their own
    (``f(operand buffers, tables, index)``, the buffers in order of first use)."""
    keys = tuple(dict.fromkeys(group.operand_keys))

    def fn(buffers: tuple, tables: tuple, index: Any) -> tuple:
        return tuple(_gathered_leaves(group, layout, None, dict(zip(keys, buffers)),
                                      dict(zip(layout.tables, tables)), index, True))
    return fn


def cell_fn(group: Group, shared: bool = True) -> Any:
    """Ablation: the vmapped cell on contiguous operands (weights first)."""
    import jax
    cell = _batched_cell(group, shared)
    n_shared = len(group.shared)

    def fn(weights: tuple, operands: tuple) -> tuple:
        import jax.numpy as jnp
        leaves, ops, w = [], iter(operands), iter(weights[:n_shared])
        n = operands[0].shape[0] if operands else 1
        for kind, _ in group.kinds:
            if kind != "shared":
                leaves.append(next(ops))
            elif shared:
                leaves.append(next(w))
            else:    # the ablation: a copy of the weights per invocation
                x = next(w)
                leaves.append(jnp.broadcast_to(x, (n, *x.shape)))
        return tuple(jax.tree_util.tree_leaves(
            cell(*jax.tree_util.tree_unflatten(group.in_tree, leaves))))
    return fn


def scatter_fn(group: Group, layout: Layout) -> Any:
    """Ablation: the outputs written into the state buffers by a kernel of their own."""
    def fn(written: tuple, outs: tuple, index: Any) -> tuple:
        buffers = _scatter(dict(zip(layout.written, written)), group.out_keys, list(outs),
                           index, layout.out_cols, False)
        return tuple(buffers[k] for k in layout.written)
    return fn


def adjoint_keys(group: Group) -> tuple[BufferKey, ...]:
    """The adjoint buffers a backward call touches: its float operands' and outputs'
    (worked out once per pair of key tuples: a batch's backward asks per call)."""
    return _float_keys((*group.operand_keys, *group.out_keys))


@functools.lru_cache(maxsize=4096)
def _float_keys(keys: tuple[BufferKey, ...]) -> tuple[BufferKey, ...]:
    return tuple(dict.fromkeys(k for k in keys if is_float(k)))


@functools.lru_cache(maxsize=4096)
def is_float(key: BufferKey) -> bool:
    """Whether a buffer holds floats (has an adjoint)."""
    return bool(np.issubdtype(np.dtype(key[1]), np.floating))


def backward_fn(group: Group, layout: Layout, keep: bool = False, operands: bool = True,
                weights: tuple[bool, ...] | None = None, cotangents: bool = False) -> Any:
    """``b(weights, fwd, tables, adjoints, grads, index) -> (adjoints, grads)``; with
    ``keep``, ``b(weights, fwd, tables, residuals, adjoints, grads, index)``: the cell's
    products read from the residuals instead of recomputed (residual.py).

    ``weights``: per shared leaf (in ``group.shared``'s order), whether this kernel
    adds its cotangent into ``grads``, which then holds those leaves' accumulators only,
    possibly none (None: every leaf). ``operands=False``: no lazy operand's cotangent,
    the adjoints only read, ``-> (grads,)``. The split (backward.py): the weights of
    the cell's products (residual.product_weights) summed once per group over every invocation
    of the batch, the rest per depth. Per depth, a product of a few dozen lanes read
    the weight and read and wrote its gradient's accumulator: a BiLSTM's backward call
    of 64 lanes took 2.5 ms, its forward 1.0 ms.

    ``cotangents`` (with ``keep``): per kept product a buffer of its result's cotangents,
    rows like the residuals'. The operands' part takes them after the residuals, sets
    its lanes' rows and returns them last; the weights' part (:func:`weight_grad_fn`)
    reads them instead of running the cell's backward again."""
    import jax

    cell = flat_cell(group, True)
    adj_keys = adjoint_keys(group)
    fwd_keys = tuple(dict.fromkeys(group.operand_keys))
    mask = iter(weights if weights is not None else (True,) * len(group.shared))
    diff = [i for i, (kind, key) in enumerate(group.kinds)
            if (kind == "shared" and next(mask)) or
            (operands and kind == "lazy" and is_float(key))]
    lazy_of = {}   # input leaf index -> (key, column) for differentiated lazy leaves
    col = iter(layout.lazy_cols)
    for i, (kind, key) in enumerate(group.kinds):
        if kind == "lazy":
            c = next(col)
            if is_float(key):
                lazy_of[i] = (key, c)

    def fn(ws: tuple, fwd: tuple, tables: tuple, *rest: Any) -> tuple:
        kept, cots = (), ()
        if keep:
            kept, rest = rest[0], rest[1:]
        if cotangents:
            cots, rest = rest[0], rest[1:]
        adjoints, grads, index = rest
        buffers = dict(zip(fwd_keys, fwd))
        leaves = _gathered_leaves(group, layout, ws, buffers,
                                  dict(zip(layout.tables, tables)), index, True)
        rows = index[:, layout.res_col]
        saved = [_take(k, rows) for k in kept]
        run = replaying(cell, leaves, index.shape[0]) if keep else None

        def primal(*xs: Any) -> list:
            full = list(leaves)
            for i, x in zip(diff, xs):
                full[i] = x
            if run is None:
                return cell(*full)
            return run(xs[len(diff):] if cotangents else saved, *full)
        outs, vjp = jax.vjp(primal, *[leaves[i] for i in diff],
                            *(saved if cotangents else ()))
        adj = dict(zip(adj_keys, adjoints))
        cts = []
        for key, c, out in zip(group.out_keys, layout.out_cols, outs):
            if is_float(key):
                cts.append(_take(adj[key], index[:, c]))
            else:
                cts.append(np.zeros(out.shape, jax.dtypes.float0))
        got = vjp(cts)
        grads = list(grads)
        cots = tuple(c.at[rows].set(g, mode="promise_in_bounds")
                     for c, g in zip(cots, got[len(diff):]))
        shared_pos = 0
        for i, g in zip(diff, got[:len(diff)]):
            if i in lazy_of:
                key, c = lazy_of[i]
                adj[key] = adj[key].at[index[:, c]].add(g, mode="promise_in_bounds")
            else:
                grads[shared_pos] = grads[shared_pos] + g
                shared_pos += 1
        return ((tuple(adj[k] for k in adj_keys),) if operands else ()) + \
            (tuple(grads),) + ((cots,) if cotangents else ())
    return fn


def weight_grad_fn(group: Group, layout: Layout, weights: tuple[bool, ...]) -> Any:
    """The weights' part of the backward from the kept products' cotangents:
    ``w(weights, fwd, tables, residuals, cotangents, grads, index) -> (grads,)``, where
    ``weights`` marks the shared leaves (the products' weights, each read only by kept
    products: residual.weights_only_in_products) whose accumulators ``grads`` holds.
    Each is one product per batch, its transpose against the rows' cotangents; the
    backward per depth wrote them (:func:`backward_fn` with ``cotangents``). Recomputing
    the cell's backward here instead held the BiLSTM's gates' cotangents for 2,048
    lanes at once: 32 MiB of XLA temporaries, which glibc maps afresh at every call
    (8,193 page faults); 35 ms a call at hidden 256 on one CPU, 17 ms now."""
    cell = flat_cell(group, True)
    fwd_keys = tuple(dict.fromkeys(group.operand_keys))
    mask = iter(weights)
    summed = [i for i, (kind, _) in enumerate(group.kinds) if kind == "shared" and next(mask)]

    def fn(ws: tuple, fwd: tuple, tables: tuple, kept: tuple, cots: tuple, grads: tuple,
           index: Any) -> tuple:
        leaves = _gathered_leaves(group, layout, ws, dict(zip(fwd_keys, fwd)),
                                  dict(zip(layout.tables, tables)), index, True)
        rows = index[:, layout.res_col]
        parts = weight_grads(cell, leaves, index.shape[0], [_take(k, rows) for k in kept],
                             [_take(c, rows) for c in cots], summed)
        return (tuple(g + p for g, p in zip(grads, parts)),)
    return fn
