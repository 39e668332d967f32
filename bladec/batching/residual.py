"""Residuals kept from a training forward call for the backward call of the same group.

A backward kernel that recomputes its cell under ``jax.vjp`` runs every matrix product
of the cell three times per batch (forward, recomputed forward, and the two transposed
products of the vjp: four GEMMs for a cell with one product, where a tape-based
system such as DyNet runs three). The products are the cell's cost; the rest is
elementwise. So in training the forward kernel also writes the outputs of the cell's
matrix products that depend on the invocation (``dot_general`` with the batch axis in
its result) into a residual buffer per product, one row per invocation, and the backward
kernel evaluates the cell's jaxpr again with each such product replaced by its saved
value: a ``custom_vjp`` whose forward returns the saved rows and whose backward is the
product's own transpose rule on its operands. XLA then drops the recomputed product
(nothing reads it), leaving the two GEMMs of the gradient. Products of parameters alone
(no batch axis) and products inside other primitives' sub-jaxprs (``custom_jvp``
rules) are recomputed as before.

The rows: each call of a group writes its lanes at the group's rows ``start + 1 ...``
(a column of the index array, row 0 for padded lanes), so a residual buffer has one row
per invocation of the group plus the spare row 0, whatever the state buffers' rows are.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

PROBE = 7919      # a batch size no parameter dim is likely to equal (the shapes pass)


def _primitives() -> tuple[Any, Any]:
    from jax.extend.core.primitives import dot_general_p, jit_p
    return dot_general_p, jit_p


def _batch_axis(shape: Sequence[Any], n: Any) -> int | None:
    """The one axis of ``shape`` that is the batch (``n``: an int or a symbolic dim)."""
    if isinstance(n, int):
        axes = [i for i, d in enumerate(shape) if isinstance(d, int) and d == n]
    else:
        axes = [i for i, d in enumerate(shape) if not isinstance(d, int)]
    return axes[0] if len(axes) == 1 else None


def _evaluate(jaxpr: Any, consts: Sequence[Any], args: Sequence[Any],
              dot: Callable[[Any, list[Any]], Any]) -> list[Any]:
    """``jaxpr`` evaluated on ``args`` with every ``dot_general`` (also inside ``jit``
    sub-jaxprs) computed by ``dot(eqn, operands)``."""
    from jax.extend.core import Literal
    dot_general_p, jit_p = _primitives()
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v]
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals = [read(v) for v in eqn.invars]
        if eqn.primitive is dot_general_p:
            outs = [dot(eqn, vals)]
        elif eqn.primitive is jit_p:
            inner = eqn.params["jaxpr"]
            outs = _evaluate(inner.jaxpr, inner.consts, vals, dot)
        else:
            outs = eqn.primitive.bind(*vals, **eqn.primitive.get_bind_params(eqn.params))
            if not eqn.primitive.multiple_results:
                outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _saved(eqn: Any, n: Any) -> int | None:
    """The batch axis of a product worth keeping (a float result with one batch axis)."""
    aval = eqn.outvars[0].aval
    if not np.issubdtype(aval.dtype, np.floating):
        return None
    return _batch_axis(aval.shape, n)


def specs(flat_cell: Callable, avals: Sequence[Any]) -> list[tuple[tuple, str]]:
    """Per kept product of the batched cell (in evaluation order): its row's shape and
    dtype. ``avals``: the cell's input leaves at batch size :data:`PROBE`."""
    import jax
    closed = jax.make_jaxpr(flat_cell)(*avals)
    out: list[tuple[tuple, str]] = []

    def dot(eqn: Any, vals: list[Any]) -> Any:
        axis = _saved(eqn, PROBE)
        aval = eqn.outvars[0].aval
        if axis is not None:
            shape = list(aval.shape)
            del shape[axis]
            out.append((tuple(shape), np.dtype(aval.dtype).name))
        return jax.ShapeDtypeStruct(aval.shape, aval.dtype)
    _walk(closed.jaxpr, dot)
    return out


