"""benchmarks/support/hlo.py's op counts by family, on a hand-written module and on an
executable XLA compiled (the format of ``as_text()``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.support.hlo import FAMILIES, op_counts

TEXT = """HloModule m, is_scheduled=true

%fill (p: f32[]) -> f32[4,8] {
  %p = f32[] parameter(0)
  ROOT %b = f32[4,8]{1,0} broadcast(%p), dimensions={}
}

%loop (a: f32[4,8], b: f32[4,8]) -> f32[8,4] {
  %a = f32[4,8]{1,0} parameter(0)
  %b = f32[4,8]{1,0} parameter(1)
  %d = f32[4,8]{1,0} divide(%a, %b)
  %c = pred[4,8]{1,0} compare(%a, %b), direction=GT
  %s = f32[4,8]{1,0} select(%c, %d, %a)
  ROOT %t = f32[8,4]{1,0} transpose(%s), dimensions={1,0}
}

%dotted (x: f32[8,4], y: f32[4,8]) -> f32[8,8] {
  %x = f32[8,4]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  ROOT %z = f32[8,8]{1,0} dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main (x: f32[4,8]) -> f32[8,8] {
  %x = f32[4,8]{1,0} parameter(0)
  %k = f32[] constant(0)
  %f = f32[4,8]{1,0} fusion(%k), kind=kLoop, calls=%fill
  %l = f32[8,4]{1,0} fusion(%x, %f), kind=kLoop, calls=%loop
  %c = f32[8,4]{1,0} copy(%l)
  %u = f32[8,8]{1,0} fusion(%c, %x), kind=kCustom, calls=%dotted
  ROOT %v = f32[8,8]{1,0} dot(%u, %u), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_families_of_a_written_module():
    c = op_counts(TEXT)
    assert set(c) == set(FAMILIES)
    assert (c["kernels"], c["loop fusions"], c["dot kernels"], c["copies"]) == (5, 2, 2, 1)
    assert c["broadcasts written"] == 1       # the fill, not the loop that reads it
    assert (c["transpose"], c["divide"], c["compare+select"], c["broadcast"]) == (1, 1, 2, 1)
    # instructions, parameters aside: the entry's constant, three fusions, copy and dot,
    # and inside the broadcast, divide, compare, select, transpose and dot
    assert c["instructions"] == 12


def test_counts_of_a_compiled_executable():
    def f(x, y):
        return jnp.sum(jnp.tanh(x @ y.T) / jnp.sum(x))
    x = np.ones((16, 32), np.float32)
    text = jax.jit(f).lower(x, x).compile().as_text()
    c = op_counts(text)
    assert c["dot kernels"] >= 1 and c["kernels"] >= c["dot kernels"]
    assert c["reduce"] >= 2 and c["instructions"] > c["kernels"]
