// Verifier rules of mlx.quantized_matmul: each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: 'mlx.quantized_matmul' op bits must be one of (2, 3, 4, 5, 6, 8), got 7
func.func @bits(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 7 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op group_size must be one of (32, 64, 128), got 16
func.func @group_size(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 16 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op mode must be one of ('affine', 'mxfp4', 'mxfp8'), got 'nf4'
func.func @mode(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "nf4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op mode 'mxfp4' needs (bits, group_size) (4, 32), got (4, 64)
func.func @mxfp_format(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x2xui8>) {
  %0 = mlx.quantized_matmul %x, %w, %e group_size 64 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xui8> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op x must have float element type, got i32
func.func @x_dtype(%x: tensor<2x128xi32>, %w: tensor<64x16xui32>, %s: tensor<64x2xi32>, %b: tensor<64x2xi32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xi32>, tensor<64x16xui32>, tensor<64x2xi32>, tensor<64x2xi32> -> tensor<2x64xi32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op w must have ui32 element type, got i32
func.func @w_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xi32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xi32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op x must have rank >= 1 and w rank 2, got 2 and 3
func.func @w_rank(%x: tensor<2x128xf32>, %w: tensor<1x64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<1x64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op w's packed width 16 does not hold a whole number of 3-bit elements
func.func @packed_width(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 3 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op w's unpacked width 32 is not a multiple of group_size 64
func.func @unpacked_groups(%x: tensor<2x32xf32>, %w: tensor<64x4xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x32xf32>, tensor<64x4xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op x's last dim 256 must equal the contracting dim K = 128 of w [64, 16] (4-bit, transpose: w is [N, K])
func.func @contracting(%x: tensor<2x256xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x256xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op x's last dim 128 must equal the contracting dim K = 64 of w [64, 16] (4-bit, w is [K, N])
func.func @contracting_no_transpose(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op scales shape [64, 4] does not match the expected shape [64, 2]
func.func @scales_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x4xf32>, %b: tensor<64x4xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xf32>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op scales of mode 'affine' must have element type f32, got f16
func.func @scales_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf16>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf16>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op scales of mode 'mxfp4' must have element type ui8, got f32
func.func @mxfp_scales_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x4xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op mode 'affine' requires biases
func.func @affine_needs_biases(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op mode 'mxfp4' has no biases
func.func @mxfp_has_no_biases(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x4xui8>, %b: tensor<64x4xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %e, %b group_size 32 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xui8>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op biases must have x's element type f32, got bf16
func.func @biases_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xbf16>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xbf16> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op biases shape [64, 1] does not match the expected shape [64, 2]
func.func @biases_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x1xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x1xf32> -> tensor<2x64xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op result element type f16 must equal x's f32
func.func @result_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf16>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op result shape [2, 128] does not match the expected shape [2, 64]
func.func @result_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x128xf32>
  func.return
}

// -----

// CHECK: 'mlx.quantized_matmul' op result shape [2, ?, 64] does not match the expected shape [3, ?, 64]
func.func @result_leading(%x: tensor<3x?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<3x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x?x64xf32>
  func.return
}
