// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of aten.dequantize_affine.

func.func @float_input(%q: tensor<4x64xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op input must have integer (not bool) element type, got f32}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 32] range -8 to 7 : tensor<4x64xf32>, tensor<4x2xf32> -> tensor<4x64xf32>
  func.return
}

// -----

func.func @integer_result(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op result must have float element type, got i32}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 32] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xi32>
  func.return
}

// -----

func.func @result_shape(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op result shape [4, 32] does not match operand shape [4, 64]}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 32] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x32xf32>
  func.return
}

// -----

func.func @block_rank(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op block_size has 1 entries for a rank-2 input}}
  %0 = aten.dequantize_affine %q, %s block_size [32] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
  func.return
}

// -----

func.func @range(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op quant_min 7 exceeds quant_max -8}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 32] range 7 to -8 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
  func.return
}

// -----

func.func @block_divides(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op dim 1 of size 64 does not split into blocks of 48}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 48] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
  func.return
}

// -----

func.func @scale_count(%q: tensor<4x64xi8>, %s: tensor<4x1xf32>) {
  // expected-error @+1 {{'aten.dequantize_affine' op viewing scale per block changes the element count from 8 [4, 2, 1] to 4 [4, 1]}}
  %0 = aten.dequantize_affine %q, %s block_size [1, 32] range -8 to 7 : tensor<4x64xi8>, tensor<4x1xf32> -> tensor<4x64xf32>
  func.return
}
