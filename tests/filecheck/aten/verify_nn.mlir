// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of convolution, pooling, normalization or
// attention and checks its message.

func.func @conv_rank(%x: tensor<3x8xf32>, %w: tensor<16x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op input and weight must have equal rank >= 3, got 2 and 2}}
  %0 = aten.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 : tensor<3x8xf32>, tensor<16x3xf32> -> tensor<16x8xf32>
  func.return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op input and weight must have equal rank >= 3, got 4 and 3}}
  %0 = aten.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 : tensor<1x3x8x8xf32>, tensor<16x3x3xf32> -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op stride must have 1 or 2 entries, got 3}}
  %0 = aten.convolution %x, %w stride [1, 1, 1] padding [0] dilation [1] groups 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @conv_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op dilation must have 1 or 2 entries, got 0}}
  %0 = aten.convolution %x, %w stride [1] padding [0] dilation [] groups 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @conv_output_padding(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x2x2xf32>) {
  // expected-error @+1 {{'aten.convolution' op output_padding must have 1 or 2 entries, got 3}}
  %0 = aten.convolution %x, %w stride [2] padding [0] dilation [1] output_padding [0, 0, 0] transposed groups 1 : tensor<1x16x8x8xf32>, tensor<16x8x2x2xf32> -> tensor<1x8x16x16xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op groups must be >= 1, got 0}}
  %0 = aten.convolution %x, %w stride [1] padding [0] dilation [1] groups 0 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8xf32>, %w: tensor<16x3x3xf32>) {
  // expected-error @+1 {{'aten.convolution' op input channels 3 do not match weight channels 6 (groups=2)}}
  %0 = aten.convolution %x, %w stride [1] padding [0] dilation [1] groups 2 : tensor<1x3x8xf32>, tensor<16x3x3xf32> -> tensor<1x16x6xf32>
  func.return
}

// -----

func.func @conv_transposed_channels(%x: tensor<1x8x8x8xf32>, %w: tensor<16x?x2x2xf32>) {
  // expected-error @+1 {{'aten.convolution' op input channels 8 do not match weight channels 16 (groups=1)}}
  %0 = aten.convolution %x, %w stride [2] padding [0] dilation [1] transposed groups 1 : tensor<1x8x8x8xf32>, tensor<16x?x2x2xf32> -> tensor<1x?x16x16xf32>
  func.return
}

// -----

