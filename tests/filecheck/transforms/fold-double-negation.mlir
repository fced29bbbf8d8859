// fold-double-negation: negative(negative(x)) -> x when the result type is x's. Exact
// bit for bit: a float negation flips only the sign bit (±0, ±inf and NaN included),
// integer negation wraps (-(-INT_MIN) is INT_MIN). The pass alone leaves the inner
// negation to dce where nothing else uses it.
// RUN: mlx-opt %s -p fold-double-negation | filecheck %s

// CHECK-LABEL: func.func @double(%x: tensor<?x4xf32>, %i: tensor<3xi8>, %u: tensor<3xui32>) -> (tensor<?x4xf32>, tensor<3xi8>, tensor<3xui32>) {
// CHECK-NEXT:    %0 = mlx.negative %x : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %1 = mlx.negative %i : tensor<3xi8> -> tensor<3xi8>
// CHECK-NEXT:    %2 = mlx.negative %u : tensor<3xui32> -> tensor<3xui32>
// CHECK-NEXT:    func.return %x, %i, %u : tensor<?x4xf32>, tensor<3xi8>, tensor<3xui32>
// CHECK-NEXT:  }
func.func @double(%x: tensor<?x4xf32>, %i: tensor<3xi8>, %u: tensor<3xui32>) -> (tensor<?x4xf32>, tensor<3xi8>, tensor<3xui32>) {
  %0 = mlx.negative %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = mlx.negative %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = mlx.negative %i : tensor<3xi8> -> tensor<3xi8>
  %3 = mlx.negative %2 : tensor<3xi8> -> tensor<3xi8>
  %4 = mlx.negative %u : tensor<3xui32> -> tensor<3xui32>
  %5 = mlx.negative %4 : tensor<3xui32> -> tensor<3xui32>
  func.return %1, %3, %5 : tensor<?x4xf32>, tensor<3xi8>, tensor<3xui32>
}

// Chains: four negations are x, three are one negation of x (each pair folds; the
// negations left unused stay for dce).
// CHECK-LABEL: func.func @chains(%x: tensor<2xbf16>) -> (tensor<2xbf16>, tensor<2xbf16>) {
// CHECK-NEXT:    %0 = mlx.negative %x : tensor<2xbf16> -> tensor<2xbf16>
// CHECK-NEXT:    %1 = mlx.negative %x : tensor<2xbf16> -> tensor<2xbf16>
// CHECK-NEXT:    %2 = mlx.negative %x : tensor<2xbf16> -> tensor<2xbf16>
// CHECK-NEXT:    func.return %x, %2 : tensor<2xbf16>, tensor<2xbf16>
// CHECK-NEXT:  }
func.func @chains(%x: tensor<2xbf16>) -> (tensor<2xbf16>, tensor<2xbf16>) {
  %0 = mlx.negative %x : tensor<2xbf16> -> tensor<2xbf16>
  %1 = mlx.negative %0 : tensor<2xbf16> -> tensor<2xbf16>
  %2 = mlx.negative %1 : tensor<2xbf16> -> tensor<2xbf16>
  %3 = mlx.negative %2 : tensor<2xbf16> -> tensor<2xbf16>
  %4 = mlx.negative %1 : tensor<2xbf16> -> tensor<2xbf16>
  func.return %3, %4 : tensor<2xbf16>, tensor<2xbf16>
}

// Kept: a single negation; a negation of something else; a type that differs from x's
// (a static dim made dynamic); bool, which MLX cannot negate (the error stays).
// CHECK-LABEL: func.func @kept(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xi1>) {
// CHECK-NEXT:    %0 = mlx.negative %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %1 = mlx.abs %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %2 = mlx.negative %1 : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %3 = mlx.negative %0 : tensor<4xf32> -> tensor<?xf32>
// CHECK-NEXT:    %4 = mlx.negative %b : tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %5 = mlx.negative %4 : tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    func.return %0, %2, %3, %5
func.func @kept(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xi1>) {
  %0 = mlx.negative %x : tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.abs %x : tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.negative %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = mlx.negative %0 : tensor<4xf32> -> tensor<?xf32>
  %4 = mlx.negative %b : tensor<4xi1> -> tensor<4xi1>
  %5 = mlx.negative %4 : tensor<4xi1> -> tensor<4xi1>
  func.return %0, %2, %3, %5 : tensor<4xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xi1>
}
