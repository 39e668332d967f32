// samples/sharding/llama-train-small.mlir (the small Llama's training step with only the
// arguments sharded: batch over data, heads and MLP units over model) as the `propagate`
// pass completes it: every value's sharded type, one all_reduce over model after each
// block's row-parallel contraction (Megatron-LM's), the loss and the gradients summed
// over data, the embedding's scatter-add started from a zero partial sum, no reshard.
// Regenerate with
//   bladec optimize -p propagate samples/sharding/llama-train-small.mlir
// (tests/passes/test_propagate.py checks that it is that pass's output). It runs as it is
// (`bladec run --dims S0=8,S1=16`, 8 devices); analyze gives per-device sizes.
//
// RUN: bladec optimize -p none %s | filecheck %s
mesh {data = 4, model = 2}
func.func @main(%params.embed: tensor<256x64>, %params.final_norm: tensor<64>, %params.layers.0.attn_norm: tensor<64>, %params.layers.0.mlp_norm: tensor<64>, %params.layers.0.w_down: tensor<172x64, {model, _}>, %params.layers.0.w_gate: tensor<64x172, {_, model}>, %params.layers.0.w_up: tensor<64x172, {_, model}>, %params.layers.0.wk: tensor<64x4x16, {_, model, _}>, %params.layers.0.wo: tensor<4x16x64, {model, _, _}>, %params.layers.0.wq: tensor<64x4x16, {_, model, _}>, %params.layers.0.wv: tensor<64x4x16, {_, model, _}>, %params.layers.1.attn_norm: tensor<64>, %params.layers.1.mlp_norm: tensor<64>, %params.layers.1.w_down: tensor<172x64, {model, _}>, %params.layers.1.w_gate: tensor<64x172, {_, model}>, %params.layers.1.w_up: tensor<64x172, {_, model}>, %params.layers.1.wk: tensor<64x4x16, {_, model, _}>, %params.layers.1.wo: tensor<4x16x64, {model, _, _}>, %params.layers.1.wq: tensor<64x4x16, {_, model, _}>, %params.layers.1.wv: tensor<64x4x16, {_, model, _}>, %params.lm_head: tensor<64x256>, %tokens: tensor<?x?xi32, [@S0, @S1], {data, _}>, %targets: tensor<?x?xi32, [@S0, @S1], {data, _}>, %mask: tensor<?x?, [@S0, @S1], {data, _}>, %lr: tensor<f32>) {
  %0 = constant() {value = 0} -> tensor<i32>
  %1.r = broadcast_like(%0, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32, {data, _}>
  %2 = compare(%tokens, %1.r) {direction = "LT"} -> tensor<?x?xi1, {data, _}>
  %3 = constant() {value = 256} -> tensor<i32>
  %4.r = broadcast_like(%3, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32, {data, _}>
  %5 = add(%tokens, %4.r) -> tensor<?x?xi32, {data, _}>
  %6 = select(%2, %5, %tokens) -> tensor<?x?xi32, {data, _}>
  %7 = gather(%params.embed, %6) -> tensor<?x?x64, {data, _, _}>
  %8 = iota() {dim = 0} -> tensor<?>
  %9 = constant() {value = 1.0} -> tensor<f32>
  %10 = broadcast_like(%9, %tokens) {dims = [], source = [0], axis = [1]} -> tensor<?>
  %11 = mul(%10, %8) -> tensor<?>
  %12 = constant() {value = 0.0} -> tensor<f32>
  %13 = broadcast_like(%12, %tokens) {dims = [], source = [0], axis = [1]} -> tensor<?>
  %14 = add(%13, %11) -> tensor<?>
  %15 = iota() {dim = 0} -> tensor<8>
  %16 = constant() {value = 0.125} -> tensor<8>
  %17 = mul(%15, %16) -> tensor<8>
  %18 = constant() {value = 10000.0} -> tensor<8>
  %19 = pow(%18, %17) -> tensor<8>
  %20 = constant() {value = 1.0} -> tensor<8>
  %21 = div(%20, %19) -> tensor<8>
  %22 = broadcast_in_dim(%14) {dims = [0]} -> tensor<?x8>
  %23 = broadcast_like(%21, %tokens) {dims = [1], source = [0, -1], axis = [1, -1]} -> tensor<?x8>
  %24 = mul(%22, %23) -> tensor<?x8>
  %25 = concatenate(%24, %24) {dim = 1} -> tensor<?x16>
  %26 = iota() {dim = 0} -> tensor<16x16xi32>
  %27 = iota() {dim = 1} -> tensor<16x16xi32>
  %28 = constant() {value = 8} -> tensor<16x16xi32>
  %29 = add(%27, %28) -> tensor<16x16xi32>
  %30 = compare(%26, %29) {direction = "EQ"} -> tensor<16x16xi1>
  %31 = constant() {value = -1.0} -> tensor<16x16>
  %32 = constant() {value = 0.0} -> tensor<16x16>
  %33 = select(%30, %31, %32) -> tensor<16x16>
  %34 = constant() {value = 8} -> tensor<16x16xi32>
  %35 = add(%26, %34) -> tensor<16x16xi32>
  %36 = compare(%35, %27) {direction = "EQ"} -> tensor<16x16xi1>
  %37 = constant() {value = 1.0} -> tensor<16x16>
  %38 = constant() {value = 0.0} -> tensor<16x16>
  %39 = select(%36, %37, %38) -> tensor<16x16>
  %40 = add(%33, %39) -> tensor<16x16>
  %41 = cos(%25) -> tensor<?x16>
  %42 = sin(%25) -> tensor<?x16>
  %43 = mul(%7, %7) -> tensor<?x?x64, {data, _, _}>
  %44 = reduce(%43) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %45 = broadcast_in_dim(%44) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %46 = constant() {value = 64.0} -> tensor<f32>
  %47.r = broadcast_like(%46, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %48 = div(%45, %47.r) -> tensor<?x?x1, {data, _, _}>
  %49 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %50.r = broadcast_like(%49, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %51 = add(%48, %50.r) -> tensor<?x?x1, {data, _, _}>
  %52 = rsqrt(%51) -> tensor<?x?x1, {data, _, _}>
  %53 = div(%52, %51) -> tensor<?x?x1, {data, _, _}>
  %54 = constant() {value = -0.5} -> tensor<f32>
  %55.r = broadcast_like(%54, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %56 = mul(%55.r, %53) -> tensor<?x?x1, {data, _, _}>
  %57 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %58 = mul(%7, %57) -> tensor<?x?x64, {data, _, _}>
  %59.r = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %60 = mul(%58, %59.r) -> tensor<?x?x64, {data, _, _}>
  %61 = dot_general(%60, %params.layers.0.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %62 = dot_general(%61, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %63.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %64 = mul(%61, %63.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %65.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %66 = mul(%62, %65.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %67 = add(%64, %66) -> tensor<?x?x4x16, {data, _, model, _}>
  %68 = dot_general(%60, %params.layers.0.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %69 = dot_general(%68, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %70.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %71 = mul(%68, %70.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %72.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %73 = mul(%69, %72.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %74 = add(%71, %73) -> tensor<?x?x4x16, {data, _, model, _}>
  %75 = dot_general(%60, %params.layers.0.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %76 = dot_general(%67, %74) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?, {data, model, _, _}>
  %77 = constant() {value = 0.25} -> tensor<f32>
  %78.r = broadcast_like(%77, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %79 = mul(%76, %78.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %80 = iota() {dim = 0} -> tensor<?x?xi32>
  %81 = iota() {dim = 1} -> tensor<?x?xi32>
  %82 = compare(%80, %81) {direction = "GE"} -> tensor<?x?xi1>
  %83 = broadcast_in_dim(%82) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %85 = constant() {value = -1000000000.0} -> tensor<f32>
  %84.r = broadcast_like(%83, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1, {data, model, _, _}>
  %86.r = broadcast_like(%85, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %87 = select(%84.r, %79, %86.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %88 = reduce(%87) {dims = [3], kind = "max"} -> tensor<?x4x?, {data, model, _}>
  %89 = broadcast_like(%88, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %90 = sub(%87, %89) -> tensor<?x4x?x?, {data, model, _, _}>
  %91 = exp(%90) -> tensor<?x4x?x?, {data, model, _, _}>
  %92 = reduce(%91) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %93 = broadcast_in_dim(%92) {dims = [0, 1, 2]} -> tensor<?x4x?x1, {data, model, _, _}>
  %94 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %95 = div(%91, %94) -> tensor<?x4x?x?, {data, model, _, _}>
  %96 = integer_pow(%93) {exponent = -2} -> tensor<?x4x?x1, {data, model, _, _}>
  %97 = dot_general(%75, %95) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?, {data, model, _, _}>
  %98 = transpose(%97) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %99 = dot_general(%98, %params.layers.0.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %99.r = all_reduce(%99) -> tensor<?x?x64, {data, _, _}>
  %100 = add(%7, %99.r) -> tensor<?x?x64, {data, _, _}>
  %101 = mul(%100, %100) -> tensor<?x?x64, {data, _, _}>
  %102 = reduce(%101) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %103 = broadcast_in_dim(%102) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %104 = constant() {value = 64.0} -> tensor<f32>
  %105.r = broadcast_like(%104, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %106 = div(%103, %105.r) -> tensor<?x?x1, {data, _, _}>
  %107 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %108.r = broadcast_like(%107, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %109 = add(%106, %108.r) -> tensor<?x?x1, {data, _, _}>
  %110 = rsqrt(%109) -> tensor<?x?x1, {data, _, _}>
  %111 = div(%110, %109) -> tensor<?x?x1, {data, _, _}>
  %112 = constant() {value = -0.5} -> tensor<f32>
  %113.r = broadcast_like(%112, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %114 = mul(%113.r, %111) -> tensor<?x?x1, {data, _, _}>
  %115 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %116 = mul(%100, %115) -> tensor<?x?x64, {data, _, _}>
  %117.r = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %118 = mul(%116, %117.r) -> tensor<?x?x64, {data, _, _}>
  %119 = dot_general(%118, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172, {data, _, model}>
  %120 = dot_general(%118, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172, {data, _, model}>
  %121 = logistic(%119) -> tensor<?x?x172, {data, _, model}>
  %122 = constant() {value = 1.0} -> tensor<f32>
  %123.r = broadcast_like(%122, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x172, {data, _, model}>
  %124 = sub(%123.r, %121) -> tensor<?x?x172, {data, _, model}>
  %125 = mul(%121, %124) -> tensor<?x?x172, {data, _, model}>
  %126 = mul(%119, %121) -> tensor<?x?x172, {data, _, model}>
  %127 = mul(%126, %120) -> tensor<?x?x172, {data, _, model}>
  %128 = dot_general(%127, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64, {data, _, _, +model}>
  %128.r = all_reduce(%128) -> tensor<?x?x64, {data, _, _}>
  %129 = add(%100, %128.r) -> tensor<?x?x64, {data, _, _}>
  %130 = mul(%129, %129) -> tensor<?x?x64, {data, _, _}>
  %131 = reduce(%130) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %132 = broadcast_in_dim(%131) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %133 = constant() {value = 64.0} -> tensor<f32>
  %134.r = broadcast_like(%133, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %135 = div(%132, %134.r) -> tensor<?x?x1, {data, _, _}>
  %136 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %137.r = broadcast_like(%136, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %138 = add(%135, %137.r) -> tensor<?x?x1, {data, _, _}>
  %139 = rsqrt(%138) -> tensor<?x?x1, {data, _, _}>
  %140 = div(%139, %138) -> tensor<?x?x1, {data, _, _}>
  %141 = constant() {value = -0.5} -> tensor<f32>
  %142.r = broadcast_like(%141, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %143 = mul(%142.r, %140) -> tensor<?x?x1, {data, _, _}>
  %144 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %145 = mul(%129, %144) -> tensor<?x?x64, {data, _, _}>
  %146.r = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %147 = mul(%145, %146.r) -> tensor<?x?x64, {data, _, _}>
  %148 = dot_general(%147, %params.layers.1.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %149 = dot_general(%148, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %150.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %151 = mul(%148, %150.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %152.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %153 = mul(%149, %152.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %154 = add(%151, %153) -> tensor<?x?x4x16, {data, _, model, _}>
  %155 = dot_general(%147, %params.layers.1.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %156 = dot_general(%155, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %157.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %158 = mul(%155, %157.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %159.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %160 = mul(%156, %159.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %161 = add(%158, %160) -> tensor<?x?x4x16, {data, _, model, _}>
  %162 = dot_general(%147, %params.layers.1.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
  %163 = dot_general(%154, %161) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?, {data, model, _, _}>
  %164 = constant() {value = 0.25} -> tensor<f32>
  %165.r = broadcast_like(%164, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %166 = mul(%163, %165.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %167 = iota() {dim = 0} -> tensor<?x?xi32>
  %168 = iota() {dim = 1} -> tensor<?x?xi32>
  %169 = compare(%167, %168) {direction = "GE"} -> tensor<?x?xi1>
  %170 = broadcast_in_dim(%169) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %172 = constant() {value = -1000000000.0} -> tensor<f32>
  %171.r = broadcast_like(%170, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1, {data, model, _, _}>
  %173.r = broadcast_like(%172, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %174 = select(%171.r, %166, %173.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %175 = reduce(%174) {dims = [3], kind = "max"} -> tensor<?x4x?, {data, model, _}>
  %176 = broadcast_like(%175, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %177 = sub(%174, %176) -> tensor<?x4x?x?, {data, model, _, _}>
  %178 = exp(%177) -> tensor<?x4x?x?, {data, model, _, _}>
  %179 = reduce(%178) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %180 = broadcast_in_dim(%179) {dims = [0, 1, 2]} -> tensor<?x4x?x1, {data, model, _, _}>
  %181 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %182 = div(%178, %181) -> tensor<?x4x?x?, {data, model, _, _}>
  %183 = integer_pow(%180) {exponent = -2} -> tensor<?x4x?x1, {data, model, _, _}>
  %184 = dot_general(%162, %182) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?, {data, model, _, _}>
  %185 = transpose(%184) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %186 = dot_general(%185, %params.layers.1.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %186.r = all_reduce(%186) -> tensor<?x?x64, {data, _, _}>
  %187 = add(%129, %186.r) -> tensor<?x?x64, {data, _, _}>
  %188 = mul(%187, %187) -> tensor<?x?x64, {data, _, _}>
  %189 = reduce(%188) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %190 = broadcast_in_dim(%189) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %191 = constant() {value = 64.0} -> tensor<f32>
  %192.r = broadcast_like(%191, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %193 = div(%190, %192.r) -> tensor<?x?x1, {data, _, _}>
  %194 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %195.r = broadcast_like(%194, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %196 = add(%193, %195.r) -> tensor<?x?x1, {data, _, _}>
  %197 = rsqrt(%196) -> tensor<?x?x1, {data, _, _}>
  %198 = div(%197, %196) -> tensor<?x?x1, {data, _, _}>
  %199 = constant() {value = -0.5} -> tensor<f32>
  %200.r = broadcast_like(%199, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %201 = mul(%200.r, %198) -> tensor<?x?x1, {data, _, _}>
  %202 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %203 = mul(%187, %202) -> tensor<?x?x64, {data, _, _}>
  %204.r = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %205 = mul(%203, %204.r) -> tensor<?x?x64, {data, _, _}>
  %206 = dot_general(%205, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172, {data, _, model}>
  %207 = dot_general(%205, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172, {data, _, model}>
  %208 = logistic(%206) -> tensor<?x?x172, {data, _, model}>
  %209 = constant() {value = 1.0} -> tensor<f32>
  %210.r = broadcast_like(%209, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x172, {data, _, model}>
  %211 = sub(%210.r, %208) -> tensor<?x?x172, {data, _, model}>
  %212 = mul(%208, %211) -> tensor<?x?x172, {data, _, model}>
  %213 = mul(%206, %208) -> tensor<?x?x172, {data, _, model}>
  %214 = mul(%213, %207) -> tensor<?x?x172, {data, _, model}>
  %215 = dot_general(%214, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64, {data, _, _, +model}>
  %215.r = all_reduce(%215) -> tensor<?x?x64, {data, _, _}>
  %216 = add(%187, %215.r) -> tensor<?x?x64, {data, _, _}>
  %217 = mul(%216, %216) -> tensor<?x?x64, {data, _, _}>
  %218 = reduce(%217) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %219 = broadcast_in_dim(%218) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %220 = constant() {value = 64.0} -> tensor<f32>
  %221.r = broadcast_like(%220, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %222 = div(%219, %221.r) -> tensor<?x?x1, {data, _, _}>
  %223 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %224.r = broadcast_like(%223, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %225 = add(%222, %224.r) -> tensor<?x?x1, {data, _, _}>
  %226 = rsqrt(%225) -> tensor<?x?x1, {data, _, _}>
  %227 = div(%226, %225) -> tensor<?x?x1, {data, _, _}>
  %228 = constant() {value = -0.5} -> tensor<f32>
  %229.r = broadcast_like(%228, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %230 = mul(%229.r, %227) -> tensor<?x?x1, {data, _, _}>
  %231 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %232 = mul(%216, %231) -> tensor<?x?x64, {data, _, _}>
  %233.r = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %234 = mul(%232, %233.r) -> tensor<?x?x64, {data, _, _}>
  %235 = dot_general(%234, %params.lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256, {data, _, _}>
  %236 = reduce(%235) {dims = [2], kind = "max"} -> tensor<?x?, {data, _}>
  %237 = broadcast_in_dim(%236) {dims = [0, 1]} -> tensor<?x?x256, {data, _, _}>
  %238 = sub(%235, %237) -> tensor<?x?x256, {data, _, _}>
  %239 = exp(%238) -> tensor<?x?x256, {data, _, _}>
  %240 = reduce(%239) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %241 = log(%240) -> tensor<?x?, {data, _}>
  %242 = add(%241, %236) -> tensor<?x?, {data, _}>
  %244 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32, {data, _, _}>
  %243.r = iota() {dim = 2} -> tensor<?x?x256xi32, {data, _, _}>
  %245 = compare(%243.r, %244) {direction = "EQ"} -> tensor<?x?x256xi1, {data, _, _}>
  %246 = convert(%245) {dtype = "f32"} -> tensor<?x?x256, {data, _, _}>
  %247 = mul(%235, %246) -> tensor<?x?x256, {data, _, _}>
  %248 = reduce(%247) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %249 = sub(%242, %248) -> tensor<?x?, {data, _}>
  %250 = mul(%249, %mask) -> tensor<?x?, {data, _}>
  %251 = reduce(%250) {dims = [0, 1], kind = "sum"} -> tensor<f32, {+data}>
  %252 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32, {+data}>
  %253 = constant() {value = 1.0} -> tensor<f32>
  %252.r = all_reduce(%252) -> tensor<f32>
  %254 = max(%252.r, %253) -> tensor<f32>
  %loss.p = div(%251, %254) -> tensor<f32, {+data}>
  %loss = all_reduce(%loss.p) -> tensor<f32>
  %255 = constant() {value = 1.0} -> tensor<f32>
  %256 = div(%255, %254) -> tensor<f32>
  %257.r = broadcast_like(%256, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?, {data, _}>
  %258 = mul(%257.r, %mask) -> tensor<?x?, {data, _}>
  %259 = neg(%258) -> tensor<?x?, {data, _}>
  %260 = broadcast_in_dim(%259) {dims = [0, 1]} -> tensor<?x?x256, {data, _, _}>
  %261 = mul(%260, %246) -> tensor<?x?x256, {data, _, _}>
  %262 = div(%258, %240) -> tensor<?x?, {data, _}>
  %263 = broadcast_in_dim(%262) {dims = [0, 1]} -> tensor<?x?x256, {data, _, _}>
  %264 = mul(%263, %239) -> tensor<?x?x256, {data, _, _}>
  %265 = add(%261, %264) -> tensor<?x?x256, {data, _, _}>
  %266 = dot_general(%265, %234) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<256x64, {_, _, +data}>
  %267 = transpose(%266) {perm = [1, 0]} -> tensor<64x256, {_, _, +data}>
  %268 = dot_general(%265, %params.lm_head) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64, {data, _, _}>
  %269 = mul(%232, %268) -> tensor<?x?x64, {data, _, _}>
  %270 = reduce(%269) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +data}>
  %271 = broadcast_in_dim(%270) {dims = [2]} -> tensor<1x1x64, {_, _, _, +data}>
  %272.r = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %273 = mul(%268, %272.r) -> tensor<?x?x64, {data, _, _}>
  %274 = reduce(%271) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +data}>
  %275 = mul(%216, %273) -> tensor<?x?x64, {data, _, _}>
  %276 = reduce(%275) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %277 = broadcast_in_dim(%276) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _}>
  %278 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %279 = mul(%273, %278) -> tensor<?x?x64, {data, _, _}>
  %280 = mul(%277, %230) -> tensor<?x?x1, {data, _, _}>
  %281 = constant() {value = 64.0} -> tensor<f32>
  %282.r = broadcast_like(%281, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %283 = div(%280, %282.r) -> tensor<?x?x1, {data, _, _}>
  %284 = reduce(%283) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _}>
  %285 = broadcast_in_dim(%284) {dims = [0, 1]} -> tensor<?x?x64, {data, _, _}>
  %286 = mul(%216, %285) -> tensor<?x?x64, {data, _, _}>
  %287 = add(%279, %286) -> tensor<?x?x64, {data, _, _}>
  %288 = mul(%285, %216) -> tensor<?x?x64, {data, _, _}>
  %289 = add(%287, %288) -> tensor<?x?x64, {data, _, _}>
  %290 = dot_general(%289, %214) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172, {_, model, +data}>
  %291 = transpose(%290) {perm = [1, 0]} -> tensor<172x64, {model, _, +data}>
  %292 = dot_general(%289, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172, {data, _, model}>
  %293 = mul(%213, %292) -> tensor<?x?x172, {data, _, model}>
  %294 = mul(%292, %207) -> tensor<?x?x172, {data, _, model}>
  %295 = mul(%206, %294) -> tensor<?x?x172, {data, _, model}>
  %296 = mul(%294, %208) -> tensor<?x?x172, {data, _, model}>
  %297 = mul(%295, %212) -> tensor<?x?x172, {data, _, model}>
  %298 = add(%296, %297) -> tensor<?x?x172, {data, _, model}>
  %299 = dot_general(%293, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64, {model, _, +data}>
  %300 = transpose(%299) {perm = [1, 0]} -> tensor<64x172, {_, model, +data}>
  %301 = dot_general(%293, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64, {data, _, _, +model}>
  %302 = dot_general(%298, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64, {model, _, +data}>
  %303 = transpose(%302) {perm = [1, 0]} -> tensor<64x172, {_, model, +data}>
  %304 = dot_general(%298, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64, {data, _, _, +model}>
  %305 = add(%301, %304) -> tensor<?x?x64, {data, _, _, +model}>
  %306 = mul(%203, %305) -> tensor<?x?x64, {data, _, _, +model}>
  %307 = reduce(%306) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %308 = broadcast_in_dim(%307) {dims = [2]} -> tensor<1x1x64, {_, _, _, +(data, model)}>
  %309.r = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %310 = mul(%305, %309.r) -> tensor<?x?x64, {data, _, _, +model}>
  %311 = reduce(%308) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %312 = mul(%187, %310) -> tensor<?x?x64, {data, _, _, +model}>
  %313 = reduce(%312) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %314 = broadcast_in_dim(%313) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _, +model}>
  %315 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %316 = mul(%310, %315) -> tensor<?x?x64, {data, _, _, +model}>
  %316.r = all_reduce(%316) -> tensor<?x?x64, {data, _, _}>
  %317 = add(%289, %316.r) -> tensor<?x?x64, {data, _, _}>
  %318 = mul(%314, %201) -> tensor<?x?x1, {data, _, _, +model}>
  %319 = constant() {value = 64.0} -> tensor<f32>
  %320.r = broadcast_like(%319, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %321 = div(%318, %320.r) -> tensor<?x?x1, {data, _, _, +model}>
  %322 = reduce(%321) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %323 = broadcast_in_dim(%322) {dims = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %324 = mul(%187, %323) -> tensor<?x?x64, {data, _, _, +model}>
  %324.r = all_reduce(%324) -> tensor<?x?x64, {data, _, _}>
  %325 = add(%317, %324.r) -> tensor<?x?x64, {data, _, _}>
  %326 = mul(%323, %187) -> tensor<?x?x64, {data, _, _, +model}>
  %326.r = all_reduce(%326) -> tensor<?x?x64, {data, _, _}>
  %327 = add(%325, %326.r) -> tensor<?x?x64, {data, _, _}>
  %328 = dot_general(%327, %185) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %329 = transpose(%328) {perm = [1, 2, 0]} -> tensor<4x16x64, {model, _, _, +data}>
  %330 = dot_general(%327, %params.layers.1.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %331 = transpose(%330) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?, {data, model, _, _}>
  %332 = dot_general(%331, %162) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?, {data, model, _, _}>
  %333 = dot_general(%331, %182) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?, {data, model, _, _}>
  %334 = transpose(%333) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %335 = broadcast_like(%183, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %336 = mul(%332, %335) -> tensor<?x4x?x?, {data, model, _, _}>
  %337 = mul(%336, %178) -> tensor<?x4x?x?, {data, model, _, _}>
  %338 = reduce(%337) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %339 = broadcast_in_dim(%338) {dims = [0, 1, 2]} -> tensor<?x4x?x1, {data, model, _, _}>
  %340 = neg(%339) -> tensor<?x4x?x1, {data, model, _, _}>
  %341 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %342 = div(%332, %341) -> tensor<?x4x?x?, {data, model, _, _}>
  %343 = reduce(%340) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %344 = broadcast_like(%343, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %345 = add(%342, %344) -> tensor<?x4x?x?, {data, model, _, _}>
  %346 = mul(%345, %178) -> tensor<?x4x?x?, {data, model, _, _}>
  %347 = constant() {value = 0.0} -> tensor<f32>
  %348.r = broadcast_like(%347, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %349 = select(%171.r, %346, %348.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %350 = constant() {value = 0.25} -> tensor<f32>
  %351.r = broadcast_like(%350, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %352 = mul(%349, %351.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %353 = dot_general(%352, %154) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16, {data, model, _, _}>
  %354 = transpose(%353) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16, {data, _, model, _}>
  %355 = dot_general(%352, %161) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16, {data, model, _, _}>
  %356 = transpose(%355) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16, {data, _, model, _}>
  %357 = dot_general(%334, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %358 = transpose(%357) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %359 = dot_general(%334, %params.layers.1.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %360.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %361 = mul(%354, %360.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %362.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %363 = mul(%354, %362.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %364 = dot_general(%361, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %365 = add(%363, %364) -> tensor<?x?x4x16, {data, _, model, _}>
  %366 = dot_general(%365, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %367 = transpose(%366) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %368 = dot_general(%365, %params.layers.1.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %369 = add(%359, %368) -> tensor<?x?x64, {data, _, _, +model}>
  %370.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %371 = mul(%356, %370.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %372.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %373 = mul(%356, %372.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %374 = dot_general(%371, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %375 = add(%373, %374) -> tensor<?x?x4x16, {data, _, model, _}>
  %376 = dot_general(%375, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %377 = transpose(%376) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %378 = dot_general(%375, %params.layers.1.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %379 = add(%369, %378) -> tensor<?x?x64, {data, _, _, +model}>
  %380 = mul(%145, %379) -> tensor<?x?x64, {data, _, _, +model}>
  %381 = reduce(%380) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %382 = broadcast_in_dim(%381) {dims = [2]} -> tensor<1x1x64, {_, _, _, +(data, model)}>
  %383.r = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %384 = mul(%379, %383.r) -> tensor<?x?x64, {data, _, _, +model}>
  %385 = reduce(%382) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %386 = mul(%129, %384) -> tensor<?x?x64, {data, _, _, +model}>
  %387 = reduce(%386) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %388 = broadcast_in_dim(%387) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _, +model}>
  %389 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %390 = mul(%384, %389) -> tensor<?x?x64, {data, _, _, +model}>
  %390.r = all_reduce(%390) -> tensor<?x?x64, {data, _, _}>
  %391 = add(%327, %390.r) -> tensor<?x?x64, {data, _, _}>
  %392 = mul(%388, %143) -> tensor<?x?x1, {data, _, _, +model}>
  %393 = constant() {value = 64.0} -> tensor<f32>
  %394.r = broadcast_like(%393, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %395 = div(%392, %394.r) -> tensor<?x?x1, {data, _, _, +model}>
  %396 = reduce(%395) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %397 = broadcast_in_dim(%396) {dims = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %398 = mul(%129, %397) -> tensor<?x?x64, {data, _, _, +model}>
  %398.r = all_reduce(%398) -> tensor<?x?x64, {data, _, _}>
  %399 = add(%391, %398.r) -> tensor<?x?x64, {data, _, _}>
  %400 = mul(%397, %129) -> tensor<?x?x64, {data, _, _, +model}>
  %400.r = all_reduce(%400) -> tensor<?x?x64, {data, _, _}>
  %401 = add(%399, %400.r) -> tensor<?x?x64, {data, _, _}>
  %402 = dot_general(%401, %127) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172, {_, model, +data}>
  %403 = transpose(%402) {perm = [1, 0]} -> tensor<172x64, {model, _, +data}>
  %404 = dot_general(%401, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172, {data, _, model}>
  %405 = mul(%126, %404) -> tensor<?x?x172, {data, _, model}>
  %406 = mul(%404, %120) -> tensor<?x?x172, {data, _, model}>
  %407 = mul(%119, %406) -> tensor<?x?x172, {data, _, model}>
  %408 = mul(%406, %121) -> tensor<?x?x172, {data, _, model}>
  %409 = mul(%407, %125) -> tensor<?x?x172, {data, _, model}>
  %410 = add(%408, %409) -> tensor<?x?x172, {data, _, model}>
  %411 = dot_general(%405, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64, {model, _, +data}>
  %412 = transpose(%411) {perm = [1, 0]} -> tensor<64x172, {_, model, +data}>
  %413 = dot_general(%405, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64, {data, _, _, +model}>
  %414 = dot_general(%410, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64, {model, _, +data}>
  %415 = transpose(%414) {perm = [1, 0]} -> tensor<64x172, {_, model, +data}>
  %416 = dot_general(%410, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64, {data, _, _, +model}>
  %417 = add(%413, %416) -> tensor<?x?x64, {data, _, _, +model}>
  %418 = mul(%116, %417) -> tensor<?x?x64, {data, _, _, +model}>
  %419 = reduce(%418) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %420 = broadcast_in_dim(%419) {dims = [2]} -> tensor<1x1x64, {_, _, _, +(data, model)}>
  %421.r = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %422 = mul(%417, %421.r) -> tensor<?x?x64, {data, _, _, +model}>
  %423 = reduce(%420) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %424 = mul(%100, %422) -> tensor<?x?x64, {data, _, _, +model}>
  %425 = reduce(%424) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %426 = broadcast_in_dim(%425) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _, +model}>
  %427 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %428 = mul(%422, %427) -> tensor<?x?x64, {data, _, _, +model}>
  %428.r = all_reduce(%428) -> tensor<?x?x64, {data, _, _}>
  %429 = add(%401, %428.r) -> tensor<?x?x64, {data, _, _}>
  %430 = mul(%426, %114) -> tensor<?x?x1, {data, _, _, +model}>
  %431 = constant() {value = 64.0} -> tensor<f32>
  %432.r = broadcast_like(%431, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %433 = div(%430, %432.r) -> tensor<?x?x1, {data, _, _, +model}>
  %434 = reduce(%433) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %435 = broadcast_in_dim(%434) {dims = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %436 = mul(%100, %435) -> tensor<?x?x64, {data, _, _, +model}>
  %436.r = all_reduce(%436) -> tensor<?x?x64, {data, _, _}>
  %437 = add(%429, %436.r) -> tensor<?x?x64, {data, _, _}>
  %438 = mul(%435, %100) -> tensor<?x?x64, {data, _, _, +model}>
  %438.r = all_reduce(%438) -> tensor<?x?x64, {data, _, _}>
  %439 = add(%437, %438.r) -> tensor<?x?x64, {data, _, _}>
  %440 = dot_general(%439, %98) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %441 = transpose(%440) {perm = [1, 2, 0]} -> tensor<4x16x64, {model, _, _, +data}>
  %442 = dot_general(%439, %params.layers.0.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %443 = transpose(%442) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?, {data, model, _, _}>
  %444 = dot_general(%443, %75) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?, {data, model, _, _}>
  %445 = dot_general(%443, %95) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?, {data, model, _, _}>
  %446 = transpose(%445) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16, {data, _, model, _}>
  %447 = broadcast_like(%96, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %448 = mul(%444, %447) -> tensor<?x4x?x?, {data, model, _, _}>
  %449 = mul(%448, %91) -> tensor<?x4x?x?, {data, model, _, _}>
  %450 = reduce(%449) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %451 = broadcast_in_dim(%450) {dims = [0, 1, 2]} -> tensor<?x4x?x1, {data, model, _, _}>
  %452 = neg(%451) -> tensor<?x4x?x1, {data, model, _, _}>
  %453 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %454 = div(%444, %453) -> tensor<?x4x?x?, {data, model, _, _}>
  %455 = reduce(%452) {dims = [3], kind = "sum"} -> tensor<?x4x?, {data, model, _}>
  %456 = broadcast_like(%455, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %457 = add(%454, %456) -> tensor<?x4x?x?, {data, model, _, _}>
  %458 = mul(%457, %91) -> tensor<?x4x?x?, {data, model, _, _}>
  %459 = constant() {value = 0.0} -> tensor<f32>
  %460.r = broadcast_like(%459, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %461 = select(%84.r, %458, %460.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %462 = constant() {value = 0.25} -> tensor<f32>
  %463.r = broadcast_like(%462, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?, {data, model, _, _}>
  %464 = mul(%461, %463.r) -> tensor<?x4x?x?, {data, model, _, _}>
  %465 = dot_general(%464, %67) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16, {data, model, _, _}>
  %466 = transpose(%465) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16, {data, _, model, _}>
  %467 = dot_general(%464, %74) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16, {data, model, _, _}>
  %468 = transpose(%467) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16, {data, _, model, _}>
  %469 = dot_general(%446, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %470 = transpose(%469) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %471 = dot_general(%446, %params.layers.0.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %472.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %473 = mul(%466, %472.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %474.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %475 = mul(%466, %474.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %476 = dot_general(%473, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %477 = add(%475, %476) -> tensor<?x?x4x16, {data, _, model, _}>
  %478 = dot_general(%477, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %479 = transpose(%478) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %480 = dot_general(%477, %params.layers.0.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %481 = add(%471, %480) -> tensor<?x?x64, {data, _, _, +model}>
  %482.r = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %483 = mul(%468, %482.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %484.r = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %485 = mul(%468, %484.r) -> tensor<?x?x4x16, {data, _, model, _}>
  %486 = dot_general(%483, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16, {data, _, model, _}>
  %487 = add(%485, %486) -> tensor<?x?x4x16, {data, _, model, _}>
  %488 = dot_general(%487, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64, {model, _, _, +data}>
  %489 = transpose(%488) {perm = [2, 0, 1]} -> tensor<64x4x16, {_, model, _, +data}>
  %490 = dot_general(%487, %params.layers.0.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64, {data, _, _, +model}>
  %491 = add(%481, %490) -> tensor<?x?x64, {data, _, _, +model}>
  %492 = mul(%58, %491) -> tensor<?x?x64, {data, _, _, +model}>
  %493 = reduce(%492) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %494 = broadcast_in_dim(%493) {dims = [2]} -> tensor<1x1x64, {_, _, _, +(data, model)}>
  %495.r = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64, {data, _, _}>
  %496 = mul(%491, %495.r) -> tensor<?x?x64, {data, _, _, +model}>
  %497 = reduce(%494) {dims = [0, 1], kind = "sum"} -> tensor<64, {_, +(data, model)}>
  %498 = mul(%7, %496) -> tensor<?x?x64, {data, _, _, +model}>
  %499 = reduce(%498) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %500 = broadcast_in_dim(%499) {dims = [0, 1]} -> tensor<?x?x1, {data, _, _, +model}>
  %501 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x64, {data, _, _}>
  %502 = mul(%496, %501) -> tensor<?x?x64, {data, _, _, +model}>
  %502.r = all_reduce(%502) -> tensor<?x?x64, {data, _, _}>
  %503 = add(%439, %502.r) -> tensor<?x?x64, {data, _, _}>
  %504 = mul(%500, %56) -> tensor<?x?x1, {data, _, _, +model}>
  %505 = constant() {value = 64.0} -> tensor<f32>
  %506.r = broadcast_like(%505, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1, {data, _, _}>
  %507 = div(%504, %506.r) -> tensor<?x?x1, {data, _, _, +model}>
  %508 = reduce(%507) {dims = [2], kind = "sum"} -> tensor<?x?, {data, _, +model}>
  %509 = broadcast_in_dim(%508) {dims = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
  %510 = mul(%7, %509) -> tensor<?x?x64, {data, _, _, +model}>
  %510.r = all_reduce(%510) -> tensor<?x?x64, {data, _, _}>
  %511 = add(%503, %510.r) -> tensor<?x?x64, {data, _, _}>
  %512 = mul(%509, %7) -> tensor<?x?x64, {data, _, _, +model}>
  %512.r = all_reduce(%512) -> tensor<?x?x64, {data, _, _}>
  %513 = add(%511, %512.r) -> tensor<?x?x64, {data, _, _}>
  %514.p = constant() {value = 0.0} -> tensor<256x64, {_, _, +data}>
  %515 = scatter_add(%514.p, %6, %513) -> tensor<256x64, {_, _, +data}>
  %516 = broadcast_in_dim(%lr) {dims = []} -> tensor<256x64>
  %517 = mul(%516, %515) -> tensor<256x64, {_, _, +data}>
  %517.r = all_reduce(%517) -> tensor<256x64>
  %new.embed = sub(%params.embed, %517.r) -> tensor<256x64>
  %518 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %519 = mul(%518, %274) -> tensor<64, {_, +data}>
  %519.r = all_reduce(%519) -> tensor<64>
  %new.final_norm = sub(%params.final_norm, %519.r) -> tensor<64>
  %520 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %521 = mul(%520, %497) -> tensor<64, {_, +(data, model)}>
  %521.r = all_reduce(%521) -> tensor<64>
  %new.layers.0.attn_norm = sub(%params.layers.0.attn_norm, %521.r) -> tensor<64>
  %522 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %523 = mul(%522, %423) -> tensor<64, {_, +(data, model)}>
  %523.r = all_reduce(%523) -> tensor<64>
  %new.layers.0.mlp_norm = sub(%params.layers.0.mlp_norm, %523.r) -> tensor<64>
  %524.r = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64, {model, _}>
  %525 = mul(%524.r, %403) -> tensor<172x64, {model, _, +data}>
  %525.r = all_reduce(%525) -> tensor<172x64, {model, _}>
  %new.layers.0.w_down = sub(%params.layers.0.w_down, %525.r) -> tensor<172x64, {model, _}>
  %526.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172, {_, model}>
  %527 = mul(%526.r, %415) -> tensor<64x172, {_, model, +data}>
  %527.r = all_reduce(%527) -> tensor<64x172, {_, model}>
  %new.layers.0.w_gate = sub(%params.layers.0.w_gate, %527.r) -> tensor<64x172, {_, model}>
  %528.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172, {_, model}>
  %529 = mul(%528.r, %412) -> tensor<64x172, {_, model, +data}>
  %529.r = all_reduce(%529) -> tensor<64x172, {_, model}>
  %new.layers.0.w_up = sub(%params.layers.0.w_up, %529.r) -> tensor<64x172, {_, model}>
  %530.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %531 = mul(%530.r, %479) -> tensor<64x4x16, {_, model, _, +data}>
  %531.r = all_reduce(%531) -> tensor<64x4x16, {_, model, _}>
  %new.layers.0.wk = sub(%params.layers.0.wk, %531.r) -> tensor<64x4x16, {_, model, _}>
  %532.r = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64, {model, _, _}>
  %533 = mul(%532.r, %441) -> tensor<4x16x64, {model, _, _, +data}>
  %533.r = all_reduce(%533) -> tensor<4x16x64, {model, _, _}>
  %new.layers.0.wo = sub(%params.layers.0.wo, %533.r) -> tensor<4x16x64, {model, _, _}>
  %534.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %535 = mul(%534.r, %489) -> tensor<64x4x16, {_, model, _, +data}>
  %535.r = all_reduce(%535) -> tensor<64x4x16, {_, model, _}>
  %new.layers.0.wq = sub(%params.layers.0.wq, %535.r) -> tensor<64x4x16, {_, model, _}>
  %536.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %537 = mul(%536.r, %470) -> tensor<64x4x16, {_, model, _, +data}>
  %537.r = all_reduce(%537) -> tensor<64x4x16, {_, model, _}>
  %new.layers.0.wv = sub(%params.layers.0.wv, %537.r) -> tensor<64x4x16, {_, model, _}>
  %538 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %539 = mul(%538, %385) -> tensor<64, {_, +(data, model)}>
  %539.r = all_reduce(%539) -> tensor<64>
  %new.layers.1.attn_norm = sub(%params.layers.1.attn_norm, %539.r) -> tensor<64>
  %540 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %541 = mul(%540, %311) -> tensor<64, {_, +(data, model)}>
  %541.r = all_reduce(%541) -> tensor<64>
  %new.layers.1.mlp_norm = sub(%params.layers.1.mlp_norm, %541.r) -> tensor<64>
  %542.r = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64, {model, _}>
  %543 = mul(%542.r, %291) -> tensor<172x64, {model, _, +data}>
  %543.r = all_reduce(%543) -> tensor<172x64, {model, _}>
  %new.layers.1.w_down = sub(%params.layers.1.w_down, %543.r) -> tensor<172x64, {model, _}>
  %544.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172, {_, model}>
  %545 = mul(%544.r, %303) -> tensor<64x172, {_, model, +data}>
  %545.r = all_reduce(%545) -> tensor<64x172, {_, model}>
  %new.layers.1.w_gate = sub(%params.layers.1.w_gate, %545.r) -> tensor<64x172, {_, model}>
  %546.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172, {_, model}>
  %547 = mul(%546.r, %300) -> tensor<64x172, {_, model, +data}>
  %547.r = all_reduce(%547) -> tensor<64x172, {_, model}>
  %new.layers.1.w_up = sub(%params.layers.1.w_up, %547.r) -> tensor<64x172, {_, model}>
  %548.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %549 = mul(%548.r, %367) -> tensor<64x4x16, {_, model, _, +data}>
  %549.r = all_reduce(%549) -> tensor<64x4x16, {_, model, _}>
  %new.layers.1.wk = sub(%params.layers.1.wk, %549.r) -> tensor<64x4x16, {_, model, _}>
  %550.r = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64, {model, _, _}>
  %551 = mul(%550.r, %329) -> tensor<4x16x64, {model, _, _, +data}>
  %551.r = all_reduce(%551) -> tensor<4x16x64, {model, _, _}>
  %new.layers.1.wo = sub(%params.layers.1.wo, %551.r) -> tensor<4x16x64, {model, _, _}>
  %552.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %553 = mul(%552.r, %377) -> tensor<64x4x16, {_, model, _, +data}>
  %553.r = all_reduce(%553) -> tensor<64x4x16, {_, model, _}>
  %new.layers.1.wq = sub(%params.layers.1.wq, %553.r) -> tensor<64x4x16, {_, model, _}>
  %554.r = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16, {_, model, _}>
  %555 = mul(%554.r, %358) -> tensor<64x4x16, {_, model, _, +data}>
  %555.r = all_reduce(%555) -> tensor<64x4x16, {_, model, _}>
  %new.layers.1.wv = sub(%params.layers.1.wv, %555.r) -> tensor<64x4x16, {_, model, _}>
  %556 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x256>
  %557 = mul(%556, %267) -> tensor<64x256, {_, _, +data}>
  %557.r = all_reduce(%557) -> tensor<64x256>
  %new.lm_head = sub(%params.lm_head, %557.r) -> tensor<64x256>
  return %loss, %new.embed, %new.final_norm, %new.layers.0.attn_norm, %new.layers.0.mlp_norm, %new.layers.0.w_down, %new.layers.0.w_gate, %new.layers.0.w_up, %new.layers.0.wk, %new.layers.0.wo, %new.layers.0.wq, %new.layers.0.wv, %new.layers.1.attn_norm, %new.layers.1.mlp_norm, %new.layers.1.w_down, %new.layers.1.w_gate, %new.layers.1.w_up, %new.layers.1.wk, %new.layers.1.wo, %new.layers.1.wq, %new.layers.1.wv, %new.lm_head
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}

// CHECK:       mesh {data = 4, model = 2}
// CHECK:       %61 = dot_general(%60, %params.layers.0.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16, {data, _, model, _}>
// CHECK:       %99 = dot_general(%98, %params.layers.0.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64, {data, _, _, +model}>
// CHECK-NEXT:  %99.r = all_reduce(%99) -> tensor<?x?x64, {data, _, _}>
// CHECK:       %128 = dot_general(%127, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64, {data, _, _, +model}>
// CHECK-NEXT:  %128.r = all_reduce(%128) -> tensor<?x?x64, {data, _, _}>
// CHECK:       %loss.p = div(%251, %254) -> tensor<f32, {+data}>
// CHECK-NEXT:  %loss = all_reduce(%loss.p) -> tensor<f32>
// CHECK:       %514.p = constant() {value = 0.0} -> tensor<256x64, {_, _, +data}>
// CHECK-NEXT:  %515 = scatter_add(%514.p, %6, %513) -> tensor<256x64, {_, _, +data}>
// CHECK:       %new.layers.0.wq = sub(%params.layers.0.wq, %535.r) -> tensor<64x4x16, {_, model, _}>
// CHECK-NOT:   reshard
