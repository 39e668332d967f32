"""Lowerings of the ops that read shapes (``dim_size``, ``broadcast_like``) and of the
structured reshapes (``split_dim``, ``merge_dims``), both defined in bladec/ops/shape.py.
Their results follow from shapes alone, which the runtime knows."""
from __future__ import annotations

from typing import Any

from bladec.emit.lower import Kernels, OutSpec, _broadcast, lowering
from bladec.ir import Op


@lowering("dim_size")
def _dim_size(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """A dim of the operand's shape: static once the segment is traced for a binding."""
    x = a[0]
    return K.np.asarray(x.shape[int(op.attrs["dim"]) % x.ndim], dtype=K.dtype(out[0][1]))


@lowering("split_dim", "merge_dims")
def _regroup(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """Reshapes whose structure is for the analysis; the result shape says it all."""
    return K.np.reshape(a[0], out[0][0])


@lowering("broadcast_like")
def _broadcast_like(K: Kernels, op: Op, a: list, out: OutSpec) -> Any:
    """broadcast_in_dim of x to the result shape; the references only lend their dims."""
    return _broadcast(K, Op("broadcast_in_dim", [], [], {"dims": op.attrs.get("dims", ())},
                            loc=op.loc), a[:1], out)
