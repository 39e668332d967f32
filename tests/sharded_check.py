"""Run in a subprocess by tests/test_sharded_run.py: JAX must see 8 CPU devices, which is
fixed when its backend starts, so the rest of the suite keeps its one device.

    python tests/sharded_check.py pairs [SEED]   # redistribute programs against JAX's reshard
    python tests/sharded_check.py llama          # the sharded Llama step against one device

Prints one JSON object; the test asserts on it.
"""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8").strip()
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from bladec.emit.shard import sharded_program  # noqa: E402
from bladec.ir import Func, Op, TensorType, Value  # noqa: E402
from bladec.passes.redistribute import RedistributePass  # noqa: E402
from bladec.verify import verify  # noqa: E402
from test_redistribute import MESHES, all_shardings, program  # noqa: E402


def same_on_every_device(have: jax.Array, want: jax.Array) -> bool:
    """Equal values, device by device (a replica on the wrong device counts too)."""
    mine = {s.device.id: np.asarray(s.data) for s in have.addressable_shards}
    theirs = {s.device.id: np.asarray(s.data) for s in want.addressable_shards}
    return mine.keys() == theirs.keys() and all(
        np.array_equal(mine[d], theirs[d]) for d in mine)


def check_batch(mesh, shape, pairs, rng) -> list:
    """One shard_map program that reshards one input per pair; every pair's output is
    held against ``jax.device_put`` of the input to the target sharding (JAX's reshard)."""
    args, ops, outs = [], [], []
    for i, (src, dst) in enumerate(pairs):
        module = RedistributePass().apply(program(mesh, shape, src, dst))
        verify(module)
        args.append(Value(f"%a{i}", TensorType(shape, "f32", None, src)))
        rename = {"%a": f"%a{i}"}
        for op in module.main.ops:
            ops.append(Op(op.name, [rename.get(o, f"{o}.{i}") for o in op.operands],
                          [Value(f"{r.name}.{i}", r.type) for r in op.results], op.attrs))
        (out,) = module.main.returns  # %a itself where nothing changes
        outs.append(rename.get(out, f"{out}.{i}"))
    func = Func("main", args, ops, outs)
    shapes = {v: shape for v in func.value_types()}
    prog = sharded_program(func, mesh, shapes)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in pairs]
    placed = [jax.device_put(x, jax.sharding.NamedSharding(prog.mesh, s))
              for x, s in zip(xs, prog.in_specs)]
    results = prog.fn(*placed)
    bad = []
    for (src, dst), x, arg, out, spec in zip(pairs, xs, placed, results, prog.out_specs):
        want = jax.device_put(arg, jax.sharding.NamedSharding(prog.mesh, spec))
        if not (np.array_equal(np.asarray(out), x) and same_on_every_device(out, want)):
            bad.append([repr(src), repr(dst)])
    return bad


def pairs_check(seed: int) -> dict:
    """Every pair on {x:4, y:2} (rank 2 and 3); a random sample on {x:2, y:2, z:2}."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    report = {"checked": 0, "bad": []}
    for mesh, rank, sample in [(MESHES[0], 2, None), (MESHES[0], 3, None),
                               (MESHES[1], 2, 40), (MESHES[1], 3, 40)]:
        specs = all_shardings(mesh, rank)
        pairs = [(s, d) for s in specs for d in specs]
        if sample is not None:
            pairs = pick.sample(pairs, sample)
        shape = (8, 16, 8)[:rank]
        for start in range(0, len(pairs), 64):
            batch = pairs[start:start + 64]
            report["bad"] += check_batch(mesh, shape, batch, rng)
            report["checked"] += len(batch)
    return report


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "pairs":
        print(json.dumps(pairs_check(int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
    else:
        raise SystemExit(f"unknown mode {mode}")
