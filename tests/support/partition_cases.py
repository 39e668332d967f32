"""One small listing per op of the registry, its operands split over ``d`` (a 2-device
mesh) along dims the op passes through: what tests/ops/test_partition.py propagates
(no op may make a split operand whole where XLA's partitioner keeps it split) and
``python -m tests.support.partition_check`` runs on 2 devices against whole arrays.

XLA's list, for the comparison: the handlers of ``SpmdPartitioningVisitor``
(xla/service/spmd/spmd_partitioner.cc, gather_scatter_handler.cc, dot_handler.cc,
convolution_handler.cc) that keep some dims of a split operand split: every elementwise
opcode (bladec's unary, binary, bitwise, special functions, round, rem, convert,
bitcast, select, compare, and threefry, which JAX lowers to u32 elementwise arithmetic),
broadcast, reshape (bladec's reshape, dynamic_reshape, split_dim, merge_dims),
transpose, concatenate, slice, reverse, iota, constant, reduce (bladec's reduce, argmax,
argmin), sort (and TopK), reduce-window (and cumulative, which JAX lowers to one),
select-and-scatter, dot, convolution, gather (gather, gather_slices), scatter
(scatter_add, scatter_slices), get-dimension-size (dim_size), rng, while.
"""
from __future__ import annotations

from bladec.ops.elementwise import BINARY, BITWISE, UNARY
from bladec.ops.special import FUNCTIONS

# what XLA does that bladec does not, and why (tests/ops/test_partition.py keeps the
# list exact: an op that gains a rule must leave it)
NOT_SPLIT = {
    # XLA's HandleRng partitions a draw by running it on every device with its own
    # state: other numbers than the unpartitioned draw. A bladec listing must compute
    # what it computes on one device (the differential tests), so the draw stays whole.
    "rng_uniform": "a per-device draw gives other numbers than the one-device run",
}
# not computations: the collectives (the rewrites themselves) and the runtime's markers
NOT_OPS = {"reshard", "all_gather", "shard_slice", "all_to_all", "all_permute", "all_reduce",
           "remat.evict", "remat.plan", "remat.regenerate", "schedule.versions"}

# the collectives that make a split operand (more) whole: none may appear where a
# split rule exists
GATHERING = {"reshard", "all_gather", "all_to_all", "all_permute"}

# a cross-entropy loss over a batch split 4 ways: take_along_axis of the labels'
# log-probabilities (gather_slices) and the mean's size read (dim_size)
CROSS_ENTROPY = """mesh {d = 4}
func.func @main(%x: tensor<?x16, [@S0, @C16], {d, _}>, %labels: tensor<?xi32, [@S0], {d}>) {
  %0 = reduce(%x) {dims = [1], kind = "max"} -> tensor<?>
  %4 = broadcast_in_dim(%0) {dims = [0]} -> tensor<?x16>
  %5 = sub(%x, %4) -> tensor<?x16>
  %6 = exp(%5) -> tensor<?x16>
  %7 = reduce(%6) {dims = [1], kind = "sum"} -> tensor<?>
  %9 = log(%7) -> tensor<?>
  %10 = broadcast_in_dim(%9) {dims = [0]} -> tensor<?x16>
  %11 = sub(%5, %10) -> tensor<?x16>
  %21 = broadcast_in_dim(%labels) {dims = [0]} -> tensor<?x1x1xi32>
  %22 = gather_slices(%11, %21) {offset_dims = [], collapsed_slice_dims = [1], start_index_map = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], slice_sizes = [1, 1], mode = "fill", fill = nan} -> tensor<?x1>
  %27 = dim_size(%x) {dim = 0} -> tensor<i32>
  %28 = convert(%27) {dtype = "f32"} -> tensor<f32>
  %29 = reduce(%22) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %30 = div(%29, %28) -> tensor<f32>
  %out = neg(%30) -> tensor<f32>
  return %out
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0
}
"""

