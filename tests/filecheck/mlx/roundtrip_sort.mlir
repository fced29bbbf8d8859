// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s

// Round trips of mlx.sort and mlx.argsort.

// CHECK-LABEL: func.func @sorting(%x: tensor<3x?xf32>, %b: tensor<7xi1>) -> tensor<3x?xf32> {
// CHECK-NEXT:    %sorted = mlx.sort %x axis 1 : tensor<3x?xf32> -> tensor<3x?xf32>
// CHECK-NEXT:    %order = mlx.argsort %x axis -2 : tensor<3x?xf32> -> tensor<3x?xui32>
// CHECK-NEXT:    %bools = mlx.argsort %b axis 0 : tensor<7xi1> -> tensor<7xi64>
// CHECK-NEXT:    func.return %sorted : tensor<3x?xf32>
// CHECK-NEXT:  }
func.func @sorting(%x: tensor<3x?xf32>, %b: tensor<7xi1>) -> tensor<3x?xf32> {
  %sorted = mlx.sort %x axis 1 : tensor<3x?xf32> -> tensor<3x?xf32>
  %order = mlx.argsort %x axis -2 : tensor<3x?xf32> -> tensor<3x?xui32>
  %bools = mlx.argsort %b axis 0 : tensor<7xi1> -> tensor<7xi64>
  func.return %sorted : tensor<3x?xf32>
}
