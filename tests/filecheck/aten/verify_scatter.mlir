// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of scatter and scatter_reduce and checks its message.

func.func @scatter_dim(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op dim 2 is out of range for rank 2}}
  %0 = aten.scatter %x, %i, %s dim 2 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_index_dtype(%x: tensor<5x4xf32>, %i: tensor<3x4xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op index must have integer (not bool) element type, got f32}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_index_rank(%x: tensor<5x4xf32>, %i: tensor<3xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op index must have the input's rank 2, got 1}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

// Outside `dim`, the index may not be larger than the input.
func.func @scatter_index_input(%x: tensor<5x4xf32>, %i: tensor<3x6xi64>, %s: tensor<3x6xf32>) {
  // expected-error @+1 {{'aten.scatter' op index dim 1 (6) exceeds the input's (4)}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x6xi64>, tensor<3x6xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_src_rank(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'aten.scatter' op src must have the input's rank 2, got 1}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_src_small(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op index dim 0 (3) exceeds src's (2)}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<2x4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_src_dtype(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf16>) {
  // expected-error @+1 {{'aten.scatter' op src element type f16 must equal the input's f32}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf16> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_result_shape(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op result shape [4, 5] does not match operand shape [5, 4]}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @scatter_result_dtype(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter' op result element type must equal the input's}}
  %0 = aten.scatter %x, %i, %s dim 0 : tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32> -> tensor<5x4xf16>
  func.return
}

// -----

func.func @scatter_reduce_mode(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %c: f64) {
  // expected-error @+1 {{'aten.scatter' op reduce must be one of ('add', 'multiply'), got 'max'}}
  %0 = aten.scatter %x, %i, %c dim 0 reduce "max" : tensor<5x4xf32>, tensor<3x4xi64>, f64 -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_reduce_reduction(%x: tensor<5x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter_reduce' op reduce must be one of ('sum', 'prod', 'mean', 'amax', 'amin'), got 'max'}}
  %0 = aten.scatter_reduce %x, %i, %s dim 0 reduce "max" : tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @scatter_reduce_src(%x: tensor<5x6xf32>, %i: tensor<3x5xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.scatter_reduce' op index dim 1 (5) exceeds src's (4)}}
  %0 = aten.scatter_reduce %x, %i, %s dim 0 reduce "sum" include_self : tensor<5x6xf32>, tensor<3x5xi64>, tensor<3x4xf32> -> tensor<5x6xf32>
  func.return
}
