// Expectations that do not hold (read by ../verify_diagnostics.mlir): a wrong
// message, a wrong line, a missing expectation, a warning never emitted.
func.func @wrong_message(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{out of range for rank 3}}
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @wrong_line(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 2}}
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @missing(%x: tensor<4x8xf32>) {
  %0 = mlx.max %x axes [5] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @warning(%x: tensor<4x8xf32>) {
  // expected-warning @+1 {{never emitted}}
  func.return
}
