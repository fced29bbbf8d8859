// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of convolution, pooling, the normalizations and attention, with
// optional operands and properties both present and absent.

// CHECK-LABEL: func.func @convolution(%img: tensor<1x3x32x32xf32>, %k: tensor<16x3x3x3xf32>, %kb: tensor<16xf32>, %seq: tensor<?x64x?xf32>, %dw: tensor<64x1x4xf32>, %up: tensor<1x16x8x8xf32>, %kt: tensor<16x8x2x2xf32>) -> tensor<1x16x32x32xf32> {
// CHECK-NEXT:    %conv = aten.convolution %img, %k bias %kb : tensor<16xf32> stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x32x32xf32>
// CHECK-NEXT:    %strided = aten.convolution %img, %k stride [2] padding [0] dilation [1] groups 1 : tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x15x15xf32>
// CHECK-NEXT:    %depthwise = aten.convolution %seq, %dw stride [1] padding [3] dilation [1] groups 64 : tensor<?x64x?xf32>, tensor<64x1x4xf32> -> tensor<?x64x?xf32>
// CHECK-NEXT:    %transposed = aten.convolution %up, %kt stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [1, 1] transposed groups 1 : tensor<1x16x8x8xf32>, tensor<16x8x2x2xf32> -> tensor<1x8x17x17xf32>
// CHECK-NEXT:    %transposed_plain = aten.convolution %up, %kt stride [2, 2] padding [0, 0] dilation [1, 1] transposed groups 1 : tensor<1x16x8x8xf32>, tensor<16x8x2x2xf32> -> tensor<1x8x16x16xf32>
// CHECK-NEXT:    func.return %conv : tensor<1x16x32x32xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @convolution(%img: tensor<1x3x32x32xf32>, %k: tensor<16x3x3x3xf32>, %kb: tensor<16xf32>, %seq: tensor<?x64x?xf32>, %dw: tensor<64x1x4xf32>, %up: tensor<1x16x8x8xf32>, %kt: tensor<16x8x2x2xf32>) -> tensor<1x16x32x32xf32> {
// CANON:         func.return %conv : tensor<1x16x32x32xf32>
func.func @convolution(%img: tensor<1x3x32x32xf32>, %k: tensor<16x3x3x3xf32>, %kb: tensor<16xf32>, %seq: tensor<?x64x?xf32>, %dw: tensor<64x1x4xf32>, %up: tensor<1x16x8x8xf32>, %kt: tensor<16x8x2x2xf32>) -> tensor<1x16x32x32xf32> {
  %conv = aten.convolution %img, %k bias %kb : tensor<16xf32> stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x32x32xf32>
  %strided = aten.convolution %img, %k stride [2] padding [0] dilation [1] groups 1 : tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x15x15xf32>
  %depthwise = aten.convolution %seq, %dw stride [1] padding [3] dilation [1] groups 64 : tensor<?x64x?xf32>, tensor<64x1x4xf32> -> tensor<?x64x?xf32>
  %transposed = aten.convolution %up, %kt stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [1, 1] transposed groups 1 : tensor<1x16x8x8xf32>, tensor<16x8x2x2xf32> -> tensor<1x8x17x17xf32>
  %transposed_plain = aten.convolution %up, %kt stride [2, 2] padding [0, 0] dilation [1, 1] transposed groups 1 : tensor<1x16x8x8xf32>, tensor<16x8x2x2xf32> -> tensor<1x8x16x16xf32>
  func.return %conv : tensor<1x16x32x32xf32>
}

