func.func @main(%params_embed: tensor<256x64>, %params_final_norm: tensor<64>, %params_layers_0_attn_norm: tensor<64>, %params_layers_0_mlp_norm: tensor<64>, %params_layers_0_w_down: tensor<172x64>, %params_layers_0_w_gate: tensor<64x172>, %params_layers_0_w_up: tensor<64x172>, %params_layers_0_wk: tensor<64x4x16>, %params_layers_0_wo: tensor<4x16x64>, %params_layers_0_wq: tensor<64x4x16>, %params_layers_0_wv: tensor<64x4x16>, %params_layers_1_attn_norm: tensor<64>, %params_layers_1_mlp_norm: tensor<64>, %params_layers_1_w_down: tensor<172x64>, %params_layers_1_w_gate: tensor<64x172>, %params_layers_1_w_up: tensor<64x172>, %params_layers_1_wk: tensor<64x4x16>, %params_layers_1_wo: tensor<4x16x64>, %params_layers_1_wq: tensor<64x4x16>, %params_layers_1_wv: tensor<64x4x16>, %params_lm_head: tensor<64x256>, %tokens: tensor<?x?xi32, [@S0, @S1]>, %targets: tensor<?x?xi32, [@S0, @S1]>, %mask: tensor<?x?, [@S0, @S1]>) {
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
  %47 = broadcast_in_dim(%46) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %48 = mul(%5, %47) -> tensor<?x?x64>
  %49 = broadcast_in_dim(%params_layers_0_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %50 = mul(%48, %49) -> tensor<?x?x64>
  %51 = dot_general(%50, %params_layers_0_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %52 = dot_general(%51, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %53 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %54 = mul(%51, %53) -> tensor<?x?x4x16>
  %55 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %56 = mul(%52, %55) -> tensor<?x?x4x16>
  %57 = add(%54, %56) -> tensor<?x?x4x16>
  %58 = dot_general(%50, %params_layers_0_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %59 = dot_general(%58, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %60 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %61 = mul(%58, %60) -> tensor<?x?x4x16>
  %62 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %63 = mul(%59, %62) -> tensor<?x?x4x16>
  %64 = add(%61, %63) -> tensor<?x?x4x16>
  %65 = dot_general(%50, %params_layers_0_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %66 = dot_general(%57, %64) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %67 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %68 = mul(%66, %67) -> tensor<?x4x?x?>
  %69 = iota() {dim = 0} -> tensor<?x?xi32>
  %70 = iota() {dim = 1} -> tensor<?x?xi32>
  %71 = compare(%69, %70) {direction = "GE"} -> tensor<?x?xi1>
  %72 = broadcast_in_dim(%71) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %73 = broadcast_in_dim(%72) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?xi1>
  %74 = constant() {value = -1000000000.0} -> tensor<?x4x?x?>
  %75 = select(%73, %68, %74) -> tensor<?x4x?x?>
  %76 = reduce(%75) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %77 = broadcast_in_dim(%76) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %78 = stop_gradient(%77) -> tensor<?x4x?x1>
  %79 = broadcast_in_dim(%78) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?>
  %80 = sub(%75, %79) -> tensor<?x4x?x?>
  %81 = exp(%80) -> tensor<?x4x?x?>
  %82 = reduce(%81) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %83 = broadcast_in_dim(%82) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %84 = div(%81, %83) -> tensor<?x4x?x?>
  %85 = dot_general(%65, %84) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %86 = transpose(%85) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %87 = dot_general(%86, %params_layers_0_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %88 = add(%5, %87) -> tensor<?x?x64>
  %89 = mul(%88, %88) -> tensor<?x?x64>
  %90 = reduce(%89) {dims = [2], kind = "sum"} -> tensor<?x?>
  %91 = broadcast_in_dim(%90) {dims = [0, 1]} -> tensor<?x?x1>
  %92 = constant() {value = 64.0} -> tensor<?x?x1>
  %93 = div(%91, %92) -> tensor<?x?x1>
  %94 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %95 = add(%93, %94) -> tensor<?x?x1>
  %96 = rsqrt(%95) -> tensor<?x?x1>
  %97 = broadcast_in_dim(%96) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %98 = mul(%88, %97) -> tensor<?x?x64>
  %99 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %100 = mul(%98, %99) -> tensor<?x?x64>
  %101 = dot_general(%100, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %102 = dot_general(%100, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %103 = logistic(%101) -> tensor<?x?x172>
  %104 = mul(%101, %103) -> tensor<?x?x172>
  %105 = mul(%104, %102) -> tensor<?x?x172>
  %106 = dot_general(%105, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %107 = add(%88, %106) -> tensor<?x?x64>
  %108 = mul(%107, %107) -> tensor<?x?x64>
  %109 = reduce(%108) {dims = [2], kind = "sum"} -> tensor<?x?>
  %110 = broadcast_in_dim(%109) {dims = [0, 1]} -> tensor<?x?x1>
  %111 = constant() {value = 64.0} -> tensor<?x?x1>
  %112 = div(%110, %111) -> tensor<?x?x1>
  %113 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %114 = add(%112, %113) -> tensor<?x?x1>
  %115 = rsqrt(%114) -> tensor<?x?x1>
  %116 = broadcast_in_dim(%115) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %117 = mul(%107, %116) -> tensor<?x?x64>
  %118 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %119 = mul(%117, %118) -> tensor<?x?x64>
  %120 = dot_general(%119, %params_layers_1_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %121 = dot_general(%120, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %122 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %123 = mul(%120, %122) -> tensor<?x?x4x16>
  %124 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %125 = mul(%121, %124) -> tensor<?x?x4x16>
  %126 = add(%123, %125) -> tensor<?x?x4x16>
  %127 = dot_general(%119, %params_layers_1_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %128 = dot_general(%127, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %129 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %130 = mul(%127, %129) -> tensor<?x?x4x16>
  %131 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %132 = mul(%128, %131) -> tensor<?x?x4x16>
  %133 = add(%130, %132) -> tensor<?x?x4x16>
  %134 = dot_general(%119, %params_layers_1_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %135 = dot_general(%126, %133) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %136 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %137 = mul(%135, %136) -> tensor<?x4x?x?>
  %138 = iota() {dim = 0} -> tensor<?x?xi32>
  %139 = iota() {dim = 1} -> tensor<?x?xi32>
  %140 = compare(%138, %139) {direction = "GE"} -> tensor<?x?xi1>
  %141 = broadcast_in_dim(%140) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %142 = broadcast_in_dim(%141) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?xi1>
  %143 = constant() {value = -1000000000.0} -> tensor<?x4x?x?>
  %144 = select(%142, %137, %143) -> tensor<?x4x?x?>
  %145 = reduce(%144) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %146 = broadcast_in_dim(%145) {dims = [0, 1, 2]} -> tensor<?x4x?x1>
  %147 = stop_gradient(%146) -> tensor<?x4x?x1>
  %148 = broadcast_in_dim(%147) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?>
  %149 = sub(%144, %148) -> tensor<?x4x?x?>
  %150 = exp(%149) -> tensor<?x4x?x?>
  %151 = reduce(%150) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %152 = broadcast_in_dim(%151) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %153 = div(%150, %152) -> tensor<?x4x?x?>
  %154 = dot_general(%134, %153) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %155 = transpose(%154) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %156 = dot_general(%155, %params_layers_1_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %157 = add(%107, %156) -> tensor<?x?x64>
  %158 = mul(%157, %157) -> tensor<?x?x64>
  %159 = reduce(%158) {dims = [2], kind = "sum"} -> tensor<?x?>
  %160 = broadcast_in_dim(%159) {dims = [0, 1]} -> tensor<?x?x1>
  %161 = constant() {value = 64.0} -> tensor<?x?x1>
  %162 = div(%160, %161) -> tensor<?x?x1>
  %163 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %164 = add(%162, %163) -> tensor<?x?x1>
  %165 = rsqrt(%164) -> tensor<?x?x1>
  %166 = broadcast_in_dim(%165) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %167 = mul(%157, %166) -> tensor<?x?x64>
  %168 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %169 = mul(%167, %168) -> tensor<?x?x64>
  %170 = dot_general(%169, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %171 = dot_general(%169, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %172 = logistic(%170) -> tensor<?x?x172>
  %173 = mul(%170, %172) -> tensor<?x?x172>
  %174 = mul(%173, %171) -> tensor<?x?x172>
  %175 = dot_general(%174, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %176 = add(%157, %175) -> tensor<?x?x64>
  %177 = mul(%176, %176) -> tensor<?x?x64>
  %178 = reduce(%177) {dims = [2], kind = "sum"} -> tensor<?x?>
  %179 = broadcast_in_dim(%178) {dims = [0, 1]} -> tensor<?x?x1>
  %180 = constant() {value = 64.0} -> tensor<?x?x1>
  %181 = div(%179, %180) -> tensor<?x?x1>
  %182 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %183 = add(%181, %182) -> tensor<?x?x1>
  %184 = rsqrt(%183) -> tensor<?x?x1>
  %185 = broadcast_in_dim(%184) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %186 = mul(%176, %185) -> tensor<?x?x64>
  %187 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x64>
  %188 = mul(%186, %187) -> tensor<?x?x64>
  %189 = dot_general(%188, %params_lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256>
  %190 = reduce(%189) {dims = [2], kind = "max"} -> tensor<?x?>
  %191 = stop_gradient(%190) -> tensor<?x?>
  %192 = broadcast_in_dim(%191) {dims = [0, 1]} -> tensor<?x?x256>
  %193 = sub(%189, %192) -> tensor<?x?x256>
  %194 = exp(%193) -> tensor<?x?x256>
  %195 = reduce(%194) {dims = [2], kind = "sum"} -> tensor<?x?>
  %196 = log(%195) -> tensor<?x?>
  %197 = add(%196, %191) -> tensor<?x?>
  %198 = iota() {dim = 2} -> tensor<?x?x256xi32>
  %199 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32>
  %200 = compare(%198, %199) {direction = "EQ"} -> tensor<?x?x256xi1>
  %201 = convert(%200) {dtype = "f32"} -> tensor<?x?x256>
  %202 = mul(%189, %201) -> tensor<?x?x256>
  %203 = reduce(%202) {dims = [2], kind = "sum"} -> tensor<?x?>
  %204 = sub(%197, %203) -> tensor<?x?>
  %205 = mul(%204, %mask) -> tensor<?x?>
  %206 = reduce(%205) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %207 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %208 = constant() {value = 1.0} -> tensor<f32>
  %209 = max(%207, %208) -> tensor<f32>
  %loss = div(%206, %209) -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}
