"""Checkpointed scans: a listing's forward and backward loops at one binding, rewritten
to keep every k-th carry and recompute each chunk of k steps before its backward steps.

The gradient of a ``lax.scan`` (JAX's transposition, or bladec's own adjoint in
ops/loop.py) is two loops: a forward scan whose stacked outputs include the step's
residuals (the values the backward steps read: gate activations, the carries each step
started from), ``[T, ...]`` each, and a scan in the other direction that reads them as
scanned inputs. The planner sees each loop as one op, so every residual of every step is
held from the forward loop to the backward one: for an LSTM language model most of the
step's peak, which no eviction around the loops can lower.

At a binding the trip count T is known, and the pair can be rewritten as what
``jax.checkpoint`` over chunks of a scan gives (Griewank's checkpointing, one level):
with k steps per chunk (the last chunk holds the remainder where k does not divide T),

- the forward loop becomes one scan per chunk, each yielding its final carries (the next
  chunk's start, kept until that chunk's backward steps) and the stacked outputs the rest
  of the step reads (concatenated back into the original value), but no residuals;
- before each chunk of the backward loop (from the last chunk to the first), the chunk's
  forward steps run again from its saved carries, yielding only its residuals, which the
  chunk's backward scan reads; its carries thread from chunk to chunk, its stacked
  outputs are concatenated. Every chunk is recomputed, the one that ran last forward
  too: keeping its residuals from the forward pass would save one chunk's steps but
  hold them through everything between the loops (the loss: an LSTM LM's logits).

What is held of the loops is then about ``ceil(T/k)`` carries and one chunk's residuals,
at the cost of running the forward steps once more. Each step runs the
same body ops on the same values as before, in the same order (the backward loop's
carries, the constants' cotangents among them, accumulate step by step as they did), so
the results are the unrewritten run's bit for bit where each op is its own kernel.
The listing keeps every value's name (the new values take fresh ones), so its inputs and
outputs are the original's. The executor (executor.py) plans it at bindings where the
loop ops' plan does not fit a limit, with ``k`` from :func:`chunk_lengths`.

What lies between the loops stays whole that way: a language model's loss over all
steps' hidden states, ``[T, B, vocab]`` values, held an LSTM LM at a vocabulary of 256
at 0.57x of its no-limit peak. With ``rows`` the ops there that work step by step run a
chunk at a time beside each backward chunk, their sums over the steps added up chunk by
chunk (rows.py): equal within the fused tolerance, so not on a bitwise backend.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

from bladec.analysis.liveness import is_compute
from bladec.ir import DTYPE_BYTES, Func, Module, Op, Value
from bladec.ops.loop import ARG, BODY, YIELD, parts
from bladec.runtime.rows import Region, region
from bladec.runtime.specialization import Fixed


@dataclass(frozen=True)
class Pair:
    """A forward scan, the scan that runs its steps backwards reading some of its stacked
    outputs (``residuals``: indices into the stacked outputs, read by nothing else), and
    the trip count at the binding."""
    forward: Op
    backward: Op
    residuals: tuple[int, ...]
    trips: int


def pairs(func: Func, shapes: dict[str, tuple[int, ...]]) -> list[Pair]:
    """The forward/backward scan pairs of ``func``'s top level that :func:`checkpointed`
    rewrites: bodies without regions, directions opposite, the same trip count, at least
    one residual (a stacked output read only as the backward scan's scanned input)."""
    loops = [op for op in func.ops if op.name == "scan" and parts(op)[2]
             and not any(o.regions for o in op.regions.get(BODY, []))]
    readers: dict[str, list[tuple[Op, int]]] = {}
    for op in func.ops:
        for i, n in enumerate(op.operands):
            readers.setdefault(n, []).append((op, i))
    returned = set(func.outputs())
    found: list[Pair] = []
    used: set[int] = set()
    for fwd in loops:
        nk = parts(fwd)[1]
        trips = shapes[fwd.operands[sum(parts(fwd)[:2])]][0]
        for bwd in loops:
            if bwd is fwd or id(bwd) in used or id(fwd) in used or \
                    bool(bwd.attrs.get("reverse")) == bool(fwd.attrs.get("reverse")):
                continue
            first = sum(parts(bwd)[:2])
            if shapes[bwd.operands[first]][0] != trips:
                continue
            residuals = tuple(
                j for j, r in enumerate(fwd.results[nk:]) if r.name not in returned
                and readers.get(r.name) and all(o is bwd and i >= first
                                                for o, i in readers[r.name]))
            if residuals:
                found.append(Pair(fwd, bwd, residuals, trips))
                used |= {id(fwd), id(bwd)}
    return found


def chunk_lengths(func: Func, shapes: dict[str, tuple[int, ...]]) -> list[int]:
    """The chunk lengths worth planning at ``shapes``: the one that holds the fewest bytes
    by the loops' own count (``ceil(T/k)`` saved carries plus one chunk's residuals, for
    the pair of the longest trip count), after it twice that (half the chunks: less
    dispatch, for limits it meets) where that still makes two chunks. Every length costs
    the same recomputation (each forward step once more), so a limit takes the first that
    fits; a refusal searches each (two at most: a search compiles a dozen plans). Empty
    where there is no pair or only one step."""
    found = pairs(func, shapes)
    if not found:
        return []
    pair = max(found, key=lambda p: p.trips)
    fwd, t = pair.forward, pair.trips
    nk = parts(fwd)[1]

    def size(r: Value, dims: tuple[int, ...]) -> int:
        return prod(dims) * DTYPE_BYTES[r.type.dtype]
    carry = sum(size(r, shapes[r.name]) for r in fwd.results[:nk])
    step = sum(size(r, shapes[r.name][1:]) for r in (fwd.results[nk + j]
                                                       for j in pair.residuals))
    held = {k: ceil(t / k) * carry + k * step for k in range(1, t)}
    if not held:
        return []
    best = min(held, key=lambda k: (held[k], -k))
    return [2 * best, best] if 2 * best < t else [best]


def checkpointed(func: Func, shapes: dict[str, tuple[int, ...]], k: int,
                 rows: bool = False) -> Module | None:
    """``func`` (a listing's main, its remat plan and schedule versions left out) with
    every type fixed at ``shapes`` and each pair of :func:`pairs` checkpointed every
    ``k`` steps; None where no pair has more than ``k`` steps. ``rows``: the ops between
    the loops that work step by step on the forward loop's stacked outputs run a chunk
    at a time before each backward chunk (rows.py; sums then add up in another order)."""
    found = [p for p in pairs(func, shapes) if p.trips > k]
    if not found:
        return None
    fixed = Fixed(shapes, {n: t.dtype for n, t in func.value_types().items()})
    chunks = {id(p.forward): _Chunks(fixed, p, k,
                                     rows_region(func, p, shapes) if rows else None)
              for p in found}
    backs = {id(p.backward): chunks[id(p.forward)] for p in found}
    moved = {id(op) for c in chunks.values() if c.rows for op in c.rows.ops}
    args = fixed.args(func)
    ops: list[Op] = []
    for op in filter(is_compute, func.ops):
        if id(op) in chunks:
            ops.extend(chunks[id(op)].forward())
        elif id(op) in backs:
            ops.extend(backs[id(op)].backward())
        elif id(op) not in moved:
            ops.append(fixed.renamed(op, {}))
    return Module([Func(func.name, args, ops, list(func.outputs()), func.loc,
                        func.return_loc)])


def rows_region(func: Func, pair: Pair, shapes: dict[str, tuple[int, ...]]
                ) -> Region | None:
    """The pair's rows region (rows.py), from the stacked outputs that are not residuals."""
    nk = parts(pair.forward)[1]
    seeds = [r.name for j, r in enumerate(pair.forward.results[nk:])
             if j not in pair.residuals]
    return region(func, pair.forward, pair.backward, seeds, shapes)


class _Chunks:
    """One pair's rewrite: the forward chunks (saving each chunk's starting carries), then
    the backward chunks with their recomputations (and with the rows region's chunks,
    where there is one)."""

    def __init__(self, fixed: Fixed, pair: Pair, k: int, rows: Region | None = None
                 ) -> None:
        self.fixed, self.pair, self.rows = fixed, pair, rows
        self.pieces: dict[str, list[str]] = {}   # stacked output -> its chunks' pieces
        self.fwd, self.bwd = pair.forward, pair.backward
        self.bounds = [(s, min(s + k, pair.trips)) for s in range(0, pair.trips, k)]
        order = list(range(len(self.bounds)))
        self.order = order[::-1] if self.fwd.attrs.get("reverse") else order
        self.starts: dict[int, list[str]] = {}   # chunk -> the carries it starts from

    def forward(self) -> list[Op]:
        fwd, nk = self.fwd, parts(self.fwd)[1]
        stacked = fwd.results[nk:]
        kept = [j for j in range(len(stacked)) if j not in self.pair.residuals]
        carry = list(fwd.operands[parts(fwd)[0]:parts(fwd)[0] + nk])
        out: list[Op] = []
        pieces: dict[int, list[str]] = {}
        for c in self.order:
            self.starts[c] = carry
            names = [r.name for r in fwd.results[:nk]] if c == self.order[-1] else None
            results = self._chunk(fwd, c, carry, {}, kept, out, carry_names=names)
            carry, pieces[c] = results[:nk], results[nk:]
        unread = self.rows.seeds_unread if self.rows else set()
        for i, j in enumerate(kept):
            self.pieces[stacked[j].name] = [pieces[c][i] for c in range(len(self.bounds))]
            if stacked[j].name not in unread:
                out.append(self.fixed.stacked(stacked[j], self.pieces[stacked[j].name]))
        return out

    def backward(self) -> list[Op]:
        fwd, bwd = self.fwd, self.bwd
        nk, bk = parts(fwd)[1], parts(bwd)[1]
        first = sum(parts(bwd)[:2])
        where = {fwd.results[nk + j].name: i for i, j in enumerate(self.pair.residuals)}
        carry = list(bwd.operands[first - bk:first])
        out: list[Op] = []
        pieces: dict[int, list[str]] = {}
        sums: dict[str, str] = {}   # a total of the rows region -> its sum so far
        for c in reversed(self.order):
            again = self._chunk(fwd, c, self.starts[c], {}, list(self.pair.residuals), out)
            given = {i: again[nk + where[n]]
                     for i, n in enumerate(bwd.operands) if i >= first and n in where}
            if self.rows:
                given.update(self._rows(c, out, sums, c == self.order[0]))
            names = [r.name for r in bwd.results[:bk]] if c == self.order[0] else None
            results = self._chunk(bwd, c, carry, given, list(range(len(bwd.results) - bk)),
                                  out, carry_names=names)
            carry, pieces[c] = results[:bk], results[bk:]
        for j, r in enumerate(bwd.results[bk:]):
            out.append(self.fixed.stacked(r, [pieces[c][j] for c in sorted(pieces)]))
        return out

    def _rows(self, c: int, out: list[Op], sums: dict[str, str], last: bool
              ) -> dict[int, str]:
        """Chunk ``c`` of the rows region appended to ``out``: its ops on the chunk's rows
        (the forward's pieces, the outside values it slices), its partial sums added to
        ``sums`` (named as the totals after the ``last`` chunk); the backward chunk's
        scanned operands it feeds (operand index -> name)."""
        fixed, rows = self.fixed, self.rows
        s, e = self.bounds[c]
        env = {n: self.pieces[n][c] for n in rows.seeds}
        env.update({n: fixed.rows(n, s, e, out, f"{n}.s{s}") for n in sorted(rows.sliced)})
        for op in rows.ops:
            results = []
            for r in op.results:
                shape = (e - s, *fixed.shapes[r.name][1:]) if r.name in rows.rows else None
                results.append(Value(fixed.fresh(f"{r.name}.c{c}"),
                                     fixed.type(r.name, r.type.dtype, shape)))
            out.append(fixed.renamed(op, env, results))
            env.update({r.name: v.name for r, v in zip(op.results, results)})
        for n in rows.totals:
            if n not in sums:
                sums[n] = env[n]
                continue
            total = Value(n if last else fixed.fresh(f"{n}.sum{c}"),
                          fixed.type(n, fixed.dtype(n)))
            out.append(Op("add", [sums[n], env[n]], [total]))
            sums[n] = total.name
        return {i: env[n] for i, n in rows.fed.items()}

    def _chunk(self, scan: Op, c: int, carry: list[str], given: dict[int, str],
               picks: list[int], out: list[Op], carry_names: list[str] | None = None
               ) -> list[str]:
        """A scan running ``scan``'s steps of chunk ``c`` from ``carry``: its scanned
        inputs sliced to the chunk (or ``given``, by operand index), yielding the carries
        and the stacked outputs ``picks`` (indices after the carries); appended to
        ``out``; its results' names (the carries named ``carry_names`` where given)."""
        fixed = self.fixed
        nc, nk, _ = parts(scan)
        s, e = self.bounds[c]
        operands = list(scan.operands[:nc]) + list(carry) + [
            given.get(i) or fixed.rows(n, s, e, out, f"{n}.s{s}")
            for i, n in enumerate(scan.operands) if i >= nc + nk]
        rename: dict[str, str] = {}
        body: list[Op] = []
        for op in scan.regions[BODY]:
            if op.name == YIELD:
                ys = [op.operands[i] for i in range(nk)] + [op.operands[nk + j] for j in picks]
                body.append(Op(YIELD, [rename.get(n, n) for n in ys], [], loc=op.loc))
                continue
            results = []
            for r in op.results:
                rename[r.name] = fixed.fresh(r.name)
                results.append(Value(rename[r.name], fixed.type(r.name, r.type.dtype)))
            if op.regions:
                raise AssertionError("a checkpointed scan's body holds no region")
            body.append(fixed.renamed(op, rename, results))
        results = [Value(carry_names[i] if carry_names else fixed.fresh(r.name),
                         fixed.type(r.name, r.type.dtype))
                   for i, r in enumerate(scan.results[:nk])]
        for j in picks:
            r = scan.results[nk + j]
            dims = fixed.shapes[r.name]
            results.append(Value(fixed.fresh(f"{r.name}.c{c}"),
                                 fixed.type(r.name, r.type.dtype, (e - s, *dims[1:]))))
        out.append(Op("scan", operands, results, dict(scan.attrs), {BODY: body}, scan.loc))
        assert all(o.name != ARG or int(o.attrs["index"]) < len(operands) for o in body)
        return [r.name for r in results]
