// optimize-mlx: the optimization stage of lower-to-mlx, every optimize-mlx pattern
// together (fuse-rms-norm, fuse-layer-norm, fold-norm-affine, unrepeat-kv; each also a
// pass of its own, see the files here), after canonicalize has
// put the IR in the form they match. What a fusion leaves unread is erased at once, so
// that it does not hold up the next pattern (run alone, a pattern leaves it to dce).
// RUN: mlx-opt %s -p optimize-mlx | filecheck %s

// HF's bf16 RMSNorm, with its casts, weight on the left: one mlx.rms_norm in bf16.
// CHECK-LABEL: func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xbf16> eps 9.9999997473787516e-06 : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    func.return %y : tensor<2x8xbf16>
// CHECK-NEXT:  }
func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
  %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %back = mlx.astype %n : tensor<2x8xf32> -> tensor<2x8xbf16>
  %y = mlx.multiply %w, %back : tensor<8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %y : tensor<2x8xbf16>
}

// RMSNorm in f32 with x ** 2 and a dynamic dim.
// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xf32> eps 9.9999999747524271e-07 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x?x8xf32>
// CHECK-NEXT:  }
func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
  %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  func.return %y : tensor<2x?x8xf32>
}

// The patterns feed each other: the LayerNorm decomposition fuses, then its weight
// and its bias fold in, one at a time; each step's leftovers are erased.
// CHECK-LABEL: func.func @layer_norm_affine(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %z = mlx.layer_norm %x weight %w : tensor<8xf32> bias %b : tensor<8xf32> eps 9.9999997473787516e-06 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %z : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @layer_norm_affine(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %c = mlx.subtract %x, %mu : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %sq = mlx.square %c : tensor<2x8xf32> -> tensor<2x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %s : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %c, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %z = mlx.add %y, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %z : tensor<2x8xf32>
}

// Kept: identities are canonicalize's to remove.
// CHECK-LABEL: func.func @not_canonicalization(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %t = mlx.transpose %a [0] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %t : tensor<4xf32>
// CHECK-NEXT:  }
func.func @not_canonicalization(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  %t = mlx.transpose %a [0] : tensor<4xf32> -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}

// Kept: a linear weight read through its transpose. fold-weight-transposes is a pass of
// its own, not part of the stage: MLX's matmul takes the transposed view as it is.
// CHECK-LABEL: func.func @linear_weight(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @linear.weight : tensor<3x4xf32>
// CHECK-NEXT:    %wt = mlx.transpose %w [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %wt : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %y : tensor<2x3xf32>
// CHECK-NEXT:  }
mlx.global @linear.weight "parameter" : tensor<3x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
func.func @linear_weight(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @linear.weight : tensor<3x4xf32>
  %wt = mlx.transpose %w [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %y = mlx.matmul %x, %wt : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
