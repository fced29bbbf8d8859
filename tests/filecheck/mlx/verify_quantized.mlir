// Verifier rules of mlx.quantized_matmul, mlx.dequantize and mlx.quantized_take: each
// chunk breaks exactly one rule. The packed-layout rules are one helper shared by the
// three ops (`_verify_quantized_layout`); they are broken here for each op, so each
// message is seen naming its op (and, for the scales' and biases' dtype, the operand
// whose type they must have: x for quantized_matmul, the result for the others).
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @bits(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op bits must be one of (2, 3, 4, 5, 6, 8), got 7}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 7 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @group_size(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op group_size must be one of (32, 64, 128), got 16}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 16 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @mode(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op mode must be one of ('affine', 'mxfp4', 'mxfp8'), got 'nf4'}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "nf4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @mxfp_format(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x2xui8>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op mode 'mxfp4' needs (bits, group_size) (4, 32), got (4, 64)}}
  %0 = mlx.quantized_matmul %x, %w, %e group_size 64 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xui8> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @x_dtype(%x: tensor<2x128xi32>, %w: tensor<64x16xui32>, %s: tensor<64x2xi32>, %b: tensor<64x2xi32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op x must have float element type, got i32}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xi32>, tensor<64x16xui32>, tensor<64x2xi32>, tensor<64x2xi32> -> tensor<2x64xi32>
  func.return
}

// -----

func.func @w_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xi32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op w must have ui32 element type, got i32}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xi32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @x_rank(%x: tensor<f32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op x must have rank >= 1, got 0}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<f32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64xf32>
  func.return
}

// -----

func.func @w_rank(%x: tensor<2x128xf32>, %w: tensor<1x64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op w must have rank 2, got 3}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<1x64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @packed_width(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op w's packed width 16 does not hold a whole number of 3-bit elements}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 3 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @unpacked_groups(%x: tensor<2x32xf32>, %w: tensor<64x4xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op w's unpacked width 32 is not a multiple of group_size 64}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x32xf32>, tensor<64x4xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @contracting(%x: tensor<2x256xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op x's last dim 256 must equal the contracting dim K = 128 of w [64, 16] (4-bit, transpose: w is [N, K])}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x256xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @contracting_no_transpose(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op x's last dim 128 must equal the contracting dim K = 64 of w [64, 16] (4-bit, w is [K, N])}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @scales_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x4xf32>, %b: tensor<64x4xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op scales shape [64, 4] does not match the expected shape [64, 2]}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xf32>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @scales_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf16>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op scales of mode 'affine' must have x's element type f32, got f16}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf16>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @mxfp_scales_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x4xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op scales of mode 'mxfp4' must have element type ui8, got f32}}
  %0 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @affine_needs_biases(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op mode 'affine' requires biases}}
  %0 = mlx.quantized_matmul %x, %w, %s group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @mxfp_has_no_biases(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x4xui8>, %b: tensor<64x4xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op mode 'mxfp4' has no biases}}
  %0 = mlx.quantized_matmul %x, %w, %e, %b group_size 32 bits 4 mode "mxfp4" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xui8>, tensor<64x4xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @biases_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xbf16>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op biases must have x's element type f32, got bf16}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xbf16> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @biases_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x1xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op biases shape [64, 1] does not match the expected shape [64, 2]}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x1xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @result_dtype(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op result element type f16 must equal x's f32}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf16>
  func.return
}

// -----

func.func @result_shape(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op result shape [2, 128] does not match the expected shape [2, 64]}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x128xf32>
  func.return
}

// -----

func.func @result_leading(%x: tensor<3x?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op result shape [2, ?, 64] does not match the expected shape [3, ?, 64]}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<3x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x?x64xf32>
  func.return
}

// -----

func.func @dq_result_float(%w: tensor<64x16xui32>, %s: tensor<64x2xi32>, %b: tensor<64x2xi32>) {
  // expected-error @+1 {{'mlx.dequantize' op result must have float element type, got i32}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xi32>, tensor<64x2xi32> -> tensor<64x128xi32>
  func.return
}

// -----

func.func @dq_bits(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op bits must be one of (2, 3, 4, 5, 6, 8), got 7}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 7 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_group_size(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op group_size must be one of (32, 64, 128), got 256}}
  %0 = mlx.dequantize %w, %s, %b group_size 256 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_mode(%w: tensor<64x16xui32>, %e: tensor<64x4xui8>) {
  // expected-error @+1 {{'mlx.dequantize' op mode must be one of ('affine', 'mxfp4', 'mxfp8'), got 'nvfp4'}}
  %0 = mlx.dequantize %w, %e group_size 32 bits 4 mode "nvfp4" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_mxfp_format(%w: tensor<64x16xui32>, %e: tensor<64x4xui8>) {
  // expected-error @+1 {{'mlx.dequantize' op mode 'mxfp8' needs (bits, group_size) (8, 32), got (4, 32)}}
  %0 = mlx.dequantize %w, %e group_size 32 bits 4 mode "mxfp8" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_w_dtype(%w: tensor<64x16xui8>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op w must have ui32 element type, got ui8}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui8>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_w_rank(%w: tensor<16xui32>, %s: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op w must have rank 2, got 1}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<16xui32>, tensor<2xf32>, tensor<2xf32> -> tensor<128xf32>
  func.return
}

// -----

func.func @dq_packed_width(%w: tensor<64x20xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op w's packed width 20 does not hold a whole number of 6-bit elements}}
  %0 = mlx.dequantize %w, %s, %b group_size 32 bits 6 mode "affine" : tensor<64x20xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x106xf32>
  func.return
}

// -----

func.func @dq_unpacked_groups(%w: tensor<64x12xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op w's unpacked width 96 is not a multiple of group_size 64}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x12xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<64x96xf32>
  func.return
}

// -----

func.func @dq_scales_shape(%w: tensor<64x16xui32>, %s: tensor<32x2xf32>, %b: tensor<32x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op scales shape [32, 2] does not match the expected shape [64, 2]}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<32x2xf32>, tensor<32x2xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_scales_dtype(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op scales of mode 'affine' must have the result's element type bf16, got f32}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xbf16>
  func.return
}

// -----

func.func @dq_mxfp_scales_dtype(%w: tensor<64x16xui32>, %e: tensor<64x4xbf16>) {
  // expected-error @+1 {{'mlx.dequantize' op scales of mode 'mxfp4' must have element type ui8, got bf16}}
  %0 = mlx.dequantize %w, %e group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xbf16> -> tensor<64x128xbf16>
  func.return
}

// -----

func.func @dq_affine_needs_biases(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op mode 'affine' requires biases}}
  %0 = mlx.dequantize %w, %s group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_mxfp_has_no_biases(%w: tensor<64x16xui32>, %e: tensor<64x4xui8>, %b: tensor<64x4xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op mode 'mxfp4' has no biases}}
  %0 = mlx.dequantize %w, %e, %b group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xui8>, tensor<64x4xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_biases_dtype(%w: tensor<64x16xui32>, %s: tensor<64x2xf16>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op biases must have the result's element type f16, got f32}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf16>, tensor<64x2xf32> -> tensor<64x128xf16>
  func.return
}

