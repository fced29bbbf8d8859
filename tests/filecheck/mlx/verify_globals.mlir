// Verifier rules of mlx.global and the ops that read and write it (mlx.weight,
// mlx.load_state, mlx.store_state): each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'mlx.global' op kind must be one of ('parameter', 'buffer', 'constant', 'state'), got 'weight'}}
mlx.global @w "weight" : tensor<4xf32>

// -----

// expected-error @+1 {{'mlx.global' op value type tensor<3xf32> does not match the global's type tensor<4xf32>}}
mlx.global @w "constant" : tensor<4xf32> = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>

// -----

// expected-error @+1 {{'mlx.global' op value type tensor<4xf16> does not match the global's type tensor<4xf32>}}
mlx.global @w "parameter" : tensor<4xf32> = dense_resource<w_blob> : tensor<4xf16>

// -----

mlx.global @w "parameter" : tensor<4xf32>
func.func @unknown_symbol() {
  // expected-error @+1 {{'mlx.weight' op 'missing' does not name an mlx.global}}
  %0 = mlx.weight @missing : tensor<4xf32>
  func.return
}

// -----

// A symbol that exists but is not a global (here a function) is no weight either.
func.func @helper() {
  func.return
}
func.func @function_symbol() {
  // expected-error @+1 {{'mlx.weight' op 'helper' does not name an mlx.global}}
  %0 = mlx.weight @helper : tensor<4xf32>
  func.return
}

// -----

mlx.global @w "parameter" : tensor<4xf32>
func.func @weight_type() {
  // expected-error @+1 {{'mlx.weight' op type tensor<4xf16> does not match @w's tensor<4xf32>}}
  %0 = mlx.weight @w : tensor<4xf16>
  func.return
}

// -----

mlx.global @cache "state" : tensor<1x8x256x64xf16>
func.func @weight_of_state() {
  // expected-error @+1 {{'mlx.weight' op @cache is mutable state: read it with mlx.load_state}}
  %0 = mlx.weight @cache : tensor<1x8x256x64xf16>
  func.return
}

// -----

mlx.global @inv_freq "buffer" : tensor<32xf32>
func.func @load_buffer() {
  // expected-error @+1 {{'mlx.load_state' op @inv_freq is a buffer, not mutable state}}
  %0 = mlx.load_state @inv_freq : tensor<32xf32>
  func.return
}

// -----

func.func @load_unknown() {
  // expected-error @+1 {{'mlx.load_state' op 'cache' does not name an mlx.global}}
  %0 = mlx.load_state @cache : tensor<4xf32>
  func.return
}

// -----

mlx.global @cache "state" : tensor<1x8x256x64xf16>
func.func @load_type() {
  // expected-error @+1 {{'mlx.load_state' op type tensor<1x8x128x64xf16> does not match @cache's tensor<1x8x256x64xf16>}}
  %0 = mlx.load_state @cache : tensor<1x8x128x64xf16>
  func.return
}

// -----

mlx.global @norm.weight "parameter" : tensor<512xf32>
func.func @store_to_parameter(%x: tensor<512xf32>) {
  // expected-error @+1 {{'mlx.store_state' op @norm.weight is a parameter, not mutable state}}
  mlx.store_state %x to @norm.weight : tensor<512xf32>
  func.return
}

// -----

mlx.global @lifted_tensor_0 "constant" : tensor<2xi64> = dense<[4, -1]> : tensor<2xi64>
func.func @store_to_constant(%x: tensor<2xi64>) {
  // expected-error @+1 {{'mlx.store_state' op @lifted_tensor_0 is a constant, not mutable state}}
  mlx.store_state %x to @lifted_tensor_0 : tensor<2xi64>
  func.return
}

// -----

mlx.global @step "state" : tensor<i64>
func.func @store_type(%x: tensor<i32>) {
  // expected-error @+1 {{'mlx.store_state' op type tensor<i32> does not match @step's tensor<i64>}}
  mlx.store_state %x to @step : tensor<i32>
  func.return
}

// -----

mlx.global @step "state" : tensor<i64>
func.func @store_unknown(%x: tensor<i64>) {
  // expected-error @+1 {{'mlx.store_state' op 'steps' does not name an mlx.global}}
  mlx.store_state %x to @steps : tensor<i64>
  func.return
}

// -----

// expected-error @+1 {{'mlx.global' op ranks must be at least 2, got 1}}
mlx.global @w "parameter" ranks 1 : tensor<2xf32>

// -----

// expected-error @+1 {{'mlx.global' op mutable state cannot be split over ranks}}
mlx.global @cache "state" ranks 2 : tensor<2xf32>

// -----

// expected-error @+1 {{'mlx.global' op value type tensor<2x3xf32> does not match the global's 2 slices of tensor<2xf32>: tensor<2x2xf32>}}
mlx.global @w "parameter" ranks 2 : tensor<2xf32> = dense<0.0> : tensor<2x3xf32>
