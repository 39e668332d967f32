"""Executables compiled only for their memory figures (jax_backend.LazyCompiled._probed):
while a limit that no run can meet is refused, the whole steps and plans compiled to name
the smallest limit are compiled with LLVM's optimizations off. Their figures must be the
figures of the executables that run (XLA assigns buffers before code generation), the
limit named must run, and one byte less must be refused."""
from __future__ import annotations


import pytest

from tests.support.runtimecase import module_of

from bladec.runtime.backends.jax_backend import JaxBackend, _segment_memory
from bladec.runtime.engine import optimize
from bladec.runtime.executor import Executor
from bladec.runtime.planning.limit import LimitError
from bladec.runtime.session import _random_inputs
from bladec.runtime.store.executables import figures_of

from tests.support.paths import SAMPLES  # noqa: E402


@pytest.mark.parametrize("sample,dims", [  # the training MLP: `make bench` (issue 36)
    pytest.param("mlp-train.mlir", {"S0": 2, "S1": 24}, marks=pytest.mark.slow),
    ("attention.mlir", {"S0": 3, "S1": 40})])
def test_a_refusal_reads_figures_from_cheaper_compilations(sample, dims) -> None:
    module = optimize(module_of(path=SAMPLES / sample))
    ex = Executor(module, JaxBackend())
    shapes = ex.shapes_for(dict(dims))
    binding = ex.bind({n: shapes[n] for n in ex.inputs}, dims)
    with pytest.raises(LimitError) as err:
        ex.prepare(binding, 1)         # under the inputs alone: no run can meet it
    smallest = err.value.smallest
    probed = [c for c in ex.backend._cache.values() if c.figures_only]
    whole = ex._bound(binding).free.segment_steps()[0].fn
    assert whole in probed and whole.executable is None   # named, not compiled to run
    for c in probed:                   # the figures are the runnable executable's
        assert c.memory() == _segment_memory(figures_of(c.compile()))
    run = ex.prepare(binding, smallest)
    assert run.device.peak == smallest
    with pytest.raises(LimitError):
        ex.prepare(binding, smallest - 1)
    _, report = ex.run(_random_inputs(ex, dict(dims), 0), limit=smallest)
    assert report.peak_bytes <= smallest


def test_a_limit_some_run_may_meet_runs_what_was_checked() -> None:
    """Under a limit some run may meet, the plans of the search for the smallest limit
    and XLA's order are compiled for their figures only (issue 37: on a GPT-2 step a
    896-op segment took 6.4 s of CPU to compile, 1.3 s to probe); whichever plan then
    runs is compiled at its first call, with the figures it was checked with, and holds
    within the limit."""
    module = optimize(module_of(path=SAMPLES / "mlp-train.mlir"))
    ex = Executor(module, JaxBackend())
    dims = {"S0": 2, "S1": 24}
    shapes = ex.shapes_for(dict(dims))
    binding = ex.bind({n: shapes[n] for n in ex.inputs}, dims)
    peak = ex.prepare(binding, None).device.peak
    # at no limit bladec's order is compiled to run, XLA's orders for their figures
    # (wholestep.py: the lowest runs, compiled at its first call)
    bound = ex._bound(binding)
    assert not any(s.fn.figures_only for s in bound.free.segment_steps())
    assert all(s.fn.figures_only for r in (bound.xla_run, bound.xla_scheduled) if r
               for s in r.segment_steps() if s.fn is not bound.free.segment_steps()[0].fn)
    limit = peak - 1
    try:
        ex.prepare(binding, limit)
    except LimitError as err:
        limit = err.smallest
    run = ex.prepare(binding, limit)
    assert run.device.peak <= limit
    for c in ex.backend._cache.values():
        if c.figures_only:
            assert c.memory() == _segment_memory(figures_of(c.compile()))
    _, report = ex.run(_random_inputs(ex, dict(dims), 0), limit=limit)
    assert report.peak_bytes <= limit


def test_a_refusal_leaves_no_probe_in_jaxs_cache(tmp_path) -> None:
    """`bladec run` refused under a limit below its inputs: the whole steps compiled only
    for their figures are not written to JAX's persistent cache (cache.unkept: the store
    keeps their figures, and the executable that runs has other options and another
    key), and a second process, reading those figures, names the same limit."""
    import os
    import subprocess
    import sys
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "bladec", "run", str(SAMPLES / "listing1-runnable.mlir"),
           "--dims", "S1=64", "--mem-limit", "1000", "-q", "--compilation-cache", str(cache)]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 1 and "the smallest limit that works is" in first.stderr
    names = [p.name for p in cache.iterdir()]
    assert any(n.endswith(".bladec-executable") for n in names)   # the figures, kept
    assert not [n for n in names if n.endswith("-cache")]        # JAX's entries: none
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 1 and again.stderr == first.stderr


def test_unkept_restores_jaxs_setting_when_compiling_fails() -> None:
    import jax
    from bladec.runtime.backends.cache import unkept
    name = "jax_persistent_cache_min_compile_time_secs"
    before = getattr(jax.config, name)
    with pytest.raises(RuntimeError):
        with unkept():
            assert getattr(jax.config, name) == float("inf")
            raise RuntimeError("a compilation that failed")
    assert getattr(jax.config, name) == before
