"""Which tensors to evict, where, and how to bring them back, for one binding.

Once the symbols are bound every size is a number, so the whole run is planned at entry
(and cached per binding). The plan starts from the listing's order with nothing evicted;
while some step of the simulated trace is over the limit, it adds the eviction that
covers that step at the best price, in the spirit of DTR and DELTA: a candidate listed by
a ``remat.evict`` before the step, whose next use comes after it, ranked by regeneration
cost per byte freed per step away (reload: two copies over the host link; recompute: the
region's FLOPs, and only when it keeps nothing extra alive). When no candidate covers an
over-limit step, the limit can not be met and the smallest limit that can is searched.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bladec.errors import BladecError
from bladec.ir import Op
from bladec.runtime.trace import Measure, Step, simulate
from bladec.units import format_size


@dataclass(frozen=True)
class CostModel:
    """Seconds per byte copied to or from the host, and per FLOP recomputed."""
    copy_bandwidth: float = 8e9
    flop_rate: float = 5e10

    def reload(self, nbytes: int) -> float:
        return 2 * nbytes / self.copy_bandwidth

    def recompute(self, flops: int) -> float:
        return flops / self.flop_rate


@dataclass
class RematSite:
    """A ``remat.regenerate`` of the listing: before compute op ``use``, value ``value``."""
    value: str
    use: int
    region: list[Op] | None
    region_inputs: list[str]   # operands kept alive only for the recompute
    external: list[str] = field(default_factory=list)  # every operand from outside the region
    flops: int = 0


@dataclass
class Plan:
    trace: list[Step]
    measure: Measure
    evictions: list[tuple[int, str, str]] = field(default_factory=list)  # (after op, value, how)

    @property
    def peak(self) -> int:
        return self.measure.peak


@dataclass
class Program:
    """What the planner needs from an optimized listing, independent of the binding."""
    ops: list[Op]
    inputs: list[str]
    outputs: set[str]
    candidates: dict[int, list[str]]       # after compute op i -> evictable values
    sites: dict[tuple[str, int], RematSite]  # (value, use) -> regeneration branches
    uses: dict[str, list[int]]

    def next_use(self, value: str, after: int) -> int | None:
        for u in self.uses.get(value, ()):
            if u > after:
                return u
        return None


def base_trace(program: Program) -> list[Step]:
    return [Step("op", op, index=i) for i, op in enumerate(program.ops)]


def build_trace(program: Program, chosen: list[tuple[int, str, str]]) -> list[Step]:
    """The compute ops with the chosen evictions and their regenerations woven in."""
    after: dict[int, list[Step]] = {}
    before: dict[int, list[Step]] = {}
    for i, value, how in chosen:
        use = program.next_use(value, i)
        site = program.sites[(value, use)]
        after.setdefault(i, []).append(Step("evict", value=value, method=how))
        before.setdefault(use, []).append(Step("regen", value=value, method=how,
                                               region=site.region or [] if how == "recompute"
                                               else []))
    trace: list[Step] = []
    for i, op in enumerate(program.ops):
        trace.extend(before.get(i, []))
        trace.append(Step("op", op, index=i))
        trace.extend(after.get(i, []))
    return trace


def plan_run(program: Program, sizes: dict[str, int], limit: int | None,
             cost: CostModel = CostModel()) -> Plan:
    """A trace whose simulated peak fits ``limit``, or BladecError naming what would fit."""
    # recompute is cheaper but ties its inputs down; reload alone fits whatever can fit
    plan = _greedy(program, sizes, limit, cost) or _greedy(program, sizes, limit, cost, False)
    if plan is not None:
        return plan
    unconstrained = simulate(base_trace(program), sizes, program.inputs, program.outputs).peak
    lo, hi = 0, unconstrained
    while lo < hi:  # the smallest limit the planner meets, for the message
        mid = (lo + hi) // 2
        if _greedy(program, sizes, mid, cost, False) is not None:
            hi = mid
        else:
            lo = mid + 1
    raise BladecError(f"no plan fits the limit of {format_size(limit or 0)} ({limit} bytes) for "
                      f"this binding; the smallest limit that works is {format_size(lo)} "
                      f"({lo} bytes; without eviction the peak is {unconstrained} bytes)")


def _greedy(program: Program, sizes: dict[str, int], limit: int | None,
            cost: CostModel, recompute: bool = True) -> Plan | None:
    chosen: list[tuple[int, str, str]] = []
    trace = base_trace(program)
    measure = simulate(trace, sizes, program.inputs, program.outputs)
    if limit is None or measure.peak <= limit:
        return Plan(trace, measure)
    evicted: set[tuple[int, str]] = set()
    for _ in range(10 * len(program.ops) + 10):
        over = _first_over(trace, measure, limit)
        if over is None:
            return Plan(trace, measure, chosen)
        k, _ = over
        option = _best_option(program, sizes, cost, k, evicted, chosen, recompute)
        if option is None:
            return None
        chosen.append(option)
        evicted.add((option[0], option[1]))
        trace = build_trace(program, chosen)
        measure = simulate(trace, sizes, program.inputs, program.outputs)
    return None


def _first_over(trace: list[Step], measure: Measure, limit: int) -> tuple[int, int] | None:
    """(compute op index, memory position) of the first over-limit step of the trace."""
    pos = 0
    current_op = 0
    for step in trace:
        n = 1 if step.kind == "op" or (step.kind == "regen" and step.method == "reload") \
            else len(step.region) if step.kind == "regen" else 0
        if step.kind == "op":
            current_op = step.index
        for _ in range(n):
            if measure.memory[pos] > limit:
                return (current_op if step.kind == "op" else _next_op(trace, step)), pos
            pos += 1
    return None


def _next_op(trace: list[Step], step: Step) -> int:
    seen = False
    for s in trace:
        if s is step:
            seen = True
        elif seen and s.kind == "op":
            return s.index
    return len(trace)


def _best_option(program: Program, sizes: dict[str, int], cost: CostModel, k: int,
                 evicted: set[tuple[int, str]], chosen: list[tuple[int, str, str]],
                 recompute: bool) -> tuple[int, str, str] | None:
    """The cheapest eviction that makes op k's step lighter: after some op i < k."""
    # what a chosen recompute reads must be there when it runs
    protected = {n for (i, v, how) in chosen if how == "recompute"
                 for n in program.sites[(v, program.next_use(v, i))].external}
    best: tuple[float, tuple[int, str, str]] | None = None
    for i in range(k - 1, -1, -1):
        for value in program.candidates.get(i, ()):
            if (i, value) in evicted or value in protected:
                continue
            use = program.next_use(value, i)
            if use is None or use <= k or (value, use) not in program.sites:
                continue
            if any(v == value and j < i and program.next_use(v, j) == use
                   for j, v, _ in chosen):
                continue  # already away over this span
            site = program.sites[(value, use)]
            size = sizes[value]
            if size == 0:
                continue
            how, seconds = "reload", cost.reload(size)
            if recompute and site.region is not None and not site.region_inputs \
                    and not _away_at(program, chosen, site.external, use):
                t = cost.recompute(site.flops)
                if t < seconds:
                    how, seconds = "recompute", t
            score = seconds / (size * (use - i))
            if best is None or score < best[0]:
                best = (score, (i, value, how))
    return best[1] if best else None


def _away_at(program: Program, chosen: list[tuple[int, str, str]], names: list[str],
             use: int) -> bool:
    """Whether any of ``names`` is evicted over op ``use`` by the plan so far."""
    wanted = set(names)
    for i, v, _ in chosen:
        nxt = program.next_use(v, i)
        if v in wanted and nxt is not None and i < use <= nxt:
            return True
    return False
