func.func @main(%params_embed: tensor<256x64>, %params_final_norm: tensor<64>, %params_layers_0_attn_norm: tensor<64>, %params_layers_0_mlp_norm: tensor<64>, %params_layers_0_w_down: tensor<172x64>, %params_layers_0_w_gate: tensor<64x172>, %params_layers_0_w_up: tensor<64x172>, %params_layers_0_wk: tensor<64x4x16>, %params_layers_0_wo: tensor<4x16x64>, %params_layers_0_wq: tensor<64x4x16>, %params_layers_0_wv: tensor<64x4x16>, %params_layers_1_attn_norm: tensor<64>, %params_layers_1_mlp_norm: tensor<64>, %params_layers_1_w_down: tensor<172x64>, %params_layers_1_w_gate: tensor<64x172>, %params_layers_1_w_up: tensor<64x172>, %params_layers_1_wk: tensor<64x4x16>, %params_layers_1_wo: tensor<4x16x64>, %params_layers_1_wq: tensor<64x4x16>, %params_layers_1_wv: tensor<64x4x16>, %params_lm_head: tensor<64x256>, %tokens: tensor<?x?xi32, [@S0, @S1]>, %targets: tensor<?x?xi32, [@S0, @S1]>, %mask: tensor<?x?, [@S0, @S1]>, %lr: tensor<f32>) {
  %0 = constant() {value = 0} -> tensor<?x?xi32>
  %1 = compare(%tokens, %0) {direction = "LT"} -> tensor<?x?xi1>
  %2 = constant() {value = 256} -> tensor<?x?xi32>
  %3 = add(%tokens, %2) -> tensor<?x?xi32>
  %4 = select(%1, %3, %tokens) -> tensor<?x?xi32>
  %5 = gather(%params_embed, %4) -> tensor<?x?x64>
  %6 = iota() {dim = 0} -> tensor<?>
  %7 = constant() {value = 1.0} -> tensor<?>
  %8 = mul(%7, %6) -> tensor<?>
  %9 = constant() {value = 0.0} -> tensor<?>
  %10 = add(%9, %8) -> tensor<?>
  %11 = iota() {dim = 0} -> tensor<8>
  %12 = constant() {value = 0.125} -> tensor<8>
  %13 = mul(%11, %12) -> tensor<8>
  %14 = constant() {value = 10000.0} -> tensor<8>
  %15 = pow(%14, %13) -> tensor<8>
  %16 = constant() {value = 1.0} -> tensor<8>
  %17 = div(%16, %15) -> tensor<8>
  %18 = broadcast_in_dim(%10) {dims = [0]} -> tensor<?x8>
  %19 = broadcast_in_dim(%17) {dims = [1]} -> tensor<?x8>
  %20 = mul(%18, %19) -> tensor<?x8>
  %21 = concatenate(%20, %20) {dim = 1} -> tensor<?x16>
  %22 = iota() {dim = 0} -> tensor<16x16xi32>
  %23 = iota() {dim = 1} -> tensor<16x16xi32>
  %24 = constant() {value = 8} -> tensor<16x16xi32>
  %25 = add(%23, %24) -> tensor<16x16xi32>
  %26 = compare(%22, %25) {direction = "EQ"} -> tensor<16x16xi1>
  %27 = constant() {value = -1.0} -> tensor<16x16>
  %28 = constant() {value = 0.0} -> tensor<16x16>
  %29 = select(%26, %27, %28) -> tensor<16x16>
  %30 = constant() {value = 8} -> tensor<16x16xi32>
  %31 = add(%22, %30) -> tensor<16x16xi32>
  %32 = compare(%31, %23) {direction = "EQ"} -> tensor<16x16xi1>
  %33 = constant() {value = 1.0} -> tensor<16x16>
  %34 = constant() {value = 0.0} -> tensor<16x16>
  %35 = select(%32, %33, %34) -> tensor<16x16>
  %36 = add(%29, %35) -> tensor<16x16>
  %37 = cos(%21) -> tensor<?x16>
  %38 = sin(%21) -> tensor<?x16>
  %39 = mul(%5, %5) -> tensor<?x?x64>
  %40 = reduce(%39) {dims = [2], kind = "sum"} -> tensor<?x?>
  %41 = broadcast_in_dim(%40) {dims = [0, 1]} -> tensor<?x?x1>
  %42 = constant() {value = 64.0} -> tensor<?x?x1>
  %43 = div(%41, %42) -> tensor<?x?x1>
  %44 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %45 = add(%43, %44) -> tensor<?x?x1>
  %46 = rsqrt(%45) -> tensor<?x?x1>
  %47 = div(%46, %45) -> tensor<?x?x1>
  %48 = constant() {value = -0.5} -> tensor<?x?x1>
  %49 = mul(%48, %47) -> tensor<?x?x1>
  %50 = broadcast_in_dim(%46) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %51 = mul(%5, %50) -> tensor<?x?x64>
  %52 = broadcast_in_dim(%params_layers_0_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %53 = mul(%51, %52) -> tensor<?x?x64>
  %54 = dot_general(%53, %params_layers_0_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %55 = dot_general(%54, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %56 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %57 = mul(%54, %56) -> tensor<?x?x4x16>
  %58 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %59 = mul(%55, %58) -> tensor<?x?x4x16>
  %60 = add(%57, %59) -> tensor<?x?x4x16>
  %61 = dot_general(%53, %params_layers_0_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %62 = dot_general(%61, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %63 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %64 = mul(%61, %63) -> tensor<?x?x4x16>
  %65 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %66 = mul(%62, %65) -> tensor<?x?x4x16>
  %67 = add(%64, %66) -> tensor<?x?x4x16>
  %68 = dot_general(%53, %params_layers_0_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %69 = dot_general(%60, %67) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %70 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %71 = mul(%69, %70) -> tensor<?x4x?x?>
  %72 = iota() {dim = 0} -> tensor<?x?xi32>
  %73 = iota() {dim = 1} -> tensor<?x?xi32>
  %74 = compare(%72, %73) {direction = "GE"} -> tensor<?x?xi1>
  %75 = broadcast_in_dim(%74) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %76 = broadcast_in_dim(%75) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?xi1>
  %77 = constant() {value = -1000000000.0} -> tensor<?x4x?x?>
  %78 = select(%76, %71, %77) -> tensor<?x4x?x?>
  %79 = reduce(%78) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %80 = broadcast_in_dim(%79) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %81 = sub(%78, %80) -> tensor<?x4x?x?>
  %82 = exp(%81) -> tensor<?x4x?x?>
  %83 = reduce(%82) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %84 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %85 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %86 = div(%82, %85) -> tensor<?x4x?x?>
  %87 = integer_pow(%84) {exponent = -2} -> tensor<?x4x?x1>
  %88 = dot_general(%68, %86) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %89 = transpose(%88) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %90 = dot_general(%89, %params_layers_0_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %91 = add(%5, %90) -> tensor<?x?x64>
  %92 = mul(%91, %91) -> tensor<?x?x64>
  %93 = reduce(%92) {dims = [2], kind = "sum"} -> tensor<?x?>
  %94 = broadcast_in_dim(%93) {dims = [0, 1]} -> tensor<?x?x1>
  %95 = constant() {value = 64.0} -> tensor<?x?x1>
  %96 = div(%94, %95) -> tensor<?x?x1>
  %97 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %98 = add(%96, %97) -> tensor<?x?x1>
  %99 = rsqrt(%98) -> tensor<?x?x1>
  %100 = div(%99, %98) -> tensor<?x?x1>
  %101 = constant() {value = -0.5} -> tensor<?x?x1>
  %102 = mul(%101, %100) -> tensor<?x?x1>
  %103 = broadcast_in_dim(%99) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %104 = mul(%91, %103) -> tensor<?x?x64>
  %105 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %106 = mul(%104, %105) -> tensor<?x?x64>
  %107 = dot_general(%106, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %108 = dot_general(%106, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %109 = logistic(%107) -> tensor<?x?x172>
  %110 = constant() {value = 1.0} -> tensor<?x?x172>
  %111 = sub(%110, %109) -> tensor<?x?x172>
  %112 = mul(%109, %111) -> tensor<?x?x172>
  %113 = mul(%107, %109) -> tensor<?x?x172>
  %114 = mul(%113, %108) -> tensor<?x?x172>
  %115 = dot_general(%114, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %116 = add(%91, %115) -> tensor<?x?x64>
  %117 = mul(%116, %116) -> tensor<?x?x64>
  %118 = reduce(%117) {dims = [2], kind = "sum"} -> tensor<?x?>
  %119 = broadcast_in_dim(%118) {dims = [0, 1]} -> tensor<?x?x1>
  %120 = constant() {value = 64.0} -> tensor<?x?x1>
  %121 = div(%119, %120) -> tensor<?x?x1>
  %122 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %123 = add(%121, %122) -> tensor<?x?x1>
  %124 = rsqrt(%123) -> tensor<?x?x1>
  %125 = div(%124, %123) -> tensor<?x?x1>
  %126 = constant() {value = -0.5} -> tensor<?x?x1>
  %127 = mul(%126, %125) -> tensor<?x?x1>
  %128 = broadcast_in_dim(%124) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %129 = mul(%116, %128) -> tensor<?x?x64>
  %130 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %131 = mul(%129, %130) -> tensor<?x?x64>
  %132 = dot_general(%131, %params_layers_1_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %133 = dot_general(%132, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %134 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %135 = mul(%132, %134) -> tensor<?x?x4x16>
  %136 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %137 = mul(%133, %136) -> tensor<?x?x4x16>
  %138 = add(%135, %137) -> tensor<?x?x4x16>
  %139 = dot_general(%131, %params_layers_1_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %140 = dot_general(%139, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %141 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %142 = mul(%139, %141) -> tensor<?x?x4x16>
  %143 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %144 = mul(%140, %143) -> tensor<?x?x4x16>
  %145 = add(%142, %144) -> tensor<?x?x4x16>
  %146 = dot_general(%131, %params_layers_1_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %147 = dot_general(%138, %145) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %148 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %149 = mul(%147, %148) -> tensor<?x4x?x?>
  %150 = iota() {dim = 0} -> tensor<?x?xi32>
  %151 = iota() {dim = 1} -> tensor<?x?xi32>
  %152 = compare(%150, %151) {direction = "GE"} -> tensor<?x?xi1>
  %153 = broadcast_in_dim(%152) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %154 = broadcast_in_dim(%153) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?xi1>
  %155 = constant() {value = -1000000000.0} -> tensor<?x4x?x?>
  %156 = select(%154, %149, %155) -> tensor<?x4x?x?>
  %157 = reduce(%156) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %158 = broadcast_in_dim(%157) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %159 = sub(%156, %158) -> tensor<?x4x?x?>
  %160 = exp(%159) -> tensor<?x4x?x?>
  %161 = reduce(%160) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %162 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %163 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %164 = div(%160, %163) -> tensor<?x4x?x?>
  %165 = integer_pow(%162) {exponent = -2} -> tensor<?x4x?x1>
  %166 = dot_general(%146, %164) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %167 = transpose(%166) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %168 = dot_general(%167, %params_layers_1_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %169 = add(%116, %168) -> tensor<?x?x64>
  %170 = mul(%169, %169) -> tensor<?x?x64>
  %171 = reduce(%170) {dims = [2], kind = "sum"} -> tensor<?x?>
  %172 = broadcast_in_dim(%171) {dims = [0, 1]} -> tensor<?x?x1>
  %173 = constant() {value = 64.0} -> tensor<?x?x1>
  %174 = div(%172, %173) -> tensor<?x?x1>
  %175 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %176 = add(%174, %175) -> tensor<?x?x1>
  %177 = rsqrt(%176) -> tensor<?x?x1>
  %178 = div(%177, %176) -> tensor<?x?x1>
  %179 = constant() {value = -0.5} -> tensor<?x?x1>
  %180 = mul(%179, %178) -> tensor<?x?x1>
  %181 = broadcast_in_dim(%177) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %182 = mul(%169, %181) -> tensor<?x?x64>
  %183 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %184 = mul(%182, %183) -> tensor<?x?x64>
  %185 = dot_general(%184, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %186 = dot_general(%184, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %187 = logistic(%185) -> tensor<?x?x172>
  %188 = constant() {value = 1.0} -> tensor<?x?x172>
  %189 = sub(%188, %187) -> tensor<?x?x172>
  %190 = mul(%187, %189) -> tensor<?x?x172>
  %191 = mul(%185, %187) -> tensor<?x?x172>
  %192 = mul(%191, %186) -> tensor<?x?x172>
  %193 = dot_general(%192, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %194 = add(%169, %193) -> tensor<?x?x64>
  %195 = mul(%194, %194) -> tensor<?x?x64>
  %196 = reduce(%195) {dims = [2], kind = "sum"} -> tensor<?x?>
  %197 = broadcast_in_dim(%196) {dims = [0, 1]} -> tensor<?x?x1>
  %198 = constant() {value = 64.0} -> tensor<?x?x1>
  %199 = div(%197, %198) -> tensor<?x?x1>
  %200 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %201 = add(%199, %200) -> tensor<?x?x1>
  %202 = rsqrt(%201) -> tensor<?x?x1>
  %203 = div(%202, %201) -> tensor<?x?x1>
  %204 = constant() {value = -0.5} -> tensor<?x?x1>
  %205 = mul(%204, %203) -> tensor<?x?x1>
  %206 = broadcast_in_dim(%202) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %207 = mul(%194, %206) -> tensor<?x?x64>
  %208 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x64>
  %209 = mul(%207, %208) -> tensor<?x?x64>
  %210 = dot_general(%209, %params_lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256>
  %211 = reduce(%210) {dims = [2], kind = "max"} -> tensor<?x?>
  %212 = broadcast_in_dim(%211) {dims = [0, 1]} -> tensor<?x?x256>
  %213 = sub(%210, %212) -> tensor<?x?x256>
  %214 = exp(%213) -> tensor<?x?x256>
  %215 = reduce(%214) {dims = [2], kind = "sum"} -> tensor<?x?>
  %216 = log(%215) -> tensor<?x?>
  %217 = add(%216, %211) -> tensor<?x?>
  %218 = iota() {dim = 2} -> tensor<?x?x256xi32>
  %219 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32>
  %220 = compare(%218, %219) {direction = "EQ"} -> tensor<?x?x256xi1>
  %221 = convert(%220) {dtype = "f32"} -> tensor<?x?x256>
  %222 = mul(%210, %221) -> tensor<?x?x256>
  %223 = reduce(%222) {dims = [2], kind = "sum"} -> tensor<?x?>
  %224 = sub(%217, %223) -> tensor<?x?>
  %225 = mul(%224, %mask) -> tensor<?x?>
  %226 = reduce(%225) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %227 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %228 = constant() {value = 1.0} -> tensor<f32>
  %229 = max(%227, %228) -> tensor<f32>
  %loss = div(%226, %229) -> tensor<f32>
  %230 = constant() {value = 1.0} -> tensor<f32>
  %231 = div(%230, %229) -> tensor<f32>
  %232 = broadcast_in_dim(%231) {dims = []} -> tensor<?x?>
  %233 = mul(%232, %mask) -> tensor<?x?>
  %234 = neg(%233) -> tensor<?x?>
  %235 = broadcast_in_dim(%234) {dims = [0, 1]} -> tensor<?x?x256>
  %236 = mul(%235, %221) -> tensor<?x?x256>
  %237 = div(%233, %215) -> tensor<?x?>
  %238 = broadcast_in_dim(%237) {dims = [0, 1]} -> tensor<?x?x256>
  %239 = mul(%238, %214) -> tensor<?x?x256>
  %240 = add(%236, %239) -> tensor<?x?x256>
  %241 = dot_general(%240, %209) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<256x64>
  %242 = transpose(%241) {perm = [1, 0]} -> tensor<64x256>
  %243 = dot_general(%240, %params_lm_head) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %244 = mul(%207, %243) -> tensor<?x?x64>
  %245 = reduce(%244) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %246 = broadcast_in_dim(%245) {dims = [2]} -> tensor<1x1x64>
  %247 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x64>
  %248 = mul(%243, %247) -> tensor<?x?x64>
  %249 = reduce(%246) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %250 = mul(%194, %248) -> tensor<?x?x64>
  %251 = reduce(%250) {dims = [2], kind = "sum"} -> tensor<?x?>
  %252 = broadcast_in_dim(%251) {dims = [0, 1]} -> tensor<?x?x1>
  %253 = broadcast_in_dim(%202) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %254 = mul(%248, %253) -> tensor<?x?x64>
  %255 = mul(%252, %205) -> tensor<?x?x1>
  %256 = constant() {value = 64.0} -> tensor<?x?x1>
  %257 = div(%255, %256) -> tensor<?x?x1>
  %258 = reduce(%257) {dims = [2], kind = "sum"} -> tensor<?x?>
  %259 = broadcast_in_dim(%258) {dims = [0, 1]} -> tensor<?x?x64>
  %260 = mul(%194, %259) -> tensor<?x?x64>
  %261 = add(%254, %260) -> tensor<?x?x64>
  %262 = mul(%259, %194) -> tensor<?x?x64>
  %263 = add(%261, %262) -> tensor<?x?x64>
  %264 = dot_general(%263, %192) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172>
  %265 = transpose(%264) {perm = [1, 0]} -> tensor<172x64>
  %266 = dot_general(%263, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172>
  %267 = mul(%191, %266) -> tensor<?x?x172>
  %268 = mul(%266, %186) -> tensor<?x?x172>
  %269 = mul(%185, %268) -> tensor<?x?x172>
  %270 = mul(%268, %187) -> tensor<?x?x172>
  %271 = mul(%269, %190) -> tensor<?x?x172>
  %272 = add(%270, %271) -> tensor<?x?x172>
  %273 = dot_general(%267, %184) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %274 = transpose(%273) {perm = [1, 0]} -> tensor<64x172>
  %275 = dot_general(%267, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %276 = dot_general(%272, %184) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %277 = transpose(%276) {perm = [1, 0]} -> tensor<64x172>
  %278 = dot_general(%272, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %279 = add(%275, %278) -> tensor<?x?x64>
  %280 = mul(%182, %279) -> tensor<?x?x64>
  %281 = reduce(%280) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %282 = broadcast_in_dim(%281) {dims = [2]} -> tensor<1x1x64>
  %283 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %284 = mul(%279, %283) -> tensor<?x?x64>
  %285 = reduce(%282) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %286 = mul(%169, %284) -> tensor<?x?x64>
  %287 = reduce(%286) {dims = [2], kind = "sum"} -> tensor<?x?>
  %288 = broadcast_in_dim(%287) {dims = [0, 1]} -> tensor<?x?x1>
  %289 = broadcast_in_dim(%177) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %290 = mul(%284, %289) -> tensor<?x?x64>
  %291 = add(%263, %290) -> tensor<?x?x64>
  %292 = mul(%288, %180) -> tensor<?x?x1>
  %293 = constant() {value = 64.0} -> tensor<?x?x1>
  %294 = div(%292, %293) -> tensor<?x?x1>
  %295 = reduce(%294) {dims = [2], kind = "sum"} -> tensor<?x?>
  %296 = broadcast_in_dim(%295) {dims = [0, 1]} -> tensor<?x?x64>
  %297 = mul(%169, %296) -> tensor<?x?x64>
  %298 = add(%291, %297) -> tensor<?x?x64>
  %299 = mul(%296, %169) -> tensor<?x?x64>
  %300 = add(%298, %299) -> tensor<?x?x64>
  %301 = dot_general(%300, %167) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16>
  %302 = transpose(%301) {perm = [1, 2, 0]} -> tensor<4x16x64>
  %303 = dot_general(%300, %params_layers_1_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16>
  %304 = transpose(%303) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?>
  %305 = dot_general(%304, %146) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?>
  %306 = dot_general(%304, %164) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?>
  %307 = transpose(%306) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %308 = broadcast_in_dim(%165) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?>
  %309 = mul(%305, %308) -> tensor<?x4x?x?>
  %310 = mul(%309, %160) -> tensor<?x4x?x?>
  %311 = reduce(%310) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %312 = broadcast_in_dim(%311) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %313 = neg(%312) -> tensor<?x4x?x1>
  %314 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %315 = div(%305, %314) -> tensor<?x4x?x?>
  %316 = reduce(%313) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %317 = broadcast_in_dim(%316) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %318 = add(%315, %317) -> tensor<?x4x?x?>
  %319 = mul(%318, %160) -> tensor<?x4x?x?>
  %320 = constant() {value = 0.0} -> tensor<?x4x?x?>
  %321 = select(%154, %319, %320) -> tensor<?x4x?x?>
  %322 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %323 = mul(%321, %322) -> tensor<?x4x?x?>
  %324 = dot_general(%323, %138) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16>
  %325 = transpose(%324) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %326 = dot_general(%323, %145) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16>
  %327 = transpose(%326) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %328 = dot_general(%307, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %329 = transpose(%328) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %330 = dot_general(%307, %params_layers_1_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %331 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %332 = mul(%325, %331) -> tensor<?x?x4x16>
  %333 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %334 = mul(%325, %333) -> tensor<?x?x4x16>
  %335 = dot_general(%332, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %336 = add(%334, %335) -> tensor<?x?x4x16>
  %337 = dot_general(%336, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %338 = transpose(%337) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %339 = dot_general(%336, %params_layers_1_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %340 = add(%330, %339) -> tensor<?x?x64>
  %341 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %342 = mul(%327, %341) -> tensor<?x?x4x16>
  %343 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %344 = mul(%327, %343) -> tensor<?x?x4x16>
  %345 = dot_general(%342, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %346 = add(%344, %345) -> tensor<?x?x4x16>
  %347 = dot_general(%346, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %348 = transpose(%347) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %349 = dot_general(%346, %params_layers_1_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %350 = add(%340, %349) -> tensor<?x?x64>
  %351 = mul(%129, %350) -> tensor<?x?x64>
  %352 = reduce(%351) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %353 = broadcast_in_dim(%352) {dims = [2]} -> tensor<1x1x64>
  %354 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %355 = mul(%350, %354) -> tensor<?x?x64>
  %356 = reduce(%353) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %357 = mul(%116, %355) -> tensor<?x?x64>
  %358 = reduce(%357) {dims = [2], kind = "sum"} -> tensor<?x?>
  %359 = broadcast_in_dim(%358) {dims = [0, 1]} -> tensor<?x?x1>
  %360 = broadcast_in_dim(%124) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %361 = mul(%355, %360) -> tensor<?x?x64>
  %362 = add(%300, %361) -> tensor<?x?x64>
  %363 = mul(%359, %127) -> tensor<?x?x1>
  %364 = constant() {value = 64.0} -> tensor<?x?x1>
  %365 = div(%363, %364) -> tensor<?x?x1>
  %366 = reduce(%365) {dims = [2], kind = "sum"} -> tensor<?x?>
  %367 = broadcast_in_dim(%366) {dims = [0, 1]} -> tensor<?x?x64>
  %368 = mul(%116, %367) -> tensor<?x?x64>
  %369 = add(%362, %368) -> tensor<?x?x64>
  %370 = mul(%367, %116) -> tensor<?x?x64>
  %371 = add(%369, %370) -> tensor<?x?x64>
  %372 = dot_general(%371, %114) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x172>
  %373 = transpose(%372) {perm = [1, 0]} -> tensor<172x64>
  %374 = dot_general(%371, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x172>
  %375 = mul(%113, %374) -> tensor<?x?x172>
  %376 = mul(%374, %108) -> tensor<?x?x172>
  %377 = mul(%107, %376) -> tensor<?x?x172>
  %378 = mul(%376, %109) -> tensor<?x?x172>
  %379 = mul(%377, %112) -> tensor<?x?x172>
  %380 = add(%378, %379) -> tensor<?x?x172>
  %381 = dot_general(%375, %106) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %382 = transpose(%381) {perm = [1, 0]} -> tensor<64x172>
  %383 = dot_general(%375, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %384 = dot_general(%380, %106) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<172x64>
  %385 = transpose(%384) {perm = [1, 0]} -> tensor<64x172>
  %386 = dot_general(%380, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x64>
  %387 = add(%383, %386) -> tensor<?x?x64>
  %388 = mul(%104, %387) -> tensor<?x?x64>
  %389 = reduce(%388) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %390 = broadcast_in_dim(%389) {dims = [2]} -> tensor<1x1x64>
  %391 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %392 = mul(%387, %391) -> tensor<?x?x64>
  %393 = reduce(%390) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %394 = mul(%91, %392) -> tensor<?x?x64>
  %395 = reduce(%394) {dims = [2], kind = "sum"} -> tensor<?x?>
  %396 = broadcast_in_dim(%395) {dims = [0, 1]} -> tensor<?x?x1>
  %397 = broadcast_in_dim(%99) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %398 = mul(%392, %397) -> tensor<?x?x64>
  %399 = add(%371, %398) -> tensor<?x?x64>
  %400 = mul(%396, %102) -> tensor<?x?x1>
  %401 = constant() {value = 64.0} -> tensor<?x?x1>
  %402 = div(%400, %401) -> tensor<?x?x1>
  %403 = reduce(%402) {dims = [2], kind = "sum"} -> tensor<?x?>
  %404 = broadcast_in_dim(%403) {dims = [0, 1]} -> tensor<?x?x64>
  %405 = mul(%91, %404) -> tensor<?x?x64>
  %406 = add(%399, %405) -> tensor<?x?x64>
  %407 = mul(%404, %91) -> tensor<?x?x64>
  %408 = add(%406, %407) -> tensor<?x?x64>
  %409 = dot_general(%408, %89) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<64x4x16>
  %410 = transpose(%409) {perm = [1, 2, 0]} -> tensor<4x16x64>
  %411 = dot_general(%408, %params_layers_0_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x4x16>
  %412 = transpose(%411) {perm = [0, 2, 3, 1]} -> tensor<?x4x16x?>
  %413 = dot_general(%412, %68) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x4x?x?>
  %414 = dot_general(%412, %86) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x4x16x?>
  %415 = transpose(%414) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %416 = broadcast_in_dim(%87) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?>
  %417 = mul(%413, %416) -> tensor<?x4x?x?>
  %418 = mul(%417, %82) -> tensor<?x4x?x?>
  %419 = reduce(%418) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %420 = broadcast_in_dim(%419) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %421 = neg(%420) -> tensor<?x4x?x1>
  %422 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %423 = div(%413, %422) -> tensor<?x4x?x?>
  %424 = reduce(%421) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %425 = broadcast_in_dim(%424) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %426 = add(%423, %425) -> tensor<?x4x?x?>
  %427 = mul(%426, %82) -> tensor<?x4x?x?>
  %428 = constant() {value = 0.0} -> tensor<?x4x?x?>
  %429 = select(%76, %427, %428) -> tensor<?x4x?x?>
  %430 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %431 = mul(%429, %430) -> tensor<?x4x?x?>
  %432 = dot_general(%431, %60) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x4x?x16>
  %433 = transpose(%432) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %434 = dot_general(%431, %67) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x4x?x16>
  %435 = transpose(%434) {perm = [0, 2, 1, 3]} -> tensor<?x?x4x16>
  %436 = dot_general(%415, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %437 = transpose(%436) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %438 = dot_general(%415, %params_layers_0_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %439 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %440 = mul(%433, %439) -> tensor<?x?x4x16>
  %441 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %442 = mul(%433, %441) -> tensor<?x?x4x16>
  %443 = dot_general(%440, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %444 = add(%442, %443) -> tensor<?x?x4x16>
  %445 = dot_general(%444, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %446 = transpose(%445) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %447 = dot_general(%444, %params_layers_0_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %448 = add(%438, %447) -> tensor<?x?x64>
  %449 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %450 = mul(%435, %449) -> tensor<?x?x4x16>
  %451 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %452 = mul(%435, %451) -> tensor<?x?x4x16>
  %453 = dot_general(%450, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x4x16>
  %454 = add(%452, %453) -> tensor<?x?x4x16>
  %455 = dot_general(%454, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4x16x64>
  %456 = transpose(%455) {perm = [2, 0, 1]} -> tensor<64x4x16>
  %457 = dot_general(%454, %params_layers_0_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x64>
  %458 = add(%448, %457) -> tensor<?x?x64>
  %459 = mul(%51, %458) -> tensor<?x?x64>
  %460 = reduce(%459) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %461 = broadcast_in_dim(%460) {dims = [2]} -> tensor<1x1x64>
  %462 = broadcast_in_dim(%params_layers_0_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %463 = mul(%458, %462) -> tensor<?x?x64>
  %464 = reduce(%461) {dims = [0, 1], kind = "sum"} -> tensor<64>
  %465 = mul(%5, %463) -> tensor<?x?x64>
  %466 = reduce(%465) {dims = [2], kind = "sum"} -> tensor<?x?>
  %467 = broadcast_in_dim(%466) {dims = [0, 1]} -> tensor<?x?x1>
  %468 = broadcast_in_dim(%46) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %469 = mul(%463, %468) -> tensor<?x?x64>
  %470 = add(%408, %469) -> tensor<?x?x64>
  %471 = mul(%467, %49) -> tensor<?x?x1>
  %472 = constant() {value = 64.0} -> tensor<?x?x1>
  %473 = div(%471, %472) -> tensor<?x?x1>
  %474 = reduce(%473) {dims = [2], kind = "sum"} -> tensor<?x?>
  %475 = broadcast_in_dim(%474) {dims = [0, 1]} -> tensor<?x?x64>
  %476 = mul(%5, %475) -> tensor<?x?x64>
  %477 = add(%470, %476) -> tensor<?x?x64>
  %478 = mul(%475, %5) -> tensor<?x?x64>
  %479 = add(%477, %478) -> tensor<?x?x64>
  %480 = constant() {value = 0.0} -> tensor<256x64>
  %481 = scatter_add(%480, %4, %479) -> tensor<256x64>
  %482 = broadcast_in_dim(%lr) {dims = []} -> tensor<256x64>
  %483 = mul(%482, %481) -> tensor<256x64>
  %new_embed = sub(%params_embed, %483) -> tensor<256x64>
  %484 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %485 = mul(%484, %249) -> tensor<64>
  %new_final_norm = sub(%params_final_norm, %485) -> tensor<64>
  %486 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %487 = mul(%486, %464) -> tensor<64>
  %new_layers_0_attn_norm = sub(%params_layers_0_attn_norm, %487) -> tensor<64>
  %488 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %489 = mul(%488, %393) -> tensor<64>
  %new_layers_0_mlp_norm = sub(%params_layers_0_mlp_norm, %489) -> tensor<64>
  %490 = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64>
  %491 = mul(%490, %373) -> tensor<172x64>
  %new_layers_0_w_down = sub(%params_layers_0_w_down, %491) -> tensor<172x64>
  %492 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %493 = mul(%492, %385) -> tensor<64x172>
  %new_layers_0_w_gate = sub(%params_layers_0_w_gate, %493) -> tensor<64x172>
  %494 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %495 = mul(%494, %382) -> tensor<64x172>
  %new_layers_0_w_up = sub(%params_layers_0_w_up, %495) -> tensor<64x172>
  %496 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %497 = mul(%496, %446) -> tensor<64x4x16>
  %new_layers_0_wk = sub(%params_layers_0_wk, %497) -> tensor<64x4x16>
  %498 = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64>
  %499 = mul(%498, %410) -> tensor<4x16x64>
  %new_layers_0_wo = sub(%params_layers_0_wo, %499) -> tensor<4x16x64>
  %500 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %501 = mul(%500, %456) -> tensor<64x4x16>
  %new_layers_0_wq = sub(%params_layers_0_wq, %501) -> tensor<64x4x16>
  %502 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %503 = mul(%502, %437) -> tensor<64x4x16>
  %new_layers_0_wv = sub(%params_layers_0_wv, %503) -> tensor<64x4x16>
  %504 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %505 = mul(%504, %356) -> tensor<64>
  %new_layers_1_attn_norm = sub(%params_layers_1_attn_norm, %505) -> tensor<64>
  %506 = broadcast_in_dim(%lr) {dims = []} -> tensor<64>
  %507 = mul(%506, %285) -> tensor<64>
  %new_layers_1_mlp_norm = sub(%params_layers_1_mlp_norm, %507) -> tensor<64>
  %508 = broadcast_in_dim(%lr) {dims = []} -> tensor<172x64>
  %509 = mul(%508, %265) -> tensor<172x64>
  %new_layers_1_w_down = sub(%params_layers_1_w_down, %509) -> tensor<172x64>
  %510 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %511 = mul(%510, %277) -> tensor<64x172>
  %new_layers_1_w_gate = sub(%params_layers_1_w_gate, %511) -> tensor<64x172>
  %512 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x172>
  %513 = mul(%512, %274) -> tensor<64x172>
  %new_layers_1_w_up = sub(%params_layers_1_w_up, %513) -> tensor<64x172>
  %514 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %515 = mul(%514, %338) -> tensor<64x4x16>
  %new_layers_1_wk = sub(%params_layers_1_wk, %515) -> tensor<64x4x16>
  %516 = broadcast_in_dim(%lr) {dims = []} -> tensor<4x16x64>
  %517 = mul(%516, %302) -> tensor<4x16x64>
  %new_layers_1_wo = sub(%params_layers_1_wo, %517) -> tensor<4x16x64>
  %518 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %519 = mul(%518, %348) -> tensor<64x4x16>
  %new_layers_1_wq = sub(%params_layers_1_wq, %519) -> tensor<64x4x16>
  %520 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x4x16>
  %521 = mul(%520, %329) -> tensor<64x4x16>
  %new_layers_1_wv = sub(%params_layers_1_wv, %521) -> tensor<64x4x16>
  %522 = broadcast_in_dim(%lr) {dims = []} -> tensor<64x256>
  %523 = mul(%522, %242) -> tensor<64x256>
  %new_lm_head = sub(%params_lm_head, %523) -> tensor<64x256>
  return %loss, %new_embed, %new_final_norm, %new_layers_0_attn_norm, %new_layers_0_mlp_norm, %new_layers_0_w_down, %new_layers_0_w_gate, %new_layers_0_w_up, %new_layers_0_wk, %new_layers_0_wo, %new_layers_0_wq, %new_layers_0_wv, %new_layers_1_attn_norm, %new_layers_1_mlp_norm, %new_layers_1_w_down, %new_layers_1_w_gate, %new_layers_1_w_up, %new_layers_1_wk, %new_layers_1_wo, %new_layers_1_wq, %new_layers_1_wv, %new_lm_head
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}
