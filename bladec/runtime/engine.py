"""The engine: what running a listing means, in order. Open this module first.

Everything that runs a listing goes through :class:`Engine`: ``bladec.jit`` (the Python
API, bladec/api.py), ``bladec run`` (session.py, a thin client that reads and writes
files), and the benchmarks. An engine is built once per listing:

1. **optimize** (:func:`optimize`): the pass pipeline (``analyze,schedule,remat`` by
   default), unless the listing is already optimized (it carries the ``remat.plan`` that
   the remat pass writes): then it runs as it is, and its completed
   ``@symbolic_shape_graph`` is the analysis;
2. the executor (executor.py, built in stages in planning/: binding.py, planner.py,
   fitting.py) reads the optimized listing once: its shape analysis, its schedule
   versions and remat sites.

Then each :meth:`Engine.call`, given the inputs as the backend's arrays (device arrays
for JAX, which stay on the device):

3. **bind** (planning/binding.py, symbolic/binding.py): the symbols from the input
   shapes, checked against every relation; with padding (padding.py, the engine's own),
   each padded symbol rounded up to its multiple and the inputs padded where they live;
4. **plan** (planning/: planner.py, policy.py, plan.py): once per binding and limit,
   cached: what to evict and how to bring it back, on the per-op model;
5. **compile and fit** (planning/fitting.py, segments.py; backends/jax_backend.py): the
   plan cut into segments, each compiled once per shape signature (cached in the
   backend), and the plan checked against the device accounting (planning/accounting.py)
   until it fits the limit, or refused naming the smallest limit that works (a
   :class:`bladec.runtime.planning.limit.LimitError`); nothing is compiled that is known
   not to run (the whole step is not compiled to learn it does not fit);
6. **execute** (executor.py, execution.py): the segments, evictions and reloads
   dispatched without waiting, dead arrays freed, donated inputs given up at their last
   use;
7. the outputs (padding cut off) as the backend's arrays, and a :class:`Report` of the
   step, which :class:`EngineStats` adds up over calls.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Sequence

import numpy as np

from bladec.errors import BladecError, DeviceMemoryError
from bladec.ir import Module
from bladec.passes import DEFAULT_PIPELINE, Pass, parse_pipeline, run_pipeline
from bladec.progress import SILENT, Progress
from bladec.runtime.backends.backend import Backend, NumpyBackend
from bladec.runtime.store.executables import ExecutableStore
from bladec.runtime.dispatch import Dispatch
from bladec.runtime.execution import CompileCount
from bladec.runtime.executor import Executor, Report, unoptimized
from bladec.runtime.store.hints import SearchHints
from bladec.runtime.store.listings import ListingCache, listing_key
from bladec.runtime.padding import Padding
from bladec.passes.mask import SIZE_PREFIX, TRUE_PREFIX
from bladec.units import format_dims

__all__ = ["Engine", "EngineStats", "Report", "is_optimized", "make_backend", "optimize",
           "unoptimized"]


def is_optimized(module: Module) -> bool:
    """Whether the listing went through the remat pass (it carries ``remat.plan``): the
    default pipeline has then run, and running it again would only cost time."""
    return any(op.name == "remat.plan" for f in module.funcs for op in f.ops)


def optimize(module: Module, passes: list[Pass] | str | None = None,
             progress: Progress = SILENT, cache: ListingCache | None = None) -> Module:
    """The listing the engine runs: ``passes`` applied (a pipeline string or passes);
    ``None``: the default pipeline, or nothing when the listing is already optimized.
    ``cache``: optimized listings kept across processes (listings.py)."""
    if passes is None:
        if is_optimized(module):
            return module
        passes = DEFAULT_PIPELINE
    if isinstance(passes, str):
        passes = parse_pipeline(passes)
    if not passes:
        return module
    run = partial(_apply, module, passes, progress)
    return run() if cache is None else cache.optimized(module, passes, run)


def _apply(module: Module, passes: list[Pass], progress: Progress) -> Module:
    for p in passes:
        progress.stage(f"optimizing: {p.name}")
        module = run_pipeline(module, [p])
    return module


def make_backend(name: str = "jax", bitwise: bool = False) -> Backend:
    """``"jax"`` (device arrays, compiled segments) or ``"numpy"`` (eager, no compiling)."""
    if name == "numpy":
        return NumpyBackend()
    if name != "jax":
        raise BladecError(f"unknown backend '{name}' (jax or numpy)")
    from bladec.runtime.backends.jax_backend import JaxBackend
    return JaxBackend(bitwise=bitwise)


@dataclass
class EngineStats:
    """What an engine has done over its life, and the last call's report."""
    calls: int = 0
    compilations: int = 0          # executables compiled, over all calls
    compile_seconds: float = 0.0
    seconds: float = 0.0           # wall time of the calls (compiling included)
    optimize_seconds: float = 0.0  # the pass pipeline, once
    bindings: set[tuple] = field(default_factory=set)   # distinct bindings run (buckets)
    executables: set[int] = field(default_factory=set)  # distinct ones run (their ids)
    last: Report | None = None

    def add(self, report: Report, ran: Sequence[Any] = ()) -> None:
        """Count ``report``'s step; ``ran``: the compiled segments it ran."""
        self.executables.update(id(fn) for fn in ran)
        self.calls += 1
        self.compilations += report.compilations
        self.compile_seconds += report.compile_seconds
        self.seconds += report.seconds
        self.bindings.add(tuple(sorted(report.binding.items())))
        self.last = report


