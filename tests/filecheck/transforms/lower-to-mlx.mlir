// lower-to-mlx: the default pipeline, convert-aten-to-mlx then canonicalize, optimize-mlx,
// cse and dce, as one pass.
// RUN: mlx-opt %s -p lower-to-mlx | filecheck %s

// HF's RMSNorm, written in aten ops with its casts, ends as one mlx.rms_norm in bf16
// (eps as the f32 constant the lowering makes of the f64 scalar).
// CHECK-LABEL: func.func @hf_rms_norm(%x: tensor<2x?x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x?x8xbf16> {
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xbf16> eps 9.9999999747524271e-07 : tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
// CHECK-NEXT:    func.return %y : tensor<2x?x8xbf16>
// CHECK-NEXT:  }
func.func @hf_rms_norm(%x: tensor<2x?x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x?x8xbf16> {
  %h = aten._to_copy %x : tensor<2x?x8xbf16> -> tensor<2x?x8xf32>
  %two = arith.constant 2.000000e+00 : f64
  %sq = aten.pow %h, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %var = aten.mean %sq dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = arith.constant 9.9999999999999995e-07 : f64
  %s = aten.add %var, %eps : tensor<2x?x1xf32>, f64 -> tensor<2x?x1xf32>
  %r = aten.rsqrt %s : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = aten.mul %h, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %back = aten._to_copy %n : tensor<2x?x8xf32> -> tensor<2x?x8xbf16>
  %y = aten.mul %w, %back : tensor<8xbf16>, tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
  func.return %y : tensor<2x?x8xbf16>
}

// The same linear twice is computed once (cse after the lowering).
// CHECK-LABEL: func.func @shared_linear(%x: tensor<4x64xf32>, %w: tensor<16x64xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:    %a = mlx.transpose %w [1, 0] : tensor<16x64xf32> -> tensor<64x16xf32>
// CHECK-NEXT:    %a_1 = mlx.matmul %x, %a : tensor<4x64xf32>, tensor<64x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %s = mlx.add %a_1, %a_1 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %s : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @shared_linear(%x: tensor<4x64xf32>, %w: tensor<16x64xf32>) -> tensor<4x16xf32> {
  %a = aten.linear %x, %w : tensor<4x64xf32>, tensor<16x64xf32> -> tensor<4x16xf32>
  %b = aten.linear %x, %w : tensor<4x64xf32>, tensor<16x64xf32> -> tensor<4x16xf32>
  %s = aten.add %a, %b : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %s : tensor<4x16xf32>
}

// An identity view, a transpose undone, an unused sqrt: nothing is left.
// CHECK-LABEL: func.func @identities_and_dead(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
// CHECK-NEXT:    func.return %x : tensor<6x4xf32>
// CHECK-NEXT:  }
func.func @identities_and_dead(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %v = aten.view %x [6, 4] : tensor<6x4xf32> -> tensor<6x4xf32>
  %t = aten.transpose %v dims 0, 1 : tensor<6x4xf32> -> tensor<4x6xf32>
  %u = aten.transpose %t dims 0, 1 : tensor<4x6xf32> -> tensor<6x4xf32>
  %dead = aten.sqrt %x : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return %u : tensor<6x4xf32>
}

// Kept: f32 -> f16 -> f32 rounds; both casts stay.
// CHECK-LABEL: func.func @lossy_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %h = mlx.astype %x : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    %f = mlx.astype %h : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    func.return %f : tensor<4xf32>
// CHECK-NEXT:  }
func.func @lossy_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = aten._to_copy %x : tensor<4xf32> -> tensor<4xf16>
  %f = aten._to_copy %h : tensor<4xf16> -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}
