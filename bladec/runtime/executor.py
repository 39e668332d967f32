"""Running an optimized listing under a memory limit: the runtime's stages, put together.

The engine (engine.py) is the public face, and says what a call does in order; this
module is the last stage under it. Each stage is a class in its own module of
planning/, building on the one before: binding (binding.py: the symbols from the input
shapes, what they fix), planning (planner.py, with the policy in policy.py: what to
evict on the per-op model), fitting (fitting.py: the plan cut into compiled segments,
segments.py, and checked against the device accounting, accounting.py, in a closed
loop; the smallest limit that works where none fits); then executing (here, with
execution.py: dispatch on a backend, backends/).

A plan with no eviction is one segment, the whole graph, at the cost of a whole-graph
``jax.jit``: the zero-overhead path. Dead tensors are freed explicitly after the
segment that last uses them (and donated to it); evicted tensors are offloaded to host
memory or dropped for recompute.

Everything that depends only on the input shapes (the binding, sizes, shapes, the plan,
the segments with their compiled functions) is worked out on the first run with those
shapes and cached, so a later run only dispatches (execution.py). Dispatch is
asynchronous: segments, offloads and reloads are queued without waiting for each other
(the backend orders them by their data), unless ``profile=True`` asks for each
segment's time.
"""
from __future__ import annotations

import time
from functools import cached_property
from typing import Any

import numpy as np

from bladec.analysis.version import map_versions
from bladec.ir import Module
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.passes.remat import strip_remat
from bladec.runtime.backends import machine
from bladec.runtime.planning.binding import _Bound
from bladec.runtime.planning.accounting import DeviceAccount
from bladec.runtime.execution import PEAK_COUNTS, CompileCount, Report, execute
from bladec.runtime.planning.fitting import Fitter
from bladec.runtime.planning.limit import LimitError
from bladec.runtime.planning.segments import PreparedRun
from bladec.runtime.checkpoint import checkpointed, chunk_lengths
from bladec.runtime.specialization import specialized
from bladec.units import format_dims, format_size

__all__ = ["Executor", "Report", "unoptimized"]


