"""``bladec.autobatch``: a per-instance model run batched across a mini-batch.

``model(params, instance)`` is plain Python over one instance's structure that calls
cells (value.py) and returns a pytree (its leaves lazy values or constants). A call
``batched(params, instances)`` traces every instance (recording cell invocations and
their depths, running nothing), schedules the batch (schedule.py: a sort by depth),
and runs one batched call per (cell signature, depth) whose kernel was imported once as
a bladec listing with a symbolic batch dim and compiled per bucket (kernel.py,
program.py). It returns the instances' outputs stacked along a new leading axis.
``value_and_grad`` runs the same schedule backward; ``train_step`` adds an SGD update.
"""
from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from bladec.batching.backward import BackwardPass
from bladec.batching.build import make_kernel
from bladec.batching.compose import compose as composed
from bladec.batching.weights.derived import DerivedValues
from bladec.batching.kernel import Kernel
from bladec.batching.options import Options
from bladec.batching.program import Layout, flat_cell, flipped
from bladec.batching.report import AutobatchReport
from bladec.batching.schedule import (RUN_LENGTHS, Schedule, describe, grown, runs,
                                       schedule, sibling_key, stacked)
from bladec.batching.value import Group, Lazy, Recording, tracing
from bladec.batching.weights.tables import TabulatedCalls
from bladec.errors import BladecError


def autobatch(model: Callable | None = None, *, options: Options | None = None,
              passes: Any = None, mem_limit: int | None = None, **switches: bool) -> Any:
    """Wrap ``model(params, instance)`` to run over a list of instances, batched.

    ``passes``: bladec's pipeline for each kernel's listing (default: the engine's).
    ``mem_limit``: a limit each kernel call runs under (bytes). ``switches`` set the
    :class:`Options` by name (``coarse=False``). Usable as a decorator."""
    opts = options or Options()
    for name, value in switches.items():
        if name not in Options.__dataclass_fields__:   # (not ``fused``, derived)
            raise BladecError(f"autobatch: unknown option '{name}' (options: "
                              f"{', '.join(Options.__dataclass_fields__)})")
        setattr(opts, name, bool(value))

    def wrap(f: Callable) -> "Autobatched":
        return Autobatched(f, opts, passes=passes, mem_limit=mem_limit)
    return wrap if model is None else wrap(model)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one batch. A batch's trace makes tens of
    thousands of objects that live until the batch ends, and reference counting frees
    them then (the recording holds no cycle once traced: ``Recording.finish``). With the
    collector on, its young-generation passes promote them while they live, and the
    promoted count sets off a full collection over every object of the process (JAX's
    included) every few batches: 80-150 ms each at a TreeLSTM batch of 64. Cyclic
    garbage made meanwhile is collected after the batch. The pause is process-wide, as
    the collector is: other threads' garbage waits for the batch's end too."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@dataclass
class _Traced:
    recording: Recording
    schedule: Schedule
    outputs: list[Any]           # per instance: flat output leaves
    out_tree: Any
    shared: list[Any] = field(default_factory=list)   # device parameter leaves, then
                                                      # tables (model._tabulated)
    params_tree: Any = None
    # per tabulated group: its tabulation, its parameters, its tables' first place
    tabulated: list[tuple[Any, tuple[int, ...], int]] = field(default_factory=list)


