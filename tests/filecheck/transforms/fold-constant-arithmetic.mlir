// fold-constant-arithmetic: add, subtract, multiply, divide, maximum or minimum of two
// small float constants (at most 64 elements) -> a constant, computed in the operands'
// dtype as MLX computes it. The pass alone leaves the operand constants to dce.
// RUN: mlx-opt %s -p fold-constant-arithmetic | filecheck %s

// CHECK-LABEL: func.func @all_ops() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
// CHECK-NEXT:    %c = mlx.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT:    %d = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %mul = mlx.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT:    %add = mlx.constant dense<4.500000e+00> : tensor<f32>
// CHECK-NEXT:    %sub = mlx.constant dense<-5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %div = mlx.constant dense<8.000000e-01> : tensor<f32>
// CHECK-NEXT:    %max = mlx.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT:    %min = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    func.return %mul, %add, %sub, %div, %max, %min
func.func @all_ops() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %c = mlx.constant dense<2.5> : tensor<f32>
  %d = mlx.constant dense<2.0> : tensor<f32>
  %mul = mlx.multiply %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  %add = mlx.add %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  %sub = mlx.subtract %d, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  %div = mlx.divide %d, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  %max = mlx.maximum %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  %min = mlx.minimum %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %mul, %add, %sub, %div, %max, %min : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// Rounded in the dtype: in f16, 1 + 1e-4 is 1 (the spacing at 1 is 2^-10); 1/3 is the
// nearest f32; in bf16, 256 + 1 = 257 is halfway between 256 and 258: ties to even, 256.
// CHECK-LABEL: func.func @rounding() -> (tensor<f16>, tensor<f32>, tensor<bf16>) {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f16>
// CHECK-NEXT:    %tiny = mlx.constant dense<1.000170e-04> : tensor<f16>
// CHECK-NEXT:    %h = mlx.constant dense<1.000000e+00> : tensor<f16>
// CHECK-NEXT:    %a = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %b = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %third = mlx.constant dense<0.333333343> : tensor<f32>
// CHECK-NEXT:    %x = mlx.constant dense<2.560000e+02> : tensor<bf16>
// CHECK-NEXT:    %y = mlx.constant dense<1.000000e+00> : tensor<bf16>
// CHECK-NEXT:    %z = mlx.constant dense<2.560000e+02> : tensor<bf16>
// CHECK-NEXT:    func.return %h, %third, %z : tensor<f16>, tensor<f32>, tensor<bf16>
func.func @rounding() -> (tensor<f16>, tensor<f32>, tensor<bf16>) {
  %one = mlx.constant dense<1.0> : tensor<f16>
  %tiny = mlx.constant dense<1.0e-04> : tensor<f16>
  %h = mlx.add %one, %tiny : tensor<f16>, tensor<f16> -> tensor<f16>
  %a = mlx.constant dense<1.0> : tensor<f32>
  %b = mlx.constant dense<3.0> : tensor<f32>
  %third = mlx.divide %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %x = mlx.constant dense<256.0> : tensor<bf16>
  %y = mlx.constant dense<1.0> : tensor<bf16>
  %z = mlx.add %x, %y : tensor<bf16>, tensor<bf16> -> tensor<bf16>
  func.return %h, %third, %z : tensor<f16>, tensor<f32>, tensor<bf16>
}

// Operands broadcast: a vector times a scalar.
// CHECK-LABEL: func.func @broadcast() -> tensor<3xf32> {
// CHECK-NEXT:    %v = mlx.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %s = mlx.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %r = mlx.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00]> : tensor<3xf32>
// CHECK-NEXT:    func.return %r : tensor<3xf32>
func.func @broadcast() -> tensor<3xf32> {
  %v = mlx.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = mlx.constant dense<0.5> : tensor<f32>
  %r = mlx.multiply %v, %s : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// Not folded: integer arithmetic.
// CHECK-LABEL: func.func @integers() -> tensor<i32> {
// CHECK-NEXT:    %a = mlx.constant dense<7> : tensor<i32>
// CHECK-NEXT:    %b = mlx.constant dense<2> : tensor<i32>
// CHECK-NEXT:    %c = mlx.add %a, %b : tensor<i32>, tensor<i32> -> tensor<i32>
// CHECK-NEXT:    func.return %c : tensor<i32>
func.func @integers() -> tensor<i32> {
  %a = mlx.constant dense<7> : tensor<i32>
  %b = mlx.constant dense<2> : tensor<i32>
  %c = mlx.add %a, %b : tensor<i32>, tensor<i32> -> tensor<i32>
  func.return %c : tensor<i32>
}

// Not folded: one operand is no constant.
// CHECK-LABEL: func.func @not_constant(%x: tensor<f32>) -> tensor<f32> {
// CHECK-NEXT:    %a = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %b = mlx.multiply %x, %a : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %b : tensor<f32>
func.func @not_constant(%x: tensor<f32>) -> tensor<f32> {
  %a = mlx.constant dense<2.0> : tensor<f32>
  %b = mlx.multiply %x, %a : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %b : tensor<f32>
}

// Not folded: power and comparisons are not among the folded ops.
// CHECK-LABEL: func.func @not_foldable() -> (tensor<f32>, tensor<i1>) {
// CHECK-NEXT:    %a = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %b = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %p = mlx.power %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %l = mlx.less %a, %b : tensor<f32>, tensor<f32> -> tensor<i1>
// CHECK-NEXT:    func.return %p, %l : tensor<f32>, tensor<i1>
func.func @not_foldable() -> (tensor<f32>, tensor<i1>) {
  %a = mlx.constant dense<2.0> : tensor<f32>
  %b = mlx.constant dense<3.0> : tensor<f32>
  %p = mlx.power %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = mlx.less %a, %b : tensor<f32>, tensor<f32> -> tensor<i1>
  func.return %p, %l : tensor<f32>, tensor<i1>
}

// Not folded: an operand of 65 elements (more than 64).
// CHECK-LABEL: func.func @too_large() -> tensor<65xf32> {
// CHECK-NEXT:    %a = mlx.constant dense<2.000000e+00> : tensor<65xf32>
// CHECK-NEXT:    %b = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %c = mlx.add %a, %b : tensor<65xf32>, tensor<f32> -> tensor<65xf32>
// CHECK-NEXT:    func.return %c : tensor<65xf32>
func.func @too_large() -> tensor<65xf32> {
  %a = mlx.constant dense<2.0> : tensor<65xf32>
  %b = mlx.constant dense<3.0> : tensor<f32>
  %c = mlx.add %a, %b : tensor<65xf32>, tensor<f32> -> tensor<65xf32>
  func.return %c : tensor<65xf32>
}
