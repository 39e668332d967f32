"""The whole step with nothing evicted, in bladec's order and in XLA's: what runs at no
limit, what a limit is first tried with, and the checked run every plan becomes.

A plan is cut into segments and compiled (segments.py, the backend), and its device peak
read from the compiled segments' figures (accounting.py): :meth:`WholeStep._checked`.
The plan with nothing evicted is one segment, and can be compiled two ways on a backend
that holds bladec's order inside the executable (JaxBackend.enforce_order, on CPU): in
that order, where the schedule reaches the device, or with XLA ordering it as
``jax.jit`` would. Which holds less depends on the step and its size, and only the
compiled figures tell (:meth:`WholeStep._no_limit`), so at no limit the orders are
compared where no comparison near in size says already, and under a limit XLA's order
is the last resort of fitting.py where no plan in bladec's fits.
"""
from __future__ import annotations

import math
import os
from functools import partial

from bladec.errors import BladecError
from bladec.ir import Module
from bladec.runtime.backends.backend import Backend
from bladec.runtime.planning.accounting import account, modelled_figure
from bladec.runtime.planning.binding import _Bound
from bladec.runtime.planning.planner import Planner
from bladec.runtime.planning.policy import CostModel, Plan
from bladec.runtime.planning.segments import PreparedRun, split

NO_LIMIT_ORDERS = ("auto", "every", "bladec", "xla")   # BLADEC_NO_LIMIT_ORDER (_no_limit)
ORDER_REACH = 2.0   # how far in model peak one binding's order choice carries (_no_limit)


def _same_signature(a: Module, b: Module) -> bool:
    """Whether two listings take and give the same values (names and types)."""
    fa, fb = a.main, b.main
    return ([(x.name, x.type) for x in fa.args] == [(x.name, x.type) for x in fb.args]
            and list(fa.outputs()) == list(fb.outputs()))