class Autobatched(BackwardPass, TabulatedCalls):
    """What :func:`autobatch` returns. ``.report()`` describes the last batch."""

    def __init__(self, model: Callable, options: Options, passes: Any = None,
                 mem_limit: int | None = None) -> None:
        if not callable(model):
            raise BladecError(f"bladec.autobatch needs a function, not "
                              f"{type(model).__name__}")
        self.model, self.options, self.passes, self.mem_limit = model, options, passes, \
            mem_limit
        self.__name__ = getattr(model, "__name__", "model")
        self._kernels: dict[tuple, Any] = {}
        self._report = AutobatchReport()
        self._helpers: dict[str, Any] = {}
        self._floor: dict[Any, int] = {}     # buffer sizes so far (schedule.py)
        self._kept: dict[Any, list[Any]] = {}  # per group identity: residual buffers
        self._cotangents: dict[Any, list[Any]] = {}  # and its products' cotangents
        self._state: dict[Any, Any] = {}       # state buffers kept for the next batch
        self._derived = DerivedValues()        # weights transposed or stacked, tables
                                               # (batching/weights/)
        self._compiled_before = 0              # compilations when the batch's calls began
        self._tab_at: dict[tuple, int] = {}    # tabulated groups' places in ``shared``
        self._tab_next: dict[int, int] = {}    # per parameter count: the next free one

    # -- the API ----------------------------------------------------------------------
    def __call__(self, params: Any, instances: Sequence[Any]) -> Any:
        """The instances' outputs, stacked on a new leading axis (device arrays)."""
        with _collector_paused():
            return self._call(params, instances)

    def _call(self, params: Any, instances: Sequence[Any]) -> Any:
        start = time.perf_counter()
        compiled = self._compilations()
        o = self.options
        traced = self._trace(params, instances,
                             compose=o.compose and o.tabulate and o.fused)
        state = self._forward(traced)
        out = self._outputs(traced, state)
        self._keep_state(state)
        self._finish(out, start, compiled)
        return out

    def value_and_grad(self, params: Any, instances: Sequence[Any]) -> tuple[Any, Any]:
        """The sum over instances of the model's scalar output, and its gradient with
        respect to ``params`` (a pytree like ``params``)."""
        with _collector_paused():
            return self._value_and_grad(params, instances)

    def _value_and_grad(self, params: Any, instances: Sequence[Any]) -> tuple[Any, Any]:
        import jax
        start = time.perf_counter()
        compiled = self._compilations()
        traced = self._trace(params, instances)
        if traced.out_tree.num_leaves != 1 or not all(
                isinstance(o[0], Lazy) and o[0].shape == () for o in traced.outputs):
            raise BladecError(f"{self.__name__}: value_and_grad needs the model to return "
                              f"one scalar computed by a cell (its loss) per instance")
        state = self._forward(traced, keep=self._keeps())
        loss = self._outputs(traced, state)
        grads = self._pulled_back(traced, self._backward(traced, state))
        self._keep_state(state)
        total = self._helper("sum", lambda x: x.sum())(loss)
        self._finish((total, grads), start, compiled)
        return total, jax.tree_util.tree_unflatten(traced.params_tree, grads)

    def train_step(self, params: Any, instances: Sequence[Any], lr: float
                   ) -> tuple[Any, Any]:
        """One SGD step on the summed loss: ``(loss, new_params)``."""
        import jax
        loss, grads = self.value_and_grad(params, instances)
        update = self._helper("sgd", lambda p, g, r: jax.tree_util.tree_map(
            lambda a, b: a - r * b, p, g))
        return loss, update(params, grads, np.float32(lr))

    def report(self) -> AutobatchReport:
        return self._report

    def kernels(self) -> dict[str, Kernel]:
        """The imported kernels by name (``.listing`` is the optimized listing), in the
        order they were made. Kernels of one cell and kind with different signatures
        (a BiLSTM's first step reads its state as data, the others as lazy values) are
        ``name``, ``name#2``, ...: one name each, none hidden."""
        out: dict[str, Kernel] = {}
        for k in self._kernels.values():
            if isinstance(k, Kernel):
                name, n = k.name, 1
                while name in out:
                    n += 1
                    name = f"{k.name}#{n}"
                out[name] = k
        return out

    # -- tracing and scheduling -------------------------------------------------------
    def _trace(self, params: Any, instances: Sequence[Any], compose: bool = False
               ) -> _Traced:
        """The instances traced and scheduled. ``compose``: invocations whose lazy
        operands are all outputs of tabulated cells that read one integer recorded as
        invocations of the composed cells (compose.py; in inference, where every
        tabulated cell is tabulated)."""
        import jax
        t0, c0 = time.perf_counter(), time.thread_time()
        leaves, params_tree = jax.tree_util.tree_flatten(params)
        recording = Recording({id(x): i for i, x in enumerate(leaves)}, params,
                              dedupe=self.options.dedupe,
                              specialize=self.options.specialize)
        device = [x if isinstance(x, jax.Array) else jax.numpy.asarray(x) for x in leaves]
        outputs, out_tree = [], None
        if len(instances) == 0:
            raise BladecError(f"{self.__name__}: no instances to run")
        with tracing(recording, device):
            for instance in instances:
                recording.starts.append(recording.invocations)
                out = self.model(params, instance)
                flat, tree = jax.tree_util.tree_flatten(out)
                if out_tree is None:
                    out_tree = tree
                elif tree != out_tree:
                    raise BladecError(f"{self.__name__}: instances return different output "
                                      f"structures ({out_tree} and {tree})")
                outputs.append(flat)
            recording.finish()
            if compose:
                composed(recording, lambda g: self._tab_plan(g) is not None, outputs)
        t1 = time.perf_counter()
        o = self.options
        sched = schedule(recording, static_depth=o.static_depth, batched=o.batched,
                         sinks_last=o.sinks_last, align=o.align_ends, floor=self._floor)
        r = self._report
        r.trace_seconds, r.schedule_seconds = t1 - t0, time.perf_counter() - t1
        r.host_cpu_seconds = time.thread_time() - c0
        r.instances, r.invocations = len(instances), recording.invocations
        counts = describe(sched)
        r.calls, r.depths, r.padding = counts["calls"], counts["depths"], counts["padding"]
        r.dispatch_seconds = 0.0
        return _Traced(recording, sched, outputs, out_tree, device, params_tree)

    # -- running ----------------------------------------------------------------------
    def _keeps(self) -> bool:
        return self.options.residuals and self.options.fused

    def _residual_specs(self, group: Group) -> list[tuple[tuple, str]]:
        """The rows of the products the group's training forward keeps (residual.py)."""
        key = ("residual", group.identity)
        found = self._kernels.get(key)
        if found is None:
            from bladec.batching.residual import specs
            found = self._kernels[key] = specs(flat_cell(group), self._avals(group))
        return found

    @staticmethod
    def _avals(group: Group) -> list[Any]:
        """The batched cell's input leaves, the batched ones at the probe's size."""
        from bladec.batching.residual import PROBE
        return group.avals(PROBE)

    def _flips(self, group: Group) -> tuple[bool, ...]:
        """Per shared leaf: passed to the forward kernels transposed (program.flipped);
        none where the weights are gathered per invocation (the ablation)."""
        key = ("flips", group.identity)
        found = self._kernels.get(key)
        if found is None:
            found = self._kernels[key] = flipped(group, self._avals(group)) \
                if self.options.shared_weights else (False,) * len(group.shared)
        return found

    def _residuals(self, group: Group) -> list[Any]:
        """The group's residual buffers, at least one row per invocation of this batch
        plus the spare row 0 (kept across batches: every row read is written first)."""
        import jax.numpy as jnp
        kept = self._kept.get(group.identity)
        have = 0 if kept is None else kept[0].shape[0]
        rows = grown(group.count + 1, have)
        if rows > have:
            kept = self._kept[group.identity] = [
                jnp.zeros((rows, *shape), dtype)
                for shape, dtype in self._residual_specs(group)]
        return kept

    def _forward(self, traced: _Traced, keep: bool = False) -> dict:
        import jax
        import jax.numpy as jnp
        t = time.perf_counter()
        sched, shared = traced.schedule, traced.shared
        self._compiled_before = self._compilations()   # _stepped: does this batch compile
        state = {}
        for key, rows in sched.rows.items():
            # kept from the last batch where it has the rows (value.py: every row a batch
            # reads is written in it first; row 0, which padded lanes read, never is)
            buffer = self._state.pop(key, None)
            state[key] = buffer if buffer is not None and buffer.shape[0] == rows else \
                jnp.zeros((rows, *key[0]), key[1])
        tables = {key: jax.device_put(t) for key, t in sched.tables.items()}
        o = self.options
        flip = self._flip()
        calls = sched.calls
        fused = not keep and o.fused
        if o.tabulate and (fused or (keep and self._keeps())):
            calls, shared = self._tabulated(traced, calls, sched.tables, keep)
        if fused and o.stack_siblings:
            calls = stacked(calls)
        if fused and o.depth_runs:
            calls = runs(calls)
        self._report.calls = len(calls)
        for call in calls:
            group, layout = call.group, self._layout(call.group)
            if call.siblings:
                new = self._stepped("stack", group, shared, len(call.siblings), call.steps, [
                    *self._stacked_weights(call.siblings, shared),
                    *[state[k] for k in layout.written], *[state[k] for k in layout.read],
                    *[tables[k] for k in layout.tables], call.index])
                for key, value in zip(layout.written, new):
                    state[key] = value
                continue
            weights = [shared[i] for i in group.shared]
            written = [state[k] for k in layout.written]
            read = [state[k] for k in layout.read]
            tabs = [tables[k] for k in layout.tables]
            kept_too = keep and bool(self._residual_specs(group))
            if kept_too or (o.coarse and o.fused_gathers):
                # the kernels that take weights flipped
                for j, (i, f) in enumerate(zip(group.shared, self._flips(group))):
                    if f:
                        weights[j] = self._derived.get(
                            ("flip", i), (shared[i],), lambda i=i: flip(shared[i]))
            if kept_too:
                kept = self._residuals(group)
                new = self._kernel("keep", group, shared)(*weights, *written, *read, *tabs,
                                                          *kept, call.index)
                kept[:] = new[len(written):]
            elif o.coarse and o.fused_gathers:   # a run of steps: schedule.runs
                new = self._stepped("fwd", group, shared, 0, call.steps,
                                    [*weights, *written, *read, *tabs, call.index])
            else:
                operands = self._kernel("gather", group, shared)(
                    *[state[k] for k in dict.fromkeys(group.operand_keys)], *tabs, call.index)
                if o.coarse:
                    outs = self._kernel("cell", group, shared)(*weights, *operands)
                else:
                    outs = self._kernel("ops", group, shared)(*weights, *operands)
                new = self._kernel("scatter", group, shared)(*written, *outs, call.index)
            for key, value in zip(layout.written, new):
                state[key] = value
        self._report.dispatch_seconds += time.perf_counter() - t
        state["__tables__"] = tables
        return state

    def _stepped(self, single: str, group: Group, shared: list[Any], k: int, steps: int,
                 args: list[Any]) -> list[Any]:
        """A forward call (``single``: "fwd", or "stack" for stacked siblings) of one step
        or a run of steps (schedule.runs: kernel :func:`_run_kind`). Where it compiled
        (a new bucket of lanes, or buffers that grew), the same group's kernels of the
        other step counts already in use compile for the same sizes now: else each
        compiles in the first later batch that has a run of its length, and a batch of
        8 BiLSTM instances compiled in 3 of 15 batches after warm-up instead of 1. A
        run whose executable is not compiled, in a batch that has compiled nothing so
        far, runs its steps one by one instead: runs at a bucket met for the first time
        made TreeLSTM and BiLSTM batches of 64 compile in 1 of 15 batches after warm-up
        (0 of 15 without runs); such a run compiles in a batch that compiles anyway."""
        import jax
        kind = _run_kind(single, steps)
        if steps > 1 and self._compilations() == self._compiled_before and (
                self._key(kind, group, k, steps) not in self._kernels or
                not self._kernel(kind, group, shared, k, steps).ready(args)):
            # a run never makes a batch compile: its steps one by one this time
            one = self._kernel(single, group, shared, k)
            args, at = list(args), len(group.shared)
            for j in range(steps):
                out = one(*args[:-1], args[-1][:, j])
                args[at:at + len(out)] = out
            return out
        kernel = self._kernel(kind, group, shared, k, steps)
        before = kernel.compilations
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args[:-1]]
        out = kernel(*args)
        if kernel.compilations == before:
            return out
        index = args[-1].shape
        lane = index if steps == 1 else (index[0], *index[2:])   # one step's index
        for other in (1, *RUN_LENGTHS):
            key = self._key(_run_kind(single, other), group, k, other)
            if other != steps and key in self._kernels:
                shape = lane if other == 1 else (lane[0], other, *lane[1:])
                self._kernels[key].warm([*shapes, np.zeros(shape, np.int32)])
        return out

    def _stacked_weights(self, siblings: tuple[Group, ...], shared: list[Any]
                         ) -> list[Any]:
        """Per shared leaf of the siblings: their leaves stacked ``[k, ...]``
        (transposed where the forward takes them so: program.flipped), made again only
        where the parameters changed (weights/derived.py)."""
        import jax.numpy as jnp
        stack = self._helper("stack", lambda *ws: jnp.stack(ws))
        flips = self._flips(siblings[0])
        out = []
        for j, f in enumerate(flips):
            leaves = tuple(g.shared[j] for g in siblings)
            sources = tuple(shared[i] for i in leaves)

            def make(sources: tuple = sources, f: bool = f) -> Any:
                stacked = stack(*sources)
                return self._flip()(stacked) if f else stacked
            out.append(self._derived.get(("stack", f, leaves), sources, make))
        return out

    def _keep_state(self, state: dict) -> None:
        """The state buffers, for the next batch to write in place."""
        self._state = {k: v for k, v in state.items() if k != "__tables__"}

    def _outputs(self, traced: _Traced, state: dict) -> Any:
        """Per output leaf: the instances' values stacked (one gather per leaf)."""
        import jax
        import jax.numpy as jnp
        leaves = []
        for j in range(traced.out_tree.num_leaves):
            column = [o[j] for o in traced.outputs]
            if all(isinstance(x, Lazy) for x in column):
                keys = {x.key for x in column}
                if len(keys) != 1:
                    raise BladecError(f"{self.__name__}: output {j} has different shapes "
                                      f"across instances")
                rows = np.asarray([x.row for x in column], np.int32)
                leaves.append(self._helper("take", lambda b, r: b[r])(
                    state[column[0].key], rows))
            elif any(isinstance(x, Lazy) for x in column):
                raise BladecError(f"{self.__name__}: output {j} is a cell's result for "
                                  f"some instances and a constant for others")
            else:
                leaves.append(jnp.stack([jnp.asarray(x) for x in column]))
        return jax.tree_util.tree_unflatten(traced.out_tree, leaves)

    def _finish(self, out: Any, start: float, compiled: int) -> None:
        import jax
        jax.block_until_ready(out)
        r = self._report
        r.seconds = time.perf_counter() - start
        r.batches += 1
        r.total_compilations = self._compilations()
        r.compilations = r.total_compilations - compiled
        r.total_compile_seconds = sum(k.compile_seconds for k in self._kernels.values()
                                      if isinstance(k, Kernel))
        r.kernels = sum(isinstance(k, Kernel) for k in self._kernels.values())

    # -- kernels ----------------------------------------------------------------------
    def _compilations(self) -> int:
        return sum(getattr(k, "compilations", 0) for k in self._kernels.values())

    def _layout(self, group: Group) -> Layout:
        key = ("layout", group.identity)
        layout = self._kernels.get(key)
        if layout is None:
            layout = self._kernels[key] = Layout.of(group)
        return layout

    def _flip(self) -> Any:
        """Weights transposed as the forward kernels take them (program.flipped): the
        last two axes, so that siblings' stacked weights turn too."""
        return self._helper("flip", lambda w: w.swapaxes(-1, -2))

    def _helper(self, name: str, fn: Callable) -> Any:
        import jax
        if name not in self._helpers:
            self._helpers[name] = jax.jit(fn)
        return self._helpers[name]

    def _kernel(self, kind: str, group: Group, shared: list[Any], k: int = 0,
                steps: int = 1) -> Any:
        key = self._key(kind, group, k, steps)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = make_kernel(self, kind, group, k, steps)
        return kernel

    def _key(self, kind: str, group: Group, k: int = 0, steps: int = 1) -> tuple:
        """A kernel's key: its program, which does not depend on *which* parameters
        the group reads (they are arguments), so groups that differ only in that share
        their kernels and executables (schedule.sibling_key: an early-exit model's
        layers, a BiLSTM's directions in training)."""
        return (kind, sibling_key(group), self.options.shared_weights, k, steps)


def _run_kind(single: str, steps: int) -> str:
    """The kernel kind of a forward call of ``steps`` steps (build.py): ``single``
    ("fwd" or "stack") for one, "run" or "stack-run" for a run (schedule.runs)."""
    return single if steps == 1 else "run" if single == "fwd" else "stack-run"
