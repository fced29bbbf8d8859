// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the reductions, arg-reductions and along-a-dim ops.

func.func @dim_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.sum' op dim 2 is out of range for rank 2}}
  %0 = aten.sum %x dims [2] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_dim_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.mean' op dim -3 is out of range for rank 2}}
  %0 = aten.mean %x dims [-3] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @repeated_dims(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.amax' op dims [1, -1] repeat an axis}}
  %0 = aten.amax %x dims [1, -1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @keepdim_shape(%x: tensor<2x3xi64>) {
  // expected-error @+1 {{'aten.prod' op result shape [3] does not match the expected shape [1, 3]}}
  %0 = aten.prod %x dims [0] keepdim : tensor<2x3xi64> -> tensor<3xi64>
  func.return
}

// -----

func.func @all_dims_shape(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'aten.any' op result shape [1, 1] does not match the expected shape []}}
  %0 = aten.any %x : tensor<2x3xi1> -> tensor<1x1xi1>
  func.return
}

// -----

func.func @var_float(%x: tensor<2x3xi64>) {
  // expected-error @+1 {{'aten.var' op result must have float element type, got i64}}
  %0 = aten.var %x dims [1] correction 1.000000e+00 : tensor<2x3xi64> -> tensor<2xi64>
  func.return
}

// -----

func.func @std_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.std' op result shape [2] does not match the expected shape [2, 1]}}
  %0 = aten.std %x dims [1] keepdim : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @argmax_dtype(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.argmax' op result must have integer (not bool) element type, got i1}}
  %0 = aten.argmax %x dim 1 : tensor<2x3xf32> -> tensor<2xi1>
  func.return
}

// -----

func.func @argmin_flat_keepdim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.argmin' op result shape [1] does not match the expected shape [1, 1]}}
  %0 = aten.argmin %x keepdim : tensor<2x3xf32> -> tensor<1xi64>
  func.return
}

// -----

func.func @argmin_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.argmin' op result shape [3] does not match the expected shape [2]}}
  %0 = aten.argmin %x dim -1 : tensor<2x3xf32> -> tensor<3xi64>
  func.return
}

// -----

func.func @argmax_scalar_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.argmax' op dim 1 is out of range for rank 0}}
  %0 = aten.argmax %x dim 1 : tensor<f32> -> tensor<i64>
  func.return
}

// -----

func.func @cumsum_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.cumsum' op dim 2 is out of range for rank 2}}
  %0 = aten.cumsum %x dim 2 : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @cumprod_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.cumprod' op result shape [3, 2] does not match operand shape [2, 3]}}
  %0 = aten.cumprod %x dim 0 : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @softmax_float(%x: tensor<2x3xi64>) {
  // expected-error @+1 {{'aten.softmax' op result must have float element type, got i64}}
  %0 = aten.softmax %x dim -1 : tensor<2x3xi64> -> tensor<2x3xi64>
  func.return
}

// -----

func.func @log_softmax_float(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.log_softmax' op result must have float element type, got i32}}
  %0 = aten.log_softmax %x dim 1 : tensor<2x3xf32> -> tensor<2x3xi32>
  func.return
}

// -----

func.func @log_softmax_scalar_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.log_softmax' op dim -2 is out of range for rank 0}}
  %0 = aten.log_softmax %x dim -2 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @logcumsumexp_int(%x: tensor<2x3xi64>) {
  // expected-error @+1 {{'aten.logcumsumexp' op result must have float element type, got i64}}
  %0 = aten.logcumsumexp %x dim 0 : tensor<2x3xi64> -> tensor<2x3xi64>
  func.return
}
