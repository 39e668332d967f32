"""``bladec.jit``'s hot path: a call at an argument signature already run.

Where the run a signature got is one executable (no limit, or a limit the whole step
fits; no padding), the engine hands back its :class:`~bladec.runtime.dispatch.Dispatch`
and a later call at that signature goes straight to it, skipping the trace lookup, the
binding, the plan and the accounting (issue 32: on the small Llama step at 4x32 that
host work was 0.3-0.5 ms a call, more than the goal of ``jax.jit``'s step plus 0.2 ms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bladec.runtime.backends.backend import numpy_dtype
from bladec.runtime.dispatch import Dispatch
from bladec.runtime.execution import Report


@dataclass
class Hot:
    """A signature's hot path: its run's one executable, the trace (its output tree),
    the closed-over arrays (the executable's inputs after the arguments' leaves).
    Calling it raises :class:`~bladec.runtime.dispatch.Refused` where the executable
    refuses the arguments, before anything ran."""
    dispatch: Dispatch
    traced: Any                    # jitted._Traced
    constants: list[Any]

    def __call__(self, leaves: list[Any]) -> Any:
        outputs = self.dispatch(leaves + self.constants)
        return self.traced.imported.out_tree.unflatten(outputs)


def hot_path(traced: Any, leaves: list[Any], report: Report, limit: int | None
             ) -> Hot | None:
    """The hot path of a call that just ran with ``leaves`` (as arrays) on ``traced``'s
    engine under ``limit`` and gave ``report``; None where its run is more than one
    executable, or a leaf's dtype is not the listing's (the general path converts it
    each call, signature.cast)."""
    imp, engine = traced.imported, traced.engine
    types = engine.executor.info.dtypes
    if any(x.dtype != numpy_dtype(types[n]) for n, x in zip(imp.input_names, leaves)):
        return None
    names = list(imp.input_names) + list(traced.constants)
    dispatch = engine.dispatcher(report, limit, names, list(imp.output_names))
    if dispatch is None:
        return None
    return Hot(dispatch, traced, list(traced.constants.values()))
