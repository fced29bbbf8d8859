// cpu-rope-pairs (CPU target): each mlx.rope as rotated pairs of a reshape. MLX's CPU has
// no rope kernel and composes mx.fast.rope from 12 graph nodes a call; here the angle
// table is (arange(T) + offset) * scale times the inverse frequencies (a constant: from
// `base`, or 1/freqs of a constant), its cosine and sine; each rope reshapes x to
// [..., 2, half] (rotate-half) or [..., half, 2] (traditional), reverses that size-2 axis
// (a view) for the partners and computes x * cos + partners * (sin * [-1, 1]). The same
// arithmetic as MLX's composition, bit for bit (tests/test_cpu_target.py). After cse the
// ropes at the same positions share one table.
// RUN: mlx-opt %s -p cpu-rope-pairs,cse | filecheck %s

// A decode step's q and k: one table for both.
// CHECK-LABEL: func.func @decode(
// CHECK-NEXT:    %[[T:.*]] = mlx.arange [0, 1, 1] : tensor<1xf32>
// CHECK-NEXT:    %[[OFF:.*]] = mlx.from_index %pos : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = mlx.add %[[T]], %[[OFF]] : tensor<1xf32>, tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %[[INV:.*]] = mlx.constant dense<[1.000000e+00, 0.562341332, 0.316227764, {{.*}}, 0.000177827911]> : tensor<16xf32>
// CHECK-NEXT:    %[[PE:.*]] = mlx.expand_dims %[[P]] [-1] : tensor<1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[A:.*]] = mlx.multiply %[[PE]], %[[INV]] : tensor<1x1xf32>, tensor<16xf32> -> tensor<1x16xf32>
// CHECK-NEXT:    %[[COS:.*]] = mlx.cos %[[A]] : tensor<1x16xf32> -> tensor<1x16xf32>
// CHECK-NEXT:    %[[SIN:.*]] = mlx.sin %[[A]] : tensor<1x16xf32> -> tensor<1x16xf32>
// CHECK-NEXT:    %[[SIGNS:.*]] = mlx.constant dense<{{\[}}[-1.000000e+00], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT:    %[[C:.*]] = mlx.expand_dims %[[COS]] [-2] : tensor<1x16xf32> -> tensor<1x1x16xf32>
// CHECK-NEXT:    %[[S:.*]] = mlx.expand_dims %[[SIN]] [-2] : tensor<1x16xf32> -> tensor<1x1x16xf32>
// CHECK-NEXT:    %[[SS:.*]] = mlx.multiply %[[S]], %[[SIGNS]] : tensor<1x1x16xf32>, tensor<2x1xf32> -> tensor<1x2x16xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.dim %q axis 0 : tensor<?x8x1x32xf32>
// CHECK-NEXT:    %[[X:.*]] = mlx.reshape %q [%[[B]], 8, 1, 2, 16] : tensor<?x8x1x32xf32> -> tensor<?x8x1x2x16xf32>
// CHECK-NEXT:    %[[Y:.*]] = mlx.slice %[[X]] [0, 0, 0, 1, 0] to [%[[B]], 8, 1, -3, 16] step [1, 1, 1, -1, 1] : tensor<?x8x1x2x16xf32> -> tensor<?x8x1x2x16xf32>
// CHECK-NEXT:    %[[XC:.*]] = mlx.multiply %[[X]], %[[C]] : tensor<?x8x1x2x16xf32>, tensor<1x1x16xf32> -> tensor<?x8x1x2x16xf32>
// CHECK-NEXT:    %[[YS:.*]] = mlx.multiply %[[Y]], %[[SS]] : tensor<?x8x1x2x16xf32>, tensor<1x2x16xf32> -> tensor<?x8x1x2x16xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.add %[[XC]], %[[YS]] : tensor<?x8x1x2x16xf32>, tensor<?x8x1x2x16xf32> -> tensor<?x8x1x2x16xf32>
// CHECK-NEXT:    %rq = mlx.reshape %[[R]] [%[[B]], 8, 1, 32] : tensor<?x8x1x2x16xf32> -> tensor<?x8x1x32xf32>
// CHECK-NOT:     mlx.cos
// CHECK:         mlx.reshape %k
// CHECK-NEXT:    mlx.slice
// CHECK-NEXT:    mlx.multiply %{{.*}}, %[[C]]
// CHECK-NEXT:    mlx.multiply %{{.*}}, %[[SS]]
// CHECK-NEXT:    mlx.add
// CHECK-NEXT:    %rk = mlx.reshape
// CHECK-NOT:     mlx.rope
func.func @decode(%q: tensor<?x8x1x32xf32>, %k: tensor<?x4x1x32xf32>, %pos: index) -> (tensor<?x8x1x32xf32>, tensor<?x4x1x32xf32>) {
  %rq = mlx.rope %q dims 32 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<?x8x1x32xf32> -> tensor<?x8x1x32xf32>
  %rk = mlx.rope %k dims 32 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<?x4x1x32xf32> -> tensor<?x4x1x32xf32>
  func.return %rq, %rk : tensor<?x8x1x32xf32>, tensor<?x4x1x32xf32>
}

