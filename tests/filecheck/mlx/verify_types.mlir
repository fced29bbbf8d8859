// IRDL constraints of mlx ops (operand, result and property types, required
// properties), written in the generic form: the custom form does not let most of
// these mistakes through the parser. Each chunk breaks exactly one constraint.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @scalar_operand(%x: f32) {
  // expected-error @+1 {{'mlx.exp' op operand 'input' at position 0 does not verify: f32 should be of base attribute tensor}}
  %0 = "mlx.exp"(%x) : (f32) -> f32
  func.return
}

// -----

func.func @dim_to_i64(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.dim' op result 'result' at position 0 does not verify: i64 should be of base attribute index}}
  %0 = "mlx.dim"(%x) <{axis = 0 : i64}> : (tensor<4xf32>) -> i64
  func.return
}

// -----

func.func @arange_i32_bound(%n: i32) {
  // expected-error @+1 {{'mlx.arange' op operand 'bounds' at position 0 does not verify: i32 should be of base attribute index}}
  %0 = "mlx.arange"(%n) <{static_bounds = array<i64: 0, -9223372036854775808, 1>}> : (i32) -> tensor<?xi64>
  func.return
}

// -----

func.func @constant_vector() {
  // expected-error @+1 {{'mlx.constant' op result 'result' at position 0 does not verify: vector<2xf32> should be of base attribute tensor}}
  %0 = "mlx.constant"() <{value = dense<1.0> : vector<2xf32>}> : () -> vector<2xf32>
  func.return
}

// -----

// Integer properties are i64.
func.func @dim_i32_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.dim' op Expected attribute i64 but got i32}}
  %0 = "mlx.dim"(%x) <{axis = 0 : i32}> : (tensor<4xf32>) -> index
  func.return
}

// -----

func.func @take_along_without_axis(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op property 'axis' expected in operation 'mlx.take_along_axis'}}
  %0 = "mlx.take_along_axis"(%x, %i) : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
  func.return
}

// -----

// Integer lists are array<i64: ...>.
func.func @gather_i16_sizes(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op Expected attribute i64 but got i16}}
  %0 = "mlx.gather"(%x, %i) <{axes = array<i64: 0>, static_slice_sizes = array<i16: 1, 8>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x1x8xf32>
  func.return
}

// -----

// Float properties are f64.
func.func @rms_norm_f32_eps(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.rms_norm' op f32 should be of base attribute f64}}
  %0 = "mlx.rms_norm"(%x) <{eps = 1.0e-05 : f32}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Flags are unit attributes.
func.func @rope_bool_flag(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'mlx.rope' op true should be of base attribute unit}}
  %0 = "mlx.rope"(%x) <{static_offset = array<i64: 0>, dims = 4 : i64, base = 1.0e+04 : f64, scale = 1.0 : f64, traditional = true, operandSegmentSizes = array<i32: 1, 0, 0, 0>}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @layer_norm_segments(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.layer_norm' op Expected operandSegmentSizes property in mlx.layer_norm operation.}}
  %0 = "mlx.layer_norm"(%x) <{eps = 1.0e-05 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @constant_scalar_attr() {
  // expected-error @+1 {{'mlx.constant' op 1.000000e+00 : f32 should be of base attribute dense}}
  %0 = "mlx.constant"() <{value = 1.0 : f32}> : () -> tensor<f32>
  func.return
}

// -----

// expected-error @+1 {{'mlx.global' op Unexpected attribute "w.bin"}}
"mlx.global"() <{sym_name = "w", kind = "parameter", type = tensor<2xf32>, value = "w.bin"}> : () -> ()

// -----

// expected-error @+1 {{'mlx.global' op i32 should be of base attribute tensor}}
"mlx.global"() <{sym_name = "w", kind = "parameter", type = i32}> : () -> ()

// -----

"mlx.global"() <{sym_name = "w", kind = "parameter", type = tensor<2xf32>}> : () -> ()
func.func @weight_string_name() {
  // expected-error @+1 {{'mlx.weight' op "w" should be of base attribute symbol_ref}}
  %0 = "mlx.weight"() <{global_name = "w"}> : () -> tensor<2xf32>
  func.return
}