// -----

func.func @dq_biases_shape(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x1xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op biases shape [64, 1] does not match the expected shape [64, 2]}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x1xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @dq_result_shape(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op result shape [64, 64] does not match the expected shape [64, 128]}}
  %0 = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x64xf32>
  func.return
}

// -----

func.func @dq_result_dynamic_rows(%w: tensor<?x24xui32>, %s: tensor<?x3xf32>, %b: tensor<?x3xf32>) {
  // expected-error @+1 {{'mlx.dequantize' op result shape [64, 128] does not match the expected shape [?, 96]}}
  %0 = mlx.dequantize %w, %s, %b group_size 32 bits 8 mode "affine" : tensor<?x24xui32>, tensor<?x3xf32>, tensor<?x3xf32> -> tensor<64x128xf32>
  func.return
}

// -----

func.func @qt_indices_dtype(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.quantized_take' op indices must be integer, got f32}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xf32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_indices_bool(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi1>) {
  // expected-error @+1 {{'mlx.quantized_take' op indices must be integer, got i1}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi1> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_result_float(%w: tensor<64x16xui32>, %s: tensor<64x2xi32>, %b: tensor<64x2xi32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op result must have float element type, got i32}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xi32>, tensor<64x2xi32> -> tensor<2x3x128xi32>
  func.return
}

// -----

func.func @qt_bits(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op bits must be one of (2, 3, 4, 5, 6, 8), got 1}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 1 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_mxfp_format(%w: tensor<64x16xui32>, %e: tensor<64x1xui8>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op mode 'mxfp4' needs (bits, group_size) (4, 32), got (4, 128)}}
  %0 = mlx.quantized_take %w, %e indices %i : tensor<2x3xi32> group_size 128 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x1xui8> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_w_rank(%w: tensor<1x64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op w must have rank 2, got 3}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<1x64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_scales_shape(%w: tensor<64x16xui32>, %s: tensor<64x4xf32>, %b: tensor<64x4xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op scales shape [64, 4] does not match the expected shape [64, 2]}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x4xf32>, tensor<64x4xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_scales_dtype(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op scales of mode 'affine' must have the result's element type f16, got f32}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x128xf16>
  func.return
}

// -----

func.func @qt_affine_needs_biases(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op mode 'affine' requires biases}}
  %0 = mlx.quantized_take %w, %s indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_mxfp_has_no_biases(%w: tensor<64x32xui32>, %e: tensor<64x4xui8>, %b: tensor<64x4xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op mode 'mxfp8' has no biases}}
  %0 = mlx.quantized_take %w, %e, %b indices %i : tensor<2x3xi32> group_size 32 bits 8 mode "mxfp8" : tensor<64x32xui32>, tensor<64x4xui8>, tensor<64x4xf32> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_biases_dtype(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xbf16>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op biases must have the result's element type f32, got bf16}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xbf16> -> tensor<2x3x128xf32>
  func.return
}

// -----

func.func @qt_result_rank(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op result shape [6, 128] does not match the expected shape [2, 3, 128]}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<6x128xf32>
  func.return
}

// -----

func.func @qt_result_width(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'mlx.quantized_take' op result shape [2, 3, 64] does not match the expected shape [2, 3, 128]}}
  %0 = mlx.quantized_take %w, %s, %b indices %i : tensor<2x3xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x3x64xf32>
  func.return
}

// -----

func.func @activation_bits(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op activation_bits must be one of (8, 16), got 4}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 4 : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @activation_bits_mode(%x: tensor<2x128xf32>, %w: tensor<64x16xui32>, %e: tensor<64x4xui8>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op activation_bits needs mode 'affine' and transpose}}
  %0 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose activation_bits 8 : tensor<2x128xf32>, tensor<64x16xui32>, tensor<64x4xui8> -> tensor<2x64xf32>
  func.return
}

// -----

func.func @activation_bits_transpose(%x: tensor<2x128xf32>, %w: tensor<128x8xui32>, %s: tensor<128x1xf32>, %b: tensor<128x1xf32>) {
  // expected-error @+1 {{'mlx.quantized_matmul' op activation_bits needs mode 'affine' and transpose}}
  %0 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" activation_bits 8 : tensor<2x128xf32>, tensor<128x8xui32>, tensor<128x1xf32>, tensor<128x1xf32> -> tensor<2x64xf32>
  func.return
}
