"""Running an optimized listing under a memory limit.

Per binding: bind the symbols from the input shapes (checked against the relations),
plan the run (policy.py), and execute the plan's trace as segments (segments.py): maximal
runs of ops (recomputed ones included) with no eviction or reload between them, each one
compiled function. A plan with no eviction is one segment, the whole graph, at the cost
of a whole-graph ``jax.jit``: the zero-overhead path. Dead tensors are freed explicitly
after the segment that last uses them (and donated to it); evicted tensors are offloaded
to host memory or dropped for recompute.

A limit holds for the device peak (device.py): the arrays held plus each running
segment's own XLA outputs and temporaries. The planner works on the per-op model, so the
executor closes the loop: it compiles the plan's segments, reads their figures, and
where a segment is over the limit it gives the planner a margin at that segment's ops
and plans again, until the device peak fits. When it can not, the smallest limit that
works by the same accounting is searched and named (verified: it fits, one byte less
does not).

Everything that depends only on the input shapes (the binding, sizes, shapes, the plan,
the segments with their compiled functions) is worked out on the first run with those
shapes and cached, so a later run only dispatches (execution.py). Dispatch is
asynchronous: segments, offloads and reloads are queued without waiting for each other
(the backend orders them by their data), unless ``profile=True`` asks for each
segment's time. The engine (engine.py) is the public face above this module.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import exact_sizes
from bladec.errors import BladecError
from bladec.analysis.version import choose, map_versions, versions
from bladec.ir import DTYPE_BYTES, Func, Module, Op
from bladec.ops import REGISTRY
from bladec.passes.remat import strip_remat
from bladec.runtime.backend import Backend, numpy_dtype
from bladec.runtime.device import DeviceAccount, account, grow_margins
from bladec.runtime.execution import Report, execute
from bladec.runtime.limit import LimitError
from bladec.runtime.policy import CostModel, Plan, Program, RematSite, base_trace, plan_run, \
    try_plan
from bladec.runtime.segments import PreparedRun, split
from bladec.runtime.trace import simulate
from bladec.symbolic.binding import input_equation
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes


MAX_ROUNDS = 8   # plans compiled and checked per limit before the closed loop gives up
WHOLE_STEP_SLACK = 0.15   # how far the whole step's estimated device peak must exceed a
                          # limit before it is not compiled to check (_whole_step_over)


def flops_of(op: Op, shapes: dict[str, tuple[int, ...]]) -> int:
    """A rough FLOP count: 2*M*N*K for contractions, the op's own rule where its
    registry entry has one, one per element of the larger side otherwise."""
    rule = REGISTRY[op.name].flops if op.name in REGISTRY else None
    if rule is not None:
        return rule(op, shapes)
    out = sum(int(np.prod(shapes[r])) for r in op.result_names)
    if op.name in ("dot", "dot_general"):
        a = shapes[op.operands[0]]
        contract = op.attrs.get("lhs_contract", (len(a) - 1,))
        k = int(np.prod([a[d] for d in contract])) if contract else 1
        return 2 * out * k
    return max(out, sum(int(np.prod(shapes[n])) for n in op.operands if n in shapes))


@dataclass
class _Version:
    """One order of the listing's ops (main, or one of its schedule versions) as the
    runtime walks it: the compute ops, the remat plan read from it, who produces what."""
    func: Func
    ops: list[Op]
    program: Program
    regen_ops: dict[tuple[str, int], Op]
    producer: dict[str, int]

    @classmethod
    def read(cls, func: Func) -> "_Version":
        ops = [op for op in func.ops if is_compute(op)]
        candidates: dict[int, list[str]] = {}
        regens: dict[tuple[str, int], Op] = {}
        index = -1
        pending: list[Op] = []
        for op in func.ops:
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
        for i, op in enumerate(ops):
            for n in dict.fromkeys(op.operands):
                uses.setdefault(n, []).append(i)
        inputs = [a.name for a in func.args]
        donated = frozenset(a.name for a in func.args if a.donated)
        program = Program(ops, inputs, set(func.outputs()), candidates, {}, uses, donated)
        producer = {r: i for i, op in enumerate(ops) for r in op.result_names}
        return cls(func, ops, program, regens, producer)


@dataclass
class _Bound:
    """What one binding of the symbols fixes: sizes, shapes, the version to run (the
    lowest unevicted peak) and that peak."""
    binding: dict[str, int]
    sizes: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    version: _Version
    planned_peak: int
    program: Program | None = None
    runs: dict[int | None, PreparedRun] = field(default_factory=dict)
    fitted: dict[int, PreparedRun | None] = field(default_factory=dict)  # closed loops
    good: list[PreparedRun] = field(default_factory=list)  # every run that fitted
    smallest: int | None = None    # the smallest limit that works, once searched
    lower: list[int] | None = None  # per op, no plan's model is below (Program.lower_bounds)


class Executor:
    """Runs one listing on one backend; plans and compiled segments are cached per binding.

    ``cost``: the planner's cost model; by default the backend's own measurement of its
    copy bandwidth (``copy_bandwidth()``, taken once, when a plan first needs it) with
    the default FLOP rate, or the defaults where the backend measures nothing.
    ``consolidate=False`` keeps the planner's evictions where it chose them (policy.py),
    one cut per eviction and per reload: for comparison.
    """

    def __init__(self, module: Module, backend: Backend, cost: CostModel | None = None,
                 consolidate: bool = True) -> None:
        self.module = module
        self.backend = backend
        self._cost = cost
        self.consolidate = consolidate
        self.func = module.main
        self.info: ShapeInfo = analyze_shapes(module)
        self.versions = [_Version.read(f) for f in versions(module)]
        self.inputs = [a.name for a in self.func.args]
        self.outputs = list(self.func.outputs())
        self.donated = frozenset(a.name for a in self.func.args if a.donated)
        self._keep = (set(self.inputs) - self.donated) | set(self.outputs)
        self._plans: dict[tuple, Plan] = {}
        self._by_shapes: dict[tuple, _Bound] = {}
        self._by_binding: dict[tuple, _Bound] = {}
        self._whole_ratios: list[float] = []   # device / model peak of compiled whole steps

    @property
    def cost(self) -> CostModel:
        if self._cost is None:
            measure = getattr(self.backend, "copy_bandwidth", None)
            self._cost = CostModel(copy_bandwidth=measure()) if measure else CostModel()
        return self._cost

    @cost.setter
    def cost(self, value: CostModel) -> None:
        self._cost = value

    # -- binding --------------------------------------------------------------------
    def bind(self, shapes: dict[str, tuple[int, ...]], dims: dict[str, int] | None = None
             ) -> dict[str, int]:
        """Symbol values from input shapes (and ``dims``, for symbols no input carries),
        solved and checked against every relation by ``ShapeInfo.bind``."""
        dim_eqs = [input_equation(name, j, expr, tuple(shapes[name]))
                   for name in self.inputs for j, expr in enumerate(self.info.dims[name])
                   if j < len(shapes[name])]
        full = self.info.bind(dict(dims or {}), dim_eqs)
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
            else:  # drawn in single precision (or double): half the time and memory
                draw = np.float64 if dtype == "f64" else np.float32
                out[name] = rng.standard_normal(shape, dtype=draw).astype(numpy_dtype(dtype),
                                                                          copy=False)
        return out

    def _bound(self, binding: dict[str, int]) -> _Bound:
        key = tuple(sorted(binding.items()))
        bound = self._by_binding.get(key)
        if bound is None:
            sizes = exact_sizes(self.info, binding)
            best = choose([v.func for v in self.versions], sizes)[0] \
                if len(self.versions) > 1 else 0
            version = self.versions[best]
            planned = simulate(base_trace(version.program), sizes, self.inputs,
                               set(self.outputs), self.donated)
            bound = self._by_binding[key] = _Bound(dict(binding), sizes,
                                                   self.shapes_for(binding), version,
                                                   planned.peak)
        return bound

    def _bound_for_inputs(self, shapes: dict[str, tuple[int, ...]],
                          dims: dict[str, int] | None) -> _Bound:
        key = (tuple(shapes[n] for n in self.inputs), tuple(sorted((dims or {}).items())))
        bound = self._by_shapes.get(key)
        if bound is None:
            bound = self._by_shapes[key] = self._bound(self.bind(shapes, dims))
        return bound

    # -- planning -------------------------------------------------------------------
    def plan(self, binding: dict[str, int], limit: int | None) -> Plan:
        key = (tuple(sorted(binding.items())), limit)
        plan = self._plans.get(key)
        if plan is None:
            bound = self._bound(binding)
            if limit is None:  # nothing to evict: no cost model, no sites
                program = bound.version.program
            else:
                if bound.program is None:
                    bound.program = replace(bound.version.program,
                                            sites=self._sites(bound.version, bound.shapes))
                program = bound.program
            cost = self.cost if limit is not None else CostModel()
            plan = self._plans[key] = plan_run(program, bound.sizes, limit, cost,
                                               self.consolidate)
        return plan

    def _sites(self, version: _Version, shapes: dict[str, tuple[int, ...]]
               ) -> dict[tuple[str, int], RematSite]:
        sites = {}
        for (value, use), op in version.regen_ops.items():
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
                kept = [n for n in external if not self._resident_at(version, n, use)]
            flops = sum(flops_of(rop, shapes) for rop in region or [])
            nbytes = sum(int(np.prod(shapes[r], dtype=np.int64)) * DTYPE_BYTES[self.info.dtypes[r]]
                         for rop in region or [] for r in rop.result_names)
            sites[(value, use)] = RematSite(value, use, region or None, kept, external, flops,
                                            nbytes)
        return sites

    def _resident_at(self, version: _Version, name: str, use: int) -> bool:
        if name in self.inputs and name not in self.donated:
            return True
        producer = version.producer.get(name)
        if name in self.outputs and producer is not None and producer < use:
            return True
        return any(u >= use for u in version.program.uses.get(name, ()))

    def prepare(self, binding: dict[str, int], limit: int | None) -> PreparedRun:
        """The plan for ``binding`` under ``limit`` as segments and copies, checked
        against the device accounting (cached); LimitError when no plan fits."""
        bound = self._bound(binding)
        run = bound.runs.get(limit)
        if run is None:
            if limit is None:
                run = self._checked(self.plan(binding, None), bound)
                self._whole_ratios.append(run.device.peak / max(bound.planned_peak, 1))
            else:
                run = self._guess(bound, limit) or self._fits(bound, limit)
            if run is None:
                smallest = self._smallest_limit(bound)
                run = self._fits(bound, limit)  # the search may have found one
                if run is None:
                    raise LimitError(limit, smallest, "by the device accounting: held "
                                     "arrays plus each segment's XLA outputs and "
                                     "temporaries")
            bound.runs[limit] = run
        return run

    def _guess(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """The closed loop's plan, without first compiling the whole step to learn that
        it does not fit, where :meth:`_whole_step_over` says so; None sends
        :meth:`prepare` down the checked path (:meth:`_fits`: the whole step first).

        This does not weaken the limit: whatever runs is checked against its compiled
        segments' own figures. A wrong estimate costs only speed (a plan that evicts
        where the whole step would have fitted); and where the loop finds nothing,
        :meth:`_fits` compiles the whole step after all, so a limit is refused only on
        the checked path."""
        if None in bound.runs or not self._whole_step_over(bound, limit):
            return None   # the whole step may fit, or is compiled already: _fits decides
        return self._fit(bound, limit)

    def _whole_step_over(self, bound: _Bound, limit: int) -> bool:
        """Whether the run with nothing evicted is over ``limit``, without compiling it.

        Proved when the bytes it must hold exceed the limit: every input (held when it
        starts) plus the outputs XLA can not write into donated inputs. Otherwise
        estimated from the whole steps compiled at other bindings: this binding's model
        peak times the smallest ratio of device peak to model peak seen there, over the
        limit by more than WHOLE_STEP_SLACK (on the small Llama training step the ratio
        stayed within 0.97-1.05 from 4x32 to 8x448). No estimate before a whole step has
        been compiled."""
        sizes = bound.sizes
        inputs = sum(sizes[n] for n in self.inputs)
        outputs = sum(sizes[n] for n in dict.fromkeys(self.outputs) if n not in self.inputs)
        donated = sum(sizes[n] for n in self.donated)
        if inputs + max(outputs - donated, 0) > limit:
            return True
        if not self._whole_ratios:
            return False
        return bound.planned_peak * min(self._whole_ratios) > limit * (1 + WHOLE_STEP_SLACK)

    def _checked(self, plan: Plan, bound: _Bound, limit: int | None = None) -> PreparedRun:
        """The plan cut into steps, with its device accounting (segments compiled).
        ``limit``: stop at the first segment over it (the run is refused, and the
        segments after it, which the next plan may cut differently, are not compiled)."""
        run = split(plan, bound.shapes, self.info.dtypes, self._keep, self.backend)
        run.device = account(run, bound.sizes, self.inputs, over=limit)
        return run

    def _fit(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """The closed loop: plan within the limit less the margins learned so far, check
        the device peak, widen the margins at the segments over the limit, again. None
        when the planner can not meet the margins (cached per binding and limit)."""
        if limit in bound.fitted:
            return bound.fitted[limit]
        if bound.lower is None:
            bound.lower = bound.version.program.lower_bounds(bound.sizes)
        lower = bound.lower
        if bound.program is None:
            bound.program = replace(bound.version.program,
                                    sites=self._sites(bound.version, bound.shapes))
        margins: dict[int, int] = {}
        found = None
        for _ in range(MAX_ROUNDS):
            if any(lower[k] + margins.get(k, 0) > limit for k in range(len(lower))):
                break   # no plan can meet these margins: the greedy would only find that
            plan = try_plan(bound.program, bound.sizes, limit, self.cost, self.consolidate,
                            margins)
            if plan is None:
                break
            run = self._checked(plan, bound, limit)
            if run.device.peak <= limit:
                found = run
                bound.good.append(run)
                break
            if not grow_margins(run, run.device, plan.measure.memory, limit, margins):
                break
        bound.fitted[limit] = found
        return found

    def _fits(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """What :meth:`prepare` runs under ``limit``: the run with nothing evicted when
        its device peak fits, else the closed loop's plan, or else the fitting run of
        another limit with the highest device peak within this one."""
        free = self.prepare(bound.binding, None)
        if free.device.peak <= limit:   # nothing to evict: the zero-overhead path
            return free
        run = self._fit(bound, limit)
        if run is None:
            run = max((r for r in bound.good if r.device.peak <= limit),
                      key=lambda r: r.device.peak, default=None)
        return run

    def _smallest_limit(self, bound: _Bound) -> int:
        """A limit that :meth:`_fits` meets for this binding such that one byte less is
        refused (both tried). The search does not depend on the limit asked for, so every
        process names the same one: a bisection between the bytes every run must hold
        at its end (inputs and outputs) and the peak with nothing evicted (which always
        fits), down to a 1% bracket, then a descent from its top, one byte under each
        fitting plan's device peak, until one byte less is refused. Cached per binding.

        The closed loop is not monotone in the limit (a plan found for one limit can fit
        a smaller one): :meth:`_fits` falls back on every plan found so far, and since
        the search is the same everywhere, so are the plans it finds."""
        if bound.smallest is not None:
            return bound.smallest
        held = sum(bound.sizes[n] for n in dict.fromkeys(self.inputs + self.outputs))
        lo = max(held, 1)
        hi = max(self.prepare(bound.binding, None).device.peak, lo)
        while hi - lo > hi // 100:
            mid = (lo + hi) // 2
            run = self._fits(bound, mid)
            if run is None:
                lo = mid + 1
            else:
                hi = run.device.peak if self._fits(bound, run.device.peak) else mid
        while hi > 1:
            below = self._fits(bound, hi - 1)
            if below is None:
                break
            hi = below.device.peak if self._fits(bound, below.device.peak) else hi - 1
        bound.smallest = hi
        return hi

    # -- execution ------------------------------------------------------------------
    def run(self, inputs: dict[str, np.ndarray], limit: int | None = None,
            dims: dict[str, int] | None = None, profile: bool = False
            ) -> tuple[dict[str, np.ndarray], Report]:
        """Outputs (fetched to NumPy) and a report, for inputs given as host arrays.
        ``profile``: wait for each segment and time it (``Report.segment_seconds``);
        otherwise everything is dispatched asynchronously."""
        start = time.perf_counter()
        self._check_names(inputs)
        arrays = {n: np.asarray(inputs[n]) for n in self.inputs}
        self._check_dtypes({n: a.dtype for n, a in arrays.items()})
        bound = self._bound_for_inputs({n: a.shape for n, a in arrays.items()}, dims)
        env = {n: self.backend.put(arrays[n]) for n in self.inputs}
        outputs, report = self._dispatch(bound, env, limit, profile, start)
        return {n: self.backend.fetch(x) for n, x in outputs.items()}, report

    def run_arrays(self, arrays: dict[str, Any], limit: int | None = None,
                   dims: dict[str, int] | None = None, profile: bool = False
                   ) -> tuple[dict[str, Any], Report]:
        """:meth:`run` for inputs that are already the backend's arrays (device arrays
        for JAX), returning the outputs as the backend's arrays: nothing is copied to
        the host. Inputs that are not donated are never freed; donated ones are freed
        (and their buffers reused) at their last use."""
        start = time.perf_counter()
        self._check_names(arrays)
        self._check_dtypes({n: arrays[n].dtype for n in self.inputs})
        bound = self._bound_for_inputs({n: tuple(arrays[n].shape) for n in self.inputs}, dims)
        env = {n: self.backend.put(arrays[n]) for n in self.inputs}
        return self._dispatch(bound, env, limit, profile, start)

    def _check_names(self, inputs: dict[str, Any]) -> None:
        missing = [n for n in self.inputs if n not in inputs]
        if missing:
            raise BladecError(f"missing input(s) {', '.join(missing)}")
        if len(inputs) != len(self.inputs):
            extra = [n for n in inputs if n not in self.inputs]
            raise BladecError(f"unknown input(s) {', '.join(extra)} (the graph takes "
                              f"{', '.join(self.inputs)})")

    def _check_dtypes(self, dtypes: dict[str, Any]) -> None:
        for name in self.inputs:
            want = numpy_dtype(self.info.dtypes[name])
            if np.dtype(dtypes[name]) != want:
                raise BladecError(f"input {name} is {np.dtype(dtypes[name])}, "
                                  f"the listing says {self.info.dtypes[name]}")

    def _dispatch(self, bound: _Bound, env: dict[str, Any], limit: int | None,
                  profile: bool, start: float) -> tuple[dict[str, Any], Report]:
        """Prepare (plan, compile, check: cached per binding and limit) and execute."""
        compilations, compile_seconds = self.backend.compilations, self.backend.compile_seconds
        prepared = self.prepare(bound.binding, limit)
        plan = prepared.plan
        device: DeviceAccount = prepared.device
        report = Report(limit=limit, binding=dict(bound.binding), version=bound.version.func.name,
                        peak_bytes=device.peak, model_peak_bytes=plan.peak,
                        planned_peak_bytes=bound.planned_peak,
                        host_peak_bytes=device.host_peak,
                        timeline=list(plan.measure.memory), evictions=prepared.evictions,
                        reloads=prepared.reloads, recomputes=prepared.recomputes,
                        segments=prepared.segments,
                        executables=len({id(s.fn) for s in prepared.segment_steps()}))
        outputs = execute(prepared, env, self.backend, self.inputs, self.outputs, report,
                          profile)
        if report.peak_bytes != device.peak:
            raise AssertionError(f"the run held {report.peak_bytes} bytes at its peak, "
                                 f"the plan's accounting said {device.peak}")
        report.compilations = self.backend.compilations - compilations
        report.compile_seconds = self.backend.compile_seconds - compile_seconds
        report.seconds = time.perf_counter() - start
        return outputs, report

def _show(binding: dict[str, int], info: ShapeInfo) -> str:
    return ", ".join(f"{s}={binding[s]}" for s in info.free)


def unoptimized(module: Module) -> Module:
    """The listing with any remat plan removed: the reference a differential test runs."""
    return map_versions(module, strip_remat)

