"""The part of a cell that reads only weights and one integer operand, computed once per
set of weights for every value of that operand (a table) and read by row per invocation.

Why: an invocation's arithmetic on ``emb[word]`` and the weights alone is a function of
``word``. A BiLSTM step computes ``W @ [emb[word]; h]``: half of that product,
``W[:, :E] @ emb[word]``, is the same for every occurrence of a word, and a TreeLSTM's
leaf is a function of its word altogether. With the table made once per set of weights (inference
calls a model again and again with the same parameters: derived.py keeps it), a batch of
64 BiLSTM sequences runs half the products of its steps, and the TreeLSTM's leaves none.
This is an algebraic rewrite of the cell's program, decided from its jaxpr, not a memo of
results: nothing is remembered about instances.

The analysis (:func:`plan`), on the jaxpr of one invocation:

1. every value is classed by what it depends on: the weights (and constants) alone, the
   weights and one integer scalar operand ``d`` (``I(d)``), or anything else (dynamic);
2. a product of a concatenation along its contracted dim whose parts are of different
   classes is split into a sum of products of the parts (``W @ [a; b] = W[:, :na] @ a +
   W[:, na:] @ b``), so that the static part becomes a value of its own;
3. the static values a dynamic operation reads (the frontier) become inputs of the rest
   of the cell: those of class ``I(d)`` as a table over ``d``'s domain, the others (a
   weight's slice) as values computed once;
4. ``d``'s domain is ``[0, V)`` with ``V`` the dim that ``d`` indexes in a weight (a
   ``dynamic_slice`` or ``gather`` of it). A batch whose values of ``d`` are not all
   inside it runs the cell untabulated (model.py checks): the table holds exactly the
   cell's own arithmetic at each value of the domain, so results agree with the
   untabulated cell within float reassociation (the split product sums two partial
   products where the cell had one: within the autobatch's 1e-5 tolerance, not bitwise).

A cell is tabulated only where a product (``dot_general``) moves into the tables, and
only where the tables are at most :data:`MAX_GROWTH` times the bytes of the weights they
are made from (a large vocabulary's table would cost more memory than it saves time).
In training the weights change every step, so the tables cost their rows every batch,
and their cotangents go back to the weights through :attr:`Tabulation.pullback` (as
much again): model.py tabulates a training batch only where a group has at least as
many invocations as the tables have rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from bladec.batching.value import Cell, Group

# The tables and hoisted values may be at most this many times the bytes of the shared
# leaves they are computed from.
MAX_GROWTH = 4.0

_WEIGHTS = -1      # class of a value computed from the weights (and constants) alone
_DYNAMIC = -2      # class of a value that reads a lazy operand, or two integer operands


@dataclass(frozen=True)
class Tabulation:
    """How one cell signature runs tabulated.

    ``cell``: the rest of the cell, a function of ``(*derived, *leaves)`` (the cell's
    input leaves that it reads: ``kept``) returning its output leaves; ``make``: the
    derived values from the group's shared leaves (in ``Group.shared`` order);
    ``pullback(shared, cotangents)``: the shared leaves' cotangents from the derived
    values' (training); ``specs``: the derived values' shapes and dtypes; ``domains``:
    per tabulated operand, its leaf position and the size of its domain ``[0, V)``."""
    cell: Cell
    make: Callable[..., tuple]
    pullback: Callable[[tuple, tuple], tuple]
    specs: tuple[tuple[tuple[int, ...], str], ...]
    domains: tuple[tuple[int, int], ...]
    kept: tuple[bool, ...]
    program: str    # ``make``'s jaxpr: groups of one cell whose tables are the same
                    # program share them

    @property
    def compilations(self) -> int:
        """Executables of ``make`` and ``pullback`` (counted with the kernels' in the
        report)."""
        return self.make._cache_size() + self.pullback._cache_size()

    @property
    def rows(self) -> int:
        """The tables' rows: what making them costs, in invocations of the cell."""
        return max(size for _, size in self.domains)

    def group(self, group: Group, first: int) -> Group:
        """``group``'s invocations as a group of the rest of the cell: the derived values
        are shared leaves ``first, first + 1, ...`` ahead of the cell's own leaves."""
        import jax
        n = len(self.specs)
        own = [kind for kind, k in zip(group.kinds, self.kept) if k]
        kinds = (*(("shared", first + j) for j in range(n)), *own)
        out = Group(self.cell, group.signature, jax.tree_util.tree_structure(
            (0,) * len(kinds)), kinds, group.out_keys, group.out_tree, group.out_codes)
        out.flat, out.depths, out.order = group.flat, group.depths, group.order
        shared_kept = [k for (kind, _), k in zip(group.kinds, self.kept)
                       if kind == "shared"]
        out.shared_specs = (*self.specs, *(spec for spec, k in zip(group.shared_specs,
                                                                 shared_kept) if k))
        return out


