"""Fitting a plan to the device: the closed loop, and the smallest limit that works
(over search.py, the search for the smallest limit, and wholestep.py: the checked run
of a plan, and the whole step in either order).

The planner (policy.py) works on the per-op model; a limit promises the device peak
(accounting.py: held arrays plus each running segment's own XLA outputs and temporaries).
So a plan is cut into segments and compiled (segments.py, the backend), its device
peak is read from the compiled segments' figures, and where a segment is over the
limit it is first repaired where that keeps the segment (repair.py: values it does not
read leave the device while it runs, so the executable compiled to check it is the one
that runs), and otherwise the planner is given a margin at that segment's ops and plans
again, until the device peak fits (:meth:`Fitter._fit`). Before a plan's new segments
are compiled, each is estimated (accounting.py, :func:`modelled_figure`: the model with
what XLA holds beside it, outputs allocated for the whole run or written into donated
arguments); a plan the estimate puts over the limit is tightened the same way without
compiling anything. The estimate is no bound (it can be over or under the compiled
figures), so the smallest limit's search does not refuse a plan on it. Where this quick loop
finds no plan, the plain one runs (every plan compiled, no repair), so neither the
estimate nor the repair can lose a plan the plain loop finds, and whatever runs was
checked against its compiled figures. When it can not, the smallest limit that works
by the same accounting is searched and named (:meth:`Fitter._smallest_limit`: verified,
it fits and one byte less does not). Given hints (hints.py), a search leaves its answer
and how its plan was made for later processes, which plan it again and check it the same
way instead of searching, and run at the limit named without a search.

Nothing is compiled only to be thrown away where that can be told before: the whole
step (the plan with nothing evicted) is not compiled to learn that it does not fit
when :meth:`Fitter._whole_step_over` says so, and a rejected plan stops compiling at
its first segment over the limit. What is compiled only to read its figures (the search
for the smallest limit, XLA's order, a whole step the model puts over the limit) is
compiled the cheaper way (jax_backend.LazyCompiled._probed), its executable compiled to
run at its first call if it ever runs. Results are cached per binding and limit.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bladec.runtime.planning.accounting import grow_margins
from bladec.runtime.planning.binding import _Bound
from bladec.runtime.planning.limit import LimitError
from bladec.runtime.planning.policy import Plan, try_plan
from bladec.runtime.planning.repair import repair
from bladec.runtime.planning.search import LimitSearch
from bladec.runtime.planning.segments import PreparedRun

MAX_ROUNDS = 8   # plans compiled and checked per limit before the closed loop gives up
JUMP_ROUNDS = 2  # the same for a stride or leap of the smallest limit's search (_quick)
WHOLE_STEP_SLACK = 0.15   # how far the whole step's estimated device peak must exceed a
                          # limit before it is not compiled to check (_whole_step_over)


@dataclass
class _Lesson:
    """What one closed loop taught (:meth:`Fitter._loop`): the largest margin per op that
    its compiled plans showed, and the margins of its fitting plan (None: none fitted)."""
    learned: dict[int, int] = field(default_factory=dict)
    margins: dict[int, int] | None = None


class Fitter(LimitSearch):
    """A :class:`LimitSearch` (so a :class:`WholeStep`) that fits plans under a limit
    (see the module); the search for the smallest limit asks its closed loop."""

    def prepare(self, binding: dict[str, int], limit: int | None) -> PreparedRun:
        """The plan for ``binding`` under ``limit`` as segments and copies, checked
        against the device accounting (cached); LimitError when no plan fits."""
        bound = self._bound(binding)
        run = bound.runs.get(limit)
        if run is None:
            if limit is None:
                run = self._no_limit(bound)
            else:
                # nothing compiled under a limit no run can meet is run under it: its
                # executables are compiled for their figures only (_checked)
                before, self._figures_only = self._figures_only, \
                    self._figures_only or self._held_over(bound, limit)
                try:
                    run = self._under(bound, limit)
                finally:
                    self._figures_only = before
            bound.runs[limit] = run
        return run

    def _under(self, bound: _Bound, limit: int) -> PreparedRun:
        """:meth:`prepare`'s run under ``limit`` (not cached here), or its LimitError."""
        run = self._guess(bound, limit) or self._fits(bound, limit)
        if run is None and self._recalled(bound):
            run = self._fits(bound, limit)   # with the plan an earlier search found
        if run is None:
            smallest = self._smallest_limit(bound)
            run = self._fits(bound, limit)  # the search may have found one
            if run is None:
                raise LimitError(limit, smallest, "by the device accounting: "
                                 + self.backend.accounting)
        return run

    def fits(self, binding: dict[str, int], limit: int) -> bool:
        """Whether a plan meets ``limit`` for ``binding`` by the device accounting (the
        plan found is cached, as :meth:`prepare` caches it), without the search for the
        smallest limit that works, which only a refusal's message needs: for a search
        over bindings under one limit (the largest batch that fits), where it would cost
        a dozen plans compiled per binding refused. Nor does it fall back on the plans a
        search found (:meth:`_fits`), so that its answer does not depend on whether a
        refusal searched before: where it is False, :meth:`prepare` may still find a
        run among them."""
        bound = self._bound(binding)
        run = self._guess(bound, limit) or self._fits(bound, limit, searched=False)
        if run is None:
            return False
        bound.runs.setdefault(limit, run)
        return True

    def _guess(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """The closed loop's plan, without first compiling the whole step to learn that
        it does not fit, where :meth:`_whole_step_over` says so; None sends
        :meth:`prepare` down the checked path (:meth:`_fits`: the whole step first).

        This does not weaken the limit: whatever runs is checked against its compiled
        segments' own figures. A wrong estimate costs only speed (a plan that evicts
        where the whole step would have fitted); and where the loop finds nothing,
        :meth:`_fits` compiles the whole step after all, so a limit is refused only on
        the checked path."""
        if bound.free is not None or not self._whole_step_over(bound, limit):
            return None   # the whole step may fit, or is compiled already: _fits decides
        return self._fit(bound, limit)

    def _whole_step_over(self, bound: _Bound, limit: int) -> bool:
        """Whether the run with nothing evicted is over ``limit``, without compiling it.

        Proved when the bytes it must hold exceed the limit: every input (held when it
        starts) plus the outputs XLA can not write into donated inputs. Otherwise
        estimated from the whole steps compiled at other bindings: this binding's model
        peak times the smallest ratio of device peak to model peak seen there, over the
        limit by more than WHOLE_STEP_SLACK (on the small Llama training step the ratio
        was 1.04, 1.03 and 0.98 at 4x32, 4x48 and 4x64, 0.88 and 0.87 at 8x256 and
        8x320: within 7% across the buckets of one stream). No estimate before a whole
        step has been compiled."""
        if self._held_over(bound, limit):
            return True
        if not self._whole_ratios:
            return False
        return bound.planned_peak * min(self._whole_ratios) > limit * (1 + WHOLE_STEP_SLACK)

    def _held_over(self, bound: _Bound, limit: int) -> bool:
        """Whether no run can meet ``limit``, proved from sizes alone: every input is held
        when a run starts, and at its end the outputs XLA can not write into donated
        inputs are held beside the inputs not donated."""
        sizes = bound.sizes
        inputs = sum(sizes[n] for n in self.inputs)
        outputs = sum(sizes[n] for n in dict.fromkeys(self.outputs) if n not in self.inputs)
        donated = sum(sizes[n] for n in self.donated)
        return inputs + max(outputs - donated, 0) > limit

    def _fit(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """The closed loop (:meth:`_loop`), cached per binding and limit: first the quick
        one (compiling gated on the estimate, so that a plan whose segment it puts over
        the limit is tightened without compiling anything, and segments over the limit
        repaired where that keeps them); where that finds nothing, having used either,
        the plain one, every plan compiled and checked. None when neither finds one."""
        if limit not in bound.fitted:
            self._priced(bound)
            lesson = _Lesson()
            found, strayed = self._loop(bound, limit, quick=True, lesson=lesson)
            if found is None and strayed:   # (else the plain loop would plan the same)
                found, _ = self._loop(bound, limit, quick=False, lesson=lesson)
            bound.fitted[limit] = (found, lesson)
        found, lesson = bound.fitted[limit]
        self._learn(bound, found, lesson)   # (cached or not, the binding learns alike)
        return found

    def _learn(self, bound: _Bound, found: PreparedRun | None, lesson: "_Lesson") -> None:
        """What a closed loop taught, kept on the binding as the loop run afresh would
        keep it, so that a loop answered from the cache (:meth:`_fit`, run before at a
        limit some earlier call asked) leaves the search where a new process leaves it:
        the margins its compiled plans learned (``learned``, :meth:`_leap`), those of
        its fitting plan (``margins``, :meth:`_stride`), and, while searching, the run
        it found among the plans the search falls back on (``good``)."""
        for k, m in lesson.learned.items():
            bound.learned[k] = max(bound.learned.get(k, 0), m)
        if lesson.margins is not None:
            bound.margins = dict(lesson.margins)
        self._found(bound, found)

    def _found(self, bound: _Bound, run: PreparedRun | None) -> None:
        """While searching, ``run`` joins the plans the search falls back on (once)."""
        if run is not None and self._searching and not any(r is run for r in bound.good):
            bound.good.append(run)

    def _priced(self, bound: _Bound) -> None:
        """The binding's per-op lower bounds and priced remat sites, which the closed
        loop plans with (worked out once per binding)."""
        if bound.lower is None:
            bound.lower = bound.version.program.lower_bounds(bound.sizes)
        self._priced_program(bound)

    def _loop(self, bound: _Bound, limit: int, quick: bool, lesson: "_Lesson",
              rounds: int = MAX_ROUNDS, margins: dict[int, int] | None = None,
              gate: bool | None = None) -> tuple[PreparedRun | None, bool]:
        """Plan within the limit less the margins learned so far, check the device peak,
        widen the margins at the segments over the limit, again; None when the planner
        can not meet the margins. ``quick``: check with the gate (:meth:`_checked`) and
        repair the segments over the limit where that keeps them (:meth:`_repaired`)
        before widening margins. Both compile less, but may end where the plain loop
        (``quick=False``) goes on to a plan: the estimate can be too high, and a repair
        learns no margin at the segment it keeps, so the planner does not cut it
        differently (on the small Llama step at 4x48 the smallest limit the search named
        was 9% higher with the repair alone). ``gate``: whether the quick loop refuses
        plans on the estimate (default: it does); the search's strides do not.

        Returns the run found (None: none) and whether the quick loop strayed from the
        plain one: refused a plan on the estimate or repaired one; what it learned goes
        to ``lesson`` (the caller keeps it on the binding: :meth:`_learn`). Where it did not,
        the plain loop would plan, check and widen exactly as it did (the planner and
        the compiled figures are deterministic), so it is not run: that halves the
        planning of a limit that is refused (the paper-size step at 16x512 planned 16
        times, about 5 s each, at every limit its search refused)."""
        lower = bound.lower
        margins = {} if margins is None else margins
        gate = quick if gate is None else gate and quick
        strayed = False
        for _ in range(rounds):
            if any(lower[k] + margins.get(k, 0) > limit for k in range(len(lower))):
                break   # no plan can meet these margins: the greedy would only find that
            plan = self._planned(bound, limit, margins)
            if plan is None:
                break
            run = self._checked(plan, bound, limit, gate=gate)
            if quick:
                checked = run
                plan, run = self._repaired(plan, run, bound, limit)
                strayed = strayed or checked.device.estimated or run is not checked
            if run.device.peak <= limit:
                lesson.margins = dict(margins)
                return run, strayed
            if not grow_margins(run, run.device, plan.measure.memory, limit, margins):
                break
            if not run.device.estimated:   # compiled figures: the device taught them
                learned = lesson.learned
                for k, m in margins.items():
                    learned[k] = max(learned.get(k, 0), m)
        return None, strayed

    def _planned(self, bound: _Bound, limit: int, margins: dict[int, int]) -> Plan | None:
        """policy.try_plan under ``limit`` less ``margins``, cached per binding: the
        plain closed loop asks again for the quick one's plans (deterministic)."""
        key = (limit, tuple(sorted(margins.items())))
        if key not in bound.plans:
            bound.plans[key] = try_plan(bound.program, bound.sizes, limit, self.cost,
                                        self.consolidate, margins)
        return bound.plans[key]

    def _repaired(self, plan: Plan, run: PreparedRun, bound: _Bound, limit: int
                  ) -> tuple[Plan, PreparedRun]:
        """``plan`` and its run, with each segment over ``limit`` repaired in turn
        (repair.py: values held across it moved to the host while it runs, the segment
        and its executable kept) while that covers the excess; the last plan checked."""
        for _ in range(run.segments if not self.one_memory else 0):
            # (one memory: moving values to the host frees nothing the limit counts)
            if run.device.peak <= limit:
                break
            fixed = repair(plan, run, bound.program, bound.sizes, limit)
            if fixed is None:
                break
            plan, run = fixed, self._checked(fixed, bound, limit, gate=True)
        return plan, run

    def _fits(self, bound: _Bound, limit: int, searched: bool = True
              ) -> PreparedRun | None:
        """What :meth:`prepare` runs under ``limit``: the run with nothing evicted when
        its device peak fits, else the closed loop's plan, else the whole step in XLA's
        own order (:meth:`_in_xla_order`) when that fits, or else (``searched``) the
        fitting run the search for the smallest limit found with the highest device
        peak within this one.

        Each is a function of the binding and the limit alone, never of what was asked
        before: the closed loop starts from no margins at every limit, and the search's
        plans are the same in every process (it starts afresh: :meth:`_searched`). The
        closed loop is not monotone in the limit (on a random listing the loop at
        12,684 B found 12,476 B where those at 13,116-16,140 B found nothing); falling
        back on every plan found before made what a limit ran, and the limit a refusal
        named, depend on the limits asked first. A refusal searches before it answers
        (:meth:`_under`), so falling back on the search's plans alone gives a new
        process's answer."""
        # the whole steps, far over the limit by the model (by more than the device/model
        # ratios of whole steps have ranged: _whole_step_over), are compiled for their
        # figures (to run at the first call if one fits after all)
        far = bound.planned_peak > limit * (1 + WHOLE_STEP_SLACK)
        before = self._figures_only
        self._figures_only = before or far
        try:
            free = self._free(bound)
        finally:
            self._figures_only = before
        if free.device.peak <= limit:   # nothing to evict: the zero-overhead path
            return free
        run = self._fit(bound, limit)
        if run is None:
            self._figures_only = before or far
            try:
                xla = self._in_xla_order(bound)
            finally:
                self._figures_only = before
            if xla is not None and xla.device.peak <= limit:
                run = xla
                self._found(bound, xla)
        if run is None and searched:
            run = max((r for r in bound.good if r.device.peak <= limit),
                      key=lambda r: r.device.peak, default=None)
        return run

    def _quick(self, bound: _Bound, limit: int, margins: dict[int, int]
               ) -> PreparedRun | None:
        """The quick closed loop for at most JUMP_ROUNDS plans from ``margins``, its plans
        compiled, not refused on the estimate (the search's strides and leaps: search.py);
        what it taught kept on the binding (:meth:`_learn`). Not cached as the limit's
        answer (:meth:`_fits` gives that)."""
        self._priced(bound)
        lesson = _Lesson()
        run, _ = self._loop(bound, limit, quick=True, lesson=lesson, rounds=JUMP_ROUNDS,
                            margins=margins, gate=False)
        self._learn(bound, run, lesson)
        return run
