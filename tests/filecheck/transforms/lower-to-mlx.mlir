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

// Phi-3's fused q/k/v product cut by three slices, each reshaped to heads and
// transposed, and a rotary pass-through of no features (cat(x, x[..., 4:])):
// slices-to-split makes the cut one split, split-heads-once moves the heads once,
// fold-empty-concatenate drops the empty pass-through.
// CHECK-LABEL: func.func @phi3_qkv(%x: tensor<1x?x8xf32>, %w: tensor<16x8xf32>) -> (tensor<1x2x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = mlx.dim %x axis 1 : tensor<1x?x8xf32>
// CHECK-NEXT:    %[[WT:.*]] = mlx.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[Y:.*]] = mlx.matmul %x, %[[WT]] : tensor<1x?x8xf32>, tensor<8x16xf32> -> tensor<1x?x16xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %[[Y]] [1, %[[S]], 4, 4] : tensor<1x?x16xf32> -> tensor<1x?x4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<1x?x4x4xf32> -> tensor<1x4x?x4xf32>
// CHECK-NEXT:    %[[Q:[[:alnum:]_]+]], %[[K:[[:alnum:]_]+]], %[[V:[[:alnum:]_]+]] = mlx.split %[[T]] at [2, 3] axis 1 : tensor<1x4x?x4xf32> -> tensor<1x2x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>
// CHECK-NEXT:    func.return %[[Q]], %[[K]], %[[V]] : tensor<1x2x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>
// CHECK-NEXT:  }
func.func @phi3_qkv(%x: tensor<1x?x8xf32>, %w: tensor<16x8xf32>) -> (tensor<1x2x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>) attributes {mlxir.symbol_ranges = {s27 = array<i64: 2, 64>}, mlxir.input_dims = [["", "s27", ""], ["", ""]]} {
  %sym_size_int = aten.sym_size %x dim 1 : tensor<1x?x8xf32>
  %linear = aten.linear %x, %w : tensor<1x?x8xf32>, tensor<16x8xf32> -> tensor<1x?x16xf32>
  %slice = aten.slice %linear dim 2 [0, 8, 1] : tensor<1x?x16xf32> -> tensor<1x?x8xf32>
  %view = aten.view %slice [1, %sym_size_int, 2, 4] : tensor<1x?x8xf32> -> tensor<1x?x2x4xf32>
  %permute = aten.permute %view [0, 2, 1, 3] : tensor<1x?x2x4xf32> -> tensor<1x2x?x4xf32>
  %slice_1 = aten.slice %linear dim 2 [8, 12, 1] : tensor<1x?x16xf32> -> tensor<1x?x4xf32>
  %view_1 = aten.view %slice_1 [1, %sym_size_int, 1, 4] : tensor<1x?x4xf32> -> tensor<1x?x1x4xf32>
  %permute_1 = aten.permute %view_1 [0, 2, 1, 3] : tensor<1x?x1x4xf32> -> tensor<1x1x?x4xf32>
  %slice_2 = aten.slice %linear dim 2 [12, 16, 1] : tensor<1x?x16xf32> -> tensor<1x?x4xf32>
  %view_2 = aten.view %slice_2 [1, %sym_size_int, 1, 4] : tensor<1x?x4xf32> -> tensor<1x?x1x4xf32>
  %permute_2 = aten.permute %view_2 [0, 2, 1, 3] : tensor<1x?x1x4xf32> -> tensor<1x1x?x4xf32>
  %slice_3 = aten.slice %permute dim 3 [4, 9223372036854775807, 1] : tensor<1x2x?x4xf32> -> tensor<1x2x?x0xf32>
  %cat = aten.cat %permute, %slice_3 dim -1 : tensor<1x2x?x4xf32>, tensor<1x2x?x0xf32> -> tensor<1x2x?x4xf32>
  func.return %cat, %permute_1, %permute_2 : tensor<1x2x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>
}

// Qwen3's per-head norm between the reshape and the transpose: transpose-before-norm
// puts the transpose first.
// CHECK-LABEL: func.func @qwen3_head_norm(%y: tensor<1x?x8xf32>, %w: tensor<4xf32>) -> tensor<1x2x?x4xf32>
// CHECK-NEXT:    %[[S:.*]] = mlx.dim %y axis 1 : tensor<1x?x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %y [1, %[[S]], 2, 4] : tensor<1x?x8xf32> -> tensor<1x?x2x4xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<1x?x2x4xf32> -> tensor<1x2x?x4xf32>
// CHECK-NEXT:    %[[N:.*]] = mlx.rms_norm %[[T]] weight %w : tensor<4xf32> eps {{.*}} : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
// CHECK-NEXT:    func.return %[[N]] : tensor<1x2x?x4xf32>
// CHECK-NEXT:  }
func.func @qwen3_head_norm(%y: tensor<1x?x8xf32>, %w: tensor<4xf32>) -> tensor<1x2x?x4xf32> attributes {mlxir.symbol_ranges = {s94 = array<i64: 2, 64>}, mlxir.input_dims = [["", "s94", ""], [""]]} {
  %sym_size_int = aten.sym_size %y dim 1 : tensor<1x?x8xf32>
  %view = aten.view %y [1, %sym_size_int, 2, 4] : tensor<1x?x8xf32> -> tensor<1x?x2x4xf32>
  %rms_norm = aten.rms_norm %view weight %w : tensor<4xf32> normalized_shape [4] eps 1.000000e-06 : tensor<1x?x2x4xf32> -> tensor<1x?x2x4xf32>
  %permute = aten.permute %rms_norm [0, 2, 1, 3] : tensor<1x?x2x4xf32> -> tensor<1x2x?x4xf32>
  func.return %permute : tensor<1x2x?x4xf32>
}

// torch's tanh GELU: lowered as torch computes it, nine ops, then
// tanh-gelu-as-sigmoid makes it six.
// CHECK-LABEL: func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NOT:     mlx.tanh
// CHECK:         %[[SQ:.*]] = mlx.square %x : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.constant dense<0.0713548139> : tensor<f32>
// CHECK-NEXT:    %[[Q:.*]] = mlx.multiply %[[SQ]], %[[B]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[A:.*]] = mlx.constant dense<1.59576917> : tensor<f32>
// CHECK-NEXT:    %[[SL:.*]] = mlx.add %[[Q]], %[[A]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Z:.*]] = mlx.multiply %x, %[[SL]] : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[G:.*]] = mlx.sigmoid %[[Z]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.multiply %x, %[[G]] : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %gelu = aten.gelu %x approximate "tanh" : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %gelu : tensor<2x8xf32>
}
