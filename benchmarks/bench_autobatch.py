"""bladec.autobatch against DyNet's autobatching, side by side in one process.

    python benchmarks/bench_autobatch.py [--models treelstm,bilstm,mvrnn,earlyexit]
        [--hidden 256] [--batch 8,64] [--warmup 5] [--batches 20] [--unbatched 3] [--ablation 8]
        [--out out/bench-autobatch.md] [--json out/bench-autobatch.json]

The same weights (the ``init_params`` of bladec/models/treelstm.py, bilstm.py, mvrnn.py
and earlyexit.py, copied into DyNet's parameter collection) and the same seeded
instances (trees of 5-45 leaves, sequences of 5-45 tokens) for both; the batches of
the two systems alternate, so both see the same load on the machine's shared cores.
DyNet runs as built (one thread). XLA's CPU client runs without its Eigen thread pool
(``XLA_FLAGS`` set before JAX is imported), so its dots run on one thread, but its loop
fusions are split over the machine's cores (``outer_dimension_partitions`` in the
compiled HLO; XLA sizes that pool from the CPUs the process may run on, no flag), and
the host traces on a thread of its own: the CPU time, which counts every thread, is the
figure that compares the two. Inference: every
instance's loss (DyNet: ``concatenate(losses).npvalue()``); training: the summed loss,
its gradient and an SGD step (DyNet's ``SimpleSGDTrainer``, clipping off). Each figure
is the median wall time of the measured batches after ``--warmup`` batches (results on
the host or ready on the device).

Also: bladec's own unbatched execution (every invocation a call of its own,
``batched=False``), the batches after warm-up that compiled anything, the host
scheduling share (tracing the instances plus building the schedule, over the batch's
wall time; and the same in CPU time: the tracing thread's CPU time over the process's
for the batch, which the load of a shared machine distorts less), and an ablation at
``--ablation`` instances per batch (each technique off in turn). DyNet's first batch's losses are checked against bladec's (the same model).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

if __name__ == "__main__" and "jax" not in sys.modules:
    # dots on one thread: before XLA's CPU client starts (run as a script; imported by
    # a test, the process's JAX is left as it is). Only flags: XLA stops reading
    # XLA_FLAGS at the first word that is not one (a TensorFlow option written here
    # until 2026-12-07 was such a word; the flags after it were ignored, none were)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false").strip()

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.support

import bladec  # noqa: E402
from benchmarks.support import allocator  # noqa: E402
from bladec.models import bilstm, earlyexit, mvrnn, treelstm  # noqa: E402
from bladec.runtime.backends import cpus  # noqa: E402

MODELS = {"treelstm": treelstm, "bilstm": bilstm, "mvrnn": mvrnn, "earlyexit": earlyexit}
# each technique's Options switch and its name in the table: inference, then training
_INFERENCE_SWITCHES = [
    ("static_depth", "static depth"), ("fused_gathers", "fused gathers"),
    ("coarse", "coarse cells"), ("shared_weights", "shared weights"),
    ("sinks_last", "sinks last"), ("align_ends", "aligned ends"),
    ("stack_siblings", "stacked siblings"), ("depth_runs", "depth runs"),
    ("dedupe", "dedupe"), ("tabulate", "tabulation"), ("compose", "composition"),
    ("specialize", "generated recorders"), ("batched", "batching")]
_TRAINING_SWITCHES = [("residuals", "kept products"), ("weight_grads_once", "weights' part once"),
                      ("product_cotangents", "product cotangents")]
# (label, switches off, training): all on, then each one off
ABLATIONS = [(label, switches, train)
             for train, switches_of in ((False, _INFERENCE_SWITCHES), (True, _TRAINING_SWITCHES))
             for label, switches in [("all techniques", {})] +
             [(f"{name} off", {switch: False}) for switch, name in switches_of]]


def dynet_module() -> Any:
    """DyNet with autobatching, configured before its import (its flags are global)."""
    import dynet_config
    dynet_config.set(autobatch=1, random_seed=1, mem="2048")
    import dynet
    return dynet


class _DyModel:
    """A bladec model's weights copied into a DyNet parameter collection: the embedding
    table and the parameters named by ``KEYS`` ((group, name) pairs of ``params``)."""
    KEYS: tuple[tuple[str, str], ...] = ()

    def __init__(self, dy: Any, params: dict[str, Any]) -> None:
        self.dy, pc = dy, dy.ParameterCollection()
        self.pc = pc
        self.hidden = params["emb"].shape[1]
        self.emb = pc.lookup_parameters_from_numpy(params["emb"])
        self.raw = [pc.parameters_from_numpy(params[k][n]) for k, n in self.KEYS]

    def tree_losses(self, instances: list[dict], encode: Callable[[Any], tuple[Any, Any]],
                    wo: Any, bo: Any) -> list[Any]:
        """Each instance's loss: its tree encoded bottom-up, the root classified."""
        out = []
        for inst in instances:
            root, _ = encode(inst["tree"])
            out.append(self.dy.pickneglogsoftmax(wo * root + bo, inst["label"]))
        return out


