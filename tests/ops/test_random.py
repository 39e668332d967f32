"""Random bits under a key passed in: u32, the bitwise ops and ``threefry``, imported from
``jax.random`` and run on both backends, bit for bit what JAX draws; and their errors."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from bladec.cli import main
from bladec.errors import BladecError
from bladec.frontend import trace
from bladec.parse import parse_module
from bladec.printer import format_module
from bladec.runtime.backends.backend import NumpyBackend
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend

from tests.support.clirunner import make_runner

KEY = jax.ShapeDtypeStruct((2,), jnp.uint32)


def draws(key, x):
    """Dropout, a split, a fold_in, uniform draws and raw bits: what training code does."""
    k1, k2 = jax.random.split(key)
    keep = jax.random.bernoulli(k1, 0.9, x.shape)
    return (jnp.where(keep, x / 0.9, 0.0), jax.random.uniform(jax.random.fold_in(k2, 7), (3,)),
            jax.random.bits(k2, x.shape), jax.random.split(k2, 3))


@pytest.fixture(scope="module")
def imported():
    B, S = export.symbolic_shape("B, S")
    return trace(draws, (KEY, jax.ShapeDtypeStruct((B, S), jnp.float32)), hints=False)


@pytest.mark.parametrize("backend", [NumpyBackend, JaxBackend], ids=["numpy", "jax"])
@pytest.mark.parametrize("seed, shape", [  # seed 42: `make bench` (issue 36)
    (0, (2, 3)), pytest.param(42, (5, 7), marks=pytest.mark.slow), (2 ** 31 + 5, (1, 1))])
def test_draws_are_jaxs_bit_for_bit(imported, backend, seed, shape):
    key = np.asarray(jax.random.PRNGKey(seed))
    x = np.random.default_rng(seed % 97).standard_normal(shape).astype(np.float32)
    out, _ = Executor(imported.module, backend()).run(imported.flatten_inputs(key, x))
    got = imported.unflatten_outputs(out)
    # JAX's draws as JAX runs them where bladec runs them: op by op (NumPy), or as one
    # XLA program (at no limit the step may run in XLA's own order, which fuses the
    # transforms of the bits: wholestep.py; eager JAX rounds a normal's last bit apart)
    want = draws(key, x) if backend is NumpyBackend else jax.jit(draws)(key, x)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_listing_names_the_ops_and_round_trips(imported):
    text = format_module(imported.module)
    assert "%key: tensor<2xu32>" in text
    assert "threefry(%key, " in text and "bit_xor(" in text
    assert 'bitcast(' in text and "shift_right_logical(" in text
    assert format_module(parse_module(text)) == text
    assert imported.hints == []        # the counters' dims are the analysis's own


SHIFTS = """func.func @main(%a: tensor<4xu32>, %s: tensor<4xu32>, %i: tensor<4xi32>, %t: tensor<4xi32>) {
  %l = shift_left(%a, %s) -> tensor<4xu32>
  %r = shift_right_logical(%a, %s) -> tensor<4xu32>
  %n = shift_left(%i, %t) -> tensor<4xi32>
  %f = bitcast(%a) {dtype = "f32"} -> tensor<4xf32>
  %o = bit_or(%a, %s) -> tensor<4xu32>
  %x = bit_and(%i, %t) -> tensor<4xi32>
  return %l, %r, %n, %f, %o, %x
}
"""


@pytest.mark.parametrize("backend", [NumpyBackend, JaxBackend], ids=["numpy", "jax"])
def test_shifts_out_of_range_give_zero_as_in_xla(backend):
    a = np.array([1, 0x80000000, 0xFFFFFFFF, 0x3F800000], np.uint32)
    s = np.array([31, 32, 40, 0], np.uint32)
    i = np.array([1, -1, 7, 3], np.int32)
    t = np.array([3, -1, 32, 31], np.int32)
    out, _ = Executor(parse_module(SHIFTS), backend()).run({"%a": a, "%s": s, "%i": i, "%t": t})
    want = [jax.lax.shift_left(a, s), jax.lax.shift_right_logical(a, s),
            jax.lax.shift_left(i, t), jax.lax.bitcast_convert_type(a, jnp.float32),
            a | s, i & t]
    for name, w in zip(["%l", "%r", "%n", "%f", "%o", "%x"], want):
        np.testing.assert_array_equal(out[name], np.asarray(w), err_msg=name)


@pytest.mark.parametrize("body, message", [
    ('%r = bitcast(%a) {dtype = "f16"} -> tensor<4xf16>', "widths differ"),
    ("%r = shift_right_logical(%i, %i) -> tensor<4xi32>", "needs an unsigned type"),
    ("%r = bit_or(%f, %f) -> tensor<4xf32>", "needs an integer type"),
    ("%r, %q = threefry(%a, %a, %a) -> tensor<4xu32>, tensor<4xu32>", "the key's length"),
    ("%r, %q = threefry(%k, %i, %i) -> tensor<4xi32>, tensor<4xi32>", "must be u32"),
])
def test_bad_bit_ops_are_located_errors(tmp_path, body, message):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main(%a: tensor<4xu32>, %i: tensor<4xi32>, %f: tensor<4xf32>, "
                    f"%k: tensor<2xu32>) {{\n  {body}\n  return %r\n}}\n")
    result = make_runner().invoke(main, ["optimize", str(path)])
    assert result.exit_code == 1, result.output
    assert f"{path}:2:" in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


def _bits8(key, x):
    return jax.random.bits(key, x.shape, jnp.uint8)


def _batched(keys, x):
    return jax.vmap(lambda k: jax.random.uniform(k, (3,)))(keys)


def _typed(key, x):
    return jax.random.uniform(key, x.shape)


def _randint(key, x):
    return jax.random.randint(key, x.shape, 0, 10)   # slices a typed key array inside


@pytest.mark.parametrize("fn, key, message", [
    (_bits8, KEY, "8-bit random bits"),
    (_batched, jax.ShapeDtypeStruct((4, 2), jnp.uint32), "not a batch of keys"),
    (_typed, jax.eval_shape(lambda: jax.random.key(0)), "pass its data instead"),
    (_randint, KEY, "of a typed key array"),
])
def test_untranslated_random_is_a_clear_error(fn, key, message):
    with pytest.raises(BladecError, match=message) as info:
        trace(fn, (key, jax.ShapeDtypeStruct((3,), jnp.float32)))
    if fn is not _typed:              # located at the user's line
        assert info.value.loc.file == __file__
