"""``redistribute``: every ``reshard`` becomes collectives in normal form (DESIGN section 12).

The normal form of Rink et al. (arXiv 2112.01075) is: slices, then all_to_alls and
permutes, then gathers. Slices only shrink the local block, all_to_alls and permutes keep
its size, gathers only grow it, so every intermediate is at most max(source local,
target local) per device: no device ever holds more of the array than at one end, and
no element moves twice. XLA's partitioner instead gathers the whole array on every
device for the changes it has no special case for.

The synthesis is a shortest-path search over the shardings of the array (a few hundred
on an 8-device mesh): Dijkstra from the source through three phases (slices; all_to_alls
and permutes; gathers), so every path is in normal form, costed by collectives (on small
arrays each one's rendezvous of every device costs more than its bytes), then by bytes
each device sends. One tree from a source serves every target. Where a mesh has too many
shardings to search, a constructive plan, over axes (each mesh axis splits at most one
dim):

1. every axis the target uses and the source does not is sliced onto its target dim;
2. every axis that changes dims is moved by an ``all_to_all`` from the minor end of its
   dim to the minor end of its target dim, in an order that lands the axes in the
   target's order where it can; where every axis still to move lies under one that
   stays, an ``all_permute`` (the same blocks per dim, held by other devices) brings
   the leaving axes to the minor end, and a last one fixes any order the moves left;
3. every axis the target does not use is gathered, kept until now at the minor end of
   its source dim.

Sub-axes: the search runs again over the refined mesh, each axis of composite size cut
into prime factors (x:4 as x.0:2, x.1:2, major first: the same devices, the same blocks),
so that a move may take part of an axis, as XLA's partitioner does: ``{x, y}`` to
``{y, x}`` on {x:4, y:2} is an all_to_all over x.1 (groups of 2, half the block sent)
and one permute, where whole axes take three all_to_alls. That plan is taken only where
it is cheaper; its intermediate types name sub-axes, which no listing can, so
the pass leaves such a reshard in place and bladec/emit/shard.py lowers it over the
refined mesh. The normal form's bound holds over either mesh, and :func:`plan` checks
it step by step.
"""
from __future__ import annotations

import functools
import heapq
import itertools
import math
from dataclasses import dataclass, replace
from typing import Iterator

from bladec.ir import Func, Mesh, Module, Op, TensorType, Value, fresh_name, walk
from bladec.passes.pipeline import register
from bladec.sharding import (all_shardings, permutation, refined, spec, splits, to_coarse,
                              to_fine, ways)
from bladec.types import Sharding


@dataclass(frozen=True)
class Step:
    """One collective of a redistribution: the op, its attributes, the sharding after it."""
    op: str
    attrs: dict
    sharding: Sharding


def normal_form(mesh: Mesh, src: Sharding, dst: Sharding,
                dims: tuple[int | None, ...] | None = None) -> list[Step]:
    """The steps of :func:`plan` (their shardings over the mesh it names)."""
    return plan(mesh, src, dst, dims)[1]


def plan(mesh: Mesh, src: Sharding, dst: Sharding,
         dims: tuple[int | None, ...] | None = None,
         sub_axes: bool = True) -> tuple[Mesh, list[Step]]:
    """The collectives that turn ``src`` into ``dst`` (both of one rank), in normal form,
    and the mesh their shardings are written over: ``mesh`` itself, or its
    :func:`~bladec.sharding.refined` mesh where moving part of an axis takes fewer
    collectives (``{x, y}`` to ``{y, x}`` on {x:4, y:2}: an all_to_all over x.1 and a
    permute, where whole axes take three all_to_alls: 1.4-2.5x faster on 8 CPU
    devices), or as many and fewer bytes moved (sent, and copied into place after a
    gather along a later dim). The
    cheapest found by a search where the mesh and rank allow, else the constructive
    plan. ``dims``: the array's global dims (None where symbolic), which every
    intermediate split must divide; ``sub_axes`` False: whole axes only (what the
    benchmark holds the choice against). Every step is checked to hold at most
    max(source local, target local) per device (an AssertionError is a bug here)."""
    best = _cheapest(mesh, src, dst, dims)
    fine = refined(mesh)
    used = mesh
    if fine != mesh and sub_axes:
        sub = _cheapest(fine, to_fine(mesh, src), to_fine(mesh, dst), dims)
        if sub is not None and (best is None or _cheaper(sub[0], best[0])) and any(
                to_coarse(mesh, s.sharding) is None for s in sub[1]):
            best, used = sub, fine
    steps = best[1] if best is not None else _constructive(mesh, src, dst)
    _check_bound(used, to_fine(mesh, src) if used is fine else src, steps,
                 min(ways(mesh, src), ways(mesh, dst)))
    return used, steps


