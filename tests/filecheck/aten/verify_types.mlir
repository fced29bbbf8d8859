// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// IRDL-level failures: operand, result and property constraints, operand and
// result counts, and segment sizes, in the generic and the custom form.

func.func @scalar_for_tensor(%x: f32) {
  // expected-error @+1 {{'aten.exp' op operand 'input' at position 0 does not verify: f32 should be of base attribute tensor}}
  %0 = "aten.exp"(%x) : (f32) -> tensor<2xf32>
  func.return
}

// -----

// A custom-form type is checked while parsing: the message has no op prefix.
func.func @custom_result_not_tensor(%x: tensor<2xf32>) {
  // expected-error @+1 {{memref<2xf32> should be of base attribute tensor}}
  %0 = aten.exp %x : tensor<2xf32> -> memref<2xf32>
  func.return
}

// -----

func.func @vector_for_tensor_or_scalar(%x: tensor<2xf32>, %y: vector<2xf32>) {
  // expected-error @+1 {{'aten.add' op operand 'other' at position 1 does not verify: Unexpected attribute vector<2xf32>}}
  %0 = "aten.add"(%x, %y) : (tensor<2xf32>, vector<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// A float Scalar is f64 (a Python float); f32 is not a Scalar type.
func.func @f32_scalar(%x: tensor<2xf32>, %y: f32) {
  // expected-error @+1 {{Unexpected attribute f32}}
  %0 = aten.add %x, %y : tensor<2xf32>, f32 -> tensor<2xf32>
  func.return
}

// -----

func.func @sym_size_result(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.sym_size' op result 'result' at position 0 does not verify: i64 should be of base attribute index}}
  %0 = "aten.sym_size"(%x) <{dim = 0 : i64}> : (tensor<2xf32>) -> i64
  func.return
}

// -----

func.func @size_operand_not_index(%x: tensor<2x3xf32>, %n: i64) {
  // expected-error @+1 {{'aten.view' op operand 'sizes' at position 1 does not verify: i64 should be of base attribute index}}
  %0 = "aten.view"(%x, %n) <{static_sizes = array<i64: -9223372036854775808>}> : (tensor<2x3xf32>, i64) -> tensor<6xf32>
  func.return
}

// -----

func.func @alpha_f32(%x: tensor<2xf32>, %y: f64) {
  // expected-error @+1 {{'aten.add' op f32 should be of base attribute f64}}
  %0 = "aten.add"(%x, %y) <{alpha = 2.000000e+00 : f32}> : (tensor<2xf32>, f64) -> tensor<2xf32>
  func.return
}

// -----

func.func @dim_i32(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.cumsum' op Expected attribute i64 but got i32}}
  %0 = "aten.cumsum"(%x) <{dim = 0 : i32}> : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @dims_i32(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.sum' op Expected attribute i64 but got i32}}
  %0 = "aten.sum"(%x) <{dims = array<i32: 0>}> : (tensor<2xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @keepdim_bool(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.sum' op true should be of base attribute unit}}
  %0 = "aten.sum"(%x) <{keepdim = true}> : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @rounding_mode_int(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.div' op 3 : i64 should be of base attribute string}}
  %0 = "aten.div"(%x, %x) <{rounding_mode = 3 : i64}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @missing_dim(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.cumsum' op property 'dim' expected in operation 'aten.cumsum'}}
  %0 = "aten.cumsum"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @operand_count(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.exp' op Expected 1 operand, but got 2}}
  %0 = "aten.exp"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @result_count(%x: tensor<2xf32>) {
  // expected-error @+1 {{'aten.exp' op Expected 1 result, but got 2}}
  %0, %1 = "aten.exp"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @clamp_no_segments(%x: tensor<2xf32>, %c: f64) {
  // expected-error @+1 {{'aten.clamp' op Expected operandSegmentSizes property in aten.clamp operation.}}
  %0 = "aten.clamp"(%x, %c) : (tensor<2xf32>, f64) -> tensor<2xf32>
  func.return
}

// -----

func.func @clamp_bad_segments(%x: tensor<2xf32>, %c: f64) {
  // expected-error @+1 {{'aten.clamp' op operand count (2) does not match with the total size (3) specified in attribute 'operandSegmentSizes'}}
  %0 = "aten.clamp"(%x, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2xf32>, f64) -> tensor<2xf32>
  func.return
}
