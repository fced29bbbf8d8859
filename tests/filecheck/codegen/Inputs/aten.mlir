func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = aten.exp %x : tensor<2xf32> -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
