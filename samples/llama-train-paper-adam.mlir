func.func @main(%params_embed: tensor<32000x4096>, %params_final_norm: tensor<4096>, %params_layers_0_attn_norm: tensor<4096>, %params_layers_0_mlp_norm: tensor<4096>, %params_layers_0_w_down: tensor<11008x4096>, %params_layers_0_w_gate: tensor<4096x11008>, %params_layers_0_w_up: tensor<4096x11008>, %params_layers_0_wk: tensor<4096x32x128>, %params_layers_0_wo: tensor<32x128x4096>, %params_layers_0_wq: tensor<4096x32x128>, %params_layers_0_wv: tensor<4096x32x128>, %params_layers_1_attn_norm: tensor<4096>, %params_layers_1_mlp_norm: tensor<4096>, %params_layers_1_w_down: tensor<11008x4096>, %params_layers_1_w_gate: tensor<4096x11008>, %params_layers_1_w_up: tensor<4096x11008>, %params_layers_1_wk: tensor<4096x32x128>, %params_layers_1_wo: tensor<32x128x4096>, %params_layers_1_wq: tensor<4096x32x128>, %params_layers_1_wv: tensor<4096x32x128>, %params_layers_2_attn_norm: tensor<4096>, %params_layers_2_mlp_norm: tensor<4096>, %params_layers_2_w_down: tensor<11008x4096>, %params_layers_2_w_gate: tensor<4096x11008>, %params_layers_2_w_up: tensor<4096x11008>, %params_layers_2_wk: tensor<4096x32x128>, %params_layers_2_wo: tensor<32x128x4096>, %params_layers_2_wq: tensor<4096x32x128>, %params_layers_2_wv: tensor<4096x32x128>, %params_layers_3_attn_norm: tensor<4096>, %params_layers_3_mlp_norm: tensor<4096>, %params_layers_3_w_down: tensor<11008x4096>, %params_layers_3_w_gate: tensor<4096x11008>, %params_layers_3_w_up: tensor<4096x11008>, %params_layers_3_wk: tensor<4096x32x128>, %params_layers_3_wo: tensor<32x128x4096>, %params_layers_3_wq: tensor<4096x32x128>, %params_layers_3_wv: tensor<4096x32x128>, %params_lm_head: tensor<4096x32000>, %state_m_embed: tensor<32000x4096>, %state_m_final_norm: tensor<4096>, %state_m_layers_0_attn_norm: tensor<4096>, %state_m_layers_0_mlp_norm: tensor<4096>, %state_m_layers_0_w_down: tensor<11008x4096>, %state_m_layers_0_w_gate: tensor<4096x11008>, %state_m_layers_0_w_up: tensor<4096x11008>, %state_m_layers_0_wk: tensor<4096x32x128>, %state_m_layers_0_wo: tensor<32x128x4096>, %state_m_layers_0_wq: tensor<4096x32x128>, %state_m_layers_0_wv: tensor<4096x32x128>, %state_m_layers_1_attn_norm: tensor<4096>, %state_m_layers_1_mlp_norm: tensor<4096>, %state_m_layers_1_w_down: tensor<11008x4096>, %state_m_layers_1_w_gate: tensor<4096x11008>, %state_m_layers_1_w_up: tensor<4096x11008>, %state_m_layers_1_wk: tensor<4096x32x128>, %state_m_layers_1_wo: tensor<32x128x4096>, %state_m_layers_1_wq: tensor<4096x32x128>, %state_m_layers_1_wv: tensor<4096x32x128>, %state_m_layers_2_attn_norm: tensor<4096>, %state_m_layers_2_mlp_norm: tensor<4096>, %state_m_layers_2_w_down: tensor<11008x4096>, %state_m_layers_2_w_gate: tensor<4096x11008>, %state_m_layers_2_w_up: tensor<4096x11008>, %state_m_layers_2_wk: tensor<4096x32x128>, %state_m_layers_2_wo: tensor<32x128x4096>, %state_m_layers_2_wq: tensor<4096x32x128>, %state_m_layers_2_wv: tensor<4096x32x128>, %state_m_layers_3_attn_norm: tensor<4096>, %state_m_layers_3_mlp_norm: tensor<4096>, %state_m_layers_3_w_down: tensor<11008x4096>, %state_m_layers_3_w_gate: tensor<4096x11008>, %state_m_layers_3_w_up: tensor<4096x11008>, %state_m_layers_3_wk: tensor<4096x32x128>, %state_m_layers_3_wo: tensor<32x128x4096>, %state_m_layers_3_wq: tensor<4096x32x128>, %state_m_layers_3_wv: tensor<4096x32x128>, %state_m_lm_head: tensor<4096x32000>, %state_v_embed: tensor<32000x4096>, %state_v_final_norm: tensor<4096>, %state_v_layers_0_attn_norm: tensor<4096>, %state_v_layers_0_mlp_norm: tensor<4096>, %state_v_layers_0_w_down: tensor<11008x4096>, %state_v_layers_0_w_gate: tensor<4096x11008>, %state_v_layers_0_w_up: tensor<4096x11008>, %state_v_layers_0_wk: tensor<4096x32x128>, %state_v_layers_0_wo: tensor<32x128x4096>, %state_v_layers_0_wq: tensor<4096x32x128>, %state_v_layers_0_wv: tensor<4096x32x128>, %state_v_layers_1_attn_norm: tensor<4096>, %state_v_layers_1_mlp_norm: tensor<4096>, %state_v_layers_1_w_down: tensor<11008x4096>, %state_v_layers_1_w_gate: tensor<4096x11008>, %state_v_layers_1_w_up: tensor<4096x11008>, %state_v_layers_1_wk: tensor<4096x32x128>, %state_v_layers_1_wo: tensor<32x128x4096>, %state_v_layers_1_wq: tensor<4096x32x128>, %state_v_layers_1_wv: tensor<4096x32x128>, %state_v_layers_2_attn_norm: tensor<4096>, %state_v_layers_2_mlp_norm: tensor<4096>, %state_v_layers_2_w_down: tensor<11008x4096>, %state_v_layers_2_w_gate: tensor<4096x11008>, %state_v_layers_2_w_up: tensor<4096x11008>, %state_v_layers_2_wk: tensor<4096x32x128>, %state_v_layers_2_wo: tensor<32x128x4096>, %state_v_layers_2_wq: tensor<4096x32x128>, %state_v_layers_2_wv: tensor<4096x32x128>, %state_v_layers_3_attn_norm: tensor<4096>, %state_v_layers_3_mlp_norm: tensor<4096>, %state_v_layers_3_w_down: tensor<11008x4096>, %state_v_layers_3_w_gate: tensor<4096x11008>, %state_v_layers_3_w_up: tensor<4096x11008>, %state_v_layers_3_wk: tensor<4096x32x128>, %state_v_layers_3_wo: tensor<32x128x4096>, %state_v_layers_3_wq: tensor<4096x32x128>, %state_v_layers_3_wv: tensor<4096x32x128>, %state_v_lm_head: tensor<4096x32000>, %tokens: tensor<?x?xi32, [@S0, @S1]>, %targets: tensor<?x?xi32, [@S0, @S1]>, %mask: tensor<?x?, [@S0, @S1]>, %lr: tensor<f32>) {
  %0 = constant() {value = 0} -> tensor<?x?xi32>
  %1 = compare(%tokens, %0) {direction = "LT"} -> tensor<?x?xi1>
  %2 = constant() {value = 32000} -> tensor<?x?xi32>
  %3 = add(%tokens, %2) -> tensor<?x?xi32>
  %4 = select(%1, %3, %tokens) -> tensor<?x?xi32>
  %5 = gather(%params_embed, %4) -> tensor<?x?x4096>
  %6 = iota() {dim = 0} -> tensor<?>
  %7 = constant() {value = 1.0} -> tensor<?>
  %8 = mul(%7, %6) -> tensor<?>
  %9 = constant() {value = 0.0} -> tensor<?>
  %10 = add(%9, %8) -> tensor<?>
  %11 = iota() {dim = 0} -> tensor<64>
  %12 = constant() {value = 0.015625} -> tensor<64>
  %13 = mul(%11, %12) -> tensor<64>
  %14 = constant() {value = 10000.0} -> tensor<64>
  %15 = pow(%14, %13) -> tensor<64>
  %16 = constant() {value = 1.0} -> tensor<64>
  %17 = div(%16, %15) -> tensor<64>
  %18 = broadcast_in_dim(%10) {dims = [0]} -> tensor<?x64>
  %19 = broadcast_in_dim(%17) {dims = [1]} -> tensor<?x64>
  %20 = mul(%18, %19) -> tensor<?x64>
  %21 = concatenate(%20, %20) {dim = 1} -> tensor<?x128>
  %22 = iota() {dim = 0} -> tensor<128x128xi32>
  %23 = iota() {dim = 1} -> tensor<128x128xi32>
  %24 = constant() {value = 64} -> tensor<128x128xi32>
  %25 = add(%23, %24) -> tensor<128x128xi32>
  %26 = compare(%22, %25) {direction = "EQ"} -> tensor<128x128xi1>
  %27 = constant() {value = -1.0} -> tensor<128x128>
  %28 = constant() {value = 0.0} -> tensor<128x128>
  %29 = select(%26, %27, %28) -> tensor<128x128>
  %30 = constant() {value = 64} -> tensor<128x128xi32>
  %31 = add(%22, %30) -> tensor<128x128xi32>
  %32 = compare(%31, %23) {direction = "EQ"} -> tensor<128x128xi1>
  %33 = constant() {value = 1.0} -> tensor<128x128>
  %34 = constant() {value = 0.0} -> tensor<128x128>
  %35 = select(%32, %33, %34) -> tensor<128x128>
  %36 = add(%29, %35) -> tensor<128x128>
  %37 = cos(%21) -> tensor<?x128>
  %38 = sin(%21) -> tensor<?x128>
  %39 = mul(%5, %5) -> tensor<?x?x4096>
  %40 = reduce(%39) {dims = [2], kind = "sum"} -> tensor<?x?>
  %41 = broadcast_in_dim(%40) {dims = [0, 1]} -> tensor<?x?x1>
  %42 = constant() {value = 4096.0} -> tensor<?x?x1>
  %43 = div(%41, %42) -> tensor<?x?x1>
  %44 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %45 = add(%43, %44) -> tensor<?x?x1>
  %46 = rsqrt(%45) -> tensor<?x?x1>
  %47 = div(%46, %45) -> tensor<?x?x1>
  %48 = constant() {value = -0.5} -> tensor<?x?x1>
  %49 = mul(%48, %47) -> tensor<?x?x1>
  %50 = broadcast_in_dim(%46) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %51 = mul(%5, %50) -> tensor<?x?x4096>
  %52 = broadcast_in_dim(%params_layers_0_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %53 = mul(%51, %52) -> tensor<?x?x4096>
  %54 = dot_general(%53, %params_layers_0_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %55 = dot_general(%54, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %56 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %57 = mul(%54, %56) -> tensor<?x?x32x128>
  %58 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %59 = mul(%55, %58) -> tensor<?x?x32x128>
  %60 = add(%57, %59) -> tensor<?x?x32x128>
  %61 = dot_general(%53, %params_layers_0_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %62 = dot_general(%61, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %63 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %64 = mul(%61, %63) -> tensor<?x?x32x128>
  %65 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %66 = mul(%62, %65) -> tensor<?x?x32x128>
  %67 = add(%64, %66) -> tensor<?x?x32x128>
  %68 = dot_general(%53, %params_layers_0_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %69 = dot_general(%60, %67) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %70 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %71 = mul(%69, %70) -> tensor<?x32x?x?>
  %72 = iota() {dim = 0} -> tensor<?x?xi32>
  %73 = iota() {dim = 1} -> tensor<?x?xi32>
  %74 = compare(%72, %73) {direction = "GE"} -> tensor<?x?xi1>
  %75 = broadcast_in_dim(%74) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %76 = broadcast_in_dim(%75) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?xi1>
  %77 = constant() {value = -1000000000.0} -> tensor<?x32x?x?>
  %78 = select(%76, %71, %77) -> tensor<?x32x?x?>
  %79 = reduce(%78) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %80 = broadcast_in_dim(%79) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %81 = sub(%78, %80) -> tensor<?x32x?x?>
  %82 = exp(%81) -> tensor<?x32x?x?>
  %83 = reduce(%82) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %84 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %85 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %86 = div(%82, %85) -> tensor<?x32x?x?>
  %87 = integer_pow(%84) {exponent = -2} -> tensor<?x32x?x1>
  %88 = dot_general(%68, %86) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %89 = transpose(%88) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %90 = dot_general(%89, %params_layers_0_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %91 = add(%5, %90) -> tensor<?x?x4096>
  %92 = mul(%91, %91) -> tensor<?x?x4096>
  %93 = reduce(%92) {dims = [2], kind = "sum"} -> tensor<?x?>
  %94 = broadcast_in_dim(%93) {dims = [0, 1]} -> tensor<?x?x1>
  %95 = constant() {value = 4096.0} -> tensor<?x?x1>
  %96 = div(%94, %95) -> tensor<?x?x1>
  %97 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %98 = add(%96, %97) -> tensor<?x?x1>
  %99 = rsqrt(%98) -> tensor<?x?x1>
  %100 = div(%99, %98) -> tensor<?x?x1>
  %101 = constant() {value = -0.5} -> tensor<?x?x1>
  %102 = mul(%101, %100) -> tensor<?x?x1>
  %103 = broadcast_in_dim(%99) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %104 = mul(%91, %103) -> tensor<?x?x4096>
  %105 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %106 = mul(%104, %105) -> tensor<?x?x4096>
  %107 = dot_general(%106, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %108 = dot_general(%106, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %109 = logistic(%107) -> tensor<?x?x11008>
  %110 = constant() {value = 1.0} -> tensor<?x?x11008>
  %111 = sub(%110, %109) -> tensor<?x?x11008>
  %112 = mul(%109, %111) -> tensor<?x?x11008>
  %113 = mul(%107, %109) -> tensor<?x?x11008>
  %114 = mul(%113, %108) -> tensor<?x?x11008>
  %115 = dot_general(%114, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %116 = add(%91, %115) -> tensor<?x?x4096>
  %117 = mul(%116, %116) -> tensor<?x?x4096>
  %118 = reduce(%117) {dims = [2], kind = "sum"} -> tensor<?x?>
  %119 = broadcast_in_dim(%118) {dims = [0, 1]} -> tensor<?x?x1>
  %120 = constant() {value = 4096.0} -> tensor<?x?x1>
  %121 = div(%119, %120) -> tensor<?x?x1>
  %122 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %123 = add(%121, %122) -> tensor<?x?x1>
  %124 = rsqrt(%123) -> tensor<?x?x1>
  %125 = div(%124, %123) -> tensor<?x?x1>
  %126 = constant() {value = -0.5} -> tensor<?x?x1>
  %127 = mul(%126, %125) -> tensor<?x?x1>
  %128 = broadcast_in_dim(%124) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %129 = mul(%116, %128) -> tensor<?x?x4096>
  %130 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %131 = mul(%129, %130) -> tensor<?x?x4096>
  %132 = dot_general(%131, %params_layers_1_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %133 = dot_general(%132, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %134 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %135 = mul(%132, %134) -> tensor<?x?x32x128>
  %136 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %137 = mul(%133, %136) -> tensor<?x?x32x128>
  %138 = add(%135, %137) -> tensor<?x?x32x128>
  %139 = dot_general(%131, %params_layers_1_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %140 = dot_general(%139, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %141 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %142 = mul(%139, %141) -> tensor<?x?x32x128>
  %143 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %144 = mul(%140, %143) -> tensor<?x?x32x128>
  %145 = add(%142, %144) -> tensor<?x?x32x128>
  %146 = dot_general(%131, %params_layers_1_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %147 = dot_general(%138, %145) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %148 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %149 = mul(%147, %148) -> tensor<?x32x?x?>
  %150 = iota() {dim = 0} -> tensor<?x?xi32>
  %151 = iota() {dim = 1} -> tensor<?x?xi32>
  %152 = compare(%150, %151) {direction = "GE"} -> tensor<?x?xi1>
  %153 = broadcast_in_dim(%152) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %154 = broadcast_in_dim(%153) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?xi1>
  %155 = constant() {value = -1000000000.0} -> tensor<?x32x?x?>
  %156 = select(%154, %149, %155) -> tensor<?x32x?x?>
  %157 = reduce(%156) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %158 = broadcast_in_dim(%157) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %159 = sub(%156, %158) -> tensor<?x32x?x?>
  %160 = exp(%159) -> tensor<?x32x?x?>
  %161 = reduce(%160) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %162 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %163 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %164 = div(%160, %163) -> tensor<?x32x?x?>
  %165 = integer_pow(%162) {exponent = -2} -> tensor<?x32x?x1>
  %166 = dot_general(%146, %164) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %167 = transpose(%166) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %168 = dot_general(%167, %params_layers_1_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %169 = add(%116, %168) -> tensor<?x?x4096>
  %170 = mul(%169, %169) -> tensor<?x?x4096>
  %171 = reduce(%170) {dims = [2], kind = "sum"} -> tensor<?x?>
  %172 = broadcast_in_dim(%171) {dims = [0, 1]} -> tensor<?x?x1>
  %173 = constant() {value = 4096.0} -> tensor<?x?x1>
  %174 = div(%172, %173) -> tensor<?x?x1>
  %175 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %176 = add(%174, %175) -> tensor<?x?x1>
  %177 = rsqrt(%176) -> tensor<?x?x1>
  %178 = div(%177, %176) -> tensor<?x?x1>
  %179 = constant() {value = -0.5} -> tensor<?x?x1>
  %180 = mul(%179, %178) -> tensor<?x?x1>
  %181 = broadcast_in_dim(%177) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %182 = mul(%169, %181) -> tensor<?x?x4096>
  %183 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %184 = mul(%182, %183) -> tensor<?x?x4096>
  %185 = dot_general(%184, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %186 = dot_general(%184, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %187 = logistic(%185) -> tensor<?x?x11008>
  %188 = constant() {value = 1.0} -> tensor<?x?x11008>
  %189 = sub(%188, %187) -> tensor<?x?x11008>
  %190 = mul(%187, %189) -> tensor<?x?x11008>
  %191 = mul(%185, %187) -> tensor<?x?x11008>
  %192 = mul(%191, %186) -> tensor<?x?x11008>
  %193 = dot_general(%192, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %194 = add(%169, %193) -> tensor<?x?x4096>
  %195 = mul(%194, %194) -> tensor<?x?x4096>
  %196 = reduce(%195) {dims = [2], kind = "sum"} -> tensor<?x?>
  %197 = broadcast_in_dim(%196) {dims = [0, 1]} -> tensor<?x?x1>
  %198 = constant() {value = 4096.0} -> tensor<?x?x1>
  %199 = div(%197, %198) -> tensor<?x?x1>
  %200 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %201 = add(%199, %200) -> tensor<?x?x1>
  %202 = rsqrt(%201) -> tensor<?x?x1>
  %203 = div(%202, %201) -> tensor<?x?x1>
  %204 = constant() {value = -0.5} -> tensor<?x?x1>
  %205 = mul(%204, %203) -> tensor<?x?x1>
  %206 = broadcast_in_dim(%202) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %207 = mul(%194, %206) -> tensor<?x?x4096>
  %208 = broadcast_in_dim(%params_layers_2_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %209 = mul(%207, %208) -> tensor<?x?x4096>
  %210 = dot_general(%209, %params_layers_2_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %211 = dot_general(%210, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %212 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %213 = mul(%210, %212) -> tensor<?x?x32x128>
  %214 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %215 = mul(%211, %214) -> tensor<?x?x32x128>
  %216 = add(%213, %215) -> tensor<?x?x32x128>
  %217 = dot_general(%209, %params_layers_2_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %218 = dot_general(%217, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %219 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %220 = mul(%217, %219) -> tensor<?x?x32x128>
  %221 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %222 = mul(%218, %221) -> tensor<?x?x32x128>
  %223 = add(%220, %222) -> tensor<?x?x32x128>
  %224 = dot_general(%209, %params_layers_2_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %225 = dot_general(%216, %223) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %226 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %227 = mul(%225, %226) -> tensor<?x32x?x?>
  %228 = iota() {dim = 0} -> tensor<?x?xi32>
  %229 = iota() {dim = 1} -> tensor<?x?xi32>
  %230 = compare(%228, %229) {direction = "GE"} -> tensor<?x?xi1>
  %231 = broadcast_in_dim(%230) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %232 = broadcast_in_dim(%231) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?xi1>
  %233 = constant() {value = -1000000000.0} -> tensor<?x32x?x?>
  %234 = select(%232, %227, %233) -> tensor<?x32x?x?>
  %235 = reduce(%234) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %236 = broadcast_in_dim(%235) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %237 = sub(%234, %236) -> tensor<?x32x?x?>
  %238 = exp(%237) -> tensor<?x32x?x?>
  %239 = reduce(%238) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %240 = broadcast_in_dim(%239) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %241 = broadcast_in_dim(%239) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %242 = div(%238, %241) -> tensor<?x32x?x?>
  %243 = integer_pow(%240) {exponent = -2} -> tensor<?x32x?x1>
  %244 = dot_general(%224, %242) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %245 = transpose(%244) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %246 = dot_general(%245, %params_layers_2_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %247 = add(%194, %246) -> tensor<?x?x4096>
  %248 = mul(%247, %247) -> tensor<?x?x4096>
  %249 = reduce(%248) {dims = [2], kind = "sum"} -> tensor<?x?>
  %250 = broadcast_in_dim(%249) {dims = [0, 1]} -> tensor<?x?x1>
  %251 = constant() {value = 4096.0} -> tensor<?x?x1>
  %252 = div(%250, %251) -> tensor<?x?x1>
  %253 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %254 = add(%252, %253) -> tensor<?x?x1>
  %255 = rsqrt(%254) -> tensor<?x?x1>
  %256 = div(%255, %254) -> tensor<?x?x1>
  %257 = constant() {value = -0.5} -> tensor<?x?x1>
  %258 = mul(%257, %256) -> tensor<?x?x1>
  %259 = broadcast_in_dim(%255) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %260 = mul(%247, %259) -> tensor<?x?x4096>
  %261 = broadcast_in_dim(%params_layers_2_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %262 = mul(%260, %261) -> tensor<?x?x4096>
  %263 = dot_general(%262, %params_layers_2_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %264 = dot_general(%262, %params_layers_2_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %265 = logistic(%263) -> tensor<?x?x11008>
  %266 = constant() {value = 1.0} -> tensor<?x?x11008>
  %267 = sub(%266, %265) -> tensor<?x?x11008>
  %268 = mul(%265, %267) -> tensor<?x?x11008>
  %269 = mul(%263, %265) -> tensor<?x?x11008>
  %270 = mul(%269, %264) -> tensor<?x?x11008>
  %271 = dot_general(%270, %params_layers_2_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %272 = add(%247, %271) -> tensor<?x?x4096>
  %273 = mul(%272, %272) -> tensor<?x?x4096>
  %274 = reduce(%273) {dims = [2], kind = "sum"} -> tensor<?x?>
  %275 = broadcast_in_dim(%274) {dims = [0, 1]} -> tensor<?x?x1>
  %276 = constant() {value = 4096.0} -> tensor<?x?x1>
  %277 = div(%275, %276) -> tensor<?x?x1>
  %278 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %279 = add(%277, %278) -> tensor<?x?x1>
  %280 = rsqrt(%279) -> tensor<?x?x1>
  %281 = div(%280, %279) -> tensor<?x?x1>
  %282 = constant() {value = -0.5} -> tensor<?x?x1>
  %283 = mul(%282, %281) -> tensor<?x?x1>
  %284 = broadcast_in_dim(%280) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %285 = mul(%272, %284) -> tensor<?x?x4096>
  %286 = broadcast_in_dim(%params_layers_3_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %287 = mul(%285, %286) -> tensor<?x?x4096>
  %288 = dot_general(%287, %params_layers_3_wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %289 = dot_general(%288, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %290 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %291 = mul(%288, %290) -> tensor<?x?x32x128>
  %292 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %293 = mul(%289, %292) -> tensor<?x?x32x128>
  %294 = add(%291, %293) -> tensor<?x?x32x128>
  %295 = dot_general(%287, %params_layers_3_wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %296 = dot_general(%295, %36) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %297 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %298 = mul(%295, %297) -> tensor<?x?x32x128>
  %299 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %300 = mul(%296, %299) -> tensor<?x?x32x128>
  %301 = add(%298, %300) -> tensor<?x?x32x128>
  %302 = dot_general(%287, %params_layers_3_wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %303 = dot_general(%294, %301) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %304 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %305 = mul(%303, %304) -> tensor<?x32x?x?>
  %306 = iota() {dim = 0} -> tensor<?x?xi32>
  %307 = iota() {dim = 1} -> tensor<?x?xi32>
  %308 = compare(%306, %307) {direction = "GE"} -> tensor<?x?xi1>
  %309 = broadcast_in_dim(%308) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %310 = broadcast_in_dim(%309) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?xi1>
  %311 = constant() {value = -1000000000.0} -> tensor<?x32x?x?>
  %312 = select(%310, %305, %311) -> tensor<?x32x?x?>
  %313 = reduce(%312) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %314 = broadcast_in_dim(%313) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %315 = sub(%312, %314) -> tensor<?x32x?x?>
  %316 = exp(%315) -> tensor<?x32x?x?>
  %317 = reduce(%316) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %318 = broadcast_in_dim(%317) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %319 = broadcast_in_dim(%317) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %320 = div(%316, %319) -> tensor<?x32x?x?>
  %321 = integer_pow(%318) {exponent = -2} -> tensor<?x32x?x1>
  %322 = dot_general(%302, %320) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %323 = transpose(%322) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %324 = dot_general(%323, %params_layers_3_wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %325 = add(%272, %324) -> tensor<?x?x4096>
  %326 = mul(%325, %325) -> tensor<?x?x4096>
  %327 = reduce(%326) {dims = [2], kind = "sum"} -> tensor<?x?>
  %328 = broadcast_in_dim(%327) {dims = [0, 1]} -> tensor<?x?x1>
  %329 = constant() {value = 4096.0} -> tensor<?x?x1>
  %330 = div(%328, %329) -> tensor<?x?x1>
  %331 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %332 = add(%330, %331) -> tensor<?x?x1>
  %333 = rsqrt(%332) -> tensor<?x?x1>
  %334 = div(%333, %332) -> tensor<?x?x1>
  %335 = constant() {value = -0.5} -> tensor<?x?x1>
  %336 = mul(%335, %334) -> tensor<?x?x1>
  %337 = broadcast_in_dim(%333) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %338 = mul(%325, %337) -> tensor<?x?x4096>
  %339 = broadcast_in_dim(%params_layers_3_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %340 = mul(%338, %339) -> tensor<?x?x4096>
  %341 = dot_general(%340, %params_layers_3_w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %342 = dot_general(%340, %params_layers_3_w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %343 = logistic(%341) -> tensor<?x?x11008>
  %344 = constant() {value = 1.0} -> tensor<?x?x11008>
  %345 = sub(%344, %343) -> tensor<?x?x11008>
  %346 = mul(%343, %345) -> tensor<?x?x11008>
  %347 = mul(%341, %343) -> tensor<?x?x11008>
  %348 = mul(%347, %342) -> tensor<?x?x11008>
  %349 = dot_general(%348, %params_layers_3_w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %350 = add(%325, %349) -> tensor<?x?x4096>
  %351 = mul(%350, %350) -> tensor<?x?x4096>
  %352 = reduce(%351) {dims = [2], kind = "sum"} -> tensor<?x?>
  %353 = broadcast_in_dim(%352) {dims = [0, 1]} -> tensor<?x?x1>
  %354 = constant() {value = 4096.0} -> tensor<?x?x1>
  %355 = div(%353, %354) -> tensor<?x?x1>
  %356 = constant() {value = 9.999999747378752e-06} -> tensor<?x?x1>
  %357 = add(%355, %356) -> tensor<?x?x1>
  %358 = rsqrt(%357) -> tensor<?x?x1>
  %359 = div(%358, %357) -> tensor<?x?x1>
  %360 = constant() {value = -0.5} -> tensor<?x?x1>
  %361 = mul(%360, %359) -> tensor<?x?x1>
  %362 = broadcast_in_dim(%358) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %363 = mul(%350, %362) -> tensor<?x?x4096>
  %364 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x4096>
  %365 = mul(%363, %364) -> tensor<?x?x4096>
  %366 = dot_general(%365, %params_lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32000>
  %367 = reduce(%366) {dims = [2], kind = "max"} -> tensor<?x?>
  %368 = broadcast_in_dim(%367) {dims = [0, 1]} -> tensor<?x?x32000>
  %369 = sub(%366, %368) -> tensor<?x?x32000>
  %370 = exp(%369) -> tensor<?x?x32000>
  %371 = reduce(%370) {dims = [2], kind = "sum"} -> tensor<?x?>
  %372 = log(%371) -> tensor<?x?>
  %373 = add(%372, %367) -> tensor<?x?>
  %374 = iota() {dim = 2} -> tensor<?x?x32000xi32>
  %375 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x32000xi32>
  %376 = compare(%374, %375) {direction = "EQ"} -> tensor<?x?x32000xi1>
  %377 = convert(%376) {dtype = "f32"} -> tensor<?x?x32000>
  %378 = mul(%366, %377) -> tensor<?x?x32000>
  %379 = reduce(%378) {dims = [2], kind = "sum"} -> tensor<?x?>
  %380 = sub(%373, %379) -> tensor<?x?>
  %381 = mul(%380, %mask) -> tensor<?x?>
  %382 = reduce(%381) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %383 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %384 = constant() {value = 1.0} -> tensor<f32>
  %385 = max(%383, %384) -> tensor<f32>
  %loss = div(%382, %385) -> tensor<f32>
  %386 = constant() {value = 1.0} -> tensor<f32>
  %387 = div(%386, %385) -> tensor<f32>
  %388 = broadcast_in_dim(%387) {dims = []} -> tensor<?x?>
  %389 = mul(%388, %mask) -> tensor<?x?>
  %390 = neg(%389) -> tensor<?x?>
  %391 = broadcast_in_dim(%390) {dims = [0, 1]} -> tensor<?x?x32000>
  %392 = mul(%391, %377) -> tensor<?x?x32000>
  %393 = div(%389, %371) -> tensor<?x?>
  %394 = broadcast_in_dim(%393) {dims = [0, 1]} -> tensor<?x?x32000>
  %395 = mul(%394, %370) -> tensor<?x?x32000>
  %396 = add(%392, %395) -> tensor<?x?x32000>
  %397 = dot_general(%396, %365) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32000x4096>
  %398 = transpose(%397) {perm = [1, 0]} -> tensor<4096x32000>
  %399 = dot_general(%396, %params_lm_head) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %400 = mul(%363, %399) -> tensor<?x?x4096>
  %401 = reduce(%400) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %402 = broadcast_in_dim(%401) {dims = [2]} -> tensor<1x1x4096>
  %403 = broadcast_in_dim(%params_final_norm) {dims = [2]} -> tensor<?x?x4096>
  %404 = mul(%399, %403) -> tensor<?x?x4096>
  %405 = reduce(%402) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %406 = mul(%350, %404) -> tensor<?x?x4096>
  %407 = reduce(%406) {dims = [2], kind = "sum"} -> tensor<?x?>
  %408 = broadcast_in_dim(%407) {dims = [0, 1]} -> tensor<?x?x1>
  %409 = broadcast_in_dim(%358) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %410 = mul(%404, %409) -> tensor<?x?x4096>
  %411 = mul(%408, %361) -> tensor<?x?x1>
  %412 = constant() {value = 4096.0} -> tensor<?x?x1>
  %413 = div(%411, %412) -> tensor<?x?x1>
  %414 = reduce(%413) {dims = [2], kind = "sum"} -> tensor<?x?>
  %415 = broadcast_in_dim(%414) {dims = [0, 1]} -> tensor<?x?x4096>
  %416 = mul(%350, %415) -> tensor<?x?x4096>
  %417 = add(%410, %416) -> tensor<?x?x4096>
  %418 = mul(%415, %350) -> tensor<?x?x4096>
  %419 = add(%417, %418) -> tensor<?x?x4096>
  %420 = dot_general(%419, %348) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %421 = transpose(%420) {perm = [1, 0]} -> tensor<11008x4096>
  %422 = dot_general(%419, %params_layers_3_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %423 = mul(%347, %422) -> tensor<?x?x11008>
  %424 = mul(%422, %342) -> tensor<?x?x11008>
  %425 = mul(%341, %424) -> tensor<?x?x11008>
  %426 = mul(%424, %343) -> tensor<?x?x11008>
  %427 = mul(%425, %346) -> tensor<?x?x11008>
  %428 = add(%426, %427) -> tensor<?x?x11008>
  %429 = dot_general(%423, %340) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %430 = transpose(%429) {perm = [1, 0]} -> tensor<4096x11008>
  %431 = dot_general(%423, %params_layers_3_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %432 = dot_general(%428, %340) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %433 = transpose(%432) {perm = [1, 0]} -> tensor<4096x11008>
  %434 = dot_general(%428, %params_layers_3_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %435 = add(%431, %434) -> tensor<?x?x4096>
  %436 = mul(%338, %435) -> tensor<?x?x4096>
  %437 = reduce(%436) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %438 = broadcast_in_dim(%437) {dims = [2]} -> tensor<1x1x4096>
  %439 = broadcast_in_dim(%params_layers_3_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %440 = mul(%435, %439) -> tensor<?x?x4096>
  %441 = reduce(%438) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %442 = mul(%325, %440) -> tensor<?x?x4096>
  %443 = reduce(%442) {dims = [2], kind = "sum"} -> tensor<?x?>
  %444 = broadcast_in_dim(%443) {dims = [0, 1]} -> tensor<?x?x1>
  %445 = broadcast_in_dim(%333) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %446 = mul(%440, %445) -> tensor<?x?x4096>
  %447 = add(%419, %446) -> tensor<?x?x4096>
  %448 = mul(%444, %336) -> tensor<?x?x1>
  %449 = constant() {value = 4096.0} -> tensor<?x?x1>
  %450 = div(%448, %449) -> tensor<?x?x1>
  %451 = reduce(%450) {dims = [2], kind = "sum"} -> tensor<?x?>
  %452 = broadcast_in_dim(%451) {dims = [0, 1]} -> tensor<?x?x4096>
  %453 = mul(%325, %452) -> tensor<?x?x4096>
  %454 = add(%447, %453) -> tensor<?x?x4096>
  %455 = mul(%452, %325) -> tensor<?x?x4096>
  %456 = add(%454, %455) -> tensor<?x?x4096>
  %457 = dot_general(%456, %323) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %458 = transpose(%457) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %459 = dot_general(%456, %params_layers_3_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %460 = transpose(%459) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %461 = dot_general(%460, %302) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %462 = dot_general(%460, %320) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %463 = transpose(%462) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %464 = broadcast_in_dim(%321) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?>
  %465 = mul(%461, %464) -> tensor<?x32x?x?>
  %466 = mul(%465, %316) -> tensor<?x32x?x?>
  %467 = reduce(%466) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %468 = broadcast_in_dim(%467) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %469 = neg(%468) -> tensor<?x32x?x1>
  %470 = broadcast_in_dim(%317) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %471 = div(%461, %470) -> tensor<?x32x?x?>
  %472 = reduce(%469) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %473 = broadcast_in_dim(%472) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %474 = add(%471, %473) -> tensor<?x32x?x?>
  %475 = mul(%474, %316) -> tensor<?x32x?x?>
  %476 = constant() {value = 0.0} -> tensor<?x32x?x?>
  %477 = select(%310, %475, %476) -> tensor<?x32x?x?>
  %478 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %479 = mul(%477, %478) -> tensor<?x32x?x?>
  %480 = dot_general(%479, %294) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %481 = transpose(%480) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %482 = dot_general(%479, %301) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %483 = transpose(%482) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %484 = dot_general(%463, %287) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %485 = transpose(%484) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %486 = dot_general(%463, %params_layers_3_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %487 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %488 = mul(%481, %487) -> tensor<?x?x32x128>
  %489 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %490 = mul(%481, %489) -> tensor<?x?x32x128>
  %491 = dot_general(%488, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %492 = add(%490, %491) -> tensor<?x?x32x128>
  %493 = dot_general(%492, %287) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %494 = transpose(%493) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %495 = dot_general(%492, %params_layers_3_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %496 = add(%486, %495) -> tensor<?x?x4096>
  %497 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %498 = mul(%483, %497) -> tensor<?x?x32x128>
  %499 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %500 = mul(%483, %499) -> tensor<?x?x32x128>
  %501 = dot_general(%498, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %502 = add(%500, %501) -> tensor<?x?x32x128>
  %503 = dot_general(%502, %287) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %504 = transpose(%503) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %505 = dot_general(%502, %params_layers_3_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %506 = add(%496, %505) -> tensor<?x?x4096>
  %507 = mul(%285, %506) -> tensor<?x?x4096>
  %508 = reduce(%507) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %509 = broadcast_in_dim(%508) {dims = [2]} -> tensor<1x1x4096>
  %510 = broadcast_in_dim(%params_layers_3_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %511 = mul(%506, %510) -> tensor<?x?x4096>
  %512 = reduce(%509) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %513 = mul(%272, %511) -> tensor<?x?x4096>
  %514 = reduce(%513) {dims = [2], kind = "sum"} -> tensor<?x?>
  %515 = broadcast_in_dim(%514) {dims = [0, 1]} -> tensor<?x?x1>
  %516 = broadcast_in_dim(%280) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %517 = mul(%511, %516) -> tensor<?x?x4096>
  %518 = add(%456, %517) -> tensor<?x?x4096>
  %519 = mul(%515, %283) -> tensor<?x?x1>
  %520 = constant() {value = 4096.0} -> tensor<?x?x1>
  %521 = div(%519, %520) -> tensor<?x?x1>
  %522 = reduce(%521) {dims = [2], kind = "sum"} -> tensor<?x?>
  %523 = broadcast_in_dim(%522) {dims = [0, 1]} -> tensor<?x?x4096>
  %524 = mul(%272, %523) -> tensor<?x?x4096>
  %525 = add(%518, %524) -> tensor<?x?x4096>
  %526 = mul(%523, %272) -> tensor<?x?x4096>
  %527 = add(%525, %526) -> tensor<?x?x4096>
  %528 = dot_general(%527, %270) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %529 = transpose(%528) {perm = [1, 0]} -> tensor<11008x4096>
  %530 = dot_general(%527, %params_layers_2_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %531 = mul(%269, %530) -> tensor<?x?x11008>
  %532 = mul(%530, %264) -> tensor<?x?x11008>
  %533 = mul(%263, %532) -> tensor<?x?x11008>
  %534 = mul(%532, %265) -> tensor<?x?x11008>
  %535 = mul(%533, %268) -> tensor<?x?x11008>
  %536 = add(%534, %535) -> tensor<?x?x11008>
  %537 = dot_general(%531, %262) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %538 = transpose(%537) {perm = [1, 0]} -> tensor<4096x11008>
  %539 = dot_general(%531, %params_layers_2_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %540 = dot_general(%536, %262) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %541 = transpose(%540) {perm = [1, 0]} -> tensor<4096x11008>
  %542 = dot_general(%536, %params_layers_2_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %543 = add(%539, %542) -> tensor<?x?x4096>
  %544 = mul(%260, %543) -> tensor<?x?x4096>
  %545 = reduce(%544) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %546 = broadcast_in_dim(%545) {dims = [2]} -> tensor<1x1x4096>
  %547 = broadcast_in_dim(%params_layers_2_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %548 = mul(%543, %547) -> tensor<?x?x4096>
  %549 = reduce(%546) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %550 = mul(%247, %548) -> tensor<?x?x4096>
  %551 = reduce(%550) {dims = [2], kind = "sum"} -> tensor<?x?>
  %552 = broadcast_in_dim(%551) {dims = [0, 1]} -> tensor<?x?x1>
  %553 = broadcast_in_dim(%255) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %554 = mul(%548, %553) -> tensor<?x?x4096>
  %555 = add(%527, %554) -> tensor<?x?x4096>
  %556 = mul(%552, %258) -> tensor<?x?x1>
  %557 = constant() {value = 4096.0} -> tensor<?x?x1>
  %558 = div(%556, %557) -> tensor<?x?x1>
  %559 = reduce(%558) {dims = [2], kind = "sum"} -> tensor<?x?>
  %560 = broadcast_in_dim(%559) {dims = [0, 1]} -> tensor<?x?x4096>
  %561 = mul(%247, %560) -> tensor<?x?x4096>
  %562 = add(%555, %561) -> tensor<?x?x4096>
  %563 = mul(%560, %247) -> tensor<?x?x4096>
  %564 = add(%562, %563) -> tensor<?x?x4096>
  %565 = dot_general(%564, %245) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %566 = transpose(%565) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %567 = dot_general(%564, %params_layers_2_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %568 = transpose(%567) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %569 = dot_general(%568, %224) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %570 = dot_general(%568, %242) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %571 = transpose(%570) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %572 = broadcast_in_dim(%243) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?>
  %573 = mul(%569, %572) -> tensor<?x32x?x?>
  %574 = mul(%573, %238) -> tensor<?x32x?x?>
  %575 = reduce(%574) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %576 = broadcast_in_dim(%575) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %577 = neg(%576) -> tensor<?x32x?x1>
  %578 = broadcast_in_dim(%239) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %579 = div(%569, %578) -> tensor<?x32x?x?>
  %580 = reduce(%577) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %581 = broadcast_in_dim(%580) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %582 = add(%579, %581) -> tensor<?x32x?x?>
  %583 = mul(%582, %238) -> tensor<?x32x?x?>
  %584 = constant() {value = 0.0} -> tensor<?x32x?x?>
  %585 = select(%232, %583, %584) -> tensor<?x32x?x?>
  %586 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %587 = mul(%585, %586) -> tensor<?x32x?x?>
  %588 = dot_general(%587, %216) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %589 = transpose(%588) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %590 = dot_general(%587, %223) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %591 = transpose(%590) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %592 = dot_general(%571, %209) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %593 = transpose(%592) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %594 = dot_general(%571, %params_layers_2_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %595 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %596 = mul(%589, %595) -> tensor<?x?x32x128>
  %597 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %598 = mul(%589, %597) -> tensor<?x?x32x128>
  %599 = dot_general(%596, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %600 = add(%598, %599) -> tensor<?x?x32x128>
  %601 = dot_general(%600, %209) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %602 = transpose(%601) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %603 = dot_general(%600, %params_layers_2_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %604 = add(%594, %603) -> tensor<?x?x4096>
  %605 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %606 = mul(%591, %605) -> tensor<?x?x32x128>
  %607 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %608 = mul(%591, %607) -> tensor<?x?x32x128>
  %609 = dot_general(%606, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %610 = add(%608, %609) -> tensor<?x?x32x128>
  %611 = dot_general(%610, %209) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %612 = transpose(%611) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %613 = dot_general(%610, %params_layers_2_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %614 = add(%604, %613) -> tensor<?x?x4096>
  %615 = mul(%207, %614) -> tensor<?x?x4096>
  %616 = reduce(%615) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %617 = broadcast_in_dim(%616) {dims = [2]} -> tensor<1x1x4096>
  %618 = broadcast_in_dim(%params_layers_2_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %619 = mul(%614, %618) -> tensor<?x?x4096>
  %620 = reduce(%617) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %621 = mul(%194, %619) -> tensor<?x?x4096>
  %622 = reduce(%621) {dims = [2], kind = "sum"} -> tensor<?x?>
  %623 = broadcast_in_dim(%622) {dims = [0, 1]} -> tensor<?x?x1>
  %624 = broadcast_in_dim(%202) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %625 = mul(%619, %624) -> tensor<?x?x4096>
  %626 = add(%564, %625) -> tensor<?x?x4096>
  %627 = mul(%623, %205) -> tensor<?x?x1>
  %628 = constant() {value = 4096.0} -> tensor<?x?x1>
  %629 = div(%627, %628) -> tensor<?x?x1>
  %630 = reduce(%629) {dims = [2], kind = "sum"} -> tensor<?x?>
  %631 = broadcast_in_dim(%630) {dims = [0, 1]} -> tensor<?x?x4096>
  %632 = mul(%194, %631) -> tensor<?x?x4096>
  %633 = add(%626, %632) -> tensor<?x?x4096>
  %634 = mul(%631, %194) -> tensor<?x?x4096>
  %635 = add(%633, %634) -> tensor<?x?x4096>
  %636 = dot_general(%635, %192) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %637 = transpose(%636) {perm = [1, 0]} -> tensor<11008x4096>
  %638 = dot_general(%635, %params_layers_1_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %639 = mul(%191, %638) -> tensor<?x?x11008>
  %640 = mul(%638, %186) -> tensor<?x?x11008>
  %641 = mul(%185, %640) -> tensor<?x?x11008>
  %642 = mul(%640, %187) -> tensor<?x?x11008>
  %643 = mul(%641, %190) -> tensor<?x?x11008>
  %644 = add(%642, %643) -> tensor<?x?x11008>
  %645 = dot_general(%639, %184) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %646 = transpose(%645) {perm = [1, 0]} -> tensor<4096x11008>
  %647 = dot_general(%639, %params_layers_1_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %648 = dot_general(%644, %184) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %649 = transpose(%648) {perm = [1, 0]} -> tensor<4096x11008>
  %650 = dot_general(%644, %params_layers_1_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %651 = add(%647, %650) -> tensor<?x?x4096>
  %652 = mul(%182, %651) -> tensor<?x?x4096>
  %653 = reduce(%652) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %654 = broadcast_in_dim(%653) {dims = [2]} -> tensor<1x1x4096>
  %655 = broadcast_in_dim(%params_layers_1_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %656 = mul(%651, %655) -> tensor<?x?x4096>
  %657 = reduce(%654) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %658 = mul(%169, %656) -> tensor<?x?x4096>
  %659 = reduce(%658) {dims = [2], kind = "sum"} -> tensor<?x?>
  %660 = broadcast_in_dim(%659) {dims = [0, 1]} -> tensor<?x?x1>
  %661 = broadcast_in_dim(%177) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %662 = mul(%656, %661) -> tensor<?x?x4096>
  %663 = add(%635, %662) -> tensor<?x?x4096>
  %664 = mul(%660, %180) -> tensor<?x?x1>
  %665 = constant() {value = 4096.0} -> tensor<?x?x1>
  %666 = div(%664, %665) -> tensor<?x?x1>
  %667 = reduce(%666) {dims = [2], kind = "sum"} -> tensor<?x?>
  %668 = broadcast_in_dim(%667) {dims = [0, 1]} -> tensor<?x?x4096>
  %669 = mul(%169, %668) -> tensor<?x?x4096>
  %670 = add(%663, %669) -> tensor<?x?x4096>
  %671 = mul(%668, %169) -> tensor<?x?x4096>
  %672 = add(%670, %671) -> tensor<?x?x4096>
  %673 = dot_general(%672, %167) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %674 = transpose(%673) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %675 = dot_general(%672, %params_layers_1_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %676 = transpose(%675) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %677 = dot_general(%676, %146) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %678 = dot_general(%676, %164) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %679 = transpose(%678) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %680 = broadcast_in_dim(%165) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?>
  %681 = mul(%677, %680) -> tensor<?x32x?x?>
  %682 = mul(%681, %160) -> tensor<?x32x?x?>
  %683 = reduce(%682) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %684 = broadcast_in_dim(%683) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %685 = neg(%684) -> tensor<?x32x?x1>
  %686 = broadcast_in_dim(%161) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %687 = div(%677, %686) -> tensor<?x32x?x?>
  %688 = reduce(%685) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %689 = broadcast_in_dim(%688) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %690 = add(%687, %689) -> tensor<?x32x?x?>
  %691 = mul(%690, %160) -> tensor<?x32x?x?>
  %692 = constant() {value = 0.0} -> tensor<?x32x?x?>
  %693 = select(%154, %691, %692) -> tensor<?x32x?x?>
  %694 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %695 = mul(%693, %694) -> tensor<?x32x?x?>
  %696 = dot_general(%695, %138) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %697 = transpose(%696) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %698 = dot_general(%695, %145) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %699 = transpose(%698) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %700 = dot_general(%679, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %701 = transpose(%700) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %702 = dot_general(%679, %params_layers_1_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %703 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %704 = mul(%697, %703) -> tensor<?x?x32x128>
  %705 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %706 = mul(%697, %705) -> tensor<?x?x32x128>
  %707 = dot_general(%704, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %708 = add(%706, %707) -> tensor<?x?x32x128>
  %709 = dot_general(%708, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %710 = transpose(%709) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %711 = dot_general(%708, %params_layers_1_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %712 = add(%702, %711) -> tensor<?x?x4096>
  %713 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %714 = mul(%699, %713) -> tensor<?x?x32x128>
  %715 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %716 = mul(%699, %715) -> tensor<?x?x32x128>
  %717 = dot_general(%714, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %718 = add(%716, %717) -> tensor<?x?x32x128>
  %719 = dot_general(%718, %131) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %720 = transpose(%719) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %721 = dot_general(%718, %params_layers_1_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %722 = add(%712, %721) -> tensor<?x?x4096>
  %723 = mul(%129, %722) -> tensor<?x?x4096>
  %724 = reduce(%723) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %725 = broadcast_in_dim(%724) {dims = [2]} -> tensor<1x1x4096>
  %726 = broadcast_in_dim(%params_layers_1_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %727 = mul(%722, %726) -> tensor<?x?x4096>
  %728 = reduce(%725) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %729 = mul(%116, %727) -> tensor<?x?x4096>
  %730 = reduce(%729) {dims = [2], kind = "sum"} -> tensor<?x?>
  %731 = broadcast_in_dim(%730) {dims = [0, 1]} -> tensor<?x?x1>
  %732 = broadcast_in_dim(%124) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %733 = mul(%727, %732) -> tensor<?x?x4096>
  %734 = add(%672, %733) -> tensor<?x?x4096>
  %735 = mul(%731, %127) -> tensor<?x?x1>
  %736 = constant() {value = 4096.0} -> tensor<?x?x1>
  %737 = div(%735, %736) -> tensor<?x?x1>
  %738 = reduce(%737) {dims = [2], kind = "sum"} -> tensor<?x?>
  %739 = broadcast_in_dim(%738) {dims = [0, 1]} -> tensor<?x?x4096>
  %740 = mul(%116, %739) -> tensor<?x?x4096>
  %741 = add(%734, %740) -> tensor<?x?x4096>
  %742 = mul(%739, %116) -> tensor<?x?x4096>
  %743 = add(%741, %742) -> tensor<?x?x4096>
  %744 = dot_general(%743, %114) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %745 = transpose(%744) {perm = [1, 0]} -> tensor<11008x4096>
  %746 = dot_general(%743, %params_layers_0_w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %747 = mul(%113, %746) -> tensor<?x?x11008>
  %748 = mul(%746, %108) -> tensor<?x?x11008>
  %749 = mul(%107, %748) -> tensor<?x?x11008>
  %750 = mul(%748, %109) -> tensor<?x?x11008>
  %751 = mul(%749, %112) -> tensor<?x?x11008>
  %752 = add(%750, %751) -> tensor<?x?x11008>
  %753 = dot_general(%747, %106) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %754 = transpose(%753) {perm = [1, 0]} -> tensor<4096x11008>
  %755 = dot_general(%747, %params_layers_0_w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %756 = dot_general(%752, %106) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %757 = transpose(%756) {perm = [1, 0]} -> tensor<4096x11008>
  %758 = dot_general(%752, %params_layers_0_w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %759 = add(%755, %758) -> tensor<?x?x4096>
  %760 = mul(%104, %759) -> tensor<?x?x4096>
  %761 = reduce(%760) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %762 = broadcast_in_dim(%761) {dims = [2]} -> tensor<1x1x4096>
  %763 = broadcast_in_dim(%params_layers_0_mlp_norm) {dims = [2]} -> tensor<?x?x4096>
  %764 = mul(%759, %763) -> tensor<?x?x4096>
  %765 = reduce(%762) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %766 = mul(%91, %764) -> tensor<?x?x4096>
  %767 = reduce(%766) {dims = [2], kind = "sum"} -> tensor<?x?>
  %768 = broadcast_in_dim(%767) {dims = [0, 1]} -> tensor<?x?x1>
  %769 = broadcast_in_dim(%99) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %770 = mul(%764, %769) -> tensor<?x?x4096>
  %771 = add(%743, %770) -> tensor<?x?x4096>
  %772 = mul(%768, %102) -> tensor<?x?x1>
  %773 = constant() {value = 4096.0} -> tensor<?x?x1>
  %774 = div(%772, %773) -> tensor<?x?x1>
  %775 = reduce(%774) {dims = [2], kind = "sum"} -> tensor<?x?>
  %776 = broadcast_in_dim(%775) {dims = [0, 1]} -> tensor<?x?x4096>
  %777 = mul(%91, %776) -> tensor<?x?x4096>
  %778 = add(%771, %777) -> tensor<?x?x4096>
  %779 = mul(%776, %91) -> tensor<?x?x4096>
  %780 = add(%778, %779) -> tensor<?x?x4096>
  %781 = dot_general(%780, %89) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %782 = transpose(%781) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %783 = dot_general(%780, %params_layers_0_wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %784 = transpose(%783) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %785 = dot_general(%784, %68) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %786 = dot_general(%784, %86) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %787 = transpose(%786) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %788 = broadcast_in_dim(%87) {dims = [0, 1, 2, 3]} -> tensor<?x32x?x?>
  %789 = mul(%785, %788) -> tensor<?x32x?x?>
  %790 = mul(%789, %82) -> tensor<?x32x?x?>
  %791 = reduce(%790) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %792 = broadcast_in_dim(%791) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %793 = neg(%792) -> tensor<?x32x?x1>
  %794 = broadcast_in_dim(%83) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %795 = div(%785, %794) -> tensor<?x32x?x?>
  %796 = reduce(%793) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %797 = broadcast_in_dim(%796) {dims = [0, 1, 2]} -> tensor<?x32x?x?>
  %798 = add(%795, %797) -> tensor<?x32x?x?>
  %799 = mul(%798, %82) -> tensor<?x32x?x?>
  %800 = constant() {value = 0.0} -> tensor<?x32x?x?>
  %801 = select(%76, %799, %800) -> tensor<?x32x?x?>
  %802 = constant() {value = 0.0883883461356163} -> tensor<?x32x?x?>
  %803 = mul(%801, %802) -> tensor<?x32x?x?>
  %804 = dot_general(%803, %60) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %805 = transpose(%804) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %806 = dot_general(%803, %67) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %807 = transpose(%806) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %808 = dot_general(%787, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %809 = transpose(%808) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %810 = dot_general(%787, %params_layers_0_wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %811 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %812 = mul(%805, %811) -> tensor<?x?x32x128>
  %813 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %814 = mul(%805, %813) -> tensor<?x?x32x128>
  %815 = dot_general(%812, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %816 = add(%814, %815) -> tensor<?x?x32x128>
  %817 = dot_general(%816, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %818 = transpose(%817) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %819 = dot_general(%816, %params_layers_0_wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %820 = add(%810, %819) -> tensor<?x?x4096>
  %821 = broadcast_in_dim(%38) {dims = [1, 3]} -> tensor<?x?x32x128>
  %822 = mul(%807, %821) -> tensor<?x?x32x128>
  %823 = broadcast_in_dim(%37) {dims = [1, 3]} -> tensor<?x?x32x128>
  %824 = mul(%807, %823) -> tensor<?x?x32x128>
  %825 = dot_general(%822, %36) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %826 = add(%824, %825) -> tensor<?x?x32x128>
  %827 = dot_general(%826, %53) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %828 = transpose(%827) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %829 = dot_general(%826, %params_layers_0_wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %830 = add(%820, %829) -> tensor<?x?x4096>
  %831 = mul(%51, %830) -> tensor<?x?x4096>
  %832 = reduce(%831) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %833 = broadcast_in_dim(%832) {dims = [2]} -> tensor<1x1x4096>
  %834 = broadcast_in_dim(%params_layers_0_attn_norm) {dims = [2]} -> tensor<?x?x4096>
  %835 = mul(%830, %834) -> tensor<?x?x4096>
  %836 = reduce(%833) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %837 = mul(%5, %835) -> tensor<?x?x4096>
  %838 = reduce(%837) {dims = [2], kind = "sum"} -> tensor<?x?>
  %839 = broadcast_in_dim(%838) {dims = [0, 1]} -> tensor<?x?x1>
  %840 = broadcast_in_dim(%46) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %841 = mul(%835, %840) -> tensor<?x?x4096>
  %842 = add(%780, %841) -> tensor<?x?x4096>
  %843 = mul(%839, %49) -> tensor<?x?x1>
  %844 = constant() {value = 4096.0} -> tensor<?x?x1>
  %845 = div(%843, %844) -> tensor<?x?x1>
  %846 = reduce(%845) {dims = [2], kind = "sum"} -> tensor<?x?>
  %847 = broadcast_in_dim(%846) {dims = [0, 1]} -> tensor<?x?x4096>
  %848 = mul(%5, %847) -> tensor<?x?x4096>
  %849 = add(%842, %848) -> tensor<?x?x4096>
  %850 = mul(%847, %5) -> tensor<?x?x4096>
  %851 = add(%849, %850) -> tensor<?x?x4096>
  %852 = constant() {value = 0.0} -> tensor<32000x4096>
  %853 = scatter_add(%852, %4, %851) -> tensor<32000x4096>
  %854 = constant() {value = 0.8999999761581421} -> tensor<32000x4096>
  %855 = mul(%854, %state_m_embed) -> tensor<32000x4096>
  %856 = constant() {value = 0.10000000149011612} -> tensor<32000x4096>
  %857 = mul(%856, %853) -> tensor<32000x4096>
  %new_state_m_embed = add(%855, %857) -> tensor<32000x4096>
  %858 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %859 = mul(%858, %state_m_final_norm) -> tensor<4096>
  %860 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %861 = mul(%860, %405) -> tensor<4096>
  %new_state_m_final_norm = add(%859, %861) -> tensor<4096>
  %862 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %863 = mul(%862, %state_m_layers_0_attn_norm) -> tensor<4096>
  %864 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %865 = mul(%864, %836) -> tensor<4096>
  %new_state_m_layers_0_attn_norm = add(%863, %865) -> tensor<4096>
  %866 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %867 = mul(%866, %state_m_layers_0_mlp_norm) -> tensor<4096>
  %868 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %869 = mul(%868, %765) -> tensor<4096>
  %new_state_m_layers_0_mlp_norm = add(%867, %869) -> tensor<4096>
  %870 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %871 = mul(%870, %state_m_layers_0_w_down) -> tensor<11008x4096>
  %872 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %873 = mul(%872, %745) -> tensor<11008x4096>
  %new_state_m_layers_0_w_down = add(%871, %873) -> tensor<11008x4096>
  %874 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %875 = mul(%874, %state_m_layers_0_w_gate) -> tensor<4096x11008>
  %876 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %877 = mul(%876, %757) -> tensor<4096x11008>
  %new_state_m_layers_0_w_gate = add(%875, %877) -> tensor<4096x11008>
  %878 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %879 = mul(%878, %state_m_layers_0_w_up) -> tensor<4096x11008>
  %880 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %881 = mul(%880, %754) -> tensor<4096x11008>
  %new_state_m_layers_0_w_up = add(%879, %881) -> tensor<4096x11008>
  %882 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %883 = mul(%882, %state_m_layers_0_wk) -> tensor<4096x32x128>
  %884 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %885 = mul(%884, %818) -> tensor<4096x32x128>
  %new_state_m_layers_0_wk = add(%883, %885) -> tensor<4096x32x128>
  %886 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %887 = mul(%886, %state_m_layers_0_wo) -> tensor<32x128x4096>
  %888 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %889 = mul(%888, %782) -> tensor<32x128x4096>
  %new_state_m_layers_0_wo = add(%887, %889) -> tensor<32x128x4096>
  %890 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %891 = mul(%890, %state_m_layers_0_wq) -> tensor<4096x32x128>
  %892 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %893 = mul(%892, %828) -> tensor<4096x32x128>
  %new_state_m_layers_0_wq = add(%891, %893) -> tensor<4096x32x128>
  %894 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %895 = mul(%894, %state_m_layers_0_wv) -> tensor<4096x32x128>
  %896 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %897 = mul(%896, %809) -> tensor<4096x32x128>
  %new_state_m_layers_0_wv = add(%895, %897) -> tensor<4096x32x128>
  %898 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %899 = mul(%898, %state_m_layers_1_attn_norm) -> tensor<4096>
  %900 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %901 = mul(%900, %728) -> tensor<4096>
  %new_state_m_layers_1_attn_norm = add(%899, %901) -> tensor<4096>
  %902 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %903 = mul(%902, %state_m_layers_1_mlp_norm) -> tensor<4096>
  %904 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %905 = mul(%904, %657) -> tensor<4096>
  %new_state_m_layers_1_mlp_norm = add(%903, %905) -> tensor<4096>
  %906 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %907 = mul(%906, %state_m_layers_1_w_down) -> tensor<11008x4096>
  %908 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %909 = mul(%908, %637) -> tensor<11008x4096>
  %new_state_m_layers_1_w_down = add(%907, %909) -> tensor<11008x4096>
  %910 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %911 = mul(%910, %state_m_layers_1_w_gate) -> tensor<4096x11008>
  %912 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %913 = mul(%912, %649) -> tensor<4096x11008>
  %new_state_m_layers_1_w_gate = add(%911, %913) -> tensor<4096x11008>
  %914 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %915 = mul(%914, %state_m_layers_1_w_up) -> tensor<4096x11008>
  %916 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %917 = mul(%916, %646) -> tensor<4096x11008>
  %new_state_m_layers_1_w_up = add(%915, %917) -> tensor<4096x11008>
  %918 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %919 = mul(%918, %state_m_layers_1_wk) -> tensor<4096x32x128>
  %920 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %921 = mul(%920, %710) -> tensor<4096x32x128>
  %new_state_m_layers_1_wk = add(%919, %921) -> tensor<4096x32x128>
  %922 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %923 = mul(%922, %state_m_layers_1_wo) -> tensor<32x128x4096>
  %924 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %925 = mul(%924, %674) -> tensor<32x128x4096>
  %new_state_m_layers_1_wo = add(%923, %925) -> tensor<32x128x4096>
  %926 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %927 = mul(%926, %state_m_layers_1_wq) -> tensor<4096x32x128>
  %928 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %929 = mul(%928, %720) -> tensor<4096x32x128>
  %new_state_m_layers_1_wq = add(%927, %929) -> tensor<4096x32x128>
  %930 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %931 = mul(%930, %state_m_layers_1_wv) -> tensor<4096x32x128>
  %932 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %933 = mul(%932, %701) -> tensor<4096x32x128>
  %new_state_m_layers_1_wv = add(%931, %933) -> tensor<4096x32x128>
  %934 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %935 = mul(%934, %state_m_layers_2_attn_norm) -> tensor<4096>
  %936 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %937 = mul(%936, %620) -> tensor<4096>
  %new_state_m_layers_2_attn_norm = add(%935, %937) -> tensor<4096>
  %938 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %939 = mul(%938, %state_m_layers_2_mlp_norm) -> tensor<4096>
  %940 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %941 = mul(%940, %549) -> tensor<4096>
  %new_state_m_layers_2_mlp_norm = add(%939, %941) -> tensor<4096>
  %942 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %943 = mul(%942, %state_m_layers_2_w_down) -> tensor<11008x4096>
  %944 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %945 = mul(%944, %529) -> tensor<11008x4096>
  %new_state_m_layers_2_w_down = add(%943, %945) -> tensor<11008x4096>
  %946 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %947 = mul(%946, %state_m_layers_2_w_gate) -> tensor<4096x11008>
  %948 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %949 = mul(%948, %541) -> tensor<4096x11008>
  %new_state_m_layers_2_w_gate = add(%947, %949) -> tensor<4096x11008>
  %950 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %951 = mul(%950, %state_m_layers_2_w_up) -> tensor<4096x11008>
  %952 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %953 = mul(%952, %538) -> tensor<4096x11008>
  %new_state_m_layers_2_w_up = add(%951, %953) -> tensor<4096x11008>
  %954 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %955 = mul(%954, %state_m_layers_2_wk) -> tensor<4096x32x128>
  %956 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %957 = mul(%956, %602) -> tensor<4096x32x128>
  %new_state_m_layers_2_wk = add(%955, %957) -> tensor<4096x32x128>
  %958 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %959 = mul(%958, %state_m_layers_2_wo) -> tensor<32x128x4096>
  %960 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %961 = mul(%960, %566) -> tensor<32x128x4096>
  %new_state_m_layers_2_wo = add(%959, %961) -> tensor<32x128x4096>
  %962 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %963 = mul(%962, %state_m_layers_2_wq) -> tensor<4096x32x128>
  %964 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %965 = mul(%964, %612) -> tensor<4096x32x128>
  %new_state_m_layers_2_wq = add(%963, %965) -> tensor<4096x32x128>
  %966 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %967 = mul(%966, %state_m_layers_2_wv) -> tensor<4096x32x128>
  %968 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %969 = mul(%968, %593) -> tensor<4096x32x128>
  %new_state_m_layers_2_wv = add(%967, %969) -> tensor<4096x32x128>
  %970 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %971 = mul(%970, %state_m_layers_3_attn_norm) -> tensor<4096>
  %972 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %973 = mul(%972, %512) -> tensor<4096>
  %new_state_m_layers_3_attn_norm = add(%971, %973) -> tensor<4096>
  %974 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %975 = mul(%974, %state_m_layers_3_mlp_norm) -> tensor<4096>
  %976 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %977 = mul(%976, %441) -> tensor<4096>
  %new_state_m_layers_3_mlp_norm = add(%975, %977) -> tensor<4096>
  %978 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %979 = mul(%978, %state_m_layers_3_w_down) -> tensor<11008x4096>
  %980 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %981 = mul(%980, %421) -> tensor<11008x4096>
  %new_state_m_layers_3_w_down = add(%979, %981) -> tensor<11008x4096>
  %982 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %983 = mul(%982, %state_m_layers_3_w_gate) -> tensor<4096x11008>
  %984 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %985 = mul(%984, %433) -> tensor<4096x11008>
  %new_state_m_layers_3_w_gate = add(%983, %985) -> tensor<4096x11008>
  %986 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %987 = mul(%986, %state_m_layers_3_w_up) -> tensor<4096x11008>
  %988 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %989 = mul(%988, %430) -> tensor<4096x11008>
  %new_state_m_layers_3_w_up = add(%987, %989) -> tensor<4096x11008>
  %990 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %991 = mul(%990, %state_m_layers_3_wk) -> tensor<4096x32x128>
  %992 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %993 = mul(%992, %494) -> tensor<4096x32x128>
  %new_state_m_layers_3_wk = add(%991, %993) -> tensor<4096x32x128>
  %994 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %995 = mul(%994, %state_m_layers_3_wo) -> tensor<32x128x4096>
  %996 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %997 = mul(%996, %458) -> tensor<32x128x4096>
  %new_state_m_layers_3_wo = add(%995, %997) -> tensor<32x128x4096>
  %998 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %999 = mul(%998, %state_m_layers_3_wq) -> tensor<4096x32x128>
  %1000 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1001 = mul(%1000, %504) -> tensor<4096x32x128>
  %new_state_m_layers_3_wq = add(%999, %1001) -> tensor<4096x32x128>
  %1002 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1003 = mul(%1002, %state_m_layers_3_wv) -> tensor<4096x32x128>
  %1004 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1005 = mul(%1004, %485) -> tensor<4096x32x128>
  %new_state_m_layers_3_wv = add(%1003, %1005) -> tensor<4096x32x128>
  %1006 = constant() {value = 0.8999999761581421} -> tensor<4096x32000>
  %1007 = mul(%1006, %state_m_lm_head) -> tensor<4096x32000>
  %1008 = constant() {value = 0.10000000149011612} -> tensor<4096x32000>
  %1009 = mul(%1008, %398) -> tensor<4096x32000>
  %new_state_m_lm_head = add(%1007, %1009) -> tensor<4096x32000>
  %1010 = constant() {value = 0.9990000128746033} -> tensor<32000x4096>
  %1011 = mul(%1010, %state_v_embed) -> tensor<32000x4096>
  %1012 = mul(%853, %853) -> tensor<32000x4096>
  %1013 = constant() {value = 0.0010000000474974513} -> tensor<32000x4096>
  %1014 = mul(%1013, %1012) -> tensor<32000x4096>
  %new_state_v_embed = add(%1011, %1014) -> tensor<32000x4096>
  %1015 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1016 = mul(%1015, %state_v_final_norm) -> tensor<4096>
  %1017 = mul(%405, %405) -> tensor<4096>
  %1018 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1019 = mul(%1018, %1017) -> tensor<4096>
  %new_state_v_final_norm = add(%1016, %1019) -> tensor<4096>
  %1020 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1021 = mul(%1020, %state_v_layers_0_attn_norm) -> tensor<4096>
  %1022 = mul(%836, %836) -> tensor<4096>
  %1023 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1024 = mul(%1023, %1022) -> tensor<4096>
  %new_state_v_layers_0_attn_norm = add(%1021, %1024) -> tensor<4096>
  %1025 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1026 = mul(%1025, %state_v_layers_0_mlp_norm) -> tensor<4096>
  %1027 = mul(%765, %765) -> tensor<4096>
  %1028 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1029 = mul(%1028, %1027) -> tensor<4096>
  %new_state_v_layers_0_mlp_norm = add(%1026, %1029) -> tensor<4096>
  %1030 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1031 = mul(%1030, %state_v_layers_0_w_down) -> tensor<11008x4096>
  %1032 = mul(%745, %745) -> tensor<11008x4096>
  %1033 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1034 = mul(%1033, %1032) -> tensor<11008x4096>
  %new_state_v_layers_0_w_down = add(%1031, %1034) -> tensor<11008x4096>
  %1035 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1036 = mul(%1035, %state_v_layers_0_w_gate) -> tensor<4096x11008>
  %1037 = mul(%757, %757) -> tensor<4096x11008>
  %1038 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1039 = mul(%1038, %1037) -> tensor<4096x11008>
  %new_state_v_layers_0_w_gate = add(%1036, %1039) -> tensor<4096x11008>
  %1040 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1041 = mul(%1040, %state_v_layers_0_w_up) -> tensor<4096x11008>
  %1042 = mul(%754, %754) -> tensor<4096x11008>
  %1043 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1044 = mul(%1043, %1042) -> tensor<4096x11008>
  %new_state_v_layers_0_w_up = add(%1041, %1044) -> tensor<4096x11008>
  %1045 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1046 = mul(%1045, %state_v_layers_0_wk) -> tensor<4096x32x128>
  %1047 = mul(%818, %818) -> tensor<4096x32x128>
  %1048 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1049 = mul(%1048, %1047) -> tensor<4096x32x128>
  %new_state_v_layers_0_wk = add(%1046, %1049) -> tensor<4096x32x128>
  %1050 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1051 = mul(%1050, %state_v_layers_0_wo) -> tensor<32x128x4096>
  %1052 = mul(%782, %782) -> tensor<32x128x4096>
  %1053 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1054 = mul(%1053, %1052) -> tensor<32x128x4096>
  %new_state_v_layers_0_wo = add(%1051, %1054) -> tensor<32x128x4096>
  %1055 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1056 = mul(%1055, %state_v_layers_0_wq) -> tensor<4096x32x128>
  %1057 = mul(%828, %828) -> tensor<4096x32x128>
  %1058 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1059 = mul(%1058, %1057) -> tensor<4096x32x128>
  %new_state_v_layers_0_wq = add(%1056, %1059) -> tensor<4096x32x128>
  %1060 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1061 = mul(%1060, %state_v_layers_0_wv) -> tensor<4096x32x128>
  %1062 = mul(%809, %809) -> tensor<4096x32x128>
  %1063 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1064 = mul(%1063, %1062) -> tensor<4096x32x128>
  %new_state_v_layers_0_wv = add(%1061, %1064) -> tensor<4096x32x128>
  %1065 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1066 = mul(%1065, %state_v_layers_1_attn_norm) -> tensor<4096>
  %1067 = mul(%728, %728) -> tensor<4096>
  %1068 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1069 = mul(%1068, %1067) -> tensor<4096>
  %new_state_v_layers_1_attn_norm = add(%1066, %1069) -> tensor<4096>
  %1070 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1071 = mul(%1070, %state_v_layers_1_mlp_norm) -> tensor<4096>
  %1072 = mul(%657, %657) -> tensor<4096>
  %1073 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1074 = mul(%1073, %1072) -> tensor<4096>
  %new_state_v_layers_1_mlp_norm = add(%1071, %1074) -> tensor<4096>
  %1075 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1076 = mul(%1075, %state_v_layers_1_w_down) -> tensor<11008x4096>
  %1077 = mul(%637, %637) -> tensor<11008x4096>
  %1078 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1079 = mul(%1078, %1077) -> tensor<11008x4096>
  %new_state_v_layers_1_w_down = add(%1076, %1079) -> tensor<11008x4096>
  %1080 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1081 = mul(%1080, %state_v_layers_1_w_gate) -> tensor<4096x11008>
  %1082 = mul(%649, %649) -> tensor<4096x11008>
  %1083 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1084 = mul(%1083, %1082) -> tensor<4096x11008>
  %new_state_v_layers_1_w_gate = add(%1081, %1084) -> tensor<4096x11008>
  %1085 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1086 = mul(%1085, %state_v_layers_1_w_up) -> tensor<4096x11008>
  %1087 = mul(%646, %646) -> tensor<4096x11008>
  %1088 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1089 = mul(%1088, %1087) -> tensor<4096x11008>
  %new_state_v_layers_1_w_up = add(%1086, %1089) -> tensor<4096x11008>
  %1090 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1091 = mul(%1090, %state_v_layers_1_wk) -> tensor<4096x32x128>
  %1092 = mul(%710, %710) -> tensor<4096x32x128>
  %1093 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1094 = mul(%1093, %1092) -> tensor<4096x32x128>
  %new_state_v_layers_1_wk = add(%1091, %1094) -> tensor<4096x32x128>
  %1095 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1096 = mul(%1095, %state_v_layers_1_wo) -> tensor<32x128x4096>
  %1097 = mul(%674, %674) -> tensor<32x128x4096>
  %1098 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1099 = mul(%1098, %1097) -> tensor<32x128x4096>
  %new_state_v_layers_1_wo = add(%1096, %1099) -> tensor<32x128x4096>
  %1100 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1101 = mul(%1100, %state_v_layers_1_wq) -> tensor<4096x32x128>
  %1102 = mul(%720, %720) -> tensor<4096x32x128>
  %1103 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1104 = mul(%1103, %1102) -> tensor<4096x32x128>
  %new_state_v_layers_1_wq = add(%1101, %1104) -> tensor<4096x32x128>
  %1105 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1106 = mul(%1105, %state_v_layers_1_wv) -> tensor<4096x32x128>
  %1107 = mul(%701, %701) -> tensor<4096x32x128>
  %1108 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1109 = mul(%1108, %1107) -> tensor<4096x32x128>
  %new_state_v_layers_1_wv = add(%1106, %1109) -> tensor<4096x32x128>
  %1110 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1111 = mul(%1110, %state_v_layers_2_attn_norm) -> tensor<4096>
  %1112 = mul(%620, %620) -> tensor<4096>
  %1113 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1114 = mul(%1113, %1112) -> tensor<4096>
  %new_state_v_layers_2_attn_norm = add(%1111, %1114) -> tensor<4096>
  %1115 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1116 = mul(%1115, %state_v_layers_2_mlp_norm) -> tensor<4096>
  %1117 = mul(%549, %549) -> tensor<4096>
  %1118 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1119 = mul(%1118, %1117) -> tensor<4096>
  %new_state_v_layers_2_mlp_norm = add(%1116, %1119) -> tensor<4096>
  %1120 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1121 = mul(%1120, %state_v_layers_2_w_down) -> tensor<11008x4096>
  %1122 = mul(%529, %529) -> tensor<11008x4096>
  %1123 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1124 = mul(%1123, %1122) -> tensor<11008x4096>
  %new_state_v_layers_2_w_down = add(%1121, %1124) -> tensor<11008x4096>
  %1125 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1126 = mul(%1125, %state_v_layers_2_w_gate) -> tensor<4096x11008>
  %1127 = mul(%541, %541) -> tensor<4096x11008>
  %1128 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1129 = mul(%1128, %1127) -> tensor<4096x11008>
  %new_state_v_layers_2_w_gate = add(%1126, %1129) -> tensor<4096x11008>
  %1130 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1131 = mul(%1130, %state_v_layers_2_w_up) -> tensor<4096x11008>
  %1132 = mul(%538, %538) -> tensor<4096x11008>
  %1133 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1134 = mul(%1133, %1132) -> tensor<4096x11008>
  %new_state_v_layers_2_w_up = add(%1131, %1134) -> tensor<4096x11008>
  %1135 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1136 = mul(%1135, %state_v_layers_2_wk) -> tensor<4096x32x128>
  %1137 = mul(%602, %602) -> tensor<4096x32x128>
  %1138 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1139 = mul(%1138, %1137) -> tensor<4096x32x128>
  %new_state_v_layers_2_wk = add(%1136, %1139) -> tensor<4096x32x128>
  %1140 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1141 = mul(%1140, %state_v_layers_2_wo) -> tensor<32x128x4096>
  %1142 = mul(%566, %566) -> tensor<32x128x4096>
  %1143 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1144 = mul(%1143, %1142) -> tensor<32x128x4096>
  %new_state_v_layers_2_wo = add(%1141, %1144) -> tensor<32x128x4096>
  %1145 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1146 = mul(%1145, %state_v_layers_2_wq) -> tensor<4096x32x128>
  %1147 = mul(%612, %612) -> tensor<4096x32x128>
  %1148 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1149 = mul(%1148, %1147) -> tensor<4096x32x128>
  %new_state_v_layers_2_wq = add(%1146, %1149) -> tensor<4096x32x128>
  %1150 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1151 = mul(%1150, %state_v_layers_2_wv) -> tensor<4096x32x128>
  %1152 = mul(%593, %593) -> tensor<4096x32x128>
  %1153 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1154 = mul(%1153, %1152) -> tensor<4096x32x128>
  %new_state_v_layers_2_wv = add(%1151, %1154) -> tensor<4096x32x128>
  %1155 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1156 = mul(%1155, %state_v_layers_3_attn_norm) -> tensor<4096>
  %1157 = mul(%512, %512) -> tensor<4096>
  %1158 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1159 = mul(%1158, %1157) -> tensor<4096>
  %new_state_v_layers_3_attn_norm = add(%1156, %1159) -> tensor<4096>
  %1160 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1161 = mul(%1160, %state_v_layers_3_mlp_norm) -> tensor<4096>
  %1162 = mul(%441, %441) -> tensor<4096>
  %1163 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1164 = mul(%1163, %1162) -> tensor<4096>
  %new_state_v_layers_3_mlp_norm = add(%1161, %1164) -> tensor<4096>
  %1165 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1166 = mul(%1165, %state_v_layers_3_w_down) -> tensor<11008x4096>
  %1167 = mul(%421, %421) -> tensor<11008x4096>
  %1168 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1169 = mul(%1168, %1167) -> tensor<11008x4096>
  %new_state_v_layers_3_w_down = add(%1166, %1169) -> tensor<11008x4096>
  %1170 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1171 = mul(%1170, %state_v_layers_3_w_gate) -> tensor<4096x11008>
  %1172 = mul(%433, %433) -> tensor<4096x11008>
  %1173 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1174 = mul(%1173, %1172) -> tensor<4096x11008>
  %new_state_v_layers_3_w_gate = add(%1171, %1174) -> tensor<4096x11008>
  %1175 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1176 = mul(%1175, %state_v_layers_3_w_up) -> tensor<4096x11008>
  %1177 = mul(%430, %430) -> tensor<4096x11008>
  %1178 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1179 = mul(%1178, %1177) -> tensor<4096x11008>
  %new_state_v_layers_3_w_up = add(%1176, %1179) -> tensor<4096x11008>
  %1180 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1181 = mul(%1180, %state_v_layers_3_wk) -> tensor<4096x32x128>
  %1182 = mul(%494, %494) -> tensor<4096x32x128>
  %1183 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1184 = mul(%1183, %1182) -> tensor<4096x32x128>
  %new_state_v_layers_3_wk = add(%1181, %1184) -> tensor<4096x32x128>
  %1185 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1186 = mul(%1185, %state_v_layers_3_wo) -> tensor<32x128x4096>
  %1187 = mul(%458, %458) -> tensor<32x128x4096>
  %1188 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1189 = mul(%1188, %1187) -> tensor<32x128x4096>
  %new_state_v_layers_3_wo = add(%1186, %1189) -> tensor<32x128x4096>
  %1190 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1191 = mul(%1190, %state_v_layers_3_wq) -> tensor<4096x32x128>
  %1192 = mul(%504, %504) -> tensor<4096x32x128>
  %1193 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1194 = mul(%1193, %1192) -> tensor<4096x32x128>
  %new_state_v_layers_3_wq = add(%1191, %1194) -> tensor<4096x32x128>
  %1195 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1196 = mul(%1195, %state_v_layers_3_wv) -> tensor<4096x32x128>
  %1197 = mul(%485, %485) -> tensor<4096x32x128>
  %1198 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1199 = mul(%1198, %1197) -> tensor<4096x32x128>
  %new_state_v_layers_3_wv = add(%1196, %1199) -> tensor<4096x32x128>
  %1200 = constant() {value = 0.9990000128746033} -> tensor<4096x32000>
  %1201 = mul(%1200, %state_v_lm_head) -> tensor<4096x32000>
  %1202 = mul(%398, %398) -> tensor<4096x32000>
  %1203 = constant() {value = 0.0010000000474974513} -> tensor<4096x32000>
  %1204 = mul(%1203, %1202) -> tensor<4096x32000>
  %new_state_v_lm_head = add(%1201, %1204) -> tensor<4096x32000>
  %1205 = broadcast_in_dim(%lr) {dims = []} -> tensor<32000x4096>
  %1206 = mul(%1205, %new_state_m_embed) -> tensor<32000x4096>
  %1207 = sqrt(%new_state_v_embed) -> tensor<32000x4096>
  %1208 = constant() {value = 9.99999993922529e-09} -> tensor<32000x4096>
  %1209 = add(%1207, %1208) -> tensor<32000x4096>
  %1210 = div(%1206, %1209) -> tensor<32000x4096>
  %new_embed = sub(%params_embed, %1210) -> tensor<32000x4096>
  %1211 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1212 = mul(%1211, %new_state_m_final_norm) -> tensor<4096>
  %1213 = sqrt(%new_state_v_final_norm) -> tensor<4096>
  %1214 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1215 = add(%1213, %1214) -> tensor<4096>
  %1216 = div(%1212, %1215) -> tensor<4096>
  %new_final_norm = sub(%params_final_norm, %1216) -> tensor<4096>
  %1217 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1218 = mul(%1217, %new_state_m_layers_0_attn_norm) -> tensor<4096>
  %1219 = sqrt(%new_state_v_layers_0_attn_norm) -> tensor<4096>
  %1220 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1221 = add(%1219, %1220) -> tensor<4096>
  %1222 = div(%1218, %1221) -> tensor<4096>
  %new_layers_0_attn_norm = sub(%params_layers_0_attn_norm, %1222) -> tensor<4096>
  %1223 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1224 = mul(%1223, %new_state_m_layers_0_mlp_norm) -> tensor<4096>
  %1225 = sqrt(%new_state_v_layers_0_mlp_norm) -> tensor<4096>
  %1226 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1227 = add(%1225, %1226) -> tensor<4096>
  %1228 = div(%1224, %1227) -> tensor<4096>
  %new_layers_0_mlp_norm = sub(%params_layers_0_mlp_norm, %1228) -> tensor<4096>
  %1229 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1230 = mul(%1229, %new_state_m_layers_0_w_down) -> tensor<11008x4096>
  %1231 = sqrt(%new_state_v_layers_0_w_down) -> tensor<11008x4096>
  %1232 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1233 = add(%1231, %1232) -> tensor<11008x4096>
  %1234 = div(%1230, %1233) -> tensor<11008x4096>
  %new_layers_0_w_down = sub(%params_layers_0_w_down, %1234) -> tensor<11008x4096>
  %1235 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1236 = mul(%1235, %new_state_m_layers_0_w_gate) -> tensor<4096x11008>
  %1237 = sqrt(%new_state_v_layers_0_w_gate) -> tensor<4096x11008>
  %1238 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1239 = add(%1237, %1238) -> tensor<4096x11008>
  %1240 = div(%1236, %1239) -> tensor<4096x11008>
  %new_layers_0_w_gate = sub(%params_layers_0_w_gate, %1240) -> tensor<4096x11008>
  %1241 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1242 = mul(%1241, %new_state_m_layers_0_w_up) -> tensor<4096x11008>
  %1243 = sqrt(%new_state_v_layers_0_w_up) -> tensor<4096x11008>
  %1244 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1245 = add(%1243, %1244) -> tensor<4096x11008>
  %1246 = div(%1242, %1245) -> tensor<4096x11008>
  %new_layers_0_w_up = sub(%params_layers_0_w_up, %1246) -> tensor<4096x11008>
  %1247 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1248 = mul(%1247, %new_state_m_layers_0_wk) -> tensor<4096x32x128>
  %1249 = sqrt(%new_state_v_layers_0_wk) -> tensor<4096x32x128>
  %1250 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1251 = add(%1249, %1250) -> tensor<4096x32x128>
  %1252 = div(%1248, %1251) -> tensor<4096x32x128>
  %new_layers_0_wk = sub(%params_layers_0_wk, %1252) -> tensor<4096x32x128>
  %1253 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1254 = mul(%1253, %new_state_m_layers_0_wo) -> tensor<32x128x4096>
  %1255 = sqrt(%new_state_v_layers_0_wo) -> tensor<32x128x4096>
  %1256 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1257 = add(%1255, %1256) -> tensor<32x128x4096>
  %1258 = div(%1254, %1257) -> tensor<32x128x4096>
  %new_layers_0_wo = sub(%params_layers_0_wo, %1258) -> tensor<32x128x4096>
  %1259 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1260 = mul(%1259, %new_state_m_layers_0_wq) -> tensor<4096x32x128>
  %1261 = sqrt(%new_state_v_layers_0_wq) -> tensor<4096x32x128>
  %1262 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1263 = add(%1261, %1262) -> tensor<4096x32x128>
  %1264 = div(%1260, %1263) -> tensor<4096x32x128>
  %new_layers_0_wq = sub(%params_layers_0_wq, %1264) -> tensor<4096x32x128>
  %1265 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1266 = mul(%1265, %new_state_m_layers_0_wv) -> tensor<4096x32x128>
  %1267 = sqrt(%new_state_v_layers_0_wv) -> tensor<4096x32x128>
  %1268 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1269 = add(%1267, %1268) -> tensor<4096x32x128>
  %1270 = div(%1266, %1269) -> tensor<4096x32x128>
  %new_layers_0_wv = sub(%params_layers_0_wv, %1270) -> tensor<4096x32x128>
  %1271 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1272 = mul(%1271, %new_state_m_layers_1_attn_norm) -> tensor<4096>
  %1273 = sqrt(%new_state_v_layers_1_attn_norm) -> tensor<4096>
  %1274 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1275 = add(%1273, %1274) -> tensor<4096>
  %1276 = div(%1272, %1275) -> tensor<4096>
  %new_layers_1_attn_norm = sub(%params_layers_1_attn_norm, %1276) -> tensor<4096>
  %1277 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1278 = mul(%1277, %new_state_m_layers_1_mlp_norm) -> tensor<4096>
  %1279 = sqrt(%new_state_v_layers_1_mlp_norm) -> tensor<4096>
  %1280 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1281 = add(%1279, %1280) -> tensor<4096>
  %1282 = div(%1278, %1281) -> tensor<4096>
  %new_layers_1_mlp_norm = sub(%params_layers_1_mlp_norm, %1282) -> tensor<4096>
  %1283 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1284 = mul(%1283, %new_state_m_layers_1_w_down) -> tensor<11008x4096>
  %1285 = sqrt(%new_state_v_layers_1_w_down) -> tensor<11008x4096>
  %1286 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1287 = add(%1285, %1286) -> tensor<11008x4096>
  %1288 = div(%1284, %1287) -> tensor<11008x4096>
  %new_layers_1_w_down = sub(%params_layers_1_w_down, %1288) -> tensor<11008x4096>
  %1289 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1290 = mul(%1289, %new_state_m_layers_1_w_gate) -> tensor<4096x11008>
  %1291 = sqrt(%new_state_v_layers_1_w_gate) -> tensor<4096x11008>
  %1292 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1293 = add(%1291, %1292) -> tensor<4096x11008>
  %1294 = div(%1290, %1293) -> tensor<4096x11008>
  %new_layers_1_w_gate = sub(%params_layers_1_w_gate, %1294) -> tensor<4096x11008>
  %1295 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1296 = mul(%1295, %new_state_m_layers_1_w_up) -> tensor<4096x11008>
  %1297 = sqrt(%new_state_v_layers_1_w_up) -> tensor<4096x11008>
  %1298 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1299 = add(%1297, %1298) -> tensor<4096x11008>
  %1300 = div(%1296, %1299) -> tensor<4096x11008>
  %new_layers_1_w_up = sub(%params_layers_1_w_up, %1300) -> tensor<4096x11008>
  %1301 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1302 = mul(%1301, %new_state_m_layers_1_wk) -> tensor<4096x32x128>
  %1303 = sqrt(%new_state_v_layers_1_wk) -> tensor<4096x32x128>
  %1304 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1305 = add(%1303, %1304) -> tensor<4096x32x128>
  %1306 = div(%1302, %1305) -> tensor<4096x32x128>
  %new_layers_1_wk = sub(%params_layers_1_wk, %1306) -> tensor<4096x32x128>
  %1307 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1308 = mul(%1307, %new_state_m_layers_1_wo) -> tensor<32x128x4096>
  %1309 = sqrt(%new_state_v_layers_1_wo) -> tensor<32x128x4096>
  %1310 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1311 = add(%1309, %1310) -> tensor<32x128x4096>
  %1312 = div(%1308, %1311) -> tensor<32x128x4096>
  %new_layers_1_wo = sub(%params_layers_1_wo, %1312) -> tensor<32x128x4096>
  %1313 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1314 = mul(%1313, %new_state_m_layers_1_wq) -> tensor<4096x32x128>
  %1315 = sqrt(%new_state_v_layers_1_wq) -> tensor<4096x32x128>
  %1316 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1317 = add(%1315, %1316) -> tensor<4096x32x128>
  %1318 = div(%1314, %1317) -> tensor<4096x32x128>
  %new_layers_1_wq = sub(%params_layers_1_wq, %1318) -> tensor<4096x32x128>
  %1319 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1320 = mul(%1319, %new_state_m_layers_1_wv) -> tensor<4096x32x128>
  %1321 = sqrt(%new_state_v_layers_1_wv) -> tensor<4096x32x128>
  %1322 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1323 = add(%1321, %1322) -> tensor<4096x32x128>
  %1324 = div(%1320, %1323) -> tensor<4096x32x128>
  %new_layers_1_wv = sub(%params_layers_1_wv, %1324) -> tensor<4096x32x128>
  %1325 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1326 = mul(%1325, %new_state_m_layers_2_attn_norm) -> tensor<4096>
  %1327 = sqrt(%new_state_v_layers_2_attn_norm) -> tensor<4096>
  %1328 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1329 = add(%1327, %1328) -> tensor<4096>
  %1330 = div(%1326, %1329) -> tensor<4096>
  %new_layers_2_attn_norm = sub(%params_layers_2_attn_norm, %1330) -> tensor<4096>
  %1331 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1332 = mul(%1331, %new_state_m_layers_2_mlp_norm) -> tensor<4096>
  %1333 = sqrt(%new_state_v_layers_2_mlp_norm) -> tensor<4096>
  %1334 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1335 = add(%1333, %1334) -> tensor<4096>
  %1336 = div(%1332, %1335) -> tensor<4096>
  %new_layers_2_mlp_norm = sub(%params_layers_2_mlp_norm, %1336) -> tensor<4096>
  %1337 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1338 = mul(%1337, %new_state_m_layers_2_w_down) -> tensor<11008x4096>
  %1339 = sqrt(%new_state_v_layers_2_w_down) -> tensor<11008x4096>
  %1340 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1341 = add(%1339, %1340) -> tensor<11008x4096>
  %1342 = div(%1338, %1341) -> tensor<11008x4096>
  %new_layers_2_w_down = sub(%params_layers_2_w_down, %1342) -> tensor<11008x4096>
  %1343 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1344 = mul(%1343, %new_state_m_layers_2_w_gate) -> tensor<4096x11008>
  %1345 = sqrt(%new_state_v_layers_2_w_gate) -> tensor<4096x11008>
  %1346 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1347 = add(%1345, %1346) -> tensor<4096x11008>
  %1348 = div(%1344, %1347) -> tensor<4096x11008>
  %new_layers_2_w_gate = sub(%params_layers_2_w_gate, %1348) -> tensor<4096x11008>
  %1349 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1350 = mul(%1349, %new_state_m_layers_2_w_up) -> tensor<4096x11008>
  %1351 = sqrt(%new_state_v_layers_2_w_up) -> tensor<4096x11008>
  %1352 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1353 = add(%1351, %1352) -> tensor<4096x11008>
  %1354 = div(%1350, %1353) -> tensor<4096x11008>
  %new_layers_2_w_up = sub(%params_layers_2_w_up, %1354) -> tensor<4096x11008>
  %1355 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1356 = mul(%1355, %new_state_m_layers_2_wk) -> tensor<4096x32x128>
  %1357 = sqrt(%new_state_v_layers_2_wk) -> tensor<4096x32x128>
  %1358 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1359 = add(%1357, %1358) -> tensor<4096x32x128>
  %1360 = div(%1356, %1359) -> tensor<4096x32x128>
  %new_layers_2_wk = sub(%params_layers_2_wk, %1360) -> tensor<4096x32x128>
  %1361 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1362 = mul(%1361, %new_state_m_layers_2_wo) -> tensor<32x128x4096>
  %1363 = sqrt(%new_state_v_layers_2_wo) -> tensor<32x128x4096>
  %1364 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1365 = add(%1363, %1364) -> tensor<32x128x4096>
  %1366 = div(%1362, %1365) -> tensor<32x128x4096>
  %new_layers_2_wo = sub(%params_layers_2_wo, %1366) -> tensor<32x128x4096>
  %1367 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1368 = mul(%1367, %new_state_m_layers_2_wq) -> tensor<4096x32x128>
  %1369 = sqrt(%new_state_v_layers_2_wq) -> tensor<4096x32x128>
  %1370 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1371 = add(%1369, %1370) -> tensor<4096x32x128>
  %1372 = div(%1368, %1371) -> tensor<4096x32x128>
  %new_layers_2_wq = sub(%params_layers_2_wq, %1372) -> tensor<4096x32x128>
  %1373 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1374 = mul(%1373, %new_state_m_layers_2_wv) -> tensor<4096x32x128>
  %1375 = sqrt(%new_state_v_layers_2_wv) -> tensor<4096x32x128>
  %1376 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1377 = add(%1375, %1376) -> tensor<4096x32x128>
  %1378 = div(%1374, %1377) -> tensor<4096x32x128>
  %new_layers_2_wv = sub(%params_layers_2_wv, %1378) -> tensor<4096x32x128>
  %1379 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1380 = mul(%1379, %new_state_m_layers_3_attn_norm) -> tensor<4096>
  %1381 = sqrt(%new_state_v_layers_3_attn_norm) -> tensor<4096>
  %1382 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1383 = add(%1381, %1382) -> tensor<4096>
  %1384 = div(%1380, %1383) -> tensor<4096>
  %new_layers_3_attn_norm = sub(%params_layers_3_attn_norm, %1384) -> tensor<4096>
  %1385 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1386 = mul(%1385, %new_state_m_layers_3_mlp_norm) -> tensor<4096>
  %1387 = sqrt(%new_state_v_layers_3_mlp_norm) -> tensor<4096>
  %1388 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1389 = add(%1387, %1388) -> tensor<4096>
  %1390 = div(%1386, %1389) -> tensor<4096>
  %new_layers_3_mlp_norm = sub(%params_layers_3_mlp_norm, %1390) -> tensor<4096>
  %1391 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1392 = mul(%1391, %new_state_m_layers_3_w_down) -> tensor<11008x4096>
  %1393 = sqrt(%new_state_v_layers_3_w_down) -> tensor<11008x4096>
  %1394 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1395 = add(%1393, %1394) -> tensor<11008x4096>
  %1396 = div(%1392, %1395) -> tensor<11008x4096>
  %new_layers_3_w_down = sub(%params_layers_3_w_down, %1396) -> tensor<11008x4096>
  %1397 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1398 = mul(%1397, %new_state_m_layers_3_w_gate) -> tensor<4096x11008>
  %1399 = sqrt(%new_state_v_layers_3_w_gate) -> tensor<4096x11008>
  %1400 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1401 = add(%1399, %1400) -> tensor<4096x11008>
  %1402 = div(%1398, %1401) -> tensor<4096x11008>
  %new_layers_3_w_gate = sub(%params_layers_3_w_gate, %1402) -> tensor<4096x11008>
  %1403 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1404 = mul(%1403, %new_state_m_layers_3_w_up) -> tensor<4096x11008>
  %1405 = sqrt(%new_state_v_layers_3_w_up) -> tensor<4096x11008>
  %1406 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1407 = add(%1405, %1406) -> tensor<4096x11008>
  %1408 = div(%1404, %1407) -> tensor<4096x11008>
  %new_layers_3_w_up = sub(%params_layers_3_w_up, %1408) -> tensor<4096x11008>
  %1409 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1410 = mul(%1409, %new_state_m_layers_3_wk) -> tensor<4096x32x128>
  %1411 = sqrt(%new_state_v_layers_3_wk) -> tensor<4096x32x128>
  %1412 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1413 = add(%1411, %1412) -> tensor<4096x32x128>
  %1414 = div(%1410, %1413) -> tensor<4096x32x128>
  %new_layers_3_wk = sub(%params_layers_3_wk, %1414) -> tensor<4096x32x128>
  %1415 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1416 = mul(%1415, %new_state_m_layers_3_wo) -> tensor<32x128x4096>
  %1417 = sqrt(%new_state_v_layers_3_wo) -> tensor<32x128x4096>
  %1418 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1419 = add(%1417, %1418) -> tensor<32x128x4096>
  %1420 = div(%1416, %1419) -> tensor<32x128x4096>
  %new_layers_3_wo = sub(%params_layers_3_wo, %1420) -> tensor<32x128x4096>
  %1421 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1422 = mul(%1421, %new_state_m_layers_3_wq) -> tensor<4096x32x128>
  %1423 = sqrt(%new_state_v_layers_3_wq) -> tensor<4096x32x128>
  %1424 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1425 = add(%1423, %1424) -> tensor<4096x32x128>
  %1426 = div(%1422, %1425) -> tensor<4096x32x128>
  %new_layers_3_wq = sub(%params_layers_3_wq, %1426) -> tensor<4096x32x128>
  %1427 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1428 = mul(%1427, %new_state_m_layers_3_wv) -> tensor<4096x32x128>
  %1429 = sqrt(%new_state_v_layers_3_wv) -> tensor<4096x32x128>
  %1430 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1431 = add(%1429, %1430) -> tensor<4096x32x128>
  %1432 = div(%1428, %1431) -> tensor<4096x32x128>
  %new_layers_3_wv = sub(%params_layers_3_wv, %1432) -> tensor<4096x32x128>
  %1433 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32000>
  %1434 = mul(%1433, %new_state_m_lm_head) -> tensor<4096x32000>
  %1435 = sqrt(%new_state_v_lm_head) -> tensor<4096x32000>
  %1436 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32000>
  %1437 = add(%1435, %1436) -> tensor<4096x32000>
  %1438 = div(%1434, %1437) -> tensor<4096x32000>
  %new_lm_head = sub(%params_lm_head, %1438) -> tensor<4096x32000>
  return %loss, %new_embed, %new_final_norm, %new_layers_0_attn_norm, %new_layers_0_mlp_norm, %new_layers_0_w_down, %new_layers_0_w_gate, %new_layers_0_w_up, %new_layers_0_wk, %new_layers_0_wo, %new_layers_0_wq, %new_layers_0_wv, %new_layers_1_attn_norm, %new_layers_1_mlp_norm, %new_layers_1_w_down, %new_layers_1_w_gate, %new_layers_1_w_up, %new_layers_1_wk, %new_layers_1_wo, %new_layers_1_wq, %new_layers_1_wv, %new_layers_2_attn_norm, %new_layers_2_mlp_norm, %new_layers_2_w_down, %new_layers_2_w_gate, %new_layers_2_w_up, %new_layers_2_wk, %new_layers_2_wo, %new_layers_2_wq, %new_layers_2_wv, %new_layers_3_attn_norm, %new_layers_3_mlp_norm, %new_layers_3_w_down, %new_layers_3_w_gate, %new_layers_3_w_up, %new_layers_3_wk, %new_layers_3_wo, %new_layers_3_wq, %new_layers_3_wv, %new_lm_head, %new_state_m_embed, %new_state_m_final_norm, %new_state_m_layers_0_attn_norm, %new_state_m_layers_0_mlp_norm, %new_state_m_layers_0_w_down, %new_state_m_layers_0_w_gate, %new_state_m_layers_0_w_up, %new_state_m_layers_0_wk, %new_state_m_layers_0_wo, %new_state_m_layers_0_wq, %new_state_m_layers_0_wv, %new_state_m_layers_1_attn_norm, %new_state_m_layers_1_mlp_norm, %new_state_m_layers_1_w_down, %new_state_m_layers_1_w_gate, %new_state_m_layers_1_w_up, %new_state_m_layers_1_wk, %new_state_m_layers_1_wo, %new_state_m_layers_1_wq, %new_state_m_layers_1_wv, %new_state_m_layers_2_attn_norm, %new_state_m_layers_2_mlp_norm, %new_state_m_layers_2_w_down, %new_state_m_layers_2_w_gate, %new_state_m_layers_2_w_up, %new_state_m_layers_2_wk, %new_state_m_layers_2_wo, %new_state_m_layers_2_wq, %new_state_m_layers_2_wv, %new_state_m_layers_3_attn_norm, %new_state_m_layers_3_mlp_norm, %new_state_m_layers_3_w_down, %new_state_m_layers_3_w_gate, %new_state_m_layers_3_w_up, %new_state_m_layers_3_wk, %new_state_m_layers_3_wo, %new_state_m_layers_3_wq, %new_state_m_layers_3_wv, %new_state_m_lm_head, %new_state_v_embed, %new_state_v_final_norm, %new_state_v_layers_0_attn_norm, %new_state_v_layers_0_mlp_norm, %new_state_v_layers_0_w_down, %new_state_v_layers_0_w_gate, %new_state_v_layers_0_w_up, %new_state_v_layers_0_wk, %new_state_v_layers_0_wo, %new_state_v_layers_0_wq, %new_state_v_layers_0_wv, %new_state_v_layers_1_attn_norm, %new_state_v_layers_1_mlp_norm, %new_state_v_layers_1_w_down, %new_state_v_layers_1_w_gate, %new_state_v_layers_1_w_up, %new_state_v_layers_1_wk, %new_state_v_layers_1_wo, %new_state_v_layers_1_wq, %new_state_v_layers_1_wv, %new_state_v_layers_2_attn_norm, %new_state_v_layers_2_mlp_norm, %new_state_v_layers_2_w_down, %new_state_v_layers_2_w_gate, %new_state_v_layers_2_w_up, %new_state_v_layers_2_wk, %new_state_v_layers_2_wo, %new_state_v_layers_2_wq, %new_state_v_layers_2_wv, %new_state_v_layers_3_attn_norm, %new_state_v_layers_3_mlp_norm, %new_state_v_layers_3_w_down, %new_state_v_layers_3_w_gate, %new_state_v_layers_3_w_up, %new_state_v_layers_3_wk, %new_state_v_layers_3_wo, %new_state_v_layers_3_wq, %new_state_v_layers_3_wv, %new_state_v_lm_head
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 4096}
}
