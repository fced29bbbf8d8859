// fold-dequantize-into-take: rows of a dequantized matrix taken along axis 0 (an
// embedding lookup) become mlx.quantized_take, which dequantizes only the rows picked.
// Other axes and a flattened take are left alone.
// RUN: mlx-opt %s -p fold-dequantize-into-take | filecheck %s

// CHECK-LABEL: func.func @embedding(%ids: tensor<2x?xi64>, %w: tensor<96x16xui32>, %s: tensor<96x2xbf16>, %b: tensor<96x2xbf16>) -> tensor<2x?x128xbf16> {
// CHECK-NEXT:    %e = mlx.quantized_take %w, %s, %b indices %ids : tensor<2x?xi64> group_size 64 bits 4 mode "affine" : tensor<96x16xui32>, tensor<96x2xbf16>, tensor<96x2xbf16> -> tensor<2x?x128xbf16>
// CHECK-NEXT:    func.return %e : tensor<2x?x128xbf16>
// CHECK-NEXT:  }
func.func @embedding(%ids: tensor<2x?xi64>, %w: tensor<96x16xui32>, %s: tensor<96x2xbf16>, %b: tensor<96x2xbf16>) -> tensor<2x?x128xbf16> {
  %d = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<96x16xui32>, tensor<96x2xbf16>, tensor<96x2xbf16> -> tensor<96x128xbf16>
  %e = mlx.take %d, %ids axis 0 : tensor<96x128xbf16>, tensor<2x?xi64> -> tensor<2x?x128xbf16>
  func.return %e : tensor<2x?x128xbf16>
}

// CHECK-LABEL: func.func @columns(
// CHECK-NEXT:    %d = mlx.dequantize
// CHECK-NEXT:    %e = mlx.take %d, %ids axis 1
// CHECK-NEXT:    %f = mlx.take %d, %ids :
func.func @columns(%ids: tensor<3xi64>, %w: tensor<96x16xui32>, %s: tensor<96x2xf32>, %b: tensor<96x2xf32>) -> (tensor<96x3xf32>, tensor<3xf32>) {
  %d = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<96x16xui32>, tensor<96x2xf32>, tensor<96x2xf32> -> tensor<96x128xf32>
  %e = mlx.take %d, %ids axis 1 : tensor<96x128xf32>, tensor<3xi64> -> tensor<96x3xf32>
  %f = mlx.take %d, %ids : tensor<96x128xf32>, tensor<3xi64> -> tensor<3xf32>
  func.return %e, %f : tensor<96x3xf32>, tensor<3xf32>
}
