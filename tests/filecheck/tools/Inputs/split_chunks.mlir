// Two good chunks and two bad ones (read by ../split_input_file.mlir).
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4x8xf32>) {
  // the verifier rejects this one
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @third(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

func.func @fourth(%x: tensor<4xf32>) -> tensor<4xf32> {
  // the parser rejects this one
  %0 = mlx.exp %x : tensor<4xf32> ->
  func.return %0 : tensor<4xf32>
}
