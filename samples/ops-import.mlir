// The ops the JAX importer (bladec import) adds for training steps as users write them:
// a mean over a dynamic batch reads the batch size with dim_size; exact GELU, softplus and
// friends need the special functions; routing and accuracy need top_k, sort and argmax.
//
// RUN: bladec optimize -p none %s | filecheck %s
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
// RUN: bladec run %s --backend numpy --dims S0=3 | filecheck --check-prefix=EXEC %s
// RUN: bladec analyze %s | filecheck --check-prefix=SHAPES %s
func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>) {
  %h = dot(%x, %w) -> tensor<?x4, [@S0, @C4]>
  %sq = square(%h) -> tensor<?x4, [@S0, @C4]>
  %sum = reduce(%sq) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  // jnp.mean divides by 4*B, which JAX hands over as dim_as_value
  %b = dim_size(%x) {dim = 0} -> tensor<i32>
  %four = constant() {value = 4} -> tensor<i32>
  %n = mul(%b, %four) -> tensor<i32>
  %nf = convert(%n) {dtype = "f32"} -> tensor<f32>
  %loss = div(%sum, %nf) -> tensor<f32>
  // special functions and rounding
  %e1 = erf(%h) -> tensor<?x4, [@S0, @C4]>
  %e2 = erfc(%e1) -> tensor<?x4, [@S0, @C4]>
  %e3 = erf_inv(%e1) -> tensor<?x4, [@S0, @C4]>
  %sq1 = log1p(%sq) -> tensor<?x4, [@S0, @C4]>
  %g1 = lgamma(%sq1) -> tensor<?x4, [@S0, @C4]>
  %g2 = digamma(%sq1) -> tensor<?x4, [@S0, @C4]>
  %m1 = expm1(%e2) -> tensor<?x4, [@S0, @C4]>
  %f1 = floor(%m1) -> tensor<?x4, [@S0, @C4]>
  %c1 = ceil(%e3) -> tensor<?x4, [@S0, @C4]>
  %r1 = round(%g1) {mode = "to_nearest_even"} -> tensor<?x4, [@S0, @C4]>
  %r2 = round(%g2) -> tensor<?x4, [@S0, @C4]>
  %q1 = rem(%r1, %r2) -> tensor<?x4, [@S0, @C4]>
  %s1 = add(%f1, %c1) -> tensor<?x4, [@S0, @C4]>
  %s2 = add(%s1, %q1) -> tensor<?x4, [@S0, @C4]>
  // ordering and picking
  %am = argmax(%h) {dim = 1} -> tensor<?xi32, [@S0]>
  %an = argmin(%h) {dim = 0} -> tensor<4xi32>
  %cs = cumulative(%h) {dim = 0, kind = "logsumexp", reverse = true} -> tensor<?x4, [@S0, @C4]>
  %idx = iota() {dim = 0} -> tensor<?x4xi32, [@S0, @C4]>
  %sv, %si = sort(%cs, %idx) {dim = 0, num_keys = 1} -> tensor<?x4, [@S0, @C4]>, tensor<?x4xi32, [@S0, @C4]>
  %tv, %ti = top_k(%h) {k = 2} -> tensor<?x2, [@S0, @C2]>, tensor<?x2xi32, [@S0, @C2]>
  // a language model's loss picks each row's label: take_along_axis, and its gradient
  %lab = broadcast_in_dim(%am) {dims = [0]} -> tensor<?x1x1xi32, [@S0, @C1, @C1]>
  %pick = gather_slices(%h, %lab) {offset_dims = [], collapsed_slice_dims = [1], start_index_map = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], slice_sizes = [1, 1], mode = "fill", fill = nan} -> tensor<?x1, [@S0, @C1]>
  %z = constant() {value = 0.0} -> tensor<?x4, [@S0, @C4]>
  %dpick = scatter_slices(%z, %lab, %pick) {update_window_dims = [], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], operand_batching_dims = [0], scatter_indices_batching_dims = [0], kind = "add", mode = "fill"} -> tensor<?x4, [@S0, @C4]>
  // a convolution over the rows as a 1-channel image, max pooling and its gradient
  %img = broadcast_in_dim(%h) {dims = [1, 2]} -> tensor<1x?x4x1, [@C1, @S0, @C4, @C1]>
  %k = constant() {value = 0.5} -> tensor<3x3x1x2>
  %kr = reverse(%k) {dims = [0, 1]} -> tensor<3x3x1x2>
  %cv = conv(%img, %kr) {lhs_spec = [0, 3, 1, 2], rhs_spec = [3, 2, 0, 1], out_spec = [0, 3, 1, 2], strides = [1, 1], padding = [1, 1, 1, 1]} -> tensor<1x?x4x2, [@C1, @S0, @C4, @C2]>
  %pool = reduce_window(%cv) {kind = "max", window = [1, 3, 3, 1], strides = [1, 1, 1, 1], padding = [0, 0, 1, 1, 1, 1, 0, 0]} -> tensor<1x?x4x2, [@C1, @S0, @C4, @C2]>
  %dpool = select_and_scatter_add(%pool, %cv) {window = [1, 3, 3, 1], strides = [1, 1, 1, 1], padding = [0, 0, 1, 1, 1, 1, 0, 0]} -> tensor<1x?x4x2, [@C1, @S0, @C4, @C2]>
  // reshapes with structure and a fill of a dynamic shape, all related without hints
  %heads = split_dim(%h) {dim = 1, sizes = [2, 2]} -> tensor<?x2x2, [@S0, @C2, @C2]>
  %flat = merge_dims(%heads) {dim = 0, count = 2} -> tensor<?x2>
  %zero = constant() {value = 0.0} -> tensor<f32>
  %mask = broadcast_like(%zero, %x) {dims = [], source = [0, 0], axis = [0, 0]} -> tensor<?x?>
  return %loss, %s2, %am, %an, %sv, %si, %tv, %ti, %dpick, %dpool, %flat, %mask
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 64}
}

