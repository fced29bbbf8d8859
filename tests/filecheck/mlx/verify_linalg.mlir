// Verifier rules of the mlx linear-algebra, convolution and fast ops (matmul, addmm,
// conv_general, conv_bias_activation, scaled_dot_product_attention, rms_norm, layer_norm, rope, linalg_inv,
// linalg_solve): each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @matmul_vector(%v: tensor<4xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.matmul' op matmul operands must have rank >= 2 at this level, got 1 and 2}}
  %0 = mlx.matmul %v, %w : tensor<4xf32>, tensor<4x8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'mlx.matmul' op contracting dims differ: [2, 3] @ [4, 5]}}
  %0 = mlx.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_dtype(%a: tensor<2x3xf16>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'mlx.matmul' op operands and result must share one element type, got f16, f32, f32}}
  %0 = mlx.matmul %a, %b : tensor<2x3xf16>, tensor<3x5xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+1 {{'mlx.matmul' op operand shapes [2], [3] are not broadcastable}}
  %0 = mlx.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x3x5xf32> -> tensor<2x4x5xf32>
  func.return
}

// -----

func.func @matmul_shape(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'mlx.matmul' op result shape [4, 5] does not match the expected shape [2, 4, 5]}}
  %0 = mlx.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @addmm_contracting(%c: tensor<128xf32>, %x: tensor<?x128xf32>, %w: tensor<64x128xf32>) {
  // expected-error @+1 {{'mlx.addmm' op contracting dims differ: [?, 128] @ [64, 128]}}
  %0 = mlx.addmm %c, %x, %w : tensor<128xf32>, tensor<?x128xf32>, tensor<64x128xf32> -> tensor<?x128xf32>
  func.return
}

// -----

func.func @addmm_bias_dtype(%c: tensor<64xf16>, %x: tensor<?x128xf32>, %w: tensor<128x64xf32>) {
  // expected-error @+1 {{'mlx.addmm' op c, a, b and result must share one element type, got f16, f32, f32, f32}}
  %0 = mlx.addmm %c, %x, %w : tensor<64xf16>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @addmm_bias_size(%c: tensor<32xf32>, %x: tensor<?x128xf32>, %w: tensor<128x64xf32>) {
  // expected-error @+1 {{'mlx.addmm' op operand shapes [32], [?, 64] are not broadcastable}}
  %0 = mlx.addmm %c, %x, %w : tensor<32xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

// c must broadcast to the product's shape, not widen it.
func.func @addmm_bias_rank(%c: tensor<2x1x64xf32>, %x: tensor<4x128xf32>, %w: tensor<128x64xf32>) {
  // expected-error @+1 {{'mlx.addmm' op result shape [4, 64] is not the broadcast shape [2, 4, 64] of the operands}}
  %0 = mlx.addmm %c, %x, %w : tensor<2x1x64xf32>, tensor<4x128xf32>, tensor<128x64xf32> -> tensor<4x64xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op input and weight must have equal rank >= 3, got 4 and 3}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_padding_entries(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op padding_hi needs 2 entries (one per spatial dim), got 1}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op stride entries must be positive, got [0, 1]}}
  %0 = mlx.conv_general %x, %w stride [0, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_negative_dilation(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op input_dilation entries must be positive, got [1, -1]}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, -1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x8x8x6xf32>, %w: tensor<4x3x3x4xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op input channels 6 must equal weight channels 4 x groups 2}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<1x8x8x6xf32>, tensor<4x3x3x4xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op input channels 3 must equal weight channels 3 x groups 0}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 0 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_out_channels(%x: tensor<1x8x8x6xf32>, %w: tensor<7x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op output channels 7 must be divisible by groups 2}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<1x8x8x6xf32>, tensor<7x3x3x3xf32> -> tensor<1x6x6x7xf32>
  func.return
}

// -----

func.func @conv_dtype(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'mlx.conv_general' op input, weight and result must share one element type, got f32, f16, f32}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf16> -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @conv_result_rank(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op result must have the input's rank}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<6x6x4xf32>
  func.return
}

// -----

