"""Building one kind of batched kernel of a group (forward, stacked, run of steps,
training forward, backward, and the ablations' gather, cell, per-op and scatter
kernels): the JAX function of program.py with its argument specs and donations, made
a :class:`~bladec.batching.kernel.Kernel`. Apart from model.py, which decides which
kernel each call runs."""
from __future__ import annotations

from typing import Any, Callable

from bladec.batching.kernel import Kernel, OpByOp
from bladec.batching.program import (adjoint_keys, backward_fn, cell_fn, forward_fn,
                                      gather_fn, keeping_fn, run_fn, scatter_fn,
                                      stacked_fn, weight_grad_fn)
from bladec.batching.schedule import padding_row
from bladec.batching.value import Group


def make_kernel(owner: Any, kind: str, group: Group, k: int = 0, steps: int = 1) -> Any:
    """The kernel ``kind`` of ``group`` for ``owner`` (an ``Autobatched``: its options,
    passes, memory limit, layouts, flips and residual specs): imported as a bladec
    listing with a symbolic batch dim (kernel.py). ``k``: stacked siblings;
    ``steps``: the steps of a run (schedule.runs)."""
    layout = owner._layout(group)
    shared_leaves = list(group.shared_specs)
    buf = {k: (("N%d" % i), *k[0]) for i, k in enumerate(
        dict.fromkeys((*layout.written, *layout.read, *group.operand_keys,
                       *group.out_keys)))}
    tab = {k: (("T%d" % i), *k[0]) for i, k in enumerate(layout.tables)}
    index = (("n", layout.width), "int32")
    written = [(buf[k], k[1]) for k in layout.written]
    read = [(buf[k], k[1]) for k in layout.read]
    tables = [(tab[k], k[1]) for k in layout.tables]
    reuse = owner.options.shared_weights
    name = f"{group.cell.name}.{kind}"
    flips = owner._flips(group) if kind in ("fwd", "keep", "stack", "run", "stack-run") \
        else ()
    if flips:   # the weights the forward kernels take transposed (program.flipped)
        shared_leaves = [((shape[1], shape[0]), dtype) if f else (shape, dtype)
                         for (shape, dtype), f in zip(shared_leaves, flips)]
    if kind == "keep":
        kept = [(("R%d" % i, *shape), dtype)
                for i, (shape, dtype) in enumerate(owner._residual_specs(group))]
        fn = keeping_fn(group, layout, flips)
        at = len(shared_leaves) + len(written) + len(read) + len(tables)
        return Kernel(_spread(fn, [len(shared_leaves), len(written), len(read),
                                   len(tables), len(kept), 1]),
                      [*shared_leaves, *written, *read, *tables, *kept, index],
                      name=name, donate=(*range(len(shared_leaves),
                                                len(shared_leaves) + len(written)),
                                         *range(at, at + len(kept))),
                      passes=owner.passes, limit=owner.mem_limit, index=True,
                      padding=padding_row(group))
    if kind in ("stack", "stack-run"):   # siblings stacked (schedule.stacked)
        fn = stacked_fn(group, layout, flips)
        weights = [((k, *shape), dtype) for shape, dtype in shared_leaves]
        lanes: tuple = ("n", k, layout.width)
        if kind == "stack-run":   # several steps (schedule.runs)
            fn, lanes, name = run_fn(fn, steps), ("n", steps, k, layout.width), \
                f"{name}{steps}"
        return Kernel(_spread(fn, [len(weights), len(written), len(read),
                                   len(tables), 1]),
                      [*weights, *written, *read, *tables, (lanes, "int32")], name=name,
                      donate=range(len(weights), len(weights) + len(written)),
                      passes=owner.passes, limit=owner.mem_limit, index=True,
                      padding=padding_row(group))
    if kind in ("fwd", "run"):
        fn = forward_fn(group, layout, reuse, flips)
        if kind == "run":   # several steps (schedule.runs)
            fn, index, name = run_fn(fn, steps), (("n", steps, layout.width), "int32"), \
                f"{name}{steps}"
        return Kernel(_spread(fn, [len(shared_leaves), len(written), len(read),
                                   len(tables), 1]),
                      [*shared_leaves, *written, *read, *tables, index], name=name,
                      donate=range(len(shared_leaves),
                                    len(shared_leaves) + len(written)),
                      passes=owner.passes, limit=owner.mem_limit, index=True,
                      padding=padding_row(group))
    if kind == "gather":
        fn = gather_fn(group, layout)
        operand_buffers = [(buf[k], k[1]) for k in dict.fromkeys(group.operand_keys)]
        return Kernel(_spread(fn, [len(operand_buffers), len(tables), 1]),
                      [*operand_buffers, *tables, index], name=name,
                      passes=owner.passes, limit=owner.mem_limit)   # no renting: the
        # scatter that follows takes the same index and the operands' row count
    operands = [(("n", *key[0]), key[1]) for kind_, key in group.kinds
                if kind_ != "shared"]
    if kind == "cell":
        fn = cell_fn(group, reuse)
        return Kernel(_spread(fn, [len(shared_leaves), len(operands)], index=False),
                      [*shared_leaves, *operands], name=name, passes=owner.passes,
                      limit=owner.mem_limit)
    if kind == "ops":
        return OpByOp(_spread(cell_fn(group, reuse), [len(shared_leaves), len(operands)],
                              index=False), name)
    outs = [(("n", *key[0]), key[1]) for key in group.out_keys]
    if kind == "scatter":
        fn = scatter_fn(group, layout)
        return Kernel(_spread(fn, [len(written), len(outs), 1]),
                      [*written, *outs, index], name=name,
                      donate=range(len(written)), passes=owner.passes,
                      limit=owner.mem_limit)
    # backward: "bwd" both parts per call; "bwd-ops" the operands' part per call and
    # "wgrad" the weights' part once per group and batch (program.backward_fn);
    # "-kept": the products read from the residuals
    # "-cot": the kept products' cotangents written per depth, read by the weights' part
    fwd = [(buf[k], k[1]) for k in dict.fromkeys(group.operand_keys)]
    cot = kind.endswith("-cot")
    keep = kind.endswith("-kept") or cot
    operands = not kind.startswith("wgrad")
    weights = owner._grad_mask(group, kind)
    grads = [leaf for leaf, w in zip(shared_leaves, weights) if w]
    kept = [(("R%d" % i, *shape), dtype)
            for i, (shape, dtype) in enumerate(owner._residual_specs(group))] \
        if keep else []
    adj = [(buf[k], k[1]) for k in adjoint_keys(group)]
    fn = backward_fn(group, layout, keep, operands, weights, cot) if reads_adjoints(kind) \
        else weight_grad_fn(group, layout, weights)
    # the argument groups in order (the cotangents have the residuals' rows); donated:
    # those a call writes (cotangents, adjoints) and the accumulators
    parts = [shared_leaves, fwd, tables, *([kept] if keep else []),
             *([kept] if cot else []), *([adj] if reads_adjoints(kind) else []), grads]
    written = parts[-(1 + operands + (operands and cot)):]
    start = sum(map(len, parts)) - sum(map(len, written))
    return Kernel(_spread(fn, [*map(len, parts), 1]),
                  [*(spec for part in parts for spec in part), index],
                  name=name, donate=range(start, start + sum(map(len, written))),
                  passes=owner.passes, limit=owner.mem_limit, index=True,
                  padding=padding_row(group))


def reads_adjoints(kind: str) -> bool:
    """Whether a backward kernel ``kind`` takes the adjoint buffers: every one but the
    weights' part from kept cotangents ("wgrad-cot", program.weight_grad_fn)."""
    return kind != "wgrad-cot"


def _spread(fn: Callable, counts: list[int], index: bool = True) -> Callable:
    """``fn`` of tuples (with ``index``, the last argument a single array: the index)
    as a function of flat positional arrays, so that the importer sees one argument per
    array."""
    def flat(*args: Any) -> Any:
        parts, i = [], 0
        for c in counts[:-1]:
            parts.append(tuple(args[i:i + c]))
            i += c
        parts.append(args[i] if index else tuple(args[i:i + counts[-1]]))
        out = fn(*parts)
        return out
    flat.__name__ = getattr(fn, "__name__", "kernel")
    return flat
