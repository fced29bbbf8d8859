// transpose-before-norm: transpose(norm(x), perm) with perm keeping the last axis last
// -> norm(transpose(x, perm)), for rms_norm and layer_norm (each normalizes last-axis
// rows, wherever they sit). The norm must be the transpose's only input use.
// RUN: mlx-opt %s -p transpose-before-norm | filecheck %s

// Qwen3's per-head q norm between the head reshape and the transpose.
// CHECK-LABEL: func.func @qwen3_q_norm(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> tensor<?x4x?x16xf32> {
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %x [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %q = mlx.rms_norm %[[T]] weight %w : tensor<16xf32> eps 1.000000e-06 : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    func.return %q : tensor<?x4x?x16xf32>
// CHECK-NEXT:  }
func.func @qwen3_q_norm(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> tensor<?x4x?x16xf32> {
  %n = mlx.rms_norm %x weight %w : tensor<16xf32> eps 1.000000e-06 : tensor<?x?x4x16xf32> -> tensor<?x?x4x16xf32>
  %q = mlx.transpose %n [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  func.return %q : tensor<?x4x?x16xf32>
}

// A layer_norm with weight and bias, static bf16.
// CHECK-LABEL: func.func @layer_norm(%x: tensor<2x3x4x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x4x3x8xbf16> {
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %x [0, 2, 1, 3] : tensor<2x3x4x8xbf16> -> tensor<2x4x3x8xbf16>
// CHECK-NEXT:    %t = mlx.layer_norm %[[T]] weight %w : tensor<8xbf16> bias %b : tensor<8xbf16> eps 1.000000e-05 : tensor<2x4x3x8xbf16> -> tensor<2x4x3x8xbf16>
// CHECK-NEXT:    func.return %t : tensor<2x4x3x8xbf16>
func.func @layer_norm(%x: tensor<2x3x4x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x4x3x8xbf16> {
  %n = mlx.layer_norm %x weight %w : tensor<8xbf16> bias %b : tensor<8xbf16> eps 1.000000e-05 : tensor<2x3x4x8xbf16> -> tensor<2x3x4x8xbf16>
  %t = mlx.transpose %n [0, 2, 1, 3] : tensor<2x3x4x8xbf16> -> tensor<2x4x3x8xbf16>
  func.return %t : tensor<2x4x3x8xbf16>
}

// Kept: the transpose moves the normalized axis.
// CHECK-LABEL: func.func @moves_last_axis
// CHECK-NEXT:    %n = mlx.rms_norm %x
// CHECK-NEXT:    %t = mlx.transpose %n [0, 2, 1]
func.func @moves_last_axis(%x: tensor<2x3x8xf32>) -> tensor<2x8x3xf32> {
  %n = mlx.rms_norm %x eps 1.000000e-06 : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %t = mlx.transpose %n [0, 2, 1] : tensor<2x3x8xf32> -> tensor<2x8x3xf32>
  func.return %t : tensor<2x8x3xf32>
}

// Kept: the norm is also read untransposed (moving it would compute it twice).
// CHECK-LABEL: func.func @norm_read_twice
// CHECK-NEXT:    %n = mlx.rms_norm %x
// CHECK-NEXT:    %t = mlx.transpose %n [1, 0, 2]
func.func @norm_read_twice(%x: tensor<2x3x8xf32>) -> (tensor<3x2x8xf32>, tensor<2x3x8xf32>) {
  %n = mlx.rms_norm %x eps 1.000000e-06 : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %t = mlx.transpose %n [1, 0, 2] : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
  func.return %t, %n : tensor<3x2x8xf32>, tensor<2x3x8xf32>
}