HEAD = "mesh {d = 2}\nfunc.func @main("
A = "%a: tensor<4x6, {d, _}>"
B = "%b: tensor<4x6, {d, _}>"


def _fn(args: str, body: str, ret: str = "%r") -> str:
    return f"{HEAD}{args}) {{\n{body}\n  return {ret}\n}}\n"


def _unary(op: str, attrs: str = "") -> str:
    return _fn(A, f"  %r = {op}(%a){attrs} -> tensor<4x6>")


CASES: dict[str, str] = {}
for _op in [*UNARY, *FUNCTIONS, "stop_gradient", "round"]:
    CASES[_op] = _unary(_op)
for _op in [*BINARY, "rem"]:
    CASES[_op] = _fn(f"{A}, {B}", f"  %r = {_op}(%a, %b) -> tensor<4x6>")
for _op in BITWISE:
    _t = "u32" if _op == "shift_right_logical" else "i32"
    CASES[_op] = _fn(f"%i: tensor<4x6x{_t}, {{d, _}}>, %j: tensor<4x6x{_t}, {{d, _}}>",
                     f"  %r = {_op}(%i, %j) -> tensor<4x6x{_t}>")
CASES.update({
    "integer_pow": _unary("integer_pow", " {exponent = 3}"),
    "compare": _fn(f"{A}, {B}", '  %r = compare(%a, %b) {direction = "LT"} -> tensor<4x6xi1>'),
    "select": _fn(f"%p: tensor<4x6xi1, {{d, _}}>, {A}, {B}",
                  "  %r = select(%p, %a, %b) -> tensor<4x6>"),
    "convert": _fn(A, '  %r = convert(%a) {dtype = "f16"} -> tensor<4x6xf16>'),
    "bitcast": _fn(A, '  %r = bitcast(%a) {dtype = "i32"} -> tensor<4x6xi32>'),
    "threefry": _fn("%k: tensor<2xu32>, %h: tensor<4x6xu32, {d, _}>, "
                    "%l: tensor<4x6xu32, {d, _}>",
                    "  %r, %s = threefry(%k, %h, %l) -> tensor<4x6xu32>, tensor<4x6xu32>",
                    "%r, %s"),
    "broadcast_in_dim": _fn("%v: tensor<4, {d}>",
                            "  %r = broadcast_in_dim(%v) {dims = [0]} -> tensor<4x6>"),
    "broadcast": _fn("%v: tensor<4, {d}>", "  %r = broadcast(%v) {dims = [0]} -> tensor<4x6>"),
    "broadcast_like": _fn(f"%v: tensor<4, {{d}}>, {A}",
                          "  %r = broadcast_like(%v, %a) {dims = [0], source = [0, 0], "
                          "axis = [0, 1]} -> tensor<4x6>"),
    "reshape": _fn(A, "  %r = reshape(%a) -> tensor<8x3>"),
    "dynamic_reshape": _fn(A, '  %r = dynamic_reshape(%a) {shape = "%shape"} -> tensor<8x3>'),
    "split_dim": _fn(A, "  %r = split_dim(%a) {dim = 1, sizes = [2, 3]} -> tensor<4x2x3>"),
    "merge_dims": _fn(A, "  %r = merge_dims(%a) {dim = 0, count = 2} -> tensor<24>"),
    "transpose": _fn(A, "  %r = transpose(%a) {perm = [1, 0]} -> tensor<6x4>"),
    "concatenate": _fn(f"{A}, {B}", "  %r = concatenate(%a, %b) {dim = 1} -> tensor<4x12>"),
    "slice": _fn(A, "  %r = slice(%a) {start = [0, 1], limit = [4, 5]} -> tensor<4x4>"),
    "reverse": _fn(A, "  %r = reverse(%a) {dims = [1]} -> tensor<4x6>"),
    "iota": _fn(A, "  %c = iota() {dim = 1} -> tensor<4x6>\n"
                   "  %r = add(%c, %a) -> tensor<4x6>"),
    "constant": _fn(A, "  %c = constant() {value = 2.0} -> tensor<4x6>\n"
                       "  %r = mul(%c, %a) -> tensor<4x6>"),
    "dim_size": _fn(A, "  %n = dim_size(%a) {dim = 0} -> tensor<i32>\n"
                       '  %f = convert(%n) {dtype = "f32"} -> tensor<f32>\n'
                       "  %q = broadcast_in_dim(%f) {dims = []} -> tensor<4x6>\n"
                       "  %r = div(%a, %q) -> tensor<4x6>"),
    "reduce": _fn(A, '  %r = reduce(%a) {dims = [1], kind = "max"} -> tensor<4>'),
    "argmax": _fn(A, "  %r = argmax(%a) {dim = 1} -> tensor<4xi32>"),
    "argmin": _fn(A, "  %r = argmin(%a) {dim = 1} -> tensor<4xi32>"),
    "cumulative": _fn(A, "  %r = cumulative(%a) {dim = 1} -> tensor<4x6>"),
    "sort": _fn(f"{A}, {B}", "  %r, %s = sort(%a, %b) {dim = 1} -> tensor<4x6>, tensor<4x6>",
                "%r, %s"),
    "top_k": _fn(A, "  %r, %s = top_k(%a) {k = 2} -> tensor<4x2>, tensor<4x2xi32>", "%r, %s"),
    "reduce_window": _fn(A, '  %r = reduce_window(%a) {kind = "max", window = [1, 3], '
                            "strides = [1, 1]} -> tensor<4x4>"),
    "select_and_scatter_add": _fn(f"%s: tensor<4x4, {{d, _}}>, {A}",
                                  "  %r = select_and_scatter_add(%s, %a) {window = [1, 3], "
                                  "strides = [1, 1]} -> tensor<4x6>"),
    "conv": _fn("%x: tensor<4x3x5x5, {d, _, _, _}>, %k: tensor<2x3x3x3>",
                "  %r = conv(%x, %k) {lhs_spec = [0, 1, 2, 3], rhs_spec = [0, 1, 2, 3], "
                "out_spec = [0, 1, 2, 3]} -> tensor<4x2x3x3>"),
    "dot": _fn(f"{A}, %w: tensor<6x3>", "  %r = dot(%a, %w) -> tensor<4x3>"),
    "dot_general": _fn(f"{A}, %w: tensor<6x3>", "  %r = dot_general(%a, %w) "
                       "{lhs_contract = [1], rhs_contract = [0]} -> tensor<4x3>"),
    "gather": _fn("%t: tensor<6x3>, %ids: tensor<4xi32, {d}>",
                  "  %r = gather(%t, %ids) -> tensor<4x3>"),
    "scatter_add": _fn("%ids: tensor<4xi32, {d}>, %u: tensor<4x3, {d, _}>",
                       "  %z = constant() {value = 0.0} -> tensor<6x3>\n"
                       "  %r = scatter_add(%z, %ids, %u) -> tensor<6x3>"),
    # jnp.take_along_axis(a, ix, axis=1) and its adjoint (JAX's dimension numbers)
    "gather_slices": _fn(f"{A}, %ix: tensor<4x1x1xi32, {{d, _, _}}>",
                         "  %r = gather_slices(%a, %ix) {offset_dims = [], "
                         "collapsed_slice_dims = [1], start_index_map = [1], "
                         "operand_batching_dims = [0], start_indices_batching_dims = [0], "
                         'slice_sizes = [1, 1], mode = "fill"} -> tensor<4x1>'),
    "scatter_slices": _fn(f"{A}, %ix: tensor<4x1x1xi32, {{d, _, _}}>, "
                          "%u: tensor<4x1, {d, _}>",
                          "  %r = scatter_slices(%a, %ix, %u) {update_window_dims = [], "
                          "inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], "
                          "operand_batching_dims = [0], scatter_indices_batching_dims = [0], "
                          'kind = "add", mode = "fill"} -> tensor<4x6>'),
})

