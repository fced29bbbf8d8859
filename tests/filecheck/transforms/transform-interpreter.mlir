// transform-interpreter: docs/transform/canonicalize-decode.mlir canonicalizes the
// function @decode alone; @prefill keeps its identity cast and its transpose pair. The
// module's weights stay where they are and @decode still reads them.
// RUN: mlx-opt %s -p 'transform-interpreter{transform_file="%S/../../../docs/transform/canonicalize-decode.mlir"}' | filecheck %s

// CHECK:      mlx.global @w "parameter" : tensor<4x4xf32> = dense<1.000000e+00> : tensor<4x4xf32>
// CHECK-LABEL: func.func @prefill(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %1 = mlx.transpose %0 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %2 = mlx.transpose %1 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %2 : tensor<4x4xf32>
// CHECK-LABEL: func.func @decode(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %w = mlx.weight @w : tensor<4x4xf32>
// CHECK-NEXT:    %0 = mlx.add %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x4xf32>
mlx.global @w "parameter" : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
func.func @prefill(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = mlx.astype %x : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = mlx.transpose %0 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = mlx.transpose %1 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %2 : tensor<4x4xf32>
}
func.func @decode(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = mlx.weight @w : tensor<4x4xf32>
  %0 = mlx.astype %x : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = mlx.transpose %0 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = mlx.transpose %1 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %3 = mlx.add %2, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %3 : tensor<4x4xf32>
}
