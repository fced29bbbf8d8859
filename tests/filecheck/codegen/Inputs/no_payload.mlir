mlx.global @w "parameter" : tensor<2xf32>
func.func @forward() -> tensor<2xf32> {
  %w = mlx.weight @w : tensor<2xf32>
  func.return %w : tensor<2xf32>
}
