// merge-projections: matmuls of one input x by constant weights (a weight [K, N_i] with
// its value in the IR, or a linear weight [N_i, K] read through transpose [1, 0]), or
// all addmm(b_i, x, w_i) with constant biases [N_i], -> one product on the weights (and
// biases) concatenated at compile time into a new global named after the old ones
// (`a.q_proj.weight`, `a.k_proj.weight` -> `a.q_proj+k_proj.weight`, inserted before
// the function), then one split on the last axis at the running widths. The old reads
// (and transposes) go, and each old global once nothing reads it. Only projections of
// the same kind merge, and a matmul whose product feeds a bias add waits for
// fuse-bias-add (as do its siblings).
// (Siblings of different dtypes are not expressible: mlx.matmul's operands and result
// share one element type, and the siblings share x; a cast x is another input, see
// @cast_input.)
// RUN: mlx-opt %s -p merge-projections | filecheck %s
// RUN: mlx-opt %s -p merge-projections | filecheck %s --check-prefix=GLOBAL

// The globals left: those still read, in their places, then each merged global just
// before the first function that reads it (reused, not duplicated, by @qkv_again).
// Every old global of a merged group is gone (the merged names are quoted, the old
// ones not: no unquoted global follows the kept ones at the top).
// GLOBAL:      builtin.module {
// GLOBAL-NEXT:   mlx.global @mlp.up_proj.weight "parameter" : tensor<4x3xbf16> = dense<{{\[}}[-1.000000e+00, -2.000000e+00, -3.000000e+00], [-4.000000e+00, -5.000000e+00, -6.000000e+00], [-7.000000e+00, -8.000000e+00, -9.000000e+00], [-1.000000e+01, -1.100000e+01, -1.200000e+01]]> : tensor<4x3xbf16>
// GLOBAL-NEXT:   mlx.global @neg.a.weight "parameter" : tensor<4x2xf32>
// GLOBAL-NEXT:   mlx.global @neg.b.weight "parameter" : tensor<4x2xf32>
// GLOBAL-NEXT:   mlx.global @neg.b.bias "parameter" : tensor<2xf32>
// GLOBAL-NEXT:   mlx.global @neg.a.bias "parameter" : tensor<2xf32>
// GLOBAL-NEXT:   mlx.global @neg.bf.weight "parameter" : tensor<4x2xbf16>
// GLOBAL-NEXT:   mlx.global @neg.novalue.weight "parameter" : tensor<4x2xf32>
// GLOBAL-NEXT:   mlx.global @"model.layers.0.self_attn.q_proj+k_proj+v_proj.weight" "parameter" : tensor<4x8xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, -1.000000e+00, -2.000000e+00, 5.000000e-01, 1.500000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, -3.000000e+00, -4.000000e+00, 2.500000e+00, 3.500000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, -5.000000e+00, -6.000000e+00, 4.500000e+00, 5.500000e+00], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01, -7.000000e+00, -8.000000e+00, 6.500000e+00, 7.500000e+00]]> : tensor<4x8xf32>
// GLOBAL-NEXT:   func.func @qkv(
// GLOBAL-NOT:    mlx.global
// GLOBAL:        func.func @qkv_again(
// GLOBAL-NOT:    mlx.global @{{[a-z]}}
// GLOBAL:        mlx.global @"lin.q_proj+k_proj+v_proj.weight" "parameter" : tensor<8x4xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01], [-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00], [-5.000000e+00, -6.000000e+00, -7.000000e+00, -8.000000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00], [4.500000e+00, 5.500000e+00, 6.500000e+00, 7.500000e+00]]> : tensor<8x4xf32>
// GLOBAL-NEXT:   func.func @qkv_linear(
// GLOBAL-NOT:    mlx.global @{{[a-z]}}
// GLOBAL:        mlx.global @"biased.q_proj+k_proj+v_proj.weight" "parameter" : tensor<8x4xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01], [-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00], [-5.000000e+00, -6.000000e+00, -7.000000e+00, -8.000000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00], [4.500000e+00, 5.500000e+00, 6.500000e+00, 7.500000e+00]]> : tensor<8x4xf32>
// GLOBAL-NEXT:   mlx.global @"biased.q_proj+k_proj+v_proj.bias" "parameter" : tensor<8xf32> = dense<[2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, -2.500000e-01, -5.000000e-01, 2.000000e+00, 3.000000e+00]> : tensor<8xf32>
// GLOBAL-NEXT:   func.func @qkv_biased(
// GLOBAL-NOT:    mlx.global @{{[a-z]}}
// GLOBAL:        mlx.global @"mix.q_proj+k_proj.weight" "parameter" : tensor<4x4xf32> = dense<{{\[}}[1.000000e+00, 5.000000e+00, -1.000000e+00, -2.000000e+00], [2.000000e+00, 6.000000e+00, -3.000000e+00, -4.000000e+00], [3.000000e+00, 7.000000e+00, -5.000000e+00, -6.000000e+00], [4.000000e+00, 8.000000e+00, -7.000000e+00, -8.000000e+00]]> : tensor<4x4xf32>
// GLOBAL-NEXT:   func.func @mixed_layouts(
// GLOBAL-NOT:    mlx.global @{{[a-z]}}
// GLOBAL:        mlx.global @"mlp.gate_proj+up_proj.weight" "parameter" : tensor<4x6xbf16> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, -1.000000e+00, -2.000000e+00, -3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, -4.000000e+00, -5.000000e+00, -6.000000e+00], [7.000000e+00, 8.000000e+00, 9.000000e+00, -7.000000e+00, -8.000000e+00, -9.000000e+00], [1.000000e+01, 1.100000e+01, 1.200000e+01, -1.000000e+01, -1.100000e+01, -1.200000e+01]]> : tensor<4x6xbf16>
// GLOBAL-NEXT:   func.func @gate_up_bf16(
// GLOBAL-NOT:    mlx.global @{{[a-z]}}
// GLOBAL:        mlx.global @"part.q_proj+v_proj.weight" "parameter" : tensor<4x6xf32> = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e-01, 1.500000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 2.500000e+00, 3.500000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 4.500000e+00, 5.500000e+00], [1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01, 6.500000e+00, 7.500000e+00]]> : tensor<4x6xf32>
// GLOBAL-NEXT:   func.func @partial_group(
// GLOBAL-NOT:    mlx.global

