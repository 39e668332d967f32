"""Rows: the ops between a checkpointed scan pair that work step by step on the forward
loop's stacked outputs, run chunk by chunk beside the backward loop's chunks.

A language model over a scan stacks its hidden states, ``[T, B, H]``, and then computes
its loss from all of them at once: the logits, their softmax and the logits' cotangent,
``[T, B, V]`` each, and from that cotangent the hidden states' own, which the backward
loop reads step by step. Checkpointing the loops (checkpoint.py) leaves those values
whole: at a vocabulary of 256 (hidden 128, T=64, B=16) the loss's segment held five
``[T, B, V]`` arrays, 5.25 MB of XLA temporaries, and bounded the step at 0.57x of its
no-limit peak while each loop chunk needed under 0.31x.

Each of those ops computes row ``t`` of its result from row ``t`` of its operands, so
that chunk ``c`` of the loss runs on chunk ``c`` of the hidden states. What holds for
a value split along dim 0 over devices holds for it split into chunks run one after
another: :func:`bladec.ops.collective.result_layout`, the sharding rule the verifier
and the ``propagate`` pass share, says for each op whether it runs on blocks of its
operands' rows (its result is then split the same way) or leaves partial sums (a sum or
contraction over the steps: the loss's mean, the output projection's gradient), whose
whole is the sum of the chunks' results. :func:`region` finds the ops that run so (the
rows region); the backward loop's chunk ``c`` then reads the cotangent of chunk ``c``
made just before it, and the partial sums add up over the chunks. The whole ``[T, ...]``
values are never made: what is held of the loss is one chunk's rows.

The sums are added in another order (chunk by chunk), so the results equal the loops'
within the fused tolerance, not bit for bit: the executor leaves the rows whole on a
``bitwise`` backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bladec.analysis.liveness import is_compute
from bladec.errors import BladecError
from bladec.ir import Func, Op, TensorType, Value
from bladec.ops.collective import result_layout
from bladec.ops.loop import parts

AXIS = "chunks"   # the mesh axis the rule is asked about: the chunks, one after another


@dataclass
class Region:
    """The rows region of one pair: ``ops`` (in the listing's order) each computing a
    chunk of its results from chunks of its ``rows`` operands (the forward loop's
    stacked outputs ``seeds``, earlier ops of the region, and values from outside it
    sliced per chunk: ``sliced``) or a chunk's partial sums (``partial``: results whose
    whole is the sum over chunks); ``fed``: the backward loop's scanned operands
    (index -> a row value of the region); ``totals``: the partial sums read outside the
    region, after the backward loop (summed over the chunks under their own names)."""
    ops: list[Op] = field(default_factory=list)
    rows: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)
    seeds: set[str] = field(default_factory=set)
    sliced: set[str] = field(default_factory=set)
    fed: dict[int, str] = field(default_factory=dict)
    totals: list[str] = field(default_factory=list)
    seeds_unread: set[str] = field(default_factory=set)   # read by the region alone


def region(func: Func, forward: Op, backward: Op, seeds: list[str],
           shapes: dict[str, tuple[int, ...]]) -> Region | None:
    """The rows region between ``forward`` and ``backward`` (a pair of checkpoint.py)
    that starts from ``seeds`` (stacked outputs of ``forward``, made a chunk at a time),
    or None where it feeds the backward loop nothing or would need a whole value: a row
    value read outside it other than as the backward loop's scanned input, or a partial
    sum read before the backward loop's last chunk (by it, or between the loops)."""
    ops = [op for op in func.ops if is_compute(op)]
    at, end = ops.index(forward), ops.index(backward)
    window = ops[at + 1:end]
    trips = shapes[forward.operands[sum(parts(forward)[:2])]][0]
    types = func.value_types()
    returned = set(func.outputs())
    out = Region(seeds=set(seeds))
    out.rows |= out.seeds
    readers: dict[str, list[Op]] = {}
    for op in ops:
        for n in op.operands:
            readers.setdefault(n, []).append(op)
    stepped = lambda n: bool(shapes.get(n)) and shapes[n][0] == trips  # noqa: E731
    split_by: dict[int, set[str]] = {}   # region op -> the outside operands it slices
    for op in window:
        if op.regions or op.name == "dim_size" or not any(
                n in out.rows or n in out.partial for n in op.operands):
            continue   # (dim_size reads the whole value's size)
        found = _placed(op, out, types, shapes, stepped)
        if found is None:
            return None
        kind, sliced = found
        out.ops.append(op)
        split_by[id(op)] = sliced
        (out.rows if kind == "rows" else out.partial).update(op.result_names)
    if not out.ops:
        return None
    inside = {id(op) for op in out.ops}
    # ops that only make what region ops slice (broadcasts of a constant, zeros) join
    # it, made a chunk at a time, latest first (a chain of them joins whole)
    for op in reversed(window):
        if id(op) in inside or op.regions or op.name == "dim_size" or not op.results \
                or not all(stepped(n) for n in op.result_names):
            continue
        if set(op.result_names) & returned or not all(
                readers.get(n) and all(id(r) in inside and n in split_by[id(r)]
                                       for r in readers[n]) for n in op.result_names):
            continue
        sliced = _made_in_rows(op, types, shapes, stepped)
        if sliced is None:
            continue
        inside.add(id(op))
        split_by[id(op)] = sliced
        out.rows.update(op.result_names)
        for r in (r for n in op.result_names for r in readers.get(n, [])):
            split_by[id(r)] -= set(op.result_names)
    out.ops = [op for op in window if id(op) in inside]
    out.sliced = {n for op in out.ops for n in split_by[id(op)]}
    first = sum(parts(backward)[:2])
    for n in out.rows - out.seeds:
        for r in readers.get(n, []):
            if id(r) in inside:
                continue
            if r is not backward or any(i < first and m == n
                                        for i, m in enumerate(r.operands)):
                return None
        if n in returned:
            return None
    out.seeds_unread = {n for n in out.seeds if n not in returned and all(
        id(r) in inside for r in readers.get(n, []))}
    out.fed = {i: n for i, n in enumerate(backward.operands) if i >= first and n in out.rows
               and n not in out.seeds}
    out.totals = [n for op in out.ops for n in op.result_names if n in out.partial and (
        n in returned or any(id(r) not in inside for r in readers.get(n, [])))]
    made_late = set(out.totals)
    if any(made_late & set(op.operands) for op in [*window, backward]
           if id(op) not in inside):
        return None   # (a total is made after the backward loop's last chunk)
    return out if out.fed else None


