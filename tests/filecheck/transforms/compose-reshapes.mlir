// compose-reshapes: reshape(reshape(x)) -> reshape(x) with the outer sizes. The pass
// alone leaves the inner reshape, unused or not, in place.
// RUN: mlx-opt %s -p compose-reshapes | filecheck %s

// Runtime sizes: the outer reshape's sizes carry over as they are.
// CHECK-LABEL: func.func @reshapes(%x: tensor<2x?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT:    %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
// CHECK-NEXT:    %m = arith.muli %n, %n : index
// CHECK-NEXT:    %a = mlx.reshape %x [2, %n, 2, 2] : tensor<2x?x4xf32> -> tensor<2x?x2x2xf32>
// CHECK-NEXT:    %b = mlx.reshape %x [%m, 4] : tensor<2x?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %b : tensor<?x4xf32>
func.func @reshapes(%x: tensor<2x?x4xf32>) -> tensor<?x4xf32> {
  %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
  %m = arith.muli %n, %n : index
  %a = mlx.reshape %x [2, %n, 2, 2] : tensor<2x?x4xf32> -> tensor<2x?x2x2xf32>
  %b = mlx.reshape %a [%m, 4] : tensor<2x?x2x2xf32> -> tensor<?x4xf32>
  func.return %b : tensor<?x4xf32>
}

// Static sizes; the inner reshape, returned too, stays.
// CHECK-LABEL: func.func @static(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<6x4xf32>) {
// CHECK-NEXT:    %a = mlx.reshape %x [6, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %b = mlx.reshape %x [24] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %b, %a : tensor<24xf32>, tensor<6x4xf32>
func.func @static(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<6x4xf32>) {
  %a = mlx.reshape %x [6, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = mlx.reshape %a [24] : tensor<6x4xf32> -> tensor<24xf32>
  func.return %b, %a : tensor<24xf32>, tensor<6x4xf32>
}

// An outer size read off the inner result stays valid: the inner reshape stays for it.
// CHECK-LABEL: func.func @size_of_inner(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
// CHECK-NEXT:    %n = mlx.dim %x axis 0 : tensor<?x4xf32>
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %n4 = arith.muli %n, %c4 : index
// CHECK-NEXT:    %a = mlx.reshape %x [%n4] : tensor<?x4xf32> -> tensor<?xf32>
// CHECK-NEXT:    %k = mlx.dim %a axis 0 : tensor<?xf32>
// CHECK-NEXT:    %b = mlx.reshape %x [%k, 1] : tensor<?x4xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    func.return %b : tensor<?x1xf32>
func.func @size_of_inner(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
  %n = mlx.dim %x axis 0 : tensor<?x4xf32>
  %c4 = arith.constant 4 : index
  %n4 = arith.muli %n, %c4 : index
  %a = mlx.reshape %x [%n4] : tensor<?x4xf32> -> tensor<?xf32>
  %k = mlx.dim %a axis 0 : tensor<?xf32>
  %b = mlx.reshape %a [%k, 1] : tensor<?xf32> -> tensor<?x1xf32>
  func.return %b : tensor<?x1xf32>
}

// Kept: a reshape of a broadcast or of a transpose is no reshape chain (neither moves
// data the way a reshape does).
// CHECK-LABEL: func.func @not_a_reshape(%x: tensor<1x4xf32>) -> (tensor<8xf32>, tensor<4x1xf32>) {
// CHECK-NEXT:    %a = mlx.broadcast_to %x [2, 4] : tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %b = mlx.reshape %a [8] : tensor<2x4xf32> -> tensor<8xf32>
// CHECK-NEXT:    %c = mlx.transpose %x [1, 0] : tensor<1x4xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %d = mlx.reshape %c [4, 1] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %b, %d : tensor<8xf32>, tensor<4x1xf32>
func.func @not_a_reshape(%x: tensor<1x4xf32>) -> (tensor<8xf32>, tensor<4x1xf32>) {
  %a = mlx.broadcast_to %x [2, 4] : tensor<1x4xf32> -> tensor<2x4xf32>
  %b = mlx.reshape %a [8] : tensor<2x4xf32> -> tensor<8xf32>
  %c = mlx.transpose %x [1, 0] : tensor<1x4xf32> -> tensor<4x1xf32>
  %d = mlx.reshape %c [4, 1] : tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %b, %d : tensor<8xf32>, tensor<4x1xf32>
}
