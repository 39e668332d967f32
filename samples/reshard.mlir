// The redistribution of DESIGN section 12: a 64x64x64 f32 array on a 4x2 mesh, from
// P('y', None, 'x') to P(None, ('x', 'y'), None). XLA gathers the whole array on every
// device for it; in normal form it is two all_to_alls, at the source's local size.
//
// RUN: bladec optimize -p redistribute %s | filecheck %s
// RUN: bladec optimize -p redistribute %s | bladec optimize -p none - | filecheck %s
mesh {x = 4, y = 2}
func.func @main(%a: tensor<64x64x64, {y, _, x}>) {
  %b = reshard(%a) -> tensor<64x64x64, {_, (x, y), _}>
  return %b
}

// CHECK:       mesh {x = 4, y = 2}
// CHECK-NEXT:  func.func @main(%a: tensor<64x64x64, {y, _, x}>) {
// CHECK-NEXT:    %b.0 = all_to_all(%a) {src = 2, dst = 1} -> tensor<64x64x64, {y, x, _}>
// CHECK-NEXT:    %b = all_to_all(%b.0) {src = 0, dst = 1} -> tensor<64x64x64, {_, (x, y), _}>
// CHECK-NEXT:    return %b
// CHECK-NEXT:  }
