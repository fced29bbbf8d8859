// Verifier rules of the mlx creation ops, constants and runtime integers (full, zeros,
// ones, arange, tril, triu, constant, dim, from_index): each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @full_vector_value(%v: tensor<1xf32>) {
  // expected-error @+1 {{'mlx.full' op value must be 0-d}}
  %0 = mlx.full [2, 3], %v : tensor<1xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @full_dtype(%v: tensor<f32>) {
  // expected-error @+1 {{'mlx.full' op value and result must share one element type, got f32, f16}}
  %0 = mlx.full [2, 3], %v : tensor<f32> -> tensor<2x3xf16>
  func.return
}

// -----

func.func @full_rank(%v: tensor<f32>) {
  // expected-error @+1 {{'mlx.full' op shape list has 2 entries but the result has rank 1}}
  %0 = mlx.full [2, 3], %v : tensor<f32> -> tensor<6xf32>
  func.return
}

// -----

func.func @zeros_literal() {
  // expected-error @+1 {{'mlx.zeros' op shape 3 at position 0 does not match result dim 4}}
  %0 = mlx.zeros [3] : tensor<4xf32>
  func.return
}

// -----

func.func @ones_dynamic_literal() {
  // expected-error @+1 {{'mlx.ones' op result dim 1 is dynamic but its shape is the literal 8}}
  %0 = mlx.ones [2, 8] : tensor<2x?xf32>
  func.return
}

// -----

func.func @zeros_markers(%n: index) {
  // expected-error @+1 {{'mlx.zeros' op shape list has 0 dynamic entries but 1 index operands}}
  %0 = "mlx.zeros"(%n) <{static_shape = array<i64: 4>}> : (index) -> tensor<4xf32>
  func.return
}

// -----

func.func @arange_two_bounds() {
  // expected-error @+1 {{'mlx.arange' op bounds must be [start, stop, step], got 2 entries}}
  %0 = mlx.arange [0, 4] : tensor<4xi64>
  func.return
}

// -----

func.func @arange_markers(%n: index) {
  // expected-error @+1 {{'mlx.arange' op bounds' dynamic entries do not match their index operands}}
  %0 = "mlx.arange"(%n) <{static_bounds = array<i64: 0, 8, 1>}> : (index) -> tensor<8xi64>
  func.return
}

// -----

func.func @arange_zero_step() {
  // expected-error @+1 {{'mlx.arange' op step must be non-zero}}
  %0 = mlx.arange [0, 4, 0] : tensor<4xi64>
  func.return
}

// -----

func.func @arange_rank(%n: index) {
  // expected-error @+1 {{'mlx.arange' op result must be 1-D}}
  %0 = mlx.arange [0, %n, 1] : tensor<1x?xi64>
  func.return
}

// -----

// arange(10, 0, -3) is [10, 7, 4, 1].
func.func @arange_length(%n: index) {
  // expected-error @+1 {{'mlx.arange' op result shape [3] does not match the expected shape [4]}}
  %0 = mlx.arange [10, 0, -3] : tensor<3xi64>
  func.return
}

// -----

func.func @tril_vector(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.tril' op input must have rank >= 2}}
  %0 = mlx.tril %x k 0 : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @triu_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.triu' op result shape [8, 4] does not match operand shape [4, 8]}}
  %0 = mlx.triu %x k 1 : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

func.func @triu_dtype(%x: tensor<4x4xi1>) {
  // expected-error @+1 {{'mlx.triu' op input and result must share one element type, got i1, f32}}
  %0 = mlx.triu %x k 0 : tensor<4x4xi1> -> tensor<4x4xf32>
  func.return
}

// -----

// The custom form takes the result type from the literal; the generic form can disagree.
func.func @constant_type() {
  // expected-error @+1 {{'mlx.constant' op value type tensor<2xf32> does not match the result type tensor<3xf32>}}
  %0 = "mlx.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @dim_axis(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'mlx.dim' op axis 2 is out of range for rank 2}}
  %0 = mlx.dim %x axis 2 : tensor<4x?xf32>
  func.return
}

// -----

func.func @dim_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'mlx.dim' op axis -1 is out of range for rank 0}}
  %0 = mlx.dim %x axis -1 : tensor<f32>
  func.return
}

// -----

func.func @from_index_vector(%n: index) {
  // expected-error @+1 {{'mlx.from_index' op result must be 0-d}}
  %0 = mlx.from_index %n : tensor<1xi64>
  func.return
}

// -----

func.func @random_int() {
  // expected-error @+1 {{'mlx.random_uniform' op result must be a float tensor, got i32}}
  %0 = mlx.random_uniform [4] : tensor<4xi32>
  func.return
}

// -----

func.func @random_rank(%n: index) {
  // expected-error @+1 {{'mlx.random_normal' op shape list has 1 entries but the result has rank 2}}
  %0 = mlx.random_normal [%n] : tensor<?x4xf32>
  func.return
}
