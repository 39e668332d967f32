"""One memory (bladec/runtime/machine.py): where the device is this machine's CPU, a step
whose plan holds more than the memory available is refused with a message, by the engine
(``bladec.jit``) as by ``bladec run`` (tests/cli/test_run_cli.py), not killed by the kernel."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec
from bladec.errors import BladecError
from bladec.runtime.backends import machine
from bladec.units import format_size

pytestmark = pytest.mark.skipif(not machine.device_is_cpu(), reason="one memory on CPU")


def mlp(w1, w2, x):
    return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2)


def _args(rows: int) -> tuple:
    rng = np.random.default_rng(0)
    return (jax.device_put(rng.standard_normal((32, 64), np.float32)),
            jax.device_put(rng.standard_normal((64, 32), np.float32)),
            jax.device_put(rng.standard_normal((rows, 32), np.float32)))


def test_a_step_beyond_the_memory_available_is_refused(monkeypatch) -> None:
    """The need is the plan's bytes on the device and in host copies at once, less the
    arguments (which hold their memory already): exactly that runs, a byte less is
    refused on the first call at that shape, with no traceback of JAX's."""
    probe = bladec.jit(mlp, dynamic={"x": "B,_"})
    probe(*_args(8))
    args_bytes = (32 * 64 + 64 * 32 + 8 * 32) * 4
    need = probe.report().peak_bytes - args_bytes   # no limit: no host copies
    assert need > 0

    monkeypatch.setattr(machine, "available_memory", lambda: need - 1)
    refused = bladec.jit(mlp, dynamic={"x": "B,_"})
    with pytest.raises(BladecError, match="one memory") as caught:
        refused(*_args(8))
    assert f"needs {format_size(need)} ({need} bytes)" in str(caught.value)
    with pytest.raises(BladecError):   # refused again: the check is not skipped
        refused(*_args(8))

    monkeypatch.setattr(machine, "available_memory", lambda: need)
    fits = bladec.jit(mlp, dynamic={"x": "B,_"})
    np.testing.assert_allclose(np.asarray(fits(*_args(8))), np.asarray(probe(*_args(8))),
                               rtol=1e-6)
    assert fits.report().compilations >= 1   # what the check compiled counts for the step
    monkeypatch.setattr(machine, "available_memory", lambda: None)   # no figure: no check
    bladec.jit(mlp, dynamic={"x": "B,_"})(*_args(8))