class Engine:
    """One optimized listing on one backend, called many times (see the module's text).

    ``pad``: ``{"S1": 64}`` pads each named free symbol to the next multiple of its
    number (at most its declared maximum); ``pad_multiple``: the same for every other
    free symbol; ``cut_padding``: cut the outputs back to the inputs' own shapes (as
    ``bladec.jit`` does; ``bladec run`` keeps the padded ones, and says so).
    ``coarse``: with padding, serve a new bucket from a coarser one already compiled
    while that is cheaper than compiling it (:meth:`_bucket`). ``consolidate``: as for
    :class:`Executor`. ``listings``: optimized listings kept across processes
    (listings.py): a listing optimized before by the same passes and bladec is loaded,
    not optimized again; the searches for the smallest limit leave hints beside them
    (hints.py). ``progress``: told of each pass, each
    binding prepared and each executable compiled (bladec/progress.py).
    """

    def __init__(self, module: Module, *, passes: list[Pass] | str | None = None,
                 backend: Backend | str = "jax", bitwise: bool = False,
                 pad: dict[str, int] | None = None, pad_multiple: int | None = None,
                 consolidate: bool = True, cut_padding: bool = True,
                 coarse: bool = True, listings: ListingCache | None = None,
                 progress: Progress = SILENT, exact: bool = False,
                 pad_unsafe: bool = False) -> None:
        start = time.perf_counter()
        self.progress = progress
        self.source = module
        if exact and (pad or pad_multiple) and not is_optimized(module):
            passes = _masked(passes, None if pad_multiple else list(pad or {}), pad_unsafe)
        self.module = optimize(module, passes, progress, listings)
        # the true and the run sizes of the padded symbols, where the mask pass asked
        # for them (passes/mask.py): inputs the engine gives every call
        self.sizes = {a.name: (a.name.startswith(TRUE_PREFIX), a.name.split(".")[-1])
                      for a in self.module.main.args
                      if a.name.startswith((TRUE_PREFIX, SIZE_PREFIX))}
        self.stats = EngineStats(optimize_seconds=time.perf_counter() - start)
        self.backend = make_backend(backend, bitwise) if isinstance(backend, str) else backend
        if hasattr(self.backend, "progress"):
            self.backend.progress = progress   # one tick per executable compiled
        # the listing as given, for the whole step in XLA's own order (Fitter._in_xla_order)
        reference = module if self.module is not module else None
        hints = None   # earlier processes' searches for the smallest limit, beside listings
        if listings is not None:
            if hasattr(self.backend, "store") and self.backend.store is None:
                # executables by what their segments compute (executables.py)
                self.backend.store = ExecutableStore(str(listings.directory))
            optimized = self.module
            known = listings.last_key if reference is not None else None
            hints = SearchHints(str(listings.directory),
                                lambda: known or listing_key(optimized, []))
        self.executor = Executor(self.module, self.backend, consolidate=consolidate,
                                 reference=reference, hints=hints)
        self.padding = Padding(self.executor, pad, pad_multiple)
        self.multiples = self.padding.multiples
        self.cut_padding = cut_padding
        self._seen: set[tuple] = set()
        self.coarse = coarse
        self._costs: dict[tuple, _Costs] = {}    # per (bucket, limit) run so far
        self._rent: dict[tuple, float] = {}      # per bucket served coarse: extra seconds

    @property
    def inputs(self) -> list[str]:
        return self.executor.inputs

    @property
    def outputs(self) -> list[str]:
        return self.executor.outputs

    @property
    def free_symbols(self) -> list[str]:
        return list(self.executor.info.free)

    def binding(self, shapes: dict[str, tuple[int, ...]], dims: dict[str, int] | None = None
                ) -> dict[str, int]:
        """The free symbols' values for inputs of these shapes (a BladecError where the
        shapes contradict the listing)."""
        return self.executor.bind(shapes, dims)

    def padded(self, binding: dict[str, int]) -> dict[str, int]:
        """The binding the inputs are padded to (``binding`` itself without padding)."""
        return self.padding.padded(binding)

    def device_peak(self, binding: dict[str, int], limit: int | None = None) -> int:
        """The device peak of the run for ``binding`` under ``limit`` (its segments
        compiled to know it; cached, so a later call with that binding compiles
        nothing); a LimitError where no plan fits."""
        return self.executor.prepare(binding, limit).device.peak

    def model_peak(self, binding: dict[str, int], limit: int | None = None) -> int:
        """The per-op model's peak of the plan for ``binding`` under ``limit``, from the
        plan alone (nothing compiled); a LimitError where the model finds no plan."""
        return self.executor.plan(binding, limit).peak

    def call(self, arrays: dict[str, Any], limit: int | None = None,
             dims: dict[str, int] | None = None, profile: bool = False
             ) -> tuple[dict[str, Any], Report]:
        """Run once: ``arrays`` by input name (the backend's arrays; host arrays are put
        on the device), outputs by name as the backend's arrays, and the step's report."""
        binding = None
        counted = CompileCount.of(self.executor.backend)   # planning before the padding too
        if self.multiples:
            given = [n for n in self.inputs if n not in self.sizes]
            binding = self.binding({n: tuple(arrays[n].shape) if n in arrays else ()
                                    for n in self.inputs}, dims)
            dims = self.padded(binding)
            if self.coarse:
                dims = self._bucket(dims, limit)
            self.executor.prepare(dims, limit)   # a refusal before the padded copies
            arrays = self.padding.pad({n: arrays[n] for n in given}, binding, dims)
            for name, (true, s) in self.sizes.items():
                arrays[name] = np.asarray((binding if true else dims)[s], np.int32)
        shapes = {n: tuple(arrays[n].shape) for n in self.inputs if n in arrays}
        key = (tuple(shapes.values()), tuple(sorted((dims or {}).items())))
        if key not in self._seen and len(shapes) == len(self.inputs):
            self._seen.add(key)   # the first call with these shapes plans and compiles
            self.progress.stage(f"planning and compiling for "
                                f"{format_dims(self.binding(shapes, dims)) or 'static shapes'}")
        before = counted.since(self.executor.backend)   # what the check before padding cost
        try:
            outputs, report = self.executor.run_arrays(arrays, limit, dims, profile)
        except BladecError:   # a refused limit compiles too: count it, as a step would
            spent = counted.since(self.executor.backend)
            self.stats.compilations += spent.compilations
            self.stats.compile_seconds += spent.seconds
            raise
        except Exception as exc:   # the allocator refused: a user's condition, not a bug
            memory = DeviceMemoryError.of(exc)
            if memory is None:
                raise
            raise memory from exc
        before.add_to(report)
        report.seconds += before.seconds
        if binding is not None and self.cut_padding:
            outputs = self.padding.unpad(outputs, report.binding, binding)
        ran = self.executor.prepare(report.binding, limit).segment_steps()  # cached
        self.stats.add(report, [s.fn for s in ran])
        cost = self._costs.setdefault((_key(report.binding), limit), _Costs())
        cost.add(report, self._step_seconds(cost, report, outputs))
        return outputs, report

    def _step_seconds(self, cost: "_Costs", report: Report, outputs: dict[str, Any]
                      ) -> float | None:
        """The call's seconds as the bucket's costs take them. The call returns once its
        executables are dispatched (JAX runs them asynchronously: a 0.3 s step of the
        small Llama returned in 1-15 ms), so the first step a bucket measures, the one
        :meth:`_bucket` prices padding with, waits for its outputs; other calls are not
        held up (None: not waited). Only where buckets can be served coarse (``coarse``
        with padding)."""
        if not (self.coarse and self.multiples) or cost.step is not None \
                or report.compilations:
            return None
        start = time.perf_counter()
        for value in outputs.values():
            ready = getattr(value, "block_until_ready", None)
            if ready is not None:
                ready()
        return report.seconds + time.perf_counter() - start

    def dispatcher(self, report: Report, limit: int | None, inputs: list[str],
                   outputs: list[str]) -> Dispatch | None:
        """The hot path (dispatch.py) of the run ``report`` describes (a call that just
        ran at some input shapes under ``limit``), for later calls at the same shapes:
        given the values of ``inputs`` (the engine's inputs, in any order), it returns
        those of ``outputs``. None where a call does more than dispatch one executable:
        padding (each call pads and cuts), or a plan cut into segments."""
        if self.multiples or self.sizes:
            return None
        run = self.executor.prepare(report.binding, limit)   # cached
        return Dispatch.of(run, inputs, outputs, self.backend, report, self.stats)

    def _bucket(self, target: dict[str, int], limit: int | None) -> dict[str, int]:
        """The bucket to run ``target`` in: itself, or a coarser one already compiled
        (at least as large in every padded symbol, the same in the others) while that
        is cheaper. A rent-or-buy rule: each call served coarse pays the extra time of
        the larger shapes (the coarse bucket's step time times the share of its size
        that is padding), and once what ``target`` has paid so would exceed what
        compiling it cost the coarse bucket (its first call less a step), it gets its
        own: never more than twice the cheaper of the two choices in hindsight."""
        own = (_key(target), limit)
        if own in self._costs:
            return target
        size = _size(target, self.multiples)
        best = None
        for (key, lim), cost in self._costs.items():
            other = dict(key)
            if lim != limit or set(other) != set(target) or any(
                    other[s] < target[s] if s in self.multiples else other[s] != target[s]
                    for s in target):
                continue
            step = cost.step if cost.step is not None else self._step_estimate(other, limit)
            if step is None:
                continue
            if best is None or _size(other, self.multiples) < _size(best[0], self.multiples):
                best = (other, cost, step)
        if best is None:
            return target
        other, cost, step = best
        extra = step * (1 - size / _size(other, self.multiples))
        paid = self._rent.get(own, 0.0)
        if paid + extra >= cost.prepare:
            return target       # buy: compile the bucket of its own
        self._rent[own] = paid + extra
        return other

    def _step_estimate(self, bucket: dict[str, int], limit: int | None) -> float | None:
        """A step of ``bucket``, run once so far (the call that compiled it: no step of
        its own measured yet), estimated from the bucket under ``limit`` nearest in size
        whose step is measured, scaled by size (None where there is none).

        Without it a bucket served only once can serve no finer one until it runs again,
        and the finer one is compiled although a coarser executable is at hand: the
        small Llama stream of benchmarks/bench_jit.py meets S=448 once, at its 4th
        call, and S=320 first at its 9th, when 448 had no step yet; under 0.6x of its
        peak 320 then cost its own compilation (BENCHMARKS.md, issue 32)."""
        size = _size(bucket, self.multiples)
        known = []
        for (key, lim), cost in self._costs.items():
            at = _size(dict(key), self.multiples)
            if lim == limit and cost.step is not None and at > 0 and size > 0 \
                    and set(dict(key)) == set(bucket):
                known.append((abs(math.log(at / size)), cost.step, at))
        if not known:
            return None
        _, step, at = min(known)
        return step * size / at


