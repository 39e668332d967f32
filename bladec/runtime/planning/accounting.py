"""The device peak of a prepared run, by the backend's own accounting (DESIGN.md §4).

At every moment of a run the device holds the arrays the runtime keeps (graph inputs,
values made by earlier segments and not yet freed, reloaded copies), and while a
compiled segment runs, also that segment's outputs and its temporaries as its compiled
executable reports them (its arguments are among the held arrays; outputs written into
donated arguments are not counted twice). The peak of that sum is what a memory limit
promises, and it can be worked out before anything runs, from the sizes and each
segment's figures; the executor checks a plan with it and tightens the plan where a
segment is over (:func:`grow_margins`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bladec.runtime.planning.segments import (PreparedRun, ReloadStep, SegmentStep,
                                              donated_into, held_after)


@dataclass(frozen=True)
class SegmentFigure:
    """One segment as it runs: bytes held when it starts (its arguments included), its
    outputs not aliased to donated arguments, its XLA temporaries."""
    held_bytes: int
    output_bytes: int
    temp_bytes: int

    @property
    def total(self) -> int:
        return self.held_bytes + self.output_bytes + self.temp_bytes

    def as_dict(self) -> dict[str, int]:
        return {"held_bytes": self.held_bytes, "output_bytes": self.output_bytes,
                "temp_bytes": self.temp_bytes}


@dataclass
class DeviceAccount:
    peak: int = 0                  # the device peak: the most bytes at any moment
                                   # (with the host copies where they share its memory)
    held_peak: int = 0             # the most bytes held between segments
    host_peak: int = 0             # the most bytes of host copies (offloaded values)
    with_host_peak: int = 0        # the most bytes on the device and the host at once
                                   # (one memory where the device is the CPU)
    segments: list[SegmentFigure] = field(default_factory=list)
    estimated: bool = False        # figures estimated, nothing compiled (a plan rejected)


def compiled_figure(step: SegmentStep, held: int) -> SegmentFigure:
    """The segment's figure from its compiled executable (compiled here if need be)."""
    memory = step.fn.memory()
    return SegmentFigure(held, memory.output_bytes, memory.temp_bytes)


def account(run: PreparedRun, sizes: dict[str, int], inputs: list[str],
            donated: set[str] = frozenset(), over: int | None = None,
            figure_of: Callable[[SegmentStep, int], SegmentFigure] = compiled_figure,
            one_memory: bool = False,
            likely: Callable[[SegmentStep, int], SegmentFigure] | None = None
            ) -> DeviceAccount:
    """The device accounting of ``run`` (compiles its segments to read their figures;
    ``figure_of``: a segment's figure given the bytes held when it starts, by default
    its compiled executable's). ``over``: stop after the first segment whose figure
    exceeds it (the run does not fit, and compiling the rest would be wasted): the
    account then covers the steps up to that segment, and its peak is over ``over``.
    ``one_memory``: the host copies are in the device's memory (a CPU device), and the
    peak a limit promises counts them too (it is then ``with_host_peak``).

    ``likely`` (with ``over``): a cheap guess of a segment's figure (the model's,
    :func:`modelled_figure`), by which the segments are compiled most likely over
    first (:func:`_likely_over`), so that a run refused at its fourth segment does not
    compile the three before it. Where that finds one over, the account stops there,
    and the segments before it not compiled stand as their held bytes alone (their
    figures unknown: nothing a refused run is read for needs them); where it finds none,
    every segment is compiled already and the account is the same as without."""
    if over is not None and likely is not None:
        refused = _likely_over(run, sizes, inputs, over, figure_of, one_memory, likely)
        if refused is not None:
            return refused
    held = sum(sizes[n] for n in inputs)
    acct = DeviceAccount(peak=held, held_peak=held, with_host_peak=held)
    host: dict[str, int] = {}
    for step in run.steps:
        if isinstance(step, SegmentStep):
            figure = figure_of(step, held)
            acct.segments.append(figure)
            total = figure.total + sum(host.values())   # with the host copies
            acct.with_host_peak = max(acct.with_host_peak, total)
            if not one_memory:
                total = figure.total
            acct.peak = max(acct.peak, total)
            if over is not None and total > over:
                break
        held = held_after(step, sizes, held, host)
        if isinstance(step, ReloadStep):
            acct.with_host_peak = max(acct.with_host_peak, held + sum(host.values()))
            acct.peak = acct.with_host_peak if one_memory else max(acct.peak, held)
            if step.drop:
                host.pop(step.value, None)
        acct.held_peak = max(acct.held_peak, held)
        acct.host_peak = max(acct.host_peak, sum(host.values()))
    return acct


