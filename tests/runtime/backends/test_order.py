"""The JAX backend's held order (CPU): an op that reads nothing stays where the listing
puts it.

``_OrderedJaxKernels`` ties each op's operands to the previous op's results through a
barrier; a constant or an iota has no operands, so before ``made_after`` XLA's scheduler
made it (and the ops reading only it) at the executable's start and held it to its
use: on the small Llama step's backward segments 8-18 MiB more than bladec's model at
8x256, enough that no plan under 0.82x of the whole step was found.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bladec.parse import parse_module
from bladec.runtime.backends.jax_backend import JaxBackend, whole_graph
from bladec.runtime.executor import Executor

N = 512   # a [N, N] f32 value is 1 MiB

LATE = f"""
func.func @main(%x: tensor<{N}x{N}>) {{
  %a = exp(%x) -> tensor<{N}x{N}>
  %b = exp(%a) -> tensor<{N}x{N}>
  %c = mul(%a, %b) -> tensor<{N}x{N}>
  %r = reduce(%c) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %k = constant() {{value = 0.5}} -> tensor<{N}x{N}>
  %i = iota() {{dim = 0}} -> tensor<{N}x{N}>
  %m = mul(%k, %i) -> tensor<{N}x{N}>
  %n = reduce(%m) {{dims = [0, 1], kind = "sum"}} -> tensor<f32>
  %s = add(%r, %n) -> tensor<f32>
  return %s
}}
"""


def _one_segment(ex: Executor) -> tuple[Any, Any]:
    """The listing's ops as one segment of ``ex``'s backend (in the held order), and
    ``jax.jit`` of the same ops (the reference)."""
    shapes, dtypes = ex.shapes_for({}), ex.info.dtypes
    ops = list(ex.func.ops)
    specs = {id(op): [(shapes[r], dtypes[r]) for r in op.result_names] for op in ops}
    segment = ex.backend.segment(ops, ex.inputs, ex.outputs, specs,
                                 [(shapes[n], dtypes[n]) for n in ex.inputs])
    return segment, whole_graph(ops, ex.inputs, ex.outputs, shapes, dtypes)


def test_a_constant_and_an_iota_are_made_where_the_listing_puts_them() -> None:
    """In the listing's order at most three [N, N] values are alive at once (%a, %b and
    %c; then %k, %i and %m, after the first three are gone): the segment's XLA
    temporaries stay within three of them. With the constant and the iota made first
    and held to their use, XLA needed five. The values are jax.jit's."""
    ex = Executor(parse_module(LATE), JaxBackend())
    backend = ex.backend
    assert backend.enforce_order   # these tests run on CPU
    segment, whole = _one_segment(ex)
    value = N * N * 4
    assert segment.memory().temp_bytes <= 3 * value + 4096
    x = backend.put(ex.random_inputs({})[ex.inputs[0]])
    got = float(segment([x])[0])
    want = float(whole(x)[0])
    assert abs(got - want) <= 1e-5 * abs(want)


D = 16
ATTENTION = f"""
func.func @main(%q: tensor<{N}x{D}>, %k: tensor<{N}x{D}>, %v: tensor<{N}x{D}>) {{
  %s = dot_general(%q, %k) {{lhs_contract = [1], rhs_contract = [1]}} -> tensor<{N}x{N}>
  %c = constant() {{value = 0.25}} -> tensor<{N}x{N}>
  %t = mul(%s, %c) -> tensor<{N}x{N}>
  %m = reduce(%t) {{dims = [1], kind = "max"}} -> tensor<{N}>
  %bm = broadcast_in_dim(%m) {{dims = [0]}} -> tensor<{N}x{N}>
  %d = sub(%t, %bm) -> tensor<{N}x{N}>
  %e = exp(%d) -> tensor<{N}x{N}>
  %z = reduce(%e) {{dims = [1], kind = "sum"}} -> tensor<{N}>
  %bz = broadcast_in_dim(%z) {{dims = [0]}} -> tensor<{N}x{N}>
  %p = div(%e, %bz) -> tensor<{N}x{N}>
  %o = dot_general(%p, %v) {{lhs_contract = [1], rhs_contract = [0]}} -> tensor<{N}x{D}>
  return %o
}}
"""


def test_a_broadcast_or_splat_constant_of_the_scores_shape_is_made_inside_its_reader(
        ) -> None:
    """Softmax attention: each [N, N] broadcast (of the row max, of the row sum) and the
    splat 0.25 is made inside the op that reads it (OpDef.expanding), so at most two
    scores-shaped values are alive at once (%s and %t, %t and %d, %e and %p), as the
    planner's model now sizes them (by their operands). Each made behind its own
    barrier, XLA held three. The values are jax.jit's."""
    ex = Executor(parse_module(ATTENTION), JaxBackend())
    backend = ex.backend
    segment, whole = _one_segment(ex)
    value = N * N * 4
    assert segment.memory().temp_bytes <= 2 * value + 4096
    sizes = ex._bound({}).sizes
    assert sizes["%bm"] == sizes["%m"] == N * 4 and sizes["%c"] == 4
    assert sizes["%t"] == value
    inputs = ex.random_inputs({})
    args = [backend.put(inputs[n]) for n in ex.inputs]
    got = np.asarray(segment(args)[0])
    want = np.asarray(whole(*args)[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_causal_mask_is_made_from_nothing_inside_its_reader() -> None:
    """A compare of two iotas (the causal mask) and its broadcast read nothing but the
    index, so they are made inside their reader as the constants are (registry.remade):
    the model sizes them at a few bytes, not their [N, N] extent, and a value the plan
    evicts beside them can not leave them materialized. A compare of a real value is
    not so made."""
    from bladec.ops.registry import remade
    text = f"""
func.func @main(%x: tensor<{N}x{N}>) {{
  %i = iota() {{dim = 0}} -> tensor<{N}x{N}xi32>
  %j = iota() {{dim = 1}} -> tensor<{N}x{N}xi32>
  %m = compare(%i, %j) {{direction = "GE"}} -> tensor<{N}x{N}xi1>
  %c = constant() {{value = -1000000000.0}} -> tensor<{N}x{N}>
  %s = select(%m, %x, %c) -> tensor<{N}x{N}>
  %z = constant() {{value = 0.0}} -> tensor<{N}x{N}>
  %g = compare(%x, %z) {{direction = "GT"}} -> tensor<{N}x{N}xi1>
  %t = select(%g, %s, %x) -> tensor<{N}x{N}>
  return %t
}}
"""
    ex = Executor(parse_module(text), JaxBackend())
    made = remade(ex.func.ops, set(ex.outputs))
    assert set(made) == {"%i", "%j", "%m", "%c", "%z"}
    sizes = ex._bound({}).sizes
    assert sizes["%m"] <= 8 and sizes["%g"] == N * N
    backend = ex.backend
    segment, whole = _one_segment(ex)
    x = backend.put(ex.random_inputs({})[ex.inputs[0]])
    got = np.asarray(segment([x])[0])
    want = np.asarray(whole(x)[0])
    np.testing.assert_array_equal(got, want)
