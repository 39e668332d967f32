"""The smallest limit that works for a binding: the search that names it, verified (a
run fits it, one byte less is refused), and the hints that spare a later process the
search (store/hints.py).

A refusal's message names a limit (DESIGN.md section 4's promise: by the same device
accounting as the run). The search asks the closed loop (fitting.py) at the limits it
tries; it is its own class, below the loop, because it is a concept of its own (a
bisection, then a descent in strides, with the margins the loop learned carried from one
limit to the next) and because the loop does not need it: :class:`LimitSearch` is a
:class:`~bladec.runtime.planning.wholestep.WholeStep` that searches, and
:class:`~bladec.runtime.planning.fitting.Fitter` supplies the closed loop it asks
(:meth:`LimitSearch._fits`, :meth:`LimitSearch._quick`, :meth:`LimitSearch._priced`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from bladec.ir import Module
from bladec.runtime.backends.backend import Backend
from bladec.runtime.planning.binding import _Bound
from bladec.runtime.planning.plan import evictions_record, recorded_plan
from bladec.runtime.planning.policy import CostModel
from bladec.runtime.planning.segments import PreparedRun
from bladec.runtime.planning.wholestep import WholeStep
from bladec.runtime.store.hints import SearchHints, backend_identity

FIRST_STRIDE = 1 / 1024   # the descent's first stride, of the top it starts from


class LimitSearch(WholeStep, ABC):
    """A :class:`WholeStep` that searches for the smallest limit a binding's runs meet,
    over a closed loop its subclass supplies (fitting.py's :class:`Fitter`)."""

    def __init__(self, module: Module, backend: Backend, cost: CostModel | None = None,
                 consolidate: bool = True, reference: Module | None = None,
                 hints: SearchHints | None = None) -> None:
        super().__init__(module, backend, cost, consolidate, reference)
        self.hints = hints   # earlier processes' searches (hints.py)
        self._searching = False   # within the search for the smallest limit (_searched)

    # -- what the closed loop supplies (fitting.py) -----------------------------------------
    @abstractmethod
    def _fits(self, bound: _Bound, limit: int, searched: bool = True
              ) -> PreparedRun | None:
        """The run :meth:`Fitter.prepare` makes under ``limit`` (None: none fits)."""

    @abstractmethod
    def _quick(self, bound: _Bound, limit: int, margins: dict[int, int]
               ) -> PreparedRun | None:
        """A run under ``limit`` from the quick closed loop started at ``margins``, for a
        few plans, compiled rather than refused on the estimate; what it learned kept."""

    @abstractmethod
    def _priced(self, bound: _Bound) -> None:
        """The binding's lower bounds and priced remat sites, worked out once."""

    # -- the search ----------------------------------------------------------------------
    def _stride(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """A run under ``limit`` found cheaply, or None: the quick closed loop for at most
        JUMP_ROUNDS plans, not cached as the limit's answer (:meth:`_fits` gives that).
        Each plan the closed loop finds sits just under its limit, so a descent one byte
        at a time takes as many steps as there are plans a little lower than the last
        (on the paper-size step at 16x512, over 150 steps of 5-10 s each, from 11.1 GB
        to under 9.4 GB); strides cover that in a few steps where plans are found, and
        what the search names is still checked at the limit and one byte under.

        A stride starts from the margins of the last plan that fitted, not from none: a
        margin is the device's excess over the model at an op, which hardly depends on
        the limit, and learning them again took the closed loop 3 plans at each of the
        16x512 descent's steps, so that a stride of 2 never found one and the descent
        went on one byte at a time (33 KB lower per step, 8-10 s each).

        Its plans are compiled, not refused on the estimate (accounting.py): the estimate
        is no bound either way (on an imported GPT-2 at 8x64, 1.7-4.2 MB over most
        segments' compiled figures and up to 69 KB under others), and refused there
        every stride of that step's descent, which then crept 2 KB a step by
        :meth:`_fits` one byte under each plan, 11-16 s a step, for hours (issue 37)."""
        return self._quick(bound, limit, dict(bound.margins))

    def _leap(self, bound: _Bound, limit: int) -> PreparedRun | None:
        """The bisection's question at ``limit`` once compiled plans taught margins: the
        quick loop (JUMP_ROUNDS plans, compiled as a stride's are) from every margin
        learned at any limit (they hardly depend on it: :meth:`_stride`), else the
        checked run with the highest peak within ``limit``. The descent still asks
        :meth:`_fits` at the limit named and one byte under with no margins, as a later
        process does. (Learning margins again at each limit compiled a new cut each
        time: 5 of the 7 compilations of a 1,123-op GPT-2 step's refusal.)"""
        margins = {k: max(bound.margins.get(k, 0), bound.learned.get(k, 0))
                   for k in bound.margins.keys() | bound.learned.keys()}
        run = self._quick(bound, limit, margins)
        if run is None:   # (what the search found: not what a call before it found)
            known = [*bound.good, bound.free]
            run = max((r for r in known if r is not None and r.device.peak <= limit),
                      key=lambda r: r.device.peak, default=None)
        return run

    def _smallest_limit(self, bound: _Bound) -> int:
        """A limit that :meth:`_fits` meets for this binding such that one byte less is
        refused (both tried). The search does not depend on the limit asked for, so every
        process names the same one: a bisection between the bytes every run must hold
        at its end (inputs and outputs) and the peak with nothing evicted (which always
        fits), down to a 1% bracket, then a descent from its top (:meth:`_stride`: strides
        down that double while runs are found there, else one byte under each fitting
        plan's device peak) until one byte less is refused. In the bisection a plan
        found sets the top at its own peak, where it fits too (see below), without
        planning there; the descent plans at its final top. Once a fitting plan's
        margins are known, the bisection tries a stride before the limit's own closed
        loop (at 16x512 the loop refused 11.05 GB after 16 plans, 143 s, where a stride
        found a plan in one); once compiled plans have taught margins at all, it asks
        only :meth:`_leap`. Cached per binding.

        The closed loop is not monotone in the limit (a plan found for one limit can fit
        a smaller one): :meth:`_fits` falls back on every plan the search found, and
        since the search is the same everywhere (it starts afresh), so are those plans. Nor is the search
        in its starting point: after the bisection and its descent, the closed loop is
        started one byte under the whole step, with no margins, and where it finds a
        lower plan the descent goes on from there (the lower of the two is named)."""
        if bound.smallest is not None:
            return bound.smallest
        before, self._figures_only = self._figures_only, True
        try:
            return self._searched(bound)
        finally:
            self._figures_only = before

    def _searched(self, bound: _Bound) -> int:
        """:meth:`_smallest_limit`'s search, its segments compiled for their figures only
        (of its plans at most one runs, compiled at its first call): on CPU, LLVM's
        optimizations off, the same figures (tests/runtime/planning/test_probe.py);
        a 896-op segment of a cut GPT-2 step 1.3 s of CPU against 6.4 s."""
        hinted = self._hinted_smallest(bound)
        if hinted is not None:
            bound.smallest = hinted
            return hinted
        # the search starts from no margins, whatever the closed loop learned at the limit
        # asked before it: leaps plan with every margin learned (_leap), so margins left
        # by that limit made the search, and the limit named, depend on the limit asked (an
        # imported GPT-2 at 8x64: 11,660,644 B named under half its peak; asked for exactly
        # that, a new process learned margins there first and named 11,935,524 B)
        # nor does it start from the plans found before it (closed loops at limits asked
        # earlier): it falls back only on its own (_fits), so that what it names, and
        # what a limit runs after it, are what a new process finds
        bound.learned.clear()
        bound.margins = {}
        bound.good = []
        self._searching = True
        try:
            return self._search(bound)
        finally:
            self._searching = False

    def _search(self, bound: _Bound) -> int:
        """:meth:`_searched` from a fresh start (no margins, no plans to fall back on)."""
        held = sum(bound.sizes[n] for n in dict.fromkeys(self.inputs + self.outputs))
        lo = max(held, 1)   # (not the model's lower bounds: a device peak can be lower)
        top = max(self._free(bound).device.peak, lo)
        hi = self._descended(bound, self._bisected(bound, lo, top))
        # the closed loop is not monotone in the limit, and the bisection's margins,
        # learned where plans were far over, can rule out every limit under the whole
        # step: the loop started one byte under it, with no margins, is the second path
        # (an imported GPT-2 at 8x64, before issue 32's held-order fix: the bisection
        # ended at XLA's order, 22,444,108 B; the loop at 22,999,115 B found 18,662,180
        # B); the lower of the two is named. Where the first path ends on a plan that
        # evicts, the margins ruled out nothing above it, and the descent's last step
        # already ran the loop with no margins one byte under it: the second path is not
        # taken (on that GPT-2, now 0.53x, it planned 3 times to find 0.99x)
        run = self._fits(bound, top - 1) if top - 1 > lo and \
            not self._evicting_at(bound, hi) else None
        if run is not None and run.device.peak < hi:
            hi = self._descended(bound, run.device.peak)
        bound.smallest = hi
        self._keep_hint(bound, hi)
        return hi

    @staticmethod
    def _evicting_at(bound: _Bound, peak: int) -> bool:
        """Whether a plan found in bladec's order that evicts has device peak ``peak``."""
        return any(r.device.peak == peak and r.plan.evictions and not r.xla_order
                   for r in bound.good)

    def _bisected(self, bound: _Bound, lo: int, hi: int) -> int:
        """The search's bisection between ``lo`` and ``hi`` down to a 1% bracket: its
        top, the lowest device peak of a run found within a limit asked."""
        while hi - lo > hi // 100:
            mid = (lo + hi) // 2
            if bound.learned:
                run = self._leap(bound, mid)
            else:
                run = self._stride(bound, mid) if bound.margins else None
                run = run or self._fits(bound, mid)
            if run is None:
                lo = mid + 1
            else:   # fits at its own peak too: _fits falls back on every plan found
                hi = run.device.peak
        return hi

    def _descended(self, bound: _Bound, hi: int) -> int:
        """The search's descent from ``hi`` (a limit some run fits at exactly): strides
        down, then one byte under each fitting plan's peak, until :meth:`_fits` finds
        nothing one byte under the top and the plan made for the top itself holds no
        less; that top."""
        first = stride = max(int(hi * FIRST_STRIDE), 1)
        while hi > 1:
            if stride > 1:   # a stride down: doubled where a run is found, else halved
                run = self._stride(bound, hi - stride)
                if run is not None:
                    hi, stride = run.device.peak, stride * 2
                    continue
                if stride > first:
                    stride = max(stride // 2, first)
                    continue
            below = self._fits(bound, hi - 1)   # the first stride found nothing: a byte
            if below is not None:
                hi = below.device.peak
                continue
            # the plan made for the top itself may hold less: the top is only named once
            # planning there, and one byte under, finds nothing lower (so a later
            # prepare at either limit, cached, answers the same)
            top = self._fits(bound, hi)
            if top is None or top.device.peak >= hi:
                break
            hi = top.device.peak
        return hi

    # -- hints: what earlier processes' searches found (hints.py) -------------------------
    def _hint_key(self, bound: _Bound) -> str:
        return self.hints.key((sorted(bound.binding.items()),
                               backend_identity(self.backend), self.cost, self.consolidate))

    def _recalled(self, bound: _Bound) -> bool:
        """Make again, once per binding, the plan that an earlier process's search found
        fitting (from its evictions, as every planner path makes its plan), and check it
        against its compiled segments' figures; whether it joined the binding's fitting
        runs. A hint whose evictions do not make a valid plan here is ignored."""
        if self.hints is None or bound.recalled:
            return False
        bound.recalled = True
        bound.hint = self.hints.recall(self._hint_key(bound))
        self._priced(bound)
        plan = recorded_plan((bound.hint or {}).get("evictions"), bound.program,
                             bound.sizes, self.one_memory)
        if plan is None:
            return False
        bound.good.append(self._checked(plan, bound))
        self.hints.recalled += 1
        return True

    def _hinted_smallest(self, bound: _Bound) -> int | None:
        """The smallest limit an earlier search named, where it holds here as the search
        itself checks its answer: a run fits it at exactly that peak, and one byte less
        is refused. None where there is no hint or it does not hold."""
        self._recalled(bound)
        named = (bound.hint or {}).get("smallest")
        if not isinstance(named, int) or named < 1:
            return None
        top = self._fits(bound, named)
        if top is None or top.device.peak != named or self._fits(bound, named - 1):
            return None
        return named

    def _keep_hint(self, bound: _Bound, smallest: int) -> None:
        """Leave the search's answer for later processes, with the evictions of the plan
        that meets it (none where that is the run with nothing evicted or XLA's order:
        those every search makes)."""
        if self.hints is None:
            return
        found = next((r for r in bound.good if r.device.peak == smallest
                      and r.plan.evictions and not r.xla_order), None)
        self.hints.keep(self._hint_key(bound), {
            "binding": bound.binding, "smallest": smallest,
            "evictions": evictions_record(found.plan.evictions) if found else None})

