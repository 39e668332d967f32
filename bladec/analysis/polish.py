"""A local search that lowers an order's exact peak by moving work across the peak step.

The list scheduler decides op by op and can hold a value across the step where memory
peaks when an op that frees it could have run before; the optimum (analysis/optimal.py)
is affordable on small graphs only. On generated graphs of 20-60 ops the orders the
runtime ran were optimal at 88 of 216 bindings and up to 1.38x the optimum
(benchmarks/bench_optimum.py, 2026-12-08, before this search); at some bindings of the
small Llama samples, these moves made at the binding itself lowered the peak by 1-7%.

At the first step of the highest peak, two moves are tried, each with everything that
must move with it:

- an op after the peak, together with its producers that are after the peak too, runs
  just before it (what it frees is gone at the peak);
- an op before the peak, together with its readers that are before the peak too, runs
  just after it (what it makes is not there yet at the peak).

The move that lowers ``(peak, steps at the peak)`` the most is taken, and the search
goes on from the new peak until no move lowers it or the work budget is spent. A move
changes the steps of one span of positions only, so each is priced on that span (from
the resident bytes before it, with the peaks before and after it kept). The budget is
in ops walked (timelines, groups gathered, steps priced), not seconds, so the order
found depends on the graph alone.
"""
from __future__ import annotations

from typing import Callable

from bladec.analysis.liveness import body_peak, is_compute
from bladec.ir import Func, Op

WINDOW = 64          # candidate ops this many positions either side of the peak at most
WORK = 40_000        # ops walked (groups gathered, steps priced) per search, at most


class _Graph:
    """One function's compute ops as indices, at one binding's sizes."""

    def __init__(self, func: Func, sizes: dict[str, int]) -> None:
        self.ops = [op for op in func.ops if is_compute(op)]
        producer = {r.name: i for i, op in enumerate(self.ops) for r in op.results}
        outputs = set(func.outputs())
        readers: dict[str, list[int]] = {}
        for i, op in enumerate(self.ops):
            for name in dict.fromkeys(op.operands):
                readers.setdefault(name, []).append(i)
        self.preds = [sorted({producer[n] for n in op.operands if n in producer})
                      for op in self.ops]
        self.succs: list[list[int]] = [[] for _ in self.ops]
        for i, preds in enumerate(self.preds):
            for p in preds:
                self.succs[p].append(i)
        self.made = [sum(sizes[r.name] for r in op.results) for op in self.ops]
        self.inner = [body_peak(op, sizes.__getitem__, 0, max) for op in self.ops]
        # what an op frees wherever it runs: its results that nothing reads and no
        # output keeps, and the values it alone reads
        freeable = [[n for n in dict.fromkeys(op.operands)
                     if n in producer and n not in outputs] for op in self.ops]
        self.dead = [sum(sizes[r.name] for r in op.results
                         if r.name not in outputs and not readers.get(r.name))
                     + sum(sizes[n] for n in names if len(readers[n]) == 1)
                     for op, names in zip(self.ops, freeable)]
        # per op, the values it reads among others: (their readers, their bytes)
        self.reads = [[(readers[n], sizes[n]) for n in names if len(readers[n]) > 1]
                      for names in freeable]
        self.base = sum(sizes[a.name] for a in func.args)

    def timeline(self, order: list[int]) -> tuple[list[int], list[int]]:
        """Each position's step and the bytes resident before it."""
        pos = [0] * len(self.ops)
        for k, i in enumerate(order):
            pos[i] = k
        return self.span(order, pos, 0, self.base)

    def span(self, ops: list[int], pos: list[int], a: int, resident: int
             ) -> tuple[list[int], list[int]]:
        """Steps of ``ops`` run from position ``a`` on (``pos``: every op's position,
        these at theirs), starting from ``resident`` bytes before them."""
        steps, before = [], []
        for k, i in enumerate(ops, a):
            before.append(resident)
            resident += self.made[i]
            steps.append(resident + self.inner[i])
            resident -= self.dead[i]
            for readers, size in self.reads[i]:
                if max(pos[r] for r in readers) == k:
                    resident -= size
        return steps, before