def product_weights(flat_cell: Callable, avals: Sequence[Any]) -> frozenset[int]:
    """The input leaves of the batched cell that are an operand, as given, of a kept
    product whose other operand carries the batch (a weight ``W`` of ``W @ x``): their
    cotangent is that product's transpose against the batch's rows alone, so the
    backward may sum it once over every invocation of a batch (program.backward_fn's
    weights' part), needing no other input's cotangent. ``avals``: as :func:`specs`."""
    import jax
    return _product_inputs(jax.make_jaxpr(flat_cell)(*avals).jaxpr)


def _product_inputs(jaxpr: Any) -> frozenset[int]:
    """:func:`product_weights` of a traced cell (the top level: there an input is its
    own variable)."""
    from jax.extend.core import Literal
    dot_general_p, _ = _primitives()
    inputs = {v: i for i, v in enumerate(jaxpr.invars)}
    found: set[int] = set()
    for eqn in jaxpr.eqns:
        if eqn.primitive is not dot_general_p or _saved(eqn, PROBE) is None:
            continue
        for operand in eqn.invars:
            i = None if isinstance(operand, Literal) else inputs.get(operand)
            if i is not None and PROBE not in operand.aval.shape:
                found.add(i)
    return frozenset(found)


def _walk(jaxpr: Any, dot: Callable) -> None:
    """The products of ``jaxpr`` in :func:`_evaluate`'s order, without evaluating."""
    dot_general_p, jit_p = _primitives()
    for eqn in jaxpr.eqns:
        if eqn.primitive is dot_general_p:
            dot(eqn, [])
        elif eqn.primitive is jit_p:
            _walk(eqn.params["jaxpr"].jaxpr, dot)


def recording(flat_cell: Callable, leaves: Sequence[Any], n: Any
              ) -> tuple[list[Any], list[Any]]:
    """The batched cell's output leaves and its kept products, each moved to rows
    (batch axis first)."""
    import jax
    import jax.numpy as jnp
    dot_general_p, _ = _primitives()
    closed = jax.make_jaxpr(flat_cell)(*leaves)
    kept: list[Any] = []

    def dot(eqn: Any, vals: list[Any]) -> Any:
        axis = _saved(eqn, n)
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lhs, rhs = vals
        free = lhs.ndim - len(lc)             # the result's dims from the left operand
        if axis is None or lb or axis < free:
            out = dot_general_p.bind(*vals, **eqn.params)
            if axis is not None:
                kept.append(jnp.moveaxis(out, axis, 0))
            return out
        # the batch axis is the right operand's (``W @ x`` vmapped): the product is
        # computed right operand first, so that it comes out in rows as it is kept and
        # the weight is the GEMM's right side (XLA:CPU's library GEMM takes it that way
        # also when the weight arrives transposed; the other way round, with the result
        # read twice, XLA kept a [features, n] product and ran its own, slower loop)
        swapped = dot_general_p.bind(rhs, lhs, **dict(
            eqn.params, dimension_numbers=((rc, lc), (rb, lb))))
        back = swapped.ndim - free
        kept.append(jnp.moveaxis(swapped, axis - free, 0))
        return jnp.transpose(swapped, (*range(back, swapped.ndim), *range(back)))
    outs = _evaluate(closed.jaxpr, closed.consts, leaves, dot)
    return outs, kept


def replaying(flat_cell: Callable, leaves: Sequence[Any], n: Any
              ) -> Callable[..., list[Any]]:
    """``f(kept, *leaves)``: the batched cell with its kept products read from ``kept``
    (rows, batch axis first), differentiable: each product's cotangents are its
    transposes, and a kept row's cotangent is the product's own (the cotangent of its
    result, which the weights' part of the backward reads: :func:`weight_grads`)."""
    import jax
    dot_general_p, _ = _primitives()
    closed = jax.make_jaxpr(flat_cell)(*leaves)

    def f(kept: Sequence[Any], *xs: Any) -> list[Any]:
        rows = iter(kept)

        def dot(eqn: Any, vals: list[Any]) -> Any:
            axis = _saved(eqn, n)
            if axis is None:
                return dot_general_p.bind(*vals, **eqn.params)
            import jax.numpy as jnp
            return _product(eqn.params)(*vals, jnp.moveaxis(next(rows), 0, axis))
        return _evaluate(closed.jaxpr, closed.consts, xs, dot)
    return f


