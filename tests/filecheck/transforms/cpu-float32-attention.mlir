// cpu-float32-attention (CPU target): float16/bfloat16 attention on the float32 casts of
// q, k, v and of an additive mask, the result cast back once; a bool mask, a causal
// mask_mode and zero_masked_rows are kept as they are; float32 attention is untouched.
// MLX's CPU composes attention in its operands' dtype, rounding scores and probabilities
// to 16 bits; torch's CPU kernel and MLX's GPU kernels keep them in float32.
// RUN: mlx-opt %s -p cpu-float32-attention | filecheck %s

// CHECK-LABEL: func.func @additive_f16(
// CHECK-NEXT:    %[[Q:.*]] = mlx.astype %q : tensor<1x8x?x16xf16> -> tensor<1x8x?x16xf32>
// CHECK-NEXT:    %[[K:.*]] = mlx.astype %k : tensor<1x2x?x16xf16> -> tensor<1x2x?x16xf32>
// CHECK-NEXT:    %[[V:.*]] = mlx.astype %v : tensor<1x2x?x16xf16> -> tensor<1x2x?x16xf32>
// CHECK-NEXT:    %[[M:.*]] = mlx.astype %m : tensor<1x1x?x?xf16> -> tensor<1x1x?x?xf32>
// CHECK-NEXT:    %[[O:.*]] = mlx.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask %[[M]] : tensor<1x1x?x?xf32> scale 2.500000e-01 : tensor<1x8x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x8x?x16xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.astype %[[O]] : tensor<1x8x?x16xf32> -> tensor<1x8x?x16xf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x8x?x16xf16>
func.func @additive_f16(%q: tensor<1x8x?x16xf16>, %k: tensor<1x2x?x16xf16>, %v: tensor<1x2x?x16xf16>, %m: tensor<1x1x?x?xf16>) -> tensor<1x8x?x16xf16> {
  %o = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<1x1x?x?xf16> scale 2.500000e-01 : tensor<1x8x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16> -> tensor<1x8x?x16xf16>
  func.return %o : tensor<1x8x?x16xf16>
}

// CHECK-LABEL: func.func @bool_mask_bf16(
// CHECK-COUNT-3: mlx.astype %{{.*}} : tensor<2x4x?x8xbf16> -> tensor<2x4x?x8xf32>
// CHECK-NEXT:    %[[O:.*]] = mlx.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %m : tensor<2x1x?x?xi1> scale 1.250000e-01 zero_masked_rows : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.astype %[[O]] : tensor<2x4x?x8xf32> -> tensor<2x4x?x8xbf16>
// CHECK-NEXT:    func.return %[[R]]
func.func @bool_mask_bf16(%q: tensor<2x4x?x8xbf16>, %k: tensor<2x4x?x8xbf16>, %v: tensor<2x4x?x8xbf16>, %m: tensor<2x1x?x?xi1>) -> tensor<2x4x?x8xbf16> {
  %o = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<2x1x?x?xi1> scale 1.250000e-01 zero_masked_rows : tensor<2x4x?x8xbf16>, tensor<2x4x?x8xbf16>, tensor<2x4x?x8xbf16> -> tensor<2x4x?x8xbf16>
  func.return %o : tensor<2x4x?x8xbf16>
}

// CHECK-LABEL: func.func @causal_bf16(
// CHECK-COUNT-3: mlx.astype
// CHECK-NEXT:    %[[O:.*]] = mlx.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 mask_mode "causal" : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK-NEXT:    mlx.astype %[[O]] : tensor<2x4x?x8xf32> -> tensor<2x4x?x8xbf16>
func.func @causal_bf16(%q: tensor<2x4x?x8xbf16>, %k: tensor<2x4x?x8xbf16>, %v: tensor<2x4x?x8xbf16>) -> tensor<2x4x?x8xbf16> {
  %o = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 mask_mode "causal" : tensor<2x4x?x8xbf16>, tensor<2x4x?x8xbf16>, tensor<2x4x?x8xbf16> -> tensor<2x4x?x8xbf16>
  func.return %o : tensor<2x4x?x8xbf16>
}

// CHECK-LABEL: func.func @float32_untouched(
// CHECK-NEXT:    %o = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK-NEXT:    func.return %o
func.func @float32_untouched(%q: tensor<2x4x?x8xf32>, %k: tensor<2x4x?x8xf32>, %v: tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  func.return %o : tensor<2x4x?x8xf32>
}
