// fold-constant-weights: an elementwise op or cast (astype, add, subtract, multiply,
// divide, maximum, minimum, negative, sqrt, rsqrt, exp) whose operands are all
// constants (weight reads with a value in the IR, or mlx.constant), at least one a
// weight -> a read of a new global `<first weight>.<op>` of the first weight's kind,
// holding the result computed at compile time by the runtime's own kernel in the
// result's dtype. The reads it replaced go, with their globals once nothing reads them;
// the mlx.constant operands are left to dce. A static result shape is required.
// RUN: mlx-opt %s -p fold-constant-weights | filecheck %s
// RUN: mlx-opt %s -p fold-constant-weights | filecheck %s --check-prefix=GLOBAL

// The globals: @a.weight and @norm.weight are still read (@broadcast returns @a.weight,
// @dynamic_shape reads @norm.weight); every other folded weight is gone, as is
// Gemma's intermediate @gemma.weight.astype. Each new global sits before the first
// function that needs it and is reused after (@add_one_again). The values are those of
// the op in the result's dtype: 1e8 + 1 is 1e8 in f32, 256 + 1 is 256 in bf16.
// (The new names extend the old ones, and filecheck's NOT range includes the next
// match's text: hence GLOBAL-NOTs on the exact old names.)
// GLOBAL:      builtin.module {
// GLOBAL-NEXT:   mlx.global @norm.weight "parameter" : tensor<4xf32> = dense<[1.000000e+00, 2.500000e+00, -3.000000e+00, 1.000000e+08]> : tensor<4xf32>
// GLOBAL-NEXT:   mlx.global @a.weight "parameter" : tensor<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// GLOBAL-NEXT:   mlx.global @novalue.weight "parameter" : tensor<4xf32>
// GLOBAL-NEXT:   mlx.global @norm.weight.add "parameter" : tensor<4xf32> = dense<[2.000000e+00, 3.500000e+00, -2.000000e+00, 1.000000e+08]> : tensor<4xf32>
// GLOBAL-NEXT:   func.func @add_one(
// GLOBAL-NOT:    mlx.global
// GLOBAL:        func.func @add_one_again(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @norm16.weight.add "parameter" : tensor<4xbf16> = dense<[2.000000e+00, 3.500000e+00, -2.000000e+00, 2.560000e+02]> : tensor<4xbf16>
// GLOBAL-NEXT:   func.func @add_one_bf16(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @norm16.weight.astype "parameter" : tensor<4xf32> = dense<[1.000000e+00, 2.500000e+00, -3.000000e+00, 2.560000e+02]> : tensor<4xf32>
// GLOBAL-NEXT:   func.func @upcast(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @gemma.weight.astype.add "parameter" : tensor<4xf32> = dense<[1.500000e+00, 0.000000e+00, 4.000000e+00, 1.000000e+00]> : tensor<4xf32>
// GLOBAL-NEXT:   func.func @gemma_norm_weight(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @a.weight.multiply "parameter" : tensor<4xf32> = dense<[5.000000e-01, -2.000000e+00, 6.000000e+00, 1.000000e+00]> : tensor<4xf32>
// GLOBAL-NEXT:   func.func @two_weights(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @a.weight.subtract "parameter" : tensor<2x4xf32> = dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x4xf32>
// GLOBAL-NEXT:   func.func @broadcast(
// GLOBAL-NOT:    mlx.global @{{((norm|norm16|b|col|c)\.weight|gemma\.weight(\.astype)?)}} "
// GLOBAL:        mlx.global @c.weight.sqrt "buffer" : tensor<4xf32> = dense<[2.000000e+00, 5.000000e-01, 1.000000e+00, 4.000000e+00]> : tensor<4xf32>
// GLOBAL-NEXT:   func.func @sqrt(
// GLOBAL-NOT:    mlx.global

mlx.global @norm.weight "parameter" : tensor<4xf32> = dense<[1.0, 2.5, -3.0, 1.0e8]> : tensor<4xf32>
mlx.global @norm16.weight "parameter" : tensor<4xbf16> = dense<[1.0, 2.5, -3.0, 256.0]> : tensor<4xbf16>
mlx.global @gemma.weight "parameter" : tensor<4xbf16> = dense<[0.5, -1.0, 3.0, 0.0]> : tensor<4xbf16>
mlx.global @a.weight "parameter" : tensor<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
mlx.global @b.weight "parameter" : tensor<4xf32> = dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
mlx.global @col.weight "parameter" : tensor<2x1xf32> = dense<[[1.0], [-2.0]]> : tensor<2x1xf32>
mlx.global @c.weight "buffer" : tensor<4xf32> = dense<[4.0, 0.25, 1.0, 16.0]> : tensor<4xf32>
mlx.global @novalue.weight "parameter" : tensor<4xf32>

// weight + 1.0 in f32: a read of the new global @norm.weight.add.
// CHECK-LABEL: func.func @add_one(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w1 = mlx.weight @norm.weight.add : tensor<4xf32>
// CHECK-NEXT:    func.return %w1 : tensor<4xf32>
// CHECK-NEXT:  }
func.func @add_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = mlx.weight @norm.weight : tensor<4xf32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %w1 : tensor<4xf32>
}

// The same sum elsewhere reads the same global.
// CHECK-LABEL: func.func @add_one_again(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w1 = mlx.weight @norm.weight.add : tensor<4xf32>
// CHECK-NEXT:    func.return %w1 : tensor<4xf32>
// CHECK-NEXT:  }
func.func @add_one_again(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = mlx.weight @norm.weight : tensor<4xf32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %w1 : tensor<4xf32>
}

