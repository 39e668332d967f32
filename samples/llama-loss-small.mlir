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
  %77 = broadcast_in_dim(%76) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %78 = sub(%75, %77) -> tensor<?x4x?x?>
  %79 = exp(%78) -> tensor<?x4x?x?>
  %80 = reduce(%79) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %81 = broadcast_in_dim(%80) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %82 = div(%79, %81) -> tensor<?x4x?x?>
  %83 = dot_general(%65, %82) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %84 = transpose(%83) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %85 = dot_general(%84, %params_layers_0_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %86 = add(%5, %85) -> tensor<?x?x64>
  %87 = mul(%86, %86) -> tensor<?x?x64>
  %88 = reduce(%87) {dims = [2], kind = "sum"} -> tensor<?x?>
  %89 = broadcast_in_dim(%88) {dims = [0, 1]} -> tensor<?x?x1>
  %90 = constant() {value = 64.0} -> tensor<?x?x1>
  %91 = div(%89, %90) -> tensor<?x?x1>
  %92 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %93 = add(%91, %92) -> tensor<?x?x1>
  %94 = rsqrt(%93) -> tensor<?x?x1>
  %95 = broadcast_in_dim(%94) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %96 = mul(%86, %95) -> tensor<?x?x64>
  %97 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %98 = mul(%96, %97) -> tensor<?x?x64>
  %99 = dot_general(%98, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %100 = dot_general(%98, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %101 = logistic(%99) -> tensor<?x?x172>
  %102 = mul(%99, %101) -> tensor<?x?x172>
  %103 = mul(%102, %100) -> tensor<?x?x172>
  %104 = dot_general(%103, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %105 = add(%86, %104) -> tensor<?x?x64>
  %106 = mul(%105, %105) -> tensor<?x?x64>
  %107 = reduce(%106) {dims = [2], kind = "sum"} -> tensor<?x?>
  %108 = broadcast_in_dim(%107) {dims = [0, 1]} -> tensor<?x?x1>
  %109 = constant() {value = 64.0} -> tensor<?x?x1>
  %110 = div(%108, %109) -> tensor<?x?x1>
  %111 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %112 = add(%110, %111) -> tensor<?x?x1>
  %113 = rsqrt(%112) -> tensor<?x?x1>
  %114 = broadcast_in_dim(%113) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %115 = mul(%105, %114) -> tensor<?x?x64>
  %116 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x64>
  %117 = mul(%115, %116) -> tensor<?x?x64>
  %118 = dot_general(%117, %params_layers_1_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %119 = dot_general(%118, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %120 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %121 = mul(%118, %120) -> tensor<?x?x4x16>
  %122 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %123 = mul(%119, %122) -> tensor<?x?x4x16>
  %124 = add(%121, %123) -> tensor<?x?x4x16>
  %125 = dot_general(%117, %params_layers_1_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %126 = dot_general(%125, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x4x16>
  %127 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x4x16>
  %128 = mul(%125, %127) -> tensor<?x?x4x16>
  %129 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x4x16>
  %130 = mul(%126, %129) -> tensor<?x?x4x16>
  %131 = add(%128, %130) -> tensor<?x?x4x16>
  %132 = dot_general(%117, %params_layers_1_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4x16>
  %133 = dot_general(%124, %131) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x4x?x?>
  %134 = constant() {value = 0.25} -> tensor<?x4x?x?>
  %135 = mul(%133, %134) -> tensor<?x4x?x?>
  %136 = iota() {dim = 0} -> tensor<?x?xi32>
  %137 = iota() {dim = 1} -> tensor<?x?xi32>
  %138 = compare(%136, %137) {direction = "GE"} -> tensor<?x?xi1>
  %139 = broadcast_in_dim(%138) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %140 = broadcast_in_dim(%139) {dims = [0, 1, 2, 3]} -> tensor<?x4x?x?xi1>
  %141 = constant() {value = -1000000000.0} -> tensor<?x4x?x?>
  %142 = select(%140, %135, %141) -> tensor<?x4x?x?>
  %143 = reduce(%142) {dims = [3], kind = "max"} -> tensor<?x4x?>
  %144 = broadcast_in_dim(%143) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %145 = sub(%142, %144) -> tensor<?x4x?x?>
  %146 = exp(%145) -> tensor<?x4x?x?>
  %147 = reduce(%146) {dims = [3], kind = "sum"} -> tensor<?x4x?>
  %148 = broadcast_in_dim(%147) {dims = [0, 1, 2]} -> tensor<?x4x?x?>
  %149 = div(%146, %148) -> tensor<?x4x?x?>
  %150 = dot_general(%132, %149) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x4x16x?>
  %151 = transpose(%150) {perm = [0, 3, 1, 2]} -> tensor<?x?x4x16>
  %152 = dot_general(%151, %params_layers_1_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x64>
  %153 = add(%105, %152) -> tensor<?x?x64>
  %154 = mul(%153, %153) -> tensor<?x?x64>
  %155 = reduce(%154) {dims = [2], kind = "sum"} -> tensor<?x?>
  %156 = broadcast_in_dim(%155) {dims = [0, 1]} -> tensor<?x?x1>
  %157 = constant() {value = 64.0} -> tensor<?x?x1>
  %158 = div(%156, %157) -> tensor<?x?x1>
  %159 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %160 = add(%158, %159) -> tensor<?x?x1>
  %161 = rsqrt(%160) -> tensor<?x?x1>
  %162 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %163 = mul(%153, %162) -> tensor<?x?x64>
  %164 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x64>
  %165 = mul(%163, %164) -> tensor<?x?x64>
  %166 = dot_general(%165, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %167 = dot_general(%165, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x172>
  %168 = logistic(%166) -> tensor<?x?x172>
  %169 = mul(%166, %168) -> tensor<?x?x172>
  %170 = mul(%169, %167) -> tensor<?x?x172>
  %171 = dot_general(%170, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x64>
  %172 = add(%153, %171) -> tensor<?x?x64>
  %173 = mul(%172, %172) -> tensor<?x?x64>
  %174 = reduce(%173) {dims = [2], kind = "sum"} -> tensor<?x?>
  %175 = broadcast_in_dim(%174) {dims = [0, 1]} -> tensor<?x?x1>
  %176 = constant() {value = 64.0} -> tensor<?x?x1>
  %177 = div(%175, %176) -> tensor<?x?x1>
  %178 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %179 = add(%177, %178) -> tensor<?x?x1>
  %180 = rsqrt(%179) -> tensor<?x?x1>
  %181 = broadcast_in_dim(%180) {dims = [0, 1, 2]} -> tensor<?x?x64>
  %182 = mul(%172, %181) -> tensor<?x?x64>
  %183 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x64>
  %184 = mul(%182, %183) -> tensor<?x?x64>
  %185 = dot_general(%184, %params_lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x256>
  %186 = reduce(%185) {dims = [2], kind = "max"} -> tensor<?x?>
  %187 = broadcast_in_dim(%186) {dims = [0, 1]} -> tensor<?x?x256>
  %188 = sub(%185, %187) -> tensor<?x?x256>
  %189 = exp(%188) -> tensor<?x?x256>
  %190 = reduce(%189) {dims = [2], kind = "sum"} -> tensor<?x?>
  %191 = log(%190) -> tensor<?x?>
  %192 = add(%191, %186) -> tensor<?x?>
  %193 = iota() {dim = 2} -> tensor<?x?x256xi32>
  %194 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x256xi32>
  %195 = compare(%193, %194) {direction = "EQ"} -> tensor<?x?x256xi1>
  %196 = convert(%195) {dtype = "f32"} -> tensor<?x?x256>
  %197 = mul(%185, %196) -> tensor<?x?x256>
  %198 = reduce(%197) {dims = [2], kind = "sum"} -> tensor<?x?>
  %199 = sub(%192, %198) -> tensor<?x?>
  %200 = mul(%199, %mask) -> tensor<?x?>
  %201 = reduce(%200) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %202 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %203 = constant() {value = 1.0} -> tensor<f32>
  %204 = max(%202, %203) -> tensor<f32>
  %loss = div(%201, %204) -> tensor<f32>
  return %loss
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 512}
}