def _cheaper(a: Cost, b: Cost) -> bool:
    """Fewer collectives, or as many and fewer bytes (beyond rounding)."""
    return a[0] < b[0] or (a[0] == b[0] and a[1] < b[1] - 1e-9)


def _check_bound(mesh: Mesh, src: Sharding, steps: list[Step], bound: int) -> None:
    """The memory guarantee, step by step: each step's result is cut into at least
    ``bound`` (min of the two ends' block counts) blocks, so that no device holds more
    than max(source local, target local); and the steps come in normal form (slices
    shrink, all_to_alls and permutes keep, gathers grow the block), so that no
    collective's own buffers exceed its operand or result."""
    phase, order = 0, {"shard_slice": 0, "all_to_all": 1, "all_permute": 1, "all_gather": 2}
    cur = ways(mesh, src)
    for s in steps:
        after = ways(mesh, s.sharding)
        assert after >= bound, (src, steps)
        assert order[s.op] >= phase, (src, steps)
        phase = order[s.op]
        assert (after >= cur) if phase == 0 else (after == cur) if phase == 1 else \
            (after <= cur), (src, steps)
        cur = after


def _constructive(mesh: Mesh, src: Sharding, dst: Sharding) -> list[Step]:
    """Slices onto the target dims, the cheapest of three middle plans, gathers."""
    cur = [list(axes) for axes in src]
    steps: list[Step] = []

    def emit(op: str, attrs: dict) -> None:
        steps.append(Step(op, attrs, tuple(tuple(axes) for axes in cur)))

    dim_src = {a: d for d, axes in enumerate(src) for a in axes}
    dim_dst = {a: d for d, axes in enumerate(dst) for a in axes}
    # 1. slices, onto the target dim, in the target's order
    for e, axes in enumerate(dst):
        for a in axes:
            if a not in dim_src:
                cur[e].append(a)
                emit("shard_slice", {"dim": e, "axis": a})
    # the state before the gathers: the target plus, per dim, its axes to gather
    goal = [list(axes) + [a for a in src[d] if a not in dim_dst] for d, axes in enumerate(dst)]
    home = {a: d for d, axes in enumerate(goal) for a in axes}
    # 2. moves and permutes: the cheapest of three plans (fewer collectives, gathers
    # included, then fewer permutes, which move every block)
    plans = [p for p in (_greedy(cur, goal, home), _arranged(cur, goal, home),
                         _relabel(mesh, cur, dst)) if p is not None]

    def cost(plan: Plan) -> tuple[int, int]:
        last = plan[-1][2] if plan else cur
        gathers = sum(len(axes) - len(want) for axes, want in zip(last, dst))
        return len(plan) + gathers, sum(op == "all_permute" for op, _, _ in plan)
    middle = min(plans, key=cost)
    for op, attrs, state in middle:
        cur = [list(axes) for axes in state]
        emit(op, attrs)
    # 3. gathers
    for d in _gathers(cur, dst):
        emit("all_gather", {"dim": d})
    return steps


def _gathers(cur: list[list[str]], dst: Sharding) -> Iterator[int]:
    """The dims of the gathers that take ``cur`` (updated in place, each gather's state
    when it is yielded) to ``dst``: minor axis first within a dim, and the last dim
    first: a gather along dim 0 appends whole rows, any other dim needs a transposing
    copy of its result, best made while the array is still small (XLA orders its own
    gathers so). One op per axis (lowered as one collective per dim)."""
    for d in reversed(range(len(cur))):
        while len(cur[d]) > len(dst[d]):
            cur[d].pop()
            yield d


Plan = list[tuple[str, dict, list[list[str]]]]