class DyTreeLSTM(_DyModel):
    """The TreeLSTM of bladec/models/treelstm.py in DyNet, on the same weights."""
    KEYS = (("leaf", "w"), ("leaf", "b"), ("node", "u"), ("node", "b"), ("out", "w"),
            ("out", "b"))

    def losses(self, instances: list[dict]) -> list[Any]:
        dy, h = self.dy, self.hidden
        wl, bl, u, bn, wo, bo = [dy.parameter(p) for p in self.raw]

        def gates(z: Any, k: int) -> list[Any]:
            return [dy.pick_range(z, i * h, (i + 1) * h) for i in range(k)]

        def encode(t: Any) -> tuple[Any, Any]:
            if isinstance(t, list):
                (hl, cl), (hr, cr) = encode(t[0]), encode(t[1])
                i, fl, fr, o, g = gates(u * dy.concatenate([hl, hr]) + bn, 5)
                c = dy.cmult(dy.logistic(i), dy.tanh(g)) + dy.cmult(dy.logistic(fl), cl) + \
                    dy.cmult(dy.logistic(fr), cr)
                return dy.cmult(dy.logistic(o), dy.tanh(c)), c
            i, o, g = gates(wl * dy.lookup(self.emb, t) + bl, 3)
            c = dy.cmult(dy.logistic(i), dy.tanh(g))
            return dy.cmult(dy.logistic(o), dy.tanh(c)), c
        return self.tree_losses(instances, encode, wo, bo)


class DyBiLSTM(_DyModel):
    """The BiLSTM of bladec/models/bilstm.py in DyNet, on the same weights."""
    KEYS = (("fwd", "w"), ("fwd", "b"), ("bwd", "w"), ("bwd", "b"), ("out", "w"),
            ("out", "b"))

    def losses(self, instances: list[dict]) -> list[Any]:
        dy, h = self.dy, self.hidden
        wf, bf, wb, bb, wo, bo = [dy.parameter(p) for p in self.raw]

        def run(w: Any, b: Any, tokens: list[int]) -> Any:
            hs, cs = dy.zeros(h), dy.zeros(h)
            for t in tokens:
                z = w * dy.concatenate([dy.lookup(self.emb, t), hs]) + b
                i, f, o, g = [dy.pick_range(z, k * h, (k + 1) * h) for k in range(4)]
                cs = dy.cmult(dy.logistic(f), cs) + dy.cmult(dy.logistic(i), dy.tanh(g))
                hs = dy.cmult(dy.logistic(o), dy.tanh(cs))
            return hs
        out = []
        for inst in instances:
            tokens = inst["tokens"]
            both = dy.concatenate([run(wf, bf, tokens), run(wb, bb, tokens[::-1])])
            out.append(dy.pickneglogsoftmax(wo * both + bo, inst["label"]))
        return out


class DyMVRNN(_DyModel):
    """The MV-RNN of bladec/models/mvrnn.py in DyNet, on the same weights."""
    KEYS = (("node", "w"), ("node", "b"), ("node", "wm"), ("out", "w"), ("out", "b"))

    def __init__(self, dy: Any, params: dict[str, Any]) -> None:
        super().__init__(dy, params)
        # DyNet reads each entry's matrix column-major: give it the transposes' bytes
        self.mats = self.pc.lookup_parameters_from_numpy(
            np.ascontiguousarray(np.swapaxes(params["mats"], 1, 2)))

    def losses(self, instances: list[dict]) -> list[Any]:
        dy = self.dy
        w, b, wm, wo, bo = [dy.parameter(p) for p in self.raw]

        def encode(t: Any) -> tuple[Any, Any]:
            if isinstance(t, list):
                (a, ma), (bb, mb) = encode(t[0]), encode(t[1])
                v = dy.tanh(w * dy.concatenate([mb * a, ma * bb]) + b)
                return v, wm * dy.concatenate([ma, mb])
            return dy.lookup(self.emb, t), dy.lookup(self.mats, t)
        return self.tree_losses(instances, encode, wo, bo)


