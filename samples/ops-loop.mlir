// The loop op: an RNN cell scanned over a dynamic number of steps @S1 (JAX's lax.scan as
// the importer writes it when the length is a symbol), then a reversed scan that sums
// the per-step outputs from the last step down. The trip count is the scanned input's
// leading dim, so the analysis gives the stacked outputs @S1 as their leading dim, and
// the memory model counts each loop's body temporaries inside its step.
//
// RUN: bladec optimize -p none %s | filecheck %s
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
// RUN: bladec optimize %s | filecheck --check-prefix=OPT %s
// RUN: bladec analyze %s | filecheck --check-prefix=SHAPES %s
// RUN: bladec run %s --backend numpy --dims S0=3,S1=5 | filecheck --check-prefix=EXEC %s
// RUN: bladec run %s --bitwise --dims S0=2,S1=4 | filecheck --check-prefix=EXEC %s
func.func @main(%w: tensor<4x4>, %h0: tensor<?x4, [@S0, @C4]>, %xs: tensor<?x?x4, [@S1, @S0, @C4]>) {
  %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> tensor<?x4>, tensor<?x?x4> body {
    %bw = scan.arg() {index = 0} -> tensor<4x4>
    %c = scan.arg() {index = 1} -> tensor<?x4>
    %x = scan.arg() {index = 2} -> tensor<?x4>
    %d = dot(%c, %bw) -> tensor<?x4>
    %s = add(%d, %x) -> tensor<?x4>
    %n = tanh(%s) -> tensor<?x4>
    scan.yield(%n, %n)
  }
  %zero = constant() {value = 0.0} -> tensor<4xf32>
  %half = constant() {value = 0.5} -> tensor<f32>
  %tot, %run = scan(%half, %zero, %hs) {num_consts = 1, num_carry = 1, reverse = true} -> tensor<4xf32>, tensor<?x4xf32> body {
    %k = scan.arg() {index = 0} -> tensor<f32>
    %acc = scan.arg() {index = 1} -> tensor<4xf32>
    %step = scan.arg() {index = 2} -> tensor<?x4>
    %row = reduce(%step) {dims = [0], kind = "sum"} -> tensor<4xf32>
    %kb = broadcast_in_dim(%k) {dims = []} -> tensor<4xf32>
    %scaled = mul(%acc, %kb) -> tensor<4xf32>
    %next = add(%scaled, %row) -> tensor<4xf32>
    scan.yield(%next, %next)
  }
  %l = reduce(%run) {dims = [0, 1]} -> tensor<f32>
  return %h, %tot, %l
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 1, max = 128}
}
// CHECK-LABEL: func.func @main(
// CHECK:         %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> tensor<?x4>, tensor<?x?x4> body {
// CHECK-NEXT:      %bw = scan.arg() {index = 0} -> tensor<4x4>
// CHECK:           scan.yield(%n, %n)
// CHECK-NEXT:    }
// CHECK:         %tot, %run = scan(%half, %zero, %hs) {num_consts = 1, num_carry = 1, reverse = true}
// CHECK:         return %h, %tot, %l
// The optimizer keeps each loop whole (its body untouched) and schedules around it:
// OPT:           %h, %hs = scan(%w, %h0, %xs)
// OPT:             %n = tanh(%s)
// OPT-NEXT:        scan.yield(%n, %n)
// OPT:           %tot, %run = scan(%half, %zero, %hs)
// The stacked outputs have the trip count as their leading dim; the first loop's step
// holds its body's temporaries (three [S0, 4] f32 values at once) beside its results:
// SHAPES:        %hs  [S1, S0, 4] f32
// SHAPES:        %run  [S1, 4] f32
// SHAPES:        %h, %hs = scan  32*S0*S1 + 80*S0 + 64
// EXEC: binding: {{.*}}S1={{[45]}}
