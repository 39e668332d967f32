"""``bladec.jit``: training the small Llama from a JAX loop under a memory limit.

The acceptance test of issue 16: steps of changing sequence length, every step's device
peak within a limit at 0.6x of the unconstrained peak, losses within float tolerance of
``jax.jit``'s, compilations equal to the executables that run, and the
parameters never copied to the host between steps. Then the API's own behaviour:
pytrees, donation, dims found from the calls, and its errors.
"""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bladec
from bladec.models import llama

from tests.support.runtimecase import TWO_INPUTS

CFG = llama.SMALL
SEQS = [20, 40, 27, 64, 44, 58, 33]   # padded to multiples of 16: buckets 32, 48, 64
# `make test` trains on the batches SMOKE picks (buckets 32, 64 and 32 again: a bucket
# served without compiling; the largest bucket, so the same limit and the same plans as
# the whole run); `make bench` (slow) trains on all of SEQS, the acceptance of issue 16
SMOKE = (0, 3, 2)
EVERY = tuple(range(len(SEQS)))
BATCH = 4
LR = 0.05


def step(params, tokens, targets, mask, lr):
    return llama.train_step(params, tokens, targets, mask, lr, CFG)


def batches() -> list[tuple]:
    rng = np.random.default_rng(7)
    out = []
    for s in SEQS:
        ids = rng.integers(0, CFG.vocab, (BATCH, s + 1)).astype(np.int32)
        mask = (rng.random((BATCH, s)) < 0.9).astype(np.float32)
        out.append((ids[:, :-1], ids[:, 1:], mask))
    return out


def train(fn, steps: tuple[int, ...] = EVERY) -> tuple[list[float], list, object]:
    """Losses and reports of a loop over :func:`batches`, the final parameters."""
    params = jax.device_put(llama.init_params(CFG, seed=1))
    losses, reports = [], []
    for tokens, targets, mask in (batches()[i] for i in steps):
        loss, params = fn(params, tokens, targets, mask, np.float32(LR))
        losses.append(loss)
        reports.append(fn.report() if hasattr(fn, "report") else None)
    return [float(x) for x in losses], reports, params


DYNAMIC = {"tokens": "B,S", "targets": "B,S", "mask": "B,S"}


