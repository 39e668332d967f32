"""Redistributions: bladec's normal-form programs against XLA's own resharding.

    python benchmarks/bench_reshard.py [--repeats R] [--only NAME] [--check]
        [--out out/bench-reshard.md] [--json out/bench-reshard.json]
    python benchmarks/bench_reshard.py --pairs [--sample N] [--repeats R] [--seed S]

The cases (issue 34, benchmarks/support/reshard_cases.py): per case bladec's program
(``bladec run``'s shard_map) and ``jax.jit(lambda x: x, out_shardings=target)``, side by
side in one process: collectives counted in each compiled HLO, per-device peak
(argument + output + scratch of ``memory_analysis()``), the median wall and CPU time of
``--repeats`` paired calls (each round calls every program once, the order turned
round by round), every output checked bit for bit against the source array on every
device; where bladec's plan moves part of an axis, the whole-axis plan is timed too
(the cost model's choice against the clock), and a least-squares fit of the times on
the model's terms (collectives, bytes sent). Printed: per case and the geometric mean.
``--check``: the cases at small sizes, untimed (a test in make test); ``--repeats 0``: at
full size, untimed (the per-device peak against XLA's, also in make test).

``--pairs`` (issue 17): for pairs of distinct shardings of a rank-2 (64x64) and a rank-3 (64x64x64) f32 array over
the meshes {x:4, y:2} and {x:2, y:2, z:2} (8 CPU devices; every pair, or ``--sample N``
random pairs per mesh and rank), three programs move the array placed under the source
sharding to the target sharding:

- bladec: the ``redistribute`` pass's collectives under ``jax.shard_map`` (bladec run);
- XLA, identity: ``jax.jit(lambda x: x, out_shardings=target)``;
- XLA, constraint: ``jax.jit`` of a step whose value passes ``with_sharding_constraint``
  to the target (``x * 2`` before and ``+ 1`` after, so that it is a step, not a copy;
  bladec's row for it runs the same elementwise ops around its program).

Per program: scratch bytes per device (``memory_analysis().temp_size_in_bytes``), bytes
each device sends, from the compiled HLO's collectives (all-gather and all-to-all:
result x (g-1)/g for a group of g; collective-permute: result x the share of pairs that
move; all-reduce: 2 x result x (g-1)/g), the largest per-device value a collective makes
(``replicates`` when it exceeds max(source local, target local): XLA gathered more than
either end holds), and the median of ``--repeats`` timed calls, the three programs of a
pair interleaved. Goals (issue 17): 100% of bladec's programs within the bound;
geometric-mean speed at least 1.0x XLA's over all pairs and 1.5x where XLA replicates.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bladec.emit.shard import jax_mesh, partition_spec, sharded_program  # noqa: E402
from bladec.ir import Func, Mesh, Op, TensorType, Value  # noqa: E402
from bladec.passes.redistribute import plan  # noqa: E402
from bladec.sharding import all_shardings, ways  # noqa: E402
from bladec.types import format_sharding  # noqa: E402

MESHES = [Mesh((("x", 4), ("y", 2))), Mesh((("x", 2), ("y", 2), ("z", 2)))]
SHAPES = {2: (64, 64), 3: (64, 64, 64)}
_COLLECTIVE = re.compile(r"=\s*(\(?[^=]*?\)?)\s+(all-gather|all-to-all|collective-permute|"
                         r"all-reduce)(?:-start)?\(")
_ARRAY = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")
_WIDTH = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "s32": 4, "u32": 4, "pred": 1}


def _group_size(line: str, devices: int) -> int:
    m = re.search(r"replica_groups=mesh\[([^\]]*)\]", line)
    if m:  # replica_groups=mesh['axis_0'=2,...], device_ids=(...) {'axis_2'}
        sizes = dict(re.findall(r"'([^']+)'=([0-9]+)", m.group(1)))
        over = re.search(r"device_ids=\(.*?\)\)?\s*\{([^}]*)\}", line)
        names = re.findall(r"'([^']+)'", over.group(1)) if over else list(sizes)
        return math.prod(int(sizes[n]) for n in names)
    m = re.search(r"replica_groups=\{\{([0-9,]*)\}", line)
    if m:
        return len(m.group(1).split(","))
    m = re.search(r"replica_groups=\[([0-9]+),([0-9]+)\]", line)
    if m:
        return int(m.group(2))
    return devices


def collectives(hlo: str, devices: int) -> tuple[int, int, int]:
    """(bytes sent per device, largest collective result in elements, collective count)."""
    sent, largest, count = 0.0, 0, 0
    for line in hlo.splitlines():
        m = _COLLECTIVE.search(line)
        if not m or "-done" in line.split("=")[0]:
            continue
        count += 1
        arrays = [(t, [int(d) for d in dims.split(",") if d]) for t, dims in
                  _ARRAY.findall(m.group(1))]
        nbytes = sum(_WIDTH.get(t, 4) * math.prod(dims) for t, dims in arrays)
        largest = max([largest] + [math.prod(dims) for _, dims in arrays])
        kind = m.group(2)
        g = _group_size(line, devices)
        if kind in ("all-gather", "all-to-all"):
            sent += nbytes * (g - 1) / g
        elif kind == "all-reduce":
            sent += 2 * nbytes * (g - 1) / g
        else:
            pairs = re.findall(r"\{([0-9]+),([0-9]+)\}", line.split("source_target_pairs=")[-1])
            moving = sum(1 for a, b in pairs if a != b)
            sent += nbytes * (moving / len(pairs) if pairs else 1)
    return int(sent), largest, count


def _measure(compiled, args, devices: int) -> dict:
    mem = compiled.memory_analysis()
    sent, largest, count = collectives(compiled.as_text(), devices)
    return {"temp": int(mem.temp_size_in_bytes), "out": int(mem.output_size_in_bytes),
            "sent": sent, "largest": largest, "collectives": count, "times": []}


def programs(mesh: Mesh, rank: int, src, dst) -> dict:
    """The three compiled programs of a pair, with their input placed."""
    shape = SHAPES[rank]
    jm = jax_mesh(mesh)
    target = jax.sharding.NamedSharding(jm, partition_spec(dst))
    source = jax.sharding.NamedSharding(jm, partition_spec(src))
    x = jax.device_put(np.random.default_rng(0).standard_normal(shape).astype(np.float32),
                       source)
    t0, t1 = TensorType(shape, "f32", None, src), TensorType(shape, "f32", None, dst)
    reshard = Func("main", [Value("%a", t0)], [Op("reshard", ["%a"], [Value("%b", t1)])],
                   ["%b"])
    step = Func("main", [Value("%a", t0)], [
        Op("add", ["%a", "%a"], [Value("%a2", t0)]),
        Op("reshard", ["%a2"], [Value("%b", t1)]),
        Op("exp", ["%b"], [Value("%c", t1)])], ["%c"])
    out = {}
    for name, func in (("bladec", reshard), ("bladec_step", step)):
        prog = sharded_program(func, mesh, {v: shape for v in func.value_types()})
        out[name] = prog.fn.lower(x).compile()
    out["xla_identity"] = jax.jit(lambda a: a, out_shardings=target).lower(x).compile()
    out["xla_step"] = jax.jit(lambda a: jnp_exp(jax.lax.with_sharding_constraint(a + a, target))
                              ).lower(x).compile()
    return {"x": x, "compiled": out}


def jnp_exp(a):
    return jax.numpy.exp(a)


def bench(sample: int | None, repeats: int, seed: int) -> list[dict]:
    pick = random.Random(seed)
    rows = []
    for mesh in MESHES:
        for rank in (2, 3):
            specs = all_shardings(mesh, rank)
            pairs = [(s, d) for s in specs for d in specs if s != d]
            stratum = len(pairs)
            if sample is not None and sample < len(pairs):
                pairs = pick.sample(pairs, sample)
            for src, dst in pairs:
                made = programs(mesh, rank, src, dst)
                x, compiled = made["x"], made["compiled"]
                stats = {k: _measure(c, x, mesh.devices) for k, c in compiled.items()}
                order = list(compiled)
                for _ in range(repeats):  # interleaved, so load falls on all alike, and
                    pick.shuffle(order)   # in a new order each time (no place favoured)
                    for k in order:
                        start = time.perf_counter()
                        jax.block_until_ready(compiled[k](x))
                        stats[k]["times"].append(time.perf_counter() - start)
                n = math.prod(SHAPES[rank])
                bound = n // min(ways(mesh, src), ways(mesh, dst))
                used, steps = plan(mesh, src, dst, SHAPES[rank])
                rows.append({
                    "mesh": dict(mesh.axes), "rank": rank, "stratum_pairs": stratum,
                    "src": format_sharding(src),
                    "dst": format_sharding(dst), "bound_elems": bound,
                    "bladec_steps": [s.op for s in steps],
                    "bladec_within_bound": all(n // ways(used, s.sharding) <= bound
                                               for s in steps)
                    and stats["bladec"]["largest"] <= bound,
                    "xla_replicates": stats["xla_identity"]["largest"] > bound,
                    "xla_step_replicates": stats["xla_step"]["largest"] > bound,
                    **{f"{k}_{m}": (statistics.median(v["times"]) if m == "time" else v[m])
                       for k, v in stats.items() for m in ("time", "temp", "sent", "largest")},
                })
    return rows


def _geomean(xs: list[float], weights: list[float] | None = None) -> float:
    if not xs:
        return float("nan")
    w = weights or [1.0] * len(xs)
    return math.exp(sum(wi * math.log(x) for wi, x in zip(w, xs)) / sum(w))


def _strata(rows: list[dict]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault((tuple(r["mesh"].items()), r["rank"]), []).append(r)
    return out


def summarize(rows: list[dict]) -> dict:
    """Geometric means over the pairs measured and, weighting each pair by how many
    pairs of its mesh and rank it stands for, an estimate of the mean over every pair
    (the same figure where every pair was measured)."""
    strata = _strata(rows)
    weight = {id(r): r.get("stratum_pairs", len(group)) / len(group)
              for group in strata.values() for r in group}
    out = {"pairs": len(rows), "all_pairs": sum(g[0].get("stratum_pairs", len(g))
                                                for g in strata.values()),
           "within_bound": sum(r["bladec_within_bound"] for r in rows)}
    for base, rep in (("xla_identity", "xla_replicates"), ("xla_step", "xla_step_replicates")):
        mine = "bladec" if base == "xla_identity" else "bladec_step"

        def speed(group: list[dict], weighted: bool = False) -> float:
            return _geomean([r[f"{base}_time"] / r[f"{mine}_time"] for r in group],
                            [weight[id(r)] for r in group] if weighted else None)
        hit = [r for r in rows if r[rep]]
        out[base] = {
            "speedup_geomean": speed(rows), "replicating_pairs": len(hit),
            "speedup_geomean_replicating": speed(hit),
            "speedup_geomean_all_pairs": speed(rows, True),
            "speedup_geomean_replicating_all_pairs": speed(hit, True),
            "temp_ratio_geomean": _geomean([max(r[f"{base}_temp"], 1) / max(r[f"{mine}_temp"], 1)
                                            for r in rows]),
            "sent_ratio_geomean": _geomean([max(r[f"{base}_sent"], 1) / max(r[f"{mine}_sent"], 1)
                                            for r in rows]),
            "strata": [{"mesh": dict(mesh), "rank": rank, "measured": len(group),
                        "pairs": group[0].get("stratum_pairs", len(group)),
                        "speedup_geomean": speed(group),
                        "replicating": sum(r[rep] for r in group),
                        "speedup_geomean_replicating": speed([r for r in group if r[rep]])}
                       for (mesh, rank), group in strata.items()],
        }
    return out


def markdown(rows: list[dict], summary: dict, command: str) -> str:
    every = summary["pairs"] == summary["all_pairs"]
    lines = [f"command: `{command}`, {datetime.date.today()}, JAX {jax.__version__}, "
             f"{jax.devices()[0].platform} x {len(jax.devices())}", "",
             f"pairs measured: {summary['pairs']} of {summary['all_pairs']}; bladec within "
             f"the bound: {summary['within_bound']}", "",
             "| baseline | speed-up (geomean, measured) | estimate over every pair | pairs XLA "
             "replicates | speed-up there | estimate over every such pair | XLA scratch / "
             "bladec | XLA bytes sent / bladec |", "| --- " * 8 + "|"]
    for base in ("xla_identity", "xla_step"):
        s = summary[base]
        lines.append(f"| {base} | {s['speedup_geomean']:.2f}x | "
                     f"{s['speedup_geomean_all_pairs']:.2f}x | {s['replicating_pairs']} | "
                     f"{s['speedup_geomean_replicating']:.2f}x | "
                     f"{s['speedup_geomean_replicating_all_pairs']:.2f}x | "
                     f"{s['temp_ratio_geomean']:.2f}x | {s['sent_ratio_geomean']:.2f}x |")
    i = summary["xla_identity"]
    lines += ["", "| mesh | rank | pairs measured | of | speed-up | XLA replicates | "
              "speed-up there |", "| --- " * 7 + "|"]
    lines += [f"| {s['mesh']} | {s['rank']} | {s['measured']} | {s['pairs']} | "
              f"{s['speedup_geomean']:.2f}x | {s['replicating']} | "
              f"{s['speedup_geomean_replicating']:.2f}x |" for s in i["strata"]]
    verdict = {True: "met", False: "NOT met"}
    over = "every pair" if every else "every pair (estimated from the sample, by mesh and rank)"
    lines += ["", f"goals (against the jit identity, over {over}):",
              f"- every program within the bound: {verdict[summary['within_bound'] == summary['pairs']]}",
              f"- geomean speed >= 1.0x: {verdict[i['speedup_geomean_all_pairs'] >= 1.0]} "
              f"({i['speedup_geomean_all_pairs']:.2f}x)",
              f"- geomean speed >= 1.5x where XLA replicates: "
              f"{verdict[i['speedup_geomean_replicating_all_pairs'] >= 1.5]} "
              f"({i['speedup_geomean_replicating_all_pairs']:.2f}x; "
              f"{i['replicating_pairs']} pairs measured)"]
    lines += ["", "pairs where XLA's identity replicates (mesh, source -> target):", ""]
    lines += [f"- {r['mesh']} {r['src']} -> {r['dst']}: XLA {r['xla_identity_temp']} B scratch, "
              f"{r['xla_identity_time'] * 1e3:.2f} ms; bladec {r['bladec_temp']} B, "
              f"{r['bladec_time'] * 1e3:.2f} ms ({', '.join(r['bladec_steps'])})"
              for r in rows if r["xla_replicates"]]
    return "\n".join(lines) + "\n"


# -- the cases of issue 34 ------------------------------------------------------------

def _peak(compiled) -> int:
    """Bytes one device holds at the program's peak, as XLA plans it: its input block,
    its output block and the scratch (SPMD figures are per device)."""
    m = compiled.memory_analysis()
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
               - m.alias_size_in_bytes)


def _bit_equal(out, a: np.ndarray, want) -> bool:
    """Every device holds exactly its block of ``a`` under the target sharding."""
    if not np.array_equal(np.asarray(out), a):
        return False
    placed = jax.device_put(a, want)
    mine = {s.device.id: np.asarray(s.data) for s in out.addressable_shards}
    theirs = {s.device.id: np.asarray(s.data) for s in placed.addressable_shards}
    return mine.keys() == theirs.keys() and all(np.array_equal(mine[d], theirs[d])
                                                for d in mine)


def run_case(case, repeats: int, check_only: bool, seed: int) -> dict:
    """One case: bladec's program (and, where its plan moves part of an axis, the
    whole-axis plan) and XLA's identity with ``out_shardings``, compiled, checked bit
    for bit, then called in alternating order ``repeats`` times (wall and CPU time)."""
    from benchmarks.support.reshard_cases import reshard_func, small, steps_func
    from bladec.passes.redistribute import plan
    shape = small(case) if check_only else case.shape
    jm = jax_mesh(case.mesh)
    source = jax.sharding.NamedSharding(jm, partition_spec(case.src))
    target = jax.sharding.NamedSharding(jm, partition_spec(case.dst))
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x = jax.device_put(a, source)
    dims = tuple(None if i in case.dynamic else n for i, n in enumerate(shape))
    used, steps = plan(case.mesh, case.src, case.dst, dims)
    funcs = {"bladec": reshard_func(case, shape)}
    if used != case.mesh and not check_only:
        whole = plan(case.mesh, case.src, case.dst, dims, sub_axes=False)[1]
        funcs["bladec_whole"] = steps_func(case, shape, whole)
    compiled = {k: sharded_program(f, case.mesh, {v: shape for v in f.value_types()}
                                   ).fn.lower(x).compile() for k, f in funcs.items()}
    compiled["xla"] = jax.jit(lambda v: v, out_shardings=target).lower(x).compile()
    row = {"name": case.name, "kind": case.kind, "mesh": dict(case.mesh.axes),
           "shape": list(shape), "dynamic": list(case.dynamic),
           "src": format_sharding(case.src), "dst": format_sharding(case.dst),
           "sub_axes": used != case.mesh, "steps": [s.op for s in steps],
           "bound_bytes": 4 * math.prod(shape) // min(ways(case.mesh, case.src),
                                                      ways(case.mesh, case.dst))}
    for k, c in compiled.items():
        out = c(x)
        out = out[0] if isinstance(out, (tuple, list)) else out
        hlo = c.as_text()
        sent, largest, count = collectives(hlo, case.mesh.devices)
        row[k] = {"bit_equal": _bit_equal(out, a, target), "peak": _peak(c),
                  "temp": int(c.memory_analysis().temp_size_in_bytes), "sent": sent,
                  "largest_bytes": 4 * largest, "collectives": count,
                  "kinds": [m.group(2) for m in map(_COLLECTIVE.search, hlo.splitlines())
                            if m and "-done" not in m.string.split("=")[0]],
                  "wall": [], "cpu": []}
    order = list(compiled)
    for r in range(repeats):  # paired: every program once per round, the order turned
        for k in order[r % len(order):] + order[:r % len(order)]:
            w, t = time.perf_counter(), time.process_time()
            jax.block_until_ready(compiled[k](x))
            row[k]["wall"].append(time.perf_counter() - w)
            row[k]["cpu"].append(time.process_time() - t)
    if "bladec_whole" in compiled and repeats:
        row["whole_over_sub"] = statistics.median(
            w / b for w, b in zip(row["bladec_whole"]["wall"], row["bladec"]["wall"]))
    if "xla" in compiled and repeats:  # paired: the median of the rounds' ratios
        row["speedup"] = statistics.median(
            x / b for x, b in zip(row["xla"]["wall"], row["bladec"]["wall"]))
        row["cpu_speedup"] = statistics.median(
            x / max(b, 1e-9) for x, b in zip(row["xla"]["cpu"], row["bladec"]["cpu"]))
    for k in compiled:
        for m in ("wall", "cpu"):
            row[k][m] = statistics.median(row[k][m]) if row[k][m] else None
    return row


_PROGRAMS = ("bladec", "bladec_whole", "xla")


def summarize_cases(rows: list[dict]) -> dict:
    timed = [r for r in rows if "xla" in r and r["bladec"]["wall"]]
    speed = [r["speedup"] for r in timed]
    cpu = [r["cpu_speedup"] for r in timed]
    out = {"cases": len(rows), "bit_equal": sum(all(r[k]["bit_equal"] for k in _PROGRAMS
                                                    if k in r) for r in rows),
           "within_bound": sum(r["bladec"]["largest_bytes"] <= r["bound_bytes"] for r in rows),
           "peak_above_xla": [r["name"] for r in rows if r["bladec"]["peak"] > r["xla"]["peak"]],
           "collectives_above_xla": [r["name"] for r in rows
                                     if r["bladec"]["collectives"] > r["xla"]["collectives"]]}
    if timed:
        out.update({
            "speedup_geomean": _geomean(speed), "cpu_speedup_geomean": _geomean(cpu),
            "speedup_min": min(speed), "below_0_9": [r["name"] for r, v in zip(timed, speed)
                                                     if v < 0.9],
            "sub_axes_faster_than_whole": [
                (r["name"], r["whole_over_sub"])
                for r in timed if "bladec_whole" in r],
            "model_fit": _fit(timed)})
    return out


def _fit(rows: list[dict]) -> dict:
    """The cost model's terms against measured times: least squares of each program's
    median wall time on (1, collectives, bytes sent per device), over bladec's and XLA's
    programs; R^2 says how much of the time the two terms explain."""
    progs = [r[k] for r in rows for k in _PROGRAMS if k in r]
    a = np.array([[1.0, p["collectives"], p["sent"]] for p in progs])
    y = np.array([p["wall"] for p in progs])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    resid = y - a @ coef
    r2 = 1 - float(resid @ resid) / max(float(((y - y.mean()) ** 2).sum()), 1e-30)
    return {"programs": len(progs), "fixed_s": float(coef[0]), "per_collective_s": float(coef[1]),
            "per_MiB_s": float(coef[2]) * 2 ** 20, "r2": r2}


def markdown_cases(rows: list[dict], s: dict, command: str) -> str:
    lines = [f"command: `{command}`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
             f"UTC, JAX {jax.__version__}, {jax.devices()[0].platform} x {len(jax.devices())}, "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", "",
             "| case | mesh | shape | source -> target | bladec steps | collectives b/X | "
             "peak B b/X | wall ms b/X (medians) | speed-up (median of paired rounds) | "
             "CPU speed-up |", "| --- " * 10 + "|"]
    for r in rows:
        b, x = r["bladec"], r["xla"]
        shape = "x".join("?" if i in r["dynamic"] else str(n) for i, n in enumerate(r["shape"]))
        steps = ", ".join(r["steps"]) + (" (sub-axes)" if r["sub_axes"] else "")
        lines.append(
            f"| {r['name']} | {'x'.join(map(str, r['mesh'].values()))} | {shape} | "
            f"{r['src']} -> {r['dst']} | {steps} | {b['collectives']}/{x['collectives']} | "
            f"{b['peak']:,}/{x['peak']:,} | " + (
                f"{b['wall'] * 1e3:.3f}/{x['wall'] * 1e3:.3f} | {r['speedup']:.2f}x | "
                f"{r['cpu_speedup']:.2f}x |" if b["wall"] is not None else "- | - | - |"))
    lines += ["", f"cases: {s['cases']}; bit-equal: {s['bit_equal']}; within max(source, "
              f"target) local: {s['within_bound']}",
              f"per-device peak above XLA's: {s['peak_above_xla'] or 'none'}; more "
              f"collectives than XLA: {s['collectives_above_xla'] or 'none'}"]
    if "speedup_geomean" in s:
        f = s["model_fit"]
        lines += [f"geometric mean speed-up over XLA: **{s['speedup_geomean']:.2f}x** wall, "
                  f"{s['cpu_speedup_geomean']:.2f}x CPU; lowest {s['speedup_min']:.2f}x; "
                  f"below 0.9x: {s['below_0_9'] or 'none'}",
                  "sub-axis plan against the whole-axis plan (whole / sub wall time): " +
                  (", ".join(f"{n} {v:.2f}x" for n, v in s["sub_axes_faster_than_whole"])
                   or "none"),
                  f"cost model: wall = {f['fixed_s'] * 1e6:.0f} us + {f['per_collective_s'] * 1e6:.0f}"
                  f" us per collective + {f['per_MiB_s'] * 1e3:.2f} ms per MiB sent per device "
                  f"(R^2 {f['r2']:.2f}, {f['programs']} programs)"]
    return "\n".join(lines) + "\n"


def main() -> None:
    # 8 CPU devices: read when JAX's backend starts, which importing this file does not do
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=8").strip()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", action="store_true",
                    help="pairs of shardings (issue 17) instead of the cases (issue 34)")
    ap.add_argument("--check", action="store_true",
                    help="the cases at small sizes, no timing: bit-equality and the bound "
                         "(make test)")
    ap.add_argument("--only", default=None, help="cases whose name contains this")
    ap.add_argument("--sample", type=int, default=None,
                    help="random pairs per mesh and rank (default: every pair)")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    command = "python benchmarks/bench_reshard.py " + " ".join(sys.argv[1:])
    if args.pairs:
        rows = bench(args.sample, args.repeats, args.seed)
        summary = summarize(rows)
        text = markdown(rows, summary, command)
    else:
        from benchmarks.support.reshard_cases import CASES
        cases = [c for c in CASES if args.only is None or args.only in c.name]
        rows = [run_case(c, 0 if args.check else args.repeats, args.check, args.seed)
                for c in cases]
        summary = summarize_cases(rows)
        text = markdown_cases(rows, summary, command)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