def _masked(passes: list[Pass] | str | None, symbols: list[str] | None,
            unsafe: bool) -> list[Pass]:
    """The pipeline with the ``mask`` pass first (passes/mask.py): padding that does not
    change the answer."""
    from bladec.passes.mask import MaskPass
    pipeline = DEFAULT_PIPELINE if passes is None else passes
    if isinstance(pipeline, str):
        pipeline = parse_pipeline(pipeline)
    return [MaskPass(tuple(symbols) if symbols else None, "keep" if unsafe else "refuse"),
            *pipeline]


@dataclass
class _Costs:
    """What one bucket (binding and limit) cost: its first call less a step (planning and
    compiling), and a step, measured once by the first call that compiles nothing."""
    first: float | None = None
    step: float | None = None

    @property
    def prepare(self) -> float:
        return max((self.first or 0.0) - (self.step or 0.0), 0.0)

    def add(self, report: Report, seconds: float | None = None) -> None:
        """``seconds``: the call's with its outputs waited for (:meth:`Engine._step_seconds`),
        the only measure of a step; other calls' (dispatch only) leave it."""
        if self.first is None:
            self.first = report.seconds if seconds is None else seconds
        if report.compilations == 0 and seconds is not None and self.step is None:
            self.step = seconds


def _key(binding: dict[str, int]) -> tuple:
    return tuple(sorted(binding.items()))


def _size(binding: dict[str, int], symbols: dict[str, int]) -> int:
    """The product of the padded symbols: the step's work grows at least as much."""
    out = 1
    for s in symbols:
        out *= binding[s]
    return out
