"""The coarse-grain ablation: a cell run as its ops, one batched call per op.

A dynamic batcher that batches ops, not cells, launches one kernel per op of the cell
per depth (an LSTM cell is about twenty). Here the vmapped cell's jaxpr (for the
bucket's size) is evaluated equation by equation, each equation its own ``jax.jit``
call on the batch: the same arithmetic as the coarse kernel, the launches of a fine
grain. These per-op kernels are plain ``jax.jit`` calls, not bladec listings: a listing
of one op has nothing for bladec's passes to optimize.
"""
from __future__ import annotations

from typing import Any, Callable


class OpByOp:
    """``fn(*arrays)`` evaluated one jaxpr equation at a time."""

    def __init__(self, fn: Callable, name: str) -> None:
        self.fn, self.name = fn, name
        self._programs: dict[tuple, tuple] = {}
        self.compilations = 0
        self.compile_seconds = 0.0
        self.calls = 0

    def _program(self, args: tuple) -> tuple:
        import jax
        key = tuple((tuple(a.shape), str(a.dtype)) for a in args)
        program = self._programs.get(key)
        if program is None:
            closed = jax.make_jaxpr(self.fn)(*args)
            steps = []
            for eqn in closed.jaxpr.eqns:
                def bind(*xs: Any, _e: Any = eqn) -> Any:
                    return _e.primitive.bind(*xs, **_e.params)
                steps.append((eqn, jax.jit(bind)))
            program = self._programs[key] = (closed, steps)
            self.compilations += len(steps)
        return program

    def __call__(self, *args: Any) -> list[Any]:
        from jax.extend.core import Literal
        self.calls += 1
        closed, steps = self._program(args)
        env: dict[Any, Any] = {}
        jaxpr = closed.jaxpr
        for var, x in zip(jaxpr.constvars, closed.consts):
            env[var] = x
        for var, x in zip(jaxpr.invars, args):
            env[var] = x

        def read(v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v]
        for eqn, call in steps:
            out = call(*[read(v) for v in eqn.invars])
            if eqn.primitive.multiple_results:
                for v, x in zip(eqn.outvars, out):
                    env[v] = x
            else:
                env[eqn.outvars[0]] = out
        return [read(v) for v in jaxpr.outvars]