mlx.global @model.layers.0.self_attn.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @model.layers.0.self_attn.k_proj.weight "parameter" : tensor<4x2xf32> = dense<[[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0], [-7.0, -8.0]]> : tensor<4x2xf32>
mlx.global @model.layers.0.self_attn.v_proj.weight "parameter" : tensor<4x2xf32> = dense<[[0.5, 1.5], [2.5, 3.5], [4.5, 5.5], [6.5, 7.5]]> : tensor<4x2xf32>
mlx.global @lin.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @lin.k_proj.weight "parameter" : tensor<2x4xf32> = dense<[[-1.0, -2.0, -3.0, -4.0], [-5.0, -6.0, -7.0, -8.0]]> : tensor<2x4xf32>
mlx.global @lin.v_proj.weight "parameter" : tensor<2x4xf32> = dense<[[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]]> : tensor<2x4xf32>
mlx.global @biased.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @biased.k_proj.weight "parameter" : tensor<2x4xf32> = dense<[[-1.0, -2.0, -3.0, -4.0], [-5.0, -6.0, -7.0, -8.0]]> : tensor<2x4xf32>
mlx.global @biased.v_proj.weight "parameter" : tensor<2x4xf32> = dense<[[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]]> : tensor<2x4xf32>
mlx.global @mix.q_proj.weight "parameter" : tensor<2x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
mlx.global @mix.k_proj.weight "parameter" : tensor<4x2xf32> = dense<[[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0], [-7.0, -8.0]]> : tensor<4x2xf32>
mlx.global @biased.q_proj.bias "parameter" : tensor<4xf32> = dense<[0.25, 0.5, 0.75, 1.0]> : tensor<4xf32>
mlx.global @biased.k_proj.bias "parameter" : tensor<2xf32> = dense<[-0.25, -0.5]> : tensor<2xf32>
mlx.global @biased.v_proj.bias "parameter" : tensor<2xf32> = dense<[2.0, 3.0]> : tensor<2xf32>
mlx.global @mlp.gate_proj.weight "parameter" : tensor<4x3xbf16> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xbf16>
mlx.global @mlp.up_proj.weight "parameter" : tensor<4x3xbf16> = dense<[[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0], [-10.0, -11.0, -12.0]]> : tensor<4x3xbf16>
mlx.global @part.q_proj.weight "parameter" : tensor<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
mlx.global @part.v_proj.weight "parameter" : tensor<4x2xf32> = dense<[[0.5, 1.5], [2.5, 3.5], [4.5, 5.5], [6.5, 7.5]]> : tensor<4x2xf32>
mlx.global @neg.a.weight "parameter" : tensor<4x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
mlx.global @neg.b.weight "parameter" : tensor<4x2xf32> = dense<[[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0], [-7.0, -8.0]]> : tensor<4x2xf32>
mlx.global @neg.b.bias "parameter" : tensor<2xf32> = dense<[0.5, 1.5]> : tensor<2xf32>
mlx.global @neg.a.bias "parameter" : tensor<2xf32> = dense<[2.5, 3.5]> : tensor<2xf32>
mlx.global @neg.bf.weight "parameter" : tensor<4x2xbf16> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xbf16>
mlx.global @neg.novalue.weight "parameter" : tensor<4x2xf32>