def _key(steps: list[int]) -> tuple[int, int]:
    top = max(steps)
    return top, steps.count(top)


def _merge(parts: list[tuple[int, int]]) -> tuple[int, int]:
    top = max(t for t, _ in parts)
    return top, sum(c for t, c in parts if t == top)


def _extremes(steps: list[int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(peak, count) of every prefix ``steps[:k]`` and every suffix ``steps[k:]``."""
    n = len(steps)
    prefix, suffix = [(0, 0)] * (n + 1), [(0, 0)] * (n + 1)
    top = count = 0
    for k, step in enumerate(steps):
        if step > top:
            top, count = step, 1
        elif step == top:
            count += 1
        prefix[k + 1] = (top, count)
    top = count = 0
    for k in range(n - 1, -1, -1):
        step = steps[k]
        if step > top:
            top, count = step, 1
        elif step == top:
            count += 1
        suffix[k] = (top, count)
    return prefix, suffix


def _group(start: int, links: list[list[int]], inside: Callable[[int], bool]) -> set[int]:
    """``start`` and every op reachable from it through ``links`` that ``inside`` takes."""
    group, stack = {start}, [start]
    while stack:
        for x in links[stack.pop()]:
            if x not in group and inside(x):
                group.add(x)
                stack.append(x)
    return group


def polish_order(func: Func, sizes: dict[str, int], order: list[Op],
                 work: int = WORK) -> list[Op]:
    """``order`` (compute ops of ``func``) with its exact peak lowered where moves
    across the peak step lower it (the module docstring); never higher."""
    g = _Graph(func, sizes)
    index = {id(op): i for i, op in enumerate(g.ops)}
    seq = [index[id(op)] for op in order]
    n = len(seq)
    while n and work > 0:
        work -= 2 * n   # the timeline and its prefix and suffix peaks
        steps, before = g.timeline(seq)
        current = _key(steps)
        p = steps.index(current[0])
        pos = [0] * n
        for k, i in enumerate(seq):
            pos[i] = k
        prefix, suffix = _extremes(steps)
        best: tuple[tuple[int, int], list[int], int, int] | None = None
        tried: set[frozenset[int]] = set()
        lo, hi = max(0, p - WINDOW), min(n, p + WINDOW + 1)
        for k in list(range(p + 1, hi)) + list(range(lo, p)):
            later = k > p
            links = g.preds if later else g.succs
            group = _group(seq[k], links,
                           (lambda x: pos[x] > p) if later else (lambda x: pos[x] < p))
            work -= len(group)
            key = frozenset(group)
            if key in tried or max(pos[x] for x in group) >= hi or \
                    min(pos[x] for x in group) < lo or \
                    any(pos[y] == p for x in group for y in links[x]):
                continue   # (seen, outside the window, or tied to the peak's own op)
            tried.add(key)
            if later:   # [p, b]: the group first, then the rest in their order
                a, b = p, max(pos[x] for x in group) + 1
                middle = [x for x in seq[a:b] if x in group] + \
                    [x for x in seq[a:b] if x not in group]
            else:       # [a, p]: the rest, then the group after the peak's op
                a, b = min(pos[x] for x in group), p + 1
                middle = [x for x in seq[a:b] if x not in group] + \
                    [x for x in seq[a:b] if x in group]
            for offset, x in enumerate(middle, a):   # priced in place, then put back
                pos[x] = offset
            span, _ = g.span(middle, pos, a, before[a])
            for offset, x in enumerate(seq[a:b], a):
                pos[x] = offset
            work -= b - a
            found = _merge([prefix[a], _key(span), suffix[b]])
            if found < current and (best is None or found < best[0]):
                best = (found, middle, a, b)
        if best is None:
            break
        _, middle, a, b = best
        seq[a:b] = middle
    return [g.ops[i] for i in seq]
