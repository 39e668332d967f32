"""Run in a subprocess by tests/runtime/test_sharded_run.py: JAX must see 8 CPU devices,
which is fixed when its backend starts, so the rest of the suite keeps its one device.
From the repository root:

    python -m tests.support.sharded_check pairs [SEED]   # redistribute programs against JAX's reshard
    python -m tests.support.sharded_check smoke [SEED]   # ... fewer of them (`make test`)
    python -m tests.support.sharded_check grads [SEED]   # collectives' adjoints against jax.grad
    python -m tests.support.sharded_check ops [SEED]     # every op's case split, against whole
    python -m tests.support.sharded_check exchange       # two-device exchanges on large blocks

Prints one JSON object; the test asserts on it.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
import random
import sys

# LLVM's optimization level 0: these programs move data (and, for 'grads', a few f32 ops
# compared within a tolerance) and are held against what JAX's own programs compute in
# this same process; code generation's optimizations change neither the data moved nor
# the buffers, and the 'pairs' check's ten shard_map programs compile in 19 s of CPU
# instead of 27 s
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8"
                           + " --xla_backend_optimization_level=0").strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

from bladec.emit.shard import sharded_program  # noqa: E402
from bladec.ir import Func, Op, TensorType, Value  # noqa: E402
from bladec.passes.propagate import PropagatePass  # noqa: E402
from bladec.passes.redistribute import RedistributePass  # noqa: E402
from bladec.verify import verify  # noqa: E402
from bladec.sharding import all_shardings  # noqa: E402
from tests.support.shardcase import MESHES, program  # noqa: E402


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


# pairs checked per (mesh, rank): None for every pair. 'pairs': every pair on {x:4, y:2}
# (rank 2 and 3), a random sample on {x:2, y:2, z:2}; 'smoke' (``make test``): every
# rank-2 pair on {x:4, y:2}, samples of the rest (5 shard_map programs to compile of 10)
SAMPLES = {"pairs": (None, None, 40, 40), "smoke": (None, 64, 32, 32)}


def pairs_check(seed: int, mode: str = "pairs") -> dict:
    """The pass's programs against JAX's reshard, as many pairs as SAMPLES[mode] says."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    report = {"checked": 0, "bad": []}
    meshes = [(MESHES[0], 2), (MESHES[0], 3), (MESHES[1], 2), (MESHES[1], 3)]
    for (mesh, rank), sample in zip(meshes, SAMPLES[mode]):
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


# One forward listing per collective on {x:4, y:2}: %a goes through the collective, the
# loss is sum(f(result) * %r) with f non-linear where the collective alone is linear.
GRAD_CASES = {
    "all_gather": ("{x, y}", "%y = all_gather(%a) {dim = 1} -> tensor<8x16, {x, _}>", "{x, _}"),
    "shard_slice": ("{x, _}", '%y = shard_slice(%a) {dim = 1, axis = "y"} '
                    "-> tensor<8x16, {x, y}>", "{x, y}"),
    "all_to_all": ("{x, y}", "%y = all_to_all(%a) {src = 1, dst = 0} "
                   "-> tensor<8x16, {(x, y), _}>", "{(x, y), _}"),
    "all_to_all_count": ("{_, (x, y)}", "%y = all_to_all(%a) {src = 1, dst = 0, count = 2} "
                         "-> tensor<8x16, {(x, y), _}>", "{(x, y), _}"),
    "all_permute": ("{(x, y), _}", "%y = all_permute(%a) -> tensor<8x16, {(y, x), _}>",
                    "{(y, x), _}"),
    "reshard": ("{y, x}", "%y = reshard(%a) -> tensor<8x16, {x, y}>", "{x, y}"),
    # a partial sum over x (dim 1's blocks summed per device), then its all_reduce
    "all_reduce": ("{_, x}", "%p = reduce(%a) {dims = [1]} -> tensor<8, {_, +x}>\n"
                   "  %s = all_reduce(%p) -> tensor<8>\n"
                   "  %y = broadcast_in_dim(%s) {dims = [0]} -> tensor<8x16>", "{_, _}"),
}