// Interleaved pairs, a start per batch row plus a static offset, a scale, freqs of an
// argument, bf16: the table in float32, cast to bf16; pairs on the last axis.
// CHECK-LABEL: func.func @traditional_rows_bf16(
// CHECK:         %[[T:.*]] = mlx.arange [0, %{{.*}}, 1] : tensor<?xf32>
// CHECK-NEXT:    %[[K:.*]] = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ROWS:.*]] = mlx.astype %rows : tensor<?xi64> -> tensor<?xf32>
// CHECK-NEXT:    %[[N:.*]] = mlx.dim %[[ROWS]] axis 0
// CHECK-NEXT:    %[[ROWS3:.*]] = mlx.reshape %[[ROWS]] [%[[N]], 1, 1] : tensor<?xf32> -> tensor<?x1x1xf32>
// CHECK-NEXT:    %[[START:.*]] = mlx.add %[[ROWS3]], %[[K]] : tensor<?x1x1xf32>, tensor<f32> -> tensor<?x1x1xf32>
// CHECK-NEXT:    %[[P:.*]] = mlx.add %[[T]], %[[START]] : tensor<?xf32>, tensor<?x1x1xf32> -> tensor<?x1x?xf32>
// CHECK-NEXT:    %[[HALF:.*]] = mlx.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %{{.*}} = mlx.multiply %[[P]], %[[HALF]] : tensor<?x1x?xf32>, tensor<f32> -> tensor<?x1x?xf32>
// CHECK-NEXT:    %{{.*}} = mlx.reciprocal %f : tensor<4xf32> -> tensor<4xf32>
// CHECK:         mlx.cos
// CHECK-NEXT:    mlx.astype %{{.*}} : tensor<?x1x?x4xf32> -> tensor<?x1x?x4xbf16>
// CHECK:         mlx.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xbf16>
// CHECK:         %[[X:.*]] = mlx.reshape %x [%{{.*}}, 2, %{{.*}}, 4, 2] : tensor<?x2x?x8xbf16> -> tensor<?x2x?x4x2xbf16>
// CHECK-NEXT:    mlx.slice %[[X]] [0, 0, 0, 0, 1] to [%{{.*}}, 2, %{{.*}}, 4, -3] step [1, 1, 1, 1, -1]
// CHECK-NOT:     mlx.rope
func.func @traditional_rows_bf16(%x: tensor<?x2x?x8xbf16>, %f: tensor<4xf32>, %rows: tensor<?xi64>) -> tensor<?x2x?x8xbf16> {
  %r = mlx.rope %x dims 8 traditional freqs %f : tensor<4xf32> scale 5.000000e-01 offset [3] rows %rows : tensor<?xi64> : tensor<?x2x?x8xbf16> -> tensor<?x2x?x8xbf16>
  func.return %r : tensor<?x2x?x8xbf16>
}

// freqs of a constant: its inverse is computed by the pass (1 / [1, 10, 100, 1000]).
// CHECK-LABEL: func.func @constant_freqs(
// CHECK-NOT:     mlx.reciprocal
// CHECK:         mlx.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf32>
// CHECK-NOT:     mlx.reciprocal
// CHECK:         func.return
func.func @constant_freqs(%x: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %f = mlx.constant dense<[1.0, 10.0, 100.0, 1000.0]> : tensor<4xf32>
  %r = mlx.rope %x dims 8 freqs %f : tensor<4xf32> scale 1.000000e+00 offset [0] : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  func.return %r : tensor<1x2x?x8xf32>
}

// Partial rotary (dims 8 of 16): the first 8 features rotated, the rest concatenated.
// CHECK-LABEL: func.func @partial(
// CHECK:         %[[HEAD:.*]] = mlx.slice %x [0, 0, 0] to [3, %[[L:.*]], 8] step [1, 1, 1] : tensor<3x?x16xf32> -> tensor<3x?x8xf32>
// CHECK-NEXT:    %[[TAIL:.*]] = mlx.slice %x [0, 0, 8] to [3, %[[L]], 16] step [1, 1, 1] : tensor<3x?x16xf32> -> tensor<3x?x8xf32>
// CHECK:         mlx.reshape %[[HEAD]] [3, %{{.*}}, 2, 4] : tensor<3x?x8xf32> -> tensor<3x?x2x4xf32>
// CHECK:         %[[ROTATED:.*]] = mlx.reshape %{{.*}} [3, %{{.*}}, 8] : tensor<3x?x2x4xf32> -> tensor<3x?x8xf32>
// CHECK-NEXT:    %r = mlx.concatenate %[[ROTATED]], %[[TAIL]] axis 2 : tensor<3x?x8xf32>, tensor<3x?x8xf32> -> tensor<3x?x16xf32>
func.func @partial(%x: tensor<3x?x16xf32>) -> tensor<3x?x16xf32> {
  %r = mlx.rope %x dims 8 base 1.000000e+04 scale 1.000000e+00 offset [0] : tensor<3x?x16xf32> -> tensor<3x?x16xf32>
  func.return %r : tensor<3x?x16xf32>
}

// A rank-2 input with one offset per row is kept: its rows are positions, not a batch.
// CHECK-LABEL: func.func @rank2_rows_kept(
// CHECK-NEXT:    %r = mlx.rope %x dims 8 base 1.000000e+04 scale 1.000000e+00 offset [0] rows %rows
func.func @rank2_rows_kept(%x: tensor<?x8xf32>, %rows: tensor<?xi64>) -> tensor<?x8xf32> {
  %r = mlx.rope %x dims 8 base 1.000000e+04 scale 1.000000e+00 offset [0] rows %rows : tensor<?xi64> : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}
