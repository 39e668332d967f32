"""The kernel sets that bladec/emit/lower.py computes with on ``jax.numpy``: plain (XLA
fuses as it likes), every op behind an optimization barrier (``--bitwise``: results that
do not depend on where a plan cuts the graph), and every op ordered after the previous one
(the schedule holds inside the executable). The JAX backend picks one per segment.
"""
from __future__ import annotations

from typing import Any, Callable

from bladec.emit.lower import OutSpec
from bladec.ir import Op
from bladec.runtime.backends.backend import numpy_dtype


class _JaxKernels:
    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp
        self.jax = jax
        self.np = jnp

    @staticmethod
    def dtype(name: str) -> Any:
        return numpy_dtype(name)

    def dot_general(self, a: Any, b: Any, op: Op, accumulate: str) -> Any:
        lb, rb = tuple(op.attrs.get("lhs_batch", ())), tuple(op.attrs.get("rhs_batch", ()))
        lc, rc = tuple(op.attrs["lhs_contract"]), tuple(op.attrs["rhs_contract"])
        wider = numpy_dtype(accumulate) if numpy_dtype(accumulate) != a.dtype else None
        if wider is not None and self.jax.default_backend() == "cpu":
            # XLA:CPU has no bf16 x bf16 = f32 dot kernel ("DotThunk"); the operands
            # widened first give the same numbers (a product of two bf16 or f16 values is
            # exact in f32, and the sums are f32 either way). reduce_precision keeps them
            # the low type's values: with its default excess precision XLA drops an
            # f32 -> bf16 -> f32 round trip, and the listing's rounding with it
            bits = {"bfloat16": (8, 7), "float16": (5, 10)}[str(a.dtype)]
            a, b = (self.jax.lax.reduce_precision(x.astype(wider), *bits) for x in (a, b))
            wider = None
        return self.jax.lax.dot_general(a, b, ((lc, rc), (lb, rb)),
                                        precision=self.jax.lax.Precision.HIGHEST,
                                        preferred_element_type=wider)

    @staticmethod
    def scatter_add(base: Any, ids: Any, updates: Any) -> Any:
        return base.at[ids].add(updates)

    def materialize(self, x: Any) -> Any:
        return x

    def stop_gradient(self, x: Any) -> Any:
        return self.jax.lax.stop_gradient(x)

    def rng_uniform(self, seed: int, shape: tuple, dtype: Any) -> Any:
        return self.jax.random.uniform(self.jax.random.key(seed), shape, dtype)

    def scan(self, step: Callable, carry: list, xs: list, reverse: bool, ys: OutSpec
             ) -> tuple[list, list]:
        """``lax.scan``: one XLA while loop inside the segment's executable."""
        def body(c: tuple, x: tuple) -> tuple[tuple, tuple]:
            new, out = step(list(c), list(x))
            return tuple(new), tuple(out)
        final, stacked = self.jax.lax.scan(body, tuple(carry), tuple(xs), reverse=reverse)
        return list(final), list(stacked)

    def while_loop(self, cond: Callable, body: Callable, carry: list) -> list:
        """``lax.while_loop``: one XLA while loop inside the segment's executable."""
        final = self.jax.lax.while_loop(lambda c: cond(list(c)),
                                        lambda c: tuple(body(list(c))), tuple(carry))
        return list(final)


JaxKernels = _JaxKernels  # the kernel set of bladec/emit/lower.py on jax.numpy


class _BarrierJaxKernels(_JaxKernels):
    """Every op result behind ``lax.optimization_barrier``: no XLA pass can rewrite
    across ops (the algebraic simplifier would turn a reduce of a broadcast into a
    multiply, or a divide by a broadcast into a multiply by a reciprocal, but only when
    both ops land in one segment), so each op computes what it computes alone and the
    results do not depend on where a plan cuts the graph. The simplifier stays on within
    each op: with it off (as before), XLA took 30 s instead of 4 s to compile the 546-op
    Llama training step."""

    def materialize(self, x: Any) -> Any:
        return self.jax.lax.optimization_barrier(x)


class _OrderedJaxKernels(_JaxKernels):
    """XLA fuses as usual within each op, but every op's operands pass through one
    ``lax.optimization_barrier`` together with the previous op's results, so XLA can not
    run an op before the one the listing puts before it: bladec's schedule then holds
    inside the executable. Measured on the small Llama training step (CPU, whole-graph
    executables, benchmarks/bench_order.py): XLA's reordering of a plain jit gives the
    same bytes for the imported and the scheduled order, and the enforced order needs
    0.76-0.86x of them from 8x128 up, at no cost in step time there (XLA's cross-op
    fusions on CPU were no faster)."""

    def after(self, operands: list, previous: list) -> list:
        operands, _ = self.jax.lax.optimization_barrier((operands, previous))
        return operands

    def made_after(self, results: list, previous: list) -> list:
        """The results of an op that reads nothing (a constant, an iota), made after the
        previous op's: each minus a zero (or, for booleans, or-ed with false) that comes
        out of a barrier with the previous results. Without it nothing holds such an op
        in place, and XLA's scheduler hoists it, with the ops that read only it, to the
        start of the executable: in a backward segment of the small Llama step at 8x256
        two [8,4,256,256] f32 constants and the causal mask's broadcast were made first
        and held across the segment, 18 MiB the planner's model did not count. XLA
        fuses the subtraction into the op's broadcast or iota (no buffer more), and
        ``x - 0`` is ``x`` for every ``x``, -0.0 and NaN included."""
        np = self.np
        zeros = [np.zeros((), r.dtype) for r in results]
        zeros, _ = self.jax.lax.optimization_barrier((zeros, previous))
        return [np.logical_or(r, z) if r.dtype == np.bool_ else r - z
                for r, z in zip(results, zeros)]
