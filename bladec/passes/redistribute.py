"""``redistribute``: every ``reshard`` becomes collectives in normal form (DESIGN section 12).

The normal form of Rink et al. (arXiv 2112.01075) is: slices, then all_to_alls and
permutes, then gathers. Slices only shrink the local block, all_to_alls and permutes keep
its size, gathers only grow it, so every intermediate is at most max(source local,
target local) per device: no device ever holds more of the array than at one end, and
no element moves twice. XLA's partitioner instead gathers the whole array on every
device for the changes it has no special case for.

The synthesis, over axes (each mesh axis splits at most one dim):

1. every axis the target uses and the source does not is sliced onto its target dim;
2. every axis that changes dims is moved by an ``all_to_all`` from the minor end of its
   dim to the minor end of its target dim, in an order that lands the axes in the
   target's order where it can; where every axis still to move lies under one that
   stays, an ``all_permute`` (the same blocks per dim, held by other devices) brings
   the leaving axes to the minor end, and a last one fixes any order the moves left;
3. every axis the target does not use is gathered, kept until now at the minor end of
   its source dim.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from bladec.ir import Func, Mesh, Module, Op, TensorType, Value
from bladec.passes import register
from bladec.sharding import spec
from bladec.types import Sharding


@dataclass(frozen=True)
class Step:
    """One collective of a redistribution: the op, its attributes, the sharding after it."""
    op: str
    attrs: dict
    sharding: Sharding


def normal_form(mesh: Mesh, src: Sharding, dst: Sharding) -> list[Step]:
    """The collectives that turn ``src`` into ``dst`` (both of one rank), in normal form."""
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
    # 2. moves, preferring one that extends its target dim's prefix of the goal; when
    # every axis still to move sits under one that stays, a permute brings it up
    while any(home[a] != d for d, axes in enumerate(cur) for a in axes):
        movable = [d for d, axes in enumerate(cur) if axes and home[axes[-1]] != d]
        if not movable:
            cur = [[a for a in axes if home[a] == d] + [a for a in axes if home[a] != d]
                   for d, axes in enumerate(cur)]
            emit("all_permute", {})
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
        moved = cur[d][-k:]
        del cur[d][-k:]
        e = home[moved[0]]
        cur[e].extend(moved)
        emit("all_to_all", {"src": d, "dst": e, **({"count": k} if k > 1 else {})})
    # 2c. the order within each dim
    if cur != goal:
        cur = [list(axes) for axes in goal]
        emit("all_permute", {})
    # 3. gathers, minor first
    for d in range(len(cur)):
        while len(cur[d]) > len(dst[d]):
            cur[d].pop()
            emit("all_gather", {"dim": d})
    return steps


@register
class RedistributePass:
    name = "redistribute"

    def apply(self, module: Module) -> Module:
        if module.mesh is None:
            return module
        return replace(module, funcs=[_rewrite(f, module.mesh) for f in module.funcs])


def _rewrite(func: Func, mesh: Mesh) -> Func:
    taken = {a.name for a in func.args} | {r.name for op in func.ops for r in op.results}
    types = func.value_types()
    out: list[Op] = []
    renames: dict[str, str] = {}
    def renamed(op: Op) -> Op:
        return replace(op, operands=[renames.get(o, o) for o in op.operands],
                       regions={k: [renamed(o) for o in body] for k, body in op.regions.items()})

    for op in func.ops:
        op = renamed(op)
        if op.name != "reshard":
            out.append(op)
            continue
        source = op.operands[0]
        result = op.results[0]
        steps = normal_form(mesh, spec(types[source]), spec(result.type))
        if not steps:
            renames[result.name] = source  # the same split: the value itself
            continue
        prev = source
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            name = result.name if last else _fresh(f"{result.name}.{i}", taken)
            t: TensorType = result.type if last else result.type.with_sharding(step.sharding)
            out.append(Op(step.op, [prev], [Value(name, t)], dict(step.attrs), loc=op.loc))
            prev = name
    returns = [renames.get(r, r) for r in func.returns] if func.returns is not None else None
    return replace(func, ops=out, returns=returns)


def _fresh(name: str, taken: set[str]) -> str:
    out, n = name, 0
    while out in taken:
        n += 1
        out = f"{name}_{n}"
    taken.add(out)
    return out