// conv_bias_activation keeps conv_general's rules.
func.func @conv_bias_activation_channels(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>) {
  // expected-error @+1 {{'mlx.conv_bias_activation' op input channels 6 must equal weight channels 1 x groups 3}}
  %0 = mlx.conv_bias_activation %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 3 activation "none" : tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_activation_unknown(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>) {
  // expected-error @+1 {{'mlx.conv_bias_activation' op activation must be one of ('none', 'relu', 'relu6', 'silu'), got 'gelu'}}
  %0 = mlx.conv_bias_activation %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "gelu" : tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_activation_bias_shape(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>, %b: tensor<1x6xf32>) {
  // expected-error @+1 {{'mlx.conv_bias_activation' op bias must be 1-D of the output channels' size 6, got [1, 6]}}
  %0 = mlx.conv_bias_activation %x, %w bias %b : tensor<1x6xf32> stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "relu" : tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_activation_bias_size(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'mlx.conv_bias_activation' op bias must be 1-D of the output channels' size 6, got [3]}}
  %0 = mlx.conv_bias_activation %x, %w bias %b : tensor<3xf32> stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "relu" : tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_activation_bias_dtype(%x: tensor<1x8x8x6xf16>, %w: tensor<6x3x3x1xf16>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'mlx.conv_bias_activation' op bias and result must share one element type, got f32, f16}}
  %0 = mlx.conv_bias_activation %x, %w bias %b : tensor<6xf32> stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "silu" : tensor<1x8x8x6xf16>, tensor<6x3x3x1xf16> -> tensor<1x6x6x6xf16>
  func.return
}

// -----

// A 2x2 input with a 3x3 kernel and no padding has no valid position.
func.func @conv_too_small(%x: tensor<1x2x2x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op spatial dim 0 is 2 after dilation and padding, smaller than the dilated kernel's 3}}
  %0 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x2x2x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x0x0x4xf32>
  func.return
}

// -----

// (28 + 1 + 1 - 3) // 2 + 1 = 14 positions; the output channels come from the weight.
func.func @conv_out_features(%x: tensor<1x28x28x6xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op result shape [1, 14, 14, 6] does not match the expected shape [1, 14, 14, 8]}}
  %0 = mlx.conv_general %x, %w stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<1x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<1x14x14x6xf32>
  func.return
}

// -----

// Kernel dilation 2 spans 5; input dilation 2 stretches 28 to 55.
func.func @conv_dilated_shape(%x: tensor<?x28x28x6xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'mlx.conv_general' op result shape [?, 28, 28, 8] does not match the expected shape [?, 27, 27, 8]}}
  %0 = mlx.conv_general %x, %w stride [1, 2] padding [1, 0] [2, 1] kernel_dilation [2, 1] input_dilation [1, 2] groups 2 : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x28x28x8xf32>
  func.return
}

// -----

func.func @sdpa_rank(%q: tensor<1x8x4x64xf16>, %k: tensor<8x6x64xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op key must be [B, H, L, D], got rank 3}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_dtype(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf32>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op q, k, v and result must share one element type, got f16, f16, f32, f16}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf32> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_batch(%q: tensor<2x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op query, key and value batch sizes differ: 2, 1, 1}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<2x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<2x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_kv_heads(%q: tensor<1x8x4x64xf16>, %k: tensor<1x2x6x64xf16>, %v: tensor<1x4x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op key heads 2 and value heads 4 differ}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x2x6x64xf16>, tensor<1x4x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_gqa(%q: tensor<1x6x4x64xf16>, %k: tensor<1x4x6x64xf16>, %v: tensor<1x4x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op query heads 6 must be a multiple of key/value heads 4}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x6x4x64xf16>, tensor<1x4x6x64xf16>, tensor<1x4x6x64xf16> -> tensor<1x6x4x64xf16>
  func.return
}

// -----

