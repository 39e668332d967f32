"""A ``bladec.jit`` function under JAX's transforms: ``jax.grad`` works, the others say why not.

bladec runs its own compiled segments outside JAX's tracing, so a transform that traces
the function (``jax.jit``, ``jax.vmap``, ``jax.checkpoint``) can not see inside it. Reverse
mode is different: ``jax.grad``/``jax.value_and_grad``/``jax.vjp`` call the function on
concrete arrays, and need of it only a forward and a backward. :func:`call_transformed`
gives them both as a ``jax.custom_vjp``: the forward is the function's own step, and the
backward is bladec's ``grad`` pass (bladec/passes/grad.py) over the listing of the same
function with the cotangents contracted into a scalar (``sum(out * cot)`` over its float
outputs), differentiated by every float input, optimized by the same passes and run by
the same engine under the same memory limit and padding. The backward keeps nothing
from the forward but its inputs (the forward is run again inside it, as a step's
rematerialization would): what a step saves for its backward is what the limit is about.

Under ``jax.vmap``, ``jax.jit`` or another trace the function meets JAX tracers instead of
arrays: a one-line :class:`BladecError` says what to do instead.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from bladec.errors import BladecError


def has_tracers(leaves: list[Any]) -> bool:
    import jax
    return any(isinstance(x, jax.core.Tracer) for x in leaves)


def refuse_tracers(name: str, leaves: list[Any]) -> None:
    """A one-line error where JAX traces the function (a transform other than reverse
    mode, or any transform under jax.jit)."""
    import jax
    tracers = [x for x in leaves if isinstance(x, jax.core.Tracer)]
    if not tracers:
        return
    # by name: JAX no longer exports its batching tracer's class
    if any(type(x).__name__ == "BatchTracer" for x in tracers):
        raise BladecError(f"jax.vmap of the bladec.jit function {name}: bladec runs its own "
                          f"compiled steps, which JAX can not batch; vmap inside the "
                          f"function and bladec.jit the batched function (its batch dim "
                          f"may be dynamic)")
    raise BladecError(f"{name} is a bladec.jit function, called inside jax.jit (or another "
                      f"JAX trace: jax.checkpoint, jax.jvp, lax control flow): bladec runs "
                      f"its own compiled steps outside JAX's trace; call it outside "
                      f"jax.jit, or bladec.jit the whole step instead of jax.jit")


def call_transformed(jitted: Any, call: Any) -> Any:
    """``jitted`` called with JAX tracers among ``call``'s arguments: through a custom
    VJP whose forward is the step and whose backward is bladec's own gradient."""
    import jax
    leaves, tree = jax.tree_util.tree_flatten(call.args)
    out_tree: list[Any] = []

    def forward(*xs: Any) -> tuple:
        refuse_tracers(jitted.__name__, list(xs))
        out = jitted._call(dataclasses.replace(call, args=tree.unflatten(xs)), retry=True)
        flat, structure = jax.tree_util.tree_flatten(out)
        out_tree[:] = [structure]
        return tuple(flat)

    def fwd(*xs: Any) -> tuple:
        return forward(*xs), xs

    def bwd(xs: tuple, cots: tuple) -> tuple:
        refuse_tracers(jitted.__name__, list(xs) + list(cots))
        return jitted._vjp(dataclasses.replace(call, args=tree.unflatten(xs)), list(cots))

    step = jax.custom_vjp(forward)
    step.defvjp(fwd, bwd)
    flat = step(*leaves)
    return out_tree[0].unflatten(flat)


def vjp_function(fn: Any, n_outputs: int, floats: list[bool]) -> Any:
    """``fn`` of the traced arguments and a last one, the tuple of the cotangents of its
    float outputs, returning ``sum(out * cot)``: a scalar loss whose gradient by the
    inputs is the vector-Jacobian product."""
    import jax
    import jax.numpy as jnp

    def loss(*args: Any) -> Any:
        *xs, cots = args
        outs = jax.tree_util.tree_leaves(fn(*xs))
        if len(outs) != n_outputs:
            raise BladecError(f"the function returned {len(outs)} outputs, {n_outputs} "
                              f"when it was traced")
        total = jnp.zeros((), jnp.float32)
        for out, cot in zip((o for o, f in zip(outs, floats) if f), cots):
            total = total + jnp.sum(out.astype(jnp.float32) * cot.astype(jnp.float32))
        return total
    return loss


def float_outputs(fn: Any, specs: tuple) -> tuple[list[Any], list[bool]]:
    """The output leaves' specs of ``fn`` at ``specs`` (symbolic dims kept), and which
    are floats (only they have cotangents)."""
    import jax
    outs = jax.tree_util.tree_leaves(jax.eval_shape(fn, *specs))
    floats = [bool(jax.dtypes.issubdtype(o.dtype, np.inexact)) for o in outs]
    return outs, floats


def cotangents(floats: list[bool], cots: list[Any]) -> list[Any]:
    """The cotangents of the float outputs (JAX gives integer outputs float0 ones)."""
    return [c for c, f in zip(cots, floats) if f]
