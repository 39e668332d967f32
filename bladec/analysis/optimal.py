"""The optimal op order for one binding, by dynamic programming over scheduled sets.

What is resident after a set of ops has run depends only on the set (a value stays
while it has an unscheduled user or is an output), so the least peak to reach a set is
a function of the set: dp[S] = min over the last op X of max(dp[S - X], step(S - X, X)).
The number of sets is the number of down-closed subsets of the graph; for graphs of up to
a few dozen ops in realistic shapes that is small, and ``max_states`` bounds the work.
"""
from __future__ import annotations

from bladec.analysis.liveness import is_compute
from bladec.ir import Func, Op


def optimal_order(func: Func, sizes: dict[str, int], max_states: int = 200_000
                  ) -> tuple[int, list[Op]] | None:
    """``(peak, order)`` of a best schedule, or None when the search is too large."""
    ops = [op for op in func.ops if is_compute(op)]
    n = len(ops)
    producer = {r.name: i for i, op in enumerate(ops) for r in op.results}
    inputs = {a.name for a in func.args}
    outputs = set(func.outputs())
    preds = [0] * n
    users_of: dict[str, int] = {}
    for i, op in enumerate(ops):
        for name in op.operands:
            if name in producer:
                preds[i] |= 1 << producer[name]
            users_of[name] = users_of.get(name, 0) | (1 << i)
    base = sum(sizes[a] for a in inputs)
    values = [(r.name, i) for i, op in enumerate(ops) for r in op.results]

    def resident(done: int) -> int:
        total = base
        for name, i in values:
            if done >> i & 1 and (name in outputs or users_of.get(name, 0) & ~done):
                total += sizes[name]
        return total

    frontier: dict[int, tuple[int, int]] = {0: (base, -1)}  # set -> (peak, last op)
    back: dict[int, tuple[int, int]] = {}
    for _ in range(n):
        nxt: dict[int, tuple[int, int]] = {}
        for done, (peak, _) in frontier.items():
            res = resident(done)
            for x in range(n):
                if done >> x & 1 or preds[x] & ~done:
                    continue
                step = res + sum(sizes[r.name] for r in ops[x].results)
                cand = (max(peak, step), x)
                key = done | 1 << x
                if key not in nxt or cand[0] < nxt[key][0]:
                    nxt[key] = cand
        for key, (peak, x) in nxt.items():
            back[key] = (peak, x)
        if len(back) > max_states:
            return None
        frontier = nxt
    full = (1 << n) - 1
    if n == 0:
        return base, []
    order: list[Op] = []
    done = full
    while done:
        _, x = back[done]
        order.append(ops[x])
        done &= ~(1 << x)
    order.reverse()
    return back[full][0], order
