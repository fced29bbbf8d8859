func.func @bool_mask(%x: tensor<4x3xf32>, %m: tensor<4xi1>) -> tensor<?x3xf32> {
  %r = aten.index %x[%m] at [0] : tensor<4x3xf32>, (tensor<4xi1>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
