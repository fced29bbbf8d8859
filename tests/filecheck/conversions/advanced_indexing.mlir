// aten.index.Tensor (docs/semantics.md §2): one index is take; several are gather, then a transpose only when the indexed dims are adjacent, not leading, and the move is not only of size-1 dims, then a reshape to PyTorch's shape with runtime sizes for dynamic dims.
// RUN: mlx-opt %s -p lower-to-mlx | filecheck %s

func.func @one_index_is_take(%x: tensor<?x4xf32>, %i: tensor<3xi64>) -> tensor<?x3xf32> {
  %r = aten.index %x[%i] at [1] : tensor<?x4xf32>, (tensor<3xi64>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
func.func @prefix_no_transpose(%x: tensor<3x4x?xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>) -> tensor<5x?xf32> {
  %r = aten.index %x[%i, %j] at [0, 1] : tensor<3x4x?xf32>, (tensor<5xi64>, tensor<5xi64>) -> tensor<5x?xf32>
  func.return %r : tensor<5x?xf32>
}
func.func @non_adjacent_no_transpose(%x: tensor<3x?x4xf32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>) -> tensor<2x3x?xf32> {
  %r = aten.index %x[%i, %j] at [0, 2] : tensor<3x?x4xf32>, (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3x?xf32>
  func.return %r : tensor<2x3x?xf32>
}
func.func @inner_with_unit_leading_dim(%x: tensor<1x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<1x2xf32> {
  %r = aten.index %x[%i, %j] at [1, 2] : tensor<1x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<1x2xf32>
  func.return %r : tensor<1x2xf32>
}
func.func @inner_with_leading_dim(%x: tensor<?x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<?x2xf32> {
  %r = aten.index %x[%i, %j] at [1, 2] : tensor<?x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}

// CHECK-LABEL: func.func @one_index_is_take(%x: tensor<?x4xf32>, %i: tensor<3xi64>) -> tensor<?x3xf32> {
// CHECK-NEXT: %r = mlx.take %x, %i axis 1 : tensor<?x4xf32>, tensor<3xi64> -> tensor<?x3xf32>
// CHECK-NEXT: func.return %r : tensor<?x3xf32>
// CHECK-LABEL: func.func @prefix_no_transpose(%x: tensor<3x4x?xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>) -> tensor<5x?xf32> {
// CHECK-NEXT: %r = mlx.dim %x axis 2 : tensor<3x4x?xf32>
// CHECK-NEXT: %r_1 = mlx.gather %x[%i, %j] axes [0, 1] slice_sizes [1, 1, %r] : tensor<3x4x?xf32>, (tensor<5xi64>, tensor<5xi64>) -> tensor<5x1x1x?xf32>
// CHECK-NEXT: %r_2 = mlx.reshape %r_1 [5, %r] : tensor<5x1x1x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT: func.return %r_2 : tensor<5x?xf32>
// CHECK-LABEL: func.func @non_adjacent_no_transpose(%x: tensor<3x?x4xf32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>) -> tensor<2x3x?xf32> {
// CHECK-NEXT: %r = mlx.dim %x axis 1 : tensor<3x?x4xf32>
// CHECK-NEXT: %r_1 = mlx.gather %x[%i, %j] axes [0, 2] slice_sizes [1, %r, 1] : tensor<3x?x4xf32>, (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3x1x?x1xf32>
// CHECK-NEXT: %r_2 = mlx.reshape %r_1 [2, 3, %r] : tensor<2x3x1x?x1xf32> -> tensor<2x3x?xf32>
// CHECK-NEXT: func.return %r_2 : tensor<2x3x?xf32>
// CHECK-LABEL: func.func @inner_with_unit_leading_dim(%x: tensor<1x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<1x2xf32> {
// CHECK-NEXT: %r = mlx.gather %x[%i, %j] axes [1, 2] slice_sizes [1, 1, 1] : tensor<1x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
// CHECK-NEXT: %r_1 = mlx.reshape %r [1, 2] : tensor<2x1x1x1xf32> -> tensor<1x2xf32>
// CHECK-NEXT: func.return %r_1 : tensor<1x2xf32>
// CHECK-LABEL: func.func @inner_with_leading_dim(%x: tensor<?x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<?x2xf32> {
// CHECK-NEXT: %r = mlx.dim %x axis 0 : tensor<?x3x4xf32>
// CHECK-NEXT: %r_1 = mlx.gather %x[%i, %j] axes [1, 2] slice_sizes [%r, 1, 1] : tensor<?x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x?x1x1xf32>
// CHECK-NEXT: %r_2 = mlx.transpose %r_1 [1, 0, 2, 3] : tensor<2x?x1x1xf32> -> tensor<?x2x1x1xf32>
// CHECK-NEXT: %r_3 = mlx.reshape %r_2 [%r, 2] : tensor<?x2x1x1xf32> -> tensor<?x2xf32>
// CHECK-NEXT: func.return %r_3 : tensor<?x2xf32>
