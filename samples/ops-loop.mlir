// The loop ops: an RNN cell scanned over a dynamic number of steps @S1 (JAX's lax.scan
// as the importer writes it when the length is a symbol), then a reversed scan that sums
// the per-step outputs from the last step down, then a while loop that halves the final
// state until it is small (lax.while_loop: the trip count is decided as it runs). A
// scan's trip count is its scanned input's leading dim, so the analysis gives the stacked
// outputs @S1 as their leading dim, and the memory model counts each loop's region
// temporaries inside its step.
//
// RUN: bladec optimize -p none %s | filecheck %s
// RUN: bladec optimize -p none %s | bladec optimize -p none - | filecheck %s
// RUN: bladec optimize %s | filecheck --check-prefix=OPT %s
// RUN: bladec analyze %s | filecheck --check-prefix=SHAPES %s
// RUN: bladec run %s --backend numpy --dims S0=3,S1=5 | filecheck --check-prefix=EXEC %s
// RUN: bladec run %s --bitwise --dims S0=2,S1=4 | filecheck --check-prefix=EXEC %s
func.func @main(%w: tensor<4x4>, %h0: tensor<?x4, [@S0, @C4]>, %xs: tensor<?x?x4, [@S1, @S0, @C4]>) {
  %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> tensor<?x4>, tensor<?x?x4> body {
    %bw = loop.arg() {index = 0} -> tensor<4x4>
    %c = loop.arg() {index = 1} -> tensor<?x4>
    %x = loop.arg() {index = 2} -> tensor<?x4>
    %d = dot(%c, %bw) -> tensor<?x4>
    %s = add(%d, %x) -> tensor<?x4>
    %n = tanh(%s) -> tensor<?x4>
    loop.yield(%n, %n)
  }
  %zero = constant() {value = 0.0} -> tensor<4xf32>
  %half = constant() {value = 0.5} -> tensor<f32>
  %tot, %run = scan(%half, %zero, %hs) {num_consts = 1, num_carry = 1, reverse = true} -> tensor<4xf32>, tensor<?x4xf32> body {
    %k = loop.arg() {index = 0} -> tensor<f32>
    %acc = loop.arg() {index = 1} -> tensor<4xf32>
    %step = loop.arg() {index = 2} -> tensor<?x4>
    %row = reduce(%step) {dims = [0], kind = "sum"} -> tensor<4xf32>
    %kb = broadcast_in_dim(%k) {dims = []} -> tensor<4xf32>
    %scaled = mul(%acc, %kb) -> tensor<4xf32>
    %next = add(%scaled, %row) -> tensor<4xf32>
    loop.yield(%next, %next)
  }
  %l = reduce(%run) {dims = [0, 1]} -> tensor<f32>
  %tiny = constant() {value = 0.001} -> tensor<f32>
  %halvings = constant() {value = 0} -> tensor<i32>
  %small, %count = while(%tiny, %h, %halvings) {num_consts = 1} -> tensor<?x4>, tensor<i32> cond {
    %eps = loop.arg() {index = 0} -> tensor<f32>
    %cur = loop.arg() {index = 1} -> tensor<?x4>
    %mag = abs(%cur) -> tensor<?x4>
    %top = reduce(%mag) {dims = [0, 1], kind = "max"} -> tensor<f32>
    %go = compare(%top, %eps) {direction = "GT"} -> tensor<i1>
    loop.yield(%go)
  } body {
    %v = loop.arg() {index = 1} -> tensor<?x4>
    %n0 = loop.arg() {index = 2} -> tensor<i32>
    %p5 = constant() {value = 0.5} -> tensor<?x4>
    %v2 = mul(%v, %p5) -> tensor<?x4>
    %one = constant() {value = 1} -> tensor<i32>
    %n1 = add(%n0, %one) -> tensor<i32>
    loop.yield(%v2, %n1)
  }
  return %h, %tot, %l, %small, %count
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 1, max = 128}
}
// CHECK-LABEL: func.func @main(
// CHECK:         %h, %hs = scan(%w, %h0, %xs) {num_consts = 1, num_carry = 1} -> tensor<?x4>, tensor<?x?x4> body {
// CHECK-NEXT:      %bw = loop.arg() {index = 0} -> tensor<4x4>
// CHECK:           loop.yield(%n, %n)
// CHECK-NEXT:    }
// CHECK:         %tot, %run = scan(%half, %zero, %hs) {num_consts = 1, num_carry = 1, reverse = true}
// CHECK:         %small, %count = while(%tiny, %h, %halvings) {num_consts = 1} -> tensor<?x4>, tensor<i32> cond {
// CHECK:           loop.yield(%go)
// CHECK-NEXT:    } body {
// CHECK:           loop.yield(%v2, %n1)
// CHECK:         return %h, %tot, %l, %small, %count
// The optimizer keeps each loop whole (its body untouched) and schedules around it:
// OPT:           %h, %hs = scan(%w, %h0, %xs)
// OPT:             %n = tanh(%s)
// OPT-NEXT:        loop.yield(%n, %n)
// OPT:           %tot, %run = scan(%half, %zero, %hs)
// OPT:           while(%tiny, %h, %halvings)
// The stacked outputs have the trip count as their leading dim; the first loop's step
// holds its body's temporaries (three [S0, 4] f32 values at once) beside its results:
// SHAPES:        %hs  [S1, S0, 4] f32
// SHAPES:        %run  [S1, 4] f32
// SHAPES:        %small  [S0, 4] f32
// SHAPES:        %h, %hs = scan  32*S0*S1 + 80*S0 + 64
// EXEC: binding: {{.*}}S1={{[45]}}