def grad_listing(src: str, body: str, dst: str) -> str:
    return ("mesh {x = 4, y = 2}\n"
            f"func.func @main(%a: tensor<8x16, {src}>, %r: tensor<8x16, {dst}>) {{\n"
            f"  {body}\n"
            f"  %t = tanh(%y) -> tensor<8x16, {dst}>\n"
            f"  %m = mul(%t, %r) -> tensor<8x16, {dst}>\n"
            "  %loss = reduce(%m) {dims = [0, 1]} -> tensor<f32>\n"
            "  return %loss\n}\n")


def run_sharded(module, args: list[np.ndarray], grad_of: int | None = None) -> list:
    """The module's @main under shard_map on its mesh (global arrays in and out); with
    ``grad_of``, jax.grad of its first output by the first ``grad_of`` inputs instead."""
    func = module.main
    shapes = {n: t.dims for n, t in func.value_types().items()}  # static listings
    prog = sharded_program(func, module.mesh, shapes)
    placed = [jax.device_put(x, jax.sharding.NamedSharding(prog.mesh, s))
              for x, s in zip(args, prog.in_specs)]
    if grad_of is None:
        return [np.asarray(o) for o in prog.fn(*placed)]
    fn = jax.grad(lambda *a: prog.fn(*a)[0], argnums=tuple(range(grad_of)))
    return [np.asarray(g) for g in fn(*placed)]


def grads_check(seed: int) -> dict:
    """Each collective's adjoint: the training listing that ``grad`` writes, run under
    shard_map, against jax.grad of the forward's shard_map lowering."""
    from bladec.parse import parse_module
    from bladec.passes import parse_pipeline, run_pipeline
    from bladec.printer import format_module
    rng = np.random.default_rng(seed)
    report: dict = {"checked": [], "bad": [], "ops": {}}
    for case, (src, body, dst) in GRAD_CASES.items():
        module = parse_module(grad_listing(src, body, dst), f"<{case}>")
        train = run_pipeline(module, parse_pipeline("grad{wrt=%a,%r}"))
        text = format_module(train)
        train = parse_module(text, f"<{case}>")  # the printed listing round-trips
        verify(train)
        start = len(PropagatePass().apply(module).main.ops)  # the backward's collectives
        report["ops"][case] = [op.name for op in train.main.ops[start:]
                               if op.name in SHARD_OPS]
        xs = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(2)]
        # the forward as it runs: propagate makes the loss's partial sums whole
        want = run_sharded(PropagatePass().apply(module), xs, grad_of=2)
        have = run_sharded(train, xs)[1:]
        report["checked"].append(case)
        for name, h, w in zip(("a", "r"), have, want):
            if not np.allclose(h, w, rtol=1e-5, atol=1e-6):
                report["bad"].append([case, name, float(np.abs(h - w).max())])
    return report


SHARD_OPS = {"reshard", "all_gather", "shard_slice", "all_to_all", "all_permute",
             "all_reduce"}


def _value(rng, t) -> np.ndarray:
    """Inputs every case's op is defined on: floats in (0.1, 0.9) (logs, roots, erf_inv),
    integers in [0, 6) (in range as indices along a dim of 6, and as shift counts)."""
    shape = tuple(t.dims)
    if t.dtype == "i1":
        return rng.random(shape) < 0.5
    if t.dtype in ("i32", "u32"):
        return rng.integers(0, 6, shape).astype(np.dtype({"i32": "int32", "u32": "uint32"}
                                                         [t.dtype]))
    return rng.uniform(0.1, 0.9, shape).astype(np.float32)


