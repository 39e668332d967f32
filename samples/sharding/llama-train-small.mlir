// samples/llama-train-small.mlir's training step (2 layers, 4 heads, SGD) on a 4x2 mesh
// with only the arguments' shardings written: the batch over data (data parallel), the
// attention heads and the MLP's hidden units over model (Megatron-LM: wq/wk/wv and
// w_gate/w_up by columns, wo and w_down by rows). Every other type is the `propagate`
// pass's to complete (samples/llama-train-small-sharded.mlir is its output); a pipeline
// that starts with it checks the sharding rules on its output, so run it as
//   bladec run samples/sharding/llama-train-small.mlir --dims S0=8,S1=16 \
//       -p propagate,redistribute,analyze,schedule,remat --mem-limit 1MiB
// on 8 devices (on CPU: XLA_FLAGS=--xla_force_host_platform_device_count=8).
mesh {data = 4, model = 2}
func.func @main(%params.embed: tensor<256x64>, %params.final_norm: tensor<64>, %params.layers.0.attn_norm: tensor<64>, %params.layers.0.mlp_norm: tensor<64>, %params.layers.0.w_down: tensor<172x64, {model, _}>, %params.layers.0.w_gate: tensor<64x172, {_, model}>, %params.layers.0.w_up: tensor<64x172, {_, model}>, %params.layers.0.wk: tensor<64x4x16, {_, model, _}>, %params.layers.0.wo: tensor<4x16x64, {model, _, _}>, %params.layers.0.wq: tensor<64x4x16, {_, model, _}>, %params.layers.0.wv: tensor<64x4x16, {_, model, _}>, %params.layers.1.attn_norm: tensor<64>, %params.layers.1.mlp_norm: tensor<64>, %params.layers.1.w_down: tensor<172x64, {model, _}>, %params.layers.1.w_gate: tensor<64x172, {_, model}>, %params.layers.1.w_up: tensor<64x172, {_, model}>, %params.layers.1.wk: tensor<64x4x16, {_, model, _}>, %params.layers.1.wo: tensor<4x16x64, {model, _, _}>, %params.layers.1.wq: tensor<64x4x16, {_, model, _}>, %params.layers.1.wv: tensor<64x4x16, {_, model, _}>, %params.lm_head: tensor<64x256>, %tokens: tensor<?x?xi32, [@S0, @S1], {data, _}>, %targets: tensor<?x?xi32, [@S0, @S1], {data, _}>, %mask: tensor<?x?, [@S0, @S1], {data, _}>, %lr: tensor<f32>) {
  %0 = constant() {value = 0} -> tensor<i32>
  %1 = broadcast_like(%0, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32>
  %2 = compare(%tokens, %1) {direction = "LT"} -> tensor<?x?xi1>
  %3 = constant() {value = 256} -> tensor<i32>
  %4 = broadcast_like(%3, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32>
  %5 = add(%tokens, %4) -> tensor<?x?xi32>
  %6 = select(%2, %5, %tokens) -> tensor<?x?xi32>
  %7 = gather(%params.embed, %6) -> tensor<?x?x64>
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
  %43 = mul(%7, %7) -> tensor<?x?x64>
  %44 = reduce(%43) {dims = [2], kind = "sum"} -> tensor<?x?>
  %45 = broadcast_in_dim(%44) {dims = [0, 1]} -> tensor<?x?x1>
  %46 = constant() {value = 64.0} -> tensor<f32>
  %47 = broadcast_like(%46, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %48 = div(%45, %47) -> tensor<?x?x1>
  %49 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %50 = broadcast_like(%49, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %51 = add(%48, %50) -> tensor<?x?x1>
  %52 = rsqrt(%51) -> tensor<?x?x1>
  %53 = div(%52, %51) -> tensor<?x?x1>
  %54 = constant() {value = -0.5} -> tensor<f32>
  %55 = broadcast_like(%54, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %56 = mul(%55, %53) -> tensor<?x?x1>
  %57 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %58 = mul(%7, %57) -> tensor<?x?x64>
  %59 = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %60 = mul(%58, %59) -> tensor<?x?x64>
  %61 = dot_general(%60, %params.layers.0.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %62 = dot_general(%61, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %63 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %64 = mul(%61, %63) -> tensor<?x?x4x16>
  %65 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %66 = mul(%62, %65) -> tensor<?x?x4x16>
  %67 = add(%64, %66) -> tensor<?x?x4x16>
  %68 = dot_general(%60, %params.layers.0.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %69 = dot_general(%68, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %70 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %71 = mul(%68, %70) -> tensor<?x?x4x16>
  %72 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %73 = mul(%69, %72) -> tensor<?x?x4x16>
  %74 = add(%71, %73) -> tensor<?x?x4x16>
  %75 = dot_general(%60, %params.layers.0.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %76 = dot_general(%67, %74) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %77 = constant() {value = 0.25} -> tensor<f32>
  %78 = broadcast_like(%77, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %79 = mul(%76, %78) -> tensor<?x4x?x?>
  %80 = iota() {dim = 0} -> tensor<?x?xi32>
  %81 = iota() {dim = 1} -> tensor<?x?xi32>
  %82 = compare(%80, %81) {direction = "GE"} -> tensor<?x?xi1>
  %83 = broadcast_in_dim(%82) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %84 = broadcast_like(%83, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1>
  %85 = constant() {value = -1000000000.0} -> tensor<f32>
  %86 = broadcast_like(%85, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %87 = select(%84, %79, %86) -> tensor<?x4x?x?>
  %88 = reduce(%87) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %89 = broadcast_like(%88, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %90 = sub(%87, %89) -> tensor<?x4x?x?>
  %91 = exp(%90) -> tensor<?x4x?x?>
  %92 = reduce(%91) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %93 = broadcast_in_dim(%92) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %94 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %95 = div(%91, %94) -> tensor<?x4x?x?>
  %96 = integer_pow(%93) {exponent = -2} -> tensor<?x4x?x1>
  %97 = dot_general(%75, %95) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %98 = transpose(%97) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %99 = dot_general(%98, %params.layers.0.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %100 = add(%7, %99) -> tensor<?x?x64>
  %101 = mul(%100, %100) -> tensor<?x?x64>
  %102 = reduce(%101) {dims = [2], kind = "sum"} -> tensor<?x?>
  %103 = broadcast_in_dim(%102) {dims = [0, 1]} -> tensor<?x?x1>
  %104 = constant() {value = 64.0} -> tensor<f32>
  %105 = broadcast_like(%104, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %106 = div(%103, %105) -> tensor<?x?x1>
  %107 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %108 = broadcast_like(%107, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %109 = add(%106, %108) -> tensor<?x?x1>
  %110 = rsqrt(%109) -> tensor<?x?x1>
  %111 = div(%110, %109) -> tensor<?x?x1>
  %112 = constant() {value = -0.5} -> tensor<f32>
  %113 = broadcast_like(%112, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %114 = mul(%113, %111) -> tensor<?x?x1>
  %115 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %116 = mul(%100, %115) -> tensor<?x?x64>
  %117 = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %118 = mul(%116, %117) -> tensor<?x?x64>
  %119 = dot_general(%118, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %120 = dot_general(%118, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %121 = logistic(%119) -> tensor<?x?x172>
  %122 = constant() {value = 1.0} -> tensor<f32>
  %123 = broadcast_like(%122, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x172>
  %124 = sub(%123, %121) -> tensor<?x?x172>
  %125 = mul(%121, %124) -> tensor<?x?x172>
  %126 = mul(%119, %121) -> tensor<?x?x172>
  %127 = mul(%126, %120) -> tensor<?x?x172>
  %128 = dot_general(%127, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %129 = add(%100, %128) -> tensor<?x?x64>
  %130 = mul(%129, %129) -> tensor<?x?x64>
  %131 = reduce(%130) {dims = [2], kind = "sum"} -> tensor<?x?>
  %132 = broadcast_in_dim(%131) {dims = [0, 1]} -> tensor<?x?x1>
  %133 = constant() {value = 64.0} -> tensor<f32>
  %134 = broadcast_like(%133, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %135 = div(%132, %134) -> tensor<?x?x1>
  %136 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %137 = broadcast_like(%136, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %138 = add(%135, %137) -> tensor<?x?x1>
  %139 = rsqrt(%138) -> tensor<?x?x1>
  %140 = div(%139, %138) -> tensor<?x?x1>
  %141 = constant() {value = -0.5} -> tensor<f32>
  %142 = broadcast_like(%141, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %143 = mul(%142, %140) -> tensor<?x?x1>
  %144 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %145 = mul(%129, %144) -> tensor<?x?x64>
  %146 = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %147 = mul(%145, %146) -> tensor<?x?x64>
  %148 = dot_general(%147, %params.layers.1.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %149 = dot_general(%148, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %150 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %151 = mul(%148, %150) -> tensor<?x?x4x16>
  %152 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %153 = mul(%149, %152) -> tensor<?x?x4x16>
  %154 = add(%151, %153) -> tensor<?x?x4x16>
  %155 = dot_general(%147, %params.layers.1.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %156 = dot_general(%155, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %157 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %158 = mul(%155, %157) -> tensor<?x?x4x16>
  %159 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %160 = mul(%156, %159) -> tensor<?x?x4x16>
  %161 = add(%158, %160) -> tensor<?x?x4x16>
  %162 = dot_general(%147, %params.layers.1.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %163 = dot_general(%154, %161) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %164 = constant() {value = 0.25} -> tensor<f32>
  %165 = broadcast_like(%164, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %166 = mul(%163, %165) -> tensor<?x4x?x?>
  %167 = iota() {dim = 0} -> tensor<?x?xi32>
  %168 = iota() {dim = 1} -> tensor<?x?xi32>
  %169 = compare(%167, %168) {direction = "GE"} -> tensor<?x?xi1>
  %170 = broadcast_in_dim(%169) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %171 = broadcast_like(%170, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1>
  %172 = constant() {value = -1000000000.0} -> tensor<f32>
  %173 = broadcast_like(%172, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %174 = select(%171, %166, %173) -> tensor<?x4x?x?>
  %175 = reduce(%174) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %176 = broadcast_like(%175, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %177 = sub(%174, %176) -> tensor<?x4x?x?>
  %178 = exp(%177) -> tensor<?x4x?x?>
  %179 = reduce(%178) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %180 = broadcast_in_dim(%179) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %181 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %182 = div(%178, %181) -> tensor<?x4x?x?>
  %183 = integer_pow(%180) {exponent = -2} -> tensor<?x4x?x1>
  %184 = dot_general(%162, %182) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %185 = transpose(%184) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %186 = dot_general(%185, %params.layers.1.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %187 = add(%129, %186) -> tensor<?x?x64>
  %188 = mul(%187, %187) -> tensor<?x?x64>
  %189 = reduce(%188) {dims = [2], kind = "sum"} -> tensor<?x?>
  %190 = broadcast_in_dim(%189) {dims = [0, 1]} -> tensor<?x?x1>
  %191 = constant() {value = 64.0} -> tensor<f32>
  %192 = broadcast_like(%191, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %193 = div(%190, %192) -> tensor<?x?x1>
  %194 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %195 = broadcast_like(%194, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %196 = add(%193, %195) -> tensor<?x?x1>
  %197 = rsqrt(%196) -> tensor<?x?x1>
  %198 = div(%197, %196) -> tensor<?x?x1>
  %199 = constant() {value = -0.5} -> tensor<f32>
  %200 = broadcast_like(%199, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %201 = mul(%200, %198) -> tensor<?x?x1>
  %202 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %203 = mul(%187, %202) -> tensor<?x?x64>
  %204 = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %205 = mul(%203, %204) -> tensor<?x?x64>
  %206 = dot_general(%205, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %207 = dot_general(%205, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %208 = logistic(%206) -> tensor<?x?x172>
  %209 = constant() {value = 1.0} -> tensor<f32>
  %210 = broadcast_like(%209, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x172>
  %211 = sub(%210, %208) -> tensor<?x?x172>
  %212 = mul(%208, %211) -> tensor<?x?x172>
  %213 = mul(%206, %208) -> tensor<?x?x172>
  %214 = mul(%213, %207) -> tensor<?x?x172>
  %215 = dot_general(%214, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %216 = add(%187, %215) -> tensor<?x?x64>
  %217 = mul(%216, %216) -> tensor<?x?x64>
  %218 = reduce(%217) {dims = [2], kind = "sum"} -> tensor<?x?>
  %219 = broadcast_in_dim(%218) {dims = [0, 1]} -> tensor<?x?x1>
  %220 = constant() {value = 64.0} -> tensor<f32>
  %221 = broadcast_like(%220, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %222 = div(%219, %221) -> tensor<?x?x1>
  %223 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %224 = broadcast_like(%223, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %225 = add(%222, %224) -> tensor<?x?x1>
  %226 = rsqrt(%225) -> tensor<?x?x1>
  %227 = div(%226, %225) -> tensor<?x?x1>
  %228 = constant() {value = -0.5} -> tensor<f32>
  %229 = broadcast_like(%228, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %230 = mul(%229, %227) -> tensor<?x?x1>
  %231 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %232 = mul(%216, %231) -> tensor<?x?x64>
  %233 = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %234 = mul(%232, %233) -> tensor<?x?x64>
  %235 = dot_general(%234, %params.lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256>
  %236 = reduce(%235) {dims = [2], kind = "max"} -> tensor<?x?>
  %237 = broadcast_in_dim(%236) {dims = [0, 1]} -> tensor<?x?x256>
  %238 = sub(%235, %237) -> tensor<?x?x256>
  %239 = exp(%238) -> tensor<?x?x256>
  %240 = reduce(%239) {dims = [2], kind = "sum"} -> tensor<?x?>
  %241 = log(%240) -> tensor<?x?>
  %242 = add(%241, %236) -> tensor<?x?>
  %243 = iota() {dim = 2} -> tensor<?x?x256xi32>
  %244 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32>
  %245 = compare(%243, %244) {direction = "EQ"} -> tensor<?x?x256xi1>
  %246 = convert(%245) {dtype = "f32"} -> tensor<?x?x256>
  %247 = mul(%235, %246) -> tensor<?x?x256>
  %248 = reduce(%247) {dims = [2], kind = "sum"} -> tensor<?x?>
  %249 = sub(%242, %248) -> tensor<?x?>
  %250 = mul(%249, %mask) -> tensor<?x?>
  %251 = reduce(%250) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %252 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %253 = constant() {value = 1.0} -> tensor<f32>
  %254 = max(%252, %253) -> tensor<f32>
  %loss = div(%251, %254) -> tensor<f32>
  %255 = constant() {value = 1.0} -> tensor<f32>
  %256 = div(%255, %254) -> tensor<f32>
  %257 = broadcast_like(%256, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?>
  %258 = mul(%257, %mask) -> tensor<?x?>
  %259 = neg(%258) -> tensor<?x?>
  %260 = broadcast_in_dim(%259) {dims = [0, 1]} -> tensor<?x?x256>
  %261 = mul(%260, %246) -> tensor<?x?x256>
  %262 = div(%258, %240) -> tensor<?x?>
  %263 = broadcast_in_dim(%262) {dims = [0, 1]} -> tensor<?x?x256>
  %264 = mul(%263, %239) -> tensor<?x?x256>
  %265 = add(%261, %264) -> tensor<?x?x256>
  %266 = dot_general(%265, %234) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<256x64>
  %267 = transpose(%266) {perm = [1, 0]} -> tensor<64x256>
  %268 = dot_general(%265, %params.lm_head) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %269 = mul(%232, %268) -> tensor<?x?x64>
  %270 = reduce(%269) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %271 = broadcast_in_dim(%270) {dims = [2]} -> tensor<1x1x64>
  %272 = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %273 = mul(%268, %272) -> tensor<?x?x64>
  %274 = reduce(%271) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %275 = mul(%216, %273) -> tensor<?x?x64>
  %276 = reduce(%275) {dims = [2], kind = "sum"} -> tensor<?x?>
  %277 = broadcast_in_dim(%276) {dims = [0, 1]} -> tensor<?x?x1>
  %278 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %279 = mul(%273, %278) -> tensor<?x?x64>
  %280 = mul(%277, %230) -> tensor<?x?x1>
  %281 = constant() {value = 64.0} -> tensor<f32>
  %282 = broadcast_like(%281, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %283 = div(%280, %282) -> tensor<?x?x1>
  %284 = reduce(%283) {dims = [2], kind = "sum"} -> tensor<?x?>
  %285 = broadcast_in_dim(%284) {dims = [0, 1]} -> tensor<?x?x64>
  %286 = mul(%216, %285) -> tensor<?x?x64>
  %287 = add(%279, %286) -> tensor<?x?x64>
  %288 = mul(%285, %216) -> tensor<?x?x64>
  %289 = add(%287, %288) -> tensor<?x?x64>
  %290 = dot_general(%289, %214) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172>
  %291 = transpose(%290) {perm = [1, 0]} -> tensor<172x64>
  %292 = dot_general(%289, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172>
  %293 = mul(%213, %292) -> tensor<?x?x172>
  %294 = mul(%292, %207) -> tensor<?x?x172>
  %295 = mul(%206, %294) -> tensor<?x?x172>
  %296 = mul(%294, %208) -> tensor<?x?x172>
  %297 = mul(%295, %212) -> tensor<?x?x172>
  %298 = add(%296, %297) -> tensor<?x?x172>
  %299 = dot_general(%293, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %300 = transpose(%299) {perm = [1, 0]} -> tensor<64x172>
  %301 = dot_general(%293, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %302 = dot_general(%298, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %303 = transpose(%302) {perm = [1, 0]} -> tensor<64x172>
  %304 = dot_general(%298, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %305 = add(%301, %304) -> tensor<?x?x64>
  %306 = mul(%203, %305) -> tensor<?x?x64>
  %307 = reduce(%306) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %308 = broadcast_in_dim(%307) {dims = [2]} -> tensor<1x1x64>
  %309 = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %310 = mul(%305, %309) -> tensor<?x?x64>
  %311 = reduce(%308) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %312 = mul(%187, %310) -> tensor<?x?x64>
  %313 = reduce(%312) {dims = [2], kind = "sum"} -> tensor<?x?>
  %314 = broadcast_in_dim(%313) {dims = [0, 1]} -> tensor<?x?x1>
  %315 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %316 = mul(%310, %315) -> tensor<?x?x64>
  %317 = add(%289, %316) -> tensor<?x?x64>
  %318 = mul(%314, %201) -> tensor<?x?x1>
  %319 = constant() {value = 64.0} -> tensor<f32>
  %320 = broadcast_like(%319, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %321 = div(%318, %320) -> tensor<?x?x1>
  %322 = reduce(%321) {dims = [2], kind = "sum"} -> tensor<?x?>
  %323 = broadcast_in_dim(%322) {dims = [0, 1]} -> tensor<?x?x64>
  %324 = mul(%187, %323) -> tensor<?x?x64>
  %325 = add(%317, %324) -> tensor<?x?x64>
  %326 = mul(%323, %187) -> tensor<?x?x64>
  %327 = add(%325, %326) -> tensor<?x?x64>
  %328 = dot_general(%327, %185) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16>
  %329 = transpose(%328) {perm = [1, 2, 0]} -> tensor<4x16x64>
  %330 = dot_general(%327, %params.layers.1.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16>
  %331 = transpose(%330) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?>
  %332 = dot_general(%331, %162) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?>
  %333 = dot_general(%331, %182) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?>
  %334 = transpose(%333) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %335 = broadcast_like(%183, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %336 = mul(%332, %335) -> tensor<?x4x?x?>
  %337 = mul(%336, %178) -> tensor<?x4x?x?>
  %338 = reduce(%337) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %339 = broadcast_in_dim(%338) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %340 = neg(%339) -> tensor<?x4x?x1>
  %341 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %342 = div(%332, %341) -> tensor<?x4x?x?>
  %343 = reduce(%340) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %344 = broadcast_like(%343, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %345 = add(%342, %344) -> tensor<?x4x?x?>
  %346 = mul(%345, %178) -> tensor<?x4x?x?>
  %347 = constant() {value = 0.0} -> tensor<f32>
  %348 = broadcast_like(%347, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %349 = select(%171, %346, %348) -> tensor<?x4x?x?>
  %350 = constant() {value = 0.25} -> tensor<f32>
  %351 = broadcast_like(%350, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %352 = mul(%349, %351) -> tensor<?x4x?x?>
  %353 = dot_general(%352, %154) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16>
  %354 = transpose(%353) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %355 = dot_general(%352, %161) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16>
  %356 = transpose(%355) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %357 = dot_general(%334, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %358 = transpose(%357) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %359 = dot_general(%334, %params.layers.1.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %360 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %361 = mul(%354, %360) -> tensor<?x?x4x16>
  %362 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %363 = mul(%354, %362) -> tensor<?x?x4x16>
  %364 = dot_general(%361, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %365 = add(%363, %364) -> tensor<?x?x4x16>
  %366 = dot_general(%365, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %367 = transpose(%366) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %368 = dot_general(%365, %params.layers.1.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %369 = add(%359, %368) -> tensor<?x?x64>
  %370 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %371 = mul(%356, %370) -> tensor<?x?x4x16>
  %372 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %373 = mul(%356, %372) -> tensor<?x?x4x16>
  %374 = dot_general(%371, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %375 = add(%373, %374) -> tensor<?x?x4x16>
  %376 = dot_general(%375, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %377 = transpose(%376) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %378 = dot_general(%375, %params.layers.1.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %379 = add(%369, %378) -> tensor<?x?x64>
  %380 = mul(%145, %379) -> tensor<?x?x64>
  %381 = reduce(%380) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %382 = broadcast_in_dim(%381) {dims = [2]} -> tensor<1x1x64>
  %383 = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %384 = mul(%379, %383) -> tensor<?x?x64>
  %385 = reduce(%382) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %386 = mul(%129, %384) -> tensor<?x?x64>
  %387 = reduce(%386) {dims = [2], kind = "sum"} -> tensor<?x?>
  %388 = broadcast_in_dim(%387) {dims = [0, 1]} -> tensor<?x?x1>
  %389 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %390 = mul(%384, %389) -> tensor<?x?x64>
  %391 = add(%327, %390) -> tensor<?x?x64>
  %392 = mul(%388, %143) -> tensor<?x?x1>
  %393 = constant() {value = 64.0} -> tensor<f32>
  %394 = broadcast_like(%393, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %395 = div(%392, %394) -> tensor<?x?x1>
  %396 = reduce(%395) {dims = [2], kind = "sum"} -> tensor<?x?>
  %397 = broadcast_in_dim(%396) {dims = [0, 1]} -> tensor<?x?x64>
  %398 = mul(%129, %397) -> tensor<?x?x64>
  %399 = add(%391, %398) -> tensor<?x?x64>
  %400 = mul(%397, %129) -> tensor<?x?x64>
  %401 = add(%399, %400) -> tensor<?x?x64>
  %402 = dot_general(%401, %127) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172>
  %403 = transpose(%402) {perm = [1, 0]} -> tensor<172x64>
  %404 = dot_general(%401, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172>
  %405 = mul(%126, %404) -> tensor<?x?x172>
  %406 = mul(%404, %120) -> tensor<?x?x172>
  %407 = mul(%119, %406) -> tensor<?x?x172>
  %408 = mul(%406, %121) -> tensor<?x?x172>
  %409 = mul(%407, %125) -> tensor<?x?x172>
  %410 = add(%408, %409) -> tensor<?x?x172>
  %411 = dot_general(%405, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %412 = transpose(%411) {perm = [1, 0]} -> tensor<64x172>
  %413 = dot_general(%405, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %414 = dot_general(%410, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %415 = transpose(%414) {perm = [1, 0]} -> tensor<64x172>
  %416 = dot_general(%410, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %417 = add(%413, %416) -> tensor<?x?x64>
  %418 = mul(%116, %417) -> tensor<?x?x64>
  %419 = reduce(%418) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %420 = broadcast_in_dim(%419) {dims = [2]} -> tensor<1x1x64>
  %421 = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %422 = mul(%417, %421) -> tensor<?x?x64>
  %423 = reduce(%420) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %424 = mul(%100, %422) -> tensor<?x?x64>
  %425 = reduce(%424) {dims = [2], kind = "sum"} -> tensor<?x?>
  %426 = broadcast_in_dim(%425) {dims = [0, 1]} -> tensor<?x?x1>
  %427 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %428 = mul(%422, %427) -> tensor<?x?x64>
  %429 = add(%401, %428) -> tensor<?x?x64>
  %430 = mul(%426, %114) -> tensor<?x?x1>
  %431 = constant() {value = 64.0} -> tensor<f32>
  %432 = broadcast_like(%431, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %433 = div(%430, %432) -> tensor<?x?x1>
  %434 = reduce(%433) {dims = [2], kind = "sum"} -> tensor<?x?>
  %435 = broadcast_in_dim(%434) {dims = [0, 1]} -> tensor<?x?x64>
  %436 = mul(%100, %435) -> tensor<?x?x64>
  %437 = add(%429, %436) -> tensor<?x?x64>
  %438 = mul(%435, %100) -> tensor<?x?x64>
  %439 = add(%437, %438) -> tensor<?x?x64>
  %440 = dot_general(%439, %98) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16>
  %441 = transpose(%440) {perm = [1, 2, 0]} -> tensor<4x16x64>
  %442 = dot_general(%439, %params.layers.0.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16>
  %443 = transpose(%442) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?>
  %444 = dot_general(%443, %75) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?>
  %445 = dot_general(%443, %95) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?>
  %446 = transpose(%445) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %447 = broadcast_like(%96, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %448 = mul(%444, %447) -> tensor<?x4x?x?>
  %449 = mul(%448, %91) -> tensor<?x4x?x?>
  %450 = reduce(%449) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %451 = broadcast_in_dim(%450) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %452 = neg(%451) -> tensor<?x4x?x1>
  %453 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %454 = div(%444, %453) -> tensor<?x4x?x?>
  %455 = reduce(%452) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %456 = broadcast_like(%455, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %457 = add(%454, %456) -> tensor<?x4x?x?>
  %458 = mul(%457, %91) -> tensor<?x4x?x?>
  %459 = constant() {value = 0.0} -> tensor<f32>
  %460 = broadcast_like(%459, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %461 = select(%84, %458, %460) -> tensor<?x4x?x?>
  %462 = constant() {value = 0.25} -> tensor<f32>
  %463 = broadcast_like(%462, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %464 = mul(%461, %463) -> tensor<?x4x?x?>
  %465 = dot_general(%464, %67) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16>
  %466 = transpose(%465) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %467 = dot_general(%464, %74) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16>
  %468 = transpose(%467) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %469 = dot_general(%446, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %470 = transpose(%469) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %471 = dot_general(%446, %params.layers.0.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %472 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %473 = mul(%466, %472) -> tensor<?x?x4x16>
  %474 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %475 = mul(%466, %474) -> tensor<?x?x4x16>
  %476 = dot_general(%473, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %477 = add(%475, %476) -> tensor<?x?x4x16>
  %478 = dot_general(%477, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %479 = transpose(%478) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %480 = dot_general(%477, %params.layers.0.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %481 = add(%471, %480) -> tensor<?x?x64>
  %482 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %483 = mul(%468, %482) -> tensor<?x?x4x16>
  %484 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %485 = mul(%468, %484) -> tensor<?x?x4x16>
  %486 = dot_general(%483, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %487 = add(%485, %486) -> tensor<?x?x4x16>
  %488 = dot_general(%487, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %489 = transpose(%488) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %490 = dot_general(%487, %params.layers.0.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %491 = add(%481, %490) -> tensor<?x?x64>
  %492 = mul(%58, %491) -> tensor<?x?x64>
  %493 = reduce(%492) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %494 = broadcast_in_dim(%493) {dims = [2]} -> tensor<1x1x64>
  %495 = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %496 = mul(%491, %495) -> tensor<?x?x64>
  %497 = reduce(%494) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %498 = mul(%7, %496) -> tensor<?x?x64>
  %499 = reduce(%498) {dims = [2], kind = "sum"} -> tensor<?x?>
  %500 = broadcast_in_dim(%499) {dims = [0, 1]} -> tensor<?x?x1>
  %501 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %502 = mul(%496, %501) -> tensor<?x?x64>
  %503 = add(%439, %502) -> tensor<?x?x64>
  %504 = mul(%500, %56) -> tensor<?x?x1>
  %505 = constant() {value = 64.0} -> tensor<f32>
  %506 = broadcast_like(%505, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %507 = div(%504, %506) -> tensor<?x?x1>
  %508 = reduce(%507) {dims = [2], kind = "sum"} -> tensor<?x?>
  %509 = broadcast_in_dim(%508) {dims = [0, 1]} -> tensor<?x?x64>
  %510 = mul(%7, %509) -> tensor<?x?x64>
  %511 = add(%503, %510) -> tensor<?x?x64>
  %512 = mul(%509, %7) -> tensor<?x?x64>
  %513 = add(%511, %512) -> tensor<?x?x64>
  %514 = constant() {value = 0.0} -> tensor<256x64>
  %515 = scatter_add(%514, %6, %513) -> tensor<256x64>
  %516 = broadcast_in_dim(%lr) {dims = []} -> tensor<256x64>
  %517 = mul(%516, %515) -> tensor<256x64>
  %new.embed = sub(%params.embed, %517) -> tensor<256x64>
  %518 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %519 = mul(%518, %274) -> tensor<64>
  %new.final_norm = sub(%params.final_norm, %519) -> tensor<64>
  %520 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %521 = mul(%520, %497) -> tensor<64>
  %new.layers.0.attn_norm = sub(%params.layers.0.attn_norm, %521) -> tensor<64>
  %522 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %523 = mul(%522, %423) -> tensor<64>
  %new.layers.0.mlp_norm = sub(%params.layers.0.mlp_norm, %523) -> tensor<64>
  %524 = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64>
  %525 = mul(%524, %403) -> tensor<172x64>
  %new.layers.0.w_down = sub(%params.layers.0.w_down, %525) -> tensor<172x64>
  %526 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %527 = mul(%526, %415) -> tensor<64x172>
  %new.layers.0.w_gate = sub(%params.layers.0.w_gate, %527) -> tensor<64x172>
  %528 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %529 = mul(%528, %412) -> tensor<64x172>
  %new.layers.0.w_up = sub(%params.layers.0.w_up, %529) -> tensor<64x172>
  %530 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %531 = mul(%530, %479) -> tensor<64x4x16>
  %new.layers.0.wk = sub(%params.layers.0.wk, %531) -> tensor<64x4x16>
  %532 = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64>
  %533 = mul(%532, %441) -> tensor<4x16x64>
  %new.layers.0.wo = sub(%params.layers.0.wo, %533) -> tensor<4x16x64>
  %534 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %535 = mul(%534, %489) -> tensor<64x4x16>
  %new.layers.0.wq = sub(%params.layers.0.wq, %535) -> tensor<64x4x16>
  %536 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %537 = mul(%536, %470) -> tensor<64x4x16>
  %new.layers.0.wv = sub(%params.layers.0.wv, %537) -> tensor<64x4x16>
  %538 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %539 = mul(%538, %385) -> tensor<64>
  %new.layers.1.attn_norm = sub(%params.layers.1.attn_norm, %539) -> tensor<64>
  %540 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %541 = mul(%540, %311) -> tensor<64>
  %new.layers.1.mlp_norm = sub(%params.layers.1.mlp_norm, %541) -> tensor<64>
  %542 = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64>
  %543 = mul(%542, %291) -> tensor<172x64>
  %new.layers.1.w_down = sub(%params.layers.1.w_down, %543) -> tensor<172x64>
  %544 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %545 = mul(%544, %303) -> tensor<64x172>
  %new.layers.1.w_gate = sub(%params.layers.1.w_gate, %545) -> tensor<64x172>
  %546 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %547 = mul(%546, %300) -> tensor<64x172>
  %new.layers.1.w_up = sub(%params.layers.1.w_up, %547) -> tensor<64x172>
  %548 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %549 = mul(%548, %367) -> tensor<64x4x16>
  %new.layers.1.wk = sub(%params.layers.1.wk, %549) -> tensor<64x4x16>
  %550 = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64>
  %551 = mul(%550, %329) -> tensor<4x16x64>
  %new.layers.1.wo = sub(%params.layers.1.wo, %551) -> tensor<4x16x64>
  %552 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %553 = mul(%552, %377) -> tensor<64x4x16>
  %new.layers.1.wq = sub(%params.layers.1.wq, %553) -> tensor<64x4x16>
  %554 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %555 = mul(%554, %358) -> tensor<64x4x16>
  %new.layers.1.wv = sub(%params.layers.1.wv, %555) -> tensor<64x4x16>
  %556 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x256>
  %557 = mul(%556, %267) -> tensor<64x256>
  %new.lm_head = sub(%params.lm_head, %557) -> tensor<64x256>
  return %loss, %new.embed, %new.final_norm, %new.layers.0.attn_norm, %new.layers.0.mlp_norm, %new.layers.0.w_down, %new.layers.0.w_gate, %new.layers.0.w_up, %new.layers.0.wk, %new.layers.0.wo, %new.layers.0.wq, %new.layers.0.wv, %new.layers.1.attn_norm, %new.layers.1.mlp_norm, %new.layers.1.w_down, %new.layers.1.w_gate, %new.layers.1.w_up, %new.layers.1.wk, %new.layers.1.wo, %new.layers.1.wq, %new.layers.1.wv, %new.lm_head
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}