def plan(group: Group) -> Tabulation | None:
    """The tabulation of ``group``'s cell, or None where nothing worth it is static."""
    import jax
    avals = group.avals()

    def flat(*leaves: Any) -> list[Any]:
        return jax.tree_util.tree_leaves(group.cell.fn(
            *jax.tree_util.tree_unflatten(group.in_tree, list(leaves))))
    first = jax.make_jaxpr(flat)(*avals)
    classes = _classes(first.jaxpr, group.kinds)
    split = _live(jax.make_jaxpr(lambda *xs: _evaluate(first, xs, classes,
                                                       split_products=True))(*avals))
    jaxpr = split.jaxpr
    classes = _classes(jaxpr, group.kinds)
    domains = _domains(jaxpr, classes)
    for var in jaxpr.invars:    # an operand with no known domain: dynamic after all
        if classes[var] >= 0 and classes[var] not in domains:
            classes[var] = _DYNAMIC
    classes = _propagated(jaxpr, classes)
    if not any(_holds_product(e) and _class_of(e.outvars[0], classes) >= 0
               for e in jaxpr.eqns):
        return None
    frontier = _frontier(jaxpr, classes)
    if not frontier:
        return None
    specs = []
    for var in frontier:
        d = classes[var]
        shape = tuple(var.aval.shape)
        specs.append(((domains[d], *shape) if d >= 0 else shape, str(var.aval.dtype)))
    made = sum(int(np.prod(s)) * np.dtype(t).itemsize for s, t in specs)
    weights = sum(int(np.prod(s)) * np.dtype(t).itemsize for s, t in group.shared_specs)
    if made > MAX_GROWTH * max(weights, 1):
        return None
    shared_at = [i for i, (kind, _) in enumerate(group.kinds) if kind == "shared"]
    tabled = tuple(sorted({classes[v] for v in frontier if classes[v] >= 0}))

    def make(*shared: Any) -> tuple:
        import jax.numpy as jnp
        env = dict(zip((jaxpr.invars[i] for i in shared_at), shared))
        out: dict[Any, Any] = {}
        for d in (_WEIGHTS, *tabled):
            wanted = [v for v in frontier if classes[v] == d]
            if not wanted:
                continue
            if d == _WEIGHTS:
                values = _static(split, env, classes, d, wanted)
            else:
                over = jnp.arange(domains[d], dtype=jaxpr.invars[d].aval.dtype)
                values = jax.vmap(lambda x, d=d, wanted=wanted: _static(
                    split, {**env, jaxpr.invars[d]: x}, classes, d, wanted))(over)
            out.update(zip(wanted, values))
        return tuple(out[v] for v in frontier)

    # the cell's leaves the rest reads: every lazy and data leaf (the index columns
    # stay the group's) and the shared leaves that a dynamic equation or an output reads
    read = {v for e in jaxpr.eqns if _class_of(e.outvars[0], classes) == _DYNAMIC
            for v in e.invars} | set(jaxpr.outvars)
    kept = tuple(kind != "shared" or var in read
                 for var, (kind, _) in zip(jaxpr.invars, group.kinds))

    def rest(*args: Any) -> list[Any]:
        derived, given = args[:len(frontier)], iter(args[len(frontier):])
        leaves = [next(given) if k else None for k in kept]
        known = {}
        for var, value in zip(frontier, derived):
            d = classes[var]
            known[var] = value if d < 0 else \
                value.at[leaves[d][None]].get(mode="promise_in_bounds")[0]
        return _evaluate(split, leaves, classes, known=known)

    name = f"{group.cell.name}[tab]"
    def pullback(shared: tuple, cotangents: tuple) -> tuple:
        return jax.vjp(make, *shared)[1](cotangents)
    shared_avals = [avals[i] for i in shared_at]
    return Tabulation(Cell(rest, name), jax.jit(make), jax.jit(pullback), tuple(specs),
                      tuple((d, domains[d]) for d in tabled), kept,
                      str(jax.make_jaxpr(make)(*shared_avals)))