// Zero key/value heads is an error, not a division by zero in the verifier.
func.func @sdpa_no_kv_heads(%q: tensor<1x8x4x64xf16>, %k: tensor<1x0x6x64xf16>, %v: tensor<1x0x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op query heads 8 must be a multiple of key/value heads 0}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x0x6x64xf16>, tensor<1x0x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_head_dim(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x32xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op query/key head dims or key/value lengths differ}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x6x32xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_mask_mode(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op mask_mode must be one of ('causal',), got 'sliding'}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 mask_mode "sliding" : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_zero_rows_without_mask(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op zero_masked_rows needs an explicit mask}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 zero_masked_rows : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_both_masks(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>, %m: tensor<4x6xi1>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op mask_mode and an explicit mask are mutually exclusive}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<4x6xi1> scale 1.250000e-01 mask_mode "causal" : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_mask_dtype(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>, %m: tensor<4x6xf32>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op mask must be i1 or the query's element type, got f32}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<4x6xf32> scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

// The mask broadcasts into the [B, H, L, S] scores; it may not widen them.
func.func @sdpa_mask_batch(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x64xf16>, %m: tensor<2x1x4x6xi1>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op mask shape [2, 1, 4, 6] does not broadcast to the scores shape [1, 8, 4, 6]}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<2x1x4x6xi1> scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @sdpa_mask_rank(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %m: tensor<1x1x1x4x6xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op mask shape [1, 1, 1, 4, 6] does not broadcast to the scores shape [1, 8, 4, ?]}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v mask %m : tensor<1x1x1x4x6xf16> scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

// The output takes the value head dim.
func.func @sdpa_shape(%q: tensor<1x8x4x64xf16>, %k: tensor<1x8x6x64xf16>, %v: tensor<1x8x6x32xf16>) {
  // expected-error @+1 {{'mlx.scaled_dot_product_attention' op result shape [1, 8, 4, 64] does not match the expected shape [1, 8, 4, 32]}}
  %0 = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x6x64xf16>, tensor<1x8x6x32xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'mlx.rms_norm' op input must have rank >= 1}}
  %0 = mlx.rms_norm %x eps 1.000000e-05 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<2x?xf32>, %w: tensor<2x512xf32>) {
  // expected-error @+1 {{'mlx.rms_norm' op weight must be 1-D of the last dim's size ?, got [2, 512]}}
  %0 = mlx.rms_norm %x weight %w : tensor<2x512xf32> eps 1.000000e-05 : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return
}

// -----

func.func @rms_norm_shape(%x: tensor<2x512xf32>) {
  // expected-error @+1 {{'mlx.rms_norm' op result shape [2, 256] does not match operand shape [2, 512]}}
  %0 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x512xf32> -> tensor<2x256xf32>
  func.return
}

// -----

func.func @rms_norm_int(%x: tensor<2x512xi32>) {
  // expected-error @+1 {{'mlx.rms_norm' op input must have float element type, got i32}}
  %0 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x512xi32> -> tensor<2x512xi32>
  func.return
}

// -----

func.func @rms_norm_dtype(%x: tensor<2x512xbf16>) {
  // expected-error @+1 {{'mlx.rms_norm' op result element type f32 must equal the input's bf16}}
  %0 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x512xbf16> -> tensor<2x512xf32>
  func.return
}

// -----

func.func @layer_norm_scalar(%x: tensor<f16>) {
  // expected-error @+1 {{'mlx.layer_norm' op input must have rank >= 1}}
  %0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<f16> -> tensor<f16>
  func.return
}

// -----

func.func @layer_norm_weight(%x: tensor<2x512xf32>, %w: tensor<256xf32>) {
  // expected-error @+1 {{'mlx.layer_norm' op weight must be 1-D of the last dim's size 512, got [256]}}
  %0 = mlx.layer_norm %x weight %w : tensor<256xf32> eps 1.000000e-05 : tensor<2x512xf32> -> tensor<2x512xf32>
  func.return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x512xf32>, %b: tensor<1x512xf32>) {
  // expected-error @+1 {{'mlx.layer_norm' op bias must be 1-D of the last dim's size 512, got [1, 512]}}
  %0 = mlx.layer_norm %x bias %b : tensor<1x512xf32> eps 1.000000e-05 : tensor<2x512xf32> -> tensor<2x512xf32>
  func.return
}

// -----

func.func @layer_norm_shape(%x: tensor<2x512xf32>) {
  // expected-error @+1 {{'mlx.layer_norm' op result shape [512] does not match operand shape [2, 512]}}
  %0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x512xf32> -> tensor<512xf32>
  func.return
}

// -----

func.func @layer_norm_int(%x: tensor<2x512xi8>) {
  // expected-error @+1 {{'mlx.layer_norm' op input must have float element type, got i8}}
  %0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x512xi8> -> tensor<2x512xi8>
  func.return
}

// -----

func.func @layer_norm_dtype(%x: tensor<2x512xf32>) {
  // expected-error @+1 {{'mlx.layer_norm' op result element type f16 must equal the input's f32}}
  %0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x512xf32> -> tensor<2x512xf16>
  func.return
}

// -----

func.func @rope_rank(%x: tensor<64xf16>) {
  // expected-error @+1 {{'mlx.rope' op input must have rank >= 2}}
  %0 = mlx.rope %x dims 64 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<64xf16> -> tensor<64xf16>
  func.return
}

// -----

