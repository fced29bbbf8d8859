// optimize-mlx on a small attention block in mlx IR, as lower-to-mlx's canonicalized
// output reads before the stage: RMSNorm (decomposed, or already fused), q/k/v linears
// on weights [N, K] read through transpose [1, 0], each product reshaped to heads
// [B, S, h, d] and transposed [0, 2, 1, 3]. The stage's patterns feed each other:
// fuse-rms-norm, fuse-bias-add (Qwen2's biases), then merge-projections (the merged
// weight is [8, K], the weights stacked as rows, read through one transpose), then
// split-heads-once on the merged split; fold-known-dims makes the two reads of S one
// first. Per function, the result is one matmul (addmm), one reshape, one transpose
// and one split on the heads axis; the q/k/v globals are replaced by the merged ones. What the
// fusions leave unread (the RMSNorm decomposition) is erased by the stage. Qwen3's
// per-head q/k norms between the reshape and the transpose move after the transpose
// (transpose-before-norm), and then split-heads-once applies.
// (filecheck's CHECK-NOT also covers the text of the next match; the NOTs here exclude
// ops that the next match does not contain.)
// RUN: mlx-opt %s -p optimize-mlx | filecheck %s
// RUN: mlx-opt %s -p optimize-mlx | filecheck %s --check-prefix=GLOBAL

// GLOBAL:      builtin.module {
// GLOBAL-NEXT:   mlx.global @model.layers.0.input_layernorm.weight "parameter" : tensor<4xf32>
// GLOBAL-NEXT:   mlx.global @model.layers.1.input_layernorm.weight "parameter" : tensor<4xf32>
// GLOBAL-NEXT:   mlx.global @"model.layers.0.self_attn.q_proj+k_proj+v_proj.weight" "parameter" : tensor<8x4xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01], [-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00], [-5.000000e+00, -6.000000e+00, -7.000000e+00, -8.000000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00], [4.500000e+00, 5.500000e+00, 6.500000e+00, 7.500000e+00]]> : tensor<8x4xf32>
// GLOBAL-NEXT:   func.func @llama_attention(
// GLOBAL-NOT:    mlx.global @model
// GLOBAL:        mlx.global @"model.layers.1.self_attn.q_proj+k_proj+v_proj.weight" "parameter" : tensor<8x4xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01], [-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00], [-5.000000e+00, -6.000000e+00, -7.000000e+00, -8.000000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00], [4.500000e+00, 5.500000e+00, 6.500000e+00, 7.500000e+00]]> : tensor<8x4xf32>
// GLOBAL-NEXT:   mlx.global @"model.layers.1.self_attn.q_proj+k_proj+v_proj.bias" "parameter" : tensor<8xf32> = dense<[2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, -2.500000e-01, -5.000000e-01, 2.000000e+00, 3.000000e+00]> : tensor<8xf32>
// GLOBAL-NEXT:   func.func @qwen2_attention(
// GLOBAL-NOT:    mlx.global

mlx.global @model.layers.0.input_layernorm.weight "parameter" : tensor<4xf32> = dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>
mlx.global @model.layers.0.self_attn.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @model.layers.0.self_attn.k_proj.weight "parameter" : tensor<2x4xf32> = dense<[[-1.0, -2.0, -3.0, -4.0], [-5.0, -6.0, -7.0, -8.0]]> : tensor<2x4xf32>
mlx.global @model.layers.0.self_attn.v_proj.weight "parameter" : tensor<2x4xf32> = dense<[[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]]> : tensor<2x4xf32>
mlx.global @model.layers.1.input_layernorm.weight "parameter" : tensor<4xf32> = dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>
mlx.global @model.layers.1.self_attn.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @model.layers.1.self_attn.q_proj.bias "parameter" : tensor<4xf32> = dense<[0.25, 0.5, 0.75, 1.0]> : tensor<4xf32>
mlx.global @model.layers.1.self_attn.k_proj.weight "parameter" : tensor<2x4xf32> = dense<[[-1.0, -2.0, -3.0, -4.0], [-5.0, -6.0, -7.0, -8.0]]> : tensor<2x4xf32>
mlx.global @model.layers.1.self_attn.k_proj.bias "parameter" : tensor<2xf32> = dense<[-0.25, -0.5]> : tensor<2xf32>
mlx.global @model.layers.1.self_attn.v_proj.weight "parameter" : tensor<2x4xf32> = dense<[[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]]> : tensor<2x4xf32>
mlx.global @model.layers.1.self_attn.v_proj.bias "parameter" : tensor<2xf32> = dense<[2.0, 3.0]> : tensor<2xf32>