func.func @conv_result_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'aten.convolution' op result must have the input's rank}}
  %0 = aten.convolution %x, %w bias %b : tensor<16xf32> stride [1] padding [0] dilation [1] groups 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<16x6x6xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'aten.max_pool2d' op input must be [C, *spatial] or [N, C, *spatial] with 2 spatial dims, got rank 2}}
  %0 = aten.max_pool2d %x kernel [2] stride [2] padding [0] dilation [1] : tensor<8x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @pool_kernel(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.max_pool2d' op kernel_size must have 1 or 2 entries, got 3}}
  %0 = aten.max_pool2d %x kernel [2, 2, 2] stride [2] padding [0] dilation [1] : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @pool3d_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.max_pool3d' op input must be [C, *spatial] or [N, C, *spatial] with 3 spatial dims, got rank 3}}
  %0 = aten.max_pool3d %x kernel [2] stride [2] padding [0] dilation [1] : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @avg_pool3d_padding(%x: tensor<3x8x8x8xf32>) {
  // expected-error @+1 {{'aten.avg_pool3d' op padding must have 1 or 3 entries, got 2}}
  %0 = aten.avg_pool3d %x kernel [2] stride [2] padding [0, 0] : tensor<3x8x8x8xf32> -> tensor<3x4x4x4xf32>
  func.return
}

// -----

func.func @pool_dilation(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.max_pool2d' op dilation must have 1 or 2 entries, got 3}}
  %0 = aten.max_pool2d %x kernel [2] stride [2] padding [0] dilation [1, 1, 1] : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @pool_result_rank(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'aten.max_pool2d' op result must have the input's rank}}
  %0 = aten.max_pool2d %x kernel [2] stride [2] padding [0] dilation [1] ceil_mode : tensor<1x3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @avg_pool_rank(%x: tensor<1x1x3x8x8xf32>) {
  // expected-error @+1 {{'aten.avg_pool2d' op input must be [C, *spatial] or [N, C, *spatial] with 2 spatial dims, got rank 5}}
  %0 = aten.avg_pool2d %x kernel [2] stride [2] padding [0] : tensor<1x1x3x8x8xf32> -> tensor<1x1x3x4x4xf32>
  func.return
}

// -----

func.func @avg_pool_padding(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.avg_pool2d' op padding must have 1 or 2 entries, got 0}}
  %0 = aten.avg_pool2d %x kernel [2] stride [] padding [] count_include_pad : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @avg_pool_stride(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.avg_pool2d' op stride must have 1 or 2 entries, got 3}}
  %0 = aten.avg_pool2d %x kernel [2] stride [2, 2, 2] padding [0] divisor_override 4 : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @avg_pool_result_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'aten.avg_pool2d' op result must have the input's rank}}
  %0 = aten.avg_pool2d %x kernel [2] stride [2] padding [0] : tensor<3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @layer_norm_empty(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op normalized_shape [] must be non-empty and no longer than the input rank}}
  %0 = aten.layer_norm %x normalized_shape [] eps 1.000000e-05 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_long(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op normalized_shape [1, 2, 4] must be non-empty and no longer than the input rank}}
  %0 = aten.layer_norm %x normalized_shape [1, 2, 4] eps 1.000000e-05 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_trailing(%x: tensor<2x?x3xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op input trailing dims [3] do not match normalized_shape [4]}}
  %0 = aten.layer_norm %x normalized_shape [4] eps 1.000000e-05 : tensor<2x?x3xf32> -> tensor<2x?x3xf32>
  func.return
}

// -----

func.func @layer_norm_weight(%x: tensor<2x4xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op weight shape [3] does not match the expected shape [4]}}
  %0 = aten.layer_norm %x weight %w : tensor<3xf32> normalized_shape [4] eps 1.000000e-05 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x4xf32>, %w: tensor<4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op bias shape [1, 4] does not match the expected shape [4]}}
  %0 = aten.layer_norm %x weight %w : tensor<4xf32> bias %b : tensor<1x4xf32> normalized_shape [4] eps 1.000000e-05 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_eps(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op eps must be non-negative, got -1e-05}}
  %0 = aten.layer_norm %x normalized_shape [4] eps -1.000000e-05 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_shape(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.layer_norm' op result shape [4, 2] does not match operand shape [2, 4]}}
  %0 = aten.layer_norm %x normalized_shape [4] eps 1.000000e-05 : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return
}

// -----

