// Three independent branches of different symbolic sizes that join late: two per-token
// towers over @S2 = @S0 * @S1 rows (batch times sequence; widths 1024 and 256) and a
// per-sequence head over @S0 pooled rows, plus a broadcast of a scalar that a tracer
// hoisted to the top. Written in a bad order: the towers are interleaved and the
// broadcast lives through all of them, so every big temporary is resident at once.
// A good schedule runs the branches one after the other and sinks the broadcast to its
// only use.
//
// RUN: bladec optimize -p analyze,schedule %s | filecheck %s
// RUN: bladec optimize -p analyze,schedule %s | bladec optimize -p schedule - | filecheck %s
//
// The wide tower runs alone, start to finish, before the narrow one starts:
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %a1 = dot(%x, %wa)
// CHECK-NEXT:    %a2 = tanh(%a1)
// CHECK-NEXT:    %a3 = dot(%a2, %wa2)
// CHECK-NEXT:    %b1 = dot(%x, %wb)
// CHECK-NEXT:    %b2 = logistic(%b1)
// CHECK-NEXT:    %b3 = mul(%b1, %b2)
// CHECK-NEXT:    %b4 = dot(%b3, %wb2)
// CHECK-NEXT:    %s = add(%a3, %b4)
// the hoisted broadcast is sunk to its only use:
// CHECK-NEXT:    %sb = broadcast_in_dim(%scale) {dims = []}
// CHECK-NEXT:    %g = mul(%s, %sb)
// and the per-sequence head runs in one piece, not across the towers:
// CHECK:         %p1 = dot(%pool, %wp)
// CHECK-NEXT:    %p2 = reduce(%p1)
// CHECK:         return %r, %p2
func.func @main(%x: tensor<?x64, [@S2, @C64]>, %pool: tensor<?x128, [@S0, @C128]>, %wa: tensor<64x1024>, %wa2: tensor<1024x64>, %wb: tensor<64x256>, %wb2: tensor<256x64>, %wp: tensor<128x1024>, %scale: tensor<f32>) {
  %sb = broadcast_in_dim(%scale) {dims = []} -> tensor<?x64, [@S2, @C64]>
  %a1 = dot(%x, %wa) -> tensor<?x1024, [@S2, @C1024]>
  %b1 = dot(%x, %wb) -> tensor<?x256, [@S2, @C256]>
  %p1 = dot(%pool, %wp) -> tensor<?x1024, [@S0, @C1024]>
  %a2 = tanh(%a1) -> tensor<?x1024, [@S2, @C1024]>
  %b2 = logistic(%b1) -> tensor<?x256, [@S2, @C256]>
  %b3 = mul(%b1, %b2) -> tensor<?x256, [@S2, @C256]>
  %a3 = dot(%a2, %wa2) -> tensor<?x64, [@S2, @C64]>
  %b4 = dot(%b3, %wb2) -> tensor<?x64, [@S2, @C64]>
  %s = add(%a3, %b4) -> tensor<?x64, [@S2, @C64]>
  %g = mul(%s, %sb) -> tensor<?x64, [@S2, @C64]>
  %r = reduce(%g) {dims = [1], kind = "sum"} -> tensor<?, [@S2]>
  %p2 = reduce(%p1) {dims = [1], kind = "max"} -> tensor<?, [@S0]>
  return %r, %p2
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 1, max = 64}
  SymbolicDim @S1 {min = 16, max = 4096}
  SymbolicDim @S2
  @S2 = Mul @S0, @S1
}