func.func @rope_base_and_freqs(%x: tensor<1x8x?x16xf32>, %f: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.rope' op exactly one of base and freqs must be given}}
  %0 = mlx.rope %x dims 16 base 1.000000e+04 freqs %f : tensor<8xf32> scale 1.000000e+00 offset [0] : tensor<1x8x?x16xf32> -> tensor<1x8x?x16xf32>
  func.return
}

// -----

func.func @rope_freqs_shape(%x: tensor<1x8x?x16xf32>, %f: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.rope' op freqs must have shape [4] (dims / 2), got [8]}}
  %0 = mlx.rope %x dims 8 freqs %f : tensor<8xf32> scale 1.000000e+00 offset [0] : tensor<1x8x?x16xf32> -> tensor<1x8x?x16xf32>
  func.return
}

// -----

func.func @rope_row_offsets(%x: tensor<2x8x?x16xf32>, %rows: tensor<3xi64>) {
  // expected-error @+1 {{'mlx.rope' op row_offsets must be 0-d or [B] with B the input's first dim 2, got [3]}}
  %0 = mlx.rope %x dims 16 base 1.000000e+04 scale 1.000000e+00 offset [0] rows %rows : tensor<3xi64> : tensor<2x8x?x16xf32> -> tensor<2x8x?x16xf32>
  func.return
}

// -----

func.func @rope_odd_dims(%x: tensor<1x8x?x?xf16>) {
  // expected-error @+1 {{'mlx.rope' op dims 33 must be even, positive and at most the feature size ?}}
  %0 = mlx.rope %x dims 33 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<1x8x?x?xf16> -> tensor<1x8x?x?xf16>
  func.return
}

// -----

func.func @rope_wide_dims(%x: tensor<1x8x4x64xf16>) {
  // expected-error @+1 {{'mlx.rope' op dims 128 must be even, positive and at most the feature size 64}}
  %0 = mlx.rope %x dims 128 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<1x8x4x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @rope_offset(%x: tensor<1x8x4x64xf16>, %p: index) {
  // expected-error @+1 {{'mlx.rope' op offset must be exactly one integer or index value}}
  %0 = mlx.rope %x dims 64 base 1.000000e+04 scale 1.000000e+00 offset [%p, 0] : tensor<1x8x4x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @rope_shape(%x: tensor<1x8x4x64xf16>) {
  // expected-error @+1 {{'mlx.rope' op result shape [1, 8, 4, 32] does not match operand shape [1, 8, 4, 64]}}
  %0 = mlx.rope %x dims 32 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<1x8x4x64xf16> -> tensor<1x8x4x32xf16>
  func.return
}

// -----

func.func @rope_dtype(%x: tensor<1x8x4x64xf16>) {
  // expected-error @+1 {{'mlx.rope' op result element type f32 must equal the input's f16}}
  %0 = mlx.rope %x dims 64 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<1x8x4x64xf16> -> tensor<1x8x4x64xf32>
  func.return
}

// -----

func.func @solve_without_batch(%a: tensor<3x4x4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_solve' op b [2, 4] must be [..., n, k] with a's batch dims and n, a is [3, 4, 4]}}
  %0 = mlx.linalg_solve %a, %b : tensor<3x4x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @inv_shape(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_inv' op result shape [3, 4] does not match operand shape [4, 4]}}
  %0 = mlx.linalg_inv %a : tensor<4x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @cholesky_inv_dtype(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_cholesky_inv' op operands must share one element type, got f32, f16}}
  %0 = mlx.linalg_cholesky_inv %a : tensor<4x4xf32> -> tensor<4x4xf16>
  func.return
}

// -----

func.func @svd_reduced_u(%a: tensor<5x3xf32>) {
  // expected-error @+1 {{'mlx.linalg_svd' op u shape [3, 3] does not match the expected shape [5, 5]}}
  %0:3 = mlx.linalg_svd %a : tensor<5x3xf32> -> tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>
  func.return
}

// -----

func.func @eigvalsh_count(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_eigvalsh' op eigenvalues shape [3] does not match the expected shape [4]}}
  %0 = mlx.linalg_eigvalsh %a : tensor<4x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @lu_factor_pivots_shape(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_lu_factor' op pivots shape [4, 4] does not match the expected shape [4]}}
  %0:2 = mlx.linalg_lu_factor %a : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xi32>
  func.return
}

// -----

func.func @lu_factor_pivots_dtype(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'mlx.linalg_lu_factor' op pivots must have integer (not bool) element type, got f32}}
  %0:2 = mlx.linalg_lu_factor %a : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4xf32>
  func.return
}
