"""The contraction order of ``jnp.einsum`` under symbolic shapes, chosen at real sizes.

``jnp.einsum`` of three or more operands picks its pairwise contraction order with
opt_einsum, from the operands' sizes. Traced with symbolic dims (as the importer and
``bladec.jit`` trace), JAX prices every symbolic dim as 8, whatever its true size, and
the order it picks can hold far more than the one ``jax.jit`` picks at the sizes it is
called with: an imported top-2 mixture of experts whose combine is
``einsum("tec,te,ecd->td")`` held 1.30x ``jax.jit``'s device peak at T=192 for that
alone (benchmarks/bench_jit_ratio.py). A listing serves every size in its ranges, so
one order is chosen for all; this chooses it at sizes the caller names (the call that
made the trace, or the top of the declared ranges), as ``jax.jit`` would at those.

JAX has no public hook for this: the handler it consults for symbolic dims is swapped
for the duration of the trace, and where JAX's internals differ the default stays.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def einsum_sizes(values: dict[str, int]) -> Iterator[None]:
    """Within the block, ``jnp.einsum`` prices a symbolic dim at its value under
    ``values`` (JAX dimension variable -> size); dims it can not evaluate, as JAX does."""
    try:
        from jax._src.export import shape_poly
        from jax._src.numpy import einsum as einsum_module
        handlers = einsum_module._poly_einsum_handlers
        default = handlers[shape_poly._DimExpr]
    except (ImportError, AttributeError, KeyError):   # another JAX: keep its own choice
        yield
        return
    if not values:
        yield
        return

    def at_sizes(*operands: Any, **kwargs: Any) -> Any:
        import jax
        import opt_einsum

        fakes = [jax.ShapeDtypeStruct(tuple(_size(d, values) for d in op.shape), op.dtype)
                 if hasattr(op, "dtype") else op for op in operands]
        chosen, contractions = opt_einsum.contract_path(*fakes, **kwargs)
        by_id = {id(f): i for i, f in enumerate(fakes)}
        return [operands[by_id[id(f)]] for f in chosen], contractions

    handlers[shape_poly._DimExpr] = at_sizes
    try:
        yield
    finally:
        handlers[shape_poly._DimExpr] = default


def _size(dim: Any, values: dict[str, int]) -> int:
    """``dim`` (an int or a JAX symbolic expression) at ``values``; 8, JAX's own guess,
    where a variable is missing."""
    if isinstance(dim, int):
        return dim
    try:
        return max(int(dim._evaluate(values)), 1)
    except Exception:  # a variable not named, or an expression JAX can not evaluate here
        return 8