# the loops: an RNN over a batch split carry and scanned input (the weights whole); a
# reversed scan reading a split constant with a stacked per-row output; a while loop
# whose condition reads a whole counter beside a split carry
CASES.update({
    "scan": _fn("%w: tensor<6x6>, %h0: tensor<4x6, {d, _}>, %xs: tensor<3x4x6, {_, d, _}>",
                "  %r, %s = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> "
                "tensor<4x6>, tensor<3x4x6> body {\n"
                "    %sw = loop.arg() {index = 0} -> tensor<6x6>\n"
                "    %sc = loop.arg() {index = 1} -> tensor<4x6>\n"
                "    %sx = loop.arg() {index = 2} -> tensor<4x6>\n"
                "    %sd = dot(%sc, %sw) -> tensor<4x6>\n"
                "    %ss = add(%sd, %sx) -> tensor<4x6>\n"
                "    %sn = tanh(%ss) -> tensor<4x6>\n"
                "    loop.yield(%sn, %sn)\n  }", "%r, %s"),
    "loop.arg": _fn(f"{A}, %xs: tensor<3x4x6, {{_, d, _}}>",
                    "  %r, %s = scan(%a, %a, %xs) {num_consts = 1, num_carry = 1, "
                    "reverse = true} -> tensor<4x6>, tensor<3x4> body {\n"
                    "    %lb = loop.arg() {index = 0} -> tensor<4x6>\n"
                    "    %lc = loop.arg() {index = 1} -> tensor<4x6>\n"
                    "    %lx = loop.arg() {index = 2} -> tensor<4x6>\n"
                    "    %lm = mul(%lc, %lx) -> tensor<4x6>\n"
                    "    %ln = add(%lm, %lb) -> tensor<4x6>\n"
                    '    %ly = reduce(%ln) {dims = [1], kind = "max"} -> tensor<4>\n'
                    "    loop.yield(%ln, %ly)\n  }", "%r, %s"),
    "while": _fn(A, "  %z = constant() {value = 0} -> tensor<i32>\n"
                    "  %r, %s = while(%a, %z) {num_consts = 0} -> tensor<4x6>, tensor<i32> "
                    "cond {\n"
                    "    %wc = loop.arg() {index = 1} -> tensor<i32>\n"
                    "    %w3 = constant() {value = 3} -> tensor<i32>\n"
                    '    %wp = compare(%wc, %w3) {direction = "LT"} -> tensor<i1>\n'
                    "    loop.yield(%wp)\n  } body {\n"
                    "    %wa = loop.arg() {index = 0} -> tensor<4x6>\n"
                    "    %wi = loop.arg() {index = 1} -> tensor<i32>\n"
                    "    %wh = constant() {value = 0.5} -> tensor<4x6>\n"
                    "    %wb = mul(%wa, %wh) -> tensor<4x6>\n"
                    "    %wd = sin(%wb) -> tensor<4x6>\n"
                    "    %w1 = constant() {value = 1} -> tensor<i32>\n"
                    "    %wn = add(%wi, %w1) -> tensor<i32>\n"
                    "    loop.yield(%wd, %wn)\n  }", "%r, %s"),
})
# two split carries swapped each step (a yield of the arguments themselves)
CASES["loop.yield"] = _fn(f"{A}, {B}, %xs: tensor<3x4x6, {{_, d, _}}>",
                          "  %r, %s, %t = scan(%a, %b, %xs) {num_consts = 0, num_carry = 2} "
                          "-> tensor<4x6>, tensor<4x6>, tensor<3x4x6> body {\n"
                          "    %ya = loop.arg() {index = 0} -> tensor<4x6>\n"
                          "    %yb = loop.arg() {index = 1} -> tensor<4x6>\n"
                          "    %yx = loop.arg() {index = 2} -> tensor<4x6>\n"
                          "    %ys = sub(%ya, %yx) -> tensor<4x6>\n"
                          "    loop.yield(%yb, %ys, %ya)\n  }", "%r, %s, %t")
