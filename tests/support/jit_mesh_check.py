"""Run in subprocesses by tests/api/test_jit_sharded.py: ``bladec.jit`` on globally
sharded ``jax.Array``\\ s, against ``jax.jit`` with the same ``out_shardings``.

    python -m tests.support.jit_mesh_check one               # 8 CPU devices, one process
    python -m tests.support.jit_mesh_check cluster I PORT    # process I of 2, 4 devices each

The step: a two-layer MLP's cross-entropy (``jnp.mean`` of ``take_along_axis``) and an
SGD update, the batch over ``data``, the hidden units over ``model`` (4x2 mesh). Prints
one JSON object; the test asserts on it.
"""
from __future__ import annotations

import json
import os
import sys

MODE = sys.argv[1]
if MODE == "one":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_backend_optimization_level=0").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

if MODE == "cluster":
    jax.config.update("jax_num_cpu_devices", 4)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{sys.argv[3]}", 2, int(sys.argv[2]))

import bladec  # noqa: E402


def step(w1, w2, x, labels):
    def loss(w1, w2):
        logits = jnp.tanh(x @ w1) @ w2
        lp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(lp, labels[:, None], axis=-1))
    value, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
    return value, w1 - 0.1 * g1, w2 - 0.1 * g2


def global_array(mesh, spec, whole: np.ndarray):
    """``whole``'s global array on ``mesh``, each process giving only its devices'
    blocks (the callback is asked for those only)."""
    return jax.make_array_from_callback(whole.shape, NamedSharding(mesh, spec),
                                        lambda index: whole[index])


def own_bytes(x) -> int:
    """Bytes of the distinct blocks this process's devices hold of ``x``."""
    blocks = {tuple((s.start, s.stop) for s in shard.index): shard.data.nbytes
              for shard in x.addressable_shards}
    return sum(blocks.values())


def main() -> dict:
    mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
    rng = np.random.default_rng(0)
    batch = 64
    whole = {"w1": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((32, 8)).astype(np.float32) * 0.3,
             "x": rng.standard_normal((batch, 16)).astype(np.float32),
             "labels": rng.integers(0, 8, batch).astype(np.int32)}
    specs = {"w1": P(None, "model"), "w2": P("model", None), "x": P("data"),
             "labels": P("data")}
    args = [global_array(mesh, specs[k], whole[k]) for k in ("w1", "w2", "x", "labels")]
    outs = (NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "model")),
            NamedSharding(mesh, P("model", None)))
    fn = bladec.jit(step, out_shardings=outs)
    if MODE == "one":  # whole arrays first, twice (its hot path): not used for split ones
        for _ in range(2):
            fn(*[whole[k] for k in ("w1", "w2", "x", "labels")])
    got = fn(*args)
    want = jax.jit(step, out_shardings=outs)(*args)
    report = {"process": jax.process_index(), "devices": jax.device_count(),
              "specs": [str(g.sharding.spec) for g in got],
              "same_sharding": [g.sharding.is_equivalent_to(w.sharding, g.ndim)
                                for g, w in zip(got, want)],
              "diff": [max(float(np.abs(np.asarray(a.data) - np.asarray(b.data)).max())
                           for a, b in zip(g.addressable_shards, w.addressable_shards))
                       for g, w in zip(got, want)],
              "gathers": sum(fn.lower(*args).as_text().count(f"= {c}(")
                             for c in ("reshard", "all_gather", "all_to_all")),
              "peak": fn.report().peak_bytes,
              "own_input_bytes": sum(own_bytes(a) for a in args),
              "whole_input_bytes": sum(v.nbytes for v in whole.values())}
    if MODE == "one":  # another batch: traced again with the batch symbolic, still split
        more = {k: (np.concatenate([v, v]) if k in ("x", "labels") else v)
                for k, v in whole.items()}
        args = [global_array(mesh, specs[k], more[k]) for k in ("w1", "w2", "x", "labels")]
        got, want = fn(*args), jax.jit(step, out_shardings=outs)(*args)
        report["diff_second"] = [float(np.abs(np.asarray(g) - np.asarray(w)).max())
                                 for g, w in zip(got, want)]
        report["second"] = str(fn.report())
    return report


if __name__ == "__main__":
    print(json.dumps(main()))
