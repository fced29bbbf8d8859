// split-heads-once: split(y) on the last axis, each piece reshaped to [..., h_i, d]
// (the same leading sizes and head dim d) and transposed by one permutation, each op
// the only use of its input -> reshape(y, [..., sum h_i, d]), one transpose, one split
// on the axis the heads land on, at the running head counts. The old reshapes,
// transposes and split are erased.
// RUN: mlx-opt %s -p split-heads-once | filecheck %s

// q/k/v of a merged projection (64 + 32 + 32 wide, d = 16) with dynamic batch and
// sequence: one reshape [B, S, 8, 16], one transpose [0, 2, 1, 3], a split at [4, 6]
// on axis 1.
// CHECK-LABEL: func.func @qkv_heads(%y: tensor<?x?x128xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
// CHECK-NEXT:    %b = mlx.dim %y axis 0 : tensor<?x?x128xf32>
// CHECK-NEXT:    %s = mlx.dim %y axis 1 : tensor<?x?x128xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %y [%b, %s, 8, 16] : tensor<?x?x128xf32> -> tensor<?x?x8x16xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<?x?x8x16xf32> -> tensor<?x8x?x16xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[T]] at [4, 6] axis 1 : tensor<?x8x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
// CHECK-NEXT:  }
func.func @qkv_heads(%y: tensor<?x?x128xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
  %b = mlx.dim %y axis 0 : tensor<?x?x128xf32>
  %s = mlx.dim %y axis 1 : tensor<?x?x128xf32>
  %p:3 = mlx.split %y at [64, 96] axis 2 : tensor<?x?x128xf32> -> tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>
  %q4 = mlx.reshape %p#0 [%b, %s, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %k4 = mlx.reshape %p#1 [%b, %s, 2, 16] : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  %v4 = mlx.reshape %p#2 [%b, %s, 2, 16] : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v = mlx.transpose %v4 [0, 2, 1, 3] : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  func.return %q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}

// Static bf16, the split axis written -1, every piece transposed by [0, 2, 3, 1]
// ([B, h, d, S]): the heads land on axis 1 again.
// CHECK-LABEL: func.func @keys_transposed(%y: tensor<2x3x64xbf16>) -> (tensor<2x2x16x3xbf16>, tensor<2x2x16x3xbf16>) {
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %y [2, 3, 4, 16] : tensor<2x3x64xbf16> -> tensor<2x3x4x16xbf16>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 3, 1] : tensor<2x3x4x16xbf16> -> tensor<2x4x16x3xbf16>
// CHECK-NEXT:    %a, %b = mlx.split %[[T]] at [2] axis 1 : tensor<2x4x16x3xbf16> -> tensor<2x2x16x3xbf16>, tensor<2x2x16x3xbf16>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2x16x3xbf16>, tensor<2x2x16x3xbf16>
// CHECK-NEXT:  }
func.func @keys_transposed(%y: tensor<2x3x64xbf16>) -> (tensor<2x2x16x3xbf16>, tensor<2x2x16x3xbf16>) {
  %p:2 = mlx.split %y at [32] axis -1 : tensor<2x3x64xbf16> -> tensor<2x3x32xbf16>, tensor<2x3x32xbf16>
  %a4 = mlx.reshape %p#0 [2, 3, 2, 16] : tensor<2x3x32xbf16> -> tensor<2x3x2x16xbf16>
  %a = mlx.transpose %a4 [0, 2, 3, 1] : tensor<2x3x2x16xbf16> -> tensor<2x2x16x3xbf16>
  %b4 = mlx.reshape %p#1 [2, 3, 2, 16] : tensor<2x3x32xbf16> -> tensor<2x3x2x16xbf16>
  %b = mlx.transpose %b4 [0, 2, 3, 1] : tensor<2x3x2x16xbf16> -> tensor<2x2x16x3xbf16>
  func.return %a, %b : tensor<2x2x16x3xbf16>, tensor<2x2x16x3xbf16>
}

// Kept: the pieces' head dims differ (q [.., 4, 16], k [.., 4, 8]).
// CHECK-LABEL: func.func @different_head_dims(%y: tensor<2x3x96xf32>) -> (tensor<2x4x3x16xf32>, tensor<2x4x3x8xf32>) {
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [64] axis 2 : tensor<2x3x96xf32> -> tensor<2x3x64xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [2, 3, 4, 16] : tensor<2x3x64xf32> -> tensor<2x3x4x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x4x16xf32> -> tensor<2x4x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [2, 3, 4, 8] : tensor<2x3x32xf32> -> tensor<2x3x4x8xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
// CHECK-NEXT:    func.return %q, %k : tensor<2x4x3x16xf32>, tensor<2x4x3x8xf32>
// CHECK-NEXT:  }
func.func @different_head_dims(%y: tensor<2x3x96xf32>) -> (tensor<2x4x3x16xf32>, tensor<2x4x3x8xf32>) {
  %p:2 = mlx.split %y at [64] axis 2 : tensor<2x3x96xf32> -> tensor<2x3x64xf32>, tensor<2x3x32xf32>
  %q4 = mlx.reshape %p#0 [2, 3, 4, 16] : tensor<2x3x64xf32> -> tensor<2x3x4x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x4x16xf32> -> tensor<2x4x3x16xf32>
  %k4 = mlx.reshape %p#1 [2, 3, 4, 8] : tensor<2x3x32xf32> -> tensor<2x3x4x8xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
  func.return %q, %k : tensor<2x4x3x16xf32>, tensor<2x4x3x8xf32>
}

