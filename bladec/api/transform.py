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
from dataclasses import dataclass
from typing import Any, Callable

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


@dataclass
class Backward:
    """The vector-Jacobian product of a trace: its engine, the names of its inputs (the
    trace's leaves, then the float outputs' cotangents), the inputs it differentiates
    by, which outputs are floats, and its closed-over arrays (placed)."""
    engine: Any
    inputs: list[str]
    cots: list[str]
    wrt: list[str]
    floats: list[bool]
    constants: dict[str, Any]


def backward(call: Any, traced: Any, leaves: list[Any], passes: Any,
             make_engine: Callable[[Any, list], Any]) -> Backward:
    """The engine of the vector-Jacobian product of ``traced`` (a trace of ``call``):
    its function with the outputs' cotangents contracted into a scalar
    (:func:`vjp_function`), traced at the same symbolic shapes, differentiated by
    bladec's ``grad`` pass ahead of ``passes`` (the trace's own pipeline), and made an
    engine by ``make_engine(imported, passes)`` (the same limit and padding)."""
    import jax
    import jax.numpy as jnp

    from bladec.frontend.jax_import import trace
    from bladec.passes import DEFAULT_PIPELINE, parse_pipeline
    from bladec.passes.grad import GradPass
    outs, floats = float_outputs(call.fn, traced.specs)
    cot_specs = tuple(jax.ShapeDtypeStruct(o.shape, o.dtype)
                      for o, f in zip(outs, floats) if f)
    fn = vjp_function(call.fn, len(outs), floats)
    imported = trace(fn, (*traced.specs, cot_specs), arg_names=list(call.names) + ["cot"],
                     ranges=traced.ranges, capture=True, stop_gradients=True)
    n = len(leaves)
    inputs, cots = imported.input_names[:n], imported.input_names[n:]
    wrt = tuple(name for name, x in zip(inputs, leaves)
                if jax.dtypes.issubdtype(x.dtype, jnp.inexact))
    pipeline = passes if passes is not None else DEFAULT_PIPELINE
    if isinstance(pipeline, str):
        pipeline = parse_pipeline(pipeline)
    engine = make_engine(imported, ([GradPass(wrt=wrt)] if wrt else []) + list(pipeline))
    constants = {k: engine.backend.put(a) for k, a in imported.constants.items()}
    return Backward(engine, inputs, cots, list(wrt), floats, constants)