class DataRanges:
    """The smallest and largest value of each of a batch's data tables, each read once
    (several groups read one table: a BiLSTM's words), for checking the tabulated
    operands' values against their domains."""

    def __init__(self, tables: dict) -> None:
        self._tables, self._ranges = tables, {}

    def within(self, tab: Tabulation, group: Group) -> bool:
        """Whether every value of ``tab``'s operands in this batch lies in its domain
        (the whole table of the operand's shape and dtype is checked: a value of another
        group's outside the domain only costs the tabulation)."""
        for position, size in tab.domains:
            key = group.kinds[position][1]
            if key not in self._ranges:
                values = self._tables.get(key)
                self._ranges[key] = (int(values.min()), int(values.max())) \
                    if values is not None and values.size else None
            bounds = self._ranges[key]
            if bounds is not None and (bounds[0] < 0 or bounds[1] >= size):
                return False
        return True


def indexes(key: Any) -> bool:
    """Whether a data leaf of this (shape, dtype) key can be a table's operand: an
    integer scalar (a word id). A bool is not: it indexes no weight."""
    return key[0] == () and np.issubdtype(np.dtype(key[1]), np.integer)


def _holds_product(eqn: Any) -> bool:
    """Whether ``eqn`` is a product or calls one (a jitted helper, a custom
    derivative's body)."""
    from jax.extend.core import jaxprs_in_params
    return eqn.primitive.name == "dot_general" or any(
        _holds_product(e) for sub in jaxprs_in_params(eqn.params) for e in sub.eqns)


