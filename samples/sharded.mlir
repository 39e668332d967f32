// A sharded listing that uses every collective (DESIGN section 12): a data-parallel
// scaled residual over a 4x2 mesh, with the batch @S0 split over x and a weight
// resharded by the redistribute pass.
//
// RUN: bladec optimize -p none %s | filecheck %s --check-prefix=SAME
// RUN: bladec optimize -p redistribute %s | bladec optimize -p none - | filecheck %s
mesh {x = 4, y = 2}
func.func @main(%h: tensor<?x64, [@S0, @C64], {x, _}>, %w: tensor<?x64, [@S0, @C64], {y, x}>) {
  // split the hidden dim over y as well: local blocks of S0/4 x 32
  %hs = shard_slice(%h) {dim = 1, axis = "y"} -> tensor<?x64, [@S0, @C64], {x, y}>
  %wr = reshard(%w) -> tensor<?x64, [@S0, @C64], {x, y}>
  %p = mul(%hs, %wr) -> tensor<?x64, [@S0, @C64], {x, y}>
  %r = add(%p, %hs) -> tensor<?x64, [@S0, @C64], {x, y}>
  // move y to the batch dim, swap the order of the batch's axes, gather them back
  %t = all_to_all(%r) {src = 1, dst = 0} -> tensor<?x64, [@S0, @C64], {(x, y), _}>
  %u = all_permute(%t) -> tensor<?x64, [@S0, @C64], {(y, x), _}>
  %v = all_gather(%u) {dim = 0} -> tensor<?x64, [@S0, @C64], {y, _}>
  return %v
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 4096}
}

// SAME:       mesh {x = 4, y = 2}
// SAME:         %wr = reshard(%w) -> tensor<?x64, [@S0, @C64], {x, y}>
// SAME:         %u = all_permute(%t) -> tensor<?x64, [@S0, @C64], {(y, x), _}>

// The reshard swaps the two axes: its plan moves half of x (an all_to_all over a
// 2-device sub-axis of x, then one permute, XLA's program), whose intermediate type
// no listing can write, so the pass leaves it and `bladec run` lowers it so.
// CHECK:       mesh {x = 4, y = 2}
// CHECK:         %wr = reshard(%w) -> tensor<?x64, [@S0, @C64], {x, y}>
// CHECK:         return %v