class DyEarlyExit(_DyModel):
    """The early-exit classifier of bladec/models/earlyexit.py in DyNet, on the same
    weights. DyNet has no comparison to mask with, so the exits are decided as a dynamic
    framework decides them: every layer and exit head of every instance built, one
    batched forward, each instance's exit read on the host, its loss picked there (the
    same arithmetic as bladec's masked model: every layer for every instance)."""
    KEYS = ()

    def __init__(self, dy: Any, params: dict[str, Any]) -> None:
        super().__init__(dy, params)
        self.layers = [[self.pc.parameters_from_numpy(p[k]) for k in ("w", "b", "exit")]
                       for p in params["layers"]]

    def losses(self, instances: list[dict]) -> list[Any]:
        dy = self.dy
        layers = [[dy.parameter(p) for p in layer] for layer in self.layers]
        heads = []
        for inst in instances:
            h = dy.zeros(self.hidden)
            for t in inst["tokens"]:
                h = h + dy.lookup(self.emb, t)
            mine = []
            for w, b, e in layers:
                h = h + dy.tanh(w * h + b)
                mine.append(dy.log_softmax(e * h))
            heads.append(mine)
        confident = dy.concatenate([dy.max_dim(x) for mine in heads for x in mine])
        best = np.asarray(confident.npvalue()).reshape(len(instances), -1)
        out = []
        for inst, mine, row in zip(instances, heads, best):
            hits = np.flatnonzero(row >= np.log(earlyexit.THRESHOLD))
            exit_ = int(hits[0]) if len(hits) else len(mine) - 1
            out.append(-dy.pick(mine[exit_], inst["label"]))
        return out


DYNET = {"treelstm": DyTreeLSTM, "bilstm": DyBiLSTM, "mvrnn": DyMVRNN,
         "earlyexit": DyEarlyExit}


def dynet_step(net: Any, trainer: Any, instances: list[dict], train: bool) -> np.ndarray:
    dy = net.dy
    dy.renew_cg()
    losses = net.losses(instances)
    if not train:
        return np.asarray(dy.concatenate(losses).npvalue()).reshape(-1)
    total = dy.esum(losses)
    value = total.value()
    total.backward()
    trainer.update()
    return np.asarray([value])


