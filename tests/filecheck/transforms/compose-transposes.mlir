// compose-transposes: transpose(transpose(x, p1), p2) -> transpose(x, p1[p2]). The pass
// alone neither removes the identity that may result nor the inner transpose left
// unused (remove-identity-transposes and dce do).
// RUN: mlx-opt %s -p compose-transposes | filecheck %s

// Only the transposes compose here: %c (an identity) stays.
// CHECK-LABEL: func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    %b = mlx.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %c = mlx.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = mlx.transpose %a [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %c = mlx.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// A transpose undone gives the identity permutation, still a transpose.
// CHECK-LABEL: func.func @to_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %b = mlx.transpose %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %b : tensor<2x3xf32>
func.func @to_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = mlx.transpose %a [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  func.return %b : tensor<2x3xf32>
}

// A chain of three composes step by step; %a, returned too, stays.
// CHECK-LABEL: func.func @three(%x: tensor<2x3x4x5xf32>) -> (tensor<5x2x4x3xf32>, tensor<3x2x4x5xf32>) {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
// CHECK-NEXT:    %b = mlx.transpose %x [1, 2, 3, 0] : tensor<2x3x4x5xf32> -> tensor<3x4x5x2xf32>
// CHECK-NEXT:    %c = mlx.transpose %x [3, 0, 2, 1] : tensor<2x3x4x5xf32> -> tensor<5x2x4x3xf32>
// CHECK-NEXT:    func.return %c, %a : tensor<5x2x4x3xf32>, tensor<3x2x4x5xf32>
func.func @three(%x: tensor<2x3x4x5xf32>) -> (tensor<5x2x4x3xf32>, tensor<3x2x4x5xf32>) {
  %a = mlx.transpose %x [1, 0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
  %b = mlx.transpose %a [0, 2, 3, 1] : tensor<3x2x4x5xf32> -> tensor<3x4x5x2xf32>
  %c = mlx.transpose %b [2, 3, 1, 0] : tensor<3x4x5x2xf32> -> tensor<5x2x4x3xf32>
  func.return %c, %a : tensor<5x2x4x3xf32>, tensor<3x2x4x5xf32>
}

// Kept: the input of the transpose is no transpose.
// CHECK-LABEL: func.func @not_a_transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
// CHECK-NEXT:    %a = mlx.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %b = mlx.transpose %a [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %b : tensor<3x2xf32>
func.func @not_a_transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = mlx.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.transpose %a [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %b : tensor<3x2xf32>
}

// Kept: no other canonicalization runs; an RMSNorm decomposition stays as it is.
// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %two = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %sq = mlx.power %x, %two : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
func.func @rms_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %x, %two : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %mean = mlx.mean %sq axes [1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %x, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
