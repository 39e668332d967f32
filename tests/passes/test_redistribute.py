"""The ``redistribute`` pass over every pair of shardings (DESIGN section 12).

For each pair of shardings of a rank-2 and a rank-3 array over the meshes {x:4, y:2} and
{x:2, y:2, z:2} (14,119 pairs), the pass's program: type-checks step by step (the
verifier on the rewritten listing, which also checks the local-size bound), keeps the
normal form (slices, then all_to_alls/permutes, then gathers), stays within
max(source local, target local) at every step, and moves data correctly: a device-by-
device simulation in NumPy (independent of JAX and of bladec's lowering) ends with every
device holding its block of the array under the target sharding. The same programs run
on JAX's shard_map in tests/runtime/test_sharded_run.py.
"""
from __future__ import annotations

import itertools
import math
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bladec.errors import BladecError
from bladec.ir import Mesh, Op, TensorType, Value
from bladec.parse import parse_module
from bladec.passes.redistribute import RedistributePass, normal_form, plan
from bladec.sharding import (all_shardings, block_of, devices, permutation, refined, splits,
                             to_fine, ways)
from bladec.types import Sharding
from bladec.verify import verify

from tests.support.paths import SAMPLES
from tests.support.shardcase import MESHES, program

PHASE = {"shard_slice": 0, "all_to_all": 1, "all_permute": 1, "all_gather": 2}


