// remove-identity-slices: a slice from 0 to each dim's size (a literal for a static dim,
// `mlx.dim` of the input at that axis for a dynamic one) with step 1 is its input.
// RUN: mlx-opt %s -p remove-identity-slices | filecheck %s

// %a takes everything and goes; %b starts at row 1 and stays.
// CHECK-LABEL: func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
// CHECK-NEXT:    %n = mlx.dim %x axis 1 : tensor<2x?xf32>
// CHECK-NEXT:    %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
// CHECK-NEXT:    func.return %x, %b : tensor<2x?xf32>, tensor<1x?xf32>
func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?xf32>
  %a = mlx.slice %x [0, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<2x?xf32>
  %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
  func.return %a, %b : tensor<2x?xf32>, tensor<1x?xf32>
}

// CHECK-LABEL: func.func @static(%x: tensor<3x4xf16>) -> tensor<3x4xf16> {
// CHECK-NEXT:    func.return %x : tensor<3x4xf16>
func.func @static(%x: tensor<3x4xf16>) -> tensor<3x4xf16> {
  %a = mlx.slice %x [0, 0] to [3, 4] step [1, 1] : tensor<3x4xf16> -> tensor<3x4xf16>
  func.return %a : tensor<3x4xf16>
}

// Kept: a step of 2, a stop short of the end, and a dynamic stop that is the size of
// another axis (rows where the columns are meant; same type, not the whole input).
// CHECK-LABEL: func.func @partial(%x: tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<3x?xf32>, tensor<4x?xf32>) {
// CHECK-NEXT:    %n = mlx.dim %x axis 1 : tensor<4x?xf32>
// CHECK-NEXT:    %r = mlx.dim %x axis 0 : tensor<4x?xf32>
// CHECK-NEXT:    %a = mlx.slice %x [0, 0] to [4, %n] step [2, 1] : tensor<4x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    %b = mlx.slice %x [0, 0] to [3, %n] step [1, 1] : tensor<4x?xf32> -> tensor<3x?xf32>
// CHECK-NEXT:    %c = mlx.slice %x [0, 0] to [4, %r] step [1, 1] : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT:    func.return %a, %b, %c : tensor<2x?xf32>, tensor<3x?xf32>, tensor<4x?xf32>
func.func @partial(%x: tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<3x?xf32>, tensor<4x?xf32>) {
  %n = mlx.dim %x axis 1 : tensor<4x?xf32>
  %r = mlx.dim %x axis 0 : tensor<4x?xf32>
  %a = mlx.slice %x [0, 0] to [4, %n] step [2, 1] : tensor<4x?xf32> -> tensor<2x?xf32>
  %b = mlx.slice %x [0, 0] to [3, %n] step [1, 1] : tensor<4x?xf32> -> tensor<3x?xf32>
  %c = mlx.slice %x [0, 0] to [4, %r] step [1, 1] : tensor<4x?xf32> -> tensor<4x?xf32>
  func.return %a, %b, %c : tensor<2x?xf32>, tensor<3x?xf32>, tensor<4x?xf32>
}
