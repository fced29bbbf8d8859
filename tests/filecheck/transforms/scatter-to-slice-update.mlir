// scatter-to-slice-update: index_copy's scatter at start + arange(n) along one axis (a fixed KV cache written at its length) becomes one dynamic_slice_update at start, its update the scatter's with the slice axis dropped and the index axis moved back (composed with the transpose before it); other scatters stay.
// RUN: mlx-opt %s -p scatter-to-slice-update,dce | filecheck %s

func.func @cache_write(%kv: tensor<1x2x8x4xf32>, %k: tensor<1x2x3x4xf32>, %past: tensor<i64>) -> tensor<1x2x8x4xf32> {
  %r = mlx.arange [0, 3, 1] : tensor<3xi64>
  %i = mlx.add %past, %r : tensor<i64>, tensor<3xi64> -> tensor<3xi64>
  %t = mlx.transpose %k [2, 0, 1, 3] : tensor<1x2x3x4xf32> -> tensor<3x1x2x4xf32>
  %u = mlx.expand_dims %t [3] : tensor<3x1x2x4xf32> -> tensor<3x1x2x1x4xf32>
  %w = mlx.scatter %kv[%i] axes [2], %u : tensor<1x2x8x4xf32>, (tensor<3xi64>), tensor<3x1x2x1x4xf32> -> tensor<1x2x8x4xf32>
  func.return %w : tensor<1x2x8x4xf32>
}
func.func @heads_last(%kv: tensor<?x2x?x4xf32>, %v: tensor<?x?x2x4xf32>, %past: tensor<i64>, %n: index) -> tensor<?x2x?x4xf32> {
  %r = mlx.arange [0, %n, 1] : tensor<?xi64>
  %i = mlx.add %r, %past : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  %t = mlx.transpose %v [1, 0, 2, 3] : tensor<?x?x2x4xf32> -> tensor<?x?x2x4xf32>
  %u = mlx.expand_dims %t [3] : tensor<?x?x2x4xf32> -> tensor<?x?x2x1x4xf32>
  %w = mlx.scatter %kv[%i] axes [-2], %u : tensor<?x2x?x4xf32>, (tensor<?xi64>), tensor<?x?x2x1x4xf32> -> tensor<?x2x?x4xf32>
  func.return %w : tensor<?x2x?x4xf32>
}
func.func @updates_from_elsewhere(%x: tensor<5x6xf32>, %u: tensor<2x1x6xf32>, %at: tensor<i32>) -> tensor<5x6xf32> {
  %r = mlx.arange [0, 2, 1] : tensor<2xi32>
  %i = mlx.add %at, %r : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
  %w = mlx.scatter %x[%i] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
  func.return %w : tensor<5x6xf32>
}
func.func @not_contiguous(%x: tensor<5x6xf32>, %u: tensor<2x1x6xf32>, %at: tensor<i32>, %i: tensor<2xi32>) -> (tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>) {
  %r = mlx.arange [0, 4, 2] : tensor<2xi32>
  %strided = mlx.add %at, %r : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
  %a = mlx.scatter %x[%strided] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
  %b = mlx.scatter %x[%i] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
  %one = mlx.arange [0, 2, 1] : tensor<2xi32>
  %at2 = mlx.add %at, %one : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
  %c = mlx.scatter %x[%at2] axes [0], %u reduce "add" : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
  func.return %a, %b, %c : tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>
}
func.func @part_of_a_row(%x: tensor<5x6xf32>, %u: tensor<2x1x4xf32>, %at: tensor<i32>) -> tensor<5x6xf32> {
  %r = mlx.arange [0, 2, 1] : tensor<2xi32>
  %i = mlx.add %at, %r : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
  %w = mlx.scatter %x[%i] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x4xf32> -> tensor<5x6xf32>
  func.return %w : tensor<5x6xf32>
}

// CHECK-LABEL: func.func @cache_write(%kv: tensor<1x2x8x4xf32>, %k: tensor<1x2x3x4xf32>, %past: tensor<i64>) -> tensor<1x2x8x4xf32> {
// CHECK-NEXT: %w = mlx.dynamic_slice_update %kv, %k start %past axes [2] : tensor<1x2x8x4xf32>, tensor<1x2x3x4xf32>, tensor<i64> -> tensor<1x2x8x4xf32>
// CHECK-NEXT: func.return %w : tensor<1x2x8x4xf32>
// CHECK-LABEL: func.func @heads_last(%kv: tensor<?x2x?x4xf32>, %v: tensor<?x?x2x4xf32>, %past: tensor<i64>, %n: index) -> tensor<?x2x?x4xf32> {
// CHECK-NEXT: %w = mlx.transpose %v [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-NEXT: %w_1 = mlx.dynamic_slice_update %kv, %w start %past axes [2] : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<i64> -> tensor<?x2x?x4xf32>
// CHECK-NEXT: func.return %w_1 : tensor<?x2x?x4xf32>
// CHECK-LABEL: func.func @updates_from_elsewhere(%x: tensor<5x6xf32>, %u: tensor<2x1x6xf32>, %at: tensor<i32>) -> tensor<5x6xf32> {
// CHECK-NEXT: %w = mlx.squeeze %u [1] : tensor<2x1x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %w_1 = mlx.dynamic_slice_update %x, %w start %at axes [0] : tensor<5x6xf32>, tensor<2x6xf32>, tensor<i32> -> tensor<5x6xf32>
// CHECK-NEXT: func.return %w_1 : tensor<5x6xf32>
// CHECK-LABEL: func.func @not_contiguous(%x: tensor<5x6xf32>, %u: tensor<2x1x6xf32>, %at: tensor<i32>, %i: tensor<2xi32>) -> (tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>) {
// CHECK-NEXT: %r = mlx.arange [0, 4, 2] : tensor<2xi32>
// CHECK-NEXT: %strided = mlx.add %at, %r : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT: %a = mlx.scatter %x[%strided] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %b = mlx.scatter %x[%i] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %one = mlx.arange [0, 2, 1] : tensor<2xi32>
// CHECK-NEXT: %at2 = mlx.add %at, %one : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT: %c = mlx.scatter %x[%at2] axes [0], %u reduce "add" : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT: func.return %a, %b, %c : tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>
// CHECK-LABEL: func.func @part_of_a_row(%x: tensor<5x6xf32>, %u: tensor<2x1x4xf32>, %at: tensor<i32>) -> tensor<5x6xf32> {
// CHECK-NEXT: %r = mlx.arange [0, 2, 1] : tensor<2xi32>
// CHECK-NEXT: %i = mlx.add %at, %r : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT: %w = mlx.scatter %x[%i] axes [0], %u : tensor<5x6xf32>, (tensor<2xi32>), tensor<2x1x4xf32> -> tensor<5x6xf32>
// CHECK-NEXT: func.return %w : tensor<5x6xf32>
