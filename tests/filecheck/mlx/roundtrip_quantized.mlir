// Round trip of mlx.quantized_matmul, mlx.dequantize and mlx.quantized_take: affine
// (with biases), the microscaling modes (ui8 scales, no biases), with and without
// `transpose`, 3-bit packing, dynamic dims, indices of rank 0 to 2; the approximate
// products' `activation_bits` (8 and 16).
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s
// RUN: mlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The optional biases operand has no segment sizes: it is present iff there are 4 operands.
// GENERIC: %affine = "mlx.quantized_matmul"(%x, %w, %s, %b) <{group_size = 64 : i64, bits = 4 : i64, mode = "affine", transpose}>
// GENERIC: %mxfp4 = "mlx.quantized_matmul"(%x, %w, %e) <{group_size = 32 : i64, bits = 4 : i64, mode = "mxfp4", transpose}>
// GENERIC: %int8 = "mlx.quantized_matmul"(%x, %w, %s, %b) <{group_size = 64 : i64, bits = 4 : i64, mode = "affine", transpose, activation_bits = 8 : i64}>
// GENERIC: %affine = "mlx.dequantize"(%w, %s, %b) <{group_size = 64 : i64, bits = 4 : i64, mode = "affine"}>
// GENERIC: %mxfp4 = "mlx.dequantize"(%w, %e) <{group_size = 32 : i64, bits = 4 : i64, mode = "mxfp4"}>
// quantized_take's biases sits between scales and indices: still no segment sizes.
// GENERIC: %affine = "mlx.quantized_take"(%w, %s, %b, %i) <{group_size = 64 : i64, bits = 4 : i64, mode = "affine"}>
// GENERIC: %mxfp4 = "mlx.quantized_take"(%w, %e, %j) <{group_size = 32 : i64, bits = 4 : i64, mode = "mxfp4"}>

