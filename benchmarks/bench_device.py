"""Device peak against steady-state step time: jax.jit, jax.checkpoint policies, bladec.

    python benchmarks/bench_device.py [--shapes 8x256,8x512] [--optimizers sgd,adam]
        [--steps 5] [--out out/bench-device.md] [--json out/bench-device.json]
        [--plot docs/pareto-device.png]

The Llama training steps of bench_paper.py (``CPU_CONFIG``, SGD and Adam) at each batch x
sequence, side by side in one process: whole-graph ``jax.jit`` (nothing donated, the
reference; and donated), each decoder layer under ``jax.checkpoint`` with each policy (as
XLA compiles it, and with XLA's ``cse_barrier_expander`` pass off: on XLA:CPU that pass
removes the optimization barriers that keep ``jax.checkpoint``'s recomputation apart from
the forward pass, and CSE undoes the remat), and bladec (the listing imported from the
same step, ``analyze,schedule,remat``, ``Engine.call(inputs, limit=...)`` with XLA fusion
on) at no limit, at fractions of jit's device peak, at the smallest limit that works and
at each checkpoint row's peak. BENCHMARKS.md (issue 13 section) says what each row is.

Device peak: jit and checkpoint rows, XLA's own ``argument + output + temp - alias`` bytes
of ``compiled.memory_analysis()``; bladec rows, ``Report.peak_bytes``. Step time: the
median of ``--steps`` steps after ``--warmup`` untimed rounds (and compilation), one step
of every row per round in a rotating order, so that the machine's load falls on all rows
alike; every row trains its own copy of the model (outputs fed back as the next inputs).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import re
import resource
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

from benchmarks.support import allocator  # noqa: E402
from benchmarks.support.devicereport import (  # noqa: E402
    Case, Row, goal_lines, plot, table_lines, xla_device_peak)
from benchmarks.support.training import CPU_CONFIG  # noqa: E402

from bladec.errors import BladecError  # noqa: E402
from bladec.frontend.jax_import import Imported, trace  # noqa: E402
from bladec.models.llama import (REMAT_POLICIES, Adam, Config, adam_state, adam_step,  # noqa: E402
                                 import_spec, init_params, train_step)
from bladec.passes import parse_pipeline, run_pipeline  # noqa: E402
from bladec.runtime.backends.jax_backend import JaxBackend  # noqa: E402
from bladec.runtime.engine import Engine  # noqa: E402

FRACTIONS = (0.8, 0.6, 0.5)         # bladec's limits, as fractions of jit's device peak
MODELS = {"cpu": CPU_CONFIG,        # bench_paper's CPU model; "tiny" for tests and tries
          "tiny": Config(vocab=64, hidden=16, intermediate=32, heads=2, layers=1)}
KEEP_BARRIERS = {"xla_disable_hlo_passes": "cse_barrier_expander"}
_SMALLEST = re.compile(r"smallest limit that works is [^(]*\((\d+) bytes")


def fused_backend() -> JaxBackend:
    """The JAX backend as users run it: XLA fuses (the default; not --bitwise)."""
    return JaxBackend()


def smallest_limit(message: str) -> int | None:
    """The bytes of "the smallest limit that works is 53 MiB (55620104 bytes" in a
    refusal, or None where the message names none."""
    m = _SMALLEST.search(message)
    return int(m.group(1)) if m else None


def make_args(cfg: Config, optimizer: str, batch: int, seq: int, seed: int = 0) -> tuple:
    """The step's arguments: parameters (and zero Adam moments), random tokens and
    targets over the vocabulary, a full mask, a learning rate."""
    rng = np.random.default_rng(seed)
    params = init_params(cfg, seed)
    tokens = rng.integers(0, cfg.vocab, (batch, seq)).astype(np.int32)
    targets = rng.integers(0, cfg.vocab, (batch, seq)).astype(np.int32)
    mask = np.ones((batch, seq), np.float32)
    if optimizer == "adam":
        return (params, adam_state(params), tokens, targets, mask, Adam().lr_at(1e-3, 1))
    return (params, tokens, targets, mask, np.float32(1e-3))


def step_fn(cfg: Config, optimizer: str, policy: str | None) -> Callable[..., Any]:
    if optimizer == "adam":
        return lambda p, s, t, y, m, lr: adam_step(p, s, t, y, m, lr, cfg, remat_policy=policy)
    return lambda p, t, y, m, lr: train_step(p, t, y, m, lr, cfg, policy)


def _block(tree: Any) -> None:
    for leaf in jax.tree_util.tree_leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


class Runner:
    """Takes one training step at a time, feeding the new parameters (and state) back."""

    def __init__(self, row: Row, call: Callable[[tuple], Any], args: tuple, carried: int):
        self.row, self.call, self.args, self.carried = row, call, args, carried

    def step(self) -> float:
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        out = self.call(self.args)
        _block(out)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        self.cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.faults = after.ru_minflt - before.ru_minflt
        _, *new = out
        self.args = (*new, *self.args[self.carried:])
        return seconds


def jax_runner(cfg: Config, optimizer: str, args: tuple, policy: str | None = None,
               donate: bool = False, keep_barriers: bool = False) -> Runner:
    """A jit or checkpoint row: compiled ahead of time, its peak from the executable."""
    carried = 2 if optimizer == "adam" else 1
    if policy is None:
        name = "jit, donated" if donate else "jit"
    else:
        name = f"checkpoint {policy}" + (", barriers kept" if keep_barriers else "")
    row = Row(name, "jit" if policy is None else "checkpoint")
    device_args = jax.device_put(args)
    jitted = jax.jit(step_fn(cfg, optimizer, policy),
                     donate_argnums=tuple(range(carried)) if donate else ())
    lowered = jitted.lower(*device_args)
    start = time.perf_counter()
    compiled = lowered.compile(compiler_options=KEEP_BARRIERS if keep_barriers else {})
    row.info["compile_seconds"] = round(time.perf_counter() - start, 3)
    stats = compiled.memory_analysis()
    row.peak = xla_device_peak(stats)
    row.info.update({k: int(getattr(stats, k)) for k in dir(stats) if k.endswith("_in_bytes")})
    if policy == "save_and_offload_only_these_names":  # does the offload reach XLA?
        row.info["offloaded"] = "annotate_device_placement" in lowered.as_text()
    return Runner(row, lambda a: compiled(*a), device_args, carried)


def bladec_runner(imported: Imported, engine: Engine, args: tuple, limit: int | None,
                  name: str) -> Runner:
    """A bladec row: one engine per case (runtime/engine.py, as ``bladec.jit`` runs), each row its own limit (plans are cached per
    binding and limit). The first run compiles and plans; a refusal leaves the row
    with its message."""
    carried = 2 if len(args) == 6 else 1
    row = Row(name, "bladec", limit=limit)

    def call(a: tuple) -> Any:
        leaves = jax.tree_util.tree_leaves(a)
        out, report = engine.call(dict(zip(imported.input_names, leaves)), limit=limit)
        row.peak = max(row.peak or 0, int(report.peak_bytes))
        row.info.update({k: v for k, v in report.as_dict().items()
                         if v is None or isinstance(v, (int, float, str))})
        return imported.unflatten_outputs(out)

    runner = Runner(row, call, args, carried)
    start = time.perf_counter()
    try:
        runner.step()
    except BladecError as exc:
        row.error = str(exc).splitlines()[0]
        row.peak = None
    row.info["first_run_seconds"] = round(time.perf_counter() - start, 3)
    return runner


def bladec_runners(imported: Imported, optimized: Any, args: tuple, jit_peak: int,
                   policy_peaks: dict[str, int], fractions: tuple[float, ...] = FRACTIONS
                   ) -> list[Runner]:
    """bladec at no limit, at ``fractions`` of jit's peak, at the smallest limit that
    works, and at each policy's peak (left out where it is within 5% of a limit already
    run, at or above bladec's peak without a limit, or below the smallest limit)."""
    engine = Engine(optimized, backend=fused_backend())
    runners = [bladec_runner(imported, engine, args, None, "bladec, no limit")]
    runners += [bladec_runner(imported, engine, args, int(f * jit_peak), f"bladec, {f}x")
                for f in fractions]
    probe = bladec_runner(imported, engine, args, 1, "bladec, min")
    smallest = smallest_limit(probe.row.error) if probe.row.error else 1
    if smallest is None or smallest == 1:  # no figure in the refusal, or 1 byte did fit
        runners.append(probe)
    else:
        runners.append(bladec_runner(imported, engine, args, smallest, "bladec, min"))
    limits = [r.row.limit for r in runners if r.row.limit is not None]
    free = runners[0].row.peak
    for name, peak in policy_peaks.items():
        if (smallest is not None and peak < smallest) or (free is not None and peak >= free):
            continue  # the min row, or the row without a limit, is the answer there
        if all(abs(peak - lim) > 0.05 * lim for lim in limits):
            runners.append(bladec_runner(imported, engine, args, peak, f"bladec @ {name}"))
            limits.append(peak)
    return runners


