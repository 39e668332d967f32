"""What the executor runs: segment, eviction and reload steps, and a prepared run of them;
how the bytes the runtime holds change over a step, and which donated argument an
output is written into (JAX's rule), which the device accounting reads too."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Container, Iterable

from bladec.ir import Op
from bladec.ops.loop import with_bodies
from bladec.runtime.backends.backend import Backend, Segment
from bladec.runtime.planning.plan import Plan


@dataclass
class SegmentStep:
    """Run ``fn`` on ``inputs``, bind ``outputs``, then free ``free`` (donated to it).
    ``op_indices``: the compute ops it runs (a recompute counts as the op it precedes);
    ``positions``: the memory positions of the plan's trace it covers."""
    fn: Segment
    inputs: list[str]
    outputs: list[str]
    free: list[str]
    ops: list[Op]
    op_indices: list[int]
    positions: tuple[int, int]


@dataclass
class EvictStep:
    """Take ``value`` off the device; ``copy``: offload it first (no host copy yet)."""
    value: str
    copy: bool


@dataclass
class ReloadStep:
    """Copy ``value`` back; ``drop``: the host copy is not needed again."""
    value: str
    drop: bool


Step = SegmentStep | EvictStep | ReloadStep


@dataclass
class PreparedRun:
    """A plan for one binding and limit, ready to dispatch, with the device accounting
    it was checked with (``device``, a :class:`bladec.runtime.planning.accounting.DeviceAccount`)."""
    plan: Plan
    steps: list[Step] = field(default_factory=list)
    evictions: int = 0
    reloads: int = 0
    recomputes: int = 0
    recomputed_ops: int = 0   # the ops the recomputes run
    uncut: int = 0            # evictions to recompute that cut no segment (split)
    segments: int = 0
    device: object = None
    xla_order: bool = False   # the compiler scheduled the ops (Fitter._in_xla_order)
    measured: object = None   # execution.Measured: the figures its first run counted

    def segment_steps(self) -> list[SegmentStep]:
        return [s for s in self.steps if isinstance(s, SegmentStep)]

    def segment_ops(self) -> list[list[Op]]:
        return [s.ops for s in self.segment_steps()]



def held_after(step: SegmentStep | EvictStep | ReloadStep, sizes: dict[str, int],
               held: int, host: dict[str, int] | None = None) -> int:
    """The bytes the runtime holds after ``step`` given ``held`` before it: a segment's
    outputs less what it frees, an evicted value gone, a reloaded one back. An
    eviction's host copy joins ``host`` where given (a reload's is dropped by the
    caller, after it has counted it)."""
    if isinstance(step, SegmentStep):
        return held + sum(sizes[n] for n in step.outputs) - sum(sizes[n] for n in step.free)
    if isinstance(step, EvictStep):
        if step.copy and host is not None:
            host[step.value] = sizes[step.value]
        return held - sizes.get(step.value, 0)
    return held + sizes.get(step.value, 0)


def donated_into(outputs: Iterable[str], donated: Iterable[str], made: Container[str],
                 aval: Callable[[str], tuple]) -> dict[str, str]:
    """The donated argument whose buffer each output is written into, by JAX's rule:
    each output, in order, takes the first donated argument left of its ``aval``
    (shape and dtype); an output the segment does not make (an argument returned as
    it is) takes none, nor does one with no argument of its aval left."""
    pool: dict[tuple, list[str]] = {}
    for n in donated:
        pool.setdefault(aval(n), []).append(n)
    into: dict[str, str] = {}
    for n in outputs:
        left = pool.get(aval(n)) if n in made else None
        if left:
            into[n] = left.pop(0)
    return into


def segment_fn(ops: list[Op], inputs: list[str], outputs: list[str], free: list[str],
               shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str],
               backend: Backend, xla_order: bool, whole_step: bool = False) -> Segment:
    """The backend's executable of ``ops`` (``free``: the inputs donated to it)."""
    specs = {id(op): [(shapes[r], dtypes[r]) for r in op.result_names]
             for op in with_bodies(ops)}
    args = [(shapes[n], dtypes[n]) for n in inputs]
    donate = tuple(i for i, n in enumerate(inputs) if n in free)
    return backend.segment(list(ops), inputs, outputs, specs, args, donate, xla_order,
                           whole_step=whole_step)