class WholeStep(Planner):
    """A :class:`Planner` whose plans are checked against the device, and whose whole
    step runs in the order that holds less (see the module)."""

    def __init__(self, module: Module, backend: Backend, cost: CostModel | None = None,
                 consolidate: bool = True, reference: Module | None = None) -> None:
        super().__init__(module, backend, cost, consolidate)
        self._whole_ratios: list[float] = []   # device / model peak of compiled whole steps
        # the listing as written (before the passes), for the whole step in XLA's order:
        # XLA's scheduler starts from the order it is given, as jax.jit's would
        self._reference = reference if reference is not None and \
            _same_signature(reference, module) else None
        self._reference_fitter: WholeStep | None = None
        self._figures_only = False   # compiled for the figures only (_checked)
        self.cut_after_loops = False   # a segment ends after each loop op (segments.split)
        self._order_won: list[tuple[int, str]] = []   # (model peak, order): _no_limit

    def _free(self, bound: _Bound) -> PreparedRun:
        """The whole step in bladec's order with nothing evicted, checked (cached): what
        a limit is first tried with, and the top of the smallest limit's search."""
        if bound.free is None:
            bound.free = self._checked(self.plan(bound.binding, None), bound)
            self._whole_ratios.append(bound.free.device.peak / max(bound.planned_peak, 1))
        return bound.free

    def _no_limit(self, bound: _Bound) -> PreparedRun:
        """The run at no limit: the whole step in bladec's order or in XLA's own,
        whichever holds less on the device (XLA's on a tie: it fuses across ops).

        DESIGN promises no more than ``jax.jit`` at no limit. Holding bladec's order
        inside the executable (JaxBackend.enforce_order, on CPU) lowers the peak where
        the schedule pays (the small Llama step at 8x256: 0.87x jit's; an imported BERT:
        0.83x), but it keeps XLA from ordering around fusions, which costs more than the
        schedule gains elsewhere (an imported conv net 1.05x jit's, a mixture of experts
        1.07x, the small Llama step at 1x16 1.07x; XLA's own order: 1.00x;
        benchmarks/bench_jit_ratio.py). The model does not tell which (the BERT's
        schedule gains 0.2% on the model and 17% on the device, a Flax LM's 14% and
        loses 4%), and the winner changes with the size (the small Llama: XLA's order
        up to 4x64, bladec's from 4x128). So the orders (:meth:`_orders`) are all
        compiled at a binding whose model peak is not within ORDER_REACH of one where
        they were, and the lowest kept; elsewhere the nearest such binding's winner
        alone is compiled, and bladec's above a binding where it won
        (:meth:`_nearest_winner`): a stream of buckets pays the extra compilations at
        most once per doubling of its size, not per bucket. XLA's orders are compiled for their
        figures only there (at LLVM's optimization level 0: the same figures at 0.55-0.7x
        the CPU time, jax_backend.probe_options), and compiled to run where they win. ``BLADEC_NO_LIMIT_ORDER``: ``auto``
        (that), ``every`` (all compared at every binding), ``bladec`` or ``xla``. Where the backend holds no order of its own (GPU, NumPy)
        there is one run and nothing to choose."""
        mode = self._order_mode()
        if mode == "bladec" or not getattr(self.backend, "enforce_order", False):
            return self._free(bound)
        winner = "xla" if mode == "xla" else \
            self._nearest_winner(bound.planned_peak) if mode == "auto" else None
        if winner is not None:
            return self._in_order(bound, winner)
        runs = {"bladec": self._free(bound)}   # compiled to run: limits use it too
        before, self._figures_only = self._figures_only, True
        try:   # XLA's orders for their figures (an executable only for the one that runs)
            runs.update({order: self._in_order(bound, order)
                         for order in self._orders() if order != "bladec"})
        finally:
            self._figures_only = before
        won = min(runs, key=lambda order: (runs[order].device.peak, order == "bladec"))
        self._order_won.append((max(bound.planned_peak, 1), won))
        return runs[won]

    def _orders(self) -> tuple[str, ...]:
        """The orders compared at no limit: bladec's held; XLA's from the listing as
        written (as jax.jit is given it); and XLA's from bladec's schedule, where the
        passes changed the listing (an imported GPT-2: 1.032x jit's from the listing as
        written, 0.988x from the schedule; a mixture of experts: 1.000x and 1.076x)."""
        return ("bladec", "xla", "xla-scheduled") if self._reference is not None \
            else ("bladec", "xla")

    def _in_order(self, bound: _Bound, order: str) -> PreparedRun:
        if order == "bladec":
            return self._free(bound)
        if order == "xla":
            return self._in_xla_order(bound)
        if bound.xla_scheduled is None:
            bound.xla_scheduled = self._checked(self.plan(bound.binding, None), bound,
                                                xla_order=True)
        return bound.xla_scheduled

    def _nearest_winner(self, peak: int) -> str | None:
        """The order that held less at the compared binding nearest in model peak, where
        that is within ORDER_REACH of ``peak``, or bladec's where it held less at a
        binding of a smaller model peak (None: compare at this one).

        Bladec's order gains with the size: what it orders is the activations, which
        grow with the binding while the parameters and their updates, where XLA's
        fusions gain, do not (the small Llama: XLA's order up to 4x64, bladec's from
        4x128; the paper-size SGD step: XLA's at 1x64, bladec's above). So a win of
        bladec's carries to every larger binding: a stream of growing buckets compares
        once (benchmarks/bench_jit.py: 8x256 compared, not 8x448 again; 1.7 s of
        compile CPU, a figures-only compile of the step in XLA's order)."""
        if any(won == "bladec" and at <= max(peak, 1) for at, won in self._order_won):
            return "bladec"
        near = [(abs(math.log(max(peak, 1) / at)), won) for at, won in self._order_won]
        best = min(near, default=None)
        return best[1] if best is not None and best[0] <= math.log(ORDER_REACH) else None

    @staticmethod
    def _order_mode() -> str:
        mode = os.environ.get("BLADEC_NO_LIMIT_ORDER", "auto")
        if mode not in NO_LIMIT_ORDERS:
            raise BladecError(f"BLADEC_NO_LIMIT_ORDER={mode!r}: expected one of "
                              + ", ".join(NO_LIMIT_ORDERS))
        return mode

    def _checked(self, plan: Plan, bound: _Bound, limit: int | None = None,
                 xla_order: bool = False, gate: bool = False, as_jit: bool = False
                 ) -> PreparedRun:
        """The plan as steps with its device accounting (:meth:`_split_checked`): first
        with its evictions to recompute cutting no segment where the backend keeps a
        recompute inside one executable (segments.split), and where that is over
        ``limit``, the plan cut at every eviction, as before: in one executable XLA
        may hold more than the segments would (a recompute region's operands and
        results beside each other), so a plan that fits cut is never lost, and the
        closed loop learns its margins from the cut segments.

        One executable compiles far less than the segments: the small Llama step at
        8x448 under 0.6x its no-limit peak, 3,717 HLO ops, 4.0-4.4 s of compile CPU,
        against 12 segments of 4,043 ops, 13.8 s (XLA:CPU's cost per executable is
        0.26-0.45 s even for 20 ops at that size); device (XLA) 90.54-90.60 MiB
        against 90.56 MiB cut (BENCHMARKS.md, issue 32)."""
        run = self._split_checked(plan, bound, limit, xla_order, gate, as_jit, uncut=True)
        if run.uncut and limit is not None and run.device.peak > limit:
            run = self._split_checked(plan, bound, limit, xla_order, gate, as_jit,
                                      uncut=False)
        return run

    def _split_checked(self, plan: Plan, bound: _Bound, limit: int | None,
                       xla_order: bool, gate: bool, as_jit: bool, uncut: bool
                       ) -> PreparedRun:
        """The plan cut into steps, with its device accounting (segments compiled).
        ``limit``: stop at the first segment over it (the run is refused, and the
        segments after it, which the next plan may cut differently, are not compiled).
        ``xla_order``: the compiler schedules each segment (:meth:`_in_xla_order`).
        ``as_jit``: a whole step's parameters in the listing's argument order, as
        ``jax.jit`` passes a function's (otherwise in the order the ops first read them).
        ``gate``: first estimate every segment by the model alone
        (:func:`~bladec.runtime.planning.accounting.modelled_figure`: not by what happens
        to be compiled), and where that puts one over ``limit``, refuse the run on the
        estimate, compiling nothing."""
        run = split(plan, bound.shapes, self.info.dtypes, self._keep, self.backend,
                    xla_order=xla_order, graph_inputs=self.inputs if as_jit else (),
                    cut_after_loops=self.cut_after_loops and not xla_order,
                    uncut=uncut)
        if self._figures_only:   # compiled to name the smallest limit, not to run here
            for step in run.segment_steps():
                if hasattr(step.fn, "figures_only") and not step.fn.compiled:
                    step.fn.figures_only = True
        shapes, dtypes = bound.shapes, self.info.dtypes
        figures = dict(memory=plan.measure.memory, sizes=bound.arrays,
                       avals=lambda n: (tuple(shapes[n]), dtypes[n]))
        estimate = partial(modelled_figure, **figures)   # (not what happens to be compiled)
        if gate and limit is not None:
            guess = account(run, bound.arrays, self.inputs, over=limit, figure_of=estimate,
                            one_memory=self.one_memory)
            if guess.peak > limit:
                guess.estimated = True
                run.device = guess
                return run
        # (under a limit, the segments the model puts highest are compiled first: a plan
        # over it is refused at the first one found over, accounting._likely_over; by the
        # model alone, not by what happens to be compiled, so that which segment refuses
        # a plan, and the margins learned there, do not depend on what ran before)
        run.device = account(run, bound.arrays, self.inputs, over=limit,
                             one_memory=self.one_memory,
                             likely=estimate if limit is not None else None)
        return run

    def _in_xla_order(self, bound: _Bound) -> PreparedRun | None:
        """The whole step with XLA scheduling it, as ``jax.jit`` would (None where the
        backend holds no order of its own: then that is the run with nothing evicted).

        Holding bladec's order inside the executable (JaxBackend.enforce_order) is what
        lets evictions and the schedule reach the device, and it usually lowers the
        peak (0.76-0.86x of XLA's own order on the small Llama step from 8x128 up,
        BENCHMARKS). But the per-op order can not fuse across ops: where the step is
        mostly parameters and their updates (the paper-size SGD step at 1x64: 9.64 GB
        against XLA's 8.79 GB; the small Llama at 1x16: 1.07x), XLA's order holds less,
        and a limit between the two would be refused although ``jax.jit`` meets it.
        XLA schedules from the order it is given, so the listing as written
        (``reference``) is compiled where the engine has it, as ``jax.jit`` would, with
        its parameters in the argument order ``jax.jit`` gives them: XLA's copy insertion
        and buffer assignment depend on it (an imported conv net kept two donated
        batch-norm vectors copied in the order the ops first read them, 64 B over jit's
        total; a Flax LM 384 B; both equal jit's in argument order, while the other
        orders lose bytes in argument order: an imported GPT-2 0.988x -> 1.005x).
        Compiled once per binding, and only when no plan in bladec's order fits a limit
        (so a run that fits otherwise never pays for it)."""
        if not getattr(self.backend, "enforce_order", False):
            return None
        if bound.xla_run is None:
            fitter, at = self, bound
            if self._reference is not None:   # the order jax.jit would be given
                if self._reference_fitter is None:
                    self._reference_fitter = WholeStep(self._reference, self.backend,
                                                       self._cost, consolidate=False)
                fitter = self._reference_fitter
                at = fitter._bound(bound.binding)
            fitter._figures_only = self._figures_only
            bound.xla_run = fitter._checked(fitter.plan(bound.binding, None), at,
                                            xla_order=True, as_jit=True)
        return bound.xla_run
