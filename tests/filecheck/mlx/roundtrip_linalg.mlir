// Round trip of the mlx linear-algebra, convolution and fast ops (attention, norms, rope).
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON
// RUN: mlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// conv_bias_activation's bias is an optional third operand, after input and weight.
// GENERIC: %fused = "mlx.conv_bias_activation"(%img, %dw, %b) <{stride = array<i64: 1, 1>, padding_lo = array<i64: 1, 1>, padding_hi = array<i64: 1, 1>, kernel_dilation = array<i64: 1, 1>, input_dilation = array<i64: 1, 1>, groups = 6 : i64, activation = "relu6"}>
// GENERIC: %plain = "mlx.conv_bias_activation"(%img, %dw) <{

// Optional operands: the segment sizes record which of weight and bias is present.
// GENERIC: %ln = "mlx.layer_norm"(%x, %w, %b) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC: %lnw = "mlx.layer_norm"(%x, %w) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 0>}>
// GENERIC: %lnb = "mlx.layer_norm"(%x, %b) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}>
// GENERIC: %ln0 = "mlx.layer_norm"(%x) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 0>}>

// CANON-LABEL: func.func @attention(
// CANON-NEXT:    %causal = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 mask_mode "causal"
// CANON-NEXT:    func.return %causal

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %x: tensor<?x128xf32>, %w: tensor<128x64xf32>, %a: tensor<2x1x?x32xf16>, %b: tensor<4x32x16xf16>) -> tensor<?x64xf32> {
// CHECK-NEXT: %y = mlx.matmul %x, %w : tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %z = mlx.matmul %a, %b : tensor<2x1x?x32xf16>, tensor<4x32x16xf16> -> tensor<2x4x?x16xf16>
// CHECK-NEXT: func.return %y : tensor<?x64xf32>
// CHECK-NEXT: }
func.func @matmul(%x: tensor<?x128xf32>, %w: tensor<128x64xf32>, %a: tensor<2x1x?x32xf16>, %b: tensor<4x32x16xf16>) -> tensor<?x64xf32> {
  %y = mlx.matmul %x, %w : tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  %z = mlx.matmul %a, %b : tensor<2x1x?x32xf16>, tensor<4x32x16xf16> -> tensor<2x4x?x16xf16>
  func.return %y : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @addmm(
// CHECK-SAME: %bias: tensor<64xf32>, %x: tensor<?x128xf32>, %w: tensor<128x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
// CHECK-NEXT: %plain = mlx.addmm %bias, %x, %w : tensor<64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %alpha = mlx.addmm %bias, %x, %w alpha 5.000000e-01 : tensor<64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %beta = mlx.addmm %c, %x, %w beta 2.000000e+00 : tensor<?x64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %both = mlx.addmm %c, %x, %w alpha 1.000000e+00 beta 0.000000e+00 : tensor<?x64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: func.return %both : tensor<?x64xf32>
// CHECK-NEXT: }
func.func @addmm(%bias: tensor<64xf32>, %x: tensor<?x128xf32>, %w: tensor<128x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %plain = mlx.addmm %bias, %x, %w : tensor<64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  %alpha = mlx.addmm %bias, %x, %w alpha 5.000000e-01 : tensor<64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  %beta = mlx.addmm %c, %x, %w beta 2.000000e+00 : tensor<?x64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  %both = mlx.addmm %c, %x, %w alpha 1.000000e+00 beta 0.000000e+00 : tensor<?x64xf32>, tensor<?x128xf32>, tensor<128x64xf32> -> tensor<?x64xf32>
  func.return %both : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @conv_general(
// CHECK-SAME: %img: tensor<?x28x28x6xf32>, %k: tensor<8x3x3x3xf32>, %seq: tensor<1x?x16xf16>, %k1: tensor<16x5x1xf16>) -> tensor<?x14x14x8xf32> {
// CHECK-NEXT: %c2d = mlx.conv_general %img, %k stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x14x14x8xf32>
// CHECK-NEXT: %dil = mlx.conv_general %img, %k stride [1, 2] padding [1, 0] [2, 1] kernel_dilation [2, 1] input_dilation [1, 2] groups 2 : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x27x27x8xf32>
// CHECK-NEXT: %flip = mlx.conv_general %img, %k stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 flip : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x26x26x8xf32>
// CHECK-NEXT: %c1d = mlx.conv_general %seq, %k1 stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 16 : tensor<1x?x16xf16>, tensor<16x5x1xf16> -> tensor<1x?x16xf16>
// CHECK-NEXT: func.return %c2d : tensor<?x14x14x8xf32>
// CHECK-NEXT: }
func.func @conv_general(%img: tensor<?x28x28x6xf32>, %k: tensor<8x3x3x3xf32>, %seq: tensor<1x?x16xf16>, %k1: tensor<16x5x1xf16>) -> tensor<?x14x14x8xf32> {
  %c2d = mlx.conv_general %img, %k stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x14x14x8xf32>
  %dil = mlx.conv_general %img, %k stride [1, 2] padding [1, 0] [2, 1] kernel_dilation [2, 1] input_dilation [1, 2] groups 2 : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x27x27x8xf32>
  %flip = mlx.conv_general %img, %k stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 flip : tensor<?x28x28x6xf32>, tensor<8x3x3x3xf32> -> tensor<?x26x26x8xf32>
  %c1d = mlx.conv_general %seq, %k1 stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 16 : tensor<1x?x16xf16>, tensor<16x5x1xf16> -> tensor<1x?x16xf16>
  func.return %c2d : tensor<?x14x14x8xf32>
}

// CHECK-LABEL: func.func @conv_bias_activation(
// CHECK-NEXT: %fused = mlx.conv_bias_activation %img, %dw bias %b : tensor<6xf32> stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "relu6" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x28x28x6xf32>
// CHECK-NEXT: %plain = mlx.conv_bias_activation %img, %dw stride [2, 2] padding [0, 0] [1, 1] kernel_dilation [2, 2] input_dilation [1, 1] groups 6 flip activation "silu" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x13x13x6xf32>
// CHECK-NEXT: %c1d = mlx.conv_bias_activation %seq, %k1 bias %b1 : tensor<16xf16> stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 16 activation "relu" : tensor<1x?x16xf16>, tensor<16x5x1xf16> -> tensor<1x?x16xf16>
// CHECK-NEXT: %none = mlx.conv_bias_activation %img, %dw bias %b : tensor<6xf32> stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "none" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x28x28x6xf32>
// CHECK-NEXT: func.return %fused, %plain, %c1d, %none
func.func @conv_bias_activation(%img: tensor<?x28x28x6xf32>, %dw: tensor<6x3x3x1xf32>, %b: tensor<6xf32>, %seq: tensor<1x?x16xf16>, %k1: tensor<16x5x1xf16>, %b1: tensor<16xf16>) -> (tensor<?x28x28x6xf32>, tensor<?x13x13x6xf32>, tensor<1x?x16xf16>, tensor<?x28x28x6xf32>) {
  %fused = mlx.conv_bias_activation %img, %dw bias %b : tensor<6xf32> stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "relu6" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x28x28x6xf32>
  %plain = mlx.conv_bias_activation %img, %dw stride [2, 2] padding [0, 0] [1, 1] kernel_dilation [2, 2] input_dilation [1, 1] groups 6 flip activation "silu" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x13x13x6xf32>
  %c1d = mlx.conv_bias_activation %seq, %k1 bias %b1 : tensor<16xf16> stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 16 activation "relu" : tensor<1x?x16xf16>, tensor<16x5x1xf16> -> tensor<1x?x16xf16>
  %none = mlx.conv_bias_activation %img, %dw bias %b : tensor<6xf32> stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 6 activation "none" : tensor<?x28x28x6xf32>, tensor<6x3x3x1xf32> -> tensor<?x28x28x6xf32>
  func.return %fused, %plain, %c1d, %none : tensor<?x28x28x6xf32>, tensor<?x13x13x6xf32>, tensor<1x?x16xf16>, tensor<?x28x28x6xf32>
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %q: tensor<1x32x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %bias: tensor<1x1x?x?xf16>, %keep: tensor<?x?xi1>) -> tensor<1x32x?x64xf16> {
// CHECK-NEXT: %plain = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %causal = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 mask_mode "causal" : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %additive = mlx.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<1x1x?x?xf16> scale 1.250000e-01 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %boolean = mlx.scaled_dot_product_attention %q, %k, %v mask %keep : tensor<?x?xi1> scale 1.000000e+00 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: func.return %causal : tensor<1x32x?x64xf16>
// CHECK-NEXT: }
func.func @attention(%q: tensor<1x32x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %bias: tensor<1x1x?x?xf16>, %keep: tensor<?x?xi1>) -> tensor<1x32x?x64xf16> {
  %plain = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
  %causal = mlx.scaled_dot_product_attention %q, %k, %v scale 1.250000e-01 mask_mode "causal" : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
  %additive = mlx.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<1x1x?x?xf16> scale 1.250000e-01 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
  %boolean = mlx.scaled_dot_product_attention %q, %k, %v mask %keep : tensor<?x?xi1> scale 1.000000e+00 : tensor<1x32x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x32x?x64xf16>
  func.return %causal : tensor<1x32x?x64xf16>
}

// CHECK-LABEL: func.func @norms(
// CHECK-SAME: %x: tensor<2x?x512xbf16>, %w: tensor<512xbf16>, %b: tensor<512xbf16>) -> tensor<2x?x512xbf16> {
// CHECK-NEXT: %rms = mlx.rms_norm %x weight %w : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: %rms0 = mlx.rms_norm %x eps 1.000000e-06 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: %ln = mlx.layer_norm %x weight %w : tensor<512xbf16> bias %b : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: %lnw = mlx.layer_norm %x weight %w : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: %lnb = mlx.layer_norm %x bias %b : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: %ln0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
// CHECK-NEXT: func.return %ln : tensor<2x?x512xbf16>
// CHECK-NEXT: }
func.func @norms(%x: tensor<2x?x512xbf16>, %w: tensor<512xbf16>, %b: tensor<512xbf16>) -> tensor<2x?x512xbf16> {
  %rms = mlx.rms_norm %x weight %w : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  %rms0 = mlx.rms_norm %x eps 1.000000e-06 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  %ln = mlx.layer_norm %x weight %w : tensor<512xbf16> bias %b : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  %lnw = mlx.layer_norm %x weight %w : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  %lnb = mlx.layer_norm %x bias %b : tensor<512xbf16> eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  %ln0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x?x512xbf16> -> tensor<2x?x512xbf16>
  func.return %ln : tensor<2x?x512xbf16>
}

// CHECK-LABEL: func.func @rope(
// CHECK-SAME: %q: tensor<1x32x?x64xf16>, %pos: index, %freqs: tensor<16xf32>, %rows: tensor<1xi64>) -> tensor<1x32x?x64xf16> {
// CHECK-NEXT: %r = mlx.rope %q dims 64 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %t = mlx.rope %q dims 32 traditional base 5.000000e+05 scale 2.500000e-01 offset [0] : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %f = mlx.rope %q dims 32 freqs %freqs : tensor<16xf32> scale 1.000000e+00 offset [%pos] rows %rows : tensor<1xi64> : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
// CHECK-NEXT: func.return %r : tensor<1x32x?x64xf16>
// CHECK-NEXT: }
func.func @rope(%q: tensor<1x32x?x64xf16>, %pos: index, %freqs: tensor<16xf32>, %rows: tensor<1xi64>) -> tensor<1x32x?x64xf16> {
  %r = mlx.rope %q dims 64 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
  %t = mlx.rope %q dims 32 traditional base 5.000000e+05 scale 2.500000e-01 offset [0] : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
  %f = mlx.rope %q dims 32 freqs %freqs : tensor<16xf32> scale 1.000000e+00 offset [%pos] rows %rows : tensor<1xi64> : tensor<1x32x?x64xf16> -> tensor<1x32x?x64xf16>
  func.return %r : tensor<1x32x?x64xf16>
}

// CHECK-LABEL: func.func @square_matrices(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>) -> (tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>) {
// CHECK-NEXT:    %inv = mlx.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    %det = mlx.linalg_det %a : tensor<?x4x4xf32> -> tensor<?xf32>
// CHECK-NEXT:    %sl, %sl_1 = mlx.linalg_slogdet %a : tensor<?x4x4xf32> -> tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    %x = mlx.linalg_solve %a, %b : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
// CHECK-NEXT:    %t = mlx.linalg_solve_triangular %a, %b upper : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
// CHECK-NEXT:    %ci = mlx.linalg_cholesky_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    func.return %inv, %det, %sl_1, %x : tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>
// CHECK-NEXT:  }
func.func @square_matrices(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>) -> (tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>) {
  %inv = mlx.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  %det = mlx.linalg_det %a : tensor<?x4x4xf32> -> tensor<?xf32>
  %sl:2 = mlx.linalg_slogdet %a : tensor<?x4x4xf32> -> tensor<?xf32>, tensor<?xf32>
  %x = mlx.linalg_solve %a, %b : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
  %t = mlx.linalg_solve_triangular %a, %b upper : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
  %ci = mlx.linalg_cholesky_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  func.return %inv, %det, %sl#1, %x : tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>
}

// CHECK-LABEL: func.func @factorizations(%a: tensor<?x4x4xf32>, %w: tensor<?x5x3xf32>) -> tensor<?x4x4xf32> {
// CHECK-NEXT:    %l = mlx.linalg_cholesky %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    %u = mlx.linalg_cholesky %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    %qr, %qr_1 = mlx.linalg_qr %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3x3xf32>
// CHECK-NEXT:    %lu, %lu_1 = mlx.linalg_lu_factor %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3xi32>
// CHECK-NEXT:    %svd, %svd_1, %svd_2 = mlx.linalg_svd %w : tensor<?x5x3xf32> -> tensor<?x5x5xf32>, tensor<?x3xf32>, tensor<?x3x3xf32>
// CHECK-NEXT:    %s = mlx.linalg_svdvals %w : tensor<?x5x3xf32> -> tensor<?x3xf32>
// CHECK-NEXT:    %eig, %eig_1 = mlx.linalg_eigh %a upper : tensor<?x4x4xf32> -> tensor<?x4xf32>, tensor<?x4x4xf32>
// CHECK-NEXT:    %e = mlx.linalg_eigvalsh %a : tensor<?x4x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %l : tensor<?x4x4xf32>
// CHECK-NEXT:  }
func.func @factorizations(%a: tensor<?x4x4xf32>, %w: tensor<?x5x3xf32>) -> tensor<?x4x4xf32> {
  %l = mlx.linalg_cholesky %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  %u = mlx.linalg_cholesky %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  %qr:2 = mlx.linalg_qr %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3x3xf32>
  %lu:2 = mlx.linalg_lu_factor %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3xi32>
  %svd:3 = mlx.linalg_svd %w : tensor<?x5x3xf32> -> tensor<?x5x5xf32>, tensor<?x3xf32>, tensor<?x3x3xf32>
  %s = mlx.linalg_svdvals %w : tensor<?x5x3xf32> -> tensor<?x3xf32>
  %eig:2 = mlx.linalg_eigh %a upper : tensor<?x4x4xf32> -> tensor<?x4xf32>, tensor<?x4x4xf32>
  %e = mlx.linalg_eigvalsh %a : tensor<?x4x4xf32> -> tensor<?x4xf32>
  func.return %l : tensor<?x4x4xf32>
}