// 1.0 + weight in bf16 (the constant on the left), computed in bf16.
// CHECK-LABEL: func.func @add_one_bf16() -> tensor<4xbf16> {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<bf16>
// CHECK-NEXT:    %w1 = mlx.weight @norm16.weight.add : tensor<4xbf16>
// CHECK-NEXT:    func.return %w1 : tensor<4xbf16>
// CHECK-NEXT:  }
func.func @add_one_bf16() -> tensor<4xbf16> {
  %w = mlx.weight @norm16.weight : tensor<4xbf16>
  %one = mlx.constant dense<1.0> : tensor<bf16>
  %w1 = mlx.add %one, %w : tensor<bf16>, tensor<4xbf16> -> tensor<4xbf16>
  func.return %w1 : tensor<4xbf16>
}

// A bf16 weight's upcast to f32: an f32 global.
// CHECK-LABEL: func.func @upcast() -> tensor<4xf32> {
// CHECK-NEXT:    %f = mlx.weight @norm16.weight.astype : tensor<4xf32>
// CHECK-NEXT:    func.return %f : tensor<4xf32>
// CHECK-NEXT:  }
func.func @upcast() -> tensor<4xf32> {
  %w = mlx.weight @norm16.weight : tensor<4xbf16>
  %f = mlx.astype %w : tensor<4xbf16> -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// Gemma's `1 + weight.float()`: the cast folds, then the add of its result; only the
// last global is left.
// CHECK-LABEL: func.func @gemma_norm_weight(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w1 = mlx.weight @gemma.weight.astype.add : tensor<4xf32>
// CHECK-NEXT:    %y = mlx.multiply %x, %w1 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4xf32>
// CHECK-NEXT:  }
func.func @gemma_norm_weight(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = mlx.weight @gemma.weight : tensor<4xbf16>
  %wf = mlx.astype %w : tensor<4xbf16> -> tensor<4xf32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %w1 = mlx.add %one, %wf : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %y = mlx.multiply %x, %w1 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// The product of two weights, named after the first.
// CHECK-LABEL: func.func @two_weights() -> tensor<4xf32> {
// CHECK-NEXT:    %ab = mlx.weight @a.weight.multiply : tensor<4xf32>
// CHECK-NEXT:    func.return %ab : tensor<4xf32>
// CHECK-NEXT:  }
func.func @two_weights() -> tensor<4xf32> {
  %a = mlx.weight @a.weight : tensor<4xf32>
  %b = mlx.weight @b.weight : tensor<4xf32>
  %ab = mlx.multiply %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %ab : tensor<4xf32>
}

// A broadcasting difference ([4] - [2, 1] -> [2, 4]); @a.weight's read has another use
// and stays.
// CHECK-LABEL: func.func @broadcast(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %a = mlx.weight @a.weight : tensor<4xf32>
// CHECK-NEXT:    %ac = mlx.weight @a.weight.subtract : tensor<2x4xf32>
// CHECK-NEXT:    func.return %ac, %a : tensor<2x4xf32>, tensor<4xf32>
// CHECK-NEXT:  }
func.func @broadcast(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %a = mlx.weight @a.weight : tensor<4xf32>
  %c = mlx.weight @col.weight : tensor<2x1xf32>
  %ac = mlx.subtract %a, %c : tensor<4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  func.return %ac, %a : tensor<2x4xf32>, tensor<4xf32>
}

// A unary op of a "buffer" global: the new global is a "buffer" too.
// CHECK-LABEL: func.func @sqrt() -> tensor<4xf32> {
// CHECK-NEXT:    %r = mlx.weight @c.weight.sqrt : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }
func.func @sqrt() -> tensor<4xf32> {
  %c = mlx.weight @c.weight : tensor<4xf32>
  %r = mlx.sqrt %c : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// Kept: an operand is a function argument.
// CHECK-LABEL: func.func @argument_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = mlx.weight @a.weight : tensor<4xf32>
// CHECK-NEXT:    %s = mlx.add %a, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %s : tensor<4xf32>
// CHECK-NEXT:  }
func.func @argument_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = mlx.weight @a.weight : tensor<4xf32>
  %s = mlx.add %a, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// Kept: the result's shape is dynamic.
// CHECK-LABEL: func.func @dynamic_shape() -> tensor<?xf32> {
// CHECK-NEXT:    %w = mlx.weight @norm.weight : tensor<4xf32>
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %w1 : tensor<?xf32>
// CHECK-NEXT:  }
func.func @dynamic_shape() -> tensor<?xf32> {
  %w = mlx.weight @norm.weight : tensor<4xf32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<?xf32>
  func.return %w1 : tensor<?xf32>
}

// Kept: the weight's global has no value in the IR.
// CHECK-LABEL: func.func @weight_without_value() -> tensor<4xf32> {
// CHECK-NEXT:    %w = mlx.weight @novalue.weight : tensor<4xf32>
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %w1 : tensor<4xf32>
// CHECK-NEXT:  }
func.func @weight_without_value() -> tensor<4xf32> {
  %w = mlx.weight @novalue.weight : tensor<4xf32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %w1 = mlx.add %w, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %w1 : tensor<4xf32>
}

// Kept: constants only, no weight (fold-constant-arithmetic's case, not this pass's).
// CHECK-LABEL: func.func @constants_only() -> tensor<f32> {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %two = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %one, %two : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %s : tensor<f32>
// CHECK-NEXT:  }
func.func @constants_only() -> tensor<f32> {
  %one = mlx.constant dense<1.0> : tensor<f32>
  %two = mlx.constant dense<2.0> : tensor<f32>
  %s = mlx.add %one, %two : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %s : tensor<f32>
}
