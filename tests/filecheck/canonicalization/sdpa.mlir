// SDPA: fully masked rows become exact zeros (bool masks, additive masks), the rewrite is skipped without a mask and for causal masks built from aranges (every row attends key 0), and HF's repeat_kv is removed.
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s

func.func @bool_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x?x8xf32>, %m: tensor<1x1x4x?xi1>) -> tensor<1x2x4x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<1x1x4x?xi1> scale 0.35 : tensor<1x2x4x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x4x8xf32>
  func.return %o : tensor<1x2x4x8xf32>
}
func.func @additive_mask(%q: tensor<1x2x4x8xf16>, %m: tensor<4x4xf16>) -> tensor<1x2x4x8xf16> {
  %o = mlx.scaled_dot_product_attention %q, %q, %q mask %m : tensor<4x4xf16> scale 0.35 : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
  func.return %o : tensor<1x2x4x8xf16>
}
func.func @no_mask(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %q, %q scale 0.35 mask_mode "causal" : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  func.return %o : tensor<1x2x4x8xf32>
}
func.func @causal_from_arange(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x3x8xf32> {
  %n = mlx.dim %k axis 2 : tensor<1x2x?x8xf32>
  %rows = mlx.arange [0, 3, 1] : tensor<3xi64>
  %cols = mlx.arange [0, %n, 1] : tensor<?xi64>
  %r = mlx.expand_dims %rows [1] : tensor<3xi64> -> tensor<3x1xi64>
  %c = mlx.expand_dims %cols [0] : tensor<?xi64> -> tensor<1x?xi64>
  %m = mlx.less_equal %c, %r : tensor<1x?xi64>, tensor<3x1xi64> -> tensor<3x?xi1>
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x?xi1> scale 0.35 : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
}
func.func @repeat_kv(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>) -> tensor<1x4x5x8xf32> {
  %e = mlx.expand_dims %k [2] : tensor<1x2x5x8xf32> -> tensor<1x2x1x5x8xf32>
  %b = mlx.broadcast_to %e [1, 2, 2, 5, 8] : tensor<1x2x1x5x8xf32> -> tensor<1x2x2x5x8xf32>
  %r = mlx.reshape %b [1, 4, 5, 8] : tensor<1x2x2x5x8xf32> -> tensor<1x4x5x8xf32>
  %o = mlx.scaled_dot_product_attention %q, %r, %r scale 0.35 : tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32> -> tensor<1x4x5x8xf32>
  func.return %o : tensor<1x4x5x8xf32>
}

// CHECK-LABEL: func.func @bool_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x?x8xf32>, %m: tensor<1x1x4x?xi1>) -> tensor<1x2x4x8xf32> {
// CHECK-NEXT: %o = mlx.any %m axes [3] keepdims : tensor<1x1x4x?xi1> -> tensor<1x1x4x1xi1>
// CHECK-NEXT: %o_1 = mlx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %o_2 = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<1x1x4x?xi1> scale 3.500000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %o_3 = mlx.where %o, %o_2, %o_1 : tensor<1x1x4x1xi1>, tensor<1x2x4x8xf32>, tensor<f32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: func.return %o_3 : tensor<1x2x4x8xf32>
// CHECK-LABEL: func.func @additive_mask(%q: tensor<1x2x4x8xf16>, %m: tensor<4x4xf16>) -> tensor<1x2x4x8xf16> {
// CHECK-NEXT: %o = mlx.constant dense<0xfc00> : tensor<f16>
// CHECK-NEXT: %o_1 = mlx.greater %m, %o : tensor<4x4xf16>, tensor<f16> -> tensor<4x4xi1>
// CHECK-NEXT: %o_2 = mlx.any %o_1 axes [1] keepdims : tensor<4x4xi1> -> tensor<4x1xi1>
// CHECK-NEXT: %o_3 = mlx.constant dense<0.000000e+00> : tensor<f16>
// CHECK-NEXT: %o_4 = mlx.scaled_dot_product_attention %q, %q, %q mask %m : tensor<4x4xf16> scale 3.500000e-01 : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
// CHECK-NEXT: %o_5 = mlx.where %o_2, %o_4, %o_3 : tensor<4x1xi1>, tensor<1x2x4x8xf16>, tensor<f16> -> tensor<1x2x4x8xf16>
// CHECK-NEXT: func.return %o_5 : tensor<1x2x4x8xf16>
// CHECK-LABEL: func.func @no_mask(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %q, %q scale 3.500000e-01 mask_mode "causal" : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x2x4x8xf32>
// CHECK-LABEL: func.func @causal_from_arange(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x3x8xf32> {
// CHECK-NEXT: %n = mlx.dim %k axis 2 : tensor<1x2x?x8xf32>
// CHECK-NEXT: %rows = mlx.arange [0, 3, 1] : tensor<3xi64>
// CHECK-NEXT: %cols = mlx.arange [0, %n, 1] : tensor<?xi64>
// CHECK-NEXT: %r = mlx.expand_dims %rows [1] : tensor<3xi64> -> tensor<3x1xi64>
// CHECK-NEXT: %c = mlx.expand_dims %cols [0] : tensor<?xi64> -> tensor<1x?xi64>
// CHECK-NEXT: %m = mlx.less_equal %c, %r : tensor<1x?xi64>, tensor<3x1xi64> -> tensor<3x?xi1>
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x?xi1> scale 3.500000e-01 : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x2x3x8xf32>
// CHECK-LABEL: func.func @repeat_kv(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>) -> tensor<1x4x5x8xf32> {
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %k, %k scale 3.500000e-01 : tensor<1x4x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x4x5x8xf32>
