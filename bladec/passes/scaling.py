"""Dynamic loss scaling for f16 training: ``grad{scale=dynamic}``.

f16 has 5 exponent bits: a cotangent under 6e-8 (2^-24) is zero there, and in a small
network's first layers most are (the first step's gradient of the MLP's first layer
was 29.6% off with ``amp{dtype=f16}``). As in PyTorch's ``GradScaler`` and RAF, the
backward is seeded with a scale ``s`` instead of 1, so every cotangent is ``s`` times
larger while it passes through f16 contractions, and each gradient is divided by ``s``
in its own (f32) type at the end. A scale too large overflows: then the step is
skipped and the scale halved; after ``growth`` finite steps in a row it is doubled.

A listing is a pure function, so the scale's state is an input and an output of the
training function, which the caller feeds back as it feeds the weights:

- inputs ``%loss_scale: tensor<f32>`` (PyTorch starts at 65536.0) and
  ``%loss_scale_steps: tensor<i32>`` (finite steps since the last change; start at 0);
- outputs, after the loss and the gradients: ``%next_loss_scale``,
  ``%next_loss_scale_steps`` and ``%grads_finite: tensor<i1>``.

Where a gradient has an infinity or a NaN, every gradient returned is zero and
``%grads_finite`` is false: the SGD update is then no update at all (a skipped step);
an optimizer with state (Adam's moments) checks ``%grads_finite`` before it updates.
The loss returned is the unscaled one.
"""
from __future__ import annotations

from bladec.adjoint import Builder
from bladec.errors import BladecError
from bladec.ir import Func, Loc, TensorType, Value

SCALE, STEPS = "%loss_scale", "%loss_scale_steps"
NEXT_SCALE, NEXT_STEPS, FINITE = "%next_loss_scale", "%next_loss_scale_steps", "%grads_finite"
SCALAR_F32 = TensorType((), "f32")
SCALAR_I32 = TensorType((), "i32")


def state_inputs(func: Func) -> list[Value]:
    """The two inputs of the scale's state, checked not to clash with the function's."""
    taken = {a.name for a in func.args} | set(func.value_types())
    for name in (SCALE, STEPS, NEXT_SCALE, NEXT_STEPS, FINITE):
        if name in taken:
            raise BladecError(f"grad{{scale=dynamic}}: @{func.name} already has a value "
                              f"named {name}, which loss scaling adds", func.loc)
    return [Value(SCALE, SCALAR_F32), Value(STEPS, SCALAR_I32)]


def seed(b: Builder, loss: str) -> str:
    """The backward's seed: the scale, in the loss's type."""
    b.types.setdefault(SCALE, SCALAR_F32)
    b.types.setdefault(STEPS, SCALAR_I32)
    return b.convert(SCALE, b.type(loss).dtype)


def unscale(b: Builder, grads: list[str], growth: int, loc: Loc) -> tuple[list[str], list[str]]:
    """Each gradient divided by the scale, all zero where any is not finite; and the
    three state outputs (next scale, next step count, whether the step counts)."""
    b.loc = loc
    inv = b.div(b.const(1.0, SCALAR_F32), SCALE)
    out, worst = [], None
    for g in grads:
        t = b.type(g)
        u = b.mul(g, b.broadcast(b.convert(inv, t.dtype), [], t))
        top = b.convert(b.reduce_max(b.unary("abs", u)), "f32")
        worst = top if worst is None else b.binary("max", worst, top)
        out.append(u)
    # NaN < inf is false, as inf < inf is: one comparison finds both
    finite = b.compare(worst, b.const(float("inf"), SCALAR_F32), "LT") if worst \
        else b.compare(SCALE, SCALE, "EQ")
    kept = []
    for u in out:
        t = b.type(u)
        zero = b.const(0.0, t)
        kept.append(b.select(b.broadcast(finite, [], TensorType(t.dims, "i1", t.binds)),
                             u, zero))
    steps = b.add(STEPS, b.const(1, SCALAR_I32))
    grow = b.compare(steps, b.const(growth, SCALAR_I32), "GE")
    scale_ok = b.select(grow, b.mul(SCALE, b.const(2.0, SCALAR_F32)), SCALE)
    steps_ok = b.select(grow, b.const(0, SCALAR_I32), steps)
    next_scale = b.select(finite, scale_ok, b.mul(SCALE, b.const(0.5, SCALAR_F32)))
    next_steps = b.select(finite, steps_ok, b.const(0, SCALAR_I32))
    return kept, [next_scale, next_steps, finite]
