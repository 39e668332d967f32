"""A batch's calls of tabulated cells (tabulate.py) and the tables they read, placed
among the parameters the kernels take; in training, the tables' cotangents taken back
to the weights.

A mixin of :class:`~bladec.batching.model.Autobatched`, apart because it is a concern
of its own (model.py had reached the house's 550 lines): it uses the model's kernel
memo (``_kernels``), derived values (``_derived``) and the tables' places
(``_tab_at``, ``_tab_next``), which model.py defines. ``traced`` is model.py's record
of a traced batch.
"""
from __future__ import annotations

from typing import Any

from bladec.batching.schedule import Call, sibling_key
from bladec.batching.value import Group
from bladec.batching.weights.tabulate import DataRanges, plan


class TabulatedCalls:
    """What :class:`~bladec.batching.model.Autobatched` runs to read tables."""

    def _tabulated(self, traced: Any, calls: list[Call], tables: dict,
                   training: bool) -> tuple[list[Call], list[Any]]:
        """``calls`` with those of a tabulated cell (weights/tabulate.py) made calls of
        the rest of the cell, and ``traced.shared`` with the derived values (tables) appended,
        each at a place its group keeps from batch to batch (the place is in the group's
        identity, which layouts and flips are cached by). The tables are made again
        only where the weights changed (weights/derived.py). In inference every tabulated
        group is: the tables serve batch after batch while the weights are the same
        arrays (a caller passing new weights with every small batch pays the tables'
        rows each time: ``Options.tabulate=False``; making them only from the second
        batch with the same weights delayed the tabulated kernels' first buckets by a
        batch, and a TreeLSTM at batch 8 then compiled in 2 of 15 batches after warm-up,
        not 0). In training (``training``) only a group with at least as many
        invocations as its tables have rows is: the weights are new every step, so the
        tables cost their rows every batch (and their cotangents' pullback as much
        again). The schedule's calls are replaced too (the backward pass reads them)."""
        params, shared = len(traced.shared), list(traced.shared)
        ranges = DataRanges(tables)
        groups: dict[int, Group] = {}
        out = []
        for call in calls:
            group = call.group
            done = groups.get(id(group))
            if done is None:
                done = groups[id(group)] = self._tabulated_group(
                    traced, group, shared, params, ranges, training)
            out.append(call if done is group else   # (dataclasses.replace: 5 us)
                       Call(call.depth, done, call.index, call.count, call.siblings,
                            call.steps))
        traced.shared, traced.schedule.calls = shared, out
        return out, shared

    def _tabulated_group(self, traced: Any, group: Group, shared: list[Any],
                         params: int, ranges: DataRanges, training: bool) -> Group:
        tab = self._tab_plan(group)
        if tab is None or not ranges.within(tab, group) or (
                training and group.count < tab.rows):
            return group
        place = (group.identity, params)
        first = self._tab_at.get(place)
        if first is None:   # after the parameters and the places given before
            first = self._tab_at[place] = self._tab_next.get(params, params)
            self._tab_next[params] = first + len(tab.specs)
        sources = tuple(shared[i] for i in group.shared)
        # keyed by the cell, the tables' program and the parameters: a BiLSTM's first
        # step (its state is data, a group of its own) reads the later steps' tables;
        # the cell too, since a program's text names the constants it closes over
        # without their values
        derived = self._derived.get(("tab", group.cell, tab.program, group.shared),
                                    sources, lambda: tab.make(*sources))
        shared.extend([None] * (first + len(derived) - len(shared)))
        shared[first:first + len(derived)] = derived
        traced.tabulated.append((tab, group.shared, first))
        return tab.group(group, first)

    def _tab_plan(self, group: Group) -> Any:
        """The group's tabulation (weights/tabulate.py), None where it has none; planned
        once per signature."""
        key = ("tab", sibling_key(group))
        if key not in self._kernels:
            self._kernels[key] = plan(group)
        return self._kernels[key]

    def _pulled_back(self, traced: Any, grads: list[Any]) -> list[Any]:
        """The parameters' gradients: the backward's, plus each tabulated group's
        tables' cotangents taken back to the parameters they were made from."""
        for tab, sources, first in traced.tabulated:
            cotangents = tuple(grads[first:first + len(tab.specs)])
            back = tab.pullback(tuple(traced.shared[i] for i in sources), cotangents)
            for i, g in zip(sources, back):
                grads[i] = grads[i] + g
        return grads[:traced.params_tree.num_leaves]
