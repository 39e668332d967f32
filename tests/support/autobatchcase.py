"""The auto-batching tests' models, instances and checks against the unbatched JAX
reference (the cells run as plain JAX functions, one instance at a time): outputs and
losses within 1e-5 relative, gradients within 1e-4."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import numpy as np

import bladec
from bladec.batching import value
from bladec.models import bilstm, earlyexit, mvrnn, treelstm

MODELS = {"treelstm": (treelstm, "leaves"), "bilstm": (bilstm, "length"),
          "earlyexit": (earlyexit, "length"), "mvrnn": (mvrnn, "leaves")}


def make_params(mod, hidden=8, vocab=30, classes=3):
    import jax
    return jax.tree_util.tree_map(jax.numpy.asarray,
                                  mod.init_params(hidden=hidden, vocab=vocab, classes=classes))


def make_batch(name, count, seed, short=(2, 9)):
    mod, key = MODELS[name]
    return mod.instances(count, seed=seed, vocab=30, classes=3, **{key: short})


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


_JITTED: dict[Any, Callable] = {}


@contextlib.contextmanager
def jitted_cells() -> Iterator[None]:
    """Cells called outside bladec.autobatch run as ``jax.jit`` of their plain function
    (one per cell, kept for the process): the unbatched reference is the same JAX code
    one instance at a time, but not dispatched op by op. Eagerly each op of each cell,
    and of its gradient, compiled an executable of its own per shape (127 compilations
    in the tree LSTM's reference test, 23 jitted); Python control flow between the cells
    (the recursion, a ``break`` on a value) still runs as Python."""
    import jax
    plain = value.Cell.__call__

    def call(cell: value.Cell, *args: Any) -> Any:
        if value._ACTIVE:
            return plain(cell, *args)
        if cell not in _JITTED:
            _JITTED[cell] = jax.jit(cell.fn)
        return _JITTED[cell](*args)
    value.Cell.__call__ = call
    try:
        yield
    finally:
        value.Cell.__call__ = plain


def losses_of(model: Callable, params: Any, instances: list) -> np.ndarray:
    """Per instance: the unbatched loss (the cells jitted: :func:`jitted_cells`)."""
    with jitted_cells():
        return np.array([float(model(params, i)) for i in instances])


def reference(mod, params, instances):
    """Per instance: the loss and jax.grad, the cells run as plain JAX functions (jitted
    one by one: :func:`jitted_cells`); the gradients summed over the instances in
    float64 (the batched gradient's reference, compared in float64 by :func:`rel`)."""
    import jax
    with jitted_cells():
        losses = np.array([float(mod.model(params, i)) for i in instances])
        grads = [jax.grad(mod.model)(params, i) for i in instances]
    total = jax.tree_util.tree_map(
        lambda *g: sum(np.asarray(x, np.float64) for x in g), *grads)
    return losses, total


SHARED: dict = {}


def batched(name: str):
    """One autobatched model per model for the fast tests (its executables reused: a
    compilation costs seconds on the CI's loaded cores)."""
    if name not in SHARED:
        SHARED[name] = bladec.autobatch(MODELS[name][0].model)
    return SHARED[name]


def fresh(name: str):
    """A new autobatched model, for a test that needs one that has compiled nothing; it
    is then the shared one (:func:`batched`) for the tests after it that do not care
    what was compiled before them (its executables reused)."""
    SHARED[name] = bladec.autobatch(MODELS[name][0].model)
    return SHARED[name]


def check_batches(name: str, seeds, count: int, hidden: int = 8, short=(2, 9),
                  grad_every: int = 1, f=None) -> None:
    import jax
    mod, _ = MODELS[name]
    params = make_params(mod, hidden=hidden)
    f = f or bladec.autobatch(mod.model)
    for n, seed in enumerate(seeds):
        instances = make_batch(name, count, seed, short)
        out = f(params, instances)
        assert out.shape == (count,)
        if n % grad_every:
            losses = losses_of(mod.model, params, instances)
            assert rel(out, losses) <= 1e-5, (seed, out, losses)
            continue
        losses, total = reference(mod, params, instances)
        assert rel(out, losses) <= 1e-5, (seed, out, losses)
        loss, g = f.value_and_grad(params, instances)
        assert rel(loss, losses.sum()) <= 1e-5
        assert jax.tree_util.tree_structure(g) == jax.tree_util.tree_structure(total)
        for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(g),
                                jax.tree_util.tree_leaves(total)):
            assert rel(a, b) <= 1e-4, (seed, jax.tree_util.keystr(path))
