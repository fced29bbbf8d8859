// cpu-int8-activations: every affine quantized product with `transpose` gets
// `activation_bits 8` (x quantized to int8 per group, then the exact product); one
// that has activation_bits keeps them, and the microscaling modes and an untransposed
// weight are left exact. On request: never in the CPU target.
// RUN: mlx-opt %s -p cpu-int8-activations | filecheck %s
// RUN: mlx-opt %s -p 'cpu-int8-activations{bits=16}' | filecheck %s --check-prefix=INT16
// RUN: mlx-opt %s -p 'lower-to-mlx{target=cpu}' | filecheck %s --check-prefix=TARGET

// CHECK-LABEL: func.func @products(
// CHECK-NEXT: %affine = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 8 : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %kept = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 16 : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %mxfp4 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x4xui8> -> tensor<?x64xf32>
// CHECK-NEXT: %plain = mlx.quantized_matmul %x, %wk, %sk, %bk group_size 64 bits 4 mode "affine" : tensor<?x128xf32>, tensor<128x8xui32>, tensor<128x1xf32>, tensor<128x1xf32> -> tensor<?x64xf32>
// INT16: %affine = mlx.quantized_matmul {{.*}} transpose activation_bits 16 :
// TARGET: %affine = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<?x128xf32>
func.func @products(%x: tensor<?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>, %wk: tensor<128x8xui32>, %sk: tensor<128x1xf32>, %bk: tensor<128x1xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %affine = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x64xf32>
  %kept = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 16 : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x64xf32>
  %mxfp4 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x4xui8> -> tensor<?x64xf32>
  %plain = mlx.quantized_matmul %x, %wk, %sk, %bk group_size 64 bits 4 mode "affine" : tensor<?x128xf32>, tensor<128x8xui32>, tensor<128x1xf32>, tensor<128x1xf32> -> tensor<?x64xf32>
  func.return %affine, %kept, %mxfp4, %plain : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}
