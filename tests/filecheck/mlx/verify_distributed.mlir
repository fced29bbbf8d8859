// Verifier rules of the collectives: each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @all_sum_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.all_sum' op result type tensor<4xf16> must be the input's tensor<4xf32>}}
  %0 = mlx.all_sum %x : tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

func.func @all_gather_ranks(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.all_gather' op ranks must be at least 1, got 0}}
  %0 = mlx.all_gather %x axis 0 ranks 0 : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @all_gather_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.all_gather' op axis 1 is out of range for rank 1}}
  %0 = mlx.all_gather %x axis 1 ranks 2 : tensor<4xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @all_gather_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.all_gather' op result shape [3, 4] does not match}}
  %0 = mlx.all_gather %x axis 1 ranks 2 : tensor<3x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @all_gather_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.all_gather' op result element type f16 must equal the input's f32}}
  %0 = mlx.all_gather %x axis 1 ranks 2 : tensor<3x4xf32> -> tensor<3x8xf16>
  func.return
}

// -----

func.func @send_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.send' op peer must be a rank (>= 0), got -1}}
  %0 = mlx.send %x peer -1 : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @recv_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.recv' op result type tensor<5xf32> must be the input's tensor<4xf32>}}
  %0 = mlx.recv %x peer 0 : tensor<4xf32> -> tensor<5xf32>
  func.return
}