// q/k/v: weights [4, 4], [4, 2], [4, 2] -> one matmul on the [4, 8] concatenation and a
// split at [4, 6] on the last axis; the old reads are gone.
// CHECK-LABEL: func.func @qkv(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"model.layers.0.self_attn.q_proj+k_proj+v_proj.weight" : tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[W]] : tensor<1x?x4xf32>, tensor<4x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[P]] at [4, 6] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:  }
func.func @qkv(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
  %wq = mlx.weight @model.layers.0.self_attn.q_proj.weight : tensor<4x4xf32>
  %q = mlx.matmul %x, %wq : tensor<1x?x4xf32>, tensor<4x4xf32> -> tensor<1x?x4xf32>
  %wk = mlx.weight @model.layers.0.self_attn.k_proj.weight : tensor<4x2xf32>
  %k = mlx.matmul %x, %wk : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %wv = mlx.weight @model.layers.0.self_attn.v_proj.weight : tensor<4x2xf32>
  %v = mlx.matmul %x, %wv : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
}

// The same weights in another function (2-D x, the reads first): the merged global is
// read again, not made twice; the old globals go once this last reader has merged.
// CHECK-LABEL: func.func @qkv_again(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"model.layers.0.self_attn.q_proj+k_proj+v_proj.weight" : tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[W]] : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[P]] at [4, 6] axis 1 : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @qkv_again(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %wq = mlx.weight @model.layers.0.self_attn.q_proj.weight : tensor<4x4xf32>
  %wk = mlx.weight @model.layers.0.self_attn.k_proj.weight : tensor<4x2xf32>
  %wv = mlx.weight @model.layers.0.self_attn.v_proj.weight : tensor<4x2xf32>
  %q = mlx.matmul %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %k = mlx.matmul %x, %wk : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %v = mlx.matmul %x, %wv : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %q, %k, %v : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// The linear layout: weights [N, K] read through transpose [1, 0]. The merged global
