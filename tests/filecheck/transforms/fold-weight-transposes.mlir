// fold-weight-transposes: transpose(weight @w) -> a weight @w whose value in the IR is
// transposed at compile time, when every read of @w is transposed the same way (the
// linear lowering's w.T). A global without a value in the IR is left alone.
// RUN: mlx-opt %s -p fold-weight-transposes | filecheck %s

// Globals without a value are left as they are; those with one are transposed in place.
// CHECK: mlx.global @fc.weight "parameter" : tensor<16x8xf32>
// CHECK-NEXT: mlx.global @embed.weight "parameter" : tensor<16x8xf32>
// CHECK-NEXT: mlx.global @qk.weight "parameter" : tensor<2x3x4xf32>
// CHECK-NEXT: mlx.global @inline.weight "constant" : tensor<3x2xf32> = dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: mlx.global @batched.weight "parameter" : tensor<1x2x2xf32> = dense<{{\[\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]> : tensor<1x2x2xf32>
mlx.global @fc.weight "parameter" : tensor<16x8xf32>
mlx.global @embed.weight "parameter" : tensor<16x8xf32>
mlx.global @qk.weight "parameter" : tensor<2x3x4xf32>
mlx.global @inline.weight "constant" : tensor<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
mlx.global @batched.weight "parameter" : tensor<1x2x2xf32> = dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>

// Kept, for want of a value only: every read of @fc.weight is transposed by [1, 0].
// CHECK-LABEL: func.func @linear(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<16x8xf32>
// CHECK-NEXT:    %wt = mlx.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %w2 = mlx.weight @fc.weight : tensor<16x8xf32>
// CHECK-NEXT:    %wt2 = mlx.transpose %w2 [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %z = mlx.matmul %x, %wt2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @linear(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = mlx.weight @fc.weight : tensor<16x8xf32>
  %wt = mlx.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = mlx.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %w2 = mlx.weight @fc.weight : tensor<16x8xf32>
  %wt2 = mlx.transpose %w2 [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %z = mlx.matmul %x, %wt2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
}

// Kept: @embed.weight is also read untransposed (tied embedding and output head).
// CHECK-LABEL: func.func @read_untransposed(%x: tensor<4x8xf32>, %ids: tensor<4xi64>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %w = mlx.weight @embed.weight : tensor<16x8xf32>
// CHECK-NEXT:    %wt = mlx.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %logits = mlx.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %w2 = mlx.weight @embed.weight : tensor<16x8xf32>
// CHECK-NEXT:    %e = mlx.take %w2, %ids axis 0 : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %logits, %e : tensor<4x16xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @read_untransposed(%x: tensor<4x8xf32>, %ids: tensor<4xi64>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %w = mlx.weight @embed.weight : tensor<16x8xf32>
  %wt = mlx.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %logits = mlx.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %w2 = mlx.weight @embed.weight : tensor<16x8xf32>
  %e = mlx.take %w2, %ids axis 0 : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  func.return %logits, %e : tensor<4x16xf32>, tensor<4x8xf32>
}

// Kept: @qk.weight is read through two different permutations.
// CHECK-LABEL: func.func @two_permutations(%x: tensor<3x2x4xf32>) -> (tensor<3x2x4xf32>, tensor<4x3x2xf32>) {
// CHECK-NEXT:    %w = mlx.weight @qk.weight : tensor<2x3x4xf32>
// CHECK-NEXT:    %a = mlx.transpose %w [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    %b = mlx.transpose %w [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<3x2x4xf32>, tensor<4x3x2xf32>
// CHECK-NEXT:  }
func.func @two_permutations(%x: tensor<3x2x4xf32>) -> (tensor<3x2x4xf32>, tensor<4x3x2xf32>) {
  %w = mlx.weight @qk.weight : tensor<2x3x4xf32>
  %a = mlx.transpose %w [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = mlx.transpose %w [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  func.return %a, %b : tensor<3x2x4xf32>, tensor<4x3x2xf32>
}

// Folded: the global's value is transposed, and the read has the transposed type.
// CHECK-LABEL: func.func @inline_value() -> tensor<3x2xf32> {
// CHECK-NEXT:    %wt = mlx.weight @inline.weight : tensor<3x2xf32>
// CHECK-NEXT:    func.return %wt : tensor<3x2xf32>
// CHECK-NEXT:  }
func.func @inline_value() -> tensor<3x2xf32> {
  %w = mlx.weight @inline.weight : tensor<2x3xf32>
  %wt = mlx.transpose %w [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %wt : tensor<3x2xf32>
}

// Folded: two reads, each transposed by [0, 2, 1], share one transposed value.
// CHECK-LABEL: func.func @two_reads(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
// CHECK-NEXT:    %a = mlx.weight @batched.weight : tensor<1x2x2xf32>
// CHECK-NEXT:    %b = mlx.weight @batched.weight : tensor<1x2x2xf32>
// CHECK-NEXT:    %s = mlx.add %a, %b : tensor<1x2x2xf32>, tensor<1x2x2xf32> -> tensor<1x2x2xf32>
// CHECK-NEXT:    func.return %s : tensor<1x2x2xf32>
// CHECK-NEXT:  }
func.func @two_reads(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %a0 = mlx.weight @batched.weight : tensor<1x2x2xf32>
  %a = mlx.transpose %a0 [0, 2, 1] : tensor<1x2x2xf32> -> tensor<1x2x2xf32>
  %b0 = mlx.weight @batched.weight : tensor<1x2x2xf32>
  %b = mlx.transpose %b0 [0, 2, 1] : tensor<1x2x2xf32> -> tensor<1x2x2xf32>
  %s = mlx.add %a, %b : tensor<1x2x2xf32>, tensor<1x2x2xf32> -> tensor<1x2x2xf32>
  func.return %s : tensor<1x2x2xf32>
}

// Kept: a transpose of an argument, not of a weight.
// CHECK-LABEL: func.func @not_a_weight(%x: tensor<16x8xf32>) -> tensor<8x16xf32> {
// CHECK-NEXT:    %t = mlx.transpose %x [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    func.return %t : tensor<8x16xf32>
// CHECK-NEXT:  }
func.func @not_a_weight(%x: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %t = mlx.transpose %x [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  func.return %t : tensor<8x16xf32>
}
