"""Binding: what the input shapes of one call fix, before anything is planned.

The runtime's first stage (the engine, engine.py, says what a call does in order). A
:class:`Binder` reads the optimized listing once (its completed shape analysis, its
schedule versions, the remat sites and plan each version carries) and, per call, solves
the symbols from the input shapes, checks them against every relation, and works out
what that binding fixes: every value's size and shape, the schedule version with the
lowest peak, and that peak (a :class:`_Bound`, cached per binding and per input
shapes, so a repeated shape costs a dictionary look-up). Planning (planner.py),
fitting the plan to the device (fitting.py) and executing it (executor.py) build on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.analysis.liveness import is_compute
from bladec.analysis.memory import exact_sizes, expanded_sizes
from bladec.analysis.version import choose, versions
from bladec.errors import BladecError
from bladec.ir import Func, Module, Op
from bladec.runtime.backends.backend import numpy_dtype
from bladec.runtime.planning.policy import Program, base_trace
from bladec.runtime.planning.segments import PreparedRun
from bladec.runtime.planning.trace import simulate
from bladec.symbolic.binding import input_equation
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes


MAX_ARRAY_BYTES = 2 ** 63 - 1   # XLA's extents and NumPy's sizes are signed 64-bit


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
    # the bytes of each value as an array (what a segment returns or takes): ``sizes``,
    # the planner's model, sizes a cheap expanding op by its operands instead
    arrays: dict[str, int] = field(default_factory=dict)
    runs: dict[int | None, PreparedRun] = field(default_factory=dict)
    fitted: dict[int, tuple] = field(default_factory=dict)  # closed loops: (run or
                                   # None, what the loop taught) per limit (Fitter._fit)
    good: list[PreparedRun] = field(default_factory=list)  # the runs the smallest
                                   # limit's search found (and a hint's: Fitter._recalled)
    smallest: int | None = None    # the smallest limit that works, once searched
    lower: list[int] | None = None  # per op, no plan's model is below (Program.lower_bounds)
    free: PreparedRun | None = None   # the whole step in bladec's order, once compiled
    xla_run: PreparedRun | None = None   # the whole step in XLA's own order, once compiled
    xla_scheduled: PreparedRun | None = None   # the same, from bladec's schedule
    margins: dict[int, int] = field(default_factory=dict)  # the last fitting plan's
    recalled: bool = False   # an earlier process's hint read (Fitter._recalled)
    hint: dict | None = None   # what it said
    learned: dict[int, int] = field(default_factory=dict)  # margins any checked plan
                                   # taught, at every limit (Fitter._leap)
    plans: dict[tuple, object] = field(default_factory=dict)  # the closed loop's plans
                                   # by limit and margins (Fitter._planned)


class Binder:
    """The listing read once, and the bindings of the calls so far (cached)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.func = module.main
        self.info: ShapeInfo = analyze_shapes(module)
        self.versions = [_Version.read(f) for f in versions(module)]
        self.inputs = [a.name for a in self.func.args]
        self.outputs = list(self.func.outputs())
        self.donated = frozenset(a.name for a in self.func.args if a.donated)
        self._keep = (set(self.inputs) - self.donated) | set(self.outputs)
        self._by_shapes: dict[tuple, _Bound] = {}
        self._by_binding: dict[tuple, _Bound] = {}
        # the backend makes cheap expanding ops inside their readers (Planner sets it
        # from JaxBackend.enforce_order): they are sized by their operands
        self.fused_expanding = False

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
            shapes = self.shapes_for(binding)
            self._check_extents(binding, shapes)
            sizes = arrays = exact_sizes(self.info, binding)
            if self.fused_expanding:
                for v in self.versions:
                    sizes = expanded_sizes(sizes, v.ops, set(self.outputs))
            best = choose([v.func for v in self.versions], sizes)[0] \
                if len(self.versions) > 1 else 0
            version = self.versions[best]
            planned = simulate(base_trace(version.program), sizes, self.inputs,
                               set(self.outputs), self.donated)
            bound = self._by_binding[key] = _Bound(dict(binding), sizes, shapes, version,
                                                   planned.peak, arrays=arrays)
        return bound

    def _check_extents(self, binding: dict[str, int],
                       shapes: dict[str, tuple[int, ...]]) -> None:
        """Refuse a binding that makes some value larger than any array can be (more
        than 2^63-1 bytes, or a negative extent), before anything is planned, compiled
        or allocated: XLA aborts the process on such a shape ("overflow in static extent
        product", issue 30), and NumPy raises on it mid-run."""
        for name, shape in shapes.items():
            count = 1
            for d in shape:
                count *= d
            nbytes = count * np.dtype(numpy_dtype(self.info.dtypes[name])).itemsize
            if min(shape, default=0) < 0 or nbytes > MAX_ARRAY_BYTES:
                raise BladecError(
                    f"{_show(binding, self.info)} makes {name} of shape {shape} hold "
                    f"{count} elements ({nbytes} bytes), more than any array can "
                    f"(at most 2^63-1 bytes)")

    def _bound_for_inputs(self, shapes: dict[str, tuple[int, ...]],
                          dims: dict[str, int] | None) -> _Bound:
        key = (tuple(shapes[n] for n in self.inputs), tuple(sorted((dims or {}).items())))
        bound = self._by_shapes.get(key)
        if bound is None:
            bound = self._by_shapes[key] = self._bound(self.bind(shapes, dims))
        return bound

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


def _show(binding: dict[str, int], info: ShapeInfo) -> str:
    return ", ".join(f"{s}={binding[s]}" for s in info.free)