// Kept: a piece (k before the reshape) has another use.
// CHECK-LABEL: func.func @piece_used_twice(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x32xf32>) {
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    func.return %q, %k, %p_1 : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:  }
func.func @piece_used_twice(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x32xf32>) {
  %p:2 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
  %q4 = mlx.reshape %p#0 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  %k4 = mlx.reshape %p#1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  func.return %q, %k, %p#1 : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x32xf32>
}

// Kept: a piece's reshape has another use.
// CHECK-LABEL: func.func @reshape_used_twice(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x2x16xf32>) {
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    func.return %q, %k, %q4 : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x2x16xf32>
// CHECK-NEXT:  }
func.func @reshape_used_twice(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x2x16xf32>) {
  %p:2 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
  %q4 = mlx.reshape %p#0 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  %k4 = mlx.reshape %p#1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  func.return %q, %k, %q4 : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x3x2x16xf32>
}

// Kept: the pieces are transposed differently ([0, 2, 1, 3] and [0, 2, 3, 1]).
// CHECK-LABEL: func.func @different_perms(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x16x3xf32>) {
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 3, 1] : tensor<2x3x2x16xf32> -> tensor<2x2x16x3xf32>
// CHECK-NEXT:    func.return %q, %k : tensor<2x2x3x16xf32>, tensor<2x2x16x3xf32>
// CHECK-NEXT:  }
func.func @different_perms(%y: tensor<2x3x64xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x16x3xf32>) {
  %p:2 = mlx.split %y at [32] axis 2 : tensor<2x3x64xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
  %q4 = mlx.reshape %p#0 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  %k4 = mlx.reshape %p#1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 3, 1] : tensor<2x3x2x16xf32> -> tensor<2x2x16x3xf32>
  func.return %q, %k : tensor<2x2x3x16xf32>, tensor<2x2x16x3xf32>
}

