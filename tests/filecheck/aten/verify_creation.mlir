// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the creation ops, tril/triu or sym_size.

func.func @zeros_inferred() {
  // expected-error @+1 {{'aten.zeros' op size -1 at position 0 is negative}}
  %0 = aten.zeros [-1, 4] : tensor<2x4xf32>
  func.return
}

// -----

func.func @ones_rank(%n: index) {
  // expected-error @+1 {{'aten.ones' op size list has 1 entries but the result has rank 2}}
  %0 = aten.ones [%n] : tensor<?x4xf32>
  func.return
}

// -----

func.func @ones_size() {
  // expected-error @+1 {{'aten.ones' op size 3 at position 0 does not match result dim 2}}
  %0 = aten.ones [3, 4] : tensor<2x4xi1>
  func.return
}

// -----

func.func @zeros_markers(%n: index) {
  // expected-error @+1 {{'aten.zeros' op size list has 0 dynamic entries but 1 index operands}}
  %0 = "aten.zeros"(%n) <{static_sizes = array<i64: 2, 4>}> : (index) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @full_literal_for_dynamic(%v: f64) {
  // expected-error @+1 {{'aten.full' op result dim 1 is dynamic but its size is the literal 4}}
  %0 = aten.full [2, 4], %v : f64 -> tensor<2x?xf32>
  func.return
}

// -----

func.func @full_tensor_value(%v: tensor<4xf32>) {
  // expected-error @+1 {{'aten.full' op a tensor fill value must be 0-d}}
  %0 = aten.full [4], %v : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @scalar_tensor_rank(%v: f64) {
  // expected-error @+1 {{'aten.scalar_tensor' op result must be 0-d}}
  %0 = aten.scalar_tensor %v : f64 -> tensor<1xf32>
  func.return
}

// -----

func.func @zeros_like_shape(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{'aten.zeros_like' op result shape [3, ?] does not match operand shape [2, ?]}}
  %0 = aten.zeros_like %x : tensor<2x?xf32> -> tensor<3x?xf32>
  func.return
}

// -----

func.func @ones_like_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.ones_like' op result shape [6] does not match operand shape [2, 3]}}
  %0 = aten.ones_like %x : tensor<2x3xf32> -> tensor<6xi1>
  func.return
}

// -----

func.func @full_like_shape(%x: tensor<2x3xf32>, %v: i64) {
  // expected-error @+1 {{'aten.full_like' op result shape [3, 3] does not match operand shape [2, 3]}}
  %0 = aten.full_like %x, %v : tensor<2x3xf32>, i64 -> tensor<3x3xi64>
  func.return
}

// -----

func.func @full_like_tensor_value(%x: tensor<2x3xf32>, %v: tensor<1xf32>) {
  // expected-error @+1 {{'aten.full_like' op a tensor fill value must be 0-d}}
  %0 = aten.full_like %x, %v : tensor<2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @arange_start(%s: tensor<i64>, %e: i64) {
  // expected-error @+1 {{'aten.arange' op start must be a Scalar, not a tensor}}
  %0 = aten.arange %s, %e, %e : tensor<i64>, i64, i64 -> tensor<?xi64>
  func.return
}

// -----

func.func @arange_end(%e: tensor<f32>, %s: f64) {
  // expected-error @+1 {{'aten.arange' op end must be a Scalar, not a tensor}}
  %0 = aten.arange %s, %e, %s : f64, tensor<f32>, f64 -> tensor<?xf32>
  func.return
}

// -----

func.func @arange_step(%s: index, %t: tensor<i64>) {
  // expected-error @+1 {{'aten.arange' op step must be a Scalar, not a tensor}}
  %0 = aten.arange %s, %s, %t : index, index, tensor<i64> -> tensor<?xi64>
  func.return
}

// -----

func.func @arange_rank(%s: i64) {
  // expected-error @+1 {{'aten.arange' op result must be 1-D, got rank 2}}
  %0 = aten.arange %s, %s, %s : i64, i64, i64 -> tensor<1x?xi64>
  func.return
}

// -----

func.func @tril_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'aten.tril' op input must have rank >= 2, got 1}}
  %0 = aten.tril %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @triu_shape(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'aten.triu' op result shape [5, ?] does not match operand shape [4, ?]}}
  %0 = aten.triu %x diagonal 1 : tensor<4x?xf32> -> tensor<5x?xf32>
  func.return
}

// -----

func.func @triu_dtype(%x: tensor<4x4xi1>) {
  // expected-error @+1 {{'aten.triu' op result element type must equal the input's}}
  %0 = aten.triu %x diagonal -1 : tensor<4x4xi1> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @sym_size_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.sym_size' op input must have rank >= 1, got 0}}
  %0 = aten.sym_size %x dim 0 : tensor<f32>
  func.return
}

// -----

func.func @sym_size_dim(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{'aten.sym_size' op dim 2 is out of range for rank 2}}
  %0 = aten.sym_size %x dim 2 : tensor<2x?xf32>
  func.return
}

// -----

func.func @random_unknown() {
  // expected-error @+1 {{'aten.random' op distribution must be one of ['bernoulli', 'cauchy', 'exponential', 'geometric', 'log_normal', 'normal', 'randint', 'uniform'], got 'gamma'}}
  %0 = aten.random "gamma" [1.0] [4] : tensor<4xf32>
  func.return
}

// -----

func.func @random_parameters() {
  // expected-error @+1 {{'aten.random' op uniform takes 2 parameter(s) (low, high), got 1}}
  %0 = aten.random "uniform" [1.0] [4] : tensor<4xf32>
  func.return
}

// -----

func.func @random_continuous_int(%x: tensor<4xf32>) {
  // expected-error @+1 {{'aten.random_like' op normal values need a float result, got i64}}
  %0 = aten.random_like "normal" [0.0, 1.0] %x : tensor<4xf32> -> tensor<4xi64>
  func.return
}

// -----

func.func @random_size() {
  // expected-error @+1 {{'aten.random' op size 3 at position 0 does not match result dim 4}}
  %0 = aten.random "randint" [0.0, 5.0] [3] : tensor<4xi64>
  func.return
}

// -----

func.func @random_like_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'aten.random_like' op result shape [5] does not match operand shape [4]}}
  %0 = aten.random_like "uniform" [0.0, 1.0] %x : tensor<4xf32> -> tensor<5xf32>
  func.return
}
