"""One batched kernel: a JAX function imported once as a bladec listing with symbolic
dims, optimized once by the pipeline, compiled once per bucket of those dims.

The per-(cell, depth) calls of a batch are many (tens to hundreds) and small, so the
cost of a call matters as much as the kernel's: the engine's general path (binding,
plan lookup, device accounting per call) costs milliseconds, more than a cell at batch
8. For a bucket whose plan is one segment with nothing evicted (every plan without a
memory limit here) the engine's own compiled executable is called directly, its
arguments in the segment's order; a plan with several segments (a memory limit that
bites) goes through ``Engine.call``. Either way what runs is the listing bladec
optimized and compiled, and the compilations are the engine's (counted by its backend).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from bladec.batching.schedule import bucket
from bladec.errors import BladecError


# Padded lanes a call may run beyond its own bucket in a larger compiled executable:
# at most a quarter of its lanes, or this many. Lanes cost real arithmetic from a few
# dozen on: in the TreeLSTM batch of 64 at hidden 256 (one thread, 2026-11-28) a node
# call's product runs at 66-95 GFLOP/s from 64 lanes up, so lanes, not launches, set
# its time; the earlier rule (up to twice the lanes below 512) ran 1.2-1.5x the lanes
# the batch's calls asked for (3344 -> 4224 in one batch), the padding of the ladder
# aside. Only the smallest calls (below 64: 0.3-0.5 ms for 16 lanes, most of it the
# launch) take a fixed slack of a ladder step.
SLACK = 16


@dataclass
class _Lean:
    """A bucket's single-segment executable and how the flat arguments feed it."""
    executable: Any
    take: list[int]               # flat argument index per segment input
    give: list[int]               # segment output index per flat output


