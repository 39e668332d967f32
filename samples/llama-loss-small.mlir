func.func @main(%params.embed: tensor<256x64>, %params.final_norm: tensor<64>, %params.layers.0.attn_norm: tensor<64>, %params.layers.0.mlp_norm: tensor<64>, %params.layers.0.w_down: tensor<172x64>, %params.layers.0.w_gate: tensor<64x172>, %params.layers.0.w_up: tensor<64x172>, %params.layers.0.wk: tensor<64x4x16>, %params.layers.0.wo: tensor<4x16x64>, %params.layers.0.wq: tensor<64x4x16>, %params.layers.0.wv: tensor<64x4x16>, %params.layers.1.attn_norm: tensor<64>, %params.layers.1.mlp_norm: tensor<64>, %params.layers.1.w_down: tensor<172x64>, %params.layers.1.w_gate: tensor<64x172>, %params.layers.1.w_up: tensor<64x172>, %params.layers.1.wk: tensor<64x4x16>, %params.layers.1.wo: tensor<4x16x64>, %params.layers.1.wq: tensor<64x4x16>, %params.layers.1.wv: tensor<64x4x16>, %params.lm_head: tensor<64x256>, %tokens: tensor<?x?xi32, [@S0, @S1]>, %targets: tensor<?x?xi32, [@S0, @S1]>, %mask: tensor<?x?, [@S0, @S1]>) {
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
  %53 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %54 = mul(%7, %53) -> tensor<?x?x64>
  %55 = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %56 = mul(%54, %55) -> tensor<?x?x64>
  %57 = dot_general(%56, %params.layers.0.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %58 = dot_general(%57, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %59 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %60 = mul(%57, %59) -> tensor<?x?x4x16>
  %61 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %62 = mul(%58, %61) -> tensor<?x?x4x16>
  %63 = add(%60, %62) -> tensor<?x?x4x16>
  %64 = dot_general(%56, %params.layers.0.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %65 = dot_general(%64, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %66 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %67 = mul(%64, %66) -> tensor<?x?x4x16>
  %68 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %69 = mul(%65, %68) -> tensor<?x?x4x16>
  %70 = add(%67, %69) -> tensor<?x?x4x16>
  %71 = dot_general(%56, %params.layers.0.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %72 = dot_general(%63, %70) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %73 = constant() {value = 0.25} -> tensor<f32>
  %74 = broadcast_like(%73, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %75 = mul(%72, %74) -> tensor<?x4x?x?>
  %76 = iota() {dim = 0} -> tensor<?x?xi32>
  %77 = iota() {dim = 1} -> tensor<?x?xi32>
  %78 = compare(%76, %77) {direction = "GE"} -> tensor<?x?xi1>
  %79 = broadcast_in_dim(%78) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %80 = broadcast_like(%79, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1>
  %81 = constant() {value = -1000000000.0} -> tensor<f32>
  %82 = broadcast_like(%81, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %83 = select(%80, %75, %82) -> tensor<?x4x?x?>
  %84 = reduce(%83) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %85 = broadcast_in_dim(%84) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %86 = stop_gradient(%85) -> tensor<?x4x?x1>
  %87 = broadcast_like(%86, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %88 = sub(%83, %87) -> tensor<?x4x?x?>
  %89 = exp(%88) -> tensor<?x4x?x?>
  %90 = reduce(%89) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %91 = broadcast_like(%90, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %92 = div(%89, %91) -> tensor<?x4x?x?>
  %93 = dot_general(%71, %92) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %94 = transpose(%93) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %95 = dot_general(%94, %params.layers.0.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %96 = add(%7, %95) -> tensor<?x?x64>
  %97 = mul(%96, %96) -> tensor<?x?x64>
  %98 = reduce(%97) {dims = [2], kind = "sum"} -> tensor<?x?>
  %99 = broadcast_in_dim(%98) {dims = [0, 1]} -> tensor<?x?x1>
  %100 = constant() {value = 64.0} -> tensor<f32>
  %101 = broadcast_like(%100, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %102 = div(%99, %101) -> tensor<?x?x1>
  %103 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %104 = broadcast_like(%103, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %105 = add(%102, %104) -> tensor<?x?x1>
  %106 = rsqrt(%105) -> tensor<?x?x1>
  %107 = broadcast_in_dim(%106) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %108 = mul(%96, %107) -> tensor<?x?x64>
  %109 = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %110 = mul(%108, %109) -> tensor<?x?x64>
  %111 = dot_general(%110, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %112 = dot_general(%110, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %113 = logistic(%111) -> tensor<?x?x172>
  %114 = mul(%111, %113) -> tensor<?x?x172>
  %115 = mul(%114, %112) -> tensor<?x?x172>
  %116 = dot_general(%115, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %117 = add(%96, %116) -> tensor<?x?x64>
  %118 = mul(%117, %117) -> tensor<?x?x64>
  %119 = reduce(%118) {dims = [2], kind = "sum"} -> tensor<?x?>
  %120 = broadcast_in_dim(%119) {dims = [0, 1]} -> tensor<?x?x1>
  %121 = constant() {value = 64.0} -> tensor<f32>
  %122 = broadcast_like(%121, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %123 = div(%120, %122) -> tensor<?x?x1>
  %124 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %125 = broadcast_like(%124, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %126 = add(%123, %125) -> tensor<?x?x1>
  %127 = rsqrt(%126) -> tensor<?x?x1>
  %128 = broadcast_in_dim(%127) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %129 = mul(%117, %128) -> tensor<?x?x64>
  %130 = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %131 = mul(%129, %130) -> tensor<?x?x64>
  %132 = dot_general(%131, %params.layers.1.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %133 = dot_general(%132, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %134 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %135 = mul(%132, %134) -> tensor<?x?x4x16>
  %136 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %137 = mul(%133, %136) -> tensor<?x?x4x16>
  %138 = add(%135, %137) -> tensor<?x?x4x16>
  %139 = dot_general(%131, %params.layers.1.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %140 = dot_general(%139, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %141 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %142 = mul(%139, %141) -> tensor<?x?x4x16>
  %143 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x4x16>
  %144 = mul(%140, %143) -> tensor<?x?x4x16>
  %145 = add(%142, %144) -> tensor<?x?x4x16>
  %146 = dot_general(%131, %params.layers.1.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %147 = dot_general(%138, %145) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %148 = constant() {value = 0.25} -> tensor<f32>
  %149 = broadcast_like(%148, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %150 = mul(%147, %149) -> tensor<?x4x?x?>
  %151 = iota() {dim = 0} -> tensor<?x?xi32>
  %152 = iota() {dim = 1} -> tensor<?x?xi32>
  %153 = compare(%151, %152) {direction = "GE"} -> tensor<?x?xi1>
  %154 = broadcast_in_dim(%153) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %155 = broadcast_like(%154, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x4x?x?xi1>
  %156 = constant() {value = -1000000000.0} -> tensor<f32>
  %157 = broadcast_like(%156, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x4x?x?>
  %158 = select(%155, %150, %157) -> tensor<?x4x?x?>
  %159 = reduce(%158) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %160 = broadcast_in_dim(%159) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %161 = stop_gradient(%160) -> tensor<?x4x?x1>
  %162 = broadcast_like(%161, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %163 = sub(%158, %162) -> tensor<?x4x?x?>
  %164 = exp(%163) -> tensor<?x4x?x?>
  %165 = reduce(%164) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %166 = broadcast_like(%165, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x4x?x?>
  %167 = div(%164, %166) -> tensor<?x4x?x?>
  %168 = dot_general(%146, %167) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %169 = transpose(%168) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %170 = dot_general(%169, %params.layers.1.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %171 = add(%117, %170) -> tensor<?x?x64>
  %172 = mul(%171, %171) -> tensor<?x?x64>
  %173 = reduce(%172) {dims = [2], kind = "sum"} -> tensor<?x?>
  %174 = broadcast_in_dim(%173) {dims = [0, 1]} -> tensor<?x?x1>
  %175 = constant() {value = 64.0} -> tensor<f32>
  %176 = broadcast_like(%175, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %177 = div(%174, %176) -> tensor<?x?x1>
  %178 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %179 = broadcast_like(%178, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %180 = add(%177, %179) -> tensor<?x?x1>
  %181 = rsqrt(%180) -> tensor<?x?x1>
  %182 = broadcast_in_dim(%181) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %183 = mul(%171, %182) -> tensor<?x?x64>
  %184 = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %185 = mul(%183, %184) -> tensor<?x?x64>
  %186 = dot_general(%185, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %187 = dot_general(%185, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %188 = logistic(%186) -> tensor<?x?x172>
  %189 = mul(%186, %188) -> tensor<?x?x172>
  %190 = mul(%189, %187) -> tensor<?x?x172>
  %191 = dot_general(%190, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %192 = add(%171, %191) -> tensor<?x?x64>
  %193 = mul(%192, %192) -> tensor<?x?x64>
  %194 = reduce(%193) {dims = [2], kind = "sum"} -> tensor<?x?>
  %195 = broadcast_in_dim(%194) {dims = [0, 1]} -> tensor<?x?x1>
  %196 = constant() {value = 64.0} -> tensor<f32>
  %197 = broadcast_like(%196, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %198 = div(%195, %197) -> tensor<?x?x1>
  %199 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %200 = broadcast_like(%199, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %201 = add(%198, %200) -> tensor<?x?x1>
  %202 = rsqrt(%201) -> tensor<?x?x1>
  %203 = broadcast_in_dim(%202) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %204 = mul(%192, %203) -> tensor<?x?x64>
  %205 = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x64>
  %206 = mul(%204, %205) -> tensor<?x?x64>
  %207 = dot_general(%206, %params.lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256>
  %208 = reduce(%207) {dims = [2], kind = "max"} -> tensor<?x?>
  %209 = stop_gradient(%208) -> tensor<?x?>
  %210 = broadcast_in_dim(%209) {dims = [0, 1]} -> tensor<?x?x256>
  %211 = sub(%207, %210) -> tensor<?x?x256>
  %212 = exp(%211) -> tensor<?x?x256>
  %213 = reduce(%212) {dims = [2], kind = "sum"} -> tensor<?x?>
  %214 = log(%213) -> tensor<?x?>
  %215 = add(%214, %209) -> tensor<?x?>
  %216 = iota() {dim = 2} -> tensor<?x?x256xi32>
  %217 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32>
  %218 = compare(%216, %217) {direction = "EQ"} -> tensor<?x?x256xi1>
  %219 = convert(%218) {dtype = "f32"} -> tensor<?x?x256>
  %220 = mul(%207, %219) -> tensor<?x?x256>
  %221 = reduce(%220) {dims = [2], kind = "sum"} -> tensor<?x?>
  %222 = sub(%215, %221) -> tensor<?x?>
  %223 = mul(%222, %mask) -> tensor<?x?>
  %224 = reduce(%223) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %225 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %226 = constant() {value = 1.0} -> tensor<f32>
  %227 = max(%225, %226) -> tensor<f32>
  %loss = div(%224, %227) -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}
