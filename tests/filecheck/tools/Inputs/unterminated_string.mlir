// An unterminated string literal: rejected at once (xDSL 0.75 backtracks exponentially).
func.func "@astype_shape(%x: tensor<2xf32>) {
  %0 = mlx.astype %x : tensor<2xf32> -> tensor<3xf16>
  func.return
}