def _relabel(mesh: Mesh, cur: list[list[str]], dst: Sharding) -> Plan | None:
    """One permute to a state the gathers finish: each dim the target's axes plus axes
    the target does not use (to gather), cutting it into as many blocks as now. A
    permute may change which axis splits a dim, not only their order: ``{z, y, x}`` to
    ``{_, _, z}`` is a permute to ``{x, y, z}`` and two gathers, where moving z takes an
    all_to_all and a permute. None where no such state exists; among those that do, the
    one with the fewest gathers, then the fewest blocks moving."""
    free = [a for a in mesh.names if not any(a in axes for axes in dst)]
    blocks = splits(mesh, cur)
    best: tuple | None = None
    for assign in itertools.product(range(-1, len(dst)), repeat=len(free)):
        extra = [[a for a, d in zip(free, assign) if d == j] for j in range(len(dst))]
        if any(math.prod(mesh.size(a) for a in list(dst[j]) + extra[j]) != blocks[j]
               for j in range(len(dst))):
            continue
        for orders in itertools.product(*[itertools.permutations(e) for e in extra]):
            state = [list(dst[j]) + list(o) for j, o in enumerate(orders)]
            if state == cur:
                return []
            moving = sum(a != b for a, b in permutation(
                mesh, tuple(map(tuple, cur)), tuple(map(tuple, state))))
            key = (sum(map(len, orders)), moving)
            if best is None or key < best[0]:
                best = (key, state)
    if best is None:
        return None
    return [("all_permute", {}, best[1])]


def _greedy(cur: list[list[str]], goal: list[list[str]], home: dict[str, int]) -> Plan:
    """Moves that extend a target dim's prefix of the goal where one can; where every
    axis still to move lies under one that stays, a permute brings the leaving axes up;
    a last permute fixes the order the moves left."""
    cur = [list(axes) for axes in cur]
    plan: Plan = []
    while any(home[a] != d for d, axes in enumerate(cur) for a in axes):
        movable = [d for d, axes in enumerate(cur) if axes and home[axes[-1]] != d]
        if not movable:
            cur = [[a for a in axes if home[a] == d] + [a for a in axes if home[a] != d]
                   for d, axes in enumerate(cur)]
            plan.append(("all_permute", {}, [list(a) for a in cur]))
            continue

        def lands(d: int) -> int:
            """How many of d's newest axes move to their dim's next places in the goal
            at once (0: the newest one does not land)."""
            e = home[cur[d][-1]]
            best = 0
            for k in range(1, len(cur[d]) + 1):
                moved = cur[d][-k:]
                if any(home[a] != e for a in moved):
                    break
                if goal[e][:len(cur[e]) + k] == cur[e] + moved:
                    best = k
            return best
        d = max(movable, key=lambda d: (lands(d) > 0, lands(d)))
        k = max(lands(d), 1)
        plan.append(_move(cur, d, k, home))
    if cur != goal:
        plan.append(("all_permute", {}, [list(a) for a in goal]))
    return plan


def _arranged(cur: list[list[str]], goal: list[list[str]], home: dict[str, int]
              ) -> Plan | None:
    """One permute first arranges every dim (its axes stay on it) so that the moves, one
    all_to_all per run of axes that go from one dim to adjacent places of another, land
    each axis in its place in the goal; a last permute only where an axis that stays sits
    above one that arrives. None where two dims trade axes (the greedy plan does it)."""
    rank = len(cur)
    source = {a: d for d, axes in enumerate(cur) for a in axes}
    runs: list[tuple[int, int, list[str]]] = []  # (from, to, axes in goal order)
    for e in range(rank):
        for a in goal[e]:
            d = source[a]
            if d == e:
                continue
            if runs and runs[-1][1] == e and runs[-1][0] == d and \
                    goal[e].index(runs[-1][2][-1]) + 1 == goal[e].index(a):
                runs[-1][2].append(a)
            else:
                runs.append((d, e, [a]))
    # a dim receives only once every run out of it has left (else what arrives would
    # cover what leaves); into each dim the runs go in goal order
    order: list[tuple[int, int, list[str]]] = []
    pending = list(runs)
    while pending:
        ready = next((r for r in pending if not any(o[0] == r[1] for o in pending)
                      and next(p for p in pending if p[1] == r[1]) is r), None)
        if ready is None:
            return None  # two dims trade axes: this plan can not do it
        order.append(ready)
        pending.remove(ready)
    runs = order
    arranged = [sorted((a for a in cur[d] if home[a] == d), key=goal[d].index)
                for d in range(rank)]
    for d, _, axes in reversed(runs):  # the first run to leave a dim ends up on top
        arranged[d].extend(axes)
    plan: Plan = []
    if arranged != cur:
        plan.append(("all_permute", {}, [list(a) for a in arranged]))
    state = [list(a) for a in arranged]
    for d, e, axes in runs:
        plan.append(_move(state, d, len(axes), home))
    if state != goal:
        plan.append(("all_permute", {}, [list(a) for a in goal]))
    return plan