func.func @rms_norm_empty(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.rms_norm' op normalized_shape [] must be non-empty and no longer than the input rank}}
  %0 = aten.rms_norm %x normalized_shape [] : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @rms_norm_trailing(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.rms_norm' op input trailing dims [2, 4] do not match normalized_shape [2, 2]}}
  %0 = aten.rms_norm %x normalized_shape [2, 2] : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @rms_norm_weight(%x: tensor<2x4xf32>, %w: tensor<2xf32>) {
  // expected-error @+1 {{'aten.rms_norm' op weight shape [2] does not match the expected shape [4]}}
  %0 = aten.rms_norm %x weight %w : tensor<2xf32> normalized_shape [4] : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @rms_norm_eps(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.rms_norm' op eps must be non-negative, got -0.5}}
  %0 = aten.rms_norm %x normalized_shape [4] eps -5.000000e-01 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @rms_norm_shape(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.rms_norm' op result shape [2, 3] does not match operand shape [2, 4]}}
  %0 = aten.rms_norm %x normalized_shape [4] eps 1.000000e-06 : tensor<2x4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @batch_norm_rank(%x: tensor<16xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op input must be [N, C, ...], got rank 1}}
  %0 = aten.batch_norm %x stats %m, %m eps 1.000000e-05 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  func.return
}

// -----

func.func @batch_norm_weight(%x: tensor<2x16x4x4xf32>, %m: tensor<16xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op weight shape [8] does not match the expected shape [16]}}
  %0 = aten.batch_norm %x weight %w : tensor<8xf32> stats %m, %m eps 1.000000e-05 : tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_bias(%x: tensor<2x16x4x4xf32>, %m: tensor<16xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op bias shape [1] does not match the expected shape [16]}}
  %0 = aten.batch_norm %x bias %b : tensor<1xf32> stats %m, %m eps 1.000000e-05 : tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_mean(%x: tensor<2x16x4x4xf32>, %m: tensor<8xf32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op running_mean shape [8] does not match the expected shape [16]}}
  %0 = aten.batch_norm %x stats %m, %v eps 1.000000e-05 : tensor<2x16x4x4xf32>, tensor<8xf32>, tensor<16xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_var(%x: tensor<?x?x4xf32>, %m: tensor<16xf32>, %v: tensor<16x1xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op running_var shape [16, 1] does not match the expected shape [?]}}
  %0 = aten.batch_norm %x stats %m, %v eps 1.000000e-05 : tensor<?x?x4xf32>, tensor<16xf32>, tensor<16x1xf32> -> tensor<?x?x4xf32>
  func.return
}

// -----

func.func @batch_norm_eps(%x: tensor<2x16x4x4xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op eps must be non-negative, got -1.0}}
  %0 = aten.batch_norm %x stats %m, %m eps -1.000000e+00 : tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_shape(%x: tensor<2x16x4x4xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'aten.batch_norm' op result shape [2, 16, 4] does not match operand shape [2, 16, 4, 4]}}
  %0 = aten.batch_norm %x stats %m, %m eps 1.000000e-05 : tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16x4xf32>
  func.return
}

// -----

func.func @group_norm_rank(%x: tensor<16xf32>) {
  // expected-error @+1 {{'aten.group_norm' op input must be [N, C, ...], got rank 1}}
  %0 = aten.group_norm %x groups 4 eps 1.000000e-05 : tensor<16xf32> -> tensor<16xf32>
  func.return
}

// -----

func.func @group_norm_divide(%x: tensor<2x16x4x4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op num_groups 3 must be positive and divide the 16 channels}}
  %0 = aten.group_norm %x groups 3 eps 1.000000e-05 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @group_norm_zero(%x: tensor<2x?x4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op num_groups 0 must be positive and divide the ? channels}}
  %0 = aten.group_norm %x groups 0 eps 1.000000e-05 : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  func.return
}

// -----

func.func @group_norm_weight(%x: tensor<2x16x4x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op weight shape [4] does not match the expected shape [16]}}
  %0 = aten.group_norm %x weight %w : tensor<4xf32> groups 4 eps 1.000000e-05 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @group_norm_bias(%x: tensor<2x16x4x4xf32>, %w: tensor<16xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op bias shape [4] does not match the expected shape [16]}}
  %0 = aten.group_norm %x weight %w : tensor<16xf32> bias %b : tensor<4xf32> groups 4 eps 1.000000e-05 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @group_norm_eps(%x: tensor<2x16x4x4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op eps must be non-negative, got -0.001}}
  %0 = aten.group_norm %x groups 4 eps -1.000000e-03 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  func.return
}

// -----

func.func @group_norm_shape(%x: tensor<2x16x4x4xf32>) {
  // expected-error @+1 {{'aten.group_norm' op result shape [2, 4, 16, 4] does not match operand shape [2, 16, 4, 4]}}
  %0 = aten.group_norm %x groups 4 eps 1.000000e-05 : tensor<2x16x4x4xf32> -> tensor<2x4x16x4xf32>
  func.return
}

// -----

