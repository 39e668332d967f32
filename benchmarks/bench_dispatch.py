"""Per-call dispatch: ``bladec.jit`` against ``jax.jit`` on a small step, no limit.

    python benchmarks/bench_dispatch.py [--batch 4] [--seq 32] [--rounds 200]

The README's small Llama training step (bladec/models/llama.py) at one shape, both
compiled first, then ``--rounds`` rounds that each run one ``jax.jit`` step and one
``bladec.jit`` step (alternating, in a rotating order, so that load on the shared cores
and the caches another executable leaves fall on both alike),
each waiting for its loss; and, in the same rounds, the executable bladec's step runs
called directly (JAX's own dispatch of it, as ``jax.jit``'s), which separates the
executable's own speed from bladec's host work around it. Reports the median step of
each, the medians of the paired differences and ratios, and the goal of issue 32:
bladec at most 1.05x jax.jit's step plus 0.2 ms.

``--limit F`` runs bladec under F times its own no-limit device peak instead (a plan of
several segments): "bladec's executables" then replays the plan's segments with nothing
but their calls and the frees between them, and the paired difference over the number
of segments is bladec's host work per segment (issue 32: bounded and measured).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import jax
import numpy as np

import bladec
from bladec.models import llama

CFG = llama.SMALL
DYNAMIC = {"tokens": "B,S", "targets": "B,S", "mask": "B,S"}


def step(params, tokens, targets, mask, lr):
    return llama.train_step(params, tokens, targets, mask, lr, CFG)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--limit", type=float, default=None,
                    help="bladec's limit as a fraction of its own no-limit device peak")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ids = rng.integers(0, CFG.vocab, (args.batch, args.seq + 1), dtype=np.int32)
    batch = (jax.device_put(ids[:, :-1]), jax.device_put(ids[:, 1:]),
             jax.device_put(np.ones((args.batch, args.seq), np.float32)), np.float32(0.05))
    plain, lean = jax.jit(step), bladec.jit(step, dynamic=DYNAMIC)
    params = jax.device_put(llama.init_params(CFG))
    lean(params, *batch)
    segments = 1
    if args.limit is not None:
        free_peak = lean.report().peak_bytes
        lean = bladec.jit(step, dynamic=DYNAMIC, mem_limit=int(args.limit * free_peak))
        lean(params, *batch)
        direct, segments = _segments(lean, [params, *batch])
    else:
        direct = _executable(lean, [params, *batch])
    modes = (("jax.jit", plain), ("bladec.jit", lean), ("bladec's executable", direct))
    times: dict[str, list[float]] = {name: [] for name, _ in modes}
    cpu: dict[str, list[float]] = {name: [] for name, _ in modes}   # the process's CPU
    for i in range(args.rounds + 3):
        # each mode first, second and third in turn: the one after another executable
        # runs with the caches that one left (a fixed order charged it to one mode)
        for name, fn in modes[i % 3:] + modes[:i % 3]:
            start, start_cpu = time.perf_counter(), time.process_time()
            loss = jax.tree_util.tree_leaves(fn(params, *batch))[0]
            loss.block_until_ready()
            if i >= 3:      # the first rounds compile
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
    j, b = times["jax.jit"], times["bladec.jit"]
    diff = [y - x for x, y in zip(j, b)]
    ratio = [y / x for x, y in zip(j, b)]
    mj, mb = statistics.median(j), statistics.median(b)
    limit = "no limit" if args.limit is None else (
        f"limit {args.limit}x bladec's free peak ({lean.mem_limit} bytes), {segments} segments")
    print(f"{args.rounds} paired rounds, B={args.batch} S={args.seq}, {limit}, "
          f"{jax.devices()[0].platform}")
    for name, t in times.items():
        print(f"{name:26s} median {statistics.median(t) * 1e3:.3f} ms")
    o = times["bladec's executable"]
    print(f"paired: bladec - its executable called directly median "
          f"{statistics.median([y - x for x, y in zip(o, b)]) * 1e3:.3f} ms (host work; "
          f"{statistics.median([y - x for x, y in zip(o, b)]) * 1e3 / segments:.3f} ms "
          f"per segment over {segments})")
    print(f"paired: bladec - jax median {statistics.median(diff) * 1e3:.3f} ms, "
          f"ratio median {statistics.median(ratio):.3f}x")
    cpu_host = statistics.median([y - x for x, y in zip(cpu["bladec's executable"],
                                                        cpu["bladec.jit"])])
    print(f"paired CPU time: bladec - its executables median {cpu_host * 1e3:.3f} ms "
          f"({cpu_host * 1e3 / segments:.3f} ms per segment); bladec / jax median "
          f"{statistics.median([y / x for x, y in zip(cpu['jax.jit'], cpu['bladec.jit'])]):.3f}x")
    if args.limit is not None:   # the goal is no limit's; under one, the host work above
        return
    goal = 1.05 * mj + 2e-4
    # the goal round by round (the medians of unpaired steps move with the load on
    # shared cores more than the difference does): bladec - (1.05x jax.jit + 0.2 ms)
    over = statistics.median([y - (1.05 * x + 2e-4) for x, y in zip(j, b)])
    print(f"goal (1.05x + 0.2 ms): medians {mb * 1e3:.3f} against {goal * 1e3:.3f} ms; "
          f"paired median margin {-over * 1e3:.3f} ms: {'met' if over <= 0 else 'missed'}")


def _prepared(lean: bladec.jit, args: list) -> tuple[dict[str, Any], Any, Any]:
    """The listing's inputs by name at these arguments, the plan bladec's step runs there
    (under its limit), and its executor."""
    executor = lean._last_traced.engine.executor
    leaves = dict(zip(lean._last_traced.imported.input_names, jax.tree_util.tree_leaves(args)))
    names = {v: k for k, v in lean._last_traced.names.items()}
    binding = {names[k]: v for k, v in lean.report().binding.items()}
    return leaves, executor.prepare(binding, lean.mem_limit), executor


def _executable(lean: bladec.jit, args: list) -> Callable[..., Any]:
    """The one executable bladec's step runs at these arguments, called with them as
    JAX calls a compiled function (its outputs as a flat list)."""
    leaves, prepared, _ = _prepared(lean, args)
    (segment,) = prepared.segment_steps()
    exe = segment.fn.compile()
    ordered = [leaves[n] for n in segment.inputs]
    return lambda *_: exe(*ordered)


def _segments(lean: bladec.jit, args: list) -> tuple[Callable[..., Any], int]:
    """The plan bladec's step runs at these arguments under its limit, replayed with
    only the segments' calls and the frees the plan makes (no accounting, no binding,
    no lookups), and its number of segments."""
    from bladec.runtime.planning.segments import EvictStep, ReloadStep, SegmentStep
    leaves, prepared, executor = _prepared(lean, args)
    steps = [(s, s.fn.compile()) if isinstance(s, SegmentStep) else (s, None)
             for s in prepared.steps]
    assert not any(isinstance(s, ReloadStep) for s, _ in steps), "a plan that reloads"
    outputs = executor.outputs

    def replay(*_: Any) -> list:
        env = dict(leaves)
        for step, exe in steps:
            if exe is None:
                assert isinstance(step, EvictStep)
                env.pop(step.value)
                continue
            results = exe(*[env[n] for n in step.inputs])
            for n in step.free:
                env.pop(n, None)
            env.update(zip(step.outputs, results))
        return [env[n] for n in outputs]
    return replay, len(prepared.segment_steps())


if __name__ == "__main__":
    main()
