func.func @main(%params.embed: tensor<32000x4096>, %params.final_norm: tensor<4096>, %params.layers.0.attn_norm: tensor<4096>, %params.layers.0.mlp_norm: tensor<4096>, %params.layers.0.w_down: tensor<11008x4096>, %params.layers.0.w_gate: tensor<4096x11008>, %params.layers.0.w_up: tensor<4096x11008>, %params.layers.0.wk: tensor<4096x32x128>, %params.layers.0.wo: tensor<32x128x4096>, %params.layers.0.wq: tensor<4096x32x128>, %params.layers.0.wv: tensor<4096x32x128>, %params.layers.1.attn_norm: tensor<4096>, %params.layers.1.mlp_norm: tensor<4096>, %params.layers.1.w_down: tensor<11008x4096>, %params.layers.1.w_gate: tensor<4096x11008>, %params.layers.1.w_up: tensor<4096x11008>, %params.layers.1.wk: tensor<4096x32x128>, %params.layers.1.wo: tensor<32x128x4096>, %params.layers.1.wq: tensor<4096x32x128>, %params.layers.1.wv: tensor<4096x32x128>, %params.layers.2.attn_norm: tensor<4096>, %params.layers.2.mlp_norm: tensor<4096>, %params.layers.2.w_down: tensor<11008x4096>, %params.layers.2.w_gate: tensor<4096x11008>, %params.layers.2.w_up: tensor<4096x11008>, %params.layers.2.wk: tensor<4096x32x128>, %params.layers.2.wo: tensor<32x128x4096>, %params.layers.2.wq: tensor<4096x32x128>, %params.layers.2.wv: tensor<4096x32x128>, %params.layers.3.attn_norm: tensor<4096>, %params.layers.3.mlp_norm: tensor<4096>, %params.layers.3.w_down: tensor<11008x4096>, %params.layers.3.w_gate: tensor<4096x11008>, %params.layers.3.w_up: tensor<4096x11008>, %params.layers.3.wk: tensor<4096x32x128>, %params.layers.3.wo: tensor<32x128x4096>, %params.layers.3.wq: tensor<4096x32x128>, %params.layers.3.wv: tensor<4096x32x128>, %params.lm_head: tensor<4096x32000>, %state.m.embed: tensor<32000x4096>, %state.m.final_norm: tensor<4096>, %state.m.layers.0.attn_norm: tensor<4096>, %state.m.layers.0.mlp_norm: tensor<4096>, %state.m.layers.0.w_down: tensor<11008x4096>, %state.m.layers.0.w_gate: tensor<4096x11008>, %state.m.layers.0.w_up: tensor<4096x11008>, %state.m.layers.0.wk: tensor<4096x32x128>, %state.m.layers.0.wo: tensor<32x128x4096>, %state.m.layers.0.wq: tensor<4096x32x128>, %state.m.layers.0.wv: tensor<4096x32x128>, %state.m.layers.1.attn_norm: tensor<4096>, %state.m.layers.1.mlp_norm: tensor<4096>, %state.m.layers.1.w_down: tensor<11008x4096>, %state.m.layers.1.w_gate: tensor<4096x11008>, %state.m.layers.1.w_up: tensor<4096x11008>, %state.m.layers.1.wk: tensor<4096x32x128>, %state.m.layers.1.wo: tensor<32x128x4096>, %state.m.layers.1.wq: tensor<4096x32x128>, %state.m.layers.1.wv: tensor<4096x32x128>, %state.m.layers.2.attn_norm: tensor<4096>, %state.m.layers.2.mlp_norm: tensor<4096>, %state.m.layers.2.w_down: tensor<11008x4096>, %state.m.layers.2.w_gate: tensor<4096x11008>, %state.m.layers.2.w_up: tensor<4096x11008>, %state.m.layers.2.wk: tensor<4096x32x128>, %state.m.layers.2.wo: tensor<32x128x4096>, %state.m.layers.2.wq: tensor<4096x32x128>, %state.m.layers.2.wv: tensor<4096x32x128>, %state.m.layers.3.attn_norm: tensor<4096>, %state.m.layers.3.mlp_norm: tensor<4096>, %state.m.layers.3.w_down: tensor<11008x4096>, %state.m.layers.3.w_gate: tensor<4096x11008>, %state.m.layers.3.w_up: tensor<4096x11008>, %state.m.layers.3.wk: tensor<4096x32x128>, %state.m.layers.3.wo: tensor<32x128x4096>, %state.m.layers.3.wq: tensor<4096x32x128>, %state.m.layers.3.wv: tensor<4096x32x128>, %state.m.lm_head: tensor<4096x32000>, %state.v.embed: tensor<32000x4096>, %state.v.final_norm: tensor<4096>, %state.v.layers.0.attn_norm: tensor<4096>, %state.v.layers.0.mlp_norm: tensor<4096>, %state.v.layers.0.w_down: tensor<11008x4096>, %state.v.layers.0.w_gate: tensor<4096x11008>, %state.v.layers.0.w_up: tensor<4096x11008>, %state.v.layers.0.wk: tensor<4096x32x128>, %state.v.layers.0.wo: tensor<32x128x4096>, %state.v.layers.0.wq: tensor<4096x32x128>, %state.v.layers.0.wv: tensor<4096x32x128>, %state.v.layers.1.attn_norm: tensor<4096>, %state.v.layers.1.mlp_norm: tensor<4096>, %state.v.layers.1.w_down: tensor<11008x4096>, %state.v.layers.1.w_gate: tensor<4096x11008>, %state.v.layers.1.w_up: tensor<4096x11008>, %state.v.layers.1.wk: tensor<4096x32x128>, %state.v.layers.1.wo: tensor<32x128x4096>, %state.v.layers.1.wq: tensor<4096x32x128>, %state.v.layers.1.wv: tensor<4096x32x128>, %state.v.layers.2.attn_norm: tensor<4096>, %state.v.layers.2.mlp_norm: tensor<4096>, %state.v.layers.2.w_down: tensor<11008x4096>, %state.v.layers.2.w_gate: tensor<4096x11008>, %state.v.layers.2.w_up: tensor<4096x11008>, %state.v.layers.2.wk: tensor<4096x32x128>, %state.v.layers.2.wo: tensor<32x128x4096>, %state.v.layers.2.wq: tensor<4096x32x128>, %state.v.layers.2.wv: tensor<4096x32x128>, %state.v.layers.3.attn_norm: tensor<4096>, %state.v.layers.3.mlp_norm: tensor<4096>, %state.v.layers.3.w_down: tensor<11008x4096>, %state.v.layers.3.w_gate: tensor<4096x11008>, %state.v.layers.3.w_up: tensor<4096x11008>, %state.v.layers.3.wk: tensor<4096x32x128>, %state.v.layers.3.wo: tensor<32x128x4096>, %state.v.layers.3.wq: tensor<4096x32x128>, %state.v.layers.3.wv: tensor<4096x32x128>, %state.v.lm_head: tensor<4096x32000>, %tokens: tensor<?x?xi32, [@S0, @S1]>, %targets: tensor<?x?xi32, [@S0, @S1]>, %mask: tensor<?x?, [@S0, @S1]>, %lr: tensor<f32>) {
  %0 = constant() {value = 0} -> tensor<i32>
  %1 = broadcast_like(%0, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32>
  %2 = compare(%tokens, %1) {direction = "LT"} -> tensor<?x?xi1>
  %3 = constant() {value = 32000} -> tensor<i32>
  %4 = broadcast_like(%3, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?xi32>
  %5 = add(%tokens, %4) -> tensor<?x?xi32>
  %6 = select(%2, %5, %tokens) -> tensor<?x?xi32>
  %7 = gather(%params.embed, %6) -> tensor<?x?x4096>
  %8 = iota() {dim = 0} -> tensor<?>
  %9 = constant() {value = 1.0} -> tensor<f32>
  %10 = broadcast_like(%9, %tokens) {dims = [], source = [0], axis = [1]} -> tensor<?>
  %11 = mul(%10, %8) -> tensor<?>
  %12 = constant() {value = 0.0} -> tensor<f32>
  %13 = broadcast_like(%12, %tokens) {dims = [], source = [0], axis = [1]} -> tensor<?>
  %14 = add(%13, %11) -> tensor<?>
  %15 = iota() {dim = 0} -> tensor<64>
  %16 = constant() {value = 0.015625} -> tensor<64>
  %17 = mul(%15, %16) -> tensor<64>
  %18 = constant() {value = 10000.0} -> tensor<64>
  %19 = pow(%18, %17) -> tensor<64>
  %20 = constant() {value = 1.0} -> tensor<64>
  %21 = div(%20, %19) -> tensor<64>
  %22 = broadcast_in_dim(%14) {dims = [0]} -> tensor<?x64>
  %23 = broadcast_like(%21, %tokens) {dims = [1], source = [0, -1], axis = [1, -1]} -> tensor<?x64>
  %24 = mul(%22, %23) -> tensor<?x64>
  %25 = concatenate(%24, %24) {dim = 1} -> tensor<?x128>
  %26 = iota() {dim = 0} -> tensor<128x128xi32>
  %27 = iota() {dim = 1} -> tensor<128x128xi32>
  %28 = constant() {value = 64} -> tensor<128x128xi32>
  %29 = add(%27, %28) -> tensor<128x128xi32>
  %30 = compare(%26, %29) {direction = "EQ"} -> tensor<128x128xi1>
  %31 = constant() {value = -1.0} -> tensor<128x128>
  %32 = constant() {value = 0.0} -> tensor<128x128>
  %33 = select(%30, %31, %32) -> tensor<128x128>
  %34 = constant() {value = 64} -> tensor<128x128xi32>
  %35 = add(%26, %34) -> tensor<128x128xi32>
  %36 = compare(%35, %27) {direction = "EQ"} -> tensor<128x128xi1>
  %37 = constant() {value = 1.0} -> tensor<128x128>
  %38 = constant() {value = 0.0} -> tensor<128x128>
  %39 = select(%36, %37, %38) -> tensor<128x128>
  %40 = add(%33, %39) -> tensor<128x128>
  %41 = cos(%25) -> tensor<?x128>
  %42 = sin(%25) -> tensor<?x128>
  %43 = mul(%7, %7) -> tensor<?x?x4096>
  %44 = reduce(%43) {dims = [2], kind = "sum"} -> tensor<?x?>
  %45 = broadcast_in_dim(%44) {dims = [0, 1]} -> tensor<?x?x1>
  %46 = constant() {value = 4096.0} -> tensor<f32>
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
  %57 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %58 = mul(%7, %57) -> tensor<?x?x4096>
  %59 = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %60 = mul(%58, %59) -> tensor<?x?x4096>
  %61 = dot_general(%60, %params.layers.0.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %62 = dot_general(%61, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %63 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %64 = mul(%61, %63) -> tensor<?x?x32x128>
  %65 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %66 = mul(%62, %65) -> tensor<?x?x32x128>
  %67 = add(%64, %66) -> tensor<?x?x32x128>
  %68 = dot_general(%60, %params.layers.0.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %69 = dot_general(%68, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %70 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %71 = mul(%68, %70) -> tensor<?x?x32x128>
  %72 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %73 = mul(%69, %72) -> tensor<?x?x32x128>
  %74 = add(%71, %73) -> tensor<?x?x32x128>
  %75 = dot_general(%60, %params.layers.0.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %76 = dot_general(%67, %74) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %77 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %78 = broadcast_like(%77, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %79 = mul(%76, %78) -> tensor<?x32x?x?>
  %80 = iota() {dim = 0} -> tensor<?x?xi32>
  %81 = iota() {dim = 1} -> tensor<?x?xi32>
  %82 = compare(%80, %81) {direction = "GE"} -> tensor<?x?xi1>
  %83 = broadcast_in_dim(%82) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %84 = broadcast_like(%83, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x32x?x?xi1>
  %85 = constant() {value = -1000000000.0} -> tensor<f32>
  %86 = broadcast_like(%85, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %87 = select(%84, %79, %86) -> tensor<?x32x?x?>
  %88 = reduce(%87) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %89 = broadcast_like(%88, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %90 = sub(%87, %89) -> tensor<?x32x?x?>
  %91 = exp(%90) -> tensor<?x32x?x?>
  %92 = reduce(%91) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %93 = broadcast_in_dim(%92) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %94 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %95 = div(%91, %94) -> tensor<?x32x?x?>
  %96 = integer_pow(%93) {exponent = -2} -> tensor<?x32x?x1>
  %97 = dot_general(%75, %95) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %98 = transpose(%97) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %99 = dot_general(%98, %params.layers.0.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %100 = add(%7, %99) -> tensor<?x?x4096>
  %101 = mul(%100, %100) -> tensor<?x?x4096>
  %102 = reduce(%101) {dims = [2], kind = "sum"} -> tensor<?x?>
  %103 = broadcast_in_dim(%102) {dims = [0, 1]} -> tensor<?x?x1>
  %104 = constant() {value = 4096.0} -> tensor<f32>
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
  %115 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %116 = mul(%100, %115) -> tensor<?x?x4096>
  %117 = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %118 = mul(%116, %117) -> tensor<?x?x4096>
  %119 = dot_general(%118, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %120 = dot_general(%118, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %121 = logistic(%119) -> tensor<?x?x11008>
  %122 = constant() {value = 1.0} -> tensor<f32>
  %123 = broadcast_like(%122, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x11008>
  %124 = sub(%123, %121) -> tensor<?x?x11008>
  %125 = mul(%121, %124) -> tensor<?x?x11008>
  %126 = mul(%119, %121) -> tensor<?x?x11008>
  %127 = mul(%126, %120) -> tensor<?x?x11008>
  %128 = dot_general(%127, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %129 = add(%100, %128) -> tensor<?x?x4096>
  %130 = mul(%129, %129) -> tensor<?x?x4096>
  %131 = reduce(%130) {dims = [2], kind = "sum"} -> tensor<?x?>
  %132 = broadcast_in_dim(%131) {dims = [0, 1]} -> tensor<?x?x1>
  %133 = constant() {value = 4096.0} -> tensor<f32>
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
  %144 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %145 = mul(%129, %144) -> tensor<?x?x4096>
  %146 = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %147 = mul(%145, %146) -> tensor<?x?x4096>
  %148 = dot_general(%147, %params.layers.1.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %149 = dot_general(%148, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %150 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %151 = mul(%148, %150) -> tensor<?x?x32x128>
  %152 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %153 = mul(%149, %152) -> tensor<?x?x32x128>
  %154 = add(%151, %153) -> tensor<?x?x32x128>
  %155 = dot_general(%147, %params.layers.1.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %156 = dot_general(%155, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %157 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %158 = mul(%155, %157) -> tensor<?x?x32x128>
  %159 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %160 = mul(%156, %159) -> tensor<?x?x32x128>
  %161 = add(%158, %160) -> tensor<?x?x32x128>
  %162 = dot_general(%147, %params.layers.1.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %163 = dot_general(%154, %161) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %164 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %165 = broadcast_like(%164, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %166 = mul(%163, %165) -> tensor<?x32x?x?>
  %167 = iota() {dim = 0} -> tensor<?x?xi32>
  %168 = iota() {dim = 1} -> tensor<?x?xi32>
  %169 = compare(%167, %168) {direction = "GE"} -> tensor<?x?xi1>
  %170 = broadcast_in_dim(%169) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %171 = broadcast_like(%170, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x32x?x?xi1>
  %172 = constant() {value = -1000000000.0} -> tensor<f32>
  %173 = broadcast_like(%172, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %174 = select(%171, %166, %173) -> tensor<?x32x?x?>
  %175 = reduce(%174) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %176 = broadcast_like(%175, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %177 = sub(%174, %176) -> tensor<?x32x?x?>
  %178 = exp(%177) -> tensor<?x32x?x?>
  %179 = reduce(%178) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %180 = broadcast_in_dim(%179) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %181 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %182 = div(%178, %181) -> tensor<?x32x?x?>
  %183 = integer_pow(%180) {exponent = -2} -> tensor<?x32x?x1>
  %184 = dot_general(%162, %182) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %185 = transpose(%184) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %186 = dot_general(%185, %params.layers.1.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %187 = add(%129, %186) -> tensor<?x?x4096>
  %188 = mul(%187, %187) -> tensor<?x?x4096>
  %189 = reduce(%188) {dims = [2], kind = "sum"} -> tensor<?x?>
  %190 = broadcast_in_dim(%189) {dims = [0, 1]} -> tensor<?x?x1>
  %191 = constant() {value = 4096.0} -> tensor<f32>
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
  %202 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %203 = mul(%187, %202) -> tensor<?x?x4096>
  %204 = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %205 = mul(%203, %204) -> tensor<?x?x4096>
  %206 = dot_general(%205, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %207 = dot_general(%205, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %208 = logistic(%206) -> tensor<?x?x11008>
  %209 = constant() {value = 1.0} -> tensor<f32>
  %210 = broadcast_like(%209, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x11008>
  %211 = sub(%210, %208) -> tensor<?x?x11008>
  %212 = mul(%208, %211) -> tensor<?x?x11008>
  %213 = mul(%206, %208) -> tensor<?x?x11008>
  %214 = mul(%213, %207) -> tensor<?x?x11008>
  %215 = dot_general(%214, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %216 = add(%187, %215) -> tensor<?x?x4096>
  %217 = mul(%216, %216) -> tensor<?x?x4096>
  %218 = reduce(%217) {dims = [2], kind = "sum"} -> tensor<?x?>
  %219 = broadcast_in_dim(%218) {dims = [0, 1]} -> tensor<?x?x1>
  %220 = constant() {value = 4096.0} -> tensor<f32>
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
  %231 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %232 = mul(%216, %231) -> tensor<?x?x4096>
  %233 = broadcast_like(%params.layers.2.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %234 = mul(%232, %233) -> tensor<?x?x4096>
  %235 = dot_general(%234, %params.layers.2.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %236 = dot_general(%235, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %237 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %238 = mul(%235, %237) -> tensor<?x?x32x128>
  %239 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %240 = mul(%236, %239) -> tensor<?x?x32x128>
  %241 = add(%238, %240) -> tensor<?x?x32x128>
  %242 = dot_general(%234, %params.layers.2.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %243 = dot_general(%242, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %244 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %245 = mul(%242, %244) -> tensor<?x?x32x128>
  %246 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %247 = mul(%243, %246) -> tensor<?x?x32x128>
  %248 = add(%245, %247) -> tensor<?x?x32x128>
  %249 = dot_general(%234, %params.layers.2.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %250 = dot_general(%241, %248) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %251 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %252 = broadcast_like(%251, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %253 = mul(%250, %252) -> tensor<?x32x?x?>
  %254 = iota() {dim = 0} -> tensor<?x?xi32>
  %255 = iota() {dim = 1} -> tensor<?x?xi32>
  %256 = compare(%254, %255) {direction = "GE"} -> tensor<?x?xi1>
  %257 = broadcast_in_dim(%256) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %258 = broadcast_like(%257, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x32x?x?xi1>
  %259 = constant() {value = -1000000000.0} -> tensor<f32>
  %260 = broadcast_like(%259, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %261 = select(%258, %253, %260) -> tensor<?x32x?x?>
  %262 = reduce(%261) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %263 = broadcast_like(%262, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %264 = sub(%261, %263) -> tensor<?x32x?x?>
  %265 = exp(%264) -> tensor<?x32x?x?>
  %266 = reduce(%265) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %267 = broadcast_in_dim(%266) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %268 = broadcast_like(%266, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %269 = div(%265, %268) -> tensor<?x32x?x?>
  %270 = integer_pow(%267) {exponent = -2} -> tensor<?x32x?x1>
  %271 = dot_general(%249, %269) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %272 = transpose(%271) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %273 = dot_general(%272, %params.layers.2.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %274 = add(%216, %273) -> tensor<?x?x4096>
  %275 = mul(%274, %274) -> tensor<?x?x4096>
  %276 = reduce(%275) {dims = [2], kind = "sum"} -> tensor<?x?>
  %277 = broadcast_in_dim(%276) {dims = [0, 1]} -> tensor<?x?x1>
  %278 = constant() {value = 4096.0} -> tensor<f32>
  %279 = broadcast_like(%278, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %280 = div(%277, %279) -> tensor<?x?x1>
  %281 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %282 = broadcast_like(%281, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %283 = add(%280, %282) -> tensor<?x?x1>
  %284 = rsqrt(%283) -> tensor<?x?x1>
  %285 = div(%284, %283) -> tensor<?x?x1>
  %286 = constant() {value = -0.5} -> tensor<f32>
  %287 = broadcast_like(%286, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %288 = mul(%287, %285) -> tensor<?x?x1>
  %289 = broadcast_in_dim(%284) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %290 = mul(%274, %289) -> tensor<?x?x4096>
  %291 = broadcast_like(%params.layers.2.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %292 = mul(%290, %291) -> tensor<?x?x4096>
  %293 = dot_general(%292, %params.layers.2.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %294 = dot_general(%292, %params.layers.2.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %295 = logistic(%293) -> tensor<?x?x11008>
  %296 = constant() {value = 1.0} -> tensor<f32>
  %297 = broadcast_like(%296, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x11008>
  %298 = sub(%297, %295) -> tensor<?x?x11008>
  %299 = mul(%295, %298) -> tensor<?x?x11008>
  %300 = mul(%293, %295) -> tensor<?x?x11008>
  %301 = mul(%300, %294) -> tensor<?x?x11008>
  %302 = dot_general(%301, %params.layers.2.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %303 = add(%274, %302) -> tensor<?x?x4096>
  %304 = mul(%303, %303) -> tensor<?x?x4096>
  %305 = reduce(%304) {dims = [2], kind = "sum"} -> tensor<?x?>
  %306 = broadcast_in_dim(%305) {dims = [0, 1]} -> tensor<?x?x1>
  %307 = constant() {value = 4096.0} -> tensor<f32>
  %308 = broadcast_like(%307, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %309 = div(%306, %308) -> tensor<?x?x1>
  %310 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %311 = broadcast_like(%310, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %312 = add(%309, %311) -> tensor<?x?x1>
  %313 = rsqrt(%312) -> tensor<?x?x1>
  %314 = div(%313, %312) -> tensor<?x?x1>
  %315 = constant() {value = -0.5} -> tensor<f32>
  %316 = broadcast_like(%315, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %317 = mul(%316, %314) -> tensor<?x?x1>
  %318 = broadcast_in_dim(%313) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %319 = mul(%303, %318) -> tensor<?x?x4096>
  %320 = broadcast_like(%params.layers.3.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %321 = mul(%319, %320) -> tensor<?x?x4096>
  %322 = dot_general(%321, %params.layers.3.wq) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %323 = dot_general(%322, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %324 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %325 = mul(%322, %324) -> tensor<?x?x32x128>
  %326 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %327 = mul(%323, %326) -> tensor<?x?x32x128>
  %328 = add(%325, %327) -> tensor<?x?x32x128>
  %329 = dot_general(%321, %params.layers.3.wk) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %330 = dot_general(%329, %40) {lhs_contract = [3], rhs_contract = [0]} -> tensor<?x?x32x128>
  %331 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %332 = mul(%329, %331) -> tensor<?x?x32x128>
  %333 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %334 = mul(%330, %333) -> tensor<?x?x32x128>
  %335 = add(%332, %334) -> tensor<?x?x32x128>
  %336 = dot_general(%321, %params.layers.3.wv) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32x128>
  %337 = dot_general(%328, %335) {lhs_batch = [0, 2], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [3]} -> tensor<?x32x?x?>
  %338 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %339 = broadcast_like(%338, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %340 = mul(%337, %339) -> tensor<?x32x?x?>
  %341 = iota() {dim = 0} -> tensor<?x?xi32>
  %342 = iota() {dim = 1} -> tensor<?x?xi32>
  %343 = compare(%341, %342) {direction = "GE"} -> tensor<?x?xi1>
  %344 = broadcast_in_dim(%343) {dims = [2, 3]} -> tensor<1x1x?x?xi1>
  %345 = broadcast_like(%344, %tokens) {dims = [0, 1, 2, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x32x?x?xi1>
  %346 = constant() {value = -1000000000.0} -> tensor<f32>
  %347 = broadcast_like(%346, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %348 = select(%345, %340, %347) -> tensor<?x32x?x?>
  %349 = reduce(%348) {dims = [3], kind = "max"} -> tensor<?x32x?>
  %350 = broadcast_like(%349, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %351 = sub(%348, %350) -> tensor<?x32x?x?>
  %352 = exp(%351) -> tensor<?x32x?x?>
  %353 = reduce(%352) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %354 = broadcast_in_dim(%353) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %355 = broadcast_like(%353, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %356 = div(%352, %355) -> tensor<?x32x?x?>
  %357 = integer_pow(%354) {exponent = -2} -> tensor<?x32x?x1>
  %358 = dot_general(%336, %356) {lhs_batch = [0, 2], rhs_batch = [0, 1], lhs_contract = [1], rhs_contract = [3]} -> tensor<?x32x128x?>
  %359 = transpose(%358) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %360 = dot_general(%359, %params.layers.3.wo) {lhs_contract = [2, 3], rhs_contract = [0, 1]} -> tensor<?x?x4096>
  %361 = add(%303, %360) -> tensor<?x?x4096>
  %362 = mul(%361, %361) -> tensor<?x?x4096>
  %363 = reduce(%362) {dims = [2], kind = "sum"} -> tensor<?x?>
  %364 = broadcast_in_dim(%363) {dims = [0, 1]} -> tensor<?x?x1>
  %365 = constant() {value = 4096.0} -> tensor<f32>
  %366 = broadcast_like(%365, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %367 = div(%364, %366) -> tensor<?x?x1>
  %368 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %369 = broadcast_like(%368, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %370 = add(%367, %369) -> tensor<?x?x1>
  %371 = rsqrt(%370) -> tensor<?x?x1>
  %372 = div(%371, %370) -> tensor<?x?x1>
  %373 = constant() {value = -0.5} -> tensor<f32>
  %374 = broadcast_like(%373, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %375 = mul(%374, %372) -> tensor<?x?x1>
  %376 = broadcast_in_dim(%371) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %377 = mul(%361, %376) -> tensor<?x?x4096>
  %378 = broadcast_like(%params.layers.3.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %379 = mul(%377, %378) -> tensor<?x?x4096>
  %380 = dot_general(%379, %params.layers.3.w_gate) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %381 = dot_general(%379, %params.layers.3.w_up) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x11008>
  %382 = logistic(%380) -> tensor<?x?x11008>
  %383 = constant() {value = 1.0} -> tensor<f32>
  %384 = broadcast_like(%383, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x11008>
  %385 = sub(%384, %382) -> tensor<?x?x11008>
  %386 = mul(%382, %385) -> tensor<?x?x11008>
  %387 = mul(%380, %382) -> tensor<?x?x11008>
  %388 = mul(%387, %381) -> tensor<?x?x11008>
  %389 = dot_general(%388, %params.layers.3.w_down) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x4096>
  %390 = add(%361, %389) -> tensor<?x?x4096>
  %391 = mul(%390, %390) -> tensor<?x?x4096>
  %392 = reduce(%391) {dims = [2], kind = "sum"} -> tensor<?x?>
  %393 = broadcast_in_dim(%392) {dims = [0, 1]} -> tensor<?x?x1>
  %394 = constant() {value = 4096.0} -> tensor<f32>
  %395 = broadcast_like(%394, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %396 = div(%393, %395) -> tensor<?x?x1>
  %397 = constant() {value = 9.999999747378752e-06} -> tensor<f32>
  %398 = broadcast_like(%397, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %399 = add(%396, %398) -> tensor<?x?x1>
  %400 = rsqrt(%399) -> tensor<?x?x1>
  %401 = div(%400, %399) -> tensor<?x?x1>
  %402 = constant() {value = -0.5} -> tensor<f32>
  %403 = broadcast_like(%402, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %404 = mul(%403, %401) -> tensor<?x?x1>
  %405 = broadcast_in_dim(%400) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %406 = mul(%390, %405) -> tensor<?x?x4096>
  %407 = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %408 = mul(%406, %407) -> tensor<?x?x4096>
  %409 = dot_general(%408, %params.lm_head) {lhs_contract = [2], rhs_contract = [0]} -> tensor<?x?x32000>
  %410 = reduce(%409) {dims = [2], kind = "max"} -> tensor<?x?>
  %411 = broadcast_in_dim(%410) {dims = [0, 1]} -> tensor<?x?x32000>
  %412 = sub(%409, %411) -> tensor<?x?x32000>
  %413 = exp(%412) -> tensor<?x?x32000>
  %414 = reduce(%413) {dims = [2], kind = "sum"} -> tensor<?x?>
  %415 = log(%414) -> tensor<?x?>
  %416 = add(%415, %410) -> tensor<?x?>
  %417 = iota() {dim = 2} -> tensor<?x?x32000xi32>
  %418 = broadcast_in_dim(%targets) {dims = [0, 1]} -> tensor<?x?x32000xi32>
  %419 = compare(%417, %418) {direction = "EQ"} -> tensor<?x?x32000xi1>
  %420 = convert(%419) {dtype = "f32"} -> tensor<?x?x32000>
  %421 = mul(%409, %420) -> tensor<?x?x32000>
  %422 = reduce(%421) {dims = [2], kind = "sum"} -> tensor<?x?>
  %423 = sub(%416, %422) -> tensor<?x?>
  %424 = mul(%423, %mask) -> tensor<?x?>
  %425 = reduce(%424) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %426 = reduce(%mask) {dims = [0, 1], kind = "sum"} -> tensor<f32>
  %427 = constant() {value = 1.0} -> tensor<f32>
  %428 = max(%426, %427) -> tensor<f32>
  %loss = div(%425, %428) -> tensor<f32>
  %429 = constant() {value = 1.0} -> tensor<f32>
  %430 = div(%429, %428) -> tensor<f32>
  %431 = broadcast_like(%430, %tokens) {dims = [], source = [0, 0], axis = [0, 1]} -> tensor<?x?>
  %432 = mul(%431, %mask) -> tensor<?x?>
  %433 = neg(%432) -> tensor<?x?>
  %434 = broadcast_in_dim(%433) {dims = [0, 1]} -> tensor<?x?x32000>
  %435 = mul(%434, %420) -> tensor<?x?x32000>
  %436 = div(%432, %414) -> tensor<?x?>
  %437 = broadcast_in_dim(%436) {dims = [0, 1]} -> tensor<?x?x32000>
  %438 = mul(%437, %413) -> tensor<?x?x32000>
  %439 = add(%435, %438) -> tensor<?x?x32000>
  %440 = dot_general(%439, %408) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32000x4096>
  %441 = transpose(%440) {perm = [1, 0]} -> tensor<4096x32000>
  %442 = dot_general(%439, %params.lm_head) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %443 = mul(%406, %442) -> tensor<?x?x4096>
  %444 = reduce(%443) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %445 = broadcast_in_dim(%444) {dims = [2]} -> tensor<1x1x4096>
  %446 = broadcast_like(%params.final_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %447 = mul(%442, %446) -> tensor<?x?x4096>
  %448 = reduce(%445) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %449 = mul(%390, %447) -> tensor<?x?x4096>
  %450 = reduce(%449) {dims = [2], kind = "sum"} -> tensor<?x?>
  %451 = broadcast_in_dim(%450) {dims = [0, 1]} -> tensor<?x?x1>
  %452 = broadcast_in_dim(%400) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %453 = mul(%447, %452) -> tensor<?x?x4096>
  %454 = mul(%451, %404) -> tensor<?x?x1>
  %455 = constant() {value = 4096.0} -> tensor<f32>
  %456 = broadcast_like(%455, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %457 = div(%454, %456) -> tensor<?x?x1>
  %458 = reduce(%457) {dims = [2], kind = "sum"} -> tensor<?x?>
  %459 = broadcast_in_dim(%458) {dims = [0, 1]} -> tensor<?x?x4096>
  %460 = mul(%390, %459) -> tensor<?x?x4096>
  %461 = add(%453, %460) -> tensor<?x?x4096>
  %462 = mul(%459, %390) -> tensor<?x?x4096>
  %463 = add(%461, %462) -> tensor<?x?x4096>
  %464 = dot_general(%463, %388) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %465 = transpose(%464) {perm = [1, 0]} -> tensor<11008x4096>
  %466 = dot_general(%463, %params.layers.3.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %467 = mul(%387, %466) -> tensor<?x?x11008>
  %468 = mul(%466, %381) -> tensor<?x?x11008>
  %469 = mul(%380, %468) -> tensor<?x?x11008>
  %470 = mul(%468, %382) -> tensor<?x?x11008>
  %471 = mul(%469, %386) -> tensor<?x?x11008>
  %472 = add(%470, %471) -> tensor<?x?x11008>
  %473 = dot_general(%467, %379) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %474 = transpose(%473) {perm = [1, 0]} -> tensor<4096x11008>
  %475 = dot_general(%467, %params.layers.3.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %476 = dot_general(%472, %379) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %477 = transpose(%476) {perm = [1, 0]} -> tensor<4096x11008>
  %478 = dot_general(%472, %params.layers.3.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %479 = add(%475, %478) -> tensor<?x?x4096>
  %480 = mul(%377, %479) -> tensor<?x?x4096>
  %481 = reduce(%480) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %482 = broadcast_in_dim(%481) {dims = [2]} -> tensor<1x1x4096>
  %483 = broadcast_like(%params.layers.3.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %484 = mul(%479, %483) -> tensor<?x?x4096>
  %485 = reduce(%482) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %486 = mul(%361, %484) -> tensor<?x?x4096>
  %487 = reduce(%486) {dims = [2], kind = "sum"} -> tensor<?x?>
  %488 = broadcast_in_dim(%487) {dims = [0, 1]} -> tensor<?x?x1>
  %489 = broadcast_in_dim(%371) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %490 = mul(%484, %489) -> tensor<?x?x4096>
  %491 = add(%463, %490) -> tensor<?x?x4096>
  %492 = mul(%488, %375) -> tensor<?x?x1>
  %493 = constant() {value = 4096.0} -> tensor<f32>
  %494 = broadcast_like(%493, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %495 = div(%492, %494) -> tensor<?x?x1>
  %496 = reduce(%495) {dims = [2], kind = "sum"} -> tensor<?x?>
  %497 = broadcast_in_dim(%496) {dims = [0, 1]} -> tensor<?x?x4096>
  %498 = mul(%361, %497) -> tensor<?x?x4096>
  %499 = add(%491, %498) -> tensor<?x?x4096>
  %500 = mul(%497, %361) -> tensor<?x?x4096>
  %501 = add(%499, %500) -> tensor<?x?x4096>
  %502 = dot_general(%501, %359) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %503 = transpose(%502) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %504 = dot_general(%501, %params.layers.3.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %505 = transpose(%504) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %506 = dot_general(%505, %336) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %507 = dot_general(%505, %356) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %508 = transpose(%507) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %509 = broadcast_like(%357, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %510 = mul(%506, %509) -> tensor<?x32x?x?>
  %511 = mul(%510, %352) -> tensor<?x32x?x?>
  %512 = reduce(%511) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %513 = broadcast_in_dim(%512) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %514 = neg(%513) -> tensor<?x32x?x1>
  %515 = broadcast_like(%353, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %516 = div(%506, %515) -> tensor<?x32x?x?>
  %517 = reduce(%514) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %518 = broadcast_like(%517, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %519 = add(%516, %518) -> tensor<?x32x?x?>
  %520 = mul(%519, %352) -> tensor<?x32x?x?>
  %521 = constant() {value = 0.0} -> tensor<f32>
  %522 = broadcast_like(%521, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %523 = select(%345, %520, %522) -> tensor<?x32x?x?>
  %524 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %525 = broadcast_like(%524, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %526 = mul(%523, %525) -> tensor<?x32x?x?>
  %527 = dot_general(%526, %328) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %528 = transpose(%527) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %529 = dot_general(%526, %335) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %530 = transpose(%529) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %531 = dot_general(%508, %321) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %532 = transpose(%531) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %533 = dot_general(%508, %params.layers.3.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %534 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %535 = mul(%528, %534) -> tensor<?x?x32x128>
  %536 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %537 = mul(%528, %536) -> tensor<?x?x32x128>
  %538 = dot_general(%535, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %539 = add(%537, %538) -> tensor<?x?x32x128>
  %540 = dot_general(%539, %321) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %541 = transpose(%540) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %542 = dot_general(%539, %params.layers.3.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %543 = add(%533, %542) -> tensor<?x?x4096>
  %544 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %545 = mul(%530, %544) -> tensor<?x?x32x128>
  %546 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %547 = mul(%530, %546) -> tensor<?x?x32x128>
  %548 = dot_general(%545, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %549 = add(%547, %548) -> tensor<?x?x32x128>
  %550 = dot_general(%549, %321) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %551 = transpose(%550) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %552 = dot_general(%549, %params.layers.3.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %553 = add(%543, %552) -> tensor<?x?x4096>
  %554 = mul(%319, %553) -> tensor<?x?x4096>
  %555 = reduce(%554) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %556 = broadcast_in_dim(%555) {dims = [2]} -> tensor<1x1x4096>
  %557 = broadcast_like(%params.layers.3.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %558 = mul(%553, %557) -> tensor<?x?x4096>
  %559 = reduce(%556) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %560 = mul(%303, %558) -> tensor<?x?x4096>
  %561 = reduce(%560) {dims = [2], kind = "sum"} -> tensor<?x?>
  %562 = broadcast_in_dim(%561) {dims = [0, 1]} -> tensor<?x?x1>
  %563 = broadcast_in_dim(%313) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %564 = mul(%558, %563) -> tensor<?x?x4096>
  %565 = add(%501, %564) -> tensor<?x?x4096>
  %566 = mul(%562, %317) -> tensor<?x?x1>
  %567 = constant() {value = 4096.0} -> tensor<f32>
  %568 = broadcast_like(%567, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %569 = div(%566, %568) -> tensor<?x?x1>
  %570 = reduce(%569) {dims = [2], kind = "sum"} -> tensor<?x?>
  %571 = broadcast_in_dim(%570) {dims = [0, 1]} -> tensor<?x?x4096>
  %572 = mul(%303, %571) -> tensor<?x?x4096>
  %573 = add(%565, %572) -> tensor<?x?x4096>
  %574 = mul(%571, %303) -> tensor<?x?x4096>
  %575 = add(%573, %574) -> tensor<?x?x4096>
  %576 = dot_general(%575, %301) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %577 = transpose(%576) {perm = [1, 0]} -> tensor<11008x4096>
  %578 = dot_general(%575, %params.layers.2.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %579 = mul(%300, %578) -> tensor<?x?x11008>
  %580 = mul(%578, %294) -> tensor<?x?x11008>
  %581 = mul(%293, %580) -> tensor<?x?x11008>
  %582 = mul(%580, %295) -> tensor<?x?x11008>
  %583 = mul(%581, %299) -> tensor<?x?x11008>
  %584 = add(%582, %583) -> tensor<?x?x11008>
  %585 = dot_general(%579, %292) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %586 = transpose(%585) {perm = [1, 0]} -> tensor<4096x11008>
  %587 = dot_general(%579, %params.layers.2.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %588 = dot_general(%584, %292) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %589 = transpose(%588) {perm = [1, 0]} -> tensor<4096x11008>
  %590 = dot_general(%584, %params.layers.2.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %591 = add(%587, %590) -> tensor<?x?x4096>
  %592 = mul(%290, %591) -> tensor<?x?x4096>
  %593 = reduce(%592) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %594 = broadcast_in_dim(%593) {dims = [2]} -> tensor<1x1x4096>
  %595 = broadcast_like(%params.layers.2.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %596 = mul(%591, %595) -> tensor<?x?x4096>
  %597 = reduce(%594) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %598 = mul(%274, %596) -> tensor<?x?x4096>
  %599 = reduce(%598) {dims = [2], kind = "sum"} -> tensor<?x?>
  %600 = broadcast_in_dim(%599) {dims = [0, 1]} -> tensor<?x?x1>
  %601 = broadcast_in_dim(%284) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %602 = mul(%596, %601) -> tensor<?x?x4096>
  %603 = add(%575, %602) -> tensor<?x?x4096>
  %604 = mul(%600, %288) -> tensor<?x?x1>
  %605 = constant() {value = 4096.0} -> tensor<f32>
  %606 = broadcast_like(%605, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %607 = div(%604, %606) -> tensor<?x?x1>
  %608 = reduce(%607) {dims = [2], kind = "sum"} -> tensor<?x?>
  %609 = broadcast_in_dim(%608) {dims = [0, 1]} -> tensor<?x?x4096>
  %610 = mul(%274, %609) -> tensor<?x?x4096>
  %611 = add(%603, %610) -> tensor<?x?x4096>
  %612 = mul(%609, %274) -> tensor<?x?x4096>
  %613 = add(%611, %612) -> tensor<?x?x4096>
  %614 = dot_general(%613, %272) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %615 = transpose(%614) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %616 = dot_general(%613, %params.layers.2.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %617 = transpose(%616) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %618 = dot_general(%617, %249) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %619 = dot_general(%617, %269) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %620 = transpose(%619) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %621 = broadcast_like(%270, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %622 = mul(%618, %621) -> tensor<?x32x?x?>
  %623 = mul(%622, %265) -> tensor<?x32x?x?>
  %624 = reduce(%623) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %625 = broadcast_in_dim(%624) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %626 = neg(%625) -> tensor<?x32x?x1>
  %627 = broadcast_like(%266, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %628 = div(%618, %627) -> tensor<?x32x?x?>
  %629 = reduce(%626) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %630 = broadcast_like(%629, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %631 = add(%628, %630) -> tensor<?x32x?x?>
  %632 = mul(%631, %265) -> tensor<?x32x?x?>
  %633 = constant() {value = 0.0} -> tensor<f32>
  %634 = broadcast_like(%633, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %635 = select(%258, %632, %634) -> tensor<?x32x?x?>
  %636 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %637 = broadcast_like(%636, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %638 = mul(%635, %637) -> tensor<?x32x?x?>
  %639 = dot_general(%638, %241) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %640 = transpose(%639) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %641 = dot_general(%638, %248) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %642 = transpose(%641) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %643 = dot_general(%620, %234) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %644 = transpose(%643) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %645 = dot_general(%620, %params.layers.2.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %646 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %647 = mul(%640, %646) -> tensor<?x?x32x128>
  %648 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %649 = mul(%640, %648) -> tensor<?x?x32x128>
  %650 = dot_general(%647, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %651 = add(%649, %650) -> tensor<?x?x32x128>
  %652 = dot_general(%651, %234) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %653 = transpose(%652) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %654 = dot_general(%651, %params.layers.2.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %655 = add(%645, %654) -> tensor<?x?x4096>
  %656 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %657 = mul(%642, %656) -> tensor<?x?x32x128>
  %658 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %659 = mul(%642, %658) -> tensor<?x?x32x128>
  %660 = dot_general(%657, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %661 = add(%659, %660) -> tensor<?x?x32x128>
  %662 = dot_general(%661, %234) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %663 = transpose(%662) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %664 = dot_general(%661, %params.layers.2.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %665 = add(%655, %664) -> tensor<?x?x4096>
  %666 = mul(%232, %665) -> tensor<?x?x4096>
  %667 = reduce(%666) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %668 = broadcast_in_dim(%667) {dims = [2]} -> tensor<1x1x4096>
  %669 = broadcast_like(%params.layers.2.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %670 = mul(%665, %669) -> tensor<?x?x4096>
  %671 = reduce(%668) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %672 = mul(%216, %670) -> tensor<?x?x4096>
  %673 = reduce(%672) {dims = [2], kind = "sum"} -> tensor<?x?>
  %674 = broadcast_in_dim(%673) {dims = [0, 1]} -> tensor<?x?x1>
  %675 = broadcast_in_dim(%226) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %676 = mul(%670, %675) -> tensor<?x?x4096>
  %677 = add(%613, %676) -> tensor<?x?x4096>
  %678 = mul(%674, %230) -> tensor<?x?x1>
  %679 = constant() {value = 4096.0} -> tensor<f32>
  %680 = broadcast_like(%679, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %681 = div(%678, %680) -> tensor<?x?x1>
  %682 = reduce(%681) {dims = [2], kind = "sum"} -> tensor<?x?>
  %683 = broadcast_in_dim(%682) {dims = [0, 1]} -> tensor<?x?x4096>
  %684 = mul(%216, %683) -> tensor<?x?x4096>
  %685 = add(%677, %684) -> tensor<?x?x4096>
  %686 = mul(%683, %216) -> tensor<?x?x4096>
  %687 = add(%685, %686) -> tensor<?x?x4096>
  %688 = dot_general(%687, %214) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %689 = transpose(%688) {perm = [1, 0]} -> tensor<11008x4096>
  %690 = dot_general(%687, %params.layers.1.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %691 = mul(%213, %690) -> tensor<?x?x11008>
  %692 = mul(%690, %207) -> tensor<?x?x11008>
  %693 = mul(%206, %692) -> tensor<?x?x11008>
  %694 = mul(%692, %208) -> tensor<?x?x11008>
  %695 = mul(%693, %212) -> tensor<?x?x11008>
  %696 = add(%694, %695) -> tensor<?x?x11008>
  %697 = dot_general(%691, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %698 = transpose(%697) {perm = [1, 0]} -> tensor<4096x11008>
  %699 = dot_general(%691, %params.layers.1.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %700 = dot_general(%696, %205) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %701 = transpose(%700) {perm = [1, 0]} -> tensor<4096x11008>
  %702 = dot_general(%696, %params.layers.1.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %703 = add(%699, %702) -> tensor<?x?x4096>
  %704 = mul(%203, %703) -> tensor<?x?x4096>
  %705 = reduce(%704) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %706 = broadcast_in_dim(%705) {dims = [2]} -> tensor<1x1x4096>
  %707 = broadcast_like(%params.layers.1.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %708 = mul(%703, %707) -> tensor<?x?x4096>
  %709 = reduce(%706) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %710 = mul(%187, %708) -> tensor<?x?x4096>
  %711 = reduce(%710) {dims = [2], kind = "sum"} -> tensor<?x?>
  %712 = broadcast_in_dim(%711) {dims = [0, 1]} -> tensor<?x?x1>
  %713 = broadcast_in_dim(%197) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %714 = mul(%708, %713) -> tensor<?x?x4096>
  %715 = add(%687, %714) -> tensor<?x?x4096>
  %716 = mul(%712, %201) -> tensor<?x?x1>
  %717 = constant() {value = 4096.0} -> tensor<f32>
  %718 = broadcast_like(%717, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %719 = div(%716, %718) -> tensor<?x?x1>
  %720 = reduce(%719) {dims = [2], kind = "sum"} -> tensor<?x?>
  %721 = broadcast_in_dim(%720) {dims = [0, 1]} -> tensor<?x?x4096>
  %722 = mul(%187, %721) -> tensor<?x?x4096>
  %723 = add(%715, %722) -> tensor<?x?x4096>
  %724 = mul(%721, %187) -> tensor<?x?x4096>
  %725 = add(%723, %724) -> tensor<?x?x4096>
  %726 = dot_general(%725, %185) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %727 = transpose(%726) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %728 = dot_general(%725, %params.layers.1.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %729 = transpose(%728) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %730 = dot_general(%729, %162) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %731 = dot_general(%729, %182) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %732 = transpose(%731) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %733 = broadcast_like(%183, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %734 = mul(%730, %733) -> tensor<?x32x?x?>
  %735 = mul(%734, %178) -> tensor<?x32x?x?>
  %736 = reduce(%735) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %737 = broadcast_in_dim(%736) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %738 = neg(%737) -> tensor<?x32x?x1>
  %739 = broadcast_like(%179, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %740 = div(%730, %739) -> tensor<?x32x?x?>
  %741 = reduce(%738) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %742 = broadcast_like(%741, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %743 = add(%740, %742) -> tensor<?x32x?x?>
  %744 = mul(%743, %178) -> tensor<?x32x?x?>
  %745 = constant() {value = 0.0} -> tensor<f32>
  %746 = broadcast_like(%745, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %747 = select(%171, %744, %746) -> tensor<?x32x?x?>
  %748 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %749 = broadcast_like(%748, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %750 = mul(%747, %749) -> tensor<?x32x?x?>
  %751 = dot_general(%750, %154) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %752 = transpose(%751) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %753 = dot_general(%750, %161) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %754 = transpose(%753) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %755 = dot_general(%732, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %756 = transpose(%755) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %757 = dot_general(%732, %params.layers.1.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %758 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %759 = mul(%752, %758) -> tensor<?x?x32x128>
  %760 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %761 = mul(%752, %760) -> tensor<?x?x32x128>
  %762 = dot_general(%759, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %763 = add(%761, %762) -> tensor<?x?x32x128>
  %764 = dot_general(%763, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %765 = transpose(%764) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %766 = dot_general(%763, %params.layers.1.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %767 = add(%757, %766) -> tensor<?x?x4096>
  %768 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %769 = mul(%754, %768) -> tensor<?x?x32x128>
  %770 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %771 = mul(%754, %770) -> tensor<?x?x32x128>
  %772 = dot_general(%769, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %773 = add(%771, %772) -> tensor<?x?x32x128>
  %774 = dot_general(%773, %147) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %775 = transpose(%774) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %776 = dot_general(%773, %params.layers.1.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %777 = add(%767, %776) -> tensor<?x?x4096>
  %778 = mul(%145, %777) -> tensor<?x?x4096>
  %779 = reduce(%778) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %780 = broadcast_in_dim(%779) {dims = [2]} -> tensor<1x1x4096>
  %781 = broadcast_like(%params.layers.1.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %782 = mul(%777, %781) -> tensor<?x?x4096>
  %783 = reduce(%780) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %784 = mul(%129, %782) -> tensor<?x?x4096>
  %785 = reduce(%784) {dims = [2], kind = "sum"} -> tensor<?x?>
  %786 = broadcast_in_dim(%785) {dims = [0, 1]} -> tensor<?x?x1>
  %787 = broadcast_in_dim(%139) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %788 = mul(%782, %787) -> tensor<?x?x4096>
  %789 = add(%725, %788) -> tensor<?x?x4096>
  %790 = mul(%786, %143) -> tensor<?x?x1>
  %791 = constant() {value = 4096.0} -> tensor<f32>
  %792 = broadcast_like(%791, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %793 = div(%790, %792) -> tensor<?x?x1>
  %794 = reduce(%793) {dims = [2], kind = "sum"} -> tensor<?x?>
  %795 = broadcast_in_dim(%794) {dims = [0, 1]} -> tensor<?x?x4096>
  %796 = mul(%129, %795) -> tensor<?x?x4096>
  %797 = add(%789, %796) -> tensor<?x?x4096>
  %798 = mul(%795, %129) -> tensor<?x?x4096>
  %799 = add(%797, %798) -> tensor<?x?x4096>
  %800 = dot_general(%799, %127) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x11008>
  %801 = transpose(%800) {perm = [1, 0]} -> tensor<11008x4096>
  %802 = dot_general(%799, %params.layers.0.w_down) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x11008>
  %803 = mul(%126, %802) -> tensor<?x?x11008>
  %804 = mul(%802, %120) -> tensor<?x?x11008>
  %805 = mul(%119, %804) -> tensor<?x?x11008>
  %806 = mul(%804, %121) -> tensor<?x?x11008>
  %807 = mul(%805, %125) -> tensor<?x?x11008>
  %808 = add(%806, %807) -> tensor<?x?x11008>
  %809 = dot_general(%803, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %810 = transpose(%809) {perm = [1, 0]} -> tensor<4096x11008>
  %811 = dot_general(%803, %params.layers.0.w_up) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %812 = dot_general(%808, %118) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<11008x4096>
  %813 = transpose(%812) {perm = [1, 0]} -> tensor<4096x11008>
  %814 = dot_general(%808, %params.layers.0.w_gate) {lhs_contract = [2], rhs_contract = [1]} -> tensor<?x?x4096>
  %815 = add(%811, %814) -> tensor<?x?x4096>
  %816 = mul(%116, %815) -> tensor<?x?x4096>
  %817 = reduce(%816) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %818 = broadcast_in_dim(%817) {dims = [2]} -> tensor<1x1x4096>
  %819 = broadcast_like(%params.layers.0.mlp_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %820 = mul(%815, %819) -> tensor<?x?x4096>
  %821 = reduce(%818) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %822 = mul(%100, %820) -> tensor<?x?x4096>
  %823 = reduce(%822) {dims = [2], kind = "sum"} -> tensor<?x?>
  %824 = broadcast_in_dim(%823) {dims = [0, 1]} -> tensor<?x?x1>
  %825 = broadcast_in_dim(%110) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %826 = mul(%820, %825) -> tensor<?x?x4096>
  %827 = add(%799, %826) -> tensor<?x?x4096>
  %828 = mul(%824, %114) -> tensor<?x?x1>
  %829 = constant() {value = 4096.0} -> tensor<f32>
  %830 = broadcast_like(%829, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %831 = div(%828, %830) -> tensor<?x?x1>
  %832 = reduce(%831) {dims = [2], kind = "sum"} -> tensor<?x?>
  %833 = broadcast_in_dim(%832) {dims = [0, 1]} -> tensor<?x?x4096>
  %834 = mul(%100, %833) -> tensor<?x?x4096>
  %835 = add(%827, %834) -> tensor<?x?x4096>
  %836 = mul(%833, %100) -> tensor<?x?x4096>
  %837 = add(%835, %836) -> tensor<?x?x4096>
  %838 = dot_general(%837, %98) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<4096x32x128>
  %839 = transpose(%838) {perm = [1, 2, 0]} -> tensor<32x128x4096>
  %840 = dot_general(%837, %params.layers.0.wo) {lhs_contract = [2], rhs_contract = [2]} -> tensor<?x?x32x128>
  %841 = transpose(%840) {perm = [0, 2, 3, 1]} -> tensor<?x32x128x?>
  %842 = dot_general(%841, %75) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [3]} -> tensor<?x32x?x?>
  %843 = dot_general(%841, %95) {lhs_batch = [0, 1], rhs_batch = [0, 1], lhs_contract = [3], rhs_contract = [2]} -> tensor<?x32x128x?>
  %844 = transpose(%843) {perm = [0, 3, 1, 2]} -> tensor<?x?x32x128>
  %845 = broadcast_like(%96, %tokens) {dims = [0, 1, 2, 3], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %846 = mul(%842, %845) -> tensor<?x32x?x?>
  %847 = mul(%846, %91) -> tensor<?x32x?x?>
  %848 = reduce(%847) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %849 = broadcast_in_dim(%848) {dims = [0, 1, 2]} -> tensor<?x32x?x1>
  %850 = neg(%849) -> tensor<?x32x?x1>
  %851 = broadcast_like(%92, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %852 = div(%842, %851) -> tensor<?x32x?x?>
  %853 = reduce(%850) {dims = [3], kind = "sum"} -> tensor<?x32x?>
  %854 = broadcast_like(%853, %tokens) {dims = [0, 1, 2], source = [-1, -1, -1, 0], axis = [-1, -1, -1, 1]} -> tensor<?x32x?x?>
  %855 = add(%852, %854) -> tensor<?x32x?x?>
  %856 = mul(%855, %91) -> tensor<?x32x?x?>
  %857 = constant() {value = 0.0} -> tensor<f32>
  %858 = broadcast_like(%857, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %859 = select(%84, %856, %858) -> tensor<?x32x?x?>
  %860 = constant() {value = 0.0883883461356163} -> tensor<f32>
  %861 = broadcast_like(%860, %tokens) {dims = [], source = [0, -1, 0, 0], axis = [0, -1, 1, 1]} -> tensor<?x32x?x?>
  %862 = mul(%859, %861) -> tensor<?x32x?x?>
  %863 = dot_general(%862, %67) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [2], rhs_contract = [1]} -> tensor<?x32x?x128>
  %864 = transpose(%863) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %865 = dot_general(%862, %74) {lhs_batch = [0, 1], rhs_batch = [0, 2], lhs_contract = [3], rhs_contract = [1]} -> tensor<?x32x?x128>
  %866 = transpose(%865) {perm = [0, 2, 1, 3]} -> tensor<?x?x32x128>
  %867 = dot_general(%844, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %868 = transpose(%867) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %869 = dot_general(%844, %params.layers.0.wv) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %870 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %871 = mul(%864, %870) -> tensor<?x?x32x128>
  %872 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %873 = mul(%864, %872) -> tensor<?x?x32x128>
  %874 = dot_general(%871, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %875 = add(%873, %874) -> tensor<?x?x32x128>
  %876 = dot_general(%875, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %877 = transpose(%876) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %878 = dot_general(%875, %params.layers.0.wk) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %879 = add(%869, %878) -> tensor<?x?x4096>
  %880 = broadcast_like(%42, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %881 = mul(%866, %880) -> tensor<?x?x32x128>
  %882 = broadcast_like(%41, %tokens) {dims = [1, 3], source = [0, -1, -1, -1], axis = [0, -1, -1, -1]} -> tensor<?x?x32x128>
  %883 = mul(%866, %882) -> tensor<?x?x32x128>
  %884 = dot_general(%881, %40) {lhs_contract = [3], rhs_contract = [1]} -> tensor<?x?x32x128>
  %885 = add(%883, %884) -> tensor<?x?x32x128>
  %886 = dot_general(%885, %60) {lhs_contract = [0, 1], rhs_contract = [0, 1]} -> tensor<32x128x4096>
  %887 = transpose(%886) {perm = [2, 0, 1]} -> tensor<4096x32x128>
  %888 = dot_general(%885, %params.layers.0.wq) {lhs_contract = [2, 3], rhs_contract = [1, 2]} -> tensor<?x?x4096>
  %889 = add(%879, %888) -> tensor<?x?x4096>
  %890 = mul(%58, %889) -> tensor<?x?x4096>
  %891 = reduce(%890) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %892 = broadcast_in_dim(%891) {dims = [2]} -> tensor<1x1x4096>
  %893 = broadcast_like(%params.layers.0.attn_norm, %tokens) {dims = [2], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x4096>
  %894 = mul(%889, %893) -> tensor<?x?x4096>
  %895 = reduce(%892) {dims = [0, 1], kind = "sum"} -> tensor<4096>
  %896 = mul(%7, %894) -> tensor<?x?x4096>
  %897 = reduce(%896) {dims = [2], kind = "sum"} -> tensor<?x?>
  %898 = broadcast_in_dim(%897) {dims = [0, 1]} -> tensor<?x?x1>
  %899 = broadcast_in_dim(%52) {dims = [0, 1, 2]} -> tensor<?x?x4096>
  %900 = mul(%894, %899) -> tensor<?x?x4096>
  %901 = add(%837, %900) -> tensor<?x?x4096>
  %902 = mul(%898, %56) -> tensor<?x?x1>
  %903 = constant() {value = 4096.0} -> tensor<f32>
  %904 = broadcast_like(%903, %tokens) {dims = [], source = [0, 0, -1], axis = [0, 1, -1]} -> tensor<?x?x1>
  %905 = div(%902, %904) -> tensor<?x?x1>
  %906 = reduce(%905) {dims = [2], kind = "sum"} -> tensor<?x?>
  %907 = broadcast_in_dim(%906) {dims = [0, 1]} -> tensor<?x?x4096>
  %908 = mul(%7, %907) -> tensor<?x?x4096>
  %909 = add(%901, %908) -> tensor<?x?x4096>
  %910 = mul(%907, %7) -> tensor<?x?x4096>
  %911 = add(%909, %910) -> tensor<?x?x4096>
  %912 = constant() {value = 0.0} -> tensor<32000x4096>
  %913 = scatter_add(%912, %6, %911) -> tensor<32000x4096>
  %914 = constant() {value = 0.8999999761581421} -> tensor<32000x4096>
  %915 = mul(%914, %state.m.embed) -> tensor<32000x4096>
  %916 = constant() {value = 0.10000000149011612} -> tensor<32000x4096>
  %917 = mul(%916, %913) -> tensor<32000x4096>
  %new_state.m.embed = add(%915, %917) -> tensor<32000x4096>
  %918 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %919 = mul(%918, %state.m.final_norm) -> tensor<4096>
  %920 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %921 = mul(%920, %448) -> tensor<4096>
  %new_state.m.final_norm = add(%919, %921) -> tensor<4096>
  %922 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %923 = mul(%922, %state.m.layers.0.attn_norm) -> tensor<4096>
  %924 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %925 = mul(%924, %895) -> tensor<4096>
  %new_state.m.layers.0.attn_norm = add(%923, %925) -> tensor<4096>
  %926 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %927 = mul(%926, %state.m.layers.0.mlp_norm) -> tensor<4096>
  %928 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %929 = mul(%928, %821) -> tensor<4096>
  %new_state.m.layers.0.mlp_norm = add(%927, %929) -> tensor<4096>
  %930 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %931 = mul(%930, %state.m.layers.0.w_down) -> tensor<11008x4096>
  %932 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %933 = mul(%932, %801) -> tensor<11008x4096>
  %new_state.m.layers.0.w_down = add(%931, %933) -> tensor<11008x4096>
  %934 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %935 = mul(%934, %state.m.layers.0.w_gate) -> tensor<4096x11008>
  %936 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %937 = mul(%936, %813) -> tensor<4096x11008>
  %new_state.m.layers.0.w_gate = add(%935, %937) -> tensor<4096x11008>
  %938 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %939 = mul(%938, %state.m.layers.0.w_up) -> tensor<4096x11008>
  %940 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %941 = mul(%940, %810) -> tensor<4096x11008>
  %new_state.m.layers.0.w_up = add(%939, %941) -> tensor<4096x11008>
  %942 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %943 = mul(%942, %state.m.layers.0.wk) -> tensor<4096x32x128>
  %944 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %945 = mul(%944, %877) -> tensor<4096x32x128>
  %new_state.m.layers.0.wk = add(%943, %945) -> tensor<4096x32x128>
  %946 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %947 = mul(%946, %state.m.layers.0.wo) -> tensor<32x128x4096>
  %948 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %949 = mul(%948, %839) -> tensor<32x128x4096>
  %new_state.m.layers.0.wo = add(%947, %949) -> tensor<32x128x4096>
  %950 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %951 = mul(%950, %state.m.layers.0.wq) -> tensor<4096x32x128>
  %952 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %953 = mul(%952, %887) -> tensor<4096x32x128>
  %new_state.m.layers.0.wq = add(%951, %953) -> tensor<4096x32x128>
  %954 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %955 = mul(%954, %state.m.layers.0.wv) -> tensor<4096x32x128>
  %956 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %957 = mul(%956, %868) -> tensor<4096x32x128>
  %new_state.m.layers.0.wv = add(%955, %957) -> tensor<4096x32x128>
  %958 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %959 = mul(%958, %state.m.layers.1.attn_norm) -> tensor<4096>
  %960 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %961 = mul(%960, %783) -> tensor<4096>
  %new_state.m.layers.1.attn_norm = add(%959, %961) -> tensor<4096>
  %962 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %963 = mul(%962, %state.m.layers.1.mlp_norm) -> tensor<4096>
  %964 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %965 = mul(%964, %709) -> tensor<4096>
  %new_state.m.layers.1.mlp_norm = add(%963, %965) -> tensor<4096>
  %966 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %967 = mul(%966, %state.m.layers.1.w_down) -> tensor<11008x4096>
  %968 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %969 = mul(%968, %689) -> tensor<11008x4096>
  %new_state.m.layers.1.w_down = add(%967, %969) -> tensor<11008x4096>
  %970 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %971 = mul(%970, %state.m.layers.1.w_gate) -> tensor<4096x11008>
  %972 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %973 = mul(%972, %701) -> tensor<4096x11008>
  %new_state.m.layers.1.w_gate = add(%971, %973) -> tensor<4096x11008>
  %974 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %975 = mul(%974, %state.m.layers.1.w_up) -> tensor<4096x11008>
  %976 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %977 = mul(%976, %698) -> tensor<4096x11008>
  %new_state.m.layers.1.w_up = add(%975, %977) -> tensor<4096x11008>
  %978 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %979 = mul(%978, %state.m.layers.1.wk) -> tensor<4096x32x128>
  %980 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %981 = mul(%980, %765) -> tensor<4096x32x128>
  %new_state.m.layers.1.wk = add(%979, %981) -> tensor<4096x32x128>
  %982 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %983 = mul(%982, %state.m.layers.1.wo) -> tensor<32x128x4096>
  %984 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %985 = mul(%984, %727) -> tensor<32x128x4096>
  %new_state.m.layers.1.wo = add(%983, %985) -> tensor<32x128x4096>
  %986 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %987 = mul(%986, %state.m.layers.1.wq) -> tensor<4096x32x128>
  %988 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %989 = mul(%988, %775) -> tensor<4096x32x128>
  %new_state.m.layers.1.wq = add(%987, %989) -> tensor<4096x32x128>
  %990 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %991 = mul(%990, %state.m.layers.1.wv) -> tensor<4096x32x128>
  %992 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %993 = mul(%992, %756) -> tensor<4096x32x128>
  %new_state.m.layers.1.wv = add(%991, %993) -> tensor<4096x32x128>
  %994 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %995 = mul(%994, %state.m.layers.2.attn_norm) -> tensor<4096>
  %996 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %997 = mul(%996, %671) -> tensor<4096>
  %new_state.m.layers.2.attn_norm = add(%995, %997) -> tensor<4096>
  %998 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %999 = mul(%998, %state.m.layers.2.mlp_norm) -> tensor<4096>
  %1000 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %1001 = mul(%1000, %597) -> tensor<4096>
  %new_state.m.layers.2.mlp_norm = add(%999, %1001) -> tensor<4096>
  %1002 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %1003 = mul(%1002, %state.m.layers.2.w_down) -> tensor<11008x4096>
  %1004 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %1005 = mul(%1004, %577) -> tensor<11008x4096>
  %new_state.m.layers.2.w_down = add(%1003, %1005) -> tensor<11008x4096>
  %1006 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %1007 = mul(%1006, %state.m.layers.2.w_gate) -> tensor<4096x11008>
  %1008 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %1009 = mul(%1008, %589) -> tensor<4096x11008>
  %new_state.m.layers.2.w_gate = add(%1007, %1009) -> tensor<4096x11008>
  %1010 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %1011 = mul(%1010, %state.m.layers.2.w_up) -> tensor<4096x11008>
  %1012 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %1013 = mul(%1012, %586) -> tensor<4096x11008>
  %new_state.m.layers.2.w_up = add(%1011, %1013) -> tensor<4096x11008>
  %1014 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1015 = mul(%1014, %state.m.layers.2.wk) -> tensor<4096x32x128>
  %1016 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1017 = mul(%1016, %653) -> tensor<4096x32x128>
  %new_state.m.layers.2.wk = add(%1015, %1017) -> tensor<4096x32x128>
  %1018 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %1019 = mul(%1018, %state.m.layers.2.wo) -> tensor<32x128x4096>
  %1020 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %1021 = mul(%1020, %615) -> tensor<32x128x4096>
  %new_state.m.layers.2.wo = add(%1019, %1021) -> tensor<32x128x4096>
  %1022 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1023 = mul(%1022, %state.m.layers.2.wq) -> tensor<4096x32x128>
  %1024 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1025 = mul(%1024, %663) -> tensor<4096x32x128>
  %new_state.m.layers.2.wq = add(%1023, %1025) -> tensor<4096x32x128>
  %1026 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1027 = mul(%1026, %state.m.layers.2.wv) -> tensor<4096x32x128>
  %1028 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1029 = mul(%1028, %644) -> tensor<4096x32x128>
  %new_state.m.layers.2.wv = add(%1027, %1029) -> tensor<4096x32x128>
  %1030 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %1031 = mul(%1030, %state.m.layers.3.attn_norm) -> tensor<4096>
  %1032 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %1033 = mul(%1032, %559) -> tensor<4096>
  %new_state.m.layers.3.attn_norm = add(%1031, %1033) -> tensor<4096>
  %1034 = constant() {value = 0.8999999761581421} -> tensor<4096>
  %1035 = mul(%1034, %state.m.layers.3.mlp_norm) -> tensor<4096>
  %1036 = constant() {value = 0.10000000149011612} -> tensor<4096>
  %1037 = mul(%1036, %485) -> tensor<4096>
  %new_state.m.layers.3.mlp_norm = add(%1035, %1037) -> tensor<4096>
  %1038 = constant() {value = 0.8999999761581421} -> tensor<11008x4096>
  %1039 = mul(%1038, %state.m.layers.3.w_down) -> tensor<11008x4096>
  %1040 = constant() {value = 0.10000000149011612} -> tensor<11008x4096>
  %1041 = mul(%1040, %465) -> tensor<11008x4096>
  %new_state.m.layers.3.w_down = add(%1039, %1041) -> tensor<11008x4096>
  %1042 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %1043 = mul(%1042, %state.m.layers.3.w_gate) -> tensor<4096x11008>
  %1044 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %1045 = mul(%1044, %477) -> tensor<4096x11008>
  %new_state.m.layers.3.w_gate = add(%1043, %1045) -> tensor<4096x11008>
  %1046 = constant() {value = 0.8999999761581421} -> tensor<4096x11008>
  %1047 = mul(%1046, %state.m.layers.3.w_up) -> tensor<4096x11008>
  %1048 = constant() {value = 0.10000000149011612} -> tensor<4096x11008>
  %1049 = mul(%1048, %474) -> tensor<4096x11008>
  %new_state.m.layers.3.w_up = add(%1047, %1049) -> tensor<4096x11008>
  %1050 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1051 = mul(%1050, %state.m.layers.3.wk) -> tensor<4096x32x128>
  %1052 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1053 = mul(%1052, %541) -> tensor<4096x32x128>
  %new_state.m.layers.3.wk = add(%1051, %1053) -> tensor<4096x32x128>
  %1054 = constant() {value = 0.8999999761581421} -> tensor<32x128x4096>
  %1055 = mul(%1054, %state.m.layers.3.wo) -> tensor<32x128x4096>
  %1056 = constant() {value = 0.10000000149011612} -> tensor<32x128x4096>
  %1057 = mul(%1056, %503) -> tensor<32x128x4096>
  %new_state.m.layers.3.wo = add(%1055, %1057) -> tensor<32x128x4096>
  %1058 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1059 = mul(%1058, %state.m.layers.3.wq) -> tensor<4096x32x128>
  %1060 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1061 = mul(%1060, %551) -> tensor<4096x32x128>
  %new_state.m.layers.3.wq = add(%1059, %1061) -> tensor<4096x32x128>
  %1062 = constant() {value = 0.8999999761581421} -> tensor<4096x32x128>
  %1063 = mul(%1062, %state.m.layers.3.wv) -> tensor<4096x32x128>
  %1064 = constant() {value = 0.10000000149011612} -> tensor<4096x32x128>
  %1065 = mul(%1064, %532) -> tensor<4096x32x128>
  %new_state.m.layers.3.wv = add(%1063, %1065) -> tensor<4096x32x128>
  %1066 = constant() {value = 0.8999999761581421} -> tensor<4096x32000>
  %1067 = mul(%1066, %state.m.lm_head) -> tensor<4096x32000>
  %1068 = constant() {value = 0.10000000149011612} -> tensor<4096x32000>
  %1069 = mul(%1068, %441) -> tensor<4096x32000>
  %new_state.m.lm_head = add(%1067, %1069) -> tensor<4096x32000>
  %1070 = constant() {value = 0.9990000128746033} -> tensor<32000x4096>
  %1071 = mul(%1070, %state.v.embed) -> tensor<32000x4096>
  %1072 = mul(%913, %913) -> tensor<32000x4096>
  %1073 = constant() {value = 0.0010000000474974513} -> tensor<32000x4096>
  %1074 = mul(%1073, %1072) -> tensor<32000x4096>
  %new_state.v.embed = add(%1071, %1074) -> tensor<32000x4096>
  %1075 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1076 = mul(%1075, %state.v.final_norm) -> tensor<4096>
  %1077 = mul(%448, %448) -> tensor<4096>
  %1078 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1079 = mul(%1078, %1077) -> tensor<4096>
  %new_state.v.final_norm = add(%1076, %1079) -> tensor<4096>
  %1080 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1081 = mul(%1080, %state.v.layers.0.attn_norm) -> tensor<4096>
  %1082 = mul(%895, %895) -> tensor<4096>
  %1083 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1084 = mul(%1083, %1082) -> tensor<4096>
  %new_state.v.layers.0.attn_norm = add(%1081, %1084) -> tensor<4096>
  %1085 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1086 = mul(%1085, %state.v.layers.0.mlp_norm) -> tensor<4096>
  %1087 = mul(%821, %821) -> tensor<4096>
  %1088 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1089 = mul(%1088, %1087) -> tensor<4096>
  %new_state.v.layers.0.mlp_norm = add(%1086, %1089) -> tensor<4096>
  %1090 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1091 = mul(%1090, %state.v.layers.0.w_down) -> tensor<11008x4096>
  %1092 = mul(%801, %801) -> tensor<11008x4096>
  %1093 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1094 = mul(%1093, %1092) -> tensor<11008x4096>
  %new_state.v.layers.0.w_down = add(%1091, %1094) -> tensor<11008x4096>
  %1095 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1096 = mul(%1095, %state.v.layers.0.w_gate) -> tensor<4096x11008>
  %1097 = mul(%813, %813) -> tensor<4096x11008>
  %1098 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1099 = mul(%1098, %1097) -> tensor<4096x11008>
  %new_state.v.layers.0.w_gate = add(%1096, %1099) -> tensor<4096x11008>
  %1100 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1101 = mul(%1100, %state.v.layers.0.w_up) -> tensor<4096x11008>
  %1102 = mul(%810, %810) -> tensor<4096x11008>
  %1103 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1104 = mul(%1103, %1102) -> tensor<4096x11008>
  %new_state.v.layers.0.w_up = add(%1101, %1104) -> tensor<4096x11008>
  %1105 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1106 = mul(%1105, %state.v.layers.0.wk) -> tensor<4096x32x128>
  %1107 = mul(%877, %877) -> tensor<4096x32x128>
  %1108 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1109 = mul(%1108, %1107) -> tensor<4096x32x128>
  %new_state.v.layers.0.wk = add(%1106, %1109) -> tensor<4096x32x128>
  %1110 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1111 = mul(%1110, %state.v.layers.0.wo) -> tensor<32x128x4096>
  %1112 = mul(%839, %839) -> tensor<32x128x4096>
  %1113 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1114 = mul(%1113, %1112) -> tensor<32x128x4096>
  %new_state.v.layers.0.wo = add(%1111, %1114) -> tensor<32x128x4096>
  %1115 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1116 = mul(%1115, %state.v.layers.0.wq) -> tensor<4096x32x128>
  %1117 = mul(%887, %887) -> tensor<4096x32x128>
  %1118 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1119 = mul(%1118, %1117) -> tensor<4096x32x128>
  %new_state.v.layers.0.wq = add(%1116, %1119) -> tensor<4096x32x128>
  %1120 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1121 = mul(%1120, %state.v.layers.0.wv) -> tensor<4096x32x128>
  %1122 = mul(%868, %868) -> tensor<4096x32x128>
  %1123 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1124 = mul(%1123, %1122) -> tensor<4096x32x128>
  %new_state.v.layers.0.wv = add(%1121, %1124) -> tensor<4096x32x128>
  %1125 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1126 = mul(%1125, %state.v.layers.1.attn_norm) -> tensor<4096>
  %1127 = mul(%783, %783) -> tensor<4096>
  %1128 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1129 = mul(%1128, %1127) -> tensor<4096>
  %new_state.v.layers.1.attn_norm = add(%1126, %1129) -> tensor<4096>
  %1130 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1131 = mul(%1130, %state.v.layers.1.mlp_norm) -> tensor<4096>
  %1132 = mul(%709, %709) -> tensor<4096>
  %1133 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1134 = mul(%1133, %1132) -> tensor<4096>
  %new_state.v.layers.1.mlp_norm = add(%1131, %1134) -> tensor<4096>
  %1135 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1136 = mul(%1135, %state.v.layers.1.w_down) -> tensor<11008x4096>
  %1137 = mul(%689, %689) -> tensor<11008x4096>
  %1138 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1139 = mul(%1138, %1137) -> tensor<11008x4096>
  %new_state.v.layers.1.w_down = add(%1136, %1139) -> tensor<11008x4096>
  %1140 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1141 = mul(%1140, %state.v.layers.1.w_gate) -> tensor<4096x11008>
  %1142 = mul(%701, %701) -> tensor<4096x11008>
  %1143 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1144 = mul(%1143, %1142) -> tensor<4096x11008>
  %new_state.v.layers.1.w_gate = add(%1141, %1144) -> tensor<4096x11008>
  %1145 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1146 = mul(%1145, %state.v.layers.1.w_up) -> tensor<4096x11008>
  %1147 = mul(%698, %698) -> tensor<4096x11008>
  %1148 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1149 = mul(%1148, %1147) -> tensor<4096x11008>
  %new_state.v.layers.1.w_up = add(%1146, %1149) -> tensor<4096x11008>
  %1150 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1151 = mul(%1150, %state.v.layers.1.wk) -> tensor<4096x32x128>
  %1152 = mul(%765, %765) -> tensor<4096x32x128>
  %1153 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1154 = mul(%1153, %1152) -> tensor<4096x32x128>
  %new_state.v.layers.1.wk = add(%1151, %1154) -> tensor<4096x32x128>
  %1155 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1156 = mul(%1155, %state.v.layers.1.wo) -> tensor<32x128x4096>
  %1157 = mul(%727, %727) -> tensor<32x128x4096>
  %1158 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1159 = mul(%1158, %1157) -> tensor<32x128x4096>
  %new_state.v.layers.1.wo = add(%1156, %1159) -> tensor<32x128x4096>
  %1160 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1161 = mul(%1160, %state.v.layers.1.wq) -> tensor<4096x32x128>
  %1162 = mul(%775, %775) -> tensor<4096x32x128>
  %1163 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1164 = mul(%1163, %1162) -> tensor<4096x32x128>
  %new_state.v.layers.1.wq = add(%1161, %1164) -> tensor<4096x32x128>
  %1165 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1166 = mul(%1165, %state.v.layers.1.wv) -> tensor<4096x32x128>
  %1167 = mul(%756, %756) -> tensor<4096x32x128>
  %1168 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1169 = mul(%1168, %1167) -> tensor<4096x32x128>
  %new_state.v.layers.1.wv = add(%1166, %1169) -> tensor<4096x32x128>
  %1170 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1171 = mul(%1170, %state.v.layers.2.attn_norm) -> tensor<4096>
  %1172 = mul(%671, %671) -> tensor<4096>
  %1173 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1174 = mul(%1173, %1172) -> tensor<4096>
  %new_state.v.layers.2.attn_norm = add(%1171, %1174) -> tensor<4096>
  %1175 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1176 = mul(%1175, %state.v.layers.2.mlp_norm) -> tensor<4096>
  %1177 = mul(%597, %597) -> tensor<4096>
  %1178 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1179 = mul(%1178, %1177) -> tensor<4096>
  %new_state.v.layers.2.mlp_norm = add(%1176, %1179) -> tensor<4096>
  %1180 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1181 = mul(%1180, %state.v.layers.2.w_down) -> tensor<11008x4096>
  %1182 = mul(%577, %577) -> tensor<11008x4096>
  %1183 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1184 = mul(%1183, %1182) -> tensor<11008x4096>
  %new_state.v.layers.2.w_down = add(%1181, %1184) -> tensor<11008x4096>
  %1185 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1186 = mul(%1185, %state.v.layers.2.w_gate) -> tensor<4096x11008>
  %1187 = mul(%589, %589) -> tensor<4096x11008>
  %1188 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1189 = mul(%1188, %1187) -> tensor<4096x11008>
  %new_state.v.layers.2.w_gate = add(%1186, %1189) -> tensor<4096x11008>
  %1190 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1191 = mul(%1190, %state.v.layers.2.w_up) -> tensor<4096x11008>
  %1192 = mul(%586, %586) -> tensor<4096x11008>
  %1193 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1194 = mul(%1193, %1192) -> tensor<4096x11008>
  %new_state.v.layers.2.w_up = add(%1191, %1194) -> tensor<4096x11008>
  %1195 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1196 = mul(%1195, %state.v.layers.2.wk) -> tensor<4096x32x128>
  %1197 = mul(%653, %653) -> tensor<4096x32x128>
  %1198 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1199 = mul(%1198, %1197) -> tensor<4096x32x128>
  %new_state.v.layers.2.wk = add(%1196, %1199) -> tensor<4096x32x128>
  %1200 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1201 = mul(%1200, %state.v.layers.2.wo) -> tensor<32x128x4096>
  %1202 = mul(%615, %615) -> tensor<32x128x4096>
  %1203 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1204 = mul(%1203, %1202) -> tensor<32x128x4096>
  %new_state.v.layers.2.wo = add(%1201, %1204) -> tensor<32x128x4096>
  %1205 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1206 = mul(%1205, %state.v.layers.2.wq) -> tensor<4096x32x128>
  %1207 = mul(%663, %663) -> tensor<4096x32x128>
  %1208 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1209 = mul(%1208, %1207) -> tensor<4096x32x128>
  %new_state.v.layers.2.wq = add(%1206, %1209) -> tensor<4096x32x128>
  %1210 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1211 = mul(%1210, %state.v.layers.2.wv) -> tensor<4096x32x128>
  %1212 = mul(%644, %644) -> tensor<4096x32x128>
  %1213 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1214 = mul(%1213, %1212) -> tensor<4096x32x128>
  %new_state.v.layers.2.wv = add(%1211, %1214) -> tensor<4096x32x128>
  %1215 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1216 = mul(%1215, %state.v.layers.3.attn_norm) -> tensor<4096>
  %1217 = mul(%559, %559) -> tensor<4096>
  %1218 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1219 = mul(%1218, %1217) -> tensor<4096>
  %new_state.v.layers.3.attn_norm = add(%1216, %1219) -> tensor<4096>
  %1220 = constant() {value = 0.9990000128746033} -> tensor<4096>
  %1221 = mul(%1220, %state.v.layers.3.mlp_norm) -> tensor<4096>
  %1222 = mul(%485, %485) -> tensor<4096>
  %1223 = constant() {value = 0.0010000000474974513} -> tensor<4096>
  %1224 = mul(%1223, %1222) -> tensor<4096>
  %new_state.v.layers.3.mlp_norm = add(%1221, %1224) -> tensor<4096>
  %1225 = constant() {value = 0.9990000128746033} -> tensor<11008x4096>
  %1226 = mul(%1225, %state.v.layers.3.w_down) -> tensor<11008x4096>
  %1227 = mul(%465, %465) -> tensor<11008x4096>
  %1228 = constant() {value = 0.0010000000474974513} -> tensor<11008x4096>
  %1229 = mul(%1228, %1227) -> tensor<11008x4096>
  %new_state.v.layers.3.w_down = add(%1226, %1229) -> tensor<11008x4096>
  %1230 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1231 = mul(%1230, %state.v.layers.3.w_gate) -> tensor<4096x11008>
  %1232 = mul(%477, %477) -> tensor<4096x11008>
  %1233 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1234 = mul(%1233, %1232) -> tensor<4096x11008>
  %new_state.v.layers.3.w_gate = add(%1231, %1234) -> tensor<4096x11008>
  %1235 = constant() {value = 0.9990000128746033} -> tensor<4096x11008>
  %1236 = mul(%1235, %state.v.layers.3.w_up) -> tensor<4096x11008>
  %1237 = mul(%474, %474) -> tensor<4096x11008>
  %1238 = constant() {value = 0.0010000000474974513} -> tensor<4096x11008>
  %1239 = mul(%1238, %1237) -> tensor<4096x11008>
  %new_state.v.layers.3.w_up = add(%1236, %1239) -> tensor<4096x11008>
  %1240 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1241 = mul(%1240, %state.v.layers.3.wk) -> tensor<4096x32x128>
  %1242 = mul(%541, %541) -> tensor<4096x32x128>
  %1243 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1244 = mul(%1243, %1242) -> tensor<4096x32x128>
  %new_state.v.layers.3.wk = add(%1241, %1244) -> tensor<4096x32x128>
  %1245 = constant() {value = 0.9990000128746033} -> tensor<32x128x4096>
  %1246 = mul(%1245, %state.v.layers.3.wo) -> tensor<32x128x4096>
  %1247 = mul(%503, %503) -> tensor<32x128x4096>
  %1248 = constant() {value = 0.0010000000474974513} -> tensor<32x128x4096>
  %1249 = mul(%1248, %1247) -> tensor<32x128x4096>
  %new_state.v.layers.3.wo = add(%1246, %1249) -> tensor<32x128x4096>
  %1250 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1251 = mul(%1250, %state.v.layers.3.wq) -> tensor<4096x32x128>
  %1252 = mul(%551, %551) -> tensor<4096x32x128>
  %1253 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1254 = mul(%1253, %1252) -> tensor<4096x32x128>
  %new_state.v.layers.3.wq = add(%1251, %1254) -> tensor<4096x32x128>
  %1255 = constant() {value = 0.9990000128746033} -> tensor<4096x32x128>
  %1256 = mul(%1255, %state.v.layers.3.wv) -> tensor<4096x32x128>
  %1257 = mul(%532, %532) -> tensor<4096x32x128>
  %1258 = constant() {value = 0.0010000000474974513} -> tensor<4096x32x128>
  %1259 = mul(%1258, %1257) -> tensor<4096x32x128>
  %new_state.v.layers.3.wv = add(%1256, %1259) -> tensor<4096x32x128>
  %1260 = constant() {value = 0.9990000128746033} -> tensor<4096x32000>
  %1261 = mul(%1260, %state.v.lm_head) -> tensor<4096x32000>
  %1262 = mul(%441, %441) -> tensor<4096x32000>
  %1263 = constant() {value = 0.0010000000474974513} -> tensor<4096x32000>
  %1264 = mul(%1263, %1262) -> tensor<4096x32000>
  %new_state.v.lm_head = add(%1261, %1264) -> tensor<4096x32000>
  %1265 = broadcast_in_dim(%lr) {dims = []} -> tensor<32000x4096>
  %1266 = mul(%1265, %new_state.m.embed) -> tensor<32000x4096>
  %1267 = sqrt(%new_state.v.embed) -> tensor<32000x4096>
  %1268 = constant() {value = 9.99999993922529e-09} -> tensor<32000x4096>
  %1269 = add(%1267, %1268) -> tensor<32000x4096>
  %1270 = div(%1266, %1269) -> tensor<32000x4096>
  %new.embed = sub(%params.embed, %1270) -> tensor<32000x4096>
  %1271 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1272 = mul(%1271, %new_state.m.final_norm) -> tensor<4096>
  %1273 = sqrt(%new_state.v.final_norm) -> tensor<4096>
  %1274 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1275 = add(%1273, %1274) -> tensor<4096>
  %1276 = div(%1272, %1275) -> tensor<4096>
  %new.final_norm = sub(%params.final_norm, %1276) -> tensor<4096>
  %1277 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1278 = mul(%1277, %new_state.m.layers.0.attn_norm) -> tensor<4096>
  %1279 = sqrt(%new_state.v.layers.0.attn_norm) -> tensor<4096>
  %1280 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1281 = add(%1279, %1280) -> tensor<4096>
  %1282 = div(%1278, %1281) -> tensor<4096>
  %new.layers.0.attn_norm = sub(%params.layers.0.attn_norm, %1282) -> tensor<4096>
  %1283 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1284 = mul(%1283, %new_state.m.layers.0.mlp_norm) -> tensor<4096>
  %1285 = sqrt(%new_state.v.layers.0.mlp_norm) -> tensor<4096>
  %1286 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1287 = add(%1285, %1286) -> tensor<4096>
  %1288 = div(%1284, %1287) -> tensor<4096>
  %new.layers.0.mlp_norm = sub(%params.layers.0.mlp_norm, %1288) -> tensor<4096>
  %1289 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1290 = mul(%1289, %new_state.m.layers.0.w_down) -> tensor<11008x4096>
  %1291 = sqrt(%new_state.v.layers.0.w_down) -> tensor<11008x4096>
  %1292 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1293 = add(%1291, %1292) -> tensor<11008x4096>
  %1294 = div(%1290, %1293) -> tensor<11008x4096>
  %new.layers.0.w_down = sub(%params.layers.0.w_down, %1294) -> tensor<11008x4096>
  %1295 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1296 = mul(%1295, %new_state.m.layers.0.w_gate) -> tensor<4096x11008>
  %1297 = sqrt(%new_state.v.layers.0.w_gate) -> tensor<4096x11008>
  %1298 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1299 = add(%1297, %1298) -> tensor<4096x11008>
  %1300 = div(%1296, %1299) -> tensor<4096x11008>
  %new.layers.0.w_gate = sub(%params.layers.0.w_gate, %1300) -> tensor<4096x11008>
  %1301 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1302 = mul(%1301, %new_state.m.layers.0.w_up) -> tensor<4096x11008>
  %1303 = sqrt(%new_state.v.layers.0.w_up) -> tensor<4096x11008>
  %1304 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1305 = add(%1303, %1304) -> tensor<4096x11008>
  %1306 = div(%1302, %1305) -> tensor<4096x11008>
  %new.layers.0.w_up = sub(%params.layers.0.w_up, %1306) -> tensor<4096x11008>
  %1307 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1308 = mul(%1307, %new_state.m.layers.0.wk) -> tensor<4096x32x128>
  %1309 = sqrt(%new_state.v.layers.0.wk) -> tensor<4096x32x128>
  %1310 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1311 = add(%1309, %1310) -> tensor<4096x32x128>
  %1312 = div(%1308, %1311) -> tensor<4096x32x128>
  %new.layers.0.wk = sub(%params.layers.0.wk, %1312) -> tensor<4096x32x128>
  %1313 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1314 = mul(%1313, %new_state.m.layers.0.wo) -> tensor<32x128x4096>
  %1315 = sqrt(%new_state.v.layers.0.wo) -> tensor<32x128x4096>
  %1316 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1317 = add(%1315, %1316) -> tensor<32x128x4096>
  %1318 = div(%1314, %1317) -> tensor<32x128x4096>
  %new.layers.0.wo = sub(%params.layers.0.wo, %1318) -> tensor<32x128x4096>
  %1319 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1320 = mul(%1319, %new_state.m.layers.0.wq) -> tensor<4096x32x128>
  %1321 = sqrt(%new_state.v.layers.0.wq) -> tensor<4096x32x128>
  %1322 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1323 = add(%1321, %1322) -> tensor<4096x32x128>
  %1324 = div(%1320, %1323) -> tensor<4096x32x128>
  %new.layers.0.wq = sub(%params.layers.0.wq, %1324) -> tensor<4096x32x128>
  %1325 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1326 = mul(%1325, %new_state.m.layers.0.wv) -> tensor<4096x32x128>
  %1327 = sqrt(%new_state.v.layers.0.wv) -> tensor<4096x32x128>
  %1328 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1329 = add(%1327, %1328) -> tensor<4096x32x128>
  %1330 = div(%1326, %1329) -> tensor<4096x32x128>
  %new.layers.0.wv = sub(%params.layers.0.wv, %1330) -> tensor<4096x32x128>
  %1331 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1332 = mul(%1331, %new_state.m.layers.1.attn_norm) -> tensor<4096>
  %1333 = sqrt(%new_state.v.layers.1.attn_norm) -> tensor<4096>
  %1334 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1335 = add(%1333, %1334) -> tensor<4096>
  %1336 = div(%1332, %1335) -> tensor<4096>
  %new.layers.1.attn_norm = sub(%params.layers.1.attn_norm, %1336) -> tensor<4096>
  %1337 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1338 = mul(%1337, %new_state.m.layers.1.mlp_norm) -> tensor<4096>
  %1339 = sqrt(%new_state.v.layers.1.mlp_norm) -> tensor<4096>
  %1340 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1341 = add(%1339, %1340) -> tensor<4096>
  %1342 = div(%1338, %1341) -> tensor<4096>
  %new.layers.1.mlp_norm = sub(%params.layers.1.mlp_norm, %1342) -> tensor<4096>
  %1343 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1344 = mul(%1343, %new_state.m.layers.1.w_down) -> tensor<11008x4096>
  %1345 = sqrt(%new_state.v.layers.1.w_down) -> tensor<11008x4096>
  %1346 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1347 = add(%1345, %1346) -> tensor<11008x4096>
  %1348 = div(%1344, %1347) -> tensor<11008x4096>
  %new.layers.1.w_down = sub(%params.layers.1.w_down, %1348) -> tensor<11008x4096>
  %1349 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1350 = mul(%1349, %new_state.m.layers.1.w_gate) -> tensor<4096x11008>
  %1351 = sqrt(%new_state.v.layers.1.w_gate) -> tensor<4096x11008>
  %1352 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1353 = add(%1351, %1352) -> tensor<4096x11008>
  %1354 = div(%1350, %1353) -> tensor<4096x11008>
  %new.layers.1.w_gate = sub(%params.layers.1.w_gate, %1354) -> tensor<4096x11008>
  %1355 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1356 = mul(%1355, %new_state.m.layers.1.w_up) -> tensor<4096x11008>
  %1357 = sqrt(%new_state.v.layers.1.w_up) -> tensor<4096x11008>
  %1358 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1359 = add(%1357, %1358) -> tensor<4096x11008>
  %1360 = div(%1356, %1359) -> tensor<4096x11008>
  %new.layers.1.w_up = sub(%params.layers.1.w_up, %1360) -> tensor<4096x11008>
  %1361 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1362 = mul(%1361, %new_state.m.layers.1.wk) -> tensor<4096x32x128>
  %1363 = sqrt(%new_state.v.layers.1.wk) -> tensor<4096x32x128>
  %1364 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1365 = add(%1363, %1364) -> tensor<4096x32x128>
  %1366 = div(%1362, %1365) -> tensor<4096x32x128>
  %new.layers.1.wk = sub(%params.layers.1.wk, %1366) -> tensor<4096x32x128>
  %1367 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1368 = mul(%1367, %new_state.m.layers.1.wo) -> tensor<32x128x4096>
  %1369 = sqrt(%new_state.v.layers.1.wo) -> tensor<32x128x4096>
  %1370 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1371 = add(%1369, %1370) -> tensor<32x128x4096>
  %1372 = div(%1368, %1371) -> tensor<32x128x4096>
  %new.layers.1.wo = sub(%params.layers.1.wo, %1372) -> tensor<32x128x4096>
  %1373 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1374 = mul(%1373, %new_state.m.layers.1.wq) -> tensor<4096x32x128>
  %1375 = sqrt(%new_state.v.layers.1.wq) -> tensor<4096x32x128>
  %1376 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1377 = add(%1375, %1376) -> tensor<4096x32x128>
  %1378 = div(%1374, %1377) -> tensor<4096x32x128>
  %new.layers.1.wq = sub(%params.layers.1.wq, %1378) -> tensor<4096x32x128>
  %1379 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1380 = mul(%1379, %new_state.m.layers.1.wv) -> tensor<4096x32x128>
  %1381 = sqrt(%new_state.v.layers.1.wv) -> tensor<4096x32x128>
  %1382 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1383 = add(%1381, %1382) -> tensor<4096x32x128>
  %1384 = div(%1380, %1383) -> tensor<4096x32x128>
  %new.layers.1.wv = sub(%params.layers.1.wv, %1384) -> tensor<4096x32x128>
  %1385 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1386 = mul(%1385, %new_state.m.layers.2.attn_norm) -> tensor<4096>
  %1387 = sqrt(%new_state.v.layers.2.attn_norm) -> tensor<4096>
  %1388 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1389 = add(%1387, %1388) -> tensor<4096>
  %1390 = div(%1386, %1389) -> tensor<4096>
  %new.layers.2.attn_norm = sub(%params.layers.2.attn_norm, %1390) -> tensor<4096>
  %1391 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1392 = mul(%1391, %new_state.m.layers.2.mlp_norm) -> tensor<4096>
  %1393 = sqrt(%new_state.v.layers.2.mlp_norm) -> tensor<4096>
  %1394 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1395 = add(%1393, %1394) -> tensor<4096>
  %1396 = div(%1392, %1395) -> tensor<4096>
  %new.layers.2.mlp_norm = sub(%params.layers.2.mlp_norm, %1396) -> tensor<4096>
  %1397 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1398 = mul(%1397, %new_state.m.layers.2.w_down) -> tensor<11008x4096>
  %1399 = sqrt(%new_state.v.layers.2.w_down) -> tensor<11008x4096>
  %1400 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1401 = add(%1399, %1400) -> tensor<11008x4096>
  %1402 = div(%1398, %1401) -> tensor<11008x4096>
  %new.layers.2.w_down = sub(%params.layers.2.w_down, %1402) -> tensor<11008x4096>
  %1403 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1404 = mul(%1403, %new_state.m.layers.2.w_gate) -> tensor<4096x11008>
  %1405 = sqrt(%new_state.v.layers.2.w_gate) -> tensor<4096x11008>
  %1406 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1407 = add(%1405, %1406) -> tensor<4096x11008>
  %1408 = div(%1404, %1407) -> tensor<4096x11008>
  %new.layers.2.w_gate = sub(%params.layers.2.w_gate, %1408) -> tensor<4096x11008>
  %1409 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1410 = mul(%1409, %new_state.m.layers.2.w_up) -> tensor<4096x11008>
  %1411 = sqrt(%new_state.v.layers.2.w_up) -> tensor<4096x11008>
  %1412 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1413 = add(%1411, %1412) -> tensor<4096x11008>
  %1414 = div(%1410, %1413) -> tensor<4096x11008>
  %new.layers.2.w_up = sub(%params.layers.2.w_up, %1414) -> tensor<4096x11008>
  %1415 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1416 = mul(%1415, %new_state.m.layers.2.wk) -> tensor<4096x32x128>
  %1417 = sqrt(%new_state.v.layers.2.wk) -> tensor<4096x32x128>
  %1418 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1419 = add(%1417, %1418) -> tensor<4096x32x128>
  %1420 = div(%1416, %1419) -> tensor<4096x32x128>
  %new.layers.2.wk = sub(%params.layers.2.wk, %1420) -> tensor<4096x32x128>
  %1421 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1422 = mul(%1421, %new_state.m.layers.2.wo) -> tensor<32x128x4096>
  %1423 = sqrt(%new_state.v.layers.2.wo) -> tensor<32x128x4096>
  %1424 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1425 = add(%1423, %1424) -> tensor<32x128x4096>
  %1426 = div(%1422, %1425) -> tensor<32x128x4096>
  %new.layers.2.wo = sub(%params.layers.2.wo, %1426) -> tensor<32x128x4096>
  %1427 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1428 = mul(%1427, %new_state.m.layers.2.wq) -> tensor<4096x32x128>
  %1429 = sqrt(%new_state.v.layers.2.wq) -> tensor<4096x32x128>
  %1430 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1431 = add(%1429, %1430) -> tensor<4096x32x128>
  %1432 = div(%1428, %1431) -> tensor<4096x32x128>
  %new.layers.2.wq = sub(%params.layers.2.wq, %1432) -> tensor<4096x32x128>
  %1433 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1434 = mul(%1433, %new_state.m.layers.2.wv) -> tensor<4096x32x128>
  %1435 = sqrt(%new_state.v.layers.2.wv) -> tensor<4096x32x128>
  %1436 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1437 = add(%1435, %1436) -> tensor<4096x32x128>
  %1438 = div(%1434, %1437) -> tensor<4096x32x128>
  %new.layers.2.wv = sub(%params.layers.2.wv, %1438) -> tensor<4096x32x128>
  %1439 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1440 = mul(%1439, %new_state.m.layers.3.attn_norm) -> tensor<4096>
  %1441 = sqrt(%new_state.v.layers.3.attn_norm) -> tensor<4096>
  %1442 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1443 = add(%1441, %1442) -> tensor<4096>
  %1444 = div(%1440, %1443) -> tensor<4096>
  %new.layers.3.attn_norm = sub(%params.layers.3.attn_norm, %1444) -> tensor<4096>
  %1445 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096>
  %1446 = mul(%1445, %new_state.m.layers.3.mlp_norm) -> tensor<4096>
  %1447 = sqrt(%new_state.v.layers.3.mlp_norm) -> tensor<4096>
  %1448 = constant() {value = 9.99999993922529e-09} -> tensor<4096>
  %1449 = add(%1447, %1448) -> tensor<4096>
  %1450 = div(%1446, %1449) -> tensor<4096>
  %new.layers.3.mlp_norm = sub(%params.layers.3.mlp_norm, %1450) -> tensor<4096>
  %1451 = broadcast_in_dim(%lr) {dims = []} -> tensor<11008x4096>
  %1452 = mul(%1451, %new_state.m.layers.3.w_down) -> tensor<11008x4096>
  %1453 = sqrt(%new_state.v.layers.3.w_down) -> tensor<11008x4096>
  %1454 = constant() {value = 9.99999993922529e-09} -> tensor<11008x4096>
  %1455 = add(%1453, %1454) -> tensor<11008x4096>
  %1456 = div(%1452, %1455) -> tensor<11008x4096>
  %new.layers.3.w_down = sub(%params.layers.3.w_down, %1456) -> tensor<11008x4096>
  %1457 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1458 = mul(%1457, %new_state.m.layers.3.w_gate) -> tensor<4096x11008>
  %1459 = sqrt(%new_state.v.layers.3.w_gate) -> tensor<4096x11008>
  %1460 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1461 = add(%1459, %1460) -> tensor<4096x11008>
  %1462 = div(%1458, %1461) -> tensor<4096x11008>
  %new.layers.3.w_gate = sub(%params.layers.3.w_gate, %1462) -> tensor<4096x11008>
  %1463 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x11008>
  %1464 = mul(%1463, %new_state.m.layers.3.w_up) -> tensor<4096x11008>
  %1465 = sqrt(%new_state.v.layers.3.w_up) -> tensor<4096x11008>
  %1466 = constant() {value = 9.99999993922529e-09} -> tensor<4096x11008>
  %1467 = add(%1465, %1466) -> tensor<4096x11008>
  %1468 = div(%1464, %1467) -> tensor<4096x11008>
  %new.layers.3.w_up = sub(%params.layers.3.w_up, %1468) -> tensor<4096x11008>
  %1469 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1470 = mul(%1469, %new_state.m.layers.3.wk) -> tensor<4096x32x128>
  %1471 = sqrt(%new_state.v.layers.3.wk) -> tensor<4096x32x128>
  %1472 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1473 = add(%1471, %1472) -> tensor<4096x32x128>
  %1474 = div(%1470, %1473) -> tensor<4096x32x128>
  %new.layers.3.wk = sub(%params.layers.3.wk, %1474) -> tensor<4096x32x128>
  %1475 = broadcast_in_dim(%lr) {dims = []} -> tensor<32x128x4096>
  %1476 = mul(%1475, %new_state.m.layers.3.wo) -> tensor<32x128x4096>
  %1477 = sqrt(%new_state.v.layers.3.wo) -> tensor<32x128x4096>
  %1478 = constant() {value = 9.99999993922529e-09} -> tensor<32x128x4096>
  %1479 = add(%1477, %1478) -> tensor<32x128x4096>
  %1480 = div(%1476, %1479) -> tensor<32x128x4096>
  %new.layers.3.wo = sub(%params.layers.3.wo, %1480) -> tensor<32x128x4096>
  %1481 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1482 = mul(%1481, %new_state.m.layers.3.wq) -> tensor<4096x32x128>
  %1483 = sqrt(%new_state.v.layers.3.wq) -> tensor<4096x32x128>
  %1484 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1485 = add(%1483, %1484) -> tensor<4096x32x128>
  %1486 = div(%1482, %1485) -> tensor<4096x32x128>
  %new.layers.3.wq = sub(%params.layers.3.wq, %1486) -> tensor<4096x32x128>
  %1487 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32x128>
  %1488 = mul(%1487, %new_state.m.layers.3.wv) -> tensor<4096x32x128>
  %1489 = sqrt(%new_state.v.layers.3.wv) -> tensor<4096x32x128>
  %1490 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32x128>
  %1491 = add(%1489, %1490) -> tensor<4096x32x128>
  %1492 = div(%1488, %1491) -> tensor<4096x32x128>
  %new.layers.3.wv = sub(%params.layers.3.wv, %1492) -> tensor<4096x32x128>
  %1493 = broadcast_in_dim(%lr) {dims = []} -> tensor<4096x32000>
  %1494 = mul(%1493, %new_state.m.lm_head) -> tensor<4096x32000>
  %1495 = sqrt(%new_state.v.lm_head) -> tensor<4096x32000>
  %1496 = constant() {value = 9.99999993922529e-09} -> tensor<4096x32000>
  %1497 = add(%1495, %1496) -> tensor<4096x32000>
  %1498 = div(%1494, %1497) -> tensor<4096x32000>
  %new.lm_head = sub(%params.lm_head, %1498) -> tensor<4096x32000>
  return %loss, %new.embed, %new.final_norm, %new.layers.0.attn_norm, %new.layers.0.mlp_norm, %new.layers.0.w_down, %new.layers.0.w_gate, %new.layers.0.w_up, %new.layers.0.wk, %new.layers.0.wo, %new.layers.0.wq, %new.layers.0.wv, %new.layers.1.attn_norm, %new.layers.1.mlp_norm, %new.layers.1.w_down, %new.layers.1.w_gate, %new.layers.1.w_up, %new.layers.1.wk, %new.layers.1.wo, %new.layers.1.wq, %new.layers.1.wv, %new.layers.2.attn_norm, %new.layers.2.mlp_norm, %new.layers.2.w_down, %new.layers.2.w_gate, %new.layers.2.w_up, %new.layers.2.wk, %new.layers.2.wo, %new.layers.2.wq, %new.layers.2.wv, %new.layers.3.attn_norm, %new.layers.3.mlp_norm, %new.layers.3.w_down, %new.layers.3.w_gate, %new.layers.3.w_up, %new.layers.3.wk, %new.layers.3.wo, %new.layers.3.wq, %new.layers.3.wv, %new.lm_head, %new_state.m.embed, %new_state.m.final_norm, %new_state.m.layers.0.attn_norm, %new_state.m.layers.0.mlp_norm, %new_state.m.layers.0.w_down, %new_state.m.layers.0.w_gate, %new_state.m.layers.0.w_up, %new_state.m.layers.0.wk, %new_state.m.layers.0.wo, %new_state.m.layers.0.wq, %new_state.m.layers.0.wv, %new_state.m.layers.1.attn_norm, %new_state.m.layers.1.mlp_norm, %new_state.m.layers.1.w_down, %new_state.m.layers.1.w_gate, %new_state.m.layers.1.w_up, %new_state.m.layers.1.wk, %new_state.m.layers.1.wo, %new_state.m.layers.1.wq, %new_state.m.layers.1.wv, %new_state.m.layers.2.attn_norm, %new_state.m.layers.2.mlp_norm, %new_state.m.layers.2.w_down, %new_state.m.layers.2.w_gate, %new_state.m.layers.2.w_up, %new_state.m.layers.2.wk, %new_state.m.layers.2.wo, %new_state.m.layers.2.wq, %new_state.m.layers.2.wv, %new_state.m.layers.3.attn_norm, %new_state.m.layers.3.mlp_norm, %new_state.m.layers.3.w_down, %new_state.m.layers.3.w_gate, %new_state.m.layers.3.w_up, %new_state.m.layers.3.wk, %new_state.m.layers.3.wo, %new_state.m.layers.3.wq, %new_state.m.layers.3.wv, %new_state.m.lm_head, %new_state.v.embed, %new_state.v.final_norm, %new_state.v.layers.0.attn_norm, %new_state.v.layers.0.mlp_norm, %new_state.v.layers.0.w_down, %new_state.v.layers.0.w_gate, %new_state.v.layers.0.w_up, %new_state.v.layers.0.wk, %new_state.v.layers.0.wo, %new_state.v.layers.0.wq, %new_state.v.layers.0.wv, %new_state.v.layers.1.attn_norm, %new_state.v.layers.1.mlp_norm, %new_state.v.layers.1.w_down, %new_state.v.layers.1.w_gate, %new_state.v.layers.1.w_up, %new_state.v.layers.1.wk, %new_state.v.layers.1.wo, %new_state.v.layers.1.wq, %new_state.v.layers.1.wv, %new_state.v.layers.2.attn_norm, %new_state.v.layers.2.mlp_norm, %new_state.v.layers.2.w_down, %new_state.v.layers.2.w_gate, %new_state.v.layers.2.w_up, %new_state.v.layers.2.wk, %new_state.v.layers.2.wo, %new_state.v.layers.2.wq, %new_state.v.layers.2.wv, %new_state.v.layers.3.attn_norm, %new_state.v.layers.3.mlp_norm, %new_state.v.layers.3.w_down, %new_state.v.layers.3.w_gate, %new_state.v.layers.3.w_up, %new_state.v.layers.3.wk, %new_state.v.layers.3.wo, %new_state.v.layers.3.wq, %new_state.v.layers.3.wv, %new_state.v.lm_head
}
func.func @symbolic_shape_graph() {
  SymbolicDim @S0 {max = 32}
  SymbolicDim @S1 {max = 4096}
}
