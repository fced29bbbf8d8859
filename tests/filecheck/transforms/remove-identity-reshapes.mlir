// remove-identity-reshapes: a reshape or broadcast_to whose sizes spell its input's own
// shape (literals for static dims, `mlx.dim` of the input at that axis for dynamic ones)
// is its input. Sizes that merely have the right type are not enough.
// RUN: mlx-opt %s -p remove-identity-reshapes | filecheck %s

// CHECK-LABEL: func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
// CHECK-NEXT:    %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
// CHECK-NEXT:    func.return %x, %x : tensor<2x?x4xf32>, tensor<2x?x4xf32>
func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
  %c = mlx.reshape %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  %d = mlx.broadcast_to %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  func.return %c, %d : tensor<2x?x4xf32>, tensor<2x?x4xf32>
}

// Static sizes, and dims read with negative axes.
// CHECK-LABEL: func.func @static_and_negative_axis(%x: tensor<2x3xf32>, %y: tensor<?x?xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>) {
// CHECK-NEXT:    %r = mlx.dim %y axis -2 : tensor<?x?xf32>
// CHECK-NEXT:    %s = mlx.dim %y axis -1 : tensor<?x?xf32>
// CHECK-NEXT:    func.return %x, %x, %y : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>
func.func @static_and_negative_axis(%x: tensor<2x3xf32>, %y: tensor<?x?xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>) {
  %a = mlx.reshape %x [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.broadcast_to %x [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  %r = mlx.dim %y axis -2 : tensor<?x?xf32>
  %s = mlx.dim %y axis -1 : tensor<?x?xf32>
  %c = mlx.reshape %y [%r, %s] : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>
}

// Kept: same type, but the dims are swapped ([cols, rows] is a real reshape).
// CHECK-LABEL: func.func @swapped_dims(%y: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %r = mlx.dim %y axis 0 : tensor<?x?xf32>
// CHECK-NEXT:    %s = mlx.dim %y axis 1 : tensor<?x?xf32>
// CHECK-NEXT:    %c = mlx.reshape %y [%s, %r] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %c : tensor<?x?xf32>
func.func @swapped_dims(%y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = mlx.dim %y axis 0 : tensor<?x?xf32>
  %s = mlx.dim %y axis 1 : tensor<?x?xf32>
  %c = mlx.reshape %y [%s, %r] : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// Kept: the dynamic size is another value's dim.
// CHECK-LABEL: func.func @other_value(%x: tensor<?x4xf32>, %z: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT:    %n = mlx.dim %z axis 0 : tensor<?x4xf32>
// CHECK-NEXT:    %c = mlx.reshape %x [%n, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %c : tensor<?x4xf32>
func.func @other_value(%x: tensor<?x4xf32>, %z: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %n = mlx.dim %z axis 0 : tensor<?x4xf32>
  %c = mlx.reshape %x [%n, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}

// Kept: real reshapes and broadcasts.
// CHECK-LABEL: func.func @real_reshapes(%x: tensor<2x3xf32>, %v: tensor<1x3xf32>) -> (tensor<3x2xf32>, tensor<4x3xf32>) {
// CHECK-NEXT:    %a = mlx.reshape %x [3, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %b = mlx.broadcast_to %v [4, 3] : tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<3x2xf32>, tensor<4x3xf32>
func.func @real_reshapes(%x: tensor<2x3xf32>, %v: tensor<1x3xf32>) -> (tensor<3x2xf32>, tensor<4x3xf32>) {
  %a = mlx.reshape %x [3, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = mlx.broadcast_to %v [4, 3] : tensor<1x3xf32> -> tensor<4x3xf32>
  func.return %a, %b : tensor<3x2xf32>, tensor<4x3xf32>
}
