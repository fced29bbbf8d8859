// Verifier rules of the elementwise mlx ops (mlx.<unary>, mlx.<binary>, astype, view, where):
// each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @exp_of_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'mlx.exp' op operands must be floating point, got i32}}
  %0 = mlx.exp %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @divide_ints(%x: tensor<4xi64>) {
  // expected-error @+1 {{'mlx.divide' op operands must be floating point, got i64}}
  %0 = mlx.divide %x, %x : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @sqrt_changes_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.sqrt' op result element type f16 must equal the operands' f32}}
  %0 = mlx.sqrt %x : tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

// No implicit promotion: a mixed-type add needs an explicit mlx.astype.
func.func @add_mixed(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'mlx.add' op operands must share one element type, got f32, f16}}
  %0 = mlx.add %x, %y : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @maximum_widens(%x: tensor<4xi32>) {
  // expected-error @+1 {{'mlx.maximum' op result element type i64 must equal the operands' i32}}
  %0 = mlx.maximum %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi64>
  func.return
}

// -----

func.func @abs_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.abs' op result shape [5] does not match operand shape [4]}}
  %0 = mlx.abs %x : tensor<4xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @negative_rank(%x: tensor<6xf32>) {
  // expected-error @+1 {{'mlx.negative' op result shape [2, 3] does not match operand shape [6]}}
  %0 = mlx.negative %x : tensor<6xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @bitwise_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.bitwise_and' op operands must be integer or bool, got f32}}
  %0 = mlx.bitwise_and %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @invert_float(%x: tensor<4xbf16>) {
  // expected-error @+1 {{'mlx.bitwise_invert' op operands must be integer or bool, got bf16}}
  %0 = mlx.bitwise_invert %x : tensor<4xbf16> -> tensor<4xbf16>
  func.return
}

// -----

func.func @compare_to_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'mlx.less' op result element type must be i1, got i32}}
  %0 = mlx.less %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @compare_mixed(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'mlx.equal' op operands must share one element type, got i32, i64}}
  %0 = mlx.equal %x, %y : tensor<4xi32>, tensor<4xi64> -> tensor<4xi1>
  func.return
}

// -----

func.func @isnan_to_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.isnan' op result element type must be i1, got f32}}
  %0 = mlx.isnan %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @logical_and_bytes(%x: tensor<4xi8>) {
  // expected-error @+1 {{'mlx.logical_and' op operands and result must be i1, got i8}}
  %0 = mlx.logical_and %x, %x : tensor<4xi8>, tensor<4xi8> -> tensor<4xi1>
  func.return
}

// -----

func.func @logical_not_to_bytes(%x: tensor<4xi1>) {
  // expected-error @+1 {{'mlx.logical_not' op operands and result must be i1, got ui8}}
  %0 = mlx.logical_not %x : tensor<4xi1> -> tensor<4xui8>
  func.return
}

// -----

func.func @multiply_not_broadcastable(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.multiply' op operand shapes [2, 3], [4] are not broadcastable}}
  %0 = mlx.multiply %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @subtract_wrong_broadcast(%x: tensor<4x1xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'mlx.subtract' op result shape [4, 1] is not the broadcast shape [4, 3] of the operands}}
  %0 = mlx.subtract %x, %y : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// A dynamic dim broadcasts against a static one, but the rank still has to match.
func.func @power_drops_rank(%x: tensor<2x?xf32>, %y: tensor<?xf32>) {
  // expected-error @+1 {{'mlx.power' op result shape [?] is not the broadcast shape [2, ?] of the operands}}
  %0 = mlx.power %x, %y : tensor<2x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return
}

// -----

func.func @astype_shape(%x: tensor<2xf32>) {
  // expected-error @+1 {{'mlx.astype' op result shape [3] does not match operand shape [2]}}
  %0 = mlx.astype %x : tensor<2xf32> -> tensor<3xf16>
  func.return
}

// -----

func.func @view_width(%x: tensor<2xf32>) {
  // expected-error @+1 {{'mlx.view' op result shape [2] does not match the expected shape [4]}}
  %0 = mlx.view %x : tensor<2xf32> -> tensor<2xi16>
  func.return
}

// -----

func.func @view_bool(%x: tensor<2xi8>) {
  // expected-error @+1 {{'mlx.view' op element types i8 and i1 must both have a bit width (bool has none)}}
  %0 = mlx.view %x : tensor<2xi8> -> tensor<2xi1>
  func.return
}

// -----

func.func @where_float_condition(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.where' op condition must have bool element type, got f32}}
  %0 = mlx.where %c, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_mixed(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xbf16>) {
  // expected-error @+1 {{'mlx.where' op x, y and result must share one element type, got f32, bf16, f32}}
  %0 = mlx.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_shape(%c: tensor<2x1xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.where' op result shape [4] is not the broadcast shape [2, 4] of the operands}}
  %0 = mlx.where %c, %x, %x : tensor<2x1xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}
