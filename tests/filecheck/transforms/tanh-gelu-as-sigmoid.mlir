// tanh-gelu-as-sigmoid: the tanh GELU 0.5x(1 + tanh(k(x + c x^3))) -> x * sigmoid(x(2k +
// 2kc x^2)), from k and c as the program holds them; the half and the one must be
// exactly 0.5 and 1 (the identity (1 + tanh z)/2 = sigmoid(2z) needs them). Within 5e-7
// of torch's float64 GELU in f32 (docs/architecture.md). x^3 may be square(x)*x, x*square(x) or
// power(x, 3); operands in any order.
// RUN: mlx-opt %s -p tanh-gelu-as-sigmoid | filecheck %s

// torch's gelu(approximate="tanh") as convert-aten-to-mlx lowers it (Gemma 3).
// 2k = 1.59576917, 2kc = 0.0713548139.
// CHECK-LABEL: func.func @torch_gelu_tanh(%x: tensor<?x128xf32>) -> tensor<?x128xf32> {
// CHECK:         %one_plus = mlx.add %t, %one
// CHECK-NEXT:    %[[SQ:.*]] = mlx.square %x : tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.constant dense<0.0713548{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT:    %[[Q:.*]] = mlx.multiply %[[SQ]], %[[B]] : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
// CHECK-NEXT:    %[[A:.*]] = mlx.constant dense<1.5957691{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = mlx.add %[[Q]], %[[A]] : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
// CHECK-NEXT:    %[[Z:.*]] = mlx.multiply %x, %[[S]] : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    %[[G:.*]] = mlx.sigmoid %[[Z]] : tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.multiply %x, %[[G]] : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<?x128xf32>
func.func @torch_gelu_tanh(%x: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %half = mlx.constant dense<5.000000e-01> : tensor<f32>
  %half_x = mlx.multiply %x, %half : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
  %sq = mlx.square %x : tensor<?x128xf32> -> tensor<?x128xf32>
  %cube = mlx.multiply %sq, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %c = mlx.constant dense<4.471500e-02> : tensor<f32>
  %cc = mlx.multiply %cube, %c : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
  %inner = mlx.add %x, %cc : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %k = mlx.constant dense<0.797884583> : tensor<f32>
  %z = mlx.multiply %inner, %k : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
  %t = mlx.tanh %z : tensor<?x128xf32> -> tensor<?x128xf32>
  %one = mlx.constant dense<1.000000e+00> : tensor<f32>
  %one_plus = mlx.add %t, %one : tensor<?x128xf32>, tensor<f32> -> tensor<?x128xf32>
  %r = mlx.multiply %half_x, %one_plus : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  func.return %r : tensor<?x128xf32>
}

// HF's NewGELUActivation (Phi), bf16: power(x, 3), constants first, the product's
// operands swapped.
// CHECK-LABEL: func.func @new_gelu(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
// CHECK:         %one_plus = mlx.add %one, %t
// CHECK-NEXT:    mlx.square %x
// CHECK:         mlx.sigmoid
// CHECK-NEXT:    %[[R:.*]] = mlx.multiply %x, %{{.*}} : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x8xbf16>
func.func @new_gelu(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %half = mlx.constant dense<5.000000e-01> : tensor<bf16>
  %half_x = mlx.multiply %half, %x : tensor<bf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  %three = mlx.constant dense<3.000000e+00> : tensor<bf16>
  %cube = mlx.power %x, %three : tensor<2x8xbf16>, tensor<bf16> -> tensor<2x8xbf16>
  %c = mlx.constant dense<4.471500e-02> : tensor<bf16>
  %cc = mlx.multiply %c, %cube : tensor<bf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  %inner = mlx.add %cc, %x : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  %k = mlx.constant dense<0.797884583> : tensor<bf16>
  %z = mlx.multiply %k, %inner : tensor<bf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  %t = mlx.tanh %z : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %one = mlx.constant dense<1.000000e+00> : tensor<bf16>
  %one_plus = mlx.add %one, %t : tensor<bf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  %r = mlx.multiply %one_plus, %half_x : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %r : tensor<2x8xbf16>
}

// Kept: 0.25 instead of 0.5 is not the identity's half.
// CHECK-LABEL: func.func @not_half
// CHECK-NOT:     mlx.sigmoid
// CHECK:         mlx.tanh
func.func @not_half(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = mlx.constant dense<2.500000e-01> : tensor<f32>
  %half_x = mlx.multiply %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %sq = mlx.square %x : tensor<8xf32> -> tensor<8xf32>
  %cube = mlx.multiply %sq, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = mlx.constant dense<4.471500e-02> : tensor<f32>
  %cc = mlx.multiply %cube, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %inner = mlx.add %x, %cc : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %k = mlx.constant dense<0.797884583> : tensor<f32>
  %z = mlx.multiply %inner, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t = mlx.tanh %z : tensor<8xf32> -> tensor<8xf32>
  %one = mlx.constant dense<1.000000e+00> : tensor<f32>
  %one_plus = mlx.add %t, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %r = mlx.multiply %half_x, %one_plus : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// Kept: the cube is of another value than the one halved.
// CHECK-LABEL: func.func @other_cube
// CHECK-NOT:     mlx.sigmoid
// CHECK:         mlx.tanh
func.func @other_cube(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %half = mlx.constant dense<5.000000e-01> : tensor<f32>
  %half_x = mlx.multiply %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %sq = mlx.square %y : tensor<8xf32> -> tensor<8xf32>
  %cube = mlx.multiply %sq, %y : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = mlx.constant dense<4.471500e-02> : tensor<f32>
  %cc = mlx.multiply %cube, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %inner = mlx.add %x, %cc : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %k = mlx.constant dense<0.797884583> : tensor<f32>
  %z = mlx.multiply %inner, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t = mlx.tanh %z : tensor<8xf32> -> tensor<8xf32>
  %one = mlx.constant dense<1.000000e+00> : tensor<f32>
  %one_plus = mlx.add %t, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %r = mlx.multiply %half_x, %one_plus : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}
