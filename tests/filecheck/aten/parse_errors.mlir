// RUN: mlx-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Malformed custom forms of aten ops: each chunk checks the line:col of the
// parse error, the offending source line, the caret under it and the message.

// A type is missing before `->`.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:22
// CHECK-NEXT: %0 = aten.exp %x
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: type expected
func.func @missing_input_type(%x: tensor<2x3xf32>) {
  %0 = aten.exp %x : -> tensor<2x3xf32>
  func.return
}

// -----

// The result type is missing: the error points at the next token.
// CHECK: parse_errors.mlir:[[# @LINE + 6]]:3
// CHECK-NEXT: func.return
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected '->'
func.func @missing_arrow(%x: tensor<2x3xf32>) {
  %0 = aten.exp %x : tensor<2x3xf32>
  func.return
}

// -----

// A static integer list holds integer literals only...
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:28
// CHECK-NEXT: %0 = aten.permute %x [1, a]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected integer literal
func.func @bad_int_list(%x: tensor<2x3xf32>) {
  %0 = aten.permute %x [1, a] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

// ... not SSA values ...
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:25
// CHECK-NEXT: %0 = aten.permute %x [%x, 0]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected integer literal
func.func @value_in_static_list(%x: tensor<2x3xf32>) {
  %0 = aten.permute %x [%x, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

// ... and not booleans.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:22
// CHECK-NEXT: %0 = aten.flip %x [true]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected integer literal
func.func @bool_in_int_list(%x: tensor<2x3xf32>) {
  %0 = aten.flip %x [true] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// A mixed size list holds integers and index values.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:25
// CHECK-NEXT: %0 = aten.view %x [2, 3.0]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected integer literal
func.func @float_in_size_list(%x: tensor<2x3xf32>) {
  %0 = aten.view %x [2, 3.0] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// Integers must fit in i64...
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:25
// CHECK-NEXT: %0 = aten.flip %x [0, 99999999999999999999]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: integer 99999999999999999999 is outside (-2^63, 2^63)
func.func @int_out_of_range(%x: tensor<2x3xf32>) {
  %0 = aten.flip %x [0, 99999999999999999999] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// ... and -2^63, the dynamic marker, cannot be written as a literal.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:22
// CHECK-NEXT: %0 = aten.view %x [-9223372036854775808]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: integer -9223372036854775808 is outside (-2^63, 2^63)
func.func @dynamic_marker_literal(%x: tensor<2x3xf32>) {
  %0 = aten.view %x [-9223372036854775808] : tensor<2x3xf32> -> tensor<6xf32>
  func.return
}

// -----

// CHECK: parse_errors.mlir:[[# @LINE + 5]]:27
// CHECK-NEXT: %0 = aten.view %x [2, 3
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: ']' expected
func.func @unclosed_list(%x: tensor<2x3xf32>) {
  %0 = aten.view %x [2, 3 : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: parse_errors.mlir:[[# @LINE + 5]]:25
// CHECK-NEXT: %0 = aten.sum %x dims 0
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: '[' expected
func.func @dims_without_brackets(%x: tensor<2x3xf32>) {
  %0 = aten.sum %x dims 0 : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

// An unknown keyword: after the optional groups only the type list can follow.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:20
// CHECK-NEXT: %0 = aten.sum %x dimz [0]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected ':'
func.func @unknown_keyword(%x: tensor<2x3xf32>) {
  %0 = aten.sum %x dimz [0] : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

// Optional groups come in the order of the format: `dims` before `keepdim`.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:28
// CHECK-NEXT: %0 = aten.sum %x keepdim dims [0]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected ':'
func.func @keywords_out_of_order(%x: tensor<2x3xf32>) {
  %0 = aten.sum %x keepdim dims [0] : tensor<2x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

// CHECK: parse_errors.mlir:[[# @LINE + 5]]:33
// CHECK-NEXT: %0 = aten.transpose %x dims 0 1
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected ','
func.func @transpose_missing_comma(%x: tensor<2x3xf32>) {
  %0 = aten.transpose %x dims 0 1 : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

// alpha is an f64 property: a float literal.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:30
// CHECK-NEXT: %0 = aten.add %x, %x alpha 2
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected float literal
func.func @alpha_integer(%x: tensor<2x3xf32>) {
  %0 = aten.add %x, %x alpha 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: parse_errors.mlir:[[# @LINE + 5]]:38
// CHECK-NEXT: %0 = aten.div %x, %x rounding_mode floor
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: string literal expected
func.func @rounding_mode_unquoted(%x: tensor<2x3xf32>) {
  %0 = aten.div %x, %x rounding_mode floor : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// A keyword whose string value is missing is an error, not an absent property.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:33
// CHECK-NEXT: %0 = aten.gelu %x approximate
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: string literal expected
func.func @approximate_without_value(%x: tensor<2x3xf32>) {
  %0 = aten.gelu %x approximate : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// An optional operand carries its own type: `bias %b : tensor<4xf32>`.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:52
// CHECK-NEXT: %0 = aten.linear %x, %w bias %b
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected ':'
func.func @optional_operand_without_type(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) {
  %0 = aten.linear %x, %w bias %b : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// The index tensors' types are a parenthesized list.
// CHECK: parse_errors.mlir:[[# @LINE + 5]]:52
// CHECK-NEXT: %0 = aten.index %x[%i] at [0]
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Expected '('
func.func @index_types_without_parens(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
  %0 = aten.index %x[%i] at [0] : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: parse_errors.mlir:[[# @LINE + 5]]:24
// CHECK-NEXT: %0 = aten.frobnicate %x
// CHECK-NEXT: {{\^+$}}
// CHECK-NEXT: Operation aten.frobnicate is not registered
func.func @unregistered_op(%x: tensor<2x3xf32>) {
  %0 = aten.frobnicate %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
