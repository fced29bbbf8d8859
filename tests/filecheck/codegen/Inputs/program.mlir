mlx.global @w "parameter" : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = mlx.weight @w : tensor<2xf32>
  %y = mlx.add %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %z = mlx.softmax %y axes [0] : tensor<2xf32> -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}
