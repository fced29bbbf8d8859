// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of the complex-number ops: the Fourier transforms of real and complex
// signals and their inverses, the views between complex64 and float32 pairs, and the
// conjugate. Canonicalization drops the unused pure ops.

// CHECK-LABEL: func.func @complex(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<?x3x2xf32>) -> tensor<4x?xcomplex<f32>> {
// CHECK-NEXT:    %rfft = aten.fft_r2c %x dims [1] normalization 0 onesided : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
// CHECK-NEXT:    %fft = aten.fft_r2c %x dims [0, 1] normalization 1 : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
// CHECK-NEXT:    %forward = aten.fft_c2c %z dims [-1] normalization 2 forward : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    %inverse = aten.fft_c2c %z dims [0, 1] normalization 0 : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    %irfft = aten.fft_c2r %z dims [1] normalization 2 : tensor<?x5xcomplex<f32>> -> tensor<?x9xf32>
// CHECK-NEXT:    %real = aten.view_as_real %z : tensor<?x5xcomplex<f32>> -> tensor<?x5x2xf32>
// CHECK-NEXT:    %complex = aten.view_as_complex %p : tensor<?x3x2xf32> -> tensor<?x3xcomplex<f32>>
// CHECK-NEXT:    %conj = aten.conj_physical %z : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
// CHECK-NEXT:    func.return %rfft : tensor<4x?xcomplex<f32>>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @complex(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<?x3x2xf32>) -> tensor<4x?xcomplex<f32>> {
// CANON-NEXT:    %rfft = aten.fft_r2c %x dims [1] normalization 0 onesided : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
// CANON-NEXT:    func.return %rfft : tensor<4x?xcomplex<f32>>
func.func @complex(%x: tensor<4x?xf32>, %z: tensor<?x5xcomplex<f32>>, %p: tensor<?x3x2xf32>) -> tensor<4x?xcomplex<f32>> {
  %rfft = aten.fft_r2c %x dims [1] normalization 0 onesided : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
  %fft = aten.fft_r2c %x dims [0, 1] normalization 1 : tensor<4x?xf32> -> tensor<4x?xcomplex<f32>>
  %forward = aten.fft_c2c %z dims [-1] normalization 2 forward : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  %inverse = aten.fft_c2c %z dims [0, 1] normalization 0 : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  %irfft = aten.fft_c2r %z dims [1] normalization 2 : tensor<?x5xcomplex<f32>> -> tensor<?x9xf32>
  %real = aten.view_as_real %z : tensor<?x5xcomplex<f32>> -> tensor<?x5x2xf32>
  %complex = aten.view_as_complex %p : tensor<?x3x2xf32> -> tensor<?x3xcomplex<f32>>
  %conj = aten.conj_physical %z : tensor<?x5xcomplex<f32>> -> tensor<?x5xcomplex<f32>>
  func.return %rfft : tensor<4x?xcomplex<f32>>
}