def measure(runners: list[Runner], steps: int, warmup: int) -> None:
    """``warmup`` untimed rounds, then ``steps`` timed ones; one step of every row per
    round, the order rotated by one each round."""
    live = [r for r in runners if not r.row.error]
    for i in range(warmup + steps):
        for r in live[i % len(live):] + live[:i % len(live)]:
            seconds = r.step()
            if i >= warmup:
                r.row.times.append(seconds)
                r.row.cpu_times.append(r.cpu)
                r.row.faults.append(r.faults)


def run_case(cfg: Config, optimizer: str, batch: int, seq: int, steps: int = 5,
             warmup: int = 1, barriers: tuple[bool, ...] = (False, True),
             policies: tuple[str, ...] = REMAT_POLICIES, fractions: tuple[float, ...] = FRACTIONS,
             policy_limits: bool = True, log: Callable[[str], None] = lambda s: None) -> Case:
    """Every row of one (optimizer, batch, sequence), compiled, then measured together."""
    args = make_args(cfg, optimizer, batch, seq)
    runners = [jax_runner(cfg, optimizer, args), jax_runner(cfg, optimizer, args, donate=True)]
    for keep in barriers:
        runners += [jax_runner(cfg, optimizer, args, p, keep_barriers=keep) for p in policies]
    log(f"{optimizer} {batch}x{seq}: jax rows compiled")
    imported = trace(**import_spec(cfg, max(batch, 1), max(seq, 1), optimizer))
    optimized = run_pipeline(imported.module, parse_pipeline("analyze,schedule,remat"))
    jit_peak = runners[0].row.peak or 0
    peaks = {r.row.name: r.row.peak for r in runners if r.row.kind == "checkpoint"}
    runners += bladec_runners(imported, optimized, args, jit_peak,
                              peaks if policy_limits else {}, fractions)
    log(f"{optimizer} {batch}x{seq}: bladec rows planned and compiled")
    measure(runners, steps, warmup)
    return Case(optimizer, batch, seq, [r.row for r in runners])


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """``"8x256,8x512"`` -> ``[(8, 256), (8, 512)]`` (an argparse type)."""
    try:
        shapes = [tuple(int(x) for x in s.split("x")) for s in text.split(",")]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 2 or min(s) < 1 for s in shapes):
        raise argparse.ArgumentTypeError(f"wants BxS[,BxS...], got {text!r}")
    return shapes  # type: ignore[return-value]