def _move(cur: list[list[str]], d: int, k: int, home: dict[str, int]
          ) -> tuple[str, dict, list[list[str]]]:
    """An all_to_all of d's k newest axes onto their dim, applied to ``cur``."""
    moved = cur[d][-k:]
    e = home[moved[0]]
    assert e != d and all(home[a] == e for a in moved), (cur, d, k)
    del cur[d][-k:]
    cur[e].extend(moved)
    return "all_to_all", {"src": d, "dst": e, **({"count": k} if k > 1 else {})}, \
        [list(a) for a in cur]


# -- the cheapest normal form: a search over the shardings ----------------------------

Cost = tuple[int, float]  # (collectives, share of the array each device sends or copies)
_SEARCHED = 4096          # most shardings of one rank searched; beyond, the constructive plan


def _cheapest(mesh: Mesh, src: Sharding, dst: Sharding,
              dims: tuple[int | None, ...] | None) -> tuple[Cost, list[Step]] | None:
    """The cost and steps of the normal-form program of fewest collectives (runs of gathers of one dim count
    once: they lower to one), then fewest bytes sent, or None where the mesh and rank
    have too many shardings to search. Slices may land on any dim, not only the target's,
    and a permute may change which axes split a dim, so that ``{x, y}`` to
    ``{z, (y, x)}`` is a slice of y's dim by z and one permute (XLA's program), not a
    slice, a permute and an all_to_all."""
    rank = len(src)
    if (rank + 1) ** len(mesh.names) > _SEARCHED:
        return None
    # every intermediate split of a dim must divide it: static dims as they are, a
    # symbolic one only as the two ends already require
    mods = tuple(n if n is not None else math.lcm(a, b) for n, a, b in zip(
        dims or (None,) * rank, splits(mesh, src), splits(mesh, dst)))
    tree = _tree(mesh, src, mods)
    ends = [node for node in ((dst, p) for p in range(3)) if node in tree]
    if not ends:
        return None
    node = min(ends, key=lambda n: tree[n][0])
    cost = tree[node][0]
    moves: list[tuple[str, dict, Sharding]] = []
    while tree[node][1] is not None:
        _, parent, op, attrs = tree[node]
        moves.append((op, attrs, node[0]))
        node = parent
    moves.reverse()
    steps = [Step(op, attrs, state) for op, attrs, state in moves if op != "all_gather"]
    cur = [list(axes) for axes in (steps[-1].sharding if steps else src)]
    for d in _gathers(cur, dst):
        steps.append(Step("all_gather", {"dim": d}, tuple(map(tuple, cur))))
    return cost, steps


