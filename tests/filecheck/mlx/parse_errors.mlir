// Malformed custom syntax of mlx ops: each chunk is one parse error, reported at the
// offending token (file:line:col, the source line, a caret under the token, the message).
// RUN: mlx-opt %s --split-input-file --parsing-diagnostics | filecheck %s

func.func @constant_scalar_attr() {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:21
  // CHECK-NEXT: %0 = mlx.constant 1.0 : f32
  // CHECK-NEXT: ^^^^^^^^^
  // CHECK-NEXT: expected a dense<...> : tensor<...> literal
  %0 = mlx.constant 1.0 : f32
  func.return
}

// -----

// Large payloads are mlx.global symbols; an mlx.constant is an inline dense<...>.
func.func @constant_resource() {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:21
  // CHECK-NEXT: %0 = mlx.constant dense_resource<blob> : tensor<4xf32>
  // CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  // CHECK-NEXT: expected a dense<...> : tensor<...> literal
  %0 = mlx.constant dense_resource<blob> : tensor<4xf32>
  func.return
}

// -----

func.func @int_list_identifier(%x: tensor<2x3xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:29
  // CHECK-NEXT: %0 = mlx.transpose %x [1, a] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK-NEXT: ^
  // CHECK-NEXT: Expected integer literal
  %0 = mlx.transpose %x [1, a] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @int_list_bool(%x: tensor<2x3xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:28
  // CHECK-NEXT: %0 = mlx.expand_dims %x [true] : tensor<2x3xf32> -> tensor<1x2x3xf32>
  // CHECK-NEXT: ^^^^
  // CHECK-NEXT: Expected integer literal
  %0 = mlx.expand_dims %x [true] : tensor<2x3xf32> -> tensor<1x2x3xf32>
  func.return
}

// -----

func.func @int_list_trailing_comma(%x: tensor<8xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:28
  // CHECK-NEXT: %0 = mlx.sum %x axes [0, ] : tensor<8xf32> -> tensor<f32>
  // CHECK-NEXT: ^
  // CHECK-NEXT: Expected integer literal
  %0 = mlx.sum %x axes [0, ] : tensor<8xf32> -> tensor<f32>
  func.return
}

// -----

// A size list takes integers and index values, not floats.
func.func @size_list_float(%x: tensor<2x3xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:24
  // CHECK-NEXT: %0 = mlx.reshape %x [6.0] : tensor<2x3xf32> -> tensor<6xf32>
  // CHECK-NEXT: ^^^
  // CHECK-NEXT: Expected integer literal
  %0 = mlx.reshape %x [6.0] : tensor<2x3xf32> -> tensor<6xf32>
  func.return
}

// -----

// The kind of a global is a string.
// CHECK: parse_errors.mlir:[[# @LINE + 4]]:15
// CHECK-NEXT: mlx.global @w parameter : tensor<4xf32>
// CHECK-NEXT: ^^^^^^^^^
// CHECK-NEXT: attribute expected
mlx.global @w parameter : tensor<4xf32>

// -----

func.func @weight_without_symbol() {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:19
  // CHECK-NEXT: %0 = mlx.weight : tensor<4xf32>
  // CHECK-NEXT: ^
  // CHECK-NEXT: attribute expected
  %0 = mlx.weight : tensor<4xf32>
  func.return
}

// -----

func.func @slice_without_step(%x: tensor<8xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:32
  // CHECK-NEXT: %0 = mlx.slice %x [0] to [8] : tensor<8xf32> -> tensor<8xf32>
  // CHECK-NEXT: ^
  // CHECK-NEXT: Expected 'step'
  %0 = mlx.slice %x [0] to [8] : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

// An optional group's keyword commits to its value.
func.func @take_axis_without_value(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:29
  // CHECK-NEXT: %0 = mlx.take %x, %i axis : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  // CHECK-NEXT: ^
  // CHECK-NEXT: Expected integer literal
  %0 = mlx.take %x, %i axis : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  func.return
}

// -----

// An optional operand carries its type inline.
func.func @sdpa_mask_without_type(%q: tensor<1x8x4x64xf16>, %m: tensor<4x4xi1>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:60
  // CHECK-NEXT: %0 = mlx.scaled_dot_product_attention %q, %q, %q mask %m scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x4x64xf16>, tensor<1x8x4x64xf16> -> tensor<1x8x4x64xf16>
  // CHECK-NEXT: ^^^^^
  // CHECK-NEXT: Expected ':'
  %0 = mlx.scaled_dot_product_attention %q, %q, %q mask %m scale 1.250000e-01 : tensor<1x8x4x64xf16>, tensor<1x8x4x64xf16>, tensor<1x8x4x64xf16> -> tensor<1x8x4x64xf16>
  func.return
}

// -----

func.func @unary_without_result_type(%x: tensor<2x3xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 5]]:3
  // CHECK-NEXT: func.return
  // CHECK-NEXT: ^^^^^^^^^^^
  // CHECK-NEXT: Expected '->'
  %0 = mlx.exp %x : tensor<2x3xf32>
  func.return
}

// -----

func.func @unknown_op(%x: tensor<8xf32>) {
  // CHECK: parse_errors.mlir:[[# @LINE + 4]]:23
  // CHECK-NEXT: %0 = mlx.frobnicate %x : tensor<8xf32>
  // CHECK-NEXT: ^^
  // CHECK-NEXT: Operation mlx.frobnicate is not registered
  %0 = mlx.frobnicate %x : tensor<8xf32>
  func.return
}