def ops_check(seed: int) -> dict:
    """Each case of tests/support/partition_cases.py after ``propagate``, as one
    shard_map program on 2 devices (one compilation), against the same ops on whole
    arrays (the one-device listing, jitted): what every op's rule keeps split must
    compute the whole array's values."""
    from bladec.emit.loop import run_loop
    from bladec.emit.lower import run_op
    from bladec.parse import parse_module
    from bladec.runtime.backends.kernel import JaxKernels
    from bladec.sharding import whole_arrays
    from tests.support.partition_cases import CASES
    rng = np.random.default_rng(seed)
    args, ops, outs, cases = [], [], [], []
    mesh = None
    for case, text in CASES.items():
        module = PropagatePass().apply(parse_module(text, f"<{case}>"))
        mesh = module.mesh
        tag = case.replace("_", "")

        def named(v: str) -> str:
            return f"{v}.{tag}"

        def copied(op: Op) -> Op:  # a loop's regions renamed alike
            return Op(op.name, [named(o) for o in op.operands],
                      [Value(named(r.name), r.type) for r in op.results], op.attrs,
                      {k: [copied(o) for o in body] for k, body in op.regions.items()},
                      loc=op.loc)
        args += [Value(named(a.name), a.type) for a in module.main.args]
        ops += [copied(op) for op in module.main.ops]
        outs += [named(o) for o in module.main.returns]
        cases += [case] * len(module.main.returns)
    func = Func("main", args, ops, outs)
    verify(replace(module, funcs=[func]))
    xs = [_value(rng, a.type) for a in args]
    have = run_sharded(replace(module, funcs=[func]), xs)
    whole = whole_arrays(replace(module, funcs=[func])).main
    K = JaxKernels()

    def block(ops: list[Op], ins: list[str], outs: list[str]):
        def fn(*values):
            env = dict(zip(ins, values))
            for op in ops:
                out = [(tuple(r.type.dims), r.type.dtype) for r in op.results]
                operands = [env[o] for o in op.operands]
                env.update(zip(op.result_names, run_loop(K, op, operands, out, block)
                               if op.regions else run_op(K, op, operands, out)))
            return [env[o] for o in outs]
        return fn
    reference = block(whole.ops, [a.name for a in whole.args], whole.returns)
    want = [np.asarray(w) for w in jax.jit(reference)(*xs)]
    bad = [[case, float(np.abs(h.astype(np.float64) - w.astype(np.float64)).max())]
           for case, h, w in zip(cases, have, want)
           if h.shape != w.shape or not np.allclose(h, w, rtol=1e-5, atol=1e-6)]
    return {"checked": sorted(set(cases)), "bad": bad}


def exchange_check() -> dict:
    """The two-device all_to_alls that become one permute from 512 KiB blocks
    (bladec/emit/shard.py), on a rank-3 array of no benchmark case: x from dim 2 to
    dim 0 and to dim 1 of 64x64x64 f32 over {x:2, y:2, z:2} (512 KiB blocks). Per
    direction, bladec's program and XLA's identity with ``out_shardings`` as
    ``benchmarks/bench_reshard.py`` measures them, untimed: the collectives of each
    compiled HLO, bit-equality on every device, the per-device peak."""
    from benchmarks.bench_reshard import run_case
    from benchmarks.support.reshard_cases import X2Y2Z2, Case, _s
    out = {}
    for name, dst in (("to dim 0", _s("x", None, None)), ("to dim 1", _s(None, "x", None))):
        case = Case(name, "check", X2Y2Z2, (64, 64, 64), _s(None, None, "x"), dst)
        row = run_case(case, 0, False, 0)
        out[name] = {k: {m: row[k][m] for m in ("kinds", "bit_equal", "peak")}
                     for k in ("bladec", "xla")}
    return out


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode in SAMPLES:
        print(json.dumps(pairs_check(int(sys.argv[2]) if len(sys.argv) > 2 else 0, mode)))
    elif mode == "grads":
        print(json.dumps(grads_check(int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
    elif mode == "ops":
        print(json.dumps(ops_check(int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
    elif mode == "exchange":
        print(json.dumps(exchange_check()))
    else:
        raise SystemExit(f"unknown mode {mode}")
