// RUN: mlx-opt %s -p 'shard-tensor-parallel{ranks=2}' --split-input-file | filecheck %s
// RUN: mlx-opt %s -p 'shard-tensor-parallel{ranks=2}' --split-input-file --verify-diagnostics

// shard-tensor-parallel alone: a pair of products (column-parallel, then row-parallel)
// split over 2 ranks. Each split weight holds its 2 slices, rank 0 first; the values in
// between hold half the split axis; one all_sum follows the row product.

// An MLP: up's output features (rows of the stored [out, in] weight) split, down's input
// features (its columns) split.
// CHECK:      mlx.global @up.ranks2 "parameter" ranks 2 : tensor<2x2xf32> = dense<{{\[}}{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]], {{\[}}[5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK:      mlx.global @down.ranks2 "parameter" ranks 2 : tensor<2x2xf32> = dense<{{\[}}{{\[}}[1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[}}[3.000000e+00, 4.000000e+00], [7.000000e+00, 8.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-LABEL: func.func @mlp(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
// CHECK-NEXT:    %up = mlx.weight @up.ranks2 : tensor<2x2xf32>
// CHECK-NEXT:    %upT = mlx.transpose %up [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %h = mlx.matmul %x, %upT : tensor<?x2xf32>, tensor<2x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    %a = mlx.sigmoid %h : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    %down = mlx.weight @down.ranks2 : tensor<2x2xf32>
// CHECK-NEXT:    %downT = mlx.transpose %down [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %y = mlx.matmul %a, %downT : tensor<?x2xf32>, tensor<2x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    %{{.*}} = mlx.all_sum %y : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    func.return %{{.*}} : tensor<?x2xf32>
mlx.global @up "parameter" : tensor<4x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
mlx.global @down "parameter" : tensor<2x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
func.func @mlp(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %up = mlx.weight @up : tensor<4x2xf32>
  %upT = mlx.transpose %up [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %h = mlx.matmul %x, %upT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
  %a = mlx.sigmoid %h : tensor<?x4xf32> -> tensor<?x4xf32>
  %down = mlx.weight @down : tensor<2x4xf32>
  %downT = mlx.transpose %down [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %y = mlx.matmul %a, %downT : tensor<?x4xf32>, tensor<4x2xf32> -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// -----

// A merged gate+up projection (rows g0 g1 u0 u1): each rank keeps its share of each
// segment (rank 0: g0 u0, rank 1: g1 u1), and the split point is halved.
// CHECK:      mlx.global @"gate+up.ranks2" "parameter" ranks 2 : tensor<2x2xf32> = dense<{{\[}}{{\[}}[1.000000e+00, 1.000000e+00], [3.000000e+00, 3.000000e+00]], {{\[}}[2.000000e+00, 2.000000e+00], [4.000000e+00, 4.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-LABEL: func.func @merged
// CHECK:         %gate, %up = mlx.split %h at [1] axis 1 : tensor<?x2xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
// CHECK:         mlx.all_sum
mlx.global @"gate+up" "parameter" : tensor<4x2xf32> = dense<[[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]> : tensor<4x2xf32>
mlx.global @down "parameter" : tensor<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
func.func @merged(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = mlx.weight @"gate+up" : tensor<4x2xf32>
  %wT = mlx.transpose %w [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %h = mlx.matmul %x, %wT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
  %gate, %up = mlx.split %h at [2] axis 1 : tensor<?x4xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  %a = mlx.multiply %gate, %up : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  %down = mlx.weight @down : tensor<2x2xf32>
  %downT = mlx.transpose %down [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %y = mlx.matmul %a, %downT : tensor<?x2xf32>, tensor<2x2xf32> -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// -----

// Attention by heads: q [B, 4 heads, S, 2] and the KV cache input [B, 2 heads, P, 2]
// become 2 and 1 heads per rank; the reshape back to features is halved.
// CHECK-LABEL: func.func @attention(%x: tensor<?x?x8xf32>, %kv: tensor<?x1x?x2xf32>) -> (tensor<?x?x8xf32>, tensor<?x1x?x2xf32>) {
// CHECK:         %q = mlx.reshape %qf [%b, %s, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
// CHECK:         %k = mlx.reshape %kf [%b, %s, 1, 2] : tensor<?x?x2xf32> -> tensor<?x?x1x2xf32>
// CHECK:         %o = mlx.scaled_dot_product_attention %qh, %kh, %kh scale 1.000000e+00 : tensor<?x2x?x2xf32>, tensor<?x1x?x2xf32>, tensor<?x1x?x2xf32> -> tensor<?x2x?x2xf32>
// CHECK:         %of = mlx.reshape %ot [%b, %s, 4] : tensor<?x?x2x2xf32> -> tensor<?x?x4xf32>
// CHECK:         %y = mlx.matmul %of, %woT : tensor<?x?x4xf32>, tensor<4x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = mlx.all_sum %y
// CHECK:         func.return %[[SUM]], %kh : tensor<?x?x8xf32>, tensor<?x1x?x2xf32>
mlx.global @wq "parameter" : tensor<8x8xf32> = dense<0.5> : tensor<8x8xf32>
mlx.global @wk "parameter" : tensor<4x8xf32> = dense<0.25> : tensor<4x8xf32>
mlx.global @wo "parameter" : tensor<8x8xf32> = dense<1.0> : tensor<8x8xf32>
func.func @attention(%x: tensor<?x?x8xf32>, %kv: tensor<?x2x?x2xf32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x2xf32>) {
  %b = mlx.dim %x axis 0 : tensor<?x?x8xf32>
  %s = mlx.dim %x axis 1 : tensor<?x?x8xf32>
  %wq = mlx.weight @wq : tensor<8x8xf32>
  %wqT = mlx.transpose %wq [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %qf = mlx.matmul %x, %wqT : tensor<?x?x8xf32>, tensor<8x8xf32> -> tensor<?x?x8xf32>
  %q = mlx.reshape %qf [%b, %s, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
  %qh = mlx.transpose %q [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
  %wk = mlx.weight @wk : tensor<4x8xf32>
  %wkT = mlx.transpose %wk [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %kf = mlx.matmul %x, %wkT : tensor<?x?x8xf32>, tensor<8x4xf32> -> tensor<?x?x4xf32>
  %k = mlx.reshape %kf [%b, %s, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
  %kt = mlx.transpose %k [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
  %kh = mlx.concatenate %kv, %kt axis 2 : tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32> -> tensor<?x2x?x2xf32>
  %o = mlx.scaled_dot_product_attention %qh, %kh, %kh scale 1.0 : tensor<?x4x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32> -> tensor<?x4x?x2xf32>
  %ot = mlx.transpose %o [0, 2, 1, 3] : tensor<?x4x?x2xf32> -> tensor<?x?x4x2xf32>
  %of = mlx.reshape %ot [%b, %s, 8] : tensor<?x?x4x2xf32> -> tensor<?x?x8xf32>
  %wo = mlx.weight @wo : tensor<8x8xf32>
  %woT = mlx.transpose %wo [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %y = mlx.matmul %of, %woT : tensor<?x?x8xf32>, tensor<8x8xf32> -> tensor<?x?x8xf32>
  func.return %y, %kh : tensor<?x?x8xf32>, tensor<?x2x?x2xf32>
}

// -----

// What the pass cannot prove safe stays whole, with a remark on the product: a softmax
// over the features mixes every rank's share (alone, and planned with its neighbour); and a function input is split only when
// the function returns it split too (a carried cache), never one the caller passes whole.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     ranks2
// CHECK-NOT:     mlx.all_sum
// CHECK:         func.return %z
mlx.global @up "parameter" : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32>
mlx.global @down "parameter" : tensor<2x4xf32> = dense<1.0> : tensor<2x4xf32>
func.func @softmax(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %up = mlx.weight @up : tensor<4x2xf32>
  %upT = mlx.transpose %up [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  // expected-remark @+1 {{the product by @up stays replicated (as the row product of a pair: %x would be split, and the caller passes it whole; with its neighbour: mlx.softmax has no rule for a split operand)}}
  %h = mlx.matmul %x, %upT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
  %a = mlx.softmax %h axes [1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %down = mlx.weight @down : tensor<2x4xf32>
  %downT = mlx.transpose %down [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  // expected-remark @+1 {{shard-tensor-parallel: the product by @down stays replicated (as the row product of a pair: mlx.softmax has no rule for a split operand; with its neighbour: mlx.softmax has no rule for a split operand)}}
  %y = mlx.matmul %a, %downT : tensor<?x4xf32>, tensor<4x2xf32> -> tensor<?x2xf32>
  %z = mlx.softmax %y axes [1] : tensor<?x2xf32> -> tensor<?x2xf32>
  func.return %z : tensor<?x2xf32>
}

// -----

// The embedding and a tied LM head, both by vocabulary: each rank holds rows [2r, 2r+2)
// of the one table. A lookup finds the ids in its own rows (its first row is a global
// split over ranks: 0 on rank 0, 2 on rank 1), zeros the others, and an all_sum puts
// the rows together; the head computes its share of the logits and an all_gather joins
// them.
// CHECK:      mlx.global @embed.ranks2 "parameter" ranks 2 : tensor<2x2xf32> = dense<{{\[}}{{\[}}[1.000000e+00, 1.000000e+00], [2.000000e+00, 2.000000e+00]], {{\[}}[3.000000e+00, 3.000000e+00], [4.000000e+00, 4.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-NEXT: mlx.global @embed.first_row "constant" ranks 2 : tensor<i64> = dense<[0, 2]> : tensor<2xi64>
// CHECK-NOT:  mlx.global @embed "parameter"
// CHECK-LABEL: func.func @tied(%ids: tensor<?xi64>) -> tensor<?x4xf32> {
// CHECK:         mlx.weight @embed.ranks2 : tensor<2x2xf32>
// CHECK:         %[[TABLE:.*]] = mlx.weight @embed.ranks2 : tensor<2x2xf32>
// CHECK:         %[[FIRST:.*]] = mlx.weight @embed.first_row : tensor<i64>
// CHECK-NEXT:    %[[LOCAL:.*]] = mlx.subtract %ids, %[[FIRST]]
// CHECK:         %[[MINE:.*]] = mlx.bitwise_and
// CHECK-NEXT:    %[[SAFE:.*]] = mlx.where %[[MINE]], %[[LOCAL]]
// CHECK-NEXT:    %[[ROWS:.*]] = mlx.take %[[TABLE]], %[[SAFE]] axis 0 : tensor<2x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
// CHECK:         %[[MASKED:.*]] = mlx.where %{{.*}}, %[[ROWS]], %{{.*}} : tensor<?x1xi1>, tensor<?x2xf32>, tensor<f32> -> tensor<?x2xf32>
// CHECK-NEXT:    %[[X:.*]] = mlx.all_sum %[[MASKED]] : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK:         %[[LOGITS:.*]] = mlx.matmul %[[X]], %{{.*}} : tensor<?x2xf32>, tensor<2x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    %[[ALL:.*]] = mlx.all_gather %[[LOGITS]] axis 1 ranks 2 : tensor<?x2xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %[[ALL]] : tensor<?x4xf32>
mlx.global @embed "parameter" : tensor<4x2xf32> = dense<[[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]> : tensor<4x2xf32>
func.func @tied(%ids: tensor<?xi64>) -> tensor<?x4xf32> {
  %e = mlx.weight @embed : tensor<4x2xf32>
  %x = mlx.take %e, %ids axis 0 : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %eT = mlx.transpose %e [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %logits = mlx.matmul %x, %eT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
  func.return %logits : tensor<?x4xf32>
}

// -----

// A parallel block (Phi, Cohere): one merged product computes both pairs' inputs, and
// only the two pairs planned together split it whole. Rank r holds the r-th half of
// each piece: rank 0 rows 0-1 and 4-5 of @wm. A row product with a bias (addmm) adds
// the bias once, after the all_sum.
// CHECK:      mlx.global @wm.ranks2 "parameter" ranks 2 : tensor<4x4xf32> = dense<{{\[}}{{\[}}[0.000000e+00, {{.*}}], [1.000000e+00, {{.*}}], [4.000000e+00, {{.*}}], [5.000000e+00, {{.*}}]], {{\[}}[2.000000e+00, {{.*}}], [3.000000e+00, {{.*}}], [6.000000e+00, {{.*}}], [7.000000e+00, {{.*}}]]]>
// CHECK-NEXT: mlx.global @wa.ranks2 "parameter" ranks 2 : tensor<4x2xf32>
// CHECK-NEXT: mlx.global @ba "parameter" : tensor<4xf32>
// CHECK-NEXT: mlx.global @wb.ranks2 "parameter" ranks 2 : tensor<4x2xf32>
// CHECK-LABEL: func.func @parallel
// CHECK:         %pa, %pb = mlx.split %h at [2] axis 1 : tensor<?x4xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
// CHECK:         %[[YA:.*]] = mlx.matmul %ga, %waT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = mlx.all_sum %[[YA]]
// CHECK-NEXT:    %[[BIASED:.*]] = mlx.add %[[SUM]], %ba : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
// CHECK:         %[[YB:.*]] = mlx.matmul %pb, %wbT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = mlx.all_sum %[[YB]]
// CHECK-NEXT:    mlx.add %[[BIASED]], %[[SUMB]]
mlx.global @wm "parameter" : tensor<8x4xf32> = dense<[[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0], [6.0, 6.0, 6.0, 6.0], [7.0, 7.0, 7.0, 7.0]]> : tensor<8x4xf32>
mlx.global @wa "parameter" : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
mlx.global @ba "parameter" : tensor<4xf32> = dense<0.5> : tensor<4xf32>
mlx.global @wb "parameter" : tensor<4x4xf32> = dense<2.0> : tensor<4x4xf32>
func.func @parallel(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %wm = mlx.weight @wm : tensor<8x4xf32>
  %wmT = mlx.transpose %wm [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %h = mlx.matmul %x, %wmT : tensor<?x4xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  %pa, %pb = mlx.split %h at [4] axis 1 : tensor<?x8xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
  %ga = mlx.tanh %pa : tensor<?x4xf32> -> tensor<?x4xf32>
  %wa = mlx.weight @wa : tensor<4x4xf32>
  %waT = mlx.transpose %wa [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %ba = mlx.weight @ba : tensor<4xf32>
  %ya = mlx.addmm %ba, %ga, %waT : tensor<4xf32>, tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  %wb = mlx.weight @wb : tensor<4x4xf32>
  %wbT = mlx.transpose %wb [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %yb = mlx.matmul %pb, %wbT : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  %y = mlx.add %ya, %yb : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

// The LM head through elementwise ops (Cohere's logit scale): the all_gather follows
// the product, and the scale multiplies the whole logits.
// CHECK-LABEL: func.func @scaled_head
// CHECK:         %[[LOGITS:.*]] = mlx.matmul %x, %{{.*}} : tensor<?x2xf32>, tensor<2x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT:    %[[ALL:.*]] = mlx.all_gather %[[LOGITS]] axis 1 ranks 2 : tensor<?x2xf32> -> tensor<?x4xf32>
// CHECK:         mlx.multiply %[[ALL]], %scale : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
mlx.global @head "parameter" : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32>
mlx.global @scale "parameter" : tensor<f32> = dense<0.5> : tensor<f32>
func.func @scaled_head(%x: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %w = mlx.weight @head : tensor<4x2xf32>
  %wT = mlx.transpose %w [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %logits = mlx.matmul %x, %wT : tensor<?x2xf32>, tensor<2x4xf32> -> tensor<?x4xf32>
  %scale = mlx.weight @scale : tensor<f32>
  %scaled = mlx.multiply %logits, %scale : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  func.return %scaled : tensor<?x4xf32>
}
