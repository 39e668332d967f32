"""Running an optimized listing under a memory limit.

Per binding: bind the symbols from the input shapes (checked against the relations),
plan the run (policy.py), and execute the plan's trace as segments: maximal runs of ops
with no eviction or regeneration between them, each one compiled function. A plan with
no eviction is one segment, the whole graph, at the cost of a whole-graph ``jax.jit``:
the zero-overhead path. Dead tensors are freed explicitly after the segment that last
uses them; evicted tensors are offloaded to host memory or dropped for recompute.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import exact_sizes
from bladec.errors import BladecError
from bladec.ir import DTYPE_BYTES, Module, Op
from bladec.passes.remat import strip_remat
from bladec.runtime.backend import Backend, numpy_dtype
from bladec.runtime.policy import CostModel, Plan, Program, RematSite, plan_run
from bladec.runtime.trace import Step, last_uses, simulate
from bladec.symbolic.expr import format_expr
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes


@dataclass
class Report:
    peak_bytes: int = 0            # the memory model over the executed trace
    planned_peak_bytes: int = 0    # the same trace with nothing evicted
    held_peak_bytes: int = 0       # bytes of the arrays the runtime held, between segments
    xla_temp_peak_bytes: int = 0   # XLA's own figure: the most temporary bytes any segment
    #                                run needs beside its inputs and outputs (its memory
    #                                analysis; 0 on NumPy), not counted in peak_bytes
    limit: int | None = None
    evictions: int = 0
    reloads: int = 0
    recomputes: int = 0
    segments: int = 0
    compilations: int = 0
    seconds: float = 0.0
    segment_seconds: list[float] = field(default_factory=list)  # only with profile=True
    binding: dict[str, int] = field(default_factory=dict)
    timeline: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def flops_of(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """A rough FLOP count: 2*M*N*K for contractions, one per element otherwise."""
    out = sum(int(np.prod(shapes[r])) for r in op.result_names)
    if op.name in ("dot", "dot_general"):
        a = shapes[op.operands[0]]
        contract = op.attrs.get("lhs_contract", (len(a) - 1,))
        k = int(np.prod([a[d] for d in contract])) if contract else 1
        return 2 * out * k
    return max(out, sum(int(np.prod(shapes[n])) for n in op.operands if n in shapes))


class Executor:
    """Runs one listing on one backend; plans and compiled segments are cached per binding."""

    def __init__(self, module: Module, backend: Backend, cost: CostModel = CostModel()) -> None:
        self.module = module
        self.backend = backend
        self.cost = cost
        self.func = module.main
        self.info: ShapeInfo = analyze_shapes(module)
        self.ops = [op for op in self.func.ops if is_compute(op)]
        self.inputs = [a.name for a in self.func.args]
        self.outputs = list(self.func.outputs())
        self._read_remat_plan()
        self._plans: dict[tuple, Plan] = {}

    def _read_remat_plan(self) -> None:
        candidates: dict[int, list[str]] = {}
        regens: dict[tuple[str, int], Op] = {}
        index = -1
        pending: list[Op] = []
        for op in self.func.ops:
            if op.name == "remat.evict" and index >= 0:
                candidates.setdefault(index, []).extend(op.operands)
            elif op.name == "remat.regenerate":
                pending.append(op)
            elif is_compute(op):
                index += 1
                for r in pending:
                    regens[(r.operands[0], index)] = r
                pending = []
        uses: dict[str, list[int]] = {}
        for i, op in enumerate(self.ops):
            for n in dict.fromkeys(op.operands):
                uses.setdefault(n, []).append(i)
        self._regen_ops = regens
        self.program = Program(self.ops, self.inputs, set(self.outputs), candidates, {}, uses)

    # -- binding --------------------------------------------------------------------
    def bind(self, shapes: dict[str, tuple[int, ...]], dims: dict[str, int] | None = None
             ) -> dict[str, int]:
        """Symbol values from input shapes (and ``dims``), checked against every relation."""
        binding = dict(dims or {})
        changed = True
        while changed:
            changed = False
            for name in self.inputs:
                for j, expr in enumerate(self.info.dims[name]):
                    free = [s for s in expr.symbols if s not in binding]
                    if len(free) != 1 or expr.degree(free[0]) != 1:
                        continue
                    s = free[0]
                    rest = expr.subs({s: expr.lift(0)})
                    coef = (expr - rest).subs({s: expr.lift(1)})
                    rest_v, coef_v = rest.evaluate(binding), coef.evaluate(binding)
                    value = shapes[name][j] - rest_v
                    if coef_v <= 0 or value % coef_v or value // coef_v < 1:
                        raise BladecError(f"input {name} dim {j} is {shapes[name][j]}, which "
                                          f"{format_expr(expr)} can not equal")
                    binding[s] = value // coef_v
                    changed = True
        full = self.info.bind(binding)
        for name in self.inputs:
            want = tuple(d.evaluate(full) for d in self.info.dims[name])
            if tuple(shapes[name]) != want:
                raise BladecError(f"input {name} has shape {tuple(shapes[name])}, but the "
                                  f"relations give {want} for {_show(full, self.info)}")
        return {s: full[s] for s in self.info.free}

    def shapes_for(self, binding: dict[str, int]) -> dict[str, tuple[int, ...]]:
        full = self.info.bind(binding)
        return {v: tuple(d.evaluate(full) for d in ds) for v, ds in self.info.dims.items()}

    def random_inputs(self, binding: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        shapes = self.shapes_for(binding)
        out = {}
        for name in self.inputs:
            dtype = self.info.dtypes[name]
            shape = shapes[name]
            if dtype == "i1":
                out[name] = rng.random(shape) < 0.5
            elif dtype.startswith(("i", "u")):
                out[name] = rng.integers(0, 2, shape).astype(numpy_dtype(dtype))
            else:
                out[name] = rng.standard_normal(shape).astype(numpy_dtype(dtype))
        return out

    # -- planning -------------------------------------------------------------------
    def plan(self, binding: dict[str, int], limit: int | None) -> Plan:
        key = (tuple(sorted(binding.items())), limit)
        plan = self._plans.get(key)
        if plan is None:
            sizes = exact_sizes(self.info, binding)
            shapes = self.shapes_for(binding)
            self.program.sites = self._sites(shapes)
            plan = self._plans[key] = plan_run(self.program, sizes, limit, self.cost)
        return plan

    def _sites(self, shapes: dict[str, tuple[int, ...]]) -> dict[tuple[str, int], RematSite]:
        sites = {}
        for (value, use), op in self._regen_ops.items():
            region = op.regions.get("recompute")
            external: list[str] = []
            kept: list[str] = []
            if region:
                inner: set[str] = set()
                for rop in region:
                    for n in rop.operands:
                        if n not in inner and n in shapes and n not in external:
                            external.append(n)
                    inner.update(rop.result_names)
                kept = [n for n in external if not self._resident_at(n, use)]
            flops = sum(flops_of(rop, shapes) for rop in region or [])
            sites[(value, use)] = RematSite(value, use, region or None, kept, external, flops)
        return sites

    def _resident_at(self, name: str, use: int) -> bool:
        if name in self.inputs:
            return True
        producer = next((i for i, op in enumerate(self.ops) if name in op.result_names), None)
        if name in self.outputs and producer is not None and producer < use:
            return True
        return any(u >= use for u in self.program.uses.get(name, ()))

    # -- execution ------------------------------------------------------------------
    def run(self, inputs: dict[str, np.ndarray], limit: int | None = None,
            dims: dict[str, int] | None = None) -> tuple[dict[str, np.ndarray], Report]:
        start = time.perf_counter()
        missing = [n for n in self.inputs if n not in inputs]
        if missing:
            raise BladecError(f"missing input(s) {', '.join(missing)}")
        extra = [n for n in inputs if n not in self.inputs]
        if extra:
            raise BladecError(f"unknown input(s) {', '.join(extra)} (the graph takes "
                              f"{', '.join(self.inputs)})")
        for name in self.inputs:
            want = numpy_dtype(self.info.dtypes[name])
            if np.asarray(inputs[name]).dtype != want:
                raise BladecError(f"input {name} is {np.asarray(inputs[name]).dtype}, "
                                  f"the listing says {self.info.dtypes[name]}")
        shapes_in = {n: tuple(np.shape(inputs[n])) for n in self.inputs}
        binding = self.bind(shapes_in, dims)
        plan = self.plan(binding, limit)
        sizes = exact_sizes(self.info, binding)
        shapes = self.shapes_for(binding)
        report = Report(limit=limit, binding=binding, peak_bytes=plan.peak,
                        planned_peak_bytes=simulate(_plain(self.program), sizes, self.inputs,
                                                    set(self.outputs)).peak,
                        timeline=list(plan.measure.memory))
        before = self.backend.compilations
        env = {n: self.backend.put(np.asarray(inputs[n])) for n in self.inputs}
        outputs = self._execute(plan.trace, env, shapes, report)
        report.compilations = self.backend.compilations - before
        report.seconds = time.perf_counter() - start
        return outputs, report

    def _execute(self, trace: list[Step], env: dict[str, Any],
                 shapes: dict[str, tuple[int, ...]], report: Report) -> dict[str, np.ndarray]:
        last = last_uses(trace)
        keep = set(self.inputs) | set(self.outputs)
        host: dict[str, Any] = {}
        held = sum(self.backend.nbytes(env[n]) for n in self.inputs)
        report.held_peak_bytes = held
        pos = 0
        while pos < len(trace):
            step = trace[pos]
            if step.kind == "op":
                end = pos
                while end < len(trace) and trace[end].kind == "op":
                    end += 1
                ops = [s.op for s in trace[pos:end]]
                self._run_segment(ops, env, shapes, last, end - 1, report)
                for n in [n for n in env if n not in keep and last.get(n, -1) < end]:
                    self.backend.delete(env.pop(n))
                pos = end
            elif step.kind == "evict":
                value = env.pop(step.value)
                if step.method == "reload":
                    host[step.value] = self.backend.offload(value)
                self.backend.delete(value)
                report.evictions += 1
                pos += 1
            else:
                if step.method == "reload":
                    env[step.value] = self.backend.reload(host.pop(step.value))
                    report.reloads += 1
                else:
                    self._run_segment(step.region, env, shapes, {}, pos, report,
                                      only=[step.value])
                    report.recomputes += 1
                pos += 1
            held = sum(self.backend.nbytes(x) for x in env.values())
            report.held_peak_bytes = max(report.held_peak_bytes, held)
        return {n: self.backend.fetch(env[n]) for n in self.outputs}

    def _run_segment(self, ops: list[Op], env: dict[str, Any], shapes: dict[str, tuple],
                     last: dict[str, int], end: int, report: Report,
                     only: list[str] | None = None) -> None:
        made = {r for op in ops for r in op.result_names}
        inputs = list(dict.fromkeys(n for op in ops for n in op.operands
                                    if n not in made and n in env))
        if only is not None:
            outputs = only
        else:
            outputs = [r for r in dict.fromkeys(r for op in ops for r in op.result_names)
                       if r in self.outputs or last.get(r, -1) > end]
        specs = {id(op): [(shapes[r], self.info.dtypes[r]) for r in op.result_names]
                 for op in ops}
        fn = self.backend.segment(ops, inputs, outputs, specs)
        t = time.perf_counter()
        results = fn([env[n] for n in inputs])
        for x in results:
            if hasattr(x, "block_until_ready"):
                x.block_until_ready()
        report.segment_seconds.append(time.perf_counter() - t)
        report.segments += 1
        env.update(zip(outputs, results))


def _plain(program: Program) -> list[Step]:
    return [Step("op", op, index=i) for i, op in enumerate(program.ops)]


def _show(binding: dict[str, int], info: ShapeInfo) -> str:
    return ", ".join(f"{s}={binding[s]}" for s in info.free)


def unoptimized(module: Module) -> Module:
    """The listing with any remat plan removed: the reference a differential test runs."""
    func = strip_remat(module.main)
    return Module([func if f is module.main else f for f in module.funcs], module.shape_graph,
                  module.file)


__all__ = ["Executor", "Report", "unoptimized", "DTYPE_BYTES"]