def _product(params: dict[str, Any]) -> Callable:
    """A product whose value is given (``saved``) and whose vjp is the product's."""
    import jax
    dot_general_p, _ = _primitives()

    def bound(a: Any, b: Any) -> Any:
        return dot_general_p.bind(a, b, **params)

    @jax.custom_vjp
    def product(a: Any, b: Any, saved: Any) -> Any:
        return saved

    def forward(a: Any, b: Any, saved: Any) -> tuple[Any, Any]:
        return saved, (a, b)

    def backward(res: Any, g: Any) -> tuple[Any, Any, Any]:
        a, b = res
        _, vjp = jax.vjp(bound, a, b)
        ga, gb = vjp(g)
        return ga, gb, g
    product.defvjp(forward, backward)
    return product


def weights_only_in_products(flat_cell: Callable, avals: Sequence[Any]) -> bool:
    """Whether the cell has product weights (:func:`product_weights`) and each is read
    only as an operand of kept products at the top level of the batched cell: then its
    cotangent is the sum of those products' transposes against their results'
    cotangents, which the backward per depth keeps (:func:`weight_grads`), and nothing
    else. ``avals``: as :func:`specs`."""
    import jax
    from jax.extend.core import Literal
    dot_general_p, _ = _primitives()
    jaxpr = jax.make_jaxpr(flat_cell)(*avals).jaxpr
    weights = _product_inputs(jaxpr)
    wanted = {v for i, v in enumerate(jaxpr.invars) if i in weights}
    for eqn in jaxpr.eqns:
        kept = eqn.primitive is dot_general_p and _saved(eqn, PROBE) is not None
        for v in eqn.invars:
            if not isinstance(v, Literal) and v in wanted and not kept:
                return False
    return bool(wanted) and not any(v in wanted for v in jaxpr.outvars
                                    if not isinstance(v, Literal))


def weight_grads(flat_cell: Callable, leaves: Sequence[Any], n: Any, kept: Sequence[Any],
                 cotangents: Sequence[Any], weights: Sequence[int]) -> list[Any]:
    """The cotangents of the input leaves ``weights`` (their positions, each read only
    by kept products: :func:`weights_only_in_products`): per product that reads one,
    its transpose against the product's result's cotangent (``cotangents``, rows like
    ``kept``). The cell runs with its products read from ``kept``, so what is computed
    besides the transposes is what their other operands need (XLA drops the rest)."""
    import jax
    import jax.numpy as jnp
    dot_general_p, _ = _primitives()
    closed = jax.make_jaxpr(flat_cell)(*leaves)
    wanted = set(weights)
    position = {v: i for i, v in enumerate(closed.jaxpr.invars) if i in wanted}
    sums: dict[int, Any] = {}
    rows = iter(zip(kept, cotangents))
    top = {id(e) for e in closed.jaxpr.eqns}

    def dot(eqn: Any, vals: list[Any]) -> Any:
        axis = _saved(eqn, n)
        if axis is None:
            return dot_general_p.bind(*vals, **eqn.params)
        saved, g = next(rows)
        if id(eqn) in top:
            for side, v in enumerate(eqn.invars):
                i = position.get(v)
                if i is None:
                    continue
                _, vjp = jax.vjp(lambda a, b: dot_general_p.bind(a, b, **eqn.params), *vals)
                part = vjp(jnp.moveaxis(g, 0, axis))[side]
                sums[i] = part if i not in sums else sums[i] + part
        return jnp.moveaxis(saved, 0, axis)
    _evaluate(closed.jaxpr, closed.consts, leaves, dot)
    return [sums[i] for i in weights]   # each is read by a product (the check above)