class Kernel:
    """``fn(*arrays)`` whose dims named by strings in ``specs`` are symbolic.

    ``specs``: one ``(shape, dtype)`` per positional argument, where a dim is an int or
    the name of a symbol (one name, one symbol). ``index``: the last argument is an
    index array (its rows past the call's lanes are ``padding``, zeros by default), so
    a call may be padded to a larger compiled bucket. ``donate``: argument positions given up (state
    buffers updated in place). ``engine_kwargs``: passed to the engine (passes)."""

    def __init__(self, fn: Callable, specs: Sequence[Any], *, name: str,
                 donate: Sequence[int] = (), passes: Any = None,
                 ranges: dict[str, tuple[int, int | None]] | None = None,
                 limit: int | None = None, index: bool = False,
                 padding: np.ndarray | None = None) -> None:
        import jax
        from jax import export


        from bladec.frontend.jax_import import trace
        from bladec.runtime.engine import Engine
        self.name = name
        self.padding = padding      # the index row of a padded lane (schedule.py)
        start = time.perf_counter()
        scope = export.SymbolicScope()
        leaves = list(specs)
        self.symbols: list[str] = []
        args = []
        for shape, dtype in leaves:
            dims = [str(d) for d in shape]
            for d in shape:
                if isinstance(d, str) and d not in self.symbols:
                    self.symbols.append(d)
            sym = export.symbolic_shape(", ".join(dims), scope=scope) if dims else ()
            args.append(jax.ShapeDtypeStruct(sym, dtype))
        names = [f"a{i}" for i in range(len(specs))]
        try:
            self.imported = trace(fn, args, arg_names=names, donate_argnums=tuple(donate),
                                  ranges={s: v for s, v in (ranges or {}).items()
                                          if s in self.symbols})
        except BladecError:
            raise
        except Exception as exc:   # the importer's own errors carry a location already
            raise BladecError(f"cannot import the batched kernel of {name}: "
                              f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from None
        self.engine = Engine(self.imported.module, passes=passes, backend="jax")
        self.limit = limit
        self.shape_of = [(i, j, d) for i, (shape, _) in enumerate(leaves)
                         for j, d in enumerate(shape) if isinstance(d, str)]
        self.to_bladec = self.imported.symbols
        self.import_seconds = time.perf_counter() - start
        self._lean: dict[tuple, _Lean | None] = {}
        self.calls = 0
        # the batch dim "n" read only from the last argument's first dim (an index array)
        uses = [(i, j) for i, j, d in self.shape_of if d == "n"]
        self._index_only = index and uses == [(len(leaves) - 1, 0)]
        self._n_at = next((k for k, (_, _, d) in enumerate(self.shape_of) if d == "n"), -1)

    @property
    def listing(self) -> str:
        """The optimized listing that runs, as text."""
        from bladec.printer import format_module
        return format_module(self.engine.module)

    @property
    def compilations(self) -> int:
        return self.engine.executor.backend.compilations

    @property
    def compile_seconds(self) -> float:
        return self.engine.executor.backend.compile_seconds

    def __call__(self, *flat: Any) -> list[Any]:
        """Run on the arguments (one array per spec); the outputs, flattened.

        A bucket of the batch dim ``n`` with no executable yet is served by a larger
        compiled one where that costs little padding: a quarter more lanes, or 16 more
        below 64 (:data:`SLACK`; one step of schedule.py's ladder). That holds only
        where ``n`` is only the index array's (the last argument, a host array whose
        padding rows are given). Sizes that a batch
        meets for the first time are then compiled only where no near bucket exists,
        which after a few batches is rare (the ladder of schedule.py is fixed). A size
        from 64 on beyond every compiled one is compiled one step of the ladder larger
        (at most a quarter), so that the
        slowly rising largest size of a kernel (the maximum over more and more batches)
        does not compile at every new step of the ladder."""
        self.calls += 1
        lean, flat = self._resolve(flat)
        if lean is None:
            return self._general(flat)
        out = lean.executable(*[flat[i] for i in lean.take])
        return [out[i] for i in lean.give]

    def warm(self, flat: Sequence[Any]) -> None:
        """Compile what a call on arrays of these shapes would run, running nothing
        (``flat``: arrays or anything with ``shape`` and ``dtype``)."""
        self._resolve(flat)

    def ready(self, flat: Sequence[Any]) -> bool:
        """Whether a call on arrays of these shapes runs without compiling."""
        return self._resolve(flat, compile=False)[0] is not False

    def _resolve(self, flat: Sequence[Any], compile: bool = True
                 ) -> tuple[Any, Sequence[Any]]:
        """The executable for ``flat`` (compiled here if need be, else False where
        there is none; None: the engine's general path) and the arguments it takes
        (the index padded to its lanes)."""
        key = tuple(flat[i].shape[j] for i, j, _ in self.shape_of)
        lean = self._lean.get(key, False)
        if lean is False and self._index_only:
            larger = self._larger(key)
            if larger is not None:
                lean = self._lean[larger]
            elif key[self._n_at] >= 64 and self._is_top(key):
                n = key[self._n_at]          # a new largest size: compile with headroom
                larger = (*key[:self._n_at], bucket(n + 1), *key[self._n_at + 1:])
                lean = self._lean.get(larger, False)
            if larger is not None:
                index = flat[-1]
                pad = np.zeros(index.shape[1], index.dtype) if self.padding is None \
                    else self.padding
                flat = (*flat[:-1], np.concatenate(
                    [index, np.broadcast_to(pad, (larger[self._n_at] - len(index),
                                                  *index.shape[1:]))]))
                key = larger
        if lean is False and compile:
            lean = self._lean[key] = self._prepare(flat)
        return lean, flat

    def _larger(self, key: tuple) -> tuple | None:
        """The smallest compiled key that differs from ``key`` only in ``n``, and there
        by little (see :meth:`__call__`)."""
        at, n = self._n_at, key[self._n_at]
        most = n + max(n // 4, SLACK)
        best = None
        for other, lean in self._lean.items():
            if lean is None or not n < other[at] <= most:
                continue
            if other[:at] + other[at + 1:] == key[:at] + key[at + 1:] and \
                    (best is None or other[at] < best[at]):
                best = other
        return best

    def _is_top(self, key: tuple) -> bool:
        at = self._n_at
        rest = key[:at] + key[at + 1:]
        return all(other[at] < key[at] for other, lean in self._lean.items()
                   if lean is not None and other[:at] + other[at + 1:] == rest)

    def _binding(self, flat: Sequence[Any]) -> dict[str, int]:
        return {self.to_bladec[d]: flat[i].shape[j] for i, j, d in self.shape_of
                if d in self.to_bladec}

    def _prepare(self, flat: Sequence[Any]) -> _Lean | None:
        from bladec.runtime.planning.segments import SegmentStep
        prepared = self.engine.executor.prepare(self._binding(flat), self.limit)
        steps = prepared.steps
        if len(steps) != 1 or not isinstance(steps[0], SegmentStep):
            return None
        step = steps[0]
        names = self.imported.input_names
        index = {n: i for i, n in enumerate(names)}
        if any(n not in index for n in step.inputs) or \
                sorted(step.outputs) != sorted(self.imported.output_names):
            return None
        position = {n: i for i, n in enumerate(step.outputs)}
        return _Lean(step.fn.compile(), [index[n] for n in step.inputs],
                     [position[n] for n in self.imported.output_names])

    def _general(self, flat: Sequence[Any]) -> list[Any]:
        arrays = dict(zip(self.imported.input_names, flat))
        outputs, _ = self.engine.call(arrays, self.limit)
        return [outputs[n] for n in self.imported.output_names]


class OpByOp:
    """The coarse-grain ablation: ``fn(*arrays)`` (a cell) run as its ops, one batched
    call per op. A dynamic batcher that batches ops, not cells, launches one kernel per
    op of the cell per depth (an LSTM cell is about twenty). Here the vmapped cell's
    jaxpr (for the bucket's size) is evaluated equation by equation, each equation its
    own ``jax.jit`` call on the batch: the same arithmetic as the coarse kernel, the
    launches of a fine grain. These per-op kernels are plain ``jax.jit`` calls, not
    bladec listings: a listing of one op has nothing for bladec's passes to optimize."""

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
