// remove-identity-transposes: a transpose by the identity permutation is its input; one
// that only moves size-1 dims (the other dims keep their order) is a reshape of its
// input. A real permutation stays, and so does a size-1 move on a dynamic shape.
// RUN: mlx-opt %s -p remove-identity-transposes | filecheck %s

// CHECK-LABEL: func.func @identity(%x: tensor<2x3x4xf32>, %d: tensor<?x?xf16>) -> (tensor<2x3x4xf32>, tensor<?x?xf16>) {
// CHECK-NEXT:    func.return %x, %d : tensor<2x3x4xf32>, tensor<?x?xf16>
func.func @identity(%x: tensor<2x3x4xf32>, %d: tensor<?x?xf16>) -> (tensor<2x3x4xf32>, tensor<?x?xf16>) {
  %a = mlx.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %b = mlx.transpose %d [0, 1] : tensor<?x?xf16> -> tensor<?x?xf16>
  func.return %a, %b : tensor<2x3x4xf32>, tensor<?x?xf16>
}

// Only size-1 dims move: the data order is unchanged, a reshape says so. Swapping the
// two size-1 dims of %y gives a reshape to %y's own shape (remove-identity-reshapes
// drops that one).
// CHECK-LABEL: func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>, %y: tensor<1x3x1x5xf32>) -> (tensor<1x2x4xf32>, tensor<1x3x1x5xf32>, tensor<3x1x1x5xf32>) {
// CHECK-NEXT:    %a = mlx.reshape %x [1, 2, 4] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT:    %b = mlx.reshape %y [1, 3, 1, 5] : tensor<1x3x1x5xf32> -> tensor<1x3x1x5xf32>
// CHECK-NEXT:    %c = mlx.reshape %y [3, 1, 1, 5] : tensor<1x3x1x5xf32> -> tensor<3x1x1x5xf32>
// CHECK-NEXT:    func.return %a, %b, %c
func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>, %y: tensor<1x3x1x5xf32>) -> (tensor<1x2x4xf32>, tensor<1x3x1x5xf32>, tensor<3x1x1x5xf32>) {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
  %b = mlx.transpose %y [2, 1, 0, 3] : tensor<1x3x1x5xf32> -> tensor<1x3x1x5xf32>
  %c = mlx.transpose %y [1, 0, 2, 3] : tensor<1x3x1x5xf32> -> tensor<3x1x1x5xf32>
  func.return %a, %b, %c : tensor<1x2x4xf32>, tensor<1x3x1x5xf32>, tensor<3x1x1x5xf32>
}

// Kept: the non-size-1 dims change order (2 and 4 swap in %b, past the size-1 dim).
// CHECK-LABEL: func.func @real_transposes(%x: tensor<2x3xf32>, %y: tensor<2x1x4xf32>) -> (tensor<3x2xf32>, tensor<4x1x2xf32>) {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %b = mlx.transpose %y [2, 1, 0] : tensor<2x1x4xf32> -> tensor<4x1x2xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<3x2xf32>, tensor<4x1x2xf32>
func.func @real_transposes(%x: tensor<2x3xf32>, %y: tensor<2x1x4xf32>) -> (tensor<3x2xf32>, tensor<4x1x2xf32>) {
  %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = mlx.transpose %y [2, 1, 0] : tensor<2x1x4xf32> -> tensor<4x1x2xf32>
  func.return %a, %b : tensor<3x2xf32>, tensor<4x1x2xf32>
}

// Kept: a size-1 move on a shape with a dynamic dim (the reshape would need its size).
// CHECK-LABEL: func.func @unit_dim_dynamic(%x: tensor<?x1x4xf32>) -> tensor<1x?x4xf32> {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0, 2] : tensor<?x1x4xf32> -> tensor<1x?x4xf32>
// CHECK-NEXT:    func.return %a : tensor<1x?x4xf32>
func.func @unit_dim_dynamic(%x: tensor<?x1x4xf32>) -> tensor<1x?x4xf32> {
  %a = mlx.transpose %x [1, 0, 2] : tensor<?x1x4xf32> -> tensor<1x?x4xf32>
  func.return %a : tensor<1x?x4xf32>
}

// Kept: two transposes that compose to the identity are compose-transposes' business.
// CHECK-LABEL: func.func @composed_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %b = mlx.transpose %a [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %b : tensor<2x3xf32>
func.func @composed_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = mlx.transpose %a [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  func.return %b : tensor<2x3xf32>
}
