"""Planning for one binding: the listing's remat sites priced at its sizes, and the plan.

Between binding (binding.py) and fitting the plan to the device (fitting.py): once the
symbols are bound, every remat site of the chosen schedule version gets its cost (the
FLOPs and bytes of its recompute region, the values it keeps alive) and the planner
(policy.py) chooses what to evict under a limit on the per-op model; plans are cached
per binding and limit. The cost model is the backend's own copy bandwidth, measured
once, when a plan first needs it.
"""
from __future__ import annotations

import math
from dataclasses import replace

from bladec.ir import DTYPE_BYTES, Module, Op
from bladec.ops import REGISTRY
from bladec.runtime.backends.backend import Backend
from bladec.runtime.planning.binding import Binder, _Bound, _Version
from bladec.runtime.planning.policy import CostModel, Plan, Program, RematSite, plan_run
from bladec.runtime.planning.trace import outside_reads


def flops_of(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """A rough FLOP count: 2*M*N*K for contractions, the op's own rule where its
    registry entry has one, one per element of the larger side otherwise."""
    rule = REGISTRY[op.name].flops if op.name in REGISTRY else None
    if rule is not None:
        return rule(op, shapes)
    out = sum(math.prod(shapes[r]) for r in op.result_names)   # (exact: no int64 wrap)
    if op.name in ("dot", "dot_general"):
        a = shapes[op.operands[0]]
        contract = op.attrs.get("lhs_contract", (len(a) - 1,))
        k = math.prod(a[d] for d in contract) if contract else 1
        return 2 * out * k
    return max(out, sum(math.prod(shapes[n]) for n in op.operands if n in shapes))


class Planner(Binder):
    """A :class:`Binder` that plans: ``cost`` (by default the backend's measured copy
    bandwidth) and ``consolidate`` as for :class:`bladec.runtime.executor.Executor`."""

    def __init__(self, module: Module, backend: Backend, cost: CostModel | None = None,
                 consolidate: bool = True) -> None:
        super().__init__(module)
        check_types = getattr(backend, "check_types", None)
        if check_types is not None:   # what the backend can not hold (jax_backend.py)
            check_types(self.func)
        self.backend = backend
        self.fused_expanding = bool(getattr(backend, "enforce_order", False))
        self._cost = cost
        self.consolidate = consolidate
        self._plans: dict[tuple, Plan] = {}

    @property
    def one_memory(self) -> bool:
        """Whether the backend's host copies share its device's memory (a CPU device):
        then a limit bounds both together, and the planner never reloads."""
        return bool(getattr(self.backend, "one_memory", False))

    @property
    def cost(self) -> CostModel:
        if self._cost is None:
            measure = getattr(self.backend, "copy_bandwidth", None)
            self._cost = CostModel(copy_bandwidth=measure()) if measure else CostModel()
        if self._cost.one_memory != self.one_memory:   # a fact of the backend, not a price
            self._cost = replace(self._cost, one_memory=self.one_memory)
        return self._cost

    @cost.setter
    def cost(self, value: CostModel) -> None:
        self._cost = value

    def plan(self, binding: dict[str, int], limit: int | None) -> Plan:
        key = (tuple(sorted(binding.items())), limit)
        plan = self._plans.get(key)
        if plan is None:
            bound = self._bound(binding)
            if limit is None:  # nothing to evict: no cost model, no sites
                program = bound.version.program
            else:
                program = self._priced_program(bound)
            cost = self.cost if limit is not None else CostModel()
            plan = self._plans[key] = plan_run(program, bound.sizes, limit, cost,
                                               self.consolidate)
        return plan

    def _priced_program(self, bound: _Bound) -> Program:
        """The binding's program with its remat sites and ops priced (once per binding)."""
        if bound.program is None:
            bound.program = replace(bound.version.program,
                                    sites=self._sites(bound.version, bound.shapes),
                                    op_costs=self._op_costs(bound.version, bound.shapes))
        return bound.program

    def _sites(self, version: _Version, shapes: dict[str, tuple[int, ...]]
               ) -> dict[tuple[str, int], RematSite]:
        sites = {}
        for (value, use), op in version.regen_ops.items():
            region = op.regions.get("recompute")
            external = outside_reads(region or [], shapes)
            kept = [n for n in external if not self._resident_at(version, n, use)]
            flops = sum(flops_of(rop, shapes) for rop in region or [])
            nbytes = sum(math.prod(shapes[r]) * DTYPE_BYTES[self.info.dtypes[r]]
                         for rop in region or [] for r in rop.result_names)
            sites[(value, use)] = RematSite(value, use, region or None, kept, external, flops,
                                            nbytes)
        return sites

    def _op_costs(self, version: _Version, shapes: dict[str, tuple[int, ...]]
                  ) -> list[tuple[int, int]]:
        """Each compute op's FLOPs and the bytes it writes, as a recompute is priced:
        what a chain of them costs (plan.chain_region)."""
        dtypes = self.info.dtypes
        return [(flops_of(op, shapes), sum(math.prod(shapes[r]) * DTYPE_BYTES[dtypes[r]]
                                           for r in op.result_names))
                for op in version.ops]

    def _resident_at(self, version: _Version, name: str, use: int) -> bool:
        if name in self.inputs and name not in self.donated:
            return True
        producer = version.producer.get(name)
        if name in self.outputs and producer is not None and producer < use:
            return True
        return any(u >= use for u in version.program.uses.get(name, ()))
