"""Table 1 of bench_run.py, the measuring: the configurations of one training step at
fixed shapes (whole-graph jit, bladec at no limit and under limits, the split-only and
ablation rows), and their first, timed and profiled steps.

Apart from the table's text (runreport.py) so that what runs and what is said about it
can be read, and changed, one at a time.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from bladec.analysis.liveness import is_compute
from bladec.errors import BladecError
from bladec.ir import Module
from bladec.runtime.backends.backend import interpret
from bladec.runtime.executor import Executor, Report, unoptimized
from bladec.runtime.backends.jax_backend import JaxBackend
from bladec.units import format_size

from benchmarks.support.workload import Workload

_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Progress on stderr (the tables go to stdout)."""
    print(f"[{time.perf_counter() - _T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def whole_graph_jit(module: Module, ex: Executor, binding: dict[str, int],
                    fuse: bool = True) -> Callable[[dict[str, np.ndarray]], list[np.ndarray]]:
    """The listing as one jitted function of its inputs at the shapes of ``binding``."""
    import jax
    shapes = ex.shapes_for(binding)
    ops = [op for op in module.main.ops if is_compute(op)]
    K = JaxBackend(bitwise=not fuse).K  # fuse=False: the same barriers as bladec's segments
    specs = {id(op): [(shapes[r], ex.info.dtypes[r]) for r in op.result_names] for op in ops}
    names, outs = list(ex.inputs), list(ex.outputs)

    fn = interpret(K, ops, names, outs, specs)

    options = {} if fuse else {"xla_disable_hlo_passes": "fusion"}
    state: dict[str, Any] = {}

    def step(inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        args = [inputs[n] for n in names]
        if "exe" not in state:
            state["exe"] = jax.jit(fn).lower(*args).compile(compiler_options=options)
        return [np.asarray(x) for x in state["exe"](*args)]
    return step


@dataclass
class Config:
    """One row of table 1: how to take a step, and what its steps measured."""
    label: str
    step: Callable[..., tuple[list[np.ndarray], Report | None]]  # step(profile=False)
    fuse: bool
    kind: str                 # "jit" or "bladec"
    limit: int | None = None
    note: str = ""
    plan_seconds: float = 0.0
    first_seconds: float = 0.0
    compilations: int = 0
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)   # the process's, all threads
    reports: list[Report] = field(default_factory=list)
    profiled: list[Report] = field(default_factory=list)  # steps run with profile=True
    outputs: list[np.ndarray] | None = None


def smallest_limit(ex: Executor, binding: dict[str, int], limit: int) -> int | None:
    """None when ``limit`` is met; else the smallest limit the planner meets."""
    try:
        ex.plan(binding, limit)
        return None
    except BladecError as exc:
        m = re.search(r"smallest limit that works is .*?\((\d+) bytes", str(exc))
        if m:
            return int(m.group(1))
    lo, hi = limit, max(limit, 1) * 64
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            ex.plan(binding, mid)
            hi = mid
        except BladecError:
            lo = mid + 1
    return lo


def bladec_config(label: str, module: Module, fuse: bool, inputs: dict[str, np.ndarray],
                  binding: dict[str, int], limit: int | None, note: str = "",
                  consolidate: bool = True) -> Config:
    """bladec's Executor on ``module`` at ``limit``, planned here so that planning is
    timed apart from the first step."""
    ex = Executor(module, JaxBackend(bitwise=not fuse), consolidate=consolidate)
    ex.cost  # the copy bandwidth is measured once per process: not part of planning
    t = time.perf_counter()
    ex.plan(binding, limit)
    plan_seconds = time.perf_counter() - t

    def step(profile: bool = False) -> tuple[list[np.ndarray], Report]:
        out, report = ex.run(inputs, limit, profile=profile)
        return [out[n] for n in ex.outputs], report
    return Config(label, step, fuse, "bladec", limit, note, plan_seconds)


def split_only_config(label: str, module: Module, fuse: bool, inputs: dict[str, np.ndarray],
                      binding: dict[str, int], limit: int) -> Config:
    """The compiled segments of the plan at ``limit`` (recomputed ops included), run with
    no eviction and no reload: what the segmentation alone costs, without the copies."""
    ex = Executor(module, JaxBackend(bitwise=not fuse))
    prepared = ex.prepare(binding, limit)
    segments = [(s.fn, s.inputs, s.outputs, s.free) for s in prepared.segment_steps()]
    keep = set(ex.inputs) | set(ex.outputs)

    def step(profile: bool = False) -> tuple[list[np.ndarray], Report]:
        report = Report(limit=limit)
        start = time.perf_counter()
        before = ex.backend.compilations
        env = {n: ex.backend.put(np.asarray(inputs[n])) for n in ex.inputs}
        for fn, ins, outs, free in segments:
            t = time.perf_counter()
            results = fn([env[n] for n in ins])
            if profile:
                for x in results:
                    x.block_until_ready()
                report.segment_seconds.append(time.perf_counter() - t)
            env.update(zip(outs, results))
            for n in free:
                if n not in keep and n in env:
                    ex.backend.delete(env.pop(n))
        out = [ex.backend.fetch(env[n]) for n in ex.outputs]
        report.segments = len(segments)
        report.compilations = ex.backend.compilations - before
        report.seconds = time.perf_counter() - start
        report.peak_bytes = prepared.device.peak
        return out, report
    return Config(label, step, fuse, "bladec", limit, "")