// CHECK-LABEL: func.func @quantized_matmul(
// CHECK-SAME: %x: tensor<?x?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
// CHECK-NEXT: %affine = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
// CHECK-NEXT: %mxfp4 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x4xui8> -> tensor<?x?x64xf32>
// CHECK-NEXT: %int8 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 8 : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
// CHECK-NEXT: %int16 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 16 : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
// CHECK-NEXT: func.return %affine, %mxfp4, %int8, %int16 : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
// CHECK-NEXT: }
func.func @quantized_matmul(%x: tensor<?x?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %affine = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
  %mxfp4 = mlx.quantized_matmul %x, %w, %e group_size 32 bits 4 mode "mxfp4" transpose : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x4xui8> -> tensor<?x?x64xf32>
  %int8 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 8 : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
  %int16 = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose activation_bits 16 : tensor<?x?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x64xf32>
  func.return %affine, %mxfp4, %int8, %int16 : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @quantized_matmul_forms(
// CHECK-SAME: %h: tensor<?x256xbf16>, %w8: tensor<32x64xui32>, %e8: tensor<32x8xui8>, %w3: tensor<?x24xui32>, %s3: tensor<?x2xbf16>, %b3: tensor<?x2xbf16>, %wk: tensor<256x6xui32>, %sk: tensor<256x1xbf16>, %bk: tensor<256x1xbf16>) -> (tensor<?x32xbf16>, tensor<?x?xbf16>, tensor<?x32xbf16>) {
// CHECK-NEXT: %mxfp8 = mlx.quantized_matmul %h, %w8, %e8 group_size 32 bits 8 mode "mxfp8" transpose : tensor<?x256xbf16>, tensor<32x64xui32>, tensor<32x8xui8> -> tensor<?x32xbf16>
// CHECK-NEXT: %three = mlx.quantized_matmul %h, %w3, %s3, %b3 group_size 128 bits 3 mode "affine" transpose : tensor<?x256xbf16>, tensor<?x24xui32>, tensor<?x2xbf16>, tensor<?x2xbf16> -> tensor<?x?xbf16>
// CHECK-NEXT: %plain = mlx.quantized_matmul %h, %wk, %sk, %bk group_size 32 bits 6 mode "affine" : tensor<?x256xbf16>, tensor<256x6xui32>, tensor<256x1xbf16>, tensor<256x1xbf16> -> tensor<?x32xbf16>
// CHECK-NEXT: func.return %mxfp8, %three, %plain : tensor<?x32xbf16>, tensor<?x?xbf16>, tensor<?x32xbf16>
// CHECK-NEXT: }
func.func @quantized_matmul_forms(%h: tensor<?x256xbf16>, %w8: tensor<32x64xui32>, %e8: tensor<32x8xui8>, %w3: tensor<?x24xui32>, %s3: tensor<?x2xbf16>, %b3: tensor<?x2xbf16>, %wk: tensor<256x6xui32>, %sk: tensor<256x1xbf16>, %bk: tensor<256x1xbf16>) -> (tensor<?x32xbf16>, tensor<?x?xbf16>, tensor<?x32xbf16>) {
  %mxfp8 = mlx.quantized_matmul %h, %w8, %e8 group_size 32 bits 8 mode "mxfp8" transpose : tensor<?x256xbf16>, tensor<32x64xui32>, tensor<32x8xui8> -> tensor<?x32xbf16>
  %three = mlx.quantized_matmul %h, %w3, %s3, %b3 group_size 128 bits 3 mode "affine" transpose : tensor<?x256xbf16>, tensor<?x24xui32>, tensor<?x2xbf16>, tensor<?x2xbf16> -> tensor<?x?xbf16>
  %plain = mlx.quantized_matmul %h, %wk, %sk, %bk group_size 32 bits 6 mode "affine" : tensor<?x256xbf16>, tensor<256x6xui32>, tensor<256x1xbf16>, tensor<256x1xbf16> -> tensor<?x32xbf16>
  func.return %mxfp8, %three, %plain : tensor<?x32xbf16>, tensor<?x?xbf16>, tensor<?x32xbf16>
}

// CHECK-LABEL: func.func @dequantize(
// CHECK-SAME: %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>, %w8: tensor<?x64xui32>, %e8: tensor<?x8xui8>, %w3: tensor<?x24xui32>, %s3: tensor<?x2xf16>, %b3: tensor<?x2xf16>) -> (tensor<64x128xf32>, tensor<64x128xbf16>, tensor<?x256xf16>, tensor<?x256xf16>) {
// CHECK-NEXT: %affine = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xf32>
// CHECK-NEXT: %mxfp4 = mlx.dequantize %w, %e group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<64x128xbf16>
// CHECK-NEXT: %mxfp8 = mlx.dequantize %w8, %e8 group_size 32 bits 8 mode "mxfp8" : tensor<?x64xui32>, tensor<?x8xui8> -> tensor<?x256xf16>
// CHECK-NEXT: %three = mlx.dequantize %w3, %s3, %b3 group_size 128 bits 3 mode "affine" : tensor<?x24xui32>, tensor<?x2xf16>, tensor<?x2xf16> -> tensor<?x256xf16>
// CHECK-NEXT: func.return %affine, %mxfp4, %mxfp8, %three : tensor<64x128xf32>, tensor<64x128xbf16>, tensor<?x256xf16>, tensor<?x256xf16>
// CHECK-NEXT: }
func.func @dequantize(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>, %w8: tensor<?x64xui32>, %e8: tensor<?x8xui8>, %w3: tensor<?x24xui32>, %s3: tensor<?x2xf16>, %b3: tensor<?x2xf16>) -> (tensor<64x128xf32>, tensor<64x128xbf16>, tensor<?x256xf16>, tensor<?x256xf16>) {
  %affine = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<64x128xf32>
  %mxfp4 = mlx.dequantize %w, %e group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<64x128xbf16>
  %mxfp8 = mlx.dequantize %w8, %e8 group_size 32 bits 8 mode "mxfp8" : tensor<?x64xui32>, tensor<?x8xui8> -> tensor<?x256xf16>
  %three = mlx.dequantize %w3, %s3, %b3 group_size 128 bits 3 mode "affine" : tensor<?x24xui32>, tensor<?x2xf16>, tensor<?x2xf16> -> tensor<?x256xf16>
  func.return %affine, %mxfp4, %mxfp8, %three : tensor<64x128xf32>, tensor<64x128xbf16>, tensor<?x256xf16>, tensor<?x256xf16>
}

// CHECK-LABEL: func.func @quantized_take(
// CHECK-SAME: %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>, %i: tensor<?x?xi32>, %j: tensor<5xi64>, %k: tensor<ui32>, %wb: tensor<?x?xui32>, %sb: tensor<?x?xbf16>, %bb: tensor<?x?xbf16>) -> (tensor<?x?x128xf32>, tensor<5x128xf16>, tensor<128xf32>, tensor<5x?xbf16>) {
// CHECK-NEXT: %affine = mlx.quantized_take %w, %s, %b indices %i : tensor<?x?xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x128xf32>
// CHECK-NEXT: %mxfp4 = mlx.quantized_take %w, %e indices %j : tensor<5xi64> group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<5x128xf16>
// CHECK-NEXT: %row = mlx.quantized_take %w, %s, %b indices %k : tensor<ui32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<128xf32>
// CHECK-NEXT: %dynamic = mlx.quantized_take %wb, %sb, %bb indices %j : tensor<5xi64> group_size 32 bits 2 mode "affine" : tensor<?x?xui32>, tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<5x?xbf16>
// CHECK-NEXT: func.return %affine, %mxfp4, %row, %dynamic : tensor<?x?x128xf32>, tensor<5x128xf16>, tensor<128xf32>, tensor<5x?xbf16>
// CHECK-NEXT: }
func.func @quantized_take(%w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>, %e: tensor<64x4xui8>, %i: tensor<?x?xi32>, %j: tensor<5xi64>, %k: tensor<ui32>, %wb: tensor<?x?xui32>, %sb: tensor<?x?xbf16>, %bb: tensor<?x?xbf16>) -> (tensor<?x?x128xf32>, tensor<5x128xf16>, tensor<128xf32>, tensor<5x?xbf16>) {
  %affine = mlx.quantized_take %w, %s, %b indices %i : tensor<?x?xi32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x?x128xf32>
  %mxfp4 = mlx.quantized_take %w, %e indices %j : tensor<5xi64> group_size 32 bits 4 mode "mxfp4" : tensor<64x16xui32>, tensor<64x4xui8> -> tensor<5x128xf16>
  %row = mlx.quantized_take %w, %s, %b indices %k : tensor<ui32> group_size 64 bits 4 mode "affine" : tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<128xf32>
  %dynamic = mlx.quantized_take %wb, %sb, %bb indices %j : tensor<5xi64> group_size 32 bits 2 mode "affine" : tensor<?x?xui32>, tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<5x?xbf16>
  func.return %affine, %mxfp4, %row, %dynamic : tensor<?x?x128xf32>, tensor<5x128xf16>, tensor<128xf32>, tensor<5x?xbf16>
}
