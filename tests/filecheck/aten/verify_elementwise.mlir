// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the elementwise ops (shapes, broadcasting and
// the dtype rule of each UNARY_OPS / BINARY_OPS entry) and checks its message.

func.func @unary_shape(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.exp' op result shape [3] does not match operand shape [2]}}
  %0 = aten.exp %x : tensor<2xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @unary_rank(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'aten.neg' op result shape [4] does not match operand shape [?, 4]}}
  %0 = aten.neg %x : tensor<?x4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @same_dtype(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.abs' op result element type f16 must equal the input's f32}}
  %0 = aten.abs %x : tensor<2xf32> -> tensor<2xf16>
  func.return
}

// -----

func.func @float_result(%x: tensor<2xi64>) {
  // expected-error @+1 {{'aten.exp' op result element type must be floating point, got i64}}
  %0 = aten.exp %x : tensor<2xi64> -> tensor<2xi64>
  func.return
}

// -----

func.func @float_keeps_float_input(%x: tensor<2xf16>) {
  // expected-error @+1 {{'aten.sqrt' op result element type f32 must equal the float input's f16}}
  %0 = aten.sqrt %x : tensor<2xf16> -> tensor<2xf32>
  func.return
}

// -----

func.func @float_only_input(%x: tensor<2xi64>) {
  // expected-error @+1 {{'aten.silu' op operand and result must be floating point, got i64}}
  %0 = aten.silu %x : tensor<2xi64> -> tensor<2xf32>
  func.return
}

// -----

func.func @float_only_same(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.silu' op result element type bf16 must equal the input's f32}}
  %0 = aten.silu %x : tensor<2xf32> -> tensor<2xbf16>
  func.return
}

// -----

func.func @bool_result(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.isnan' op result element type must be i1, got f32}}
  %0 = aten.isnan %x : tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @bitwise_float(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.bitwise_not' op operands and result must be integer or bool, got f32}}
  %0 = aten.bitwise_not %x : tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @bitwise_index_scalar(%x: tensor<2xi64>, %s: index) {
  // expected-error @+1 {{'aten.bitwise_and' op operands and result must be integer or bool, got index}}
  %0 = aten.bitwise_and %x, %s : tensor<2xi64>, index -> tensor<2xi64>
  func.return
}

// -----

func.func @not_broadcastable(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'aten.add' op operand shapes [2, 3], [4] are not broadcastable}}
  %0 = aten.add %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @not_the_broadcast_shape(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'aten.mul' op result shape [3] is not the broadcast shape [2, 3] of the operands}}
  %0 = aten.mul %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @scalar_broadcast(%x: tensor<2x3xf32>, %s: f64) {
  // expected-error @+1 {{'aten.sub' op result shape [2, 1] is not the broadcast shape [2, 3] of the operands}}
  %0 = aten.sub %x, %s alpha 1.000000e+00 : tensor<2x3xf32>, f64 -> tensor<2x1xf32>
  func.return
}

// -----

func.func @compare_result(%x: tensor<2xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{'aten.lt' op result element type must be i1, got f32}}
  %0 = aten.lt %x, %y : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @atan2_result(%x: tensor<2xi64>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'aten.atan2' op result element type must be floating point, got i64}}
  %0 = aten.atan2 %x, %y : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  func.return
}

// -----

func.func @true_division(%x: tensor<2xi64>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'aten.div' op true division (no rounding_mode) must have a floating-point result, got i64}}
  %0 = aten.div %x, %y : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  func.return
}

// -----

func.func @rounding_mode(%x: tensor<2xi64>, %y: i64) {
  // expected-error @+1 {{'aten.div' op rounding_mode must be one of ('trunc', 'floor'), got 'round'}}
  %0 = aten.div %x, %y rounding_mode "round" : tensor<2xi64>, i64 -> tensor<2xi64>
  func.return
}

// -----

func.func @gelu_approximate(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.gelu' op approximate must be one of ('none', 'tanh'), got 'erf'}}
  %0 = aten.gelu %x approximate "erf" : tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @gelu_float(%x: tensor<2xi32>) {
  // expected-error @+1 {{'aten.gelu' op operand and result must be floating point, got i32}}
  %0 = aten.gelu %x : tensor<2xi32> -> tensor<2xi32>
  func.return
}

// -----

func.func @gelu_shape(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.gelu' op result shape [2, 1] does not match operand shape [2]}}
  %0 = aten.gelu %x approximate "tanh" : tensor<2xf32> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @where_condition(%c: tensor<2xf32>, %x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.where' op condition must have bool element type, got f32}}
  %0 = aten.where %c, %x, %x : tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @where_broadcast(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'aten.where' op operand shapes [2, 1], [3], [4] are not broadcastable}}
  %0 = aten.where %c, %x, %y : tensor<2x1xi1>, tensor<3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @where_scalar_result(%c: tensor<2x1xi1>, %x: tensor<2xf32>, %s: f64) {
  // expected-error @+1 {{'aten.where' op result shape [2] is not the broadcast shape [2, 2] of the operands}}
  %0 = aten.where %c, %x, %s : tensor<2x1xi1>, tensor<2xf32>, f64 -> tensor<2xf32>
  func.return
}

// -----

func.func @clamp_no_bound(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.clamp' op at least one of min and max must be given}}
  %0 = aten.clamp %x : tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @clamp_bound_shape(%x: tensor<2x4xf32>, %lo: tensor<3xf32>, %hi: f64) {
  // expected-error @+1 {{'aten.clamp' op operand shapes [2, 4], [3], [] are not broadcastable}}
  %0 = aten.clamp %x min %lo : tensor<3xf32> max %hi : f64 : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @to_copy_shape(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten._to_copy' op result shape [3] does not match operand shape [2]}}
  %0 = aten._to_copy %x : tensor<2xf32> -> tensor<3xf16>
  func.return
}