def _live(closed: Any) -> Any:
    """``closed`` without the equations nothing reads (the concatenation a split
    product no longer reads would otherwise be dynamic and read the static part)."""
    jaxpr = closed.jaxpr
    live = {v for v in jaxpr.outvars if not _is_literal(v)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(v for v in eqn.invars if not _is_literal(v))
    return closed.replace(jaxpr=jaxpr.replace(eqns=kept[::-1]))


def _classes(jaxpr: Any, kinds: tuple) -> dict:
    """Per variable: :data:`_WEIGHTS`, the leaf position of the one integer scalar
    operand it reads, or :data:`_DYNAMIC`."""
    classes = {}
    for i, (var, (kind, key)) in enumerate(zip(jaxpr.invars, kinds)):
        if kind == "shared":
            classes[var] = _WEIGHTS
        elif kind == "data" and indexes(key):
            classes[var] = i
        else:
            classes[var] = _DYNAMIC
    for var in jaxpr.constvars:
        classes[var] = _WEIGHTS
    return _propagated(jaxpr, classes)


def _propagated(jaxpr: Any, classes: dict) -> dict:
    """``classes`` of the inputs carried through the equations."""
    out = {v: c for v, c in classes.items() if v in set(jaxpr.invars) | set(
        jaxpr.constvars)}
    for eqn in jaxpr.eqns:
        c = _WEIGHTS
        for var in eqn.invars:
            c = _join(c, _class_of(var, out))
        if eqn.effects:
            c = _DYNAMIC
        for var in eqn.outvars:
            out[var] = c
    return out


def _join(a: int, b: int) -> int:
    if a == _WEIGHTS:
        return b
    if b == _WEIGHTS or a == b:
        return a
    return _DYNAMIC


def _class_of(var: Any, classes: dict) -> int:
    return _WEIGHTS if _is_literal(var) else classes.get(var, _WEIGHTS)


def _is_literal(var: Any) -> bool:
    from jax.extend.core import Literal
    return isinstance(var, Literal)


def _domains(jaxpr: Any, classes: dict) -> dict[int, int]:
    """Per integer operand: the dim of a weight it indexes (the smallest, where it
    indexes several), read from the slices and gathers of the weights."""
    out: dict[int, int] = {}
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name not in ("dynamic_slice", "gather") or \
                _class_of(eqn.invars[0], classes) != _WEIGHTS:
            continue
        shape = eqn.invars[0].aval.shape
        if name == "dynamic_slice":
            dims = [(dim, var) for dim, var in enumerate(eqn.invars[1:])]
        else:
            mapped = eqn.params["dimension_numbers"].start_index_map
            dims = [(mapped[0], eqn.invars[1])] if len(mapped) == 1 else []
        for dim, var in dims:
            d = _class_of(var, classes)
            if d >= 0:
                out[d] = min(out.get(d, shape[dim]), shape[dim])
    return out


def _frontier(jaxpr: Any, classes: dict) -> list[Any]:
    """The static values (not the cell's own leaves) that a dynamic equation or the
    outputs read, in order of definition."""
    read = set()
    for eqn in jaxpr.eqns:
        if _class_of(eqn.outvars[0], classes) == _DYNAMIC:
            read.update(v for v in eqn.invars if not _is_literal(v))
    read.update(v for v in jaxpr.outvars if not _is_literal(v))
    inputs = set(jaxpr.invars) | set(jaxpr.constvars)
    return [v for e in jaxpr.eqns for v in e.outvars
            if v in read and v not in inputs and _class_of(v, classes) != _DYNAMIC]


def _static(closed: Any, env: dict, classes: dict, d: int, wanted: list) -> list:
    """The values ``wanted`` (of class ``d``), evaluating only the equations of the
    weights' class and of ``d``'s."""
    env = {**dict(zip(closed.jaxpr.constvars, closed.consts)), **env}
    for eqn in closed.jaxpr.eqns:
        if _class_of(eqn.outvars[0], classes) in (_WEIGHTS, d):
            _bind(eqn, env)
    return [env[v] for v in wanted]


def _evaluate(closed: Any, leaves: Any, classes: dict, *, known: dict | None = None,
              split_products: bool = False) -> list[Any]:
    """The jaxpr on ``leaves``. With ``known``, the equations whose results are not
    dynamic are skipped (the values the dynamic ones read are in ``known``). With
    ``split_products``, a product of a concatenation of parts of different classes is
    computed as the sum of the parts' products (module docstring, step 2)."""
    jaxpr = closed.jaxpr
    env = {**dict(zip(jaxpr.constvars, closed.consts)), **dict(zip(jaxpr.invars, leaves)),
           **(known or {})}
    producer = {v: e for e in jaxpr.eqns for v in e.outvars}
    for eqn in jaxpr.eqns:
        if known is not None and _class_of(eqn.outvars[0], classes) != _DYNAMIC:
            continue
        if split_products and eqn.primitive.name == "dot_general":
            parts = _split_product(eqn, env, producer, classes)
            if parts is not None:
                env[eqn.outvars[0]] = parts
                continue
        _bind(eqn, env)
    return [_read(v, env) for v in jaxpr.outvars]


def _split_product(eqn: Any, env: dict, producer: dict, classes: dict) -> Any:
    """``dot_general(x, concatenate(parts))`` over the concatenated dim as the sum of
    the parts' products, grouped by class (None where that does not apply)."""
    from jax import lax
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    for side in (1, 0):
        cat = producer.get(eqn.invars[side])
        if cat is None or cat.primitive.name != "concatenate":
            continue
        dim = cat.params["dimension"]
        mine, other = (rc, lc) if side == 1 else (lc, rc)
        if dim not in mine:
            continue
        kinds = [_class_of(v, classes) for v in cat.invars]
        if len(set(kinds)) < 2:
            continue
        other_dim = other[list(mine).index(dim)]
        runs: list[tuple[int, list]] = []     # (class, parts) of consecutive parts
        for var, kind in zip(cat.invars, kinds):
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(var)
            else:
                runs.append((kind, [var]))
        total, at = None, 0
        full = _read(eqn.invars[1 - side], env)
        for _, parts in runs:
            values = [_read(v, env) for v in parts]
            piece = values[0] if len(values) == 1 else lax.concatenate(values, dim)
            width = piece.shape[dim]
            sliced = lax.slice_in_dim(full, at, at + width, axis=other_dim)
            at += width
            args = (sliced, piece) if side == 1 else (piece, sliced)
            product = eqn.primitive.bind(*args, **eqn.params)
            total = product if total is None else total + product
        return total
    return None


def _bind(eqn: Any, env: dict) -> None:
    params = eqn.primitive.get_bind_params(eqn.params)
    with eqn.ctx.manager:
        out = eqn.primitive.bind(*(_read(v, env) for v in eqn.invars), **params)
    if eqn.primitive.multiple_results:
        env.update(zip(eqn.outvars, out))
    else:
        env[eqn.outvars[0]] = out


def _read(var: Any, env: dict) -> Any:
    return var.val if _is_literal(var) else env[var]
