// fold-constant-casts: astype of a small constant (at most 64 elements, of a dtype the
// folder knows) -> a constant of the new type, rounded as MLX rounds (IEEE round to
// nearest even, float -> int truncates toward zero). The pass alone leaves the source
// constant to dce.
// RUN: mlx-opt %s -p fold-constant-casts | filecheck %s

// f32(1.003) to the nearest f16: 1027 * 2^-10.
// CHECK-LABEL: func.func @round_to_f16() -> tensor<f16> {
// CHECK-NEXT:    %a = mlx.constant dense<1.003000e+00> : tensor<f32>
// CHECK-NEXT:    %b = mlx.constant dense<1.002930e+00> : tensor<f16>
// CHECK-NEXT:    func.return %b : tensor<f16>
func.func @round_to_f16() -> tensor<f16> {
  %a = mlx.constant dense<1.003> : tensor<f32>
  %b = mlx.astype %a : tensor<f32> -> tensor<f16>
  func.return %b : tensor<f16>
}

// bf16 keeps 8 significant bits: pi -> 201 * 2^-6 = 3.140625, and -65504 (the f16
// minimum) rounds up in magnitude to -65536.
// CHECK-LABEL: func.func @round_to_bf16() -> tensor<3xbf16> {
// CHECK-NEXT:    %a = mlx.constant dense<[1.000000e+00, 3.14159274, -6.550400e+04]> : tensor<3xf32>
// CHECK-NEXT:    %b = mlx.constant dense<[1.000000e+00, 3.140620e+00, -6.553600e+04]> : tensor<3xbf16>
// CHECK-NEXT:    func.return %b : tensor<3xbf16>
func.func @round_to_bf16() -> tensor<3xbf16> {
  %a = mlx.constant dense<[1.0, 3.14159274, -65504.0]> : tensor<3xf32>
  %b = mlx.astype %a : tensor<3xf32> -> tensor<3xbf16>
  func.return %b : tensor<3xbf16>
}

// Float -> int truncates toward zero; float -> bool is "non-zero".
// CHECK-LABEL: func.func @float_to_int() -> (tensor<4xi32>, tensor<4xi1>) {
// CHECK-NEXT:    %a = mlx.constant dense<[2.700000e+00, -2.700000e+00, 5.000000e-01, 0.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %b = mlx.constant dense<[2, -2, 0, 0]> : tensor<4xi32>
// CHECK-NEXT:    %c = mlx.constant dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-NEXT:    func.return %b, %c : tensor<4xi32>, tensor<4xi1>
func.func @float_to_int() -> (tensor<4xi32>, tensor<4xi1>) {
  %a = mlx.constant dense<[2.7, -2.7, 0.5, 0.0]> : tensor<4xf32>
  %b = mlx.astype %a : tensor<4xf32> -> tensor<4xi32>
  %c = mlx.astype %a : tensor<4xf32> -> tensor<4xi1>
  func.return %b, %c : tensor<4xi32>, tensor<4xi1>
}

// 2049 lies halfway between the f16 neighbours 2048 and 2050: ties to even, 2048.
// CHECK-LABEL: func.func @int_to_float() -> (tensor<2xf16>, tensor<2xf32>) {
// CHECK-NEXT:    %a = mlx.constant dense<[2049, -3]> : tensor<2xi64>
// CHECK-NEXT:    %b = mlx.constant dense<[2.048000e+03, -3.000000e+00]> : tensor<2xf16>
// CHECK-NEXT:    %t = mlx.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %c = mlx.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    func.return %b, %c : tensor<2xf16>, tensor<2xf32>
func.func @int_to_float() -> (tensor<2xf16>, tensor<2xf32>) {
  %a = mlx.constant dense<[2049, -3]> : tensor<2xi64>
  %b = mlx.astype %a : tensor<2xi64> -> tensor<2xf16>
  %t = mlx.constant dense<[true, false]> : tensor<2xi1>
  %c = mlx.astype %t : tensor<2xi1> -> tensor<2xf32>
  func.return %b, %c : tensor<2xf16>, tensor<2xf32>
}