def _typed(n: str, types: dict[str, TensorType], shapes: dict[str, tuple[int, ...]],
           how: str) -> TensorType:
    """``n``'s type at the binding: whole (""), split along dim 0 ("rows") or a partial
    sum over the chunks ("partial")."""
    dims = tuple(shapes[n])
    sharding = ((AXIS,),) + ((),) * (len(dims) - 1) if how == "rows" else None
    return TensorType(dims, types[n].dtype, sharding=sharding,
                      partial=(AXIS,) if how == "partial" else ())


def _placed(op: Op, out: Region, types: dict[str, TensorType],
            shapes: dict[str, tuple[int, ...]], stepped) -> tuple[str, set[str]] | None:
    """Whether ``op`` (reading region values) runs chunk by chunk: ("rows", the outside
    operands it slices) when its results are its operands' chunks of rows, ("partial",
    ...) when they are partial sums; None when neither (it needs whole values). The
    outside operands are first taken whole, then, where the rule refuses that, every
    one of them with a row per step sliced."""
    def how(n: str, slice_outside: bool) -> str:
        if n in out.rows:
            return "rows"
        if n in out.partial:
            return "partial"
        return "rows" if slice_outside and stepped(n) else ""
    for slice_outside in (False, True):
        ins = [_typed(n, types, shapes, how(n, slice_outside)) for n in op.operands]
        try:
            want, partial, _ = result_layout(op, ins)
        except BladecError:
            continue
        sliced = {n for n, t in zip(op.operands, ins)
                  if t.sharding and n not in out.rows}
        if not _shapes_follow(op, sliced | out.rows, shapes):
            continue
        ranks = [len(shapes[n]) for n in op.result_names]
        if not partial and all(r >= 1 for r in ranks) and all(
                stepped(n) for n in op.result_names) and \
                tuple(want) == ((AXIS,),) + ((),) * (ranks[0] - 1):
            return "rows", sliced
        if partial == (AXIS,) and not any(want):
            return "partial", sliced
        return None
    return None


def _made_in_rows(op: Op, types: dict[str, TensorType], shapes: dict[str, tuple[int, ...]],
                  stepped) -> set[str] | None:
    """The outside operands ``op`` slices to make its results a chunk at a time (they
    are made split along dim 0 by the rule), or None where it can not (an ``iota``
    along the steps, a constant of more than one value)."""
    if op.name == "constant" and isinstance(op.attrs.get("value"), (list, tuple)):
        return None
    results = [Value(r.name, _typed(r.name, types, shapes, "rows")) for r in op.results]
    probe = Op(op.name, list(op.operands), results, dict(op.attrs), loc=op.loc)
    ins = [_typed(n, types, shapes, "rows" if stepped(n) else "") for n in op.operands]
    try:
        want, partial, _ = result_layout(probe, ins)
    except BladecError:
        return None
    if partial or tuple(want) != ((AXIS,),) + ((),) * (len(shapes[op.results[0].name]) - 1):
        return None
    sliced = {n for n, t in zip(op.operands, ins) if t.sharding}
    return sliced if _shapes_follow(op, sliced, shapes) else None


def _shapes_follow(op: Op, cut: set[str], shapes: dict[str, tuple[int, ...]]) -> bool:
    """Whether ``op``'s result shapes follow its operands cut to a chunk (``cut``): a
    ``broadcast_like`` takes dims from its references, so its first dim must come from
    a cut reference's first dim, and no other dim may."""
    if op.name != "broadcast_like":
        return True
    refs = op.operands[1:]
    for i, (s, a) in enumerate(zip(op.attrs["source"], op.attrs["axis"])):
        if int(s) < 0:
            continue
        ref = refs[int(s)]
        if (ref in cut and int(a) % max(len(shapes[ref]), 1) == 0) != (i == 0):
            return False
    return True
