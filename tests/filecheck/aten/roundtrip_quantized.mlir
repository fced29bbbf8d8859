// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trip of aten.dequantize_affine (torchao's op): groups along the rows with zero
// points, symmetric (no zero point), and per-axis scales in a half-precision output.

// CHECK-LABEL: func.func @dequantize_affine(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>, %h: tensor<4x1xbf16>) -> tensor<4x64xf32> {
// CHECK-NEXT:    %grouped = aten.dequantize_affine %q, %s zero_point %z : tensor<4x2xi8> block_size [1, 32] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %symmetric = aten.dequantize_affine %q, %s block_size [1, 32] range -128 to 127 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %per_axis = aten.dequantize_affine %q, %h block_size [1, 64] range -128 to 127 : tensor<4x64xi8>, tensor<4x1xbf16> -> tensor<4x64xbf16>
// CHECK-NEXT:    func.return %grouped : tensor<4x64xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @dequantize_affine(
// CANON-NEXT:    %grouped = aten.dequantize_affine %q, %s zero_point %z
// CANON-NEXT:    func.return %grouped : tensor<4x64xf32>
func.func @dequantize_affine(%q: tensor<4x64xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>, %h: tensor<4x1xbf16>) -> tensor<4x64xf32> {
  %grouped = aten.dequantize_affine %q, %s zero_point %z : tensor<4x2xi8> block_size [1, 32] range -8 to 7 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
  %symmetric = aten.dequantize_affine %q, %s block_size [1, 32] range -128 to 127 : tensor<4x64xi8>, tensor<4x2xf32> -> tensor<4x64xf32>
  %per_axis = aten.dequantize_affine %q, %h block_size [1, 64] range -128 to 127 : tensor<4x64xi8>, tensor<4x1xbf16> -> tensor<4x64xbf16>
  func.return %grouped : tensor<4x64xf32>
}