def bladec_step(f: Any, state: dict, instances: list[dict], train: bool, lr: float
                ) -> np.ndarray:
    import jax
    if not train:
        return np.asarray(jax.device_get(f(state["params"], instances)))
    loss, state["params"] = f.train_step(state["params"], instances, lr)
    jax.block_until_ready(state["params"])
    return np.asarray([float(loss)])


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``fn()`` (the CPU time of the whole process: XLA's
    threads included), and its result."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def compare(model: str, hidden: int, batch: int, train: bool, warmup: int, batches: int,
            unbatched: int, lr: float, dy: Any) -> dict[str, Any]:
    """One row: bladec and DyNet alternating over the same batches."""
    import jax
    mod = MODELS[model]
    raw = mod.init_params(hidden=hidden, seed=0)
    params = jax.tree_util.tree_map(jax.numpy.asarray, raw)
    f = bladec.autobatch(mod.model)
    net = DYNET[model](dy, raw)
    trainer = dy.SimpleSGDTrainer(net.pc, learning_rate=lr)
    trainer.set_clip_threshold(0)
    state = {"params": params}
    ours, theirs, host, host_cpu, compiled, first = [], [], [], [], [], None
    ours_cpu, theirs_cpu, calls, traced, scheduled = [], [], [], [], []
    for i in range(warmup + batches):
        instances = mod.instances(batch, seed=1000 * batch + i)
        t_b, c_b, out_b = timed(lambda: bladec_step(f, state, instances, train, lr))
        t_d, c_d, out_d = timed(lambda: dynet_step(net, trainer, instances, train))
        if first is None:
            first = float(np.max(np.abs(out_b - out_d) / np.maximum(np.abs(out_d), 1e-6)))
        if i >= warmup:
            r = f.report()
            ours.append(t_b)
            theirs.append(t_d)
            ours_cpu.append(c_b)
            theirs_cpu.append(c_d)
            host.append(r.host_seconds / r.seconds)
            host_cpu.append(r.host_cpu_seconds / c_b)
            traced.append(r.trace_seconds)        # the host share's two parts
            scheduled.append(r.schedule_seconds)
            compiled.append(r.compilations > 0)
            calls.append(r.calls)
    row = {"model": model, "hidden": hidden, "batch": batch,
           "mode": "training" if train else "inference",
           "bladec_ms": 1e3 * statistics.median(ours),
           "dynet_ms": 1e3 * statistics.median(theirs),
           "bladec_cpu_ms": 1e3 * statistics.median(ours_cpu),
           "dynet_cpu_ms": 1e3 * statistics.median(theirs_cpu),
           "host_share": statistics.median(host),
           "host_share_cpu": statistics.median(host_cpu),
           "trace_ms": 1e3 * statistics.median(traced),
           "schedule_ms": 1e3 * statistics.median(scheduled),
           "batches_compiling": sum(compiled), "batches": len(compiled),
           "calls": statistics.median(calls),
           "first_batch_rel_diff": first, "kernels": f.report().kernels,
           "compilations": f.report().total_compilations,
           "cpus": len(cpus.usable()), "allocator": allocator.current()}
    row["vs_dynet"] = row["dynet_ms"] / row["bladec_ms"]
    row["vs_dynet_cpu"] = row["dynet_cpu_ms"] / row["bladec_cpu_ms"]
    if unbatched:
        g = bladec.autobatch(mod.model, batched=False)
        times = []
        for i in range(1 + unbatched):
            instances = mod.instances(batch, seed=1000 * batch + i)
            s = {"params": params}
            t, _, _ = timed(lambda: bladec_step(g, s, instances, train, lr))
            if i:
                times.append(t)
        row["unbatched_ms"] = 1e3 * statistics.median(times)
        row["vs_unbatched"] = row["unbatched_ms"] / row["bladec_ms"]
    return row