// CHECK-LABEL: func.func @pooling(%f: tensor<1x16x32x32xf32>, %c: tensor<16x?x?xf32>, %v: tensor<2x4x8x8x3xf32>) -> tensor<1x16x16x16xf32> {
// CHECK-NEXT:    %max = aten.max_pool2d %f kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x16x32x32xf32> -> tensor<1x16x16x16xf32>
// CHECK-NEXT:    %max_ceil = aten.max_pool2d %c kernel [3] stride [] padding [1] dilation [2] ceil_mode : tensor<16x?x?xf32> -> tensor<16x?x?xf32>
// CHECK-NEXT:    %avg = aten.avg_pool2d %f kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x16x32x32xf32> -> tensor<1x16x16x16xf32>
// CHECK-NEXT:    %avg_all = aten.avg_pool2d %c kernel [3, 3] stride [1, 1] padding [1, 1] ceil_mode count_include_pad divisor_override 9 : tensor<16x?x?xf32> -> tensor<16x?x?xf32>
// CHECK-NEXT:    %avg_div = aten.avg_pool2d %f kernel [4] stride [4] padding [0] divisor_override 8 : tensor<1x16x32x32xf32> -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    %max3d = aten.max_pool3d %v kernel [2, 2, 1] stride [2, 2, 1] padding [0, 0, 0] dilation [1] ceil_mode : tensor<2x4x8x8x3xf32> -> tensor<2x4x4x4x3xf32>
// CHECK-NEXT:    %avg3d = aten.avg_pool3d %v kernel [3] stride [1] padding [1] count_include_pad : tensor<2x4x8x8x3xf32> -> tensor<2x4x8x8x3xf32>
// CHECK-NEXT:    func.return %max : tensor<1x16x16x16xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @pooling(%f: tensor<1x16x32x32xf32>, %c: tensor<16x?x?xf32>, %v: tensor<2x4x8x8x3xf32>) -> tensor<1x16x16x16xf32> {
// CANON:         func.return %max : tensor<1x16x16x16xf32>
func.func @pooling(%f: tensor<1x16x32x32xf32>, %c: tensor<16x?x?xf32>, %v: tensor<2x4x8x8x3xf32>) -> tensor<1x16x16x16xf32> {
  %max = aten.max_pool2d %f kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x16x32x32xf32> -> tensor<1x16x16x16xf32>
  %max_ceil = aten.max_pool2d %c kernel [3] stride [] padding [1] dilation [2] ceil_mode : tensor<16x?x?xf32> -> tensor<16x?x?xf32>
  %avg = aten.avg_pool2d %f kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x16x32x32xf32> -> tensor<1x16x16x16xf32>
  %avg_all = aten.avg_pool2d %c kernel [3, 3] stride [1, 1] padding [1, 1] ceil_mode count_include_pad divisor_override 9 : tensor<16x?x?xf32> -> tensor<16x?x?xf32>
  %avg_div = aten.avg_pool2d %f kernel [4] stride [4] padding [0] divisor_override 8 : tensor<1x16x32x32xf32> -> tensor<1x16x8x8xf32>
  %max3d = aten.max_pool3d %v kernel [2, 2, 1] stride [2, 2, 1] padding [0, 0, 0] dilation [1] ceil_mode : tensor<2x4x8x8x3xf32> -> tensor<2x4x4x4x3xf32>
  %avg3d = aten.avg_pool3d %v kernel [3] stride [1] padding [1] count_include_pad : tensor<2x4x8x8x3xf32> -> tensor<2x4x8x8x3xf32>
  func.return %max : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @normalization(%x: tensor<2x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %img: tensor<?x16x8x8xf32>, %c: tensor<16xf32>) -> tensor<2x?x64xf32> {
// CHECK-NEXT:    %layer_norm = aten.layer_norm %x weight %g : tensor<64xf32> bias %b : tensor<64xf32> normalized_shape [64] eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %ln_plain = aten.layer_norm %x normalized_shape [64] eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %ln_bias = aten.layer_norm %x bias %b : tensor<64xf32> normalized_shape [64] eps 1.000000e-12 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %ln_2d = aten.layer_norm %img normalized_shape [8, 8] eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    %rms_norm = aten.rms_norm %x weight %g : tensor<64xf32> normalized_shape [64] eps 1.000000e-06 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %rms_plain = aten.rms_norm %x normalized_shape [64] : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %batch_norm = aten.batch_norm %img weight %c : tensor<16xf32> bias %c : tensor<16xf32> stats %c, %c eps 1.000000e-05 : tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    %bn_plain = aten.batch_norm %img stats %c, %c eps 1.000000e-03 : tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    %group_norm = aten.group_norm %img weight %c : tensor<16xf32> bias %c : tensor<16xf32> groups 4 eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    %gn_plain = aten.group_norm %img groups 16 eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    %gn_weight = aten.group_norm %img weight %c : tensor<16xf32> groups 2 eps 0.000000e+00 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
// CHECK-NEXT:    func.return %layer_norm : tensor<2x?x64xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @normalization(%x: tensor<2x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %img: tensor<?x16x8x8xf32>, %c: tensor<16xf32>) -> tensor<2x?x64xf32> {
// CANON:         func.return %layer_norm : tensor<2x?x64xf32>
func.func @normalization(%x: tensor<2x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %img: tensor<?x16x8x8xf32>, %c: tensor<16xf32>) -> tensor<2x?x64xf32> {
  %layer_norm = aten.layer_norm %x weight %g : tensor<64xf32> bias %b : tensor<64xf32> normalized_shape [64] eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %ln_plain = aten.layer_norm %x normalized_shape [64] eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %ln_bias = aten.layer_norm %x bias %b : tensor<64xf32> normalized_shape [64] eps 1.000000e-12 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %ln_2d = aten.layer_norm %img normalized_shape [8, 8] eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
  %rms_norm = aten.rms_norm %x weight %g : tensor<64xf32> normalized_shape [64] eps 1.000000e-06 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %rms_plain = aten.rms_norm %x normalized_shape [64] : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %batch_norm = aten.batch_norm %img weight %c : tensor<16xf32> bias %c : tensor<16xf32> stats %c, %c eps 1.000000e-05 : tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x16x8x8xf32>
  %bn_plain = aten.batch_norm %img stats %c, %c eps 1.000000e-03 : tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x16x8x8xf32>
  %group_norm = aten.group_norm %img weight %c : tensor<16xf32> bias %c : tensor<16xf32> groups 4 eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
  %gn_plain = aten.group_norm %img groups 16 eps 1.000000e-05 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
  %gn_weight = aten.group_norm %img weight %c : tensor<16xf32> groups 2 eps 0.000000e+00 : tensor<?x16x8x8xf32> -> tensor<?x16x8x8xf32>
  func.return %layer_norm : tensor<2x?x64xf32>
}

// CHECK-LABEL: func.func @attention(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %kv: tensor<1x2x?x64xf16>, %mask: tensor<1x1x?x?xi1>, %bias: tensor<?x?xf16>) -> tensor<1x8x?x64xf16> {
// CHECK-NEXT:    %sdpa = aten.scaled_dot_product_attention %q, %k, %v : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT:    %causal = aten.scaled_dot_product_attention %q, %k, %v dropout_p 0.000000e+00 is_causal scale 1.250000e-01 : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT:    %masked = aten.scaled_dot_product_attention %q, %k, %v mask %mask : tensor<1x1x?x?xi1> : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT:    %additive = aten.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<?x?xf16> scale 1.250000e-01 : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT:    %gqa = aten.scaled_dot_product_attention %q, %kv, %kv is_causal enable_gqa : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT:    func.return %sdpa : tensor<1x8x?x64xf16>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @attention(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %kv: tensor<1x2x?x64xf16>, %mask: tensor<1x1x?x?xi1>, %bias: tensor<?x?xf16>) -> tensor<1x8x?x64xf16> {
// CANON:         func.return %sdpa : tensor<1x8x?x64xf16>
func.func @attention(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %kv: tensor<1x2x?x64xf16>, %mask: tensor<1x1x?x?xi1>, %bias: tensor<?x?xf16>) -> tensor<1x8x?x64xf16> {
  %sdpa = aten.scaled_dot_product_attention %q, %k, %v : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
  %causal = aten.scaled_dot_product_attention %q, %k, %v dropout_p 0.000000e+00 is_causal scale 1.250000e-01 : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
  %masked = aten.scaled_dot_product_attention %q, %k, %v mask %mask : tensor<1x1x?x?xi1> : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
  %additive = aten.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<?x?xf16> scale 1.250000e-01 : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
  %gqa = aten.scaled_dot_product_attention %q, %kv, %kv is_causal enable_gqa : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  func.return %sdpa : tensor<1x8x?x64xf16>
}
