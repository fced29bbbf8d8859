// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s

// Round trips of scatter (a tensor or a Scalar src, with and without reduce) and
// scatter_reduce (each reduction, with and without include_self).

// CHECK-LABEL: func.func @scatters(%x: tensor<5x?xf32>, %i: tensor<3x?xi64>, %s: tensor<4x?xf32>, %c: f64) -> tensor<5x?xf32> {
// CHECK-NEXT:    %src = aten.scatter %x, %i, %s dim 0 : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %value = aten.scatter %x, %i, %c dim -1 : tensor<5x?xf32>, tensor<3x?xi64>, f64 -> tensor<5x?xf32>
// CHECK-NEXT:    %add = aten.scatter %x, %i, %s dim 0 reduce "add" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %mul = aten.scatter %x, %i, %c dim 1 reduce "multiply" : tensor<5x?xf32>, tensor<3x?xi64>, f64 -> tensor<5x?xf32>
// CHECK-NEXT:    %sum = aten.scatter_reduce %x, %i, %s dim 0 reduce "sum" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %prod = aten.scatter_reduce %x, %i, %s dim 0 reduce "prod" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %mean = aten.scatter_reduce %x, %i, %s dim 1 reduce "mean" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %amax = aten.scatter_reduce %x, %i, %s dim 0 reduce "amax" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    %amin = aten.scatter_reduce %x, %i, %s dim -2 reduce "amin" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT:    func.return %src : tensor<5x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @scatters(%x: tensor<5x?xf32>, %i: tensor<3x?xi64>, %s: tensor<4x?xf32>, %c: f64) -> tensor<5x?xf32> {
  %src = aten.scatter %x, %i, %s dim 0 : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %value = aten.scatter %x, %i, %c dim -1 : tensor<5x?xf32>, tensor<3x?xi64>, f64 -> tensor<5x?xf32>
  %add = aten.scatter %x, %i, %s dim 0 reduce "add" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %mul = aten.scatter %x, %i, %c dim 1 reduce "multiply" : tensor<5x?xf32>, tensor<3x?xi64>, f64 -> tensor<5x?xf32>
  %sum = aten.scatter_reduce %x, %i, %s dim 0 reduce "sum" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %prod = aten.scatter_reduce %x, %i, %s dim 0 reduce "prod" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %mean = aten.scatter_reduce %x, %i, %s dim 1 reduce "mean" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %amax = aten.scatter_reduce %x, %i, %s dim 0 reduce "amax" : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  %amin = aten.scatter_reduce %x, %i, %s dim -2 reduce "amin" include_self : tensor<5x?xf32>, tensor<3x?xi64>, tensor<4x?xf32> -> tensor<5x?xf32>
  func.return %src : tensor<5x?xf32>
}
