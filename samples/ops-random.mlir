// Random bits under a key passed in, as the JAX importer writes jax.random.bernoulli for
// dropout: the bits at each element are threefry of the key and the element's row-major
// position, made a float in [1, 2) by a shift, an or and a bitcast (JAX's own recipe).
//
// RUN: bladec optimize -p none %s | filecheck %s
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
// RUN: bladec run %s --backend numpy --dims S0=3 | filecheck --check-prefix=EXEC %s
// RUN: bladec analyze %s | filecheck --check-prefix=SHAPES %s
func.func @main(%key: tensor<2xu32>, %x: tensor<?x4, [@S0, @C4]>) {
  %zero = constant() {value = 0} -> tensor<u32>
  %hi = broadcast_like(%zero, %x) {dims = [], source = [0, -1], axis = [0, -1]} -> tensor<?x4xu32>
  %row = iota() {dim = 0} -> tensor<?x4xu32>
  %four = constant() {value = 4} -> tensor<4xu32>
  %fours = broadcast_in_dim(%four) {dims = [1]} -> tensor<?x4xu32>
  %rows = mul(%row, %fours) -> tensor<?x4xu32>
  %col = iota() {dim = 1} -> tensor<?x4xu32>
  %pos = add(%rows, %col) -> tensor<?x4xu32>
  %lo = add(%pos, %hi) -> tensor<?x4xu32>
  %a, %b = threefry(%key, %hi, %lo) -> tensor<?x4xu32>, tensor<?x4xu32>
  %bits = bit_xor(%a, %b) -> tensor<?x4xu32>
  %nine = constant() {value = 9} -> tensor<?x4xu32>
  %nines = add(%nine, %hi) -> tensor<?x4xu32>
  %mant = shift_right_logical(%bits, %nines) -> tensor<?x4xu32>
  %one = constant() {value = 1065353216} -> tensor<?x4xu32>
  %ones = add(%one, %hi) -> tensor<?x4xu32>
  %fbits = bit_or(%mant, %ones) -> tensor<?x4xu32>
  %u = bitcast(%fbits) {dtype = "f32"} -> tensor<?x4>
  %p = constant() {value = 1.9} -> tensor<?x4>
  %keep = compare(%u, %p) {direction = "LT"} -> tensor<?x4xi1>
  %z = constant() {value = 0.0} -> tensor<?x4>
  %drop = select(%keep, %x, %z) -> tensor<?x4>
  %back = bitcast(%u) {dtype = "u32"} -> tensor<?x4xu32>
  %same = shift_left(%back, %hi) -> tensor<?x4xu32>
  %check = bit_and(%same, %fbits) -> tensor<?x4xu32>
  return %drop, %check
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
}
// CHECK-LABEL: func.func @main(%key: tensor<2xu32>, %x: tensor<?x4, [@S0, @C4]>) {
// CHECK:         %a, %b = threefry(%key, %hi, %lo) -> tensor<?x4xu32>, tensor<?x4xu32>
// CHECK-NEXT:    %bits = bit_xor(%a, %b) -> tensor<?x4xu32>
// CHECK:         %u = bitcast(%fbits) {dtype = "f32"} -> tensor<?x4>
// CHECK:         return %drop, %check
// EXEC: binding: S0=3
// SHAPES: %lo{{.*}}S0
