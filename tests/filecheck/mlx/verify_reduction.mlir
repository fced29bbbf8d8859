// Verifier rules of the mlx reductions, arg-reductions, scans and softmax: each chunk
// breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @sum_axis_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.sum' op axis 2 is out of range for rank 2}}
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @prod_axes_repeat(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.prod' op axes [1, -1] repeat an axis}}
  %0 = mlx.prod %x axes [1, -1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @max_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'mlx.max' op axis 0 is out of range for rank 0}}
  %0 = mlx.max %x axes [0] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @sum_keepdims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.sum' op result shape [4] does not match the expected shape [4, 1]}}
  %0 = mlx.sum %x axes [1] keepdims : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

// Without axes, every axis is reduced.
func.func @min_all(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'mlx.min' op result shape [4] does not match the expected shape []}}
  %0 = mlx.min %x : tensor<4x8xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @sum_widens(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'mlx.sum' op result element type i64 must equal the input's i32}}
  %0 = mlx.sum %x axes [1] : tensor<4x8xi32> -> tensor<4xi64>
  func.return
}

// -----

func.func @mean_to_int(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'mlx.mean' op result must have float element type, got i32}}
  %0 = mlx.mean %x axes [1] : tensor<4x8xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @logsumexp_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.logsumexp' op result shape [4] does not match the expected shape [8]}}
  %0 = mlx.logsumexp %x axes [0] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @any_to_float(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.any' op result must have bool element type, got f32}}
  %0 = mlx.any %x axes [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @var_to_int(%x: tensor<4x8xi64>) {
  // expected-error @+1 {{'mlx.var' op result must have float element type, got i64}}
  %0 = mlx.var %x axes [1] ddof 1 : tensor<4x8xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @std_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.std' op result shape [1, 8] does not match the expected shape [8]}}
  %0 = mlx.std %x axes [0] ddof 0 : tensor<4x8xf32> -> tensor<1x8xf32>
  func.return
}

// -----

func.func @argmax_to_bool(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.argmax' op result must have integer (not bool) element type, got i1}}
  %0 = mlx.argmax %x axis 1 : tensor<4x8xf32> -> tensor<4xi1>
  func.return
}

// -----

func.func @argmin_to_float(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.argmin' op result must have integer (not bool) element type, got f32}}
  %0 = mlx.argmin %x axis 1 : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @argmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.argmax' op axis -3 is out of range for rank 2}}
  %0 = mlx.argmax %x axis -3 : tensor<4x8xf32> -> tensor<4xui32>
  func.return
}

// -----

// Without an axis the input is flattened; keepdims then keeps every dim as 1.
func.func @argmax_flat_keepdims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.argmax' op result shape [1] does not match the expected shape [1, 1]}}
  %0 = mlx.argmax %x keepdims : tensor<4x8xf32> -> tensor<1xui32>
  func.return
}

// -----

func.func @argmin_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.argmin' op result shape [8] does not match the expected shape [4, 1]}}
  %0 = mlx.argmin %x axis 1 keepdims : tensor<4x8xf32> -> tensor<8xui32>
  func.return
}

// -----

func.func @cumsum_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.cumsum' op axis 1 is out of range for rank 1}}
  %0 = mlx.cumsum %x axis 1 : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @cumprod_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.cumprod' op result shape [4] does not match operand shape [8]}}
  %0 = mlx.cumprod %x axis 0 : tensor<8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @cummax_dtype(%x: tensor<8xi32>) {
  // expected-error @+1 {{'mlx.cummax' op result element type f32 must equal the input's i32}}
  %0 = mlx.cummax %x axis 0 reverse : tensor<8xi32> -> tensor<8xf32>
  func.return
}

// -----

func.func @cummin_scalar(%x: tensor<i32>) {
  // expected-error @+1 {{'mlx.cummin' op axis 0 is out of range for rank 0}}
  %0 = mlx.cummin %x axis 0 : tensor<i32> -> tensor<i32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'mlx.softmax' op axis 3 is out of range for rank 3}}
  %0 = mlx.softmax %x axes [3] : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  func.return
}

// -----

func.func @softmax_shape(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'mlx.softmax' op result shape [2, 8, 4] does not match operand shape [2, 4, 8]}}
  %0 = mlx.softmax %x axes [-1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  func.return
}

// -----

// `precise` accumulates in f32 but returns the input's type.
func.func @softmax_dtype(%x: tensor<2x4x8xf16>) {
  // expected-error @+1 {{'mlx.softmax' op input and result must share one element type, got f16, f32}}
  %0 = mlx.softmax %x axes [-1] precise : tensor<2x4x8xf16> -> tensor<2x4x8xf32>
  func.return
}

// -----

func.func @softmax_int(%x: tensor<2x4x8xi32>) {
  // expected-error @+1 {{'mlx.softmax' op input must have float element type, got i32}}
  %0 = mlx.softmax %x axes [-1] : tensor<2x4x8xi32> -> tensor<2x4x8xi32>
  func.return
}

// -----

func.func @logcumsumexp_int(%x: tensor<8xi32>) {
  // expected-error @+1 {{'mlx.logcumsumexp' op result must have float element type, got i32}}
  %0 = mlx.logcumsumexp %x axis 0 : tensor<8xi32> -> tensor<8xi32>
  func.return
}
