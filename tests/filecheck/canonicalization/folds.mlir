// The standard folds: transpose∘transpose, identity transposes (and ones moving only size-1 dims), reshape∘reshape, identity reshapes/broadcasts/slices with static and runtime sizes, constant casts and scalar arithmetic, and the RMSNorm decomposition (f32, and HF's bf16 form with its casts) fused into mlx.rms_norm.
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s

func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = mlx.transpose %a [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %c = mlx.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>) -> tensor<1x2x4xf32> {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
  func.return %a : tensor<1x2x4xf32>
}
func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
  %m = arith.muli %n, %n : index
  %a = mlx.reshape %x [2, %n, 2, 2] : tensor<2x?x4xf32> -> tensor<2x?x2x2xf32>
  %b = mlx.reshape %a [%m, 4] : tensor<2x?x2x2xf32> -> tensor<?x4xf32>
  %c = mlx.reshape %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  %d = mlx.broadcast_to %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  func.return %b, %c, %d : tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>
}
func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?xf32>
  %a = mlx.slice %x [0, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<2x?xf32>
  %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
  func.return %a, %b : tensor<2x?xf32>, tensor<1x?xf32>
}
func.func @constants() -> (tensor<f16>, tensor<f32>) {
  %a = mlx.constant dense<1.003> : tensor<f32>
  %b = mlx.astype %a : tensor<f32> -> tensor<f16>
  %c = mlx.constant dense<2.5> : tensor<f32>
  %d = mlx.constant dense<2.0> : tensor<f32>
  %e = mlx.multiply %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %b, %e : tensor<f16>, tensor<f32>
}
func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
  %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  func.return %y : tensor<2x?x8xf32>
}
func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
  %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %back = mlx.astype %n : tensor<2x8xf32> -> tensor<2x8xbf16>
  %y = mlx.multiply %w, %back : tensor<8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %y : tensor<2x8xbf16>
}

// CHECK-LABEL: func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
// CHECK-NEXT: %b = mlx.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: func.return %b, %x : tensor<4x2x3xf32>, tensor<2x3x4xf32>
// CHECK-LABEL: func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>) -> tensor<1x2x4xf32> {
// CHECK-NEXT: %a = mlx.reshape %x [1, 2, 4] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT: func.return %a : tensor<1x2x4xf32>
// CHECK-LABEL: func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
// CHECK-NEXT: %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
// CHECK-NEXT: %m = arith.muli %n, %n : index
// CHECK-NEXT: %b = mlx.reshape %x [%m, 4] : tensor<2x?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: func.return %b, %x, %x : tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>
// CHECK-LABEL: func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
// CHECK-NEXT: %n = mlx.dim %x axis 1 : tensor<2x?xf32>
// CHECK-NEXT: %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
// CHECK-NEXT: func.return %x, %b : tensor<2x?xf32>, tensor<1x?xf32>
// CHECK-LABEL: func.func @constants() -> (tensor<f16>, tensor<f32>) {
// CHECK-NEXT: %b = mlx.constant dense<1.002930e+00> : tensor<f16>
// CHECK-NEXT: %e = mlx.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT: func.return %b, %e : tensor<f16>, tensor<f32>
// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT: %y = mlx.rms_norm %x weight %w : tensor<8xf32> eps 9.9999999747524271e-07 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: func.return %y : tensor<2x?x8xf32>
// CHECK-LABEL: func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT: %y = mlx.rms_norm %x weight %w : tensor<8xbf16> eps 9.9999997473787516e-06 : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT: func.return %y : tensor<2x8xbf16>

// Each pattern also runs alone: only the transposes compose here.
// RUN: mlx-opt %s -p compose-transposes | filecheck %s --check-prefix=ALONE
// ALONE-LABEL: func.func @transposes
// ALONE-NEXT: %a = mlx.transpose %x [1, 0, 2]
// ALONE-NEXT: %b = mlx.transpose %x [2, 0, 1]
// ALONE-NEXT: %c = mlx.transpose %x [0, 1, 2]
// ALONE-LABEL: func.func @rms_norm
// ALONE: mlx.power
