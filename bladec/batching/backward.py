"""The backward pass of a traced batch: the schedule's calls in reverse order, each
adding its operands' cotangents into adjoint buffers, and the cotangents of the weights
of the cells' products summed once per group over all of the batch's invocations
(program.backward_fn's two parts).

A mixin of :class:`~bladec.batching.model.Autobatched`, apart because it is a phase of
its own (model.py had grown past 500 lines): it uses the model's kernels
(``_kernel``), layouts, residual buffers (``_kept``, ``_keeps``, ``_residual_specs``),
buffer floors (``_floor``), helpers and report, which model.py defines.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from bladec.batching.build import reads_adjoints
from bladec.batching.program import adjoint_keys, flat_cell, is_float
from bladec.batching.schedule import all_lanes, sibling_key
from bladec.batching.value import Group
from bladec.errors import BladecError


class BackwardPass:
    """What :class:`~bladec.batching.model.Autobatched` runs for ``value_and_grad``
    after the training forward (see the module)."""

    def _backward(self, traced: Any, state: dict) -> list[Any]:
        """The parameters' gradients of the summed loss of ``traced`` (model._Traced),
        whose training forward left ``state``: the schedule's calls in reverse, then the
        weights' part once per group."""
        import jax.numpy as jnp
        t = time.perf_counter()
        sched, shared = traced.schedule, traced.shared
        adj = {key: jnp.zeros((rows, *key[0]), key[1]) for key, rows in sched.rows.items()
               if is_float(key)}
        key = traced.outputs[0][0].key
        rows = np.asarray([o[0].row for o in traced.outputs], np.int32)
        # added, not set: instances whose losses are one deduplicated invocation
        # (Options.dedupe) share its row, and each counts once
        adj[key] = self._helper("seed", lambda a, r: a.at[r].add(1.0))(adj[key], rows)
        # the accumulators zeroed in one call (a dispatch per parameter cost 30-60 us)
        zeros = iter(self._helper("zeros", lambda *xs: [jnp.zeros_like(x) for x in xs])(
            *[x for x in shared if x is not None]))
        grads = [None if x is None else next(zeros) for x in shared]
        once = self.options.weight_grads_once
        done: dict[int, Group] = {}   # groups whose operands' part ran (id -> group)
        for call in reversed(sched.calls):
            group = call.group
            if len(set(group.shared)) != len(group.shared):
                raise BladecError(f"cell {group.cell.name}: one parameter passed twice to "
                                  f"one cell call (pass it once)")
            keys = adjoint_keys(group)
            weighted = once and any(self._product_weights(group))
            kind = "bwd-ops" if weighted else "bwd"
            new = self._backward_call(kind, group, shared, state, adj, grads, call.index)
            for k, value in zip(keys, new[:len(keys)]):
                adj[k] = value
            summed = self._summed(group, kind)
            for i, value in zip(summed, new[len(keys):]):
                grads[i] = value
            if weighted and self._keeps_cotangents(group):
                self._cotangents[group.identity] = new[len(keys) + len(summed):]
            if weighted:
                done[id(group)] = group
        # the weights' part, once per group over all its invocations: an output row's
        # cotangent is complete once the calls that read it (deeper, so earlier in the
        # reverse order) have run, and no later call adds to it
        for group in done.values():
            # padded to the most lanes the program has had (a batch's invocations of
            # a group vary more than its calls' lanes: on the ladder alone a BiLSTM's
            # batches of 8 compiled in 3 of 15 after warm-up, not 1)
            calls = [c for c in sched.calls if c.group is group]
            key = ("wgrad", sibling_key(group))
            self._floor[key] = max(self._floor.get(key, 0), sum(c.count for c in calls))
            index = all_lanes(calls, group, self._floor[key])
            new = self._backward_call("wgrad", group, shared, state, adj, grads, index)
            for i, value in zip(self._summed(group, "wgrad"), new):
                grads[i] = value
        self._report.dispatch_seconds += time.perf_counter() - t
        return grads

    def _backward_call(self, kind: str, group: Group, shared: list[Any], state: dict,
                       adj: dict, grads: list[Any], index: Any) -> list[Any]:
        """One call of a backward kernel (``kind``: "bwd", "bwd-ops" or "wgrad", made
        "-kept" where the training forward kept the group's products, "-cot" where the
        operands' part keeps their cotangents for the weights' part) on the
        parameters ``shared``, the adjoint buffers and the gradients' accumulators."""
        keep = self._keeps() and bool(self._residual_specs(group))
        cot = kind != "bwd" and self._keeps_cotangents(group)
        fwd = [state[k] for k in dict.fromkeys(group.operand_keys)]
        tables = state["__tables__"]
        suffix = "-cot" if cot else "-kept" if keep else ""
        return self._kernel(kind + suffix, group, shared)(
            *[shared[i] for i in group.shared], *fwd,
            *[tables[k] for k in self._layout(group).tables],
            *(self._kept[group.identity] if keep else ()),
            *(self._cotangent_rows(group) if cot else ()),
            *([adj[k] for k in adjoint_keys(group)] if reads_adjoints(kind + suffix) else []),
            *[grads[i] for i in self._summed(group, kind)], index)

    def _keeps_cotangents(self, group: Group) -> bool:
        """Whether the operands' part of ``group``'s backward keeps its products'
        cotangents for the weights' part (program.weight_grad_fn): with the products
        kept, where every weight of the products is read by them alone."""
        if not (self.options.product_cotangents and self.options.weight_grads_once and
                self._keeps() and self._residual_specs(group)):
            return False
        key = ("cotangents", group.identity)
        found = self._kernels.get(key)
        if found is None:
            from bladec.batching.residual import weights_only_in_products
            found = self._kernels[key] = weights_only_in_products(flat_cell(group),
                                                                  self._avals(group))
        return found

    def _cotangent_rows(self, group: Group) -> list[Any]:
        """The group's buffers of its products' cotangents: the rows of its residual
        buffers (kept across batches: each row read in a batch is written in it)."""
        import jax.numpy as jnp
        kept = self._kept[group.identity]
        found = self._cotangents.get(group.identity)
        if found is None or found[0].shape[0] != kept[0].shape[0]:
            found = self._cotangents[group.identity] = [jnp.zeros_like(k) for k in kept]
        return found

    def _summed(self, group: Group, kind: str) -> list[int]:
        """The parameters whose gradients a backward kernel ``kind`` adds to."""
        return [i for i, m in zip(group.shared, self._grad_mask(group, kind)) if m]

    def _grad_mask(self, group: Group, kind: str) -> tuple[bool, ...]:
        """Per shared leaf of ``group``: whether the backward kernel ``kind`` ("bwd",
        "bwd-ops" or "wgrad", "-kept" or not) adds its cotangent into its gradient:
        "bwd" every leaf, "wgrad" the weights of the cell's products, which it sums once
        per batch, "bwd-ops" the others (a bias, an embedding table read by index)."""
        base = kind.removesuffix("-kept").removesuffix("-cot")
        if base == "bwd":
            return (True,) * len(group.shared)
        products = self._product_weights(group)
        return products if base == "wgrad" else tuple(not m for m in products)

    def _product_weights(self, group: Group) -> tuple[bool, ...]:
        """Per shared leaf of ``group``: whether it is a weight of one of the cell's
        products (residual.product_weights), worked out once per group."""
        key = ("weights", group.identity)
        found = self._kernels.get(key)
        if found is None:
            from bladec.batching.residual import product_weights
            inputs = product_weights(flat_cell(group), self._avals(group))
            found = self._kernels[key] = tuple(
                i in inputs for i, (kind, _) in enumerate(group.kinds) if kind == "shared")
        return found
