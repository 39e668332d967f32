"""Checking a gradient: a one-op forward listing through the ``grad`` pass, run by the
executor, against ``jax.grad`` of the forward listing as JAX runs it (the backend's
lowering of each op, interpreted under ``jax.grad``). The loss of each case is
``sum(op(...) * r)``, ``r`` a random cotangent, at shapes drawn at random (a dynamic
first dim where the op allows one)."""
from __future__ import annotations

import numpy as np
import pytest

from bladec.ops.loop import with_bodies
from bladec.parse import parse_module
from bladec.passes import parse_pipeline, run_pipeline
from bladec.printer import format_module as print_module
from bladec.runtime.backends.backend import interpret, numpy_dtype
from bladec.runtime.executor import Executor
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.runtime.backends.kernel import _JaxKernels
from bladec.verify import verify

from tests.support.clirunner import make_runner
from tests.support.order import one_order

RTOL, ATOL = 2e-4, 2e-5  # f32; summation orders differ between the two


def listing(args: str, body: str, result: str, rtype: str) -> str:
    """A forward listing: ``body`` defines ``result`` of ``rtype``; the loss is the sum of
    ``result * %r``."""
    return (f"func.func @main({args}, %r: {rtype}) {{\n{body}\n"
            f"  %lr = mul({result}, %r) -> {rtype}\n"
            f"  %loss = reduce(%lr) {{dims = [{', '.join(map(str, range(_rank(rtype))))}]}}"
            f" -> tensor<{_dtype(rtype)}>\n  return %loss\n}}\n")


def _rank(t: str) -> int:
    inner = t[len("tensor<"):].split(",")[0].rstrip(">")
    return len([p for p in inner.split("x") if p and not p[0].isalpha()])


def _dtype(t: str) -> str:
    inner = t[len("tensor<"):].split(",")[0].rstrip(">")
    last = inner.split("x")[-1]
    return last if last and last[0].isalpha() else "f32"


def invoke(args: list[str], input: str | None = None):
    from bladec.cli import main
    return make_runner().invoke(main, args, input=input)


def check_grad(text: str, inputs: dict[str, np.ndarray], wrt: list[str],
               rtol: float = RTOL, atol: float = ATOL) -> dict[str, np.ndarray]:
    import jax
    module = parse_module(text, "<test>")
    verify(module, runnable=True)
    train = run_pipeline(module, parse_pipeline("grad{wrt=" + ",".join(wrt) + "}"))
    printed = print_module(train)
    again = parse_module(printed, "<printed>")
    verify(again, runnable=True)
    assert print_module(again) == printed  # round trip
    with one_order():   # the numbers, not the order: test_adjoints_indexing 44.4 -> 29.2 s
        outs, _ = Executor(again, JaxBackend()).run(inputs)
    # reference: jax.grad of the forward listing's own lowering
    ex = Executor(module, JaxBackend())
    shapes = ex.shapes_for(ex.bind({k: v.shape for k, v in inputs.items()}))
    func = module.main
    specs = {id(op): [(shapes[r.name], r.type.dtype) for r in op.results]
             for op in with_bodies(func.ops)}
    names = [a.name for a in func.args]
    fn = interpret(_JaxKernels(), func.ops, names, func.outputs(), specs)
    pos = [names.index(w) for w in wrt]

    def loss(*trained):
        args = [jax.numpy.asarray(inputs[n]) for n in names]
        for p, t in zip(pos, trained):
            args[p] = jax.numpy.asarray(t)
        value = fn(*args)[0]
        return value, value
    # jitted: run eagerly, every primitive of the reference was lowered and compiled on
    # its own at each case's random shapes (an MLIR context and an XLA compile an op)
    want, value = jax.jit(jax.grad(loss, argnums=tuple(range(len(wrt))), has_aux=True))(
        *[inputs[w] for w in wrt])
    np.testing.assert_allclose(np.asarray(outs["%loss"], np.float64),
                               np.asarray(value, np.float64), rtol=rtol, atol=atol)
    got = {}
    for w, ref in zip(wrt, want):
        have = np.asarray(outs[f"%grad_{w[1:]}"], np.float64)
        np.testing.assert_allclose(have, np.asarray(ref, np.float64), rtol=rtol, atol=atol,
                                   err_msg=w)
        got[w] = have
    return got


def rand(rng: np.random.Generator, shape: tuple, dtype: str = "f32", low: float | None = None,
         high: float | None = None) -> np.ndarray:
    if low is not None:
        x = rng.uniform(low, high, shape)
    else:
        x = rng.standard_normal(shape)
    return x.astype(numpy_dtype(dtype))


def t(dims: list, dtype: str = "f32", dyn: bool = False) -> str:
    """A type text; ``dyn``: the first dim is ``?`` bound to @S0."""
    parts = ["?" if dyn and i == 0 else str(d) for i, d in enumerate(dims)]
    if dtype != "f32":
        parts.append(dtype)
    binds = ""
    if dyn:
        binds = ", [" + ", ".join(["@S0"] + [f"@C{d}" for d in dims[1:]]) + "]"
    return f"tensor<{'x'.join(parts)}{binds}>"


# The random draws each adjoint is checked at: `make test` the first (every op, every
# case, at one draw of shapes and values), `make bench` (slow) two more draws of each
# (the adjoint tests were about 120 s of the suite's CPU at three draws).
SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


def shape2(rng: np.random.Generator) -> tuple[int, int]:
    return int(rng.integers(1, 7)), int(rng.integers(1, 6))