class Executor(Fitter):
    """Runs one listing on one backend; plans and compiled segments are cached per binding.

    ``cost``: the planner's cost model; by default the backend's own measurement of its
    copy bandwidth (``copy_bandwidth()``, taken once, when a plan first needs it) with
    the default FLOP rate, or the defaults where the backend measures nothing.
    ``consolidate=False`` keeps the planner's evictions where it chose them (policy.py),
    one cut per eviction and per reload: for comparison.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._memory_checked: set[tuple] = set()   # (binding, limit) runs (_check_memory)
        self._specialists_at: dict[tuple, list[Executor]] = {}   # per binding (_specialists)
        self._choices: dict[tuple, Executor] = {}   # per binding and limit (_chosen)

    def _specialists(self, binding: dict[str, int]) -> "list[Executor]":
        """The executors of this listing rewritten at ``binding``, which plan, run and
        name the smallest limit there as a static trace of the step would, or better:
        its short scans unrolled (specialization.py: every step's values evictable, as
        a static trace has them), else its forward and backward scan pairs checkpointed
        every k steps (checkpoint.py), one executor per chunk length k of
        ``chunk_lengths``, fewest chunks (least dispatch) first. Empty where the
        listing has no scan to rewrite there (cached per binding)."""
        key = tuple(sorted(binding.items()))
        if key not in self._specialists_at:
            found: list[Executor] = []
            if any(op.name == "scan" for op in self.func.ops):
                shapes = self.shapes_for(binding)
                base = unoptimized(self.module).main
                unrolled = specialized(base, shapes)
                # (the rows region's sums add up chunk by chunk: not on a bitwise backend)
                rows = not getattr(self.backend, "bitwise", False)
                listings = [unrolled] if unrolled is not None else [
                    checkpointed(base, shapes, k, rows) for k in chunk_lengths(base, shapes)]
                for listing in filter(None, listings):
                    other = Executor(run_pipeline(listing, parse_pipeline(DEFAULT_PIPELINE)),
                                     self.backend, self._cost, self.consolidate,
                                     reference=listing)
                    # (its chunks free their residuals only between executables)
                    other.cut_after_loops = unrolled is None
                    found.append(other)
            self._specialists_at[key] = found
        return self._specialists_at[key]

    def _chosen(self, binding: dict[str, int], limit: int | None) -> "Executor":
        """Which executor runs ``binding`` under ``limit``: this one where its plan fits
        (always at no limit: the loop op compiles as ``lax.scan``, one body), else the
        first rewritten listing's (:meth:`_specialists`) that fits there; a LimitError
        naming the smallest of all their smallest limits where none does (cached)."""
        key = (tuple(sorted(binding.items())), limit)
        if key in self._choices:
            return self._choices[key]
        others = [] if limit is None else self._specialists(binding)
        who: Executor | None = None
        if not others or super().fits(binding, limit):
            who = self
        else:
            who = next((o for o in others if o.fits({}, limit)), None)
        if who is None:
            smallest = []
            for other in others:
                try:
                    other.prepare({}, limit)   # (the search may have found one)
                    who = other
                    break
                except LimitError as refused:
                    smallest.append(refused.smallest)
        if who is None:
            bound = self._bound(binding)
            own = self._smallest_limit(bound)
            if self._fits(bound, limit) is None:   # (the search may have found one)
                raise LimitError(limit, min([own, *smallest]), "by the device accounting: "
                                 + self.backend.accounting) from None
            who = self
        self._choices[key] = who
        return who

    def prepare(self, binding: dict[str, int], limit: int | None) -> PreparedRun:
        """Fitter.prepare, by the specialized listing where only its plan fits
        (:meth:`_chosen`)."""
        who = self._chosen(binding, limit)
        if who is not self:
            return who.prepare({}, limit)
        return super().prepare(binding, limit)

    def fits(self, binding: dict[str, int], limit: int) -> bool:
        if super().fits(binding, limit):
            return True
        return any(other.fits({}, limit) for other in self._specialists(binding))

    @cached_property
    def in_machine_memory(self) -> bool:
        """Whether the device's arrays live in this machine's memory (machine.py): NumPy's
        arrays, or JAX's on its CPU device. (Whether host copies count in the device peak
        is the planner's ``one_memory``, a fact of the backend.)"""
        name = getattr(self.backend, "name", "")
        return name == "numpy" or (name == "jax" and machine.device_is_cpu())

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
        special = self._chosen(bound.binding, limit)
        if special is not self:
            outputs, report = special.run(inputs, limit, None, profile)
            report.binding = dict(bound.binding)
            return outputs, report
        counted = CompileCount.of(self.backend)
        self._checked_run(bound, limit, placed=False)   # before the inputs are copied
        env = {n: self.backend.put(arrays[n]) for n in self.inputs}
        outputs, report = self._dispatch(bound, env, limit, profile, start, counted,
                                         placed=False)
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
        special = self._chosen(bound.binding, limit)
        if special is not self:
            outputs, report = special.run_arrays(arrays, limit, None, profile)
            report.binding = dict(bound.binding)
            return outputs, report
        counted = CompileCount.of(self.backend)
        self._checked_run(bound, limit, placed=True)   # before host inputs are copied
        env = {n: self.backend.put(arrays[n]) for n in self.inputs}
        return self._dispatch(bound, env, limit, profile, start, counted)

    def _dispatch(self, bound: _Bound, env: dict[str, Any], limit: int | None,
                  profile: bool, start: float, counted: CompileCount, placed: bool = True
                  ) -> tuple[dict[str, Any], Report]:
        """Prepare (plan, compile, check: cached per binding and limit) and execute.
        ``placed``: the inputs were the caller's device arrays (their memory is held
        already), not host arrays copied to the device here. ``counted``: the backend's
        compile counters before the run was prepared (its compilations are the step's)."""
        prepared = self._checked_run(bound, limit, placed)   # cached: done before the copy
        plan = prepared.plan
        device: DeviceAccount = prepared.device
        report = Report(limit=limit, binding=dict(bound.binding), version=bound.version.func.name,
                        peak_bytes=device.peak, model_peak_bytes=plan.peak,
                        planned_peak_bytes=bound.planned_peak,
                        host_peak_bytes=device.host_peak,
                        peak_counts=PEAK_COUNTS[self.one_memory],
                        timeline=list(plan.measure.memory), evictions=prepared.evictions,
                        reloads=prepared.reloads, recomputes=prepared.recomputes,
                        recomputed_ops=prepared.recomputed_ops, segments=prepared.segments,
                        executables=len({id(s.fn) for s in prepared.segment_steps()}))
        outputs = execute(prepared, env, self.backend, self.inputs, self.outputs, report,
                          profile, self.one_memory)
        if report.peak_bytes != device.peak:
            raise AssertionError(f"the run held {report.peak_bytes} bytes at its peak, "
                                 f"the plan's accounting said {device.peak}")
        compiled = counted.since(self.backend)
        compiled.add_to(report)
        release = getattr(self.backend, "release_after_compiling", None)
        if compiled.compilations and release is not None:
            release()   # what compiling left free, back to the OS (jax_backend.py)
        report.seconds = time.perf_counter() - start
        return outputs, report


    def _checked_run(self, bound: _Bound, limit: int | None, placed: bool) -> PreparedRun:
        """The plan for ``bound`` under ``limit`` (cached), checked against the memory
        there is: a limit that can not be met, or a run the machine can not hold, is
        refused before the inputs are copied to the device, let alone anything run."""
        prepared = self.prepare(bound.binding, limit)
        self._check_memory(bound, limit, prepared, placed)
        return prepared

    def _check_memory(self, bound: _Bound, limit: int | None, prepared: PreparedRun,
                      placed: bool) -> None:
        """Where the device is this machine's memory, refuse a run whose plan holds more
        at once, device bytes and host copies together, than the memory available (beyond
        the inputs where they are the caller's arrays already), rather than let the
        kernel kill the process; where the device has memory of its own that it reports
        (a GPU), refuse a plan whose device peak exceeds it, rather than let XLA's
        allocator fail mid-run. Once per binding and limit that passed: the plan is
        cached."""
        key = (tuple(sorted(bound.binding.items())), limit)
        if key in self._memory_checked:
            return
        if not self.in_machine_memory:
            machine.refuse_beyond_device(self.backend, prepared.device.peak,
                                         format_dims(bound.binding) or "no symbols")
            self._memory_checked.add(key)
            return
        holds = prepared.device.with_host_peak
        passed = sum(bound.sizes[n] for n in self.inputs) if placed else 0
        machine.refuse_beyond_available(
            holds - passed, holds, f"the inputs' {format_size(passed)} in memory already "
            f"({format_dims(bound.binding) or 'no symbols'})")
        self._memory_checked.add(key)


def unoptimized(module: Module) -> Module:
    """The listing with any remat plan removed: the reference a differential test runs."""
    return map_versions(module, strip_remat)

