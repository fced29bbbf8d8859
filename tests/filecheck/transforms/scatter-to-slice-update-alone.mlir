// scatter-to-slice-update alone (scatter-to-slice-update.mlir runs dce after it): the
// cache write becomes one dynamic_slice_update of k itself at %past; the index and the
// update the scatter read are left in place, unread, for dce to remove.
// RUN: mlx-opt %s -p scatter-to-slice-update | filecheck %s

// CHECK-LABEL: func.func @cache_write(
// CHECK-NEXT:    %r = mlx.arange [0, 3, 1] : tensor<3xi64>
// CHECK-NEXT:    %i = mlx.add %past, %r : tensor<i64>, tensor<3xi64> -> tensor<3xi64>
// CHECK-NEXT:    %t = mlx.transpose %k [2, 0, 1, 3] : tensor<1x2x3x4xf32> -> tensor<3x1x2x4xf32>
// CHECK-NEXT:    %u = mlx.expand_dims %t [3] : tensor<3x1x2x4xf32> -> tensor<3x1x2x1x4xf32>
// CHECK-NEXT:    %w = mlx.dynamic_slice_update %kv, %k start %past axes [2] : tensor<1x2x8x4xf32>, tensor<1x2x3x4xf32>, tensor<i64> -> tensor<1x2x8x4xf32>
// CHECK-NEXT:    func.return %w : tensor<1x2x8x4xf32>
// CHECK-NOT:     mlx.scatter
func.func @cache_write(%kv: tensor<1x2x8x4xf32>, %k: tensor<1x2x3x4xf32>, %past: tensor<i64>) -> tensor<1x2x8x4xf32> {
  %r = mlx.arange [0, 3, 1] : tensor<3xi64>
  %i = mlx.add %past, %r : tensor<i64>, tensor<3xi64> -> tensor<3xi64>
  %t = mlx.transpose %k [2, 0, 1, 3] : tensor<1x2x3x4xf32> -> tensor<3x1x2x4xf32>
  %u = mlx.expand_dims %t [3] : tensor<3x1x2x4xf32> -> tensor<3x1x2x1x4xf32>
  %w = mlx.scatter %kv[%i] axes [2], %u : tensor<1x2x8x4xf32>, (tensor<3xi64>), tensor<3x1x2x1x4xf32> -> tensor<1x2x8x4xf32>
  func.return %w : tensor<1x2x8x4xf32>
}
