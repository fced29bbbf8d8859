// zero-fully-masked-sdpa-rows: an SDPA marked zero_masked_rows (PyTorch's meaning: a query row whose keys are all masked is zeros) becomes an explicit where(any(attendable(mask)), sdpa, 0) guard (bool and additive masks); the mark is dropped where no row can be empty (a causal mask built from aranges, the query positions possibly offset by a cache length: every row attends key 0); an SDPA without the mark has MLX's meaning and is left alone.
// RUN: mlx-opt %s -p zero-fully-masked-sdpa-rows | filecheck %s

func.func @bool_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x?x8xf32>, %m: tensor<1x1x4x?xi1>) -> tensor<1x2x4x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<1x1x4x?xi1> scale 0.35 zero_masked_rows : tensor<1x2x4x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x4x8xf32>
  func.return %o : tensor<1x2x4x8xf32>
}
func.func @additive_mask(%q: tensor<1x2x4x8xf16>, %m: tensor<4x4xf16>) -> tensor<1x2x4x8xf16> {
  %o = mlx.scaled_dot_product_attention %q, %q, %q mask %m : tensor<4x4xf16> scale 0.35 zero_masked_rows : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
  func.return %o : tensor<1x2x4x8xf16>
}
func.func @no_mask(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %q, %q scale 0.35 mask_mode "causal" : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  func.return %o : tensor<1x2x4x8xf32>
}
func.func @unmarked(%q: tensor<1x2x4x8xf32>, %m: tensor<4x4xi1>) -> tensor<1x2x4x8xf32> {
  %o = mlx.scaled_dot_product_attention %q, %q, %q mask %m : tensor<4x4xi1> scale 0.35 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  func.return %o : tensor<1x2x4x8xf32>
}
func.func @causal_from_arange(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x3x8xf32> {
  %n = mlx.dim %k axis 2 : tensor<1x2x?x8xf32>
  %rows = mlx.arange [0, 3, 1] : tensor<3xi64>
  %cols = mlx.arange [0, %n, 1] : tensor<?xi64>
  %r = mlx.expand_dims %rows [1] : tensor<3xi64> -> tensor<3x1xi64>
  %c = mlx.expand_dims %cols [0] : tensor<?xi64> -> tensor<1x?xi64>
  %m = mlx.less_equal %c, %r : tensor<1x?xi64>, tensor<3x1xi64> -> tensor<3x?xi1>
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x?xi1> scale 0.35 zero_masked_rows : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
}

func.func @causal_after_cache(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %past: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %l = mlx.dim %q axis 2 : tensor<1x2x?x8xf32>
  %p = mlx.dim %past axis 2 : tensor<1x2x?x8xf32>
  %n = arith.addi %p, %l : index
  %rows = mlx.arange [0, %l, 1] : tensor<?xi64>
  %offset = mlx.from_index %p : tensor<i64>
  %shifted = mlx.add %rows, %offset : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  %cols = mlx.arange [0, %n, 1] : tensor<?xi64>
  %r = mlx.expand_dims %shifted [1] : tensor<?xi64> -> tensor<?x1xi64>
  %c = mlx.expand_dims %cols [0] : tensor<?xi64> -> tensor<1x?xi64>
  %m = mlx.less_equal %c, %r : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %b = mlx.broadcast_to %m [1, 1, %l, %n] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %b : tensor<1x1x?x?xi1> scale 0.35 zero_masked_rows : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  func.return %o : tensor<1x2x?x8xf32>
}
func.func @shifted_by_an_input(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>, %shift: index) -> tensor<1x2x3x8xf32> {
  %n = mlx.dim %k axis 2 : tensor<1x2x?x8xf32>
  %rows = mlx.arange [0, 3, 1] : tensor<3xi64>
  %offset = mlx.from_index %shift : tensor<i64>
  %shifted = mlx.add %rows, %offset : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %cols = mlx.arange [0, %n, 1] : tensor<?xi64>
  %r = mlx.expand_dims %shifted [1] : tensor<3xi64> -> tensor<3x1xi64>
  %c = mlx.expand_dims %cols [0] : tensor<?xi64> -> tensor<1x?xi64>
  %m = mlx.less_equal %c, %r : tensor<1x?xi64>, tensor<3x1xi64> -> tensor<3x?xi1>
  %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x?xi1> scale 0.35 zero_masked_rows : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
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
// CHECK-LABEL: func.func @unmarked(%q: tensor<1x2x4x8xf32>, %m: tensor<4x4xi1>) -> tensor<1x2x4x8xf32> {
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %q, %q mask %m : tensor<4x4xi1> scale 3.500000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
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
// The queries after a KV cache of length %p (rows arange + %p, never negative) still
// attend key 0: the mark is dropped, through the broadcast.
// CHECK-LABEL: func.func @causal_after_cache(
// CHECK-NOT:   mlx.any
// CHECK:       %o = mlx.scaled_dot_product_attention %q, %k, %k mask %b : tensor<1x1x?x?xi1> scale 3.500000e-01 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
// CHECK-NEXT:  func.return %o : tensor<1x2x?x8xf32>
// Shifted by an index the program takes, which may be negative: the guard stays.
// CHECK-LABEL: func.func @shifted_by_an_input(
// CHECK:       mlx.any %m axes [1] keepdims
// CHECK:       mlx.where
