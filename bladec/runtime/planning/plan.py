"""What a run plan is made of, independent of how it is chosen (policy.py) or tidied
(consolidate.py): the cost model, the listing's remat sites, the chosen evictions, the
program they apply to, and the trace they weave into it.

Two kinds of recompute. A listing's ``remat.regenerate`` carries a fixed ``recompute``
region (the remat pass chose it with no size known): it reads values from outside that
must be resident when it runs. A *chain* (``Eviction.how == "chain"``) is worked out from
the plan instead: from the value's producer back through every operand that is not
resident before the op that needs it (evicted over that op, or dead there) to the
nearest values that are (the checkpoints), as ``jax.checkpoint`` replays a layer from
its saved inputs. Its region is a function of the plan's other evictions
(:func:`chain_region`), so it is woven anew with them and stays valid when a later
eviction takes away one of its checkpoints: the chain then reaches further back."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable

from bladec.analysis.liveness import body_peak
from bladec.ir import Op
from bladec.ops import REGISTRY
from bladec.runtime.backends.backend import DEFAULT_COPY_BANDWIDTH
from bladec.runtime.planning.trace import Measure, Step, simulate


@dataclass(frozen=True)
class CostModel:
    """Bytes per second copied to or from the host (and written by a recomputed op), and
    FLOPs per second recomputed. ``JaxBackend`` measures its own copy bandwidth.

    ``one_memory``: the host copies land in the device's own memory (a CPU device,
    DESIGN.md section 4), so offloading a value frees nothing a limit counts: the
    planner then never reloads (:meth:`reload_frees` is 0), and only recomputes."""
    copy_bandwidth: float = DEFAULT_COPY_BANDWIDTH
    flop_rate: float = 5e10
    one_memory: bool = False

    def reload_frees(self, nbytes: int) -> int:
        """The bytes a limit sees freed while a value of ``nbytes`` waits on the host."""
        return 0 if self.one_memory else nbytes

    def reload(self, nbytes: int, offloaded: bool = False) -> float:
        """Offload and copy back; only the copy back when the host holds a copy already."""
        return (1 if offloaded else 2) * nbytes / self.copy_bandwidth

    def recompute(self, flops: int, nbytes: int = 0) -> float:
        return flops / self.flop_rate + nbytes / self.copy_bandwidth


@dataclass
class RematSite:
    """A ``remat.regenerate`` of the listing: before compute op ``use``, value ``value``."""
    value: str
    use: int
    region: list[Op] | None
    region_inputs: list[str]   # operands kept alive only for the recompute
    external: list[str] = field(default_factory=list)  # every operand from outside the region
    flops: int = 0
    nbytes: int = 0            # bytes the region's ops write


# ops in a chain at most: past it the chain reads what it reaches (kept alive, or an
# invalid trace where that is evicted); a decoder layer's forward is about 60 ops
CHAIN_OPS = 256


@dataclass
class Eviction:
    """``value`` is evicted after compute op ``after`` and regenerated (``how``: "reload",
    "recompute" by the listing's region, or "chain": recomputed from the nearest resident
    values, :func:`chain_region`) before op ``before``: its next use ``use``, or earlier
    (a prefetch, reloads only)."""
    value: str
    how: str
    after: int
    use: int
    before: int = -1
    order: int = 0   # among the regenerations before one op: reloads, then by this

    def __post_init__(self) -> None:
        if self.before < 0:
            self.before = self.use

    def copy(self) -> "Eviction":
        return Eviction(self.value, self.how, self.after, self.use, self.before, self.order)


@dataclass
class Plan:
    trace: list[Step]
    measure: Measure
    evictions: list[Eviction] = field(default_factory=list)

    @property
    def peak(self) -> int:
        return self.measure.peak

    @property
    def cuts(self) -> int:
        """Distinct points where the run leaves compiled code: evictions and reloads."""
        return len(cut_points(self.evictions))


@dataclass
class Program:
    """What the planner needs from an optimized listing, independent of the binding."""
    ops: list[Op]
    inputs: list[str]
    outputs: set[str]
    candidates: dict[int, list[str]]       # after compute op i -> evictable values
    sites: dict[tuple[str, int], RematSite]  # (value, use) -> regeneration branches
    uses: dict[str, list[int]]
    donated: frozenset[str] = frozenset()  # inputs freed at their last use
    # per op, its (FLOPs, bytes written) for one binding (planner.py): where given, the
    # planner may recompute chains (empty: only the listing's regions)
    op_costs: list[tuple[int, int]] = field(default_factory=list)

    @cached_property
    def producer(self) -> dict[str, int]:
        return {r: i for i, op in enumerate(self.ops) for r in op.result_names}

    @cached_property
    def op_index(self) -> dict[int, int]:
        """Each op's index, by the op's identity (a region's ops are the program's)."""
        return {id(op): i for i, op in enumerate(self.ops)}

    @cached_property
    def chainable(self) -> list[bool]:
        """Ops a chain may run again: recomputable by the registry, and no loop (a
        region's own temporaries are not in a recompute's memory profile)."""
        return [(op.name not in REGISTRY or REGISTRY[op.name].recomputable)
                and not op.regions for op in self.ops]

    @cached_property
    def chains(self) -> dict[tuple[str, int], list["Chain"]]:
        """The chains worked out so far (chain_region's memo)."""
        return {}

    @cached_property
    def regen_steps(self) -> dict[tuple[str, int, str], Step]:
        """The regeneration steps of the listing's sites and of reloads made so far, by
        (value, use, how): made once (op_chunk), so the walks over the traces that hold
        one work out what its region reads and its memory profile once (trace.Step)."""
        return {}

    def live_at(self, name: str, j: int) -> bool:
        """Whether an op's result ``name`` is resident before op j when nothing is
        evicted: made before j and read at or after it, or a graph output."""
        p = self.producer.get(name)
        if p is None or p >= j:
            return False
        uses = self.uses.get(name, ())
        return name in self.outputs or (bool(uses) and uses[-1] >= j)

    @cached_property
    def op_steps(self) -> list[Step]:
        """One trace step per compute op, in order, each naming the operands it is the
        last op to read (trace.Step.finals)."""
        reader = {n: i for i, op in enumerate(self.ops) for n in op.operands}
        finals: list[list[str]] = [[] for _ in self.ops]
        for n, i in reader.items():
            finals[i].append(n)
        return [Step("op", op, index=i, finals=tuple(finals[i]))
                for i, op in enumerate(self.ops)]

    @cached_property
    def evictable(self) -> list[tuple[str, int, list[tuple[int, int]]]]:
        """Each ``(value, use, points)``: ``value`` is needed again by op ``use`` and a
        ``remat.regenerate`` brings it back there; ``points`` are the ops ``i`` after
        which it is a candidate with that next use, in increasing order, each with its
        rank in the order the planner visits the candidates (latest op first), which
        breaks ties between equally good evictions."""
        groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
        rank = 0
        for i in sorted(self.candidates, reverse=True):
            for value in self.candidates[i]:
                use = self.next_use(value, i)
                if use is not None and (value, use) in self.sites:
                    groups.setdefault((value, use), []).append((i, rank))
                rank += 1
        return [(value, use, points[::-1]) for (value, use), points in groups.items()]

    @cached_property
    def defined(self) -> frozenset[str]:
        """Every value an op of the program or an input defines."""
        return frozenset(r for op in self.ops for r in op.result_names) | frozenset(self.inputs)

    def lower_bounds(self, sizes: dict[str, int]) -> list[int]:
        """Per compute op k, bytes the model holds at k's step in every trace the planner
        can build: the kept inputs, the outputs made before op k that no later op reads (nothing
        evicts a value after its last use), and op k's operands and results. A limit
        below one of them plus that op's margin can not be planned, so the closed loop
        stops there without asking the greedy planner, which would find the same, later."""
        kept = [n for n in self.inputs if n not in self.donated]
        base = sum(sizes[n] for n in kept)
        counted = set(kept)
        settled: set[str] = set()    # outputs made so far with no use after this op
        settled_bytes = 0
        pending: dict[int, list[str]] = {}  # op index -> outputs whose last use it is
        out = []
        for k, op in enumerate(self.ops):
            here = {n for n in op.operands  # (an undefined shape operand has no size)
                    if n in sizes and n not in counted and n not in settled} \
                | set(op.result_names)
            out.append(base + settled_bytes + sum(sizes[n] for n in here)
                       + body_peak(op, sizes.__getitem__, 0, max))
            for r in op.result_names:
                if r in self.outputs:
                    uses = self.uses.get(r, ())
                    pending.setdefault(max(uses, default=k), []).append(r)
            for r in pending.pop(k, ()):
                settled.add(r)
                settled_bytes += sizes[r]
        return out

    def next_use(self, value: str, after: int) -> int | None:
        uses = self.uses.get(value, ())
        j = bisect_right(uses, after)  # uses are in op order
        return uses[j] if j < len(uses) else None


@dataclass
class Chain:
    """A chain's region for one target and op (:func:`chain_region`), with what it was
    worked out from: the values it went through because they were evicted there
    (``through``) and the resident ones it stopped at (``stops``); it holds as long as
    those are still evicted and still resident. ``kept``: values it reads that are
    neither (dead and not recomputable: kept alive for it); ``flops``, ``nbytes``: its
    ops' cost; ``ok``: False when it reads an evicted value it can not recompute."""
    region: list[Op]
    through: frozenset[str]
    stops: frozenset[str]
    kept: list[str]
    flops: int
    nbytes: int
    ok: bool
    step: Step | None = field(default=None, repr=False, compare=False)  # op_chunk's, made once


def chain_region(program: Program, value: str, j: int,
                 away: Callable[[str], bool]) -> Chain:
    """The ops that recompute ``value`` before op j from the values resident there:
    from its producer back through each operand that is ``away`` (evicted over op j) or
    dead there, while its producer is chainable, to the nearest resident values (graph
    inputs, values read at or after op j and not away). In program order, so each op's
    operands are made before it; memoized per (value, j) and what it depended on."""
    memo = program.chains.setdefault((value, j), [])
    for found in memo:
        if all(away(n) for n in found.through) and not any(away(n) for n in found.stops):
            return found
    producer, ops, chainable = program.producer, program.ops, program.chainable
    start = producer[value]
    members = {start}
    stack = [start]
    through: set[str] = set()
    stops: set[str] = set()
    kept: list[str] = []
    ok = True
    while stack:
        i = stack.pop()
        for n in ops[i].operands:
            p = producer.get(n)
            if p is None or p in members:
                continue   # a graph input (resident, or kept alive if donated), or made here
            gone = away(n)
            if not gone and program.live_at(n, j):
                stops.add(n)
                continue
            if chainable[p] and len(members) < CHAIN_OPS:
                if gone:
                    through.add(n)
                members.add(p)
                stack.append(p)
            elif n not in kept:
                kept.append(n)
                ok = ok and not gone
    order = sorted(members)
    costs = program.op_costs
    found = Chain([ops[i] for i in order], frozenset(through), frozenset(stops), kept,
                  sum(costs[i][0] for i in order) if costs else 0,
                  sum(costs[i][1] for i in order) if costs else 0, ok)
    memo.append(found)
    return found


class Away:
    """Which values the evictions of a plan leave evicted before an op, as a chain asks
    (:func:`chain_region`): evicted after an earlier op and regenerated after this one,
    or regenerated before it after the regeneration asking (its place in op_chunk's
    order)."""

    def __init__(self, events: Iterable[Eviction]) -> None:
        self.spans: dict[str, list[Eviction]] = {}
        for e in events:
            self.spans.setdefault(e.value, []).append(e)

    def at(self, j: int, asking: Eviction | None = None) -> Callable[[str], bool]:
        spans = self.spans
        key = _regen_key(asking) if asking is not None else None

        def away(name: str) -> bool:
            for e in spans.get(name, ()):
                if e.after < j < e.before:
                    return True
                if e.before == j and e.after < j and (
                        key is None or _regen_key(e) > key):
                    return True
            return False
        return away


def _regen_key(e: Eviction) -> tuple[bool, int]:
    """A regeneration's place among those before one op: reloads, then by order."""
    return (e.how != "reload", e.order)


def base_trace(program: Program) -> list[Step]:
    return list(program.op_steps)


def build_trace(program: Program, chosen: list[Eviction]) -> list[Step]:
    """The compute ops with the chosen evictions and their regenerations woven in: after
    an op its evictions; before an op the reloads, then the recomputes."""
    after, before = event_index(chosen)
    away = Away(chosen) if any(e.how == "chain" for e in chosen) else None
    trace: list[Step] = []
    for i, step in enumerate(program.op_steps):  # shared by every trace: nobody writes them
        if i in before or i in after:
            trace.extend(op_chunk(program, i, before.get(i, ()), after.get(i, ()), away))
        else:
            trace.append(step)
    return trace


def plan_of(program: Program, sizes: dict[str, int], chosen: list[Eviction]) -> Plan:
    """The plan that ``chosen`` makes of ``program``: its trace and the model's measure
    of it, as every planner path makes its plan (so a plan is its evictions: hints.py)."""
    trace = build_trace(program, chosen)
    return Plan(trace, simulate(trace, sizes, program.inputs, program.outputs,
                                program.donated), chosen)


def event_index(chosen: list[Eviction]) -> tuple[dict[int, list[Eviction]],
                                                 dict[int, list[Eviction]]]:
    """The evictions after each op, and the regenerations before each op."""
    after: dict[int, list[Eviction]] = {}
    before: dict[int, list[Eviction]] = {}
    for e in chosen:
        after.setdefault(e.after, []).append(e)
        before.setdefault(e.before, []).append(e)
    return after, before


def op_chunk(program: Program, i: int, before: Iterable[Eviction],
             after: Iterable[Eviction], away: Away | None = None) -> list[Step]:
    """Op i's steps in a trace (:func:`build_trace`): the regenerations ``before`` it,
    reloads first, then by order; the op; the evictions ``after`` it, in their order.
    ``away``: the plan's evictions, for its chains (a chain is a recompute step whose
    region :func:`chain_region` works out)."""
    steps = []
    for e in sorted(before, key=_regen_key):
        if e.how == "chain":
            if away is None:
                raise ValueError("a chain's region needs the plan's evictions (Away)")
            found = chain_region(program, e.value, i, away.at(i, e))
            if found.step is None:
                found.step = Step("regen", value=e.value, method="recompute",
                                  region=found.region)
            steps.append(found.step)
            continue
        key = (e.value, e.use if e.how == "recompute" else -1, e.how)
        step = program.regen_steps.get(key)
        if step is None:
            region = program.sites[(e.value, e.use)].region if e.how == "recompute" else None
            step = program.regen_steps[key] = Step("regen", value=e.value, method=e.how,
                                                   region=list(region or []))
        steps.append(step)
    steps.append(program.op_steps[i])
    steps.extend(Step("evict", value=e.value, method=e.how) for e in after)
    return steps


def cut_points(events: list[Eviction]) -> dict[int, int]:
    """Cut point (the index of the compute op after it) -> how many evictions and reloads
    happen there. A recompute needs no cut of its own."""
    out: dict[int, int] = {}
    for e in events:
        out[e.after + 1] = out.get(e.after + 1, 0) + 1
        if e.how == "reload":
            out[e.before] = out.get(e.before, 0) + 1
    return out


def valid_trace(trace: list[Step], program: Program) -> bool:
    """Every op and region runs with its operands resident; evictions and reloads pair."""
    resident = set(program.inputs)
    known = program.defined
    offloaded: set[str] = set()
    for step in trace:
        kind = step.kind
        if kind == "evict":
            if step.value not in resident:
                return False
            resident.discard(step.value)
            if step.method == "reload":
                offloaded.add(step.value)
        elif kind == "regen" and step.method == "reload":
            if step.value in resident or step.value not in offloaded:
                return False
            resident.add(step.value)
        else:
            if not resident.issuperset(_needs(step, known)):
                return False
            if kind == "op":
                resident.update(step.results)
            else:
                resident.add(step.value)
    return True


def _needs(step: Step, known: frozenset[str]) -> tuple[str, ...]:
    """What must be resident to run an op or a recompute step: the operands that
    ``known`` names (an op's, or a region's made outside it, read before the region
    makes them), cached on the step for ``known`` (a program's names)."""
    cached = step.needs
    if cached is not None and cached[0] is known:
        return cached[1]
    if step.kind == "op":
        needs = tuple(n for n in step.op.operands if n in known)
    else:
        made: set[str] = set()
        out: list[str] = []
        for op in step.region:
            out.extend(n for n in op.operands if n in known and n not in made)
            made.update(op.result_names)
        needs = tuple(out)
    step.needs = (known, needs)
    return needs


def evictions_record(events: list[Eviction]) -> list[list]:
    """A plan's evictions as a hint keeps them (JSON): one list of fields each."""
    return [[e.value, e.how, e.after, e.use, e.before, e.order] for e in events]


def evictions_of(record: object) -> list[Eviction] | None:
    """The evictions a hint's record holds, or None where it is not such a record (not
    a list, a field of the wrong kind); whether they fit a program is the caller's."""
    if not isinstance(record, list) or not record:
        return None
    try:
        return [Eviction(str(value), str(how), int(after), int(use), int(before), int(order))
                for value, how, after, use, before, order in record]
    except (TypeError, ValueError):
        return None


def recorded_plan(record: object, program: Program, sizes: dict[str, int],
                  one_memory: bool = False) -> Plan | None:
    """The plan that recorded evictions (a search hint's, hints.py) make of ``program``,
    or None where they are not evictions that make a valid trace of it (or reload where
    there is one memory)."""
    events = evictions_of(record)
    if one_memory and events and any(e.how == "reload" for e in events):
        return None   # (an earlier backend's plan: here a reload frees nothing)
    if events is None or any(
            e.how not in ("reload", "recompute", "chain") or e.value not in program.uses
            or not 0 <= e.after < e.before <= e.use < len(program.ops) for e in events):
        return None
    try:
        plan = plan_of(program, sizes, events)
    except KeyError:   # a recompute with no remat site here
        return None
    return plan if valid_trace(plan.trace, program) else None
