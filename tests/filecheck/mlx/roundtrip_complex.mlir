// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of MLX's FFT (fftn, ifftn, rfftn, irfftn), the views between complex64
// and float32 pairs, and the conjugate. Canonicalization drops the unused pure ops.

// CHECK-LABEL: func.func @fftn(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<3x4xf32>) -> tensor<4x?xcomplex<f32>> {
// CHECK-NEXT:    %rfftn = mlx.fftn %x axes [1] real : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
// CHECK-NEXT:    %fftn = mlx.fftn %z axes [0, 1] : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    %ifftn = mlx.fftn %z axes [-1] inverse : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    %irfftn = mlx.fftn %z axes [1] inverse real last_size 8 : tensor<?x5xcomplex<f32>> -> tensor<?x8xf32>
// CHECK-NEXT:    %pairs = mlx.view %z : tensor<?x5xcomplex<f32>> -> tensor<?x10xf32>
// CHECK-NEXT:    %complex = mlx.view %p : tensor<3x4xf32> -> tensor<3x2xcomplex<f32>>
// CHECK-NEXT:    %conj = mlx.conj %z : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    func.return %rfftn : tensor<4x?xcomplex<f32>>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @fftn(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<3x4xf32>) -> tensor<4x?xcomplex<f32>> {
// CANON-NEXT:    %rfftn = mlx.fftn %x axes [1] real : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
// CANON-NEXT:    func.return %rfftn : tensor<4x?xcomplex<f32>>
func.func @fftn(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<3x4xf32>) -> tensor<4x?xcomplex<f32>> {
  %rfftn = mlx.fftn %x axes [1] real : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
  %fftn = mlx.fftn %z axes [0, 1] : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  %ifftn = mlx.fftn %z axes [-1] inverse : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  %irfftn = mlx.fftn %z axes [1] inverse real last_size 8 : tensor<?x5xcomplex<f32>> -> tensor<?x8xf32>
  %pairs = mlx.view %z : tensor<?x5xcomplex<f32>> -> tensor<?x10xf32>
  %complex = mlx.view %p : tensor<3x4xf32> -> tensor<3x2xcomplex<f32>>
  %conj = mlx.conj %z : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  func.return %rfftn : tensor<4x?xcomplex<f32>>
}
