"""Every op of the registry on split operands: where XLA's SPMD partitioner keeps a dim
split (the list in tests/support/partition_cases.py), ``propagate`` must too, writing no
collective that makes an operand whole (bladec/ops/partition.py and the rules of
bladec/ops/collective.py). That the split programs compute what the whole-array ones do
is run on 2 devices in tests/runtime/test_sharded_run.py.
"""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.ir import walk
from bladec.ops import REGISTRY
from bladec.parse import parse_module
from bladec.passes.propagate import PropagatePass
from bladec.sharding import spec
from bladec.verify import verify

from tests.support.partition_cases import CASES, CROSS_ENTROPY, GATHERING, NOT_OPS, NOT_SPLIT


def test_every_op_is_covered_or_listed_with_its_reason():
    """An op added to the registry needs a case (or a reason); a listed op that gained a
    rule must move to the cases."""
    assert set(REGISTRY) == set(CASES) | set(NOT_SPLIT) | set(NOT_OPS), \
        sorted(set(REGISTRY) ^ (set(CASES) | set(NOT_SPLIT) | set(NOT_OPS)))
    assert not set(CASES) & set(NOT_SPLIT)


@pytest.mark.parametrize("name", sorted(CASES))
def test_propagate_keeps_the_split(name):
    module = parse_module(CASES[name], f"{name}.mlir")
    verify(module, shardings=False)
    out = PropagatePass().apply(module)
    verify(out)
    ops = list(walk(out.main.ops))  # a loop's regions too
    assert [op.name for op in ops if op.name in GATHERING] == []
    # the op itself runs on the arguments as they are (or on a generator made split)
    (it,) = [op for op in out.main.ops if op.name == name] or \
        [op for op in out.main.ops if op.regions]  # loop.arg, loop.yield: in a region
    args = {a.name: a.type for a in out.main.args}
    types = out.main.value_types()
    for o in it.operands:
        if o in args:
            assert spec(types[o]) == spec(args[o]), o
    split = [r for r in it.results if any(spec(r.type)) or r.type.partial]
    if name in ("loop.arg", "loop.yield"):  # every split argument and carry stays so
        body = it.regions["body"]
        split = [r for op in body if op.name == name for r in op.results
                 if any(spec(r.type))] + [o for op in body if op.name == name
                                          for o in op.operands if any(spec(types[o]))]
        assert len(split) == 3, [str(r) for r in split]
    elif name == "dim_size":
        # a replicated scalar on every device: the global size, read without a gather
        assert not split and spec(types["%r"]) == (("d",), ())
    else:
        assert split, [str(r.type) for r in it.results]


def test_a_user_written_dim_size_of_a_split_value_verifies():
    """Written with every result typed (no ``propagate``): the verifier's rule."""
    verify(parse_module("""mesh {d = 2}
func.func @main(%a: tensor<?x6, [@S0, @C6], {d, _}>) {
  %n = dim_size(%a) {dim = 0} -> tensor<i32>
  return %n
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
}
"""))


@pytest.mark.parametrize("body, message", [
    ("%r = sort(%a) {dim = 0} -> tensor<4x6, {d, _}>", "works along dim 0"),
    ("%r = slice(%a) {start = [1, 0], limit = [3, 6]} -> tensor<2x6, {d, _}>",
     "works along dim 0"),
    ("%r = gather_slices(%a, %ix) {offset_dims = [], collapsed_slice_dims = [1], "
     "start_index_map = [1], operand_batching_dims = [0], start_indices_batching_dims = "
     "[0], slice_sizes = [1, 1]} -> tensor<4x1, {d, _}>", "split differently"),
])
def test_a_split_the_op_can_not_run_on_is_a_located_error(body, message):
    text = ("mesh {d = 2}\nfunc.func @main(%a: tensor<4x6, {d, _}>, "
            "%ix: tensor<4x1x1xi32>) {\n  " + body + "\n  return %r\n}\n")
    with pytest.raises(BladecError, match=message) as err:
        verify(parse_module(text, "in.mlir"))
    assert str(err.value.loc) == "in.mlir:3:3"


def test_the_cross_entropy_of_a_split_batch_stays_split_through_its_gradient():
    """``-mean(take_along_axis(log_softmax(x), labels))`` as JAX writes it, through
    ``grad``: the gather of the labels' log-probabilities and its adjoint (a scatter)
    run on each device's rows; the mean's divisor is ``dim_size`` of the split batch."""
    from bladec.passes import parse_pipeline, run_pipeline
    text = CROSS_ENTROPY
    out = run_pipeline(parse_module(text), parse_pipeline("propagate,grad{wrt=%x}"))
    names = [op.name for op in out.main.ops]
    assert "scatter_slices" in names and "gather_slices" in names
    assert [n for n in names if n in GATHERING] == []
    types = out.main.value_types()
    for op in out.main.ops:
        if op.name in ("gather_slices", "scatter_slices"):
            assert spec(types[op.results[0].name])[0] == ("d",)
    assert names.count("all_reduce") == 1  # the loss: a sum over the batch
