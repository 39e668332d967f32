"""The hot path of a run that is one executable: a call at a signature already run.

A run with nothing evicted (no limit, or a limit the whole step fits) is one compiled
segment. Once it has run at some input shapes through the engine (binding, plan, device
accounting, execution: every figure measured there), a later call at the same shapes
has nothing left to decide: the binding, the plan and the executable are the same, and
so are the bytes it holds, which depend on the shapes alone. :class:`Dispatch` is that
call reduced to what it does: the arguments in the executable's order, one call of the
executable (JAX's own C++ dispatch, as ``jax.jit``'s), the donated inputs freed, the
outputs by name. Issue 32 measured the general path's host work at 0.3-0.5 ms a step on
the small Llama step (a Python walk of the inputs per call: binding, checks, placement,
accounting), more than the goal of ``jax.jit``'s step plus 0.2 ms allowed.

What it does not repeat is what the first call at those shapes checked: the memory
available (executor.py, once per binding and limit already), the device peak (the same
executable on the same shapes; the report keeps the one measured). A call whose
arguments the executable refuses (an array on another device or memory, a deleted one)
is handed back to the general path by :class:`Refused`, before anything ran.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Sequence

from bladec.runtime.execution import Report
from bladec.runtime.planning.segments import PreparedRun, SegmentStep


class Refused(Exception):
    """The executable refused the arguments before running (the general path places
    them, or names what is wrong)."""


class Dispatch:
    """One executable run at one signature: ``dispatch(values)`` with the values of
    ``names`` (the order the caller gives them in) returns the engine's outputs as a
    list in the engine's output order and counts the step in the engine's statistics.

    Built by :meth:`of` from a prepared run and the report of a call that ran it;
    None where the run is more than one segment."""

    def __init__(self, call: Callable[..., Sequence[Any]], order: list[int],
                 outputs: list[tuple[bool, int]], free: list[int], backend: Any,
                 report: Report, stats: Any) -> None:
        self._call = call
        self._order = order        # the executable's arguments: positions in the values
        self._outputs = outputs    # each output: (from the results?, position)
        self._free = free          # arguments given up (donated) at their last use
        self._delete, self._put = backend.delete, backend.put
        self.report = report       # the last step's report (seconds updated per call)
        self._stats = stats

    @classmethod
    def of(cls, run: PreparedRun, names: list[str], outputs: list[str], backend: Any,
           report: Report, stats: Any) -> "Dispatch | None":
        """The hot path of ``run`` for values given by ``names``, or None where it has
        more than one step (a cut plan: execution.py measures each segment's arrays)
        or an output that neither the segment nor the inputs give."""
        if len(run.steps) != 1 or not isinstance(run.steps[0], SegmentStep):
            return None
        step = run.steps[0]
        at = {n: i for i, n in enumerate(names)}
        if any(n not in at for n in step.inputs):
            return None
        made = {n: i for i, n in enumerate(step.outputs)}
        where = []
        for n in outputs:
            if n in made:
                where.append((True, made[n]))
            elif n in at:
                where.append((False, at[n]))
            else:
                return None
        compile_ = getattr(step.fn, "compile", None)
        fn, put = step.fn, backend.put
        # a JAX executable places host arguments itself, as jax.jit's does; another
        # backend's segment takes them as its put gives them (as execution.py does)
        call = compile_() if compile_ is not None else \
            (lambda *a: fn([put(x) for x in a]))
        order = [at[n] for n in step.inputs]
        free = [at[n] for n in step.free]
        first = dataclasses.replace(report, compilations=0, cache_loads=0,
                                    compile_seconds=0.0, segment_seconds=[],
                                    segment_memory=list(report.segment_memory))
        return cls(call, order, where, free, backend, first, stats)

    def __call__(self, values: Sequence[Any]) -> list[Any]:
        start = time.perf_counter()
        args = [values[i] for i in self._order]
        try:
            results = self._call(*args)
        except (ValueError, TypeError, RuntimeError) as exc:
            # refused before it ran (JAX checks the arguments' devices, shardings and
            # liveness first); the general path places them or says what is wrong
            raise Refused(str(exc)) from exc
        del args
        for i in self._free:
            self._delete(values[i])
        # (an output that is an input: on the device, as the general path returns it)
        out = [results[i] if made else self._put(values[i]) for made, i in self._outputs]
        seconds = time.perf_counter() - start
        self.report.seconds = seconds
        stats = self._stats
        stats.calls += 1
        stats.seconds += seconds
        stats.last = self.report
        return out