// Narrowing an int wraps (two's complement): 300 -> 44, -129 -> 127.
// CHECK-LABEL: func.func @narrow_int() -> tensor<2xi8> {
// CHECK-NEXT:    %a = mlx.constant dense<[300, -129]> : tensor<2xi32>
// CHECK-NEXT:    %b = mlx.constant dense<[44, 127]> : tensor<2xi8>
// CHECK-NEXT:    func.return %b : tensor<2xi8>
func.func @narrow_int() -> tensor<2xi8> {
  %a = mlx.constant dense<[300, -129]> : tensor<2xi32>
  %b = mlx.astype %a : tensor<2xi32> -> tensor<2xi8>
  func.return %b : tensor<2xi8>
}

// A splat of 8 elements is small enough; f32(0.1) -> 1638 * 2^-14.
// CHECK-LABEL: func.func @splat() -> tensor<2x4xf16> {
// CHECK-NEXT:    %a = mlx.constant dense<1.000000e-01> : tensor<2x4xf32>
// CHECK-NEXT:    %b = mlx.constant dense<9.997560e-02> : tensor<2x4xf16>
// CHECK-NEXT:    func.return %b : tensor<2x4xf16>
func.func @splat() -> tensor<2x4xf16> {
  %a = mlx.constant dense<0.1> : tensor<2x4xf32>
  %b = mlx.astype %a : tensor<2x4xf32> -> tensor<2x4xf16>
  func.return %b : tensor<2x4xf16>
}

// Not folded: 72 elements (more than 64), even as a splat.
// CHECK-LABEL: func.func @too_large() -> tensor<8x9xf16> {
// CHECK-NEXT:    %a = mlx.constant dense<1.000000e-01> : tensor<8x9xf32>
// CHECK-NEXT:    %b = mlx.astype %a : tensor<8x9xf32> -> tensor<8x9xf16>
// CHECK-NEXT:    func.return %b : tensor<8x9xf16>
func.func @too_large() -> tensor<8x9xf16> {
  %a = mlx.constant dense<0.1> : tensor<8x9xf32>
  %b = mlx.astype %a : tensor<8x9xf32> -> tensor<8x9xf16>
  func.return %b : tensor<8x9xf16>
}

// Not folded: the input is no constant.
// CHECK-LABEL: func.func @not_constant(%x: tensor<f32>) -> tensor<f16> {
// CHECK-NEXT:    %b = mlx.astype %x : tensor<f32> -> tensor<f16>
// CHECK-NEXT:    func.return %b : tensor<f16>
func.func @not_constant(%x: tensor<f32>) -> tensor<f16> {
  %b = mlx.astype %x : tensor<f32> -> tensor<f16>
  func.return %b : tensor<f16>
}

// Not folded: ui16 and ui32 are dtypes the folder does not compute in.
// CHECK-LABEL: func.func @unsupported_dtype() -> (tensor<2xui16>, tensor<2xf32>) {
// CHECK-NEXT:    %a = mlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %b = mlx.astype %a : tensor<2xf32> -> tensor<2xui16>
// CHECK-NEXT:    %c = mlx.constant dense<[1, 2]> : tensor<2xui32>
// CHECK-NEXT:    %d = mlx.astype %c : tensor<2xui32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %b, %d : tensor<2xui16>, tensor<2xf32>
func.func @unsupported_dtype() -> (tensor<2xui16>, tensor<2xf32>) {
  %a = mlx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = mlx.astype %a : tensor<2xf32> -> tensor<2xui16>
  %c = mlx.constant dense<[1, 2]> : tensor<2xui32>
  %d = mlx.astype %c : tensor<2xui32> -> tensor<2xf32>
  func.return %b, %d : tensor<2xui16>, tensor<2xf32>
}