@functools.lru_cache(maxsize=4096)
def _tree(mesh: Mesh, src: Sharding, mods: tuple[int, ...]
          ) -> dict[tuple[Sharding, int], tuple[Cost, tuple[Sharding, int] | None, str, dict]]:
    """Dijkstra from ``src`` over (sharding, phase): phase 0 slices, 1 all_to_alls and
    permutes, 2 gathers, so that every path is in normal form. Maps each node reached to
    (cost, parent node, op, attrs). One tree serves every target from one source."""
    rank = len(src)
    allowed = [s for s in all_shardings(mesh, rank)
               if all(m % k == 0 for m, k in zip(mods, splits(mesh, s)))]
    same_splits: dict[tuple[int, ...], list[Sharding]] = {}
    for s in allowed:
        same_splits.setdefault(tuple(splits(mesh, s)), []).append(s)
    ok = set(allowed)

    def moves(state: Sharding, phase: int) -> Iterator[tuple[str, dict, Sharding, int, Cost]]:
        local = 1 / ways(mesh, state)
        used = {a for axes in state for a in axes}
        if phase == 0:
            for a in mesh.names:
                if a not in used:
                    for d in range(rank):
                        yield "shard_slice", {"dim": d, "axis": a}, \
                            _with(state, d, state[d] + (a,)), 0, (0, 0.0)
        if phase <= 1:
            for d in range(rank):
                for k in range(1, len(state[d]) + 1):
                    moved = state[d][-k:]
                    g = math.prod(mesh.size(a) for a in moved)
                    for e in range(rank):
                        if e != d:
                            nxt = _with(_with(state, d, state[d][:-k]), e, state[e] + moved)
                            yield "all_to_all", {"src": d, "dst": e,
                                                 **({"count": k} if k > 1 else {})}, \
                                nxt, 1, (1, local * (g - 1) / g)
            for other in same_splits.get(tuple(splits(mesh, state)), []):
                if other != state:
                    moving = _moving(mesh, state, other)
                    yield "all_permute", {}, other, 1, (1, local * moving)
        for d in range(rank):
            for k in range(1, len(state[d]) + 1):
                g = math.prod(mesh.size(a) for a in state[d][-k:])
                # the result is g blocks: (g - 1) arrive; along any dim but the first
                # they arrive as rows of a block of another layout, copied into place
                # (the whole result again: measured, a plan that saved a sixth of the
                # bytes sent but gathered along dim 1 ran 0.75-0.89x one gathering
                # along dim 0)
                yield "all_gather", {"dim": d}, _with(state, d, state[d][:-k]), 2, \
                    (1, local * (g - 1) + (local * g if d > 0 else 0.0))
    start = (src, 0)
    tree: dict = {start: ((0, 0.0), None, "", {})}
    heap: list = [((0, 0.0), 0, start)]
    count = itertools.count(1)
    done: set = set()
    while heap:
        cost, _, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        state, phase = node
        for op, attrs, nxt, nphase, (c, b) in moves(state, phase):
            if nxt not in ok:
                continue
            to = (nxt, nphase)
            new = (cost[0] + c, cost[1] + b)
            if to not in tree or new < tree[to][0]:
                tree[to] = (new, node, op, attrs)
                heapq.heappush(heap, (new, next(count), to))
    return tree


def _with(state: Sharding, d: int, axes: tuple[str, ...]) -> Sharding:
    return state[:d] + (tuple(axes),) + state[d + 1:]


@functools.lru_cache(maxsize=65536)
def _moving(mesh: Mesh, a: Sharding, b: Sharding) -> float:
    """The share of devices whose block a permute from ``a`` to ``b`` moves."""
    pairs = permutation(mesh, a, b)
    return sum(s != t for s, t in pairs) / len(pairs)


@register
class RedistributePass:
    name = "redistribute"

    def apply(self, module: Module) -> Module:
        if module.mesh is None:
            return module
        return replace(module, funcs=[_rewrite(f, module.mesh) for f in module.funcs])


def expand(op: Op, source: TensorType, mesh: Mesh, taken: set[str],
           sub_axes: bool = False) -> list[Op]:
    """The collectives that replace the reshard ``op`` of a value of type ``source``,
    the last named as its result (new names are added to ``taken``); none where the
    two shardings are the same. Where the plan moves part of an axis its intermediate
    types name sub-axes, which a listing can not: then the reshard itself, unless
    ``sub_axes`` (bladec/emit/shard.py lowers it so, over the refined mesh)."""
    result = op.results[0]
    used, steps = plan(mesh, spec(source), spec(result.type), result.type.dims)
    if used != mesh and not sub_axes:
        return [op]
    out, prev = [], op.operands[0]
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        name = result.name if last else fresh_name(f"{result.name}.{i}", taken)
        t: TensorType = result.type if last else result.type.with_sharding(step.sharding)
        out.append(Op(step.op, [prev], [Value(name, t)], dict(step.attrs), loc=op.loc))
        prev = name
    return out


def _rewrite(func: Func, mesh: Mesh) -> Func:
    taken = {a.name for a in func.args} | {r.name for op in walk(func.ops) for r in op.results}
    types = func.value_types()
    renames: dict[str, str] = {}

    def lowered(ops: list[Op]) -> list[Op]:
        """``ops`` with each reshard as its collectives, a loop's regions alike (names
        are unique in a function, so one renaming serves every region)."""
        out: list[Op] = []
        for op in ops:
            op = replace(op, operands=[renames.get(o, o) for o in op.operands],
                         regions={k: lowered(body) for k, body in op.regions.items()})
            if op.name != "reshard":
                out.append(op)
                continue
            steps = expand(op, types[op.operands[0]], mesh, taken)
            if not steps:
                renames[op.results[0].name] = op.operands[0]  # the same split: the value
            out.extend(steps)
        return out

    out = lowered(func.ops)
    returns = [renames.get(r, r) for r in func.returns] if func.returns is not None else None
    return replace(func, ops=out, returns=returns)