def blocks(mesh: Mesh, x: np.ndarray, sharding: Sharding) -> list[np.ndarray]:
    """Each device's block of ``x``, in device order."""
    out = []
    for coords in devices(mesh):
        index = []
        for n, k, b in zip(x.shape, splits(mesh, sharding), block_of(mesh, sharding, coords)):
            index.append(slice(b * n // k, (b + 1) * n // k))
        out.append(x[tuple(index)])
    return out


def simulate(mesh: Mesh, local: list[np.ndarray], op: str, attrs: dict,
             src: Sharding, dst: Sharding) -> list[np.ndarray]:
    """One collective on the devices' blocks, as its definition says."""
    coords = devices(mesh)
    number = {tuple(c.values()): n for n, c in enumerate(coords)}

    def peers(n: int, axis: str) -> list[int]:  # the devices along ``axis``, in order
        return [number[tuple({**coords[n], axis: i}.values())]
                for i in range(mesh.size(axis))]
    if op == "shard_slice":
        d, axis = attrs["dim"], attrs["axis"]
        return [np.split(x, mesh.size(axis), axis=d)[coords[n][axis]]
                for n, x in enumerate(local)]
    if op == "all_gather":
        d = attrs["dim"]
        axis = src[d][-1]
        return [np.concatenate([local[p] for p in peers(n, axis)], axis=d)
                for n in range(len(local))]
    if op == "all_to_all":  # over the ``count`` newest axes of d, major first
        d, e = attrs["src"], attrs["dst"]
        axes = src[d][-attrs.get("count", 1):]
        g = math.prod(mesh.size(a) for a in axes)

        def rank(c: dict) -> int:  # a device's place in its group, row-major over axes
            r = 0
            for a in axes:
                r = r * mesh.size(a) + c[a]
            return r

        def group(n: int) -> list[int]:
            out = [number[tuple({**coords[n], **dict(zip(axes, idx))}.values())]
                   for idx in itertools.product(*(range(mesh.size(a)) for a in axes))]
            return sorted(out, key=lambda p: rank(coords[p]))
        return [np.concatenate([np.split(local[p], g, axis=e)[rank(coords[n])]
                                for p in group(n)], axis=d)
                for n in range(len(local))]
    assert op == "all_permute"
    out: list = [None] * len(local)
    for a, b in permutation(mesh, src, dst):
        out[b] = local[a]
    return out


def check_pair(mesh: Mesh, x: np.ndarray, src: Sharding, dst: Sharding) -> list:
    """The plan simulated over the mesh it names: where it moves part of an axis, the
    refined mesh, whose devices hold the same blocks of the same shardings."""
    used, steps = plan(mesh, src, dst, x.shape)
    if used != mesh:
        assert used == refined(mesh)
        mesh, src, dst = used, to_fine(mesh, src), to_fine(mesh, dst)
    phases = [PHASE[s.op] for s in steps]
    assert phases == sorted(phases), (src, dst, steps)  # the normal form
    bound = min(ways(mesh, src), ways(mesh, dst))  # local = N / ways
    local, cur = blocks(mesh, x, src), src
    for step in steps:
        assert ways(mesh, step.sharding) >= bound, (src, dst, step)
        local = simulate(mesh, local, step.op, step.attrs, cur, step.sharding)
        cur = step.sharding
    assert cur == dst
    for have, want in zip(local, blocks(mesh, x, dst)):
        np.testing.assert_array_equal(have, want)
    return steps


def _pairs(mesh: Mesh, rank: int) -> tuple[np.ndarray, list[tuple[Sharding, Sharding]]]:
    shape = (8, 16, 8)[:rank]
    x = np.random.default_rng(rank).standard_normal(shape).astype(np.float32)
    specs = all_shardings(mesh, rank)
    return x, [(src, dst) for src in specs for dst in specs]


# rank 3 on {x:2, y:2, z:2} is 11,236 of the 14,119 pairs and most of the time: all of them
# in `make bench`, a fixed eighth of them in `make test`
@pytest.mark.parametrize("mesh, rank", [
    pytest.param(MESHES[0], 2, id="2-x4y2"), pytest.param(MESHES[0], 3, id="3-x4y2"),
    pytest.param(MESHES[1], 2, id="2-x2y2z2"),
    pytest.param(MESHES[1], 3, id="3-x2y2z2", marks=pytest.mark.slow)])
def test_every_pair_is_correct_and_within_the_bound(mesh, rank):
    x, pairs = _pairs(mesh, rank)
    for src, dst in pairs:
        check_pair(mesh, x, src, dst)


def test_a_fixed_eighth_of_the_rank_3_pairs_on_three_axes():
    x, pairs = _pairs(MESHES[1], 3)
    assert len(pairs) == 106 * 106
    for src, dst in random.Random(3).sample(pairs, len(pairs) // 8):
        check_pair(MESHES[1], x, src, dst)


@pytest.mark.parametrize("mesh", MESHES, ids=["x4y2", "x2y2z2"])
def test_the_rewritten_listing_verifies(mesh):
    """The pass's output type-checks op by op, the bound included (rank 2, every pair)."""
    specs = all_shardings(mesh, 2)
    for src in specs:
        for dst in specs:
            out = RedistributePass().apply(program(mesh, (8, 8), src, dst))
            verify(out)
            # a plan that moves part of an axis is left to the lowering
            kept = plan(mesh, src, dst, (8, 8))[0] != mesh
            assert any(op.name == "reshard" for op in out.main.ops) == kept


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_arrays_and_shapes(data):
    """Random dims (multiples of each dim's split) and random pairs, both meshes."""
    mesh = data.draw(st.sampled_from(MESHES))
    rank = data.draw(st.integers(2, 3))
    specs = all_shardings(mesh, rank)
    src, dst = data.draw(st.sampled_from(specs)), data.draw(st.sampled_from(specs))
    shape = tuple(8 * data.draw(st.integers(1, 3)) for _ in range(rank))
    seed = data.draw(st.integers(0, 2 ** 16))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    check_pair(mesh, x, src, dst)


def test_moving_several_axes_in_order_is_one_all_to_all():
    steps = normal_form(MESHES[0], ((), ("x", "y"), ()), ((), (), ("x", "y")))
    assert [(s.op, s.attrs) for s in steps] == [("all_to_all",
                                                {"src": 1, "dst": 2, "count": 2})]


def test_the_issue_example_is_two_all_to_alls():
    mesh = MESHES[0]
    steps = normal_form(mesh, (("y",), (), ("x",)), ((), ("x", "y"), ()))
    assert [(s.op, s.attrs) for s in steps] == [("all_to_all", {"src": 2, "dst": 1}),
                                               ("all_to_all", {"src": 0, "dst": 1})]


def test_the_search_finds_xla_s_one_collective_programs():
    """Slices onto a dim other than the target's, and permutes that change which axis
    splits a dim, where they save collectives (the constructive plan took 3 and 2)."""
    mesh = MESHES[1]
    steps = normal_form(mesh, (("x",), ("y",)), (("z",), ("y", "x")), (64, 64))
    assert [(s.op, s.attrs) for s in steps] == [
        ("shard_slice", {"dim": 1, "axis": "z"}), ("all_permute", {})]
    steps = normal_form(mesh, ((), ("z",), ("y",)), ((), ("x",), ("y",)), (8, 8, 8))
    assert [s.op for s in steps] == ["all_permute"]


def test_the_search_never_takes_more_collectives_than_the_constructive_plan():
    from bladec.passes.redistribute import _constructive

    def collectives(steps) -> int:  # gathers of one dim in a row lower to one
        n, last = 0, None
        for s in steps:
            if s.op != "shard_slice" and not (s.op == "all_gather" and last == s.attrs["dim"]):
                n += 1
            last = s.attrs["dim"] if s.op == "all_gather" else None
        return n
    for mesh in MESHES:
        specs = all_shardings(mesh, 2)
        old = sum(collectives(_constructive(mesh, a, b)) for a in specs for b in specs)
        new = sum(collectives(normal_form(mesh, a, b, (8, 16))) for a in specs for b in specs)
        assert all(collectives(normal_form(mesh, a, b, (8, 16)))
                   <= collectives(_constructive(mesh, a, b)) for a in specs for b in specs)
        assert new < old


def test_a_split_that_does_not_divide_a_dim_is_never_an_intermediate():
    """A 2x8 array: no step may split dim 0 more than 2 ways."""
    mesh = MESHES[1]
    for src in all_shardings(mesh, 2):
        for dst in all_shardings(mesh, 2):
            if splits(mesh, src)[0] <= 2 and splits(mesh, dst)[0] <= 2:
                steps = normal_form(mesh, src, dst, (2, 8))
                assert all(splits(mesh, s.sharding)[0] <= 2 for s in steps), (src, dst)


def test_a_reshard_left_in_the_listing_lowers_as_the_pass_writes_it():
    """bladec run without the pass: the reshard's gathers of one dim are one collective."""
    from bladec.emit.shard import _expanded, _fused_runs
    t0 = TensorType((8, 8), "f32", None, (("y", "x"), ()))
    t1 = TensorType((8, 8), "f32", None, ((), ()))
    _, ops, types = _expanded(MESHES[0], [Op("reshard", ["%a"], [Value("%b", t1)])],
                           {"%a": t0, "%b": t1})
    assert [o.name for o in ops] == ["all_gather", "all_gather"]
    assert types[ops[0].results[0].name].sharding == (("y",), ())
    runs = _fused_runs(ops, ["%b"])
    assert runs[id(ops[0])] == ops and runs[id(ops[1])] == []


def test_symbolic_dims_keep_the_bound_and_require_multiples():
    text = """mesh {x = 4, y = 2}
func.func @main(%a: tensor<?x?, [@S0, @S1], {x, y}>) {
  %b = reshard(%a) -> tensor<?x?, [@S0, @S1], {(y, x), _}>
  return %b
}
"""
    module = RedistributePass().apply(parse_module(text))
    verify(module)
    from bladec.symbolic.shapes import analyze_shapes
    info = analyze_shapes(module)
    # every split dim is a multiple of its split: S0 of 8 (y, x), S1 of 2 (y)
    full = info.bind({s: 3 for s in info.free})
    assert full["S0"] % 8 == 0 and full["S1"] % 2 == 0
    sizes = {v: info.nbytes(v).evaluate(full) for v in info.dims}
    top = max(sizes["%a"], sizes["%b"])
    assert all(n <= top for n in sizes.values())


def test_a_chain_that_starts_at_a_shared_value_is_checked_too():
    text = """mesh {x = 4}
func.func @main(%a: tensor<8x8, {x, _}>) {
  %s = all_to_all(%a) {src = 0, dst = 1} -> tensor<8x8, {_, x}>
  %t = exp(%s) -> tensor<8x8, {_, x}>
  %b = all_gather(%s) {dim = 1} -> tensor<8x8>
  %c = shard_slice(%b) {dim = 0, axis = "x"} -> tensor<8x8, {x, _}>
  return %t, %c
}
"""
    with pytest.raises(BladecError, match="larger per device than both ends"):
        verify(parse_module(text))


def test_verifier_refuses_a_chain_above_the_bound():
    text = """mesh {x = 4}
func.func @main(%a: tensor<8x8, {x, _}>) {
  %b = all_gather(%a) {dim = 0} -> tensor<8x8>
  %c = shard_slice(%b) {dim = 1, axis = "x"} -> tensor<8x8, {_, x}>
  return %c
}
"""
    with pytest.raises(BladecError, match="larger per device than both ends"):
        verify(parse_module(text))


@pytest.mark.parametrize("text, message", [
    ("%b = all_gather(%a) {dim = 1} -> tensor<8x8, {x, _}>", "dim 1 is not split"),
    ("%b = all_gather(%a) {dim = 0} -> tensor<8x8, {x, _}>", "must be split {_, _}"),
    ("%b = all_to_all(%a) {src = 0, dst = 0} -> tensor<8x8, {x, _}>", "different dims"),
    ("%b = all_to_all(%a) {src = 0, dst = 2} -> tensor<8x8, {_, x}>", "dst 2 out of range"),
    ("%b = all_to_all(%a) {src = 0, dst = 1, count = 2} -> tensor<8x8, {_, x}>",
     "can not move 2"),
    ("%b = shard_slice(%a) {dim = 1, axis = \"x\"} -> tensor<8x8, {x, x}>", "used twice"),
    ("%b = shard_slice(%a) {dim = 1, axis = \"x\"} -> tensor<8x8, {x, y}>",
     "already splits the operand"),
    ("%b = shard_slice(%a) {dim = 1, axis = \"q\"} -> tensor<8x8, {x, q}>",
     "'q' is not in the mesh"),
    ("%b = all_permute(%a) -> tensor<8x8, {y, _}>", "as many blocks"),
    ("%b = reshard(%a) -> tensor<8x4, {y, _}>", "dim 1 of %b must be equal"),
    ("%b = exp(%a) -> tensor<8x8, {y, _}>", "must be split {x, _} like its operands"),
    ("%b = exp(%a) -> tensor<8x8, {x, _, +y}>", "must be split {x, _} like its operands"),
    ("%b = all_reduce(%a) -> tensor<8x8, {x, _}>", "holds no partial sums"),
    ("%b = transpose(%a) {perm = [1, 0]} -> tensor<8x8, {x, _}>", "must be split {_, x}"),
    ("%b = reduce(%a) {dims = [0], kind = \"max\"} -> tensor<8>", "only sums"),
    ("%b = reduce(%a) {dims = [0]} -> tensor<8>", "must be split {_, +x}"),
    ("%b = reshape(%a) -> tensor<64, {y}>", "only dim 0 may be split, by the same axes"),
    ("%b = dot(%a, %a) -> tensor<8x8, {x, _}>", "paired dims 1 and 0 are split differently"),
    # a slice of the unsplit dim keeps dim 0's split (bladec/ops/partition.py); one
    # along the split dim needs it whole
    ("%b = slice(%a) {start = [0, 0], limit = [4, 8], strides = [1, 1]} -> "
     "tensor<4x8, {x, _}>", "works along dim 0, which is split"),
    ("%b = reshard(%a) -> tensor<6x8, {_, x}>", "dim 0 of %b must be equal"),
])
def test_sharding_errors(text, message):
    listing = ("mesh {x = 4, y = 2}\nfunc.func @main(%a: tensor<8x8, {x, _}>) {\n  "
               + text + "\n  return %b\n}\n")
    with pytest.raises(BladecError, match=re.escape(message)):
        verify(parse_module(listing))


@pytest.mark.parametrize("listing, message", [
    ("func.func @main(%a: tensor<8, {x}>) {\n  return %a\n}", "declares no mesh"),
    ("mesh {x = 4}\nfunc.func @main(%a: tensor<6, {x}>) {\n  return %a\n}",
     "must be a multiple of 4"),
    ("mesh {x = 4}\nmesh {y = 2}\nfunc.func @main() {\n  return\n}", "second mesh"),
    ("mesh {x = 0}\nfunc.func @main() {\n  return\n}", "positive integer size"),
    ("mesh {x = 4}\nfunc.func @main(%a: tensor<8x8, {x}>) {\n  return %a\n}",
     "2 dims but its sharding gives 1"),
    ("mesh {x = 4}\nfunc.func @main(%a: tensor<8x8 {x, _}>) {\n  return %a\n}",
     "expected ','"),
])
def test_mesh_and_type_errors(listing, message):
    with pytest.raises(BladecError, match=message):
        verify(parse_module(listing))


def test_permutation_is_a_bijection():
    mesh = MESHES[1]
    pairs = permutation(mesh, (("x", "y"), ()), (("y", "z"), ()))
    assert sorted(a for a, _ in pairs) == list(range(8))
    assert sorted(b for _, b in pairs) == list(range(8))
    assert math.prod(splits(mesh, (("x", "y"), ()))) == 4


def test_analyze_gives_sizes_and_peak_per_device():
    """`bladec analyze` of a sharded listing: every value's bytes are its block's, and
    the default pipeline (analyze, schedule, remat) plans on those sizes."""
    from tests.support.clirunner import make_runner
    from bladec.cli import main
    sample = str(SAMPLES / "sharded.mlir")
    done = make_runner().invoke(main, ["analyze", sample, "--dims", "S0=64", "--json"])
    assert done.exit_code == 0, done.output
    import json
    report = json.loads(done.stdout)
    assert report["mesh"] == {"x": 4, "y": 2}
    values = report["values"]
    assert values["%h"]["blocks"] == 4 and report["bytes_at"]["%h"] == 64 * 64 * 4 // 4
    assert values["%hs"]["blocks"] == 8 and report["bytes_at"]["%hs"] == 64 * 64 * 4 // 8
    assert report["bytes_at"]["%v"] == 64 * 64 * 4 // 2
    text = make_runner().invoke(main, ["analyze", sample]).stdout
    assert "values (per device of mesh {x = 4, y = 2}):" in text
    assert "S0 = 8*S" in text  # the split batch must be a multiple of 8: required
    optimized = make_runner().invoke(main, ["optimize", sample])
    assert optimized.exit_code == 0, optimized.output
    again = make_runner().invoke(main, ["optimize", "-p", "none", "-"], input=optimized.stdout)
    assert again.exit_code == 0 and again.stdout == optimized.stdout


def test_a_binding_that_breaks_a_split_is_refused():
    from tests.support.clirunner import make_runner
    from bladec.cli import main
    sample = str(SAMPLES / "sharded.mlir")
    done = make_runner().invoke(main, ["analyze", sample, "--dims", "S0=60"])
    assert done.exit_code == 1 and "S0=60" in done.output


def test_the_axis_swap_moves_half_an_axis_and_permutes():
    """{x, y} to {y, x} on {x:4, y:2}: XLA's program (an all_to_all over a factor of 2
    of x, then one permute), not three all_to_alls of whole axes."""
    mesh = MESHES[0]
    used, steps = plan(mesh, (("x",), ("y",)), (("y",), ("x",)), (64, 64))
    assert used == refined(mesh)
    assert [(s.op, s.attrs, s.sharding) for s in steps] == [
        ("all_to_all", {"src": 0, "dst": 1}, (("x.0",), ("y", "x.1"))),
        ("all_permute", {}, (("y",), ("x.0", "x.1")))]
    whole = plan(mesh, (("x",), ("y",)), (("y",), ("x",)), (64, 64), sub_axes=False)[1]
    assert len(whole) == 3


def test_sub_axes_never_cost_more_and_are_taken_only_where_cheaper():
    """Over every pair on {x:4, y:2} and {x:2, y:4} (rank 2 and 3): a plan over sub-axes
    is taken only where it has fewer collectives than the whole-axis plan, or as many
    and fewer bytes."""
    from bladec.passes.redistribute import _cheapest
    for mesh in (MESHES[0], Mesh((("x", 2), ("y", 4)))):
        for rank in (2, 3):
            specs = all_shardings(mesh, rank)
            taken = 0
            for src in specs:
                for dst in specs:
                    used, _ = plan(mesh, src, dst, (8,) * rank)
                    if used == mesh:
                        continue
                    taken += 1
                    whole = _cheapest(mesh, src, dst, (8,) * rank)[0]
                    sub = _cheapest(used, to_fine(mesh, src), to_fine(mesh, dst),
                                    (8,) * rank)[0]
                    assert sub < whole
            assert taken > 0


@pytest.mark.parametrize("mesh", [Mesh((("x", 8),)), Mesh((("x", 2), ("y", 4)))],
                         ids=["x8", "x2y4"])
def test_refined_meshes_every_pair_is_correct(mesh):
    """A 1-D mesh of 8 and the transposed 2x4 mesh, every pair at rank 2 and 3."""
    for rank in (2, 3):
        x, pairs = _pairs(mesh, rank)
        for src, dst in pairs:
            check_pair(mesh, x, src, dst)