// Kept: the reshapes' leading sizes are different values (two mlx.dim of the same
// axis; fold-known-dims, in optimize-mlx, would make them one).
// CHECK-LABEL: func.func @different_leading_sizes(%y: tensor<?x3x64xf32>) -> (tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>) {
// CHECK-NEXT:    %b = mlx.dim %y axis 0 : tensor<?x3x64xf32>
// CHECK-NEXT:    %b2 = mlx.dim %y axis 0 : tensor<?x3x64xf32>
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [32] axis 2 : tensor<?x3x64xf32> -> tensor<?x3x32xf32>, tensor<?x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [%b, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [%b2, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
// CHECK-NEXT:    func.return %q, %k : tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>
// CHECK-NEXT:  }
func.func @different_leading_sizes(%y: tensor<?x3x64xf32>) -> (tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>) {
  %b = mlx.dim %y axis 0 : tensor<?x3x64xf32>
  %b2 = mlx.dim %y axis 0 : tensor<?x3x64xf32>
  %p:2 = mlx.split %y at [32] axis 2 : tensor<?x3x64xf32> -> tensor<?x3x32xf32>, tensor<?x3x32xf32>
  %q4 = mlx.reshape %p#0 [%b, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
  %k4 = mlx.reshape %p#1 [%b2, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
  func.return %q, %k : tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>
}

// Kept: the split is not on the last axis.
// CHECK-LABEL: func.func @split_not_last(%y: tensor<2x6x32xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>) {
// CHECK-NEXT:    %p, %p_1 = mlx.split %y at [3] axis 1 : tensor<2x6x32xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
// CHECK-NEXT:    %q4 = mlx.reshape %p [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    %k4 = mlx.reshape %p_1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
// CHECK-NEXT:    %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
// CHECK-NEXT:    func.return %q, %k : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>
// CHECK-NEXT:  }
func.func @split_not_last(%y: tensor<2x6x32xf32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>) {
  %p:2 = mlx.split %y at [3] axis 1 : tensor<2x6x32xf32> -> tensor<2x3x32xf32>, tensor<2x3x32xf32>
  %q4 = mlx.reshape %p#0 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  %k4 = mlx.reshape %p#1 [2, 3, 2, 16] : tensor<2x3x32xf32> -> tensor<2x3x2x16xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x16xf32> -> tensor<2x2x3x16xf32>
  func.return %q, %k : tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>
}

// A parallel block's merged product (Phi, Cohere): q, k, v next to the MLP's two
// pieces. The q/k/v run is split off as one piece and split again; that inner split
// then becomes one reshape, one transpose and a split on the heads axis.
// CHECK-LABEL: func.func @parallel_block(%y: tensor<?x?x96xf32>) -> (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
// CHECK-NEXT:    %b = mlx.dim %y axis 0 : tensor<?x?x96xf32>
// CHECK-NEXT:    %s = mlx.dim %y axis 1 : tensor<?x?x96xf32>
// CHECK-NEXT:    %[[QKV:[[:alnum:]_]+]], %[[GATE:[[:alnum:]_]+]], %[[UP:[[:alnum:]_]+]] = mlx.split %y at [64, 80] axis 2 : tensor<?x?x96xf32> -> tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %[[QKV]] [%b, %s, 8, 8] : tensor<?x?x64xf32> -> tensor<?x?x8x8xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[R]] [0, 2, 1, 3] : tensor<?x?x8x8xf32> -> tensor<?x8x?x8xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[T]] at [4, 6] axis 1 : tensor<?x8x?x8xf32> -> tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
// CHECK-NEXT:    func.return %q, %k, %v, %[[GATE]], %[[UP]]
func.func @parallel_block(%y: tensor<?x?x96xf32>) -> (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %b = mlx.dim %y axis 0 : tensor<?x?x96xf32>
  %s = mlx.dim %y axis 1 : tensor<?x?x96xf32>
  %p:5 = mlx.split %y at [32, 48, 64, 80] axis 2 : tensor<?x?x96xf32> -> tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
  %q4 = mlx.reshape %p#0 [%b, %s, 4, 8] : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  %k4 = mlx.reshape %p#1 [%b, %s, 2, 8] : tensor<?x?x16xf32> -> tensor<?x?x2x8xf32>
  %k = mlx.transpose %k4 [0, 2, 1, 3] : tensor<?x?x2x8xf32> -> tensor<?x2x?x8xf32>
  %v4 = mlx.reshape %p#2 [%b, %s, 2, 8] : tensor<?x?x16xf32> -> tensor<?x?x2x8xf32>
  %v = mlx.transpose %v4 [0, 2, 1, 3] : tensor<?x?x2x8xf32> -> tensor<?x2x?x8xf32>
  func.return %q, %k, %v, %p#3, %p#4 : tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// Kept: a single piece reshaped to heads is already one reshape and one transpose.
// CHECK-LABEL: func.func @one_piece
// CHECK-NEXT:    %b = mlx.dim
// CHECK-NEXT:    %s = mlx.dim
// CHECK-NEXT:    %p = mlx.split %y at [] axis 2
func.func @one_piece(%y: tensor<?x?x32xf32>) -> tensor<?x4x?x8xf32> {
  %b = mlx.dim %y axis 0 : tensor<?x?x32xf32>
  %s = mlx.dim %y axis 1 : tensor<?x?x32xf32>
  %p = mlx.split %y at [] axis 2 : tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %q4 = mlx.reshape %p [%b, %s, 4, 8] : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %q = mlx.transpose %q4 [0, 2, 1, 3] : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  func.return %q : tensor<?x4x?x8xf32>
}

// The pieces' leading size is computed after the split (Swin's window attention reads
// a product of sizes made there): the merged reshape would go where the split is, before
// that size exists, so nothing changes.
// CHECK-LABEL: func.func @size_after_split(%y: tensor<?x3x64xf32>, %n: index) -> (tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>) {
// CHECK-NEXT:    %a, %b = mlx.split %y at [32] axis 2
// CHECK-NEXT:    %two = arith.constant 2 : index
// CHECK-NEXT:    %m = arith.muli %n, %two : index
// CHECK-NEXT:    %ra = mlx.reshape %a [%m, 3, 2, 16]
func.func @size_after_split(%y: tensor<?x3x64xf32>, %n: index) -> (tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>) {
  %a, %b = mlx.split %y at [32] axis 2 : tensor<?x3x64xf32> -> tensor<?x3x32xf32>, tensor<?x3x32xf32>
  %two = arith.constant 2 : index
  %m = arith.muli %n, %two : index
  %ra = mlx.reshape %a [%m, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
  %ta = mlx.transpose %ra [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
  %rb = mlx.reshape %b [%m, 3, 2, 16] : tensor<?x3x32xf32> -> tensor<?x3x2x16xf32>
  %tb = mlx.transpose %rb [0, 2, 1, 3] : tensor<?x3x2x16xf32> -> tensor<?x2x3x16xf32>
  func.return %ta, %tb : tensor<?x2x3x16xf32>, tensor<?x2x3x16xf32>
}