// CHECK-LABEL: func.func @main(%x: tensor<?x8, [@S0, @C8]>, %w: tensor<8x4>) {
// CHECK:         %b = dim_size(%x) {dim = 0} -> tensor<i32>
// CHECK:         %loss = div(%sum, %nf) -> tensor<f32>
// CHECK:         %r1 = round(%g1) {mode = "to_nearest_even"} -> tensor<?x4, [@S0, @C4]>
// CHECK:         %sv, %si = sort(%cs, %idx) {dim = 0, num_keys = 1} -> tensor<?x4, [@S0, @C4]>, tensor<?x4xi32, [@S0, @C4]>
// CHECK-NEXT:    %tv, %ti = top_k(%h) {k = 2} -> tensor<?x2, [@S0, @C2]>, tensor<?x2xi32, [@S0, @C2]>
// CHECK:         %pick = gather_slices(%h, %lab) {offset_dims = [], collapsed_slice_dims = [1], start_index_map = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], slice_sizes = [1, 1], mode = "fill", fill = nan} -> tensor<?x1, [@S0, @C1]>
// CHECK:         %cv = conv(%img, %kr) {lhs_spec = [0, 3, 1, 2], rhs_spec = [3, 2, 0, 1], out_spec = [0, 3, 1, 2], strides = [1, 1], padding = [1, 1, 1, 1]} -> tensor<1x?x4x2, [@C1, @S0, @C4, @C2]>
// CHECK:         %mask = broadcast_like(%zero, %x) {dims = [], source = [0, 0], axis = [0, 0]} -> tensor<?x?>
// CHECK-NEXT:    return %loss, %s2, %am, %an, %sv, %si, %tv, %ti, %dpick, %dpool, %flat, %mask
// EXEC: binding: S0=3
// SHAPES: %flat{{.*}}2*S0
// SHAPES: %mask{{.*}}S0{{.*}}S0
