"""The least peak over every order of a graph, found apart from bladec's own search.

bladec's schedule pass finds optimal orders by dynamic programming level by level
(bladec/analysis/optimal.py); this is a second, independent solver for the tests and the
benchmark that judge it (issue 37): a best-first (Dijkstra) search over the sets of ops
executed, with ``max`` in place of ``+`` (a path's peak never falls as it grows), so the
first full set taken from the heap has the least peak. Its memory model is DESIGN.md
section 4's, written here for sets: the inputs stay, a value stays while an op that reads
it has not run or while it is an output, and an op's step is what stays before it plus
its results. Callers check it against ``exact_peak`` on the orders they compare.
"""
from __future__ import annotations

import heapq

from bladec.analysis.liveness import is_compute
from bladec.ir import Func, Op


class Steps:
    """One graph at one binding (``sizes``: bytes per value name). ``inner`` gives, by op
    position among the compute ops, what an op allocates while it runs beyond its results
    (a loop's regions, which the caller measures; none elsewhere)."""

    def __init__(self, func: Func, sizes: dict[str, int],
                 inner: list[int] | None = None) -> None:
        self.ops = [op for op in func.ops if is_compute(op)]
        # by results: a scheduled listing's ops are other objects of the same names
        self.index = {tuple(op.result_names): i for i, op in enumerate(self.ops)}
        made = {r.name: i for i, op in enumerate(self.ops) for r in op.results}
        # (a set of bits: two results of one op are one bit, not a sum)
        self.needs = [sum(1 << i for i in {made[n] for n in op.operands if n in made})
                      for op in self.ops]
        readers: dict[str, int] = {}
        for i, op in enumerate(self.ops):
            for n in op.operands:
                readers[n] = readers.get(n, 0) | 1 << i
        outputs = set(func.outputs())
        self.values = [(1 << i, -1 if r.name in outputs else readers.get(r.name, 0),
                        sizes[r.name]) for i, op in enumerate(self.ops) for r in op.results]
        self.base = sum(sizes[a.name] for a in func.args)
        # what an op's step adds to what stays before it
        self.made = [sum(sizes[r.name] for r in op.results) + (inner[i] if inner else 0)
                     for i, op in enumerate(self.ops)]
        # for the search's running sum: what op i leaves resident, and the values it
        # reads that nothing else keeps (their readers and their bytes)
        self.stays = [sum(sizes[r.name] for r in op.results
                          if r.name in outputs or readers.get(r.name)) for op in self.ops]
        self.reads = [[(readers[n], sizes[n]) for n in set(op.operands)
                       if n in made and n not in outputs] for op in self.ops]

    def held(self, done: int) -> int:
        """Bytes resident once the ops of ``done`` have run (summed afresh)."""
        return self.base + sum(size for bit, readers, size in self.values
                               if done & bit and (readers == -1 or readers & ~done))

    def after(self, held: int, done: int, i: int) -> int:
        """Bytes resident once op ``i`` has run, ``held`` before it and ``done`` the set
        with it: the running form of :meth:`held`, which the search uses."""
        return held + self.stays[i] - sum(size for readers, size in self.reads[i]
                                          if not readers & ~done)

    def peak(self, order: list[Op]) -> int:
        done, held, top = 0, self.base, self.base
        for op in order:
            i = self.index[tuple(op.result_names)]
            top = max(top, held + self.made[i])
            done |= 1 << i
            held = self.after(held, done, i)
        return top

    def optimum(self, max_sets: int | None = None, at_most: int | None = None
                ) -> int | None:
        """The least peak over every order, or None once more than ``max_sets`` sets of
        ops have been reached (the search is exponential in the graph's width).
        ``at_most``: the peak of some order, known to the caller; a set reached only
        above it is on no optimal path and is not kept."""
        full = (1 << len(self.ops)) - 1
        readers = [sum(1 << j for j, need in enumerate(self.needs) if need >> i & 1)
                   for i in range(len(self.ops))]
        best = {0: self.base}
        # per set: the bytes resident after it, and the ops whose operands it has made
        state = {0: (self.base, sum(1 << i for i, need in enumerate(self.needs) if not need))}
        heap = [(self.base, 0)]
        while heap:
            top, done = heapq.heappop(heap)
            if done == full:
                return top
            if top > best[done]:
                continue
            held, ready = state[done]
            rest = ready
            while rest:
                bit = rest & -rest
                rest ^= bit
                i = bit.bit_length() - 1
                nxt, cost = done | bit, max(top, held + self.made[i])
                if at_most is not None and cost > at_most:
                    continue
                if cost < best.get(nxt, cost + 1):
                    if nxt not in best:
                        if max_sets is not None and len(best) >= max_sets:
                            return None
                        woken = sum(1 << j for j in _bits(readers[i])
                                    if not self.needs[j] & ~nxt)
                        state[nxt] = (self.after(held, nxt, i), (ready ^ bit) | woken)
                    best[nxt] = cost
                    heapq.heappush(heap, (cost, nxt))
        raise AssertionError("no order executes every op")


def _bits(mask: int) -> list[int]:
    """The positions of a mask's set bits."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
