// Ops the lowering cannot handle fail the pass with a message naming the op.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics -p convert-aten-to-mlx

func.func @bool_mask(%x: tensor<4x3xf32>, %m: tensor<4xi1>) -> tensor<?x3xf32> {
  // expected-error @+1 {{aten.index: a bool mask index selects a data-dependent number of elements; mlxir needs integer indices (use torch.nonzero before export, or torch.where)}}
  %r = aten.index %x[%m] at [0] : tensor<4x3xf32>, (tensor<4xi1>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}

// -----

func.func @transposed_conv_dynamic_weight(%x: tensor<1x2x5x5xf32>, %w: tensor<2x3x?x3xf32>) -> tensor<1x3x?x7xf32> {
  // expected-error @+1 {{aten.convolution: a transposed convolution needs a static weight shape}}
  %r = aten.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] transposed groups 1 : tensor<1x2x5x5xf32>, tensor<2x3x?x3xf32> -> tensor<1x3x?x7xf32>
  func.return %r : tensor<1x3x?x7xf32>
}

// -----

func.func @grouped_conv3d(%x: tensor<1x4x5x5x5xf32>, %w: tensor<2x2x3x3x3xf32>) -> tensor<1x2x3x3x3xf32> {
  // expected-error @+1 {{aten.convolution: MLX has no grouped 3-d convolution (groups=2)}}
  %r = aten.convolution %x, %w stride [1] padding [0] dilation [1] groups 2 : tensor<1x4x5x5x5xf32>, tensor<2x2x3x3x3xf32> -> tensor<1x2x3x3x3xf32>
  func.return %r : tensor<1x2x3x3x3xf32>
}

// -----

func.func @scatter_amax_bool(%x: tensor<4x3xi1>, %i: tensor<2x3xi64>, %s: tensor<2x3xi1>) -> tensor<4x3xi1> {
  // expected-error @+1 {{aten.scatter_reduce: amax of bool tensors is not supported}}
  %r = aten.scatter_reduce %x, %i, %s dim 0 reduce "amax" : tensor<4x3xi1>, tensor<2x3xi64>, tensor<2x3xi1> -> tensor<4x3xi1>
  func.return %r : tensor<4x3xi1>
}