func.func @sdpa_dropout(%q: tensor<1x8x5x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op dropout_p must be 0 for inference, got 0.1}}
  %0 = aten.scaled_dot_product_attention %q, %q, %q dropout_p 1.000000e-01 : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_causal_and_mask(%q: tensor<1x8x5x64xf16>, %m: tensor<5x5xi1>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op is_causal and an explicit mask are mutually exclusive}}
  %0 = aten.scaled_dot_product_attention %q, %q, %q mask %m : tensor<5x5xi1> is_causal : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_ranks(%q: tensor<1x8x5x64xf16>, %k: tensor<8x5x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op query, key and value must have one rank >= 2, got 4, 3, 4}}
  %0 = aten.scaled_dot_product_attention %q, %k, %q : tensor<1x8x5x64xf16>, tensor<8x5x64xf16>, tensor<1x8x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_vectors(%q: tensor<64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op query, key and value must have one rank >= 2, got 1, 1, 1}}
  %0 = aten.scaled_dot_product_attention %q, %q, %q : tensor<64xf16>, tensor<64xf16>, tensor<64xf16> -> tensor<64xf16>
  func.return
}

// -----

func.func @sdpa_head_dim(%q: tensor<1x8x5x64xf16>, %k: tensor<1x8x5x32xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op query head dim 64 does not match key head dim 32}}
  %0 = aten.scaled_dot_product_attention %q, %k, %k : tensor<1x8x5x64xf16>, tensor<1x8x5x32xf16>, tensor<1x8x5x32xf16> -> tensor<1x8x5x32xf16>
  func.return
}

// -----

func.func @sdpa_kv_length(%q: tensor<1x8x5x64xf16>, %v: tensor<1x8x6x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op key length 5 does not match value length 6}}
  %0 = aten.scaled_dot_product_attention %q, %q, %v : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x6x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_heads(%q: tensor<1x8x5x64xf16>, %k: tensor<1x2x5x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op 8 query heads and 2 key heads need enable_gqa}}
  %0 = aten.scaled_dot_product_attention %q, %k, %k : tensor<1x8x5x64xf16>, tensor<1x2x5x64xf16>, tensor<1x2x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_gqa_divisible(%q: tensor<1x8x5x64xf16>, %k: tensor<1x3x5x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op 8 query heads and 3 key heads need a divisible count}}
  %0 = aten.scaled_dot_product_attention %q, %k, %k enable_gqa : tensor<1x8x5x64xf16>, tensor<1x3x5x64xf16>, tensor<1x3x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_gqa_no_key_heads(%q: tensor<1x8x5x64xf16>, %k: tensor<1x0x5x64xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op 8 query heads and 0 key heads need a divisible count}}
  %0 = aten.scaled_dot_product_attention %q, %k, %k enable_gqa : tensor<1x8x5x64xf16>, tensor<1x0x5x64xf16>, tensor<1x0x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_mask_dtype(%q: tensor<1x8x5x64xf16>, %m: tensor<5x5xf32>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op mask must be i1 or the query's element type f16, got f32}}
  %0 = aten.scaled_dot_product_attention %q, %q, %q mask %m : tensor<5x5xf32> : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_mask_shape(%q: tensor<1x8x5x64xf16>, %m: tensor<1x1x5x6xi1>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op operand shapes [1, 1, 5, 6], [1, 8, 5, 5] are not broadcastable}}
  %0 = aten.scaled_dot_product_attention %q, %q, %q mask %m : tensor<1x1x5x6xi1> : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16> -> tensor<1x8x5x64xf16>
  func.return
}

// -----

func.func @sdpa_result(%q: tensor<1x8x5x64xf16>, %v: tensor<1x8x5x32xf16>) {
  // expected-error @+1 {{'aten.scaled_dot_product_attention' op result shape [1, 8, 5, 64] does not match the expected shape [1, 8, 5, 32]}}
  %0 = aten.scaled_dot_product_attention %q, %q, %v scale 1.250000e-01 : tensor<1x8x5x64xf16>, tensor<1x8x5x64xf16>, tensor<1x8x5x32xf16> -> tensor<1x8x5x64xf16>
  func.return
}
