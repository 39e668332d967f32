// A diamond: one op on the weights feeds two branches, a query tower over @S0 rows and a
// key tower over @S1 rows, which join in a concatenation over @S2 = @S0 + @S1 rows.
// Each tower peaks at 2048 bytes per row (two 256-wide f32 temporaries) and leaves 512
// bytes per row, so the tower to run first is the one with MORE rows: its temporaries
// are gone before the other tower starts and only its small result is kept across.
// Which symbol is larger is not known at compile time (both range over [16, 8192]), so
// `compare` can not order the towers' memory impacts (-512*S0 against -512*S1) and the
// scheduler's fallback decides.
//
// The fallback keeps each tower in one piece (never interleaved: that would hold both
// towers' temporaries at once) and, the impacts being unordered, runs the query tower
// first; for bindings with @S1 > @S0 the key tower first would be better. No single order
// suits every binding, so the pass keeps the other one as a schedule version, @main.v1,
// and for each binding the runtime (and `bladec analyze --dims`) takes the lower peak.
//
// RUN: bladec optimize -p analyze,schedule %s | filecheck %s
// RUN: bladec optimize -p analyze,schedule %s | bladec optimize -p schedule - | filecheck %s
// RUN: bladec optimize -p analyze,schedule %s | bladec analyze - --dims S0=4000,S1=100 | filecheck --check-prefix=WIDE-Q %s
// RUN: bladec optimize -p analyze,schedule %s | bladec analyze - --dims S0=100,S1=4000 | filecheck --check-prefix=WIDE-K %s
//
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    schedule.versions() {funcs = [@main.v1]}
// CHECK-NEXT:    %wn = tanh(%w)
// CHECK-NEXT:    %a1 = dot(%q, %wn)
// CHECK-NEXT:    %a2 = logistic(%a1)
// CHECK-NEXT:    %a3 = dot(%a2, %w2)
// CHECK-NEXT:    %b1 = dot(%k, %wn)
// CHECK-NEXT:    %b2 = logistic(%b1)
// CHECK-NEXT:    %b3 = dot(%b2, %w2)
// CHECK-NEXT:    %c = concatenate(%a3, %b3) {dim = 0} -> tensor<?x128, [@S2, @C128]>
// CHECK-LABEL: func.func @main.v1(
// CHECK-NEXT:    %wn = tanh(%w)
// CHECK-NEXT:    %b1 = dot(%k, %wn)
// CHECK-NEXT:    %b2 = logistic(%b1)
// CHECK-NEXT:    %b3 = dot(%b2, %w2)
// CHECK-NEXT:    %a1 = dot(%q, %wn)
// CHECK:       @S2 = Add @S0, @S1
//
// WIDE-Q: version @main.v1: peak
// WIDE-Q: memory by step (order of @main):
// WIDE-Q-NEXT: 0 %wn = tanh
// WIDE-Q-NEXT: 1 %a1 = dot
// WIDE-K: memory by step (order of @main.v1):
// WIDE-K-NEXT: 0 %wn = tanh
// WIDE-K-NEXT: 1 %b1 = dot
func.func @main(%q: tensor<?x16, [@S0, @C16]>, %k: tensor<?x16, [@S1, @C16]>, %w: tensor<16x256>, %w2: tensor<256x128>, %w3: tensor<128x16>) {
  %wn = tanh(%w) -> tensor<16x256>
  %a1 = dot(%q, %wn) -> tensor<?x256, [@S0, @C256]>
  %b1 = dot(%k, %wn) -> tensor<?x256, [@S1, @C256]>
  %a2 = logistic(%a1) -> tensor<?x256, [@S0, @C256]>
  %b2 = logistic(%b1) -> tensor<?x256, [@S1, @C256]>
  %a3 = dot(%a2, %w2) -> tensor<?x128, [@S0, @C128]>
  %b3 = dot(%b2, %w2) -> tensor<?x128, [@S1, @C128]>
  %c = concatenate(%a3, %b3) {dim = 0} -> tensor<?x128, [@S2, @C128]>
  %o = dot(%c, %w3) -> tensor<?x16, [@S2, @C16]>
  %r = reduce(%o) {dims = [1], kind = "sum"} -> tensor<?, [@S2]>
  return %r
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {min = 16, max = 8192}
  SymbolicDim @S1 {min = 16, max = 8192}
  SymbolicDim @S2
  @S2 = Add @S0, @S1
}
