// Verifier rules of mlx.sort and mlx.argsort: each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @sort_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'mlx.sort' op axis 0 is out of range for rank 0}}
  %0 = mlx.sort %x axis 0 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @sort_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.sort' op result shape [4, 3] does not match operand shape [3, 4]}}
  %0 = mlx.sort %x axis 1 : tensor<3x4xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @sort_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.sort' op result element type f16 must equal the input's f32}}
  %0 = mlx.sort %x axis 1 : tensor<3x4xf32> -> tensor<3x4xf16>
  func.return
}

// -----

func.func @argsort_axis(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.argsort' op axis -3 is out of range for rank 2}}
  %0 = mlx.argsort %x axis -3 : tensor<3x4xf32> -> tensor<3x4xui32>
  func.return
}

// -----

func.func @argsort_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.argsort' op result must have integer (not bool) element type, got f32}}
  %0 = mlx.argsort %x axis 1 : tensor<3x4xf32> -> tensor<3x4xf32>
  func.return
}