// stacks them as rows ([8, K]) and is read through one transpose; the old transposes
// are gone with the reads.
// CHECK-LABEL: func.func @qkv_linear(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"lin.q_proj+k_proj+v_proj.weight" : tensor<8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[W]] [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[T]] : tensor<1x?x4xf32>, tensor<4x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[P]] at [4, 6] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:  }
func.func @qkv_linear(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
  %wq = mlx.weight @lin.q_proj.weight : tensor<4x4xf32>
  %wqt = mlx.transpose %wq [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %q = mlx.matmul %x, %wqt : tensor<1x?x4xf32>, tensor<4x4xf32> -> tensor<1x?x4xf32>
  %wk = mlx.weight @lin.k_proj.weight : tensor<2x4xf32>
  %wkt = mlx.transpose %wk [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %k = mlx.matmul %x, %wkt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %wv = mlx.weight @lin.v_proj.weight : tensor<2x4xf32>
  %wvt = mlx.transpose %wv [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %v = mlx.matmul %x, %wvt : tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
}

// Biased (Qwen2's q/k/v): three addmm on transposed weights -> one addmm with the
// weights and the biases concatenated, then the split.
// CHECK-LABEL: func.func @qkv_biased(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"biased.q_proj+k_proj+v_proj.weight" : tensor<8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.transpose %[[W]] [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.weight @"biased.q_proj+k_proj+v_proj.bias" : tensor<8xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.addmm %[[B]], %x, %[[T]] : tensor<8xf32>, tensor<1x?x4xf32>, tensor<4x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:    %q, %k, %v = mlx.split %[[P]] at [4, 6] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
// CHECK-NEXT:  }
func.func @qkv_biased(%x: tensor<1x?x4xf32>) -> (tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
  %wq = mlx.weight @biased.q_proj.weight : tensor<4x4xf32>
  %wqt = mlx.transpose %wq [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %bq = mlx.weight @biased.q_proj.bias : tensor<4xf32>
  %q = mlx.addmm %bq, %x, %wqt : tensor<4xf32>, tensor<1x?x4xf32>, tensor<4x4xf32> -> tensor<1x?x4xf32>
  %wk = mlx.weight @biased.k_proj.weight : tensor<2x4xf32>
  %wkt = mlx.transpose %wk [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %bk = mlx.weight @biased.k_proj.bias : tensor<2xf32>
  %k = mlx.addmm %bk, %x, %wkt : tensor<2xf32>, tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  %wv = mlx.weight @biased.v_proj.weight : tensor<2x4xf32>
  %wvt = mlx.transpose %wv [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %bv = mlx.weight @biased.v_proj.bias : tensor<2xf32>
  %v = mlx.addmm %bv, %x, %wvt : tensor<2xf32>, tensor<1x?x4xf32>, tensor<4x2xf32> -> tensor<1x?x2xf32>
  func.return %q, %k, %v : tensor<1x?x4xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
}

// One linear weight [N, K] and one [K, N]: the columns are concatenated ([K, 4], q's
// transposed), read without a transpose.
// CHECK-LABEL: func.func @mixed_layouts(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"mix.q_proj+k_proj.weight" : tensor<4x4xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[W]] : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %q, %k = mlx.split %[[P]] at [2] axis 1 : tensor<2x4xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:    func.return %q, %k : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @mixed_layouts(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wq = mlx.weight @mix.q_proj.weight : tensor<2x4xf32>
  %wqt = mlx.transpose %wq [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %q = mlx.matmul %x, %wqt : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wk = mlx.weight @mix.k_proj.weight : tensor<4x2xf32>
  %k = mlx.matmul %x, %wk : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %q, %k : tensor<2x2xf32>, tensor<2x2xf32>
}

// gate/up in bf16, x also returned, and up's weight read also returned: that read and
// its global stay, gate's go.
// CHECK-LABEL: func.func @gate_up_bf16(%x: tensor<2x4xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<4x3xbf16>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"mlp.gate_proj+up_proj.weight" : tensor<4x6xbf16>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[W]] : tensor<2x4xbf16>, tensor<4x6xbf16> -> tensor<2x6xbf16>
// CHECK-NEXT:    %g, %u = mlx.split %[[P]] at [3] axis 1 : tensor<2x6xbf16> -> tensor<2x3xbf16>, tensor<2x3xbf16>
// CHECK-NEXT:    %wu = mlx.weight @mlp.up_proj.weight : tensor<4x3xbf16>
// CHECK-NEXT:    func.return %g, %u, %x, %wu : tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<4x3xbf16>
// CHECK-NEXT:  }
func.func @gate_up_bf16(%x: tensor<2x4xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<4x3xbf16>) {
  %wg = mlx.weight @mlp.gate_proj.weight : tensor<4x3xbf16>
  %g = mlx.matmul %x, %wg : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  %wu = mlx.weight @mlp.up_proj.weight : tensor<4x3xbf16>
  %u = mlx.matmul %x, %wu : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  func.return %g, %u, %x, %wu : tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<4x3xbf16>
}

// One of three weights is a function argument: the two constant ones merge (q and v,
// split at [4]), k's matmul stays.
// CHECK-LABEL: func.func @partial_group(%x: tensor<2x4xf32>, %wk: tensor<4x2xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @"part.q_proj+v_proj.weight" : tensor<4x6xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.matmul %x, %[[W]] : tensor<2x4xf32>, tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %q, %v = mlx.split %[[P]] at [4] axis 1 : tensor<2x6xf32> -> tensor<2x4xf32>, tensor<2x2xf32>
// CHECK-NEXT:    %k = mlx.matmul %x, %wk : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @partial_group(%x: tensor<2x4xf32>, %wk: tensor<4x2xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %wq = mlx.weight @part.q_proj.weight : tensor<4x4xf32>
  %q = mlx.matmul %x, %wq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %k = mlx.matmul %x, %wk : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wv = mlx.weight @part.v_proj.weight : tensor<4x2xf32>
  %v = mlx.matmul %x, %wv : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %q, %k, %v : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: the products are of different inputs.
// CHECK-LABEL: func.func @different_inputs(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
// CHECK-NEXT:    %b = mlx.matmul %y, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @different_inputs(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
  %b = mlx.matmul %y, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: the second weight is a function argument (not constant), so only one
// projection is left.
// CHECK-LABEL: func.func @weight_argument(%x: tensor<2x4xf32>, %wb: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @weight_argument(%x: tensor<2x4xf32>, %wb: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: the second weight's global has no value in the IR.
// CHECK-LABEL: func.func @weight_without_value(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %wb = mlx.weight @neg.novalue.weight : tensor<4x2xf32>
// CHECK-NEXT:    %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @weight_without_value(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wb = mlx.weight @neg.novalue.weight : tensor<4x2xf32>
  %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: a matmul and an addmm of x (only projections of the same kind merge).
// CHECK-LABEL: func.func @mixed_kinds(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
// CHECK-NEXT:    %bb = mlx.weight @neg.b.bias : tensor<2xf32>
// CHECK-NEXT:    %b = mlx.addmm %bb, %x, %wb : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @mixed_kinds(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
  %bb = mlx.weight @neg.b.bias : tensor<2xf32>
  %b = mlx.addmm %bb, %x, %wb : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: one matmul's product feeds a constant-bias add, so the group waits for
// fuse-bias-add (the unbiased sibling does not merge on its own either).
// CHECK-LABEL: func.func @unfused_bias(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %ba = mlx.weight @neg.a.bias : tensor<2xf32>
// CHECK-NEXT:    %pa = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %a = mlx.add %pa, %ba : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
// CHECK-NEXT:    %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @unfused_bias(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %ba = mlx.weight @neg.a.bias : tensor<2xf32>
  %pa = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %a = mlx.add %pa, %ba : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
  %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
  %b = mlx.matmul %x, %wb : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: an addmm with alpha is not a plain projection, so one addmm is left.
// CHECK-LABEL: func.func @scaled_addmm(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %ba = mlx.weight @neg.a.bias : tensor<2xf32>
// CHECK-NEXT:    %a = mlx.addmm %ba, %x, %wa alpha 5.000000e-01 : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
// CHECK-NEXT:    %bb = mlx.weight @neg.b.bias : tensor<2xf32>
// CHECK-NEXT:    %b = mlx.addmm %bb, %x, %wb : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT:  }
func.func @scaled_addmm(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %ba = mlx.weight @neg.a.bias : tensor<2xf32>
  %a = mlx.addmm %ba, %x, %wa alpha 5.000000e-01 : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %wb = mlx.weight @neg.b.weight : tensor<4x2xf32>
  %bb = mlx.weight @neg.b.bias : tensor<2xf32>
  %b = mlx.addmm %bb, %x, %wb : tensor<2xf32>, tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Kept: an f32 and a bf16 projection, the bf16 one of x cast to bf16 (another input).
// CHECK-LABEL: func.func @cast_input(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xbf16>) {
// CHECK-NEXT:    %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
// CHECK-NEXT:    %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %xh = mlx.astype %x : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:    %wb = mlx.weight @neg.bf.weight : tensor<4x2xbf16>
// CHECK-NEXT:    %b = mlx.matmul %xh, %wb : tensor<2x4xbf16>, tensor<4x2xbf16> -> tensor<2x2xbf16>
// CHECK-NEXT:    func.return %a, %b : tensor<2x2xf32>, tensor<2x2xbf16>
// CHECK-NEXT:  }
func.func @cast_input(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xbf16>) {
  %wa = mlx.weight @neg.a.weight : tensor<4x2xf32>
  %a = mlx.matmul %x, %wa : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %xh = mlx.astype %x : tensor<2x4xf32> -> tensor<2x4xbf16>
  %wb = mlx.weight @neg.bf.weight : tensor<4x2xbf16>
  %b = mlx.matmul %xh, %wb : tensor<2x4xbf16>, tensor<4x2xbf16> -> tensor<2x2xbf16>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xbf16>
}