def ablation(model: str, hidden: int, batch: int, warmup: int, batches: int
             ) -> list[dict[str, Any]]:
    """Inference (and, for the training techniques, a training step: the gradient and
    the SGD update) with each technique switched off in turn, on one batch run again and
    again (its first runs compile; the medians are over the runs after ``warmup``): the
    steady cost of each variant, not its compilations. Each variant alternates run by
    run with the model with every technique on, and its ratio is over the runs of that
    pairing: measured one after the other, the variant measured first came out 20-30%
    slower than those after it (2026-12-07), whatever it switched off."""
    import jax
    mod = MODELS[model]
    params = jax.tree_util.tree_map(jax.numpy.asarray, mod.init_params(hidden=hidden))
    instances = mod.instances(batch, seed=7000)
    base = bladec.autobatch(mod.model)
    rows = []
    for label, switches, train in ABLATIONS:
        f = bladec.autobatch(mod.model, **switches) if switches else base
        n = batches if switches.get("batched", True) else max(1, batches // 4)
        times, host, cpu, base_times, base_cpu = [], [], [], [], []
        for i in range(warmup + n):   # (a fresh state each: the parameters stay as given)
            t, c, _ = timed(lambda: bladec_step(f, {"params": params}, instances, train,
                                                0.01))
            h = f.report().host_seconds
            t0, c0, _ = timed(lambda: bladec_step(base, {"params": params}, instances,
                                                  train, 0.01))
            if i >= warmup:
                times.append(t)
                cpu.append(c)
                host.append(h)
                base_times.append(t0)
                base_cpu.append(c0)
        r = f.report()
        rows.append({"model": model, "hidden": hidden, "batch": batch, "variant": label,
                     "mode": "training" if train else "inference",
                     "ms": 1e3 * statistics.median(times),
                     "cpu_ms": 1e3 * statistics.median(cpu),
                     "host_ms": 1e3 * statistics.median(host), "calls": r.calls,
                     "slowdown": statistics.median(times) / statistics.median(base_times),
                     "cpu_slowdown": statistics.median(cpu) / statistics.median(base_cpu)})
    return rows


def markdown(rows: list[dict], ablations: list[dict], command: str) -> str:
    lines = [f"`{command}`", "", f"The process may use {len(cpus.usable())} CPUs; "
             f"{allocator.describe()}.", "",
             "| model | hidden | batch | mode | bladec ms | DyNet ms | vs DyNet | "
             "bladec CPU ms | DyNet CPU ms | vs DyNet (CPU) | unbatched ms | vs unbatched | "
             "host share | host share (CPU) | batches compiling |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unb = (f"{r['unbatched_ms']:.1f} | {r['vs_unbatched']:.1f}x"
               if "unbatched_ms" in r else "- | -")
        lines.append(f"| {r['model']} | {r['hidden']} | {r['batch']} | {r['mode']} | "
                     f"{r['bladec_ms']:.1f} | {r['dynet_ms']:.1f} | {r['vs_dynet']:.2f}x | "
                     f"{r['bladec_cpu_ms']:.1f} | {r['dynet_cpu_ms']:.1f} | "
                     f"{r['vs_dynet_cpu']:.2f}x | "
                     f"{unb} | {r['host_share']:.0%} | {r.get('host_share_cpu', 0.0):.0%} | "
                     f"{r['batches_compiling']}/{r['batches']} |")
    if ablations:
        lines += ["", "| model | batch | mode | variant | ms | x all | CPU ms | x all (CPU) | "
                  "host ms | calls |", "|---|---|---|---|---|---|---|---|---|---|"]
        for a in ablations:
            lines.append(f"| {a['model']} | {a['batch']} | {a.get('mode', 'inference')} | "
                         f"{a['variant']} | {a['ms']:.1f} | "
                         f"{a['slowdown']:.2f}x | {a.get('cpu_ms', 0.0):.1f} | "
                         f"{a.get('cpu_slowdown', 0.0):.2f}x | {a['host_ms']:.1f} | "
                         f"{a['calls']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="treelstm,bilstm")
    ap.add_argument("--hidden", default="256")
    ap.add_argument("--batch", default="8,64")
    ap.add_argument("--modes", default="inference,training")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--unbatched", type=int, default=3,
                    help="batches of bladec's unbatched execution (0: none)")
    ap.add_argument("--ablation", type=int, default=8,
                    help="instances per batch of the ablation (0: none)")
    ap.add_argument("--no-compare", action="store_true",
                    help="only the ablation (no side by side with DyNet)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--sync", action="store_true",
                    help="XLA's CPU client runs each call in the calling thread (JAX's "
                         "jax_cpu_enable_async_dispatch off), as DyNet does")
    ap.add_argument("--cpus", type=int, default=0,
                    help="run the whole process on this many of its CPUs (0: all it may "
                         "use); set before XLA's CPU client starts, whose thread pool "
                         "takes its size from them")
    allocator.add_option(ap, default="default")
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    status = allocator.run_under(args.allocator, sys.argv[1:] if argv is None else argv,
                                 __file__)
    if status is not None:   # the children measured it, one per allocator
        return status
    if args.cpus:
        try:
            cpus.confine(args.cpus)
        except bladec.BladecError as exc:
            raise SystemExit(str(exc)) from None
    if args.sync:
        import jax
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    dy = dynet_module()
    rows, ablations = [], []
    for model in args.models.split(","):
        for hidden in map(int, args.hidden.split(",")):
            for batch in map(int, args.batch.split(",")) if not args.no_compare else ():
                for mode in args.modes.split(","):
                    row = compare(model, hidden, batch, mode == "training", args.warmup,
                                  args.batches, args.unbatched if batch == max(
                                      map(int, args.batch.split(","))) else 0,
                                  args.lr, dy)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
            if args.ablation:
                ablations += ablation(model, hidden, args.ablation, args.warmup,
                                      args.batches)
                print(json.dumps(ablations[-len(ABLATIONS):]), flush=True)
    text = markdown(rows, ablations, "python benchmarks/bench_autobatch.py " +
                    " ".join(argv if argv is not None else sys.argv[1:]))
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"rows": rows, "ablation": ablations},
                                              indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