def _names(known: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: a comma-separated subset of ``known``."""
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n for n in text.split(",") if n)
        if not names or set(names) - set(known):
            raise argparse.ArgumentTypeError(f"{text!r}: a subset of {', '.join(known)}")
        return names
    return parse


def _fractions(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(f) for f in text.split(",") if f)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants numbers, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=parse_shapes, default="8x256,8x512")
    ap.add_argument("--optimizers", type=_names(("sgd", "adam")), default="sgd,adam")
    ap.add_argument("--model", choices=sorted(MODELS), default="cpu")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per row (at least 5)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--barriers", choices=("default", "kept", "both"), default="both",
                    help="checkpoint rows as XLA compiles them, with cse_barrier_expander "
                         "off, or both")
    ap.add_argument("--policies", type=_names(REMAT_POLICIES), default=",".join(REMAT_POLICIES),
                    help="the jax.checkpoint policies of the checkpoint rows")
    ap.add_argument("--fractions", type=_fractions, default=",".join(map(str, FRACTIONS)),
                    help="bladec's limits as fractions of jit's device peak (0.5 is a goal)")
    ap.add_argument("--no-policy-limits", action="store_true",
                    help="no bladec rows at the checkpoint rows' peaks")
    ap.add_argument("--out", default="out/bench-device.md")
    ap.add_argument("--json", default="out/bench-device.json")
    ap.add_argument("--plot", default="docs/pareto-device.png")
    allocator.add_option(ap)
    args = ap.parse_args(argv)
    if args.steps < 5:
        ap.error("--steps must be at least 5 (the median of at least 5 steps)")
    status = allocator.run_under(args.allocator, sys.argv[1:] if argv is None else argv,
                                 __file__)
    if status is not None:
        return status
    args.out, args.json, args.plot = (allocator.suffixed(p)
                                      for p in (args.out, args.json, args.plot))
    barriers = {"default": (False,), "kept": (True,), "both": (False, True)}[args.barriers]
    cfg = MODELS[args.model]
    start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {msg}", file=sys.stderr, flush=True)
    cases = [run_case(cfg, opt, b, s, args.steps, args.warmup, barriers, args.policies,
                      args.fractions, not args.no_policy_limits, log)
             for opt in args.optimizers for b, s in args.shapes]
    command = "python benchmarks/bench_device.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    date = datetime.date.today().isoformat()
    lines = [f"## Device peak against step time ({date})", "", f"Command: `{command.strip()}`",
             "", f"Model: {cfg}; jax {jax.__version__} on {jax.devices()[0].platform}; "
             f"median of {args.steps} steps after {args.warmup} warm-up round(s), rows "
             f"interleaved; {allocator.describe()} (every row in this process under it; "
             "CPU time: the process's, all threads).", ""]
    goals: dict[str, list[tuple[bool, str]]] = {}
    for case in cases:
        lines += table_lines(case) + [""]
        goals[case.title] = goal_lines(case)
    met = sum(ok for g in goals.values() for ok, _ in g)
    total = sum(len(g) for g in goals.values())
    lines += [f"### Goals (issue 13): {met} of {total} met", ""]
    for title, g in goals.items():
        lines += [f"- {title}:"] + [f"  - {'met' if ok else 'NOT MET'}: {text}" for ok, text in g]
    lines += ["", f"![device peak against step time]({args.plot})", "",
              f"total time: {time.perf_counter() - start:.0f} s"]
    text = "\n".join(lines)
    print(text)
    for path in (args.out, args.json):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")
    dump = {"date": date, "command": command.strip(), "jax": jax.__version__,
            "platform": jax.devices()[0].platform, "model": dataclasses.asdict(cfg),
            "steps": args.steps, "warmup": args.warmup,
            "cases": [{"optimizer": c.optimizer, "batch": c.batch, "seq": c.seq,
                       "rows": [dict(dataclasses.asdict(r), median=r.median) for r in c.rows],
                       "goals": [{"met": ok, "text": t} for ok, t in goals[c.title]]}
                      for c in cases]}
    Path(args.json).write_text(json.dumps(dump, indent=1) + "\n")
    plot(cases, Path(args.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