def _likely_over(run: PreparedRun, sizes: dict[str, int], inputs: list[str], over: int,
                 figure_of: Callable[[SegmentStep, int], SegmentFigure], one_memory: bool,
                 likely: Callable[[SegmentStep, int], SegmentFigure]
                 ) -> DeviceAccount | None:
    """:func:`account` refusing ``run`` at the first segment found over ``over`` when the
    segments are compiled in the order ``likely`` ranks them, by the guess's total,
    highest first; None where none is over (every segment compiled: :func:`account` then walks
    them in order, for nothing).

    What is held when a segment starts, and the host copies beside it, follow from the
    sizes alone, so they are walked first. A refused plan's figures are read for its
    peak (over the limit) and for the margins the closed loop learns at the segment over
    it (grow_margins); in order, the first segment over may be the last of eight (an
    imported GPT-2's plans at 8x64 were refused after 2.4-10 s of compiling, most of
    it the segments before the one over)."""
    held = sum(sizes[n] for n in inputs)
    host: dict[str, int] = {}
    starts: list[tuple[SegmentStep, int, int]] = []   # (segment, held, host copies)
    for step in run.steps:
        if isinstance(step, SegmentStep):
            starts.append((step, held, sum(host.values())))
        held = held_after(step, sizes, held, host)
        if isinstance(step, ReloadStep):
            if held + (sum(host.values()) if one_memory else 0) > over:
                return None   # over between segments: the walk in order says where
            if step.drop:
                host.pop(step.value, None)
    if len(starts) < 2:
        return None
    guesses = [-likely(step, h).total - c for step, h, c in starts]
    for i in sorted(range(len(starts)), key=guesses.__getitem__):
        step, h, c = starts[i]
        figure = figure_of(step, h)
        total = figure.total + c if one_memory else figure.total
        if total <= over:
            continue
        acct = DeviceAccount(peak=total, held_peak=max(x[1] for x in starts[:i + 1]),
                             with_host_peak=figure.total + c)
        acct.segments = [SegmentFigure(x[1], 0, 0) for x in starts[:i]] + [figure]
        return acct
    return None


def estimated_figure(step: SegmentStep, held: int, memory: list[int],
                     sizes: dict[str, int],
                     avals: Callable[[str], tuple] | None = None) -> SegmentFigure:
    """The segment's figure from its compiled executable where it has one (it costs
    nothing then), else estimated without compiling (:func:`modelled_figure`): a guess
    that only decides what is worth compiling, never what runs."""
    if getattr(step.fn, "compiled", True):
        return compiled_figure(step, held)
    return modelled_figure(step, held, memory, sizes, avals)


def modelled_figure(step: SegmentStep, held: int, memory: list[int],
                    sizes: dict[str, int],
                    avals: Callable[[str], tuple] | None = None) -> SegmentFigure:
    """The segment's figure by the model, as XLA allocates an executable's buffers: the
    model's bytes at each of its steps (``memory``, per position of the plan's trace),
    plus what the device holds there and the model does not. XLA allocates the outputs
    it can not write into a donated argument for the whole of the run (so those not
    made yet are added), and keeps every argument's buffer for the whole of the run,
    where the model frees a donated argument at its last read (so a donated argument
    read for the last time is added back, until the output written into its buffer is
    made). Which output goes into which donated argument is JAX's rule: each output,
    in order, takes the first donated argument of its shape and dtype left (``avals``:
    a value's (shape, dtype); without it no output is taken to be aliased, which counts
    more). Counting every output from the segment's start instead put the segments of
    an imported GPT-2's optimizer update, whose outputs are written into the donated
    parameters, 1.9-4.2 MB over their compiled figures (issue 37)."""
    a, b = step.positions
    made: dict[str, int] = {}
    read: dict[str, int] = {}
    for i, op in enumerate(step.ops):
        for r in op.result_names:
            made.setdefault(r, i)
        for n in op.operands:
            read[n] = i
    into = {} if avals is None else donated_into(step.outputs, step.free, made, avals)
    # (from, until, bytes): held by the device and not by the model at positions
    # from < i < until
    extra: list[tuple[int, int, int]] = []
    for n in step.outputs:
        j = made.get(n, -1)
        if n in into:
            extra.append((read.get(into[n], -1), j, sizes[into[n]]))
        elif j >= 0:
            extra.append((-2, j, sizes[n]))
    most = max((memory[a + i] + sum(size for lo, hi, size in extra if lo < i < hi)
                for i in range(min(b - a, len(step.ops)))), default=held)
    return SegmentFigure(held, 0, max(most - held, 0))


def grow_margins(run: PreparedRun, acct: DeviceAccount, memory: list[int], limit: int,
                 margins: dict[int, int]) -> bool:
    """Raise the margin of every compute op of every segment over ``limit`` to what the
    device needed there beyond the model (``memory``: the model's bytes per position of
    the plan's trace). True if some margin grew (it always does for a segment over the
    limit whose model stayed within its budget)."""
    grew = False
    for step, figure in zip(run.segment_steps(), acct.segments):
        if figure.total <= limit:
            continue
        a, b = step.positions
        model = max(memory[a:b], default=0)
        need = figure.total - model
        for k in step.op_indices or [-1]:
            if need > margins.get(k, 0):
                margins[k] = need
                grew = True
    return grew