// Llama: the HF RMSNorm decomposition (weight on the left), unbiased q/k/v (4, 2 and 2
// wide: 2, 1 and 1 heads of 2), k and v reshaped with a second mlx.dim of S.
// CHECK-LABEL: func.func @llama_attention(%h: tensor<1x?x4xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
// CHECK-NEXT:    %s = mlx.dim %h axis 1 : tensor<1x?x4xf32>
// CHECK-NOT:     {{mlx\.(dim|matmul|addmm|reshape|transpose|split|rms_norm) }}
// CHECK:         %nw = mlx.weight @model.layers.0.input_layernorm.weight : tensor<4xf32>
// CHECK-NEXT:    %x = mlx.rms_norm %h weight %nw : tensor<4xf32> eps {{.*}} : tensor<1x?x4xf32> -> tensor<1x?x4xf32>
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"model.layers.0.self_attn.q_proj+k_proj+v_proj.weight" : tensor<8x4xf32>
// CHECK-NEXT:    %[[WT:.*]] = mlx.transpose %[[W]] [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[WT]] : tensor<1x?x4xf32>, tensor<4x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %[[P]] [1, %s, 4, 2] : tensor<1x?x8xf32> -> tensor<1x?x4x2xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<1x?x4x2xf32> -> tensor<1x4x?x2xf32>
// CHECK-NEXT:    %qh, %kh, %vh = mlx.split %[[T]] at [2, 3] axis 1 : tensor<1x4x?x2xf32> -> tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:    func.return %qh, %kh, %vh : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:  }
func.func @llama_attention(%h: tensor<1x?x4xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
  %s = mlx.dim %h axis 1 : tensor<1x?x4xf32>
  %s2 = mlx.dim %h axis 1 : tensor<1x?x4xf32>
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %h, %two : tensor<1x?x4xf32>, tensor<f32> -> tensor<1x?x4xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<1x?x4xf32> -> tensor<1x?x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<1x?x1xf32>, tensor<f32> -> tensor<1x?x1xf32>
  %r = mlx.rsqrt %sum : tensor<1x?x1xf32> -> tensor<1x?x1xf32>
  %n = mlx.multiply %h, %r : tensor<1x?x4xf32>, tensor<1x?x1xf32> -> tensor<1x?x4xf32>
  %nw = mlx.weight @model.layers.0.input_layernorm.weight : tensor<4xf32>
  %x = mlx.multiply %nw, %n : tensor<4xf32>, tensor<1x?x4xf32> -> tensor<1x?x4xf32>
  %wq = mlx.weight @model.layers.0.self_attn.q_proj.weight : tensor<4x4xf32>
  %wqt = mlx.transpose %wq [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %q = mlx.matmul %x, %wqt : tensor<1x?x4xf32>, tensor<4x4xf32> -> tensor<1x?x4xf32>
  %wk = mlx.weight @model.layers.0.self_attn.k_proj.weight : tensor<2x4xf32>
  %wkt = mlx.transpose %wk [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %k = mlx.matmul %x, %wkt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %wv = mlx.weight @model.layers.0.self_attn.v_proj.weight : tensor<2x4xf32>
  %wvt = mlx.transpose %wv [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %v = mlx.matmul %x, %wvt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %q4 = mlx.reshape %q [1, %s, 2, 2] : tensor<1x?x4xf32> -> tensor<1x?x2x2xf32>
  %qh = mlx.transpose %q4 [0, 2, 1, 3] : tensor<1x?x2x2xf32> -> tensor<1x2x?x2xf32>
  %k4 = mlx.reshape %k [1, %s2, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %kh = mlx.transpose %k4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  %v4 = mlx.reshape %v [1, %s2, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %vh = mlx.transpose %v4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  func.return %qh, %kh, %vh : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
}

// Qwen2: an mlx.rms_norm already, and q/k/v biases added after each matmul: one addmm
// on the merged weight and bias.
// CHECK-LABEL: func.func @qwen2_attention(%h: tensor<1x?x4xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
// CHECK-NEXT:    %s = mlx.dim %h axis 1 : tensor<1x?x4xf32>
// CHECK-NEXT:    %nw = mlx.weight @model.layers.1.input_layernorm.weight : tensor<4xf32>
// CHECK-NEXT:    %x = mlx.rms_norm %h weight %nw : tensor<4xf32> eps 1.000000e-06 : tensor<1x?x4xf32> -> tensor<1x?x4xf32>
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"model.layers.1.self_attn.q_proj+k_proj+v_proj.weight" : tensor<8x4xf32>
// CHECK-NEXT:    %[[WT:.*]] = mlx.transpose %[[W]] [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.weight @"model.layers.1.self_attn.q_proj+k_proj+v_proj.bias" : tensor<8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.addmm %[[B]], %x, %[[WT]] : tensor<8xf32>, tensor<1x?x4xf32>, tensor<4x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %[[P]] [1, %s, 4, 2] : tensor<1x?x8xf32> -> tensor<1x?x4x2xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<1x?x4x2xf32> -> tensor<1x4x?x2xf32>
// CHECK-NEXT:    %qh, %kh, %vh = mlx.split %[[T]] at [2, 3] axis 1 : tensor<1x4x?x2xf32> -> tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:    func.return %qh, %kh, %vh : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:  }
func.func @qwen2_attention(%h: tensor<1x?x4xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
  %s = mlx.dim %h axis 1 : tensor<1x?x4xf32>
  %nw = mlx.weight @model.layers.1.input_layernorm.weight : tensor<4xf32>
  %x = mlx.rms_norm %h weight %nw : tensor<4xf32> eps 1.0e-06 : tensor<1x?x4xf32> -> tensor<1x?x4xf32>
  %wq = mlx.weight @model.layers.1.self_attn.q_proj.weight : tensor<4x4xf32>
  %wqt = mlx.transpose %wq [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %pq = mlx.matmul %x, %wqt : tensor<1x?x4xf32>, tensor<4x4xf32> -> tensor<1x?x4xf32>
  %bq = mlx.weight @model.layers.1.self_attn.q_proj.bias : tensor<4xf32>
  %q = mlx.add %pq, %bq : tensor<1x?x4xf32>, tensor<4xf32> -> tensor<1x?x4xf32>
  %wk = mlx.weight @model.layers.1.self_attn.k_proj.weight : tensor<2x4xf32>
  %wkt = mlx.transpose %wk [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %pk = mlx.matmul %x, %wkt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %bk = mlx.weight @model.layers.1.self_attn.k_proj.bias : tensor<2xf32>
  %k = mlx.add %pk, %bk : tensor<1x?x2xf32>, tensor<2xf32> -> tensor<1x?x2xf32>
  %wv = mlx.weight @model.layers.1.self_attn.v_proj.weight : tensor<2x4xf32>
  %wvt = mlx.transpose %wv [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %pv = mlx.matmul %x, %wvt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %bv = mlx.weight @model.layers.1.self_attn.v_proj.bias : tensor<2xf32>
  %v = mlx.add %pv, %bv : tensor<1x?x2xf32>, tensor<2xf32> -> tensor<1x?x2xf32>
  %q4 = mlx.reshape %q [1, %s, 2, 2] : tensor<1x?x4xf32> -> tensor<1x?x2x2xf32>
  %qh = mlx.transpose %q4 [0, 2, 1, 3] : tensor<1x?x2x2xf32> -> tensor<1x2x?x2xf32>
  %k4 = mlx.reshape %k [1, %s, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %kh = mlx.transpose %k4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  %v4 = mlx.reshape %v [1, %s, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %vh = mlx.transpose %v4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  func.return %qh, %kh, %vh : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
}

// Qwen3: q and k RMS-normalized per head between the reshape and the transpose.
// CHECK-LABEL: func.func @qwen3_heads(%y: tensor<1x?x8xf32>, %qn: tensor<2xf32>, %kn: tensor<2xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
// CHECK-NEXT:    %s = mlx.dim %y axis 1 : tensor<1x?x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %y [1, %s, 4, 2] : tensor<1x?x8xf32> -> tensor<1x?x4x2xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<1x?x4x2xf32> -> tensor<1x4x?x2xf32>
// CHECK-NEXT:    %[[Q:[[:alnum:]_]+]], %[[K:[[:alnum:]_]+]], %v = mlx.split %[[T]] at [2, 3] axis 1 : tensor<1x4x?x2xf32> -> tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:    %q = mlx.rms_norm %[[Q]] weight %qn : tensor<2xf32> eps {{.*}} : tensor<1x2x?x2xf32> -> tensor<1x2x?x2xf32>
// CHECK-NEXT:    %k = mlx.rms_norm %[[K]] weight %kn : tensor<2xf32> eps {{.*}} : tensor<1x1x?x2xf32> -> tensor<1x1x?x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
// CHECK-NEXT:  }
func.func @qwen3_heads(%y: tensor<1x?x8xf32>, %qn: tensor<2xf32>, %kn: tensor<2xf32>) -> (tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>) {
  %s = mlx.dim %y axis 1 : tensor<1x?x8xf32>
  %p:3 = mlx.split %y at [4, 6] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
  %q4 = mlx.reshape %p#0 [1, %s, 2, 2] : tensor<1x?x4xf32> -> tensor<1x?x2x2xf32>
  %qn4 = mlx.rms_norm %q4 weight %qn : tensor<2xf32> eps 1.000000e-06 : tensor<1x?x2x2xf32> -> tensor<1x?x2x2xf32>
  %q = mlx.transpose %qn4 [0, 2, 1, 3] : tensor<1x?x2x2xf32> -> tensor<1x2x?x2xf32>
  %k4 = mlx.reshape %p#1 [1, %s, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %kn4 = mlx.rms_norm %k4 weight %kn : tensor<2xf32> eps 1.000000e-06 : tensor<1x?x1x2xf32> -> tensor<1x?x1x2xf32>
  %k = mlx.transpose %kn4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  %v4 = mlx.reshape %p#2 [1, %s, 1, 2] : tensor<1x?x2xf32> -> tensor<1x?x1x2xf32>
  %v = mlx.transpose %v4 [0, 2, 1, 3] : tensor<1x?x1x2xf32> -> tensor<1x1x?x2xf32>
  func.return %q, %k, %v : tensor<1x2x?x2xf32>, tensor<1x1x?x2xf32>, tensor<1x1x?x2xf32>
}