def reference(steps: tuple[int, ...]) -> list[float]:
    """``jax.jit`` of the same steps on the padded batches (the same shapes bladec runs)."""
    jitted = jax.jit(step)

    def padded(params, tokens, targets, mask, lr):
        s = -(-tokens.shape[1] // 16) * 16
        pad = ((0, 0), (0, s - tokens.shape[1]))
        return jitted(params, np.pad(tokens, pad), np.pad(targets, pad), np.pad(mask, pad),
                      lr)
    return train(padded, steps)[0]


def free_peak(steps: tuple[int, ...]) -> int:
    """The unconstrained device peak of the ``steps``: the largest over their
    buckets, no limit, which is the largest bucket's (every array of the step grows with
    the sequence). That bucket alone: each bucket is an XLA compilation of the whole step,
    and these and ``reference``'s were most of this test's time (99.5 s of setup on a
    loaded machine).
    Read from the plan at no limit without running it (Engine.device_peak: bladec's order
    compiled, XLA's for its figures, as a call's planning does), the figure a call reports
    (the executor checks that a run holds what the plan's accounting says); running it
    compiled the winning order once more to run, 1.5 s of this test's 13.9 s of CPU."""
    fn = bladec.jit(step, dynamic=DYNAMIC, pad={"S": 16})
    params = jax.device_put(llama.init_params(CFG, seed=1))
    tokens, targets, mask = max((batches()[i] for i in steps), key=lambda b: b[0].shape[1])
    args = (params, tokens, targets, mask, np.float32(LR))
    fn.lower(*args)   # traced and optimized as the call would be
    (traced,) = fn._traces.values()
    engine = traced.engine
    shapes = dict(zip(traced.imported.input_names,
                      (np.shape(x) for x in jax.tree_util.tree_leaves(args))))
    binding = engine.binding({n: shapes.get(n, ()) for n in engine.inputs})  # () sizes
    return engine.device_peak(engine.padded(binding))


@pytest.mark.parametrize("steps", [pytest.param(SMOKE, id="smoke"),
                                   pytest.param(EVERY, id="all", marks=pytest.mark.slow)])
def test_train_under_a_limit(steps, monkeypatch) -> None:
    from bladec.runtime.backends import jax_backend
    expected, free = reference(steps), free_peak(steps)   # before the settings below, as jit runs
    # the plans, so the compilations, follow the cost model's copy bandwidth: fixed on
    # CPU (the cost model's default), measured once per process elsewhere, and held
    # here at 1e10 B/s there, so that the counts below are those of one scenario (on
    # CPU at 2e9 and 3e9 B/s a plan rejected on XLA's figures left 3 compiled
    # executables that never ran: 26 compilations for 23)
    monkeypatch.setitem(jax_backend._BANDWIDTH, jax.devices()[0].platform, 1e10)
    # planned as for a device with a memory of its own (with reloads): in one memory
    # (CPU) recomputes alone do not reach 0.6x of this step (tests/test_rss.py)
    monkeypatch.setenv("BLADEC_ONE_MEMORY", "0")
    limit = int(0.6 * free)
    fn = bladec.jit(step, mem_limit=limit, dynamic=DYNAMIC, pad={"S": 16})
    fetched = []   # any device array copied to the host during the steps
    from jax._src.array import ArrayImpl
    original = ArrayImpl.__array__

    def spy(self, *args, **kwargs):
        fetched.append(self.shape)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(ArrayImpl, "__array__", spy)
    params = jax.device_put(llama.init_params(CFG, seed=1))
    losses, reports, buckets, new = [], [], {}, []
    for tokens, targets, mask in (batches()[i] for i in steps):
        before = params
        ran = fn.report().total_executables if reports else 0   # no report before a step
        loss, params = fn(params, tokens, targets, mask, np.float32(LR))
        new.append(fn.report().total_executables - ran)   # executables run for the first time
        assert all(isinstance(p, jax.Array) and p.devices() == {jax.devices()[0]}
                   for p in jax.tree_util.tree_leaves(params))
        assert not any(p.is_deleted() for p in jax.tree_util.tree_leaves(before))  # not donated
        losses.append(loss)
        r = fn.report()
        reports.append(r)
        buckets.setdefault(r.binding["S"], r)
    assert fetched == []   # nothing went through NumPy: parameters stayed on the device
    monkeypatch.setattr(ArrayImpl, "__array__", original)
    losses = [float(x) for x in losses]
    assert len(reports) == len(steps) and len({r.binding["S"] for r in reports}) == len(
        {-(-SEQS[i] // 16) * 16 for i in steps})
    for r in reports:
        assert r.peak_bytes <= limit, r
    assert any(r.evictions for r in reports)   # the limit made bladec evict
    np.testing.assert_allclose(losses, expected, rtol=2e-4, atol=2e-5)
    total = fn.report()
    # each bucket compiled once, the segments its plan runs, and never again after
    assert total.buckets == len(buckets)
    assert total.total_compilations == sum(r.compilations for r in buckets.values())
    assert all(r.compilations == 0 for r in reports if buckets[r.binding["S"]] is not r)
    # and nothing compiled that did not run (executables are distinct by key: a segment
    # cut alike in two buckets is one): the whole step is not compiled to learn it does
    # not fit, a plan whose segment the estimate puts over the limit is tightened
    # without compiling it, and a segment that XLA's figures put over it is kept where
    # moving out values it does not read brings it within (runtime/fitting.py, repair.py)
    # (with pad, the mask pass's selects over the attention scores (passes/mask.py) move
    # one bucket's plan to where XLA's figures reject a first compiled segment: 23
    # compilations for 22 executables at this bandwidth; without the masks, 22 for 22;
    # since the estimate counts an output written into a donated argument from that
    # argument's last read (accounting.modelled_figure, issue 37), it puts one more
    # segment under the limit that XLA's figures then reject: 2 with the masks, and
    # 1 with the older, higher estimate, which held the GPT-2 refusal's descent; since
    # exact padding's masks and broadcast_like are made inside their readers
    # (registry.remade), sized by their operands in the model, 4: the estimate puts two
    # more segments of a rejected plan under the limit that XLA's figures then reject,
    # the worse 1.54 MB over 3.55 MB with 1.84 MB of temporaries; at 8x448 the same rule
    # took the smallest limit from 0.730x to 0.514x of the peak)
    rejected = total.total_compilations - total.total_executables
    assert 0 <= rejected <= 4
    assert sum(r.compilations - n for r, n in zip(reports, new)) == rejected
    print(f"limit {limit}: peaks {[r.peak_bytes for r in reports]}, compilations "
          f"{total.total_compilations} for {total.total_executables} executables run "
          f"({[(s, r.segments, r.executables, r.compilations) for s, r in buckets.items()]})")


# -- compiling less -----------------------------------------------------------------------
TWO_LAYERS = """
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x8>) {
  %a = dot(%x, %w) -> tensor<?x8, [@S0, @C8]>
  %b = tanh(%a) -> tensor<?x8, [@S0, @C8]>
  %c = dot(%b, %w) -> tensor<?x8, [@S0, @C8]>
  %d = tanh(%c) -> tensor<?x8, [@S0, @C8]>
  return %d
}
"""


def test_segments_that_compute_the_same_compile_once() -> None:
    """Two layers cut alike are one executable: the key is what a segment computes at
    which shapes (segment_key), not which ops of the listing it holds."""
    from bladec.parse import parse_module
    from bladec.runtime.backends.backend import segment_key
    from bladec.runtime.backends.jax_backend import JaxBackend
    ops = parse_module(TWO_LAYERS).main.ops
    spec = ((5, 8), "f32")
    specs = {id(op): [spec] for op in ops}
    backend = JaxBackend()
    first = backend.segment(ops[:2], ["%x", "%w"], ["%b"], specs, [spec, ((8, 8), "f32")])
    second = backend.segment(ops[2:], ["%b", "%w"], ["%d"], specs, [spec, ((8, 8), "f32")])
    assert first is second
    x, w = np.ones((5, 8), np.float32), np.full((8, 8), 0.1, np.float32)
    b = first([backend.put(x), backend.put(w)])[0]
    d = second([b, backend.put(w)])[0]
    assert backend.compilations == 1
    np.testing.assert_allclose(np.asarray(d), np.tanh(np.tanh(x @ w) @ w), rtol=1e-6)
    # another shape, another op, or another wiring is another key
    other = {id(op): [((6, 8), "f32")] for op in ops}
    assert segment_key(ops[:2], ["%x", "%w"], ["%b"], other, [((6, 8), "f32"), ((8, 8), "f32")],
                       ()) != segment_key(ops[:2], ["%x", "%w"], ["%b"], specs,
                                          [spec, ((8, 8), "f32")], ())
    assert segment_key(ops[:2], ["%w", "%x"], ["%b"], specs, [((8, 8), "f32"), spec], ()) != \
        segment_key(ops[:2], ["%x", "%w"], ["%b"], specs, [spec, ((8, 8), "f32")], ())
    assert segment_key(ops[:1], ["%x", "%w"], ["%a"], specs, [spec, ((8, 8), "f32")], ()) != \
        segment_key(ops[1:2], ["%a"], ["%b"], specs, [spec], ())


PADDED = TWO_INPUTS + """func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 64}
  SymbolicDim @S1 {max = 4096}
}
"""


def _caller(engine, seed: int):
    """A call of ``engine`` (over PADDED) at S1 = ``s`` with random inputs, its outputs
    checked against NumPy; returns the report."""
    rng = np.random.default_rng(seed)

    def call(s: int):
        x = rng.standard_normal((4, s)).astype(np.float32)
        y = rng.standard_normal(s).astype(np.float32)
        out, report = engine.call({"%x": x, "%y": y})
        np.testing.assert_allclose(np.asarray(out["%t"]), np.tanh(x + y), rtol=1e-6)
        return report
    return call


@pytest.mark.parametrize("coarse", [True, False])
def test_a_coarse_bucket_serves_a_finer_one_while_cheaper(coarse) -> None:
    """Rent or buy: a new bucket runs padded further in a compiled coarser one while the
    padding costs less than the compile did (here a step takes microseconds and a compile
    tens of milliseconds); its outputs are cut back to the inputs' own shapes."""
    from bladec.parse import parse_module
    from bladec.runtime.engine import Engine
    call = _caller(Engine(parse_module(PADDED), pad={"S1": 64}, coarse=coarse), 0)
    for _ in range(3):
        call(250)                     # bucket S1=256: compiled, then steps
    small = call(100)                 # its own bucket would be S1=128
    assert small.binding["S1"] == (256 if coarse else 128)
    assert small.compilations == (0 if coarse else 1)


def test_a_coarse_bucket_run_once_serves_a_finer_one() -> None:
    """A bucket whose one call so far compiled it has no step of its own measured: the
    step of the bucket nearest in size that has one, scaled by size, stands in, so a
    finer bucket is served by it instead of compiling (on the stream of bench_jit.py,
    S=320 by S=448 under a limit: one compilation less)."""
    from bladec.parse import parse_module
    from bladec.runtime.engine import Engine
    call = _caller(Engine(parse_module(PADDED), pad={"S1": 64}), 1)
    call(100)                          # S1=128: compiled
    call(100)                          # a step of S1=128 measured
    assert call(250).compilations == 1   # S1=256: compiled, run once
    finer = call(190)                  # its own bucket would be S1=192
    assert finer.binding["S1"] == 256
    assert finer.compilations == 0


# -- the API ------------------------------------------------------------------------------
def sgd(params, x, lr):
    """A step over a pytree: a dict of weights and a list, a dynamic batch of rows."""
    def loss(p):
        h = jnp.tanh(x @ p["w"] + p["b"][0])
        return 0.01 * jnp.sum((h @ p["b"][1]) ** 2)   # (a mean over N needs issue 15)
    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "params": jax.tree_util.tree_map(lambda p, g: p - lr * g,
                                                            params, grads)}


def _params():
    rng = np.random.default_rng(3)
    return {"w": rng.standard_normal((8, 8)).astype(np.float32),
            "b": [rng.standard_normal(8).astype(np.float32),
                  rng.standard_normal((8, 2)).astype(np.float32)]}


def _rows(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


@pytest.fixture
def one_order_here(monkeypatch) -> None:
    """The test's steps at no limit in bladec's order only (tests.support.order), for tests
    of pytrees, traces and dtypes, not of which order holds less (test_orders.py): the
    orders compared compiled each step once or twice more in XLA's (issue 36)."""
    monkeypatch.setenv("BLADEC_NO_LIMIT_ORDER", "bladec")


@pytest.mark.usefixtures("one_order_here")
def test_pytrees_in_and_out_as_jax_jit() -> None:
    fn = bladec.jit(sgd, dynamic={"x": "N,_"})
    params = jax.device_put(_params())
    got = fn(params, _rows(5), 0.1)
    want = jax.jit(sgd)(params, _rows(5), 0.1)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(a, jax.Array) and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert fn.report().binding == {"N": 5} and fn.report().traces == 1
    assert "func.func @main" in fn.listing


@pytest.mark.usefixtures("one_order_here")
def test_dims_found_from_the_calls() -> None:
    """No ``dynamic``: the first call is static, the second (other rows) makes the rows'
    dim symbolic, once; later sizes reuse that trace."""
    fn = bladec.jit(sgd)
    params = jax.device_put(_params())
    for n in (4, 6, 9, 6):
        out = fn(params, _rows(n), 0.1)
        ref = jax.jit(sgd)(params, _rows(n), 0.1)
        np.testing.assert_allclose(float(out["loss"]), float(ref["loss"]), rtol=1e-5)
    r = fn.report()
    assert r.traces == 2 and r.binding == {"D0": 6} and r.compilations == 0


def test_donated_arguments_are_given_up() -> None:
    fn = bladec.jit(sgd, dynamic={"x": "N,_"}, donate_argnums=0)
    params = jax.device_put(_params())
    want = jax.jit(sgd)(jax.device_put(_params()), _rows(5), 0.1)
    got = fn(params, _rows(5), 0.1)
    assert all(p.is_deleted() for p in jax.tree_util.tree_leaves(params))
    np.testing.assert_allclose(np.asarray(got["params"]["w"]), np.asarray(want["params"]["w"]),
                               rtol=1e-5, atol=1e-6)
    assert "donate = true" in fn.listing


@pytest.mark.parametrize("kwargs, args, message", [
    ({"dynamic": {"y": "N,_"}}, None, "dynamic names 'y', which is not a parameter"),
    ({"dynamic": {"x": "N"}}, None, r"dynamic gives 1 dim\(s\) for x, but it has shape"),
    ({"dynamic": {"x": "N,_"}, "ranges": {"N": (1, 4)}}, None, "N=5 is outside its range"),
    ({"mem_limit": -5}, None, "mem_limit must be a positive number"),
    ({"mem_limit": "lots"}, None, "lots"),
    ({"dynamic": {"x": "N,_"}, "mem_limit": 1000}, None, "smallest limit that works is"),
])
def test_errors_are_bladec_errors(kwargs, args, message) -> None:
    with pytest.raises(bladec.BladecError, match=message) as info:
        bladec.jit(sgd, **kwargs)(jax.device_put(_params()), _rows(5), 0.1)
    assert "\n" not in str(info.value) and "Traceback" not in str(info.value)


def test_a_refused_limit_counts_what_it_compiled() -> None:
    fn = bladec.jit(sgd, dynamic={"x": "N,_"}, mem_limit=1000)
    with pytest.raises(bladec.BladecError, match="smallest limit that works is"):
        fn(jax.device_put(_params()), _rows(5), 0.1)
    report = fn.report()
    backends = [t.engine.backend for t in fn._traces.values()]
    assert report.total_compilations == sum(b.compilations for b in backends) >= 1
    assert report.total_compile_seconds > 0


@pytest.mark.usefixtures("one_order_here")
def test_another_dtype_traces_again() -> None:
    """As jax.jit does: arguments of other dtypes are another trace, not an error."""
    fn = bladec.jit(sgd, dynamic={"x": "N,_"})
    fn(jax.device_put(_params()), _rows(5), 0.1)
    out = fn(jax.device_put(_params()), _rows(5).astype(np.float16), 0.1)
    assert fn.report().traces == 2 and out["loss"].dtype == np.float32


def test_not_a_function() -> None:
    with pytest.raises(bladec.BladecError, match="needs a function"):
        bladec.jit(3)


def test_bad_donation_is_an_error() -> None:
    with pytest.raises(bladec.BladecError, match="donate_argnums must be argument positions"):
        bladec.jit(sgd, donate_argnums=("params",))


@pytest.mark.usefixtures("one_order_here")
def test_dims_that_part_ways_are_traced_apart() -> None:
    """Found from the calls: two dims equal so far share a symbol; when they differ, the
    function is traced again with one symbol each (not an error)."""
    def f(a, b):
        return jnp.sum(a) + jnp.sum(b)
    fn = bladec.jit(f)
    for n, m in ((3, 3), (5, 5), (4, 7)):
        a, b = np.ones(n, np.float32), np.ones(m, np.float32)
        assert float(fn(a, b)) == n + m
    assert fn.report().traces == 3 and fn.report().binding == {"D0": 4, "D1": 7}


def test_the_engine_reuses_the_passes_analysis(monkeypatch) -> None:
    """The executor beneath the engine takes the shape analysis the passes made of the
    optimized listing (every dim bound, so it does not depend on the op order) instead
    of solving the shapes again."""
    import bladec.symbolic.shapes as shapes
    from bladec.parse import parse_module
    from bladec.runtime.engine import Engine
    from bladec.runtime.executor import Executor
    from bladec.runtime.backends.backend import NumpyBackend
    engine = Engine(parse_module(PADDED), backend="numpy")
    solved = []
    real = shapes._analyze
    monkeypatch.setattr(shapes, "_analyze", lambda m, f: solved.append(f) or real(m, f))
    Executor(engine.module, NumpyBackend())
    assert solved == []


def test_device_arguments_are_not_copied() -> None:
    """A device array handed to the engine is held as it is (the same buffer), so a
    limit counts it once: a copy would be memory the accounting does not see."""
    from bladec.runtime.backends.jax_backend import JaxBackend
    x = jax.device_put(np.ones(16, np.float32))
    assert JaxBackend().put(x).unsafe_buffer_pointer() == x.unsafe_buffer_pointer()


def test_a_buckets_first_step_waits_for_its_outputs(monkeypatch) -> None:
    """The step a bucket's padding is priced with (Engine._bucket) is the computation's,
    not the dispatch's: the first call that compiles nothing waits for its outputs (here
    outputs that take 0.2 s to be ready); later calls do not wait."""
    from bladec.parse import parse_module
    from bladec.runtime import engine as engine_module
    engine = engine_module.Engine(parse_module(PADDED), pad={"S1": 64})
    waited = []

    class Slow:
        def __init__(self, value):
            self.value = value

        def block_until_ready(self):
            waited.append(1)
            time.sleep(0.2)
            return self.value
    run = engine.executor.run_arrays

    def slow_run(*args, **kwargs):
        outputs, report = run(*args, **kwargs)
        return {k: Slow(v) for k, v in outputs.items()}, report
    monkeypatch.setattr(engine.executor, "run_arrays", slow_run)
    monkeypatch.setattr(engine, "cut_padding", False)
    x = np.ones((4, 100), np.float32)
    y = np.ones(100, np.float32)
    for _ in range(3):
        engine.call({"%x": x, "%y": y})
    cost = next(iter(engine._costs.values()))
    assert len(waited) == 1 and cost.step >= 0.2 and cost.first is not None
