"""The optimal op order for one binding, by dynamic programming over scheduled sets.

What is resident after a set of ops has run depends only on the set (a value stays
while it has an unscheduled user or is an output), so the least peak to reach a set is
a function of the set: dp[S] = min over the last op X of max(dp[S - X], step(S - X, X)).
The number of sets is the number of down-closed subsets of the graph; for graphs of up to
a few dozen ops in realistic shapes that is small, and ``max_states`` bounds the work.

The resident bytes of a set are carried with it and updated by the op that extends it
(what the op makes, less what it is the last reader of), not summed again over every
value: the search is run by the schedule pass on every small graph it orders, at several
bindings, so its cost is paid by every compilation.
"""
from __future__ import annotations

from bladec.analysis.liveness import is_compute
from bladec.ir import Func, Op


def optimal_order(func: Func, sizes: dict[str, int], max_states: int = 200_000,
                  at_most: int | None = None) -> tuple[int, list[Op]] | None:
    """``(peak, order)`` of a best schedule, or None when the search is too large.

    ``at_most``: the peak of an order the caller has. A set reached only above it lies
    on no optimal path and is not kept, so the search holds only the sets under it:
    the tighter the caller's order, the larger the graphs within ``max_states``.

    Ties are broken as a breadth-first walk meets them: sets in the order they were first
    reached, ops by position, the first of equal peaks kept."""
    ops = [op for op in func.ops if is_compute(op)]
    n = len(ops)
    if n == 0:
        return sum(sizes[a] for a in {a.name for a in func.args}), []
    producer = {r.name: i for i, op in enumerate(ops) for r in op.results}
    outputs = set(func.outputs())
    preds = [0] * n
    users_of: dict[str, int] = {}
    for i, op in enumerate(ops):
        for name in op.operands:
            if name in producer:
                preds[i] |= 1 << producer[name]
            users_of[name] = users_of.get(name, 0) | (1 << i)
    succ = [0] * n
    for i in range(n):
        p = preds[i]
        while p:
            low = p & -p
            p ^= low
            succ[low.bit_length() - 1] |= 1 << i
    made = [sum(sizes[r.name] for r in op.results) for op in ops]
    # what stays of what op x makes (a result nobody reads and no output goes at once),
    # and the values x may be the last reader of: (their readers, their bytes)
    kept = [sum(sizes[r.name] for r in op.results
                if r.name in outputs or users_of.get(r.name, 0)) for op in ops]
    read: list[list[tuple[int, int]]] = [
        [(users_of[name], sizes[name]) for name in dict.fromkeys(op.operands)
         if name in producer and name not in outputs] for op in ops]
    base = sum(sizes[a] for a in {a.name for a in func.args})
    full = (1 << n) - 1

    # set -> (peak to reach it, last op, bytes resident after it, ops ready to run)
    ready0 = sum(1 << i for i in range(n) if not preds[i])
    frontier: dict[int, tuple[int, int, int, int]] = {0: (base, -1, base, ready0)}
    levels: list[dict[int, tuple[int, int, int, int]]] = []
    states = 0
    bound = base + sum(made) if at_most is None else at_most   # (no order's peak is more)
    for _ in range(n):
        nxt: dict[int, tuple[int, int, int, int]] = {}
        for done, (peak, _, res, ready) in frontier.items():
            rest = ready
            while rest:
                bit = rest & -rest
                rest ^= bit
                x = bit.bit_length() - 1
                step = res + made[x]
                cand = step if step > peak else peak
                if cand > bound:
                    continue
                key = done | bit
                seen = nxt.get(key)
                if seen is None:
                    after = res + kept[x]
                    for readers, size in read[x]:
                        if not readers & ~key:
                            after -= size
                    now = ready ^ bit
                    woken = succ[x]
                    while woken:
                        low = woken & -woken
                        woken ^= low
                        if not preds[low.bit_length() - 1] & ~key:
                            now |= low
                    nxt[key] = (cand, x, after, now)
                elif cand < seen[0]:
                    nxt[key] = (cand, x, seen[2], seen[3])
        levels.append(nxt)
        states += len(nxt)
        if states > max_states or not nxt:   # (none: at_most was below every order)
            return None
        frontier = nxt
    order: list[Op] = []
    done = full
    for level in reversed(levels):
        x = level[done][1]
        order.append(ops[x])
        done &= ~(1 << x)
    order.reverse()
    return levels[-1][full][0], order
