// convert-aten-to-mlx on aten.dequantize_affine (torchao's weights, docs/semantics.md §4).
// RUN: mlx-opt %s -p convert-aten-to-mlx 2>/dev/null | filecheck %s

// Groups of 32 along the rows, range [-8, 7] (4 bits), zero point 1, scale 0.5: the
// integers 3 become 3 - (-8) = 11 = 0xB per 4-bit field, scales stay, biases are
// (-8 - 1) * 0.5 = -4.5; 11 * 0.5 - 4.5 = (3 - 1) * 0.5. The int8 globals leave.
// CHECK:      mlx.global @fc.q.mlx_q4 "parameter" : tensor<2x4xui32> = dense<3149642683> : tensor<2x4xui32>
// CHECK-NEXT: mlx.global @fc.q.mlx_scales "parameter" : tensor<2x1xf32> = dense<5.000000e-01> : tensor<2x1xf32>
// CHECK-NEXT: mlx.global @fc.q.mlx_biases "parameter" : tensor<2x1xf32> = dense<-4.500000e+00> : tensor<2x1xf32>
// CHECK-NOT:  mlx.global @fc.q "parameter"
// CHECK-LABEL: func.func @grouped() -> tensor<2x32xf32> {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @fc.q.mlx_q4 : tensor<2x4xui32>
// CHECK-NEXT:    %[[S:.*]] = mlx.weight @fc.q.mlx_scales : tensor<2x1xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.weight @fc.q.mlx_biases : tensor<2x1xf32>
// CHECK-NEXT:    %w = mlx.dequantize %[[W]], %[[S]], %[[B]] group_size 32 bits 4 mode "affine" : tensor<2x4xui32>, tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x32xf32>
// CHECK-NEXT:    func.return %w : tensor<2x32xf32>
mlx.global @fc.q "parameter" : tensor<2x32xi8> = dense<3> : tensor<2x32xi8>
mlx.global @fc.s "parameter" : tensor<2x1xf32> = dense<0.5> : tensor<2x1xf32>
mlx.global @fc.z "parameter" : tensor<2x1xi8> = dense<1> : tensor<2x1xi8>
func.func @grouped() -> tensor<2x32xf32> {
  %q = mlx.weight @fc.q : tensor<2x32xi8>
  %s = mlx.weight @fc.s : tensor<2x1xf32>
  %z = mlx.weight @fc.z : tensor<2x1xi8>
  %w = aten.dequantize_affine %q, %s zero_point %z : tensor<2x1xi8> block_size [1, 32] range -8 to 7 : tensor<2x32xi8>, tensor<2x1xf32> -> tensor<2x32xf32>
  func.return %w : tensor<2x32xf32>
}

// Groups of 16, which MLX lacks: torchao's arithmetic, (q - z) * s per block, at run
// time (and a TorchaoSchemeWarning on stderr).
// CHECK-LABEL: func.func @small_groups(%q: tensor<2x32xi8>, %s: tensor<2x2xf32>) -> tensor<2x32xbf16> {
// CHECK-NEXT:    %[[V:.*]] = mlx.reshape %q [2, 2, 16] : tensor<2x32xi8> -> tensor<2x2x16xi8>
// CHECK-NEXT:    %[[F:.*]] = mlx.astype %[[V]] : tensor<2x2x16xi8> -> tensor<2x2x16xbf16>
// CHECK-NEXT:    %[[P:.*]] = mlx.astype %[[F]] : tensor<2x2x16xbf16> -> tensor<2x2x16xf32>
// CHECK-NEXT:    %[[S:.*]] = mlx.reshape %s [2, 2, 1] : tensor<2x2xf32> -> tensor<2x2x1xf32>
// CHECK-NEXT:    %[[M:.*]] = mlx.multiply %[[P]], %[[S]] : tensor<2x2x16xf32>, tensor<2x2x1xf32> -> tensor<2x2x16xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.reshape %[[M]] [2, 32] : tensor<2x2x16xf32> -> tensor<2x32xf32>
// CHECK-NEXT:    %[[W:.*]] = mlx.astype %[[R]] : tensor<2x32xf32> -> tensor<2x32xbf16>
// CHECK-NEXT:    func.return %[[W]] : tensor<2x32xbf16>
func.func @small_groups(%q: tensor<2x32xi8>, %s: tensor<2x2xf32>) -> tensor<2x32xbf16> {
  %w = aten.dequantize_affine %q, %s block_size [1, 16] range -128 to 127 : tensor<2x32xi8>, tensor<2x2xf32> -> tensor<2x32xbf16>
  func.return %w : tensor<2x32xbf16>
}