def measure(configs: list[Config], repeats: int, seed: int, profile_rounds: int = 3
            ) -> None:
    """The first step of each configuration, timed apart; then ``repeats`` rounds of one
    step of each in a shuffled order (the load falls on all alike); then
    ``profile_rounds`` steps of each bladec one with profile=True."""
    for c in configs:  # the first step: tracing, planning, compilation
        log(f"  first step: {c.label}")
        t = time.perf_counter()
        out, report = c.step()
        c.first_seconds = time.perf_counter() - t
        c.compilations = report.compilations if report else 1
        c.outputs = out
    rng = random.Random(seed)
    for _ in range(repeats):
        order = list(configs)
        rng.shuffle(order)
        for c in order:
            t, cpu = time.perf_counter(), time.process_time()
            _, report = c.step()
            c.times.append(time.perf_counter() - t)
            c.cpu_times.append(time.process_time() - cpu)
            if report is not None:
                c.reports.append(report)
    for c in configs:  # the split between compiled segments and the host, apart
        if c.kind == "bladec":
            for _ in range(profile_rounds):
                c.profiled.append(c.step(profile=True)[1])


def profile_steps(c: Config, steps: int, top: int = 14) -> str:
    """cProfile's ``top`` functions by own time over ``steps`` steps of ``c``."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        c.step()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    return "\n".join(line for line in text.splitlines()[text.count("\n", 0, 0):]
                     if line.strip()).strip()


@dataclass
class Lineup:
    """Table 1's configurations, and those its ratios and goals are taken against."""
    configs: list[Config]
    base: dict[bool, Config]                  # bladec at no limit, by fuse setting
    limited: list[tuple[str, float, Config]]  # (listing, fraction of the peak, config)

    @property
    def jit(self) -> Config:
        """The whole-graph jit with fusion on: the first configuration, always there."""
        return self.configs[0]


def lineup(w: Workload, args: argparse.Namespace, fuses: list[bool], fractions: list[float]
           ) -> Lineup:
    """Every configuration the flags ask for, planned (and the jit ones ready to
    compile on their first step), in the order the table lists them."""
    inputs, binding, peak, scheduled = w.inputs, w.binding, w.peak, w.scheduled
    configs: list[Config] = []
    jit_ex = Executor(unoptimized(w.original), JaxBackend())
    for fuse in (True,) if args.no_jit_nofuse else (True, False):
        f = whole_graph_jit(w.original, jit_ex, binding, fuse)
        configs.append(Config(f"(a) whole-graph jax.jit, fusion {'on' if fuse else 'off'}",
                              (lambda f=f: (f(inputs), None)), fuse, "jit"))
    base: dict[bool, Config] = {}
    for fuse in fuses:
        c = bladec_config(f"({'c' if fuse else 'b'}) bladec, no limit", scheduled, fuse,
                          inputs, binding, None)
        base[fuse] = c
        configs.append(c)
    limited: list[tuple[str, float, Config]] = []
    listings = [("schedule", scheduled)] + ([] if args.no_unscheduled
                                            else [("no schedule", w.unscheduled)])
    for frac in fractions:
        limit = int(frac * peak)
        for lname, listing in listings:
            for fuse in fuses:
                # per mode: a bitwise backend makes broadcasts as arrays of their own,
                # where the fused one makes them inside their readers (registry.remade)
                probe_l = Executor(listing, JaxBackend(bitwise=not fuse))
                need = smallest_limit(probe_l, binding, limit)
                use, note = limit, ""
                if need is not None:
                    use = need
                    note = (f"{frac}x = {format_size(limit)} is below the feasible minimum; "
                            f"ran at the minimum {format_size(need)} = {need / peak:.2f}x")
                c = bladec_config(f"(d) bladec, {lname}, {frac}x, fuse={'on' if fuse else 'off'}",
                                  listing, fuse, inputs, binding, use, note)
                configs.append(c)
                limited.append((lname, frac, c))
    if not args.no_explain and fractions:
        low_frac = min(fractions)
        for lname, frac, c in limited:
            if lname == "schedule" and frac == low_frac:
                configs.append(split_only_config(
                    f"(e) split only: the segments of {lname} {frac}x, no eviction, "
                    f"fuse={'on' if c.fuse else 'off'}", scheduled, c.fuse, inputs, binding,
                    c.limit))
    log(f"table 1: {len(configs)} configurations, first steps")
    if args.ablate and fractions:
        low_frac = min(fractions)
        for lname, frac, c in list(limited):
            if lname != "schedule" or frac != low_frac:
                continue
            tag = f"{lname}, {frac}x, fuse={'on' if c.fuse else 'off'}"
            loose = bladec_config(f"(f) bladec, {tag}, cut points not shared", scheduled,
                                  c.fuse, inputs, binding, c.limit, consolidate=False)
            configs.append(loose)
            limited.append((lname + " (cuts not shared)", frac, loose))
            blocking = bladec_config(f"(g) bladec, {tag}, every segment awaited", scheduled,
                                     c.fuse, inputs, binding, c.limit)
            plain_step = blocking.step
            blocking.step = lambda profile=False, f=plain_step: f(profile=True)
            configs.append(blocking)
            limited.append((lname + " (awaited)", frac, blocking))
    return Lineup(configs, base, limited)
