// fuse-bias-add: matmul(x, w) + b -> addmm(b, x, w) for a constant w [K, N] (a weight
// with its value in the IR, or its transpose [1, 0]: a linear weight before
// fold-weight-transposes) and a constant bias b [N] of the product's dtype, when the
// add is the matmul's only use and its result has the product's type. The bias may be
// either operand of the add. The pass alone leaves the weight reads in place.
// (A bias of another dtype is not expressible: mlx.add's operands share one element
// type; a cast bias is not a weight read and is kept, see @bias_cast.)
// RUN: mlx-opt %s -p fuse-bias-add | filecheck %s

mlx.global @fc.weight "parameter" : tensor<4x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xf32>
mlx.global @fc.bias "parameter" : tensor<3xf32> = dense<[0.5, 1.5, 2.5]> : tensor<3xf32>
mlx.global @lin.weight "parameter" : tensor<3x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
mlx.global @bf.weight "parameter" : tensor<4x3xbf16> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xbf16>
mlx.global @bf.bias "parameter" : tensor<3xbf16> = dense<[0.5, 1.5, 2.5]> : tensor<3xbf16>
mlx.global @narrow.weight "parameter" : tensor<4x1xf32> = dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
mlx.global @one.bias "parameter" : tensor<1xf32> = dense<[0.5]> : tensor<1xf32>
mlx.global @full.bias "parameter" : tensor<2x3xf32> = dense<[[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]> : tensor<2x3xf32>
mlx.global @novalue.bias "parameter" : tensor<3xf32>
mlx.global @novalue.weight "parameter" : tensor<4x3xf32>

// The bias on the right.
// CHECK-LABEL: func.func @bias_right(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %z = mlx.addmm %b, %x, %w : tensor<3xf32>, tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_right(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// The bias on the left: the same addmm.
// CHECK-LABEL: func.func @bias_left(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %z = mlx.addmm %b, %x, %w : tensor<3xf32>, tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_left(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %b, %y : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// The linear layout: the weight [N, K] read through transpose [1, 0], batched 3-D x,
// dynamic sequence length. The addmm takes the transposed read.
// CHECK-LABEL: func.func @linear_layout(%x: tensor<1x?x4xf32>) -> tensor<1x?x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @lin.weight : tensor<3x4xf32>
// CHECK-NEXT:    %wt = mlx.transpose %w [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %z = mlx.addmm %b, %x, %wt : tensor<3xf32>, tensor<1x?x4xf32>, tensor<4x3xf32> -> tensor<1x?x3xf32>
// CHECK-NEXT:    func.return %z : tensor<1x?x3xf32>
// CHECK-NEXT:  }
func.func @linear_layout(%x: tensor<1x?x4xf32>) -> tensor<1x?x3xf32> {
  %w = mlx.weight @lin.weight : tensor<3x4xf32>
  %wt = mlx.transpose %w [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %wt : tensor<1x?x4xf32>, tensor<4x3xf32> -> tensor<1x?x3xf32>
  %z = mlx.add %y, %b : tensor<1x?x3xf32>, tensor<3xf32> -> tensor<1x?x3xf32>
  func.return %z : tensor<1x?x3xf32>
}

// bf16 weight, bias and activations: one addmm in bf16.
// CHECK-LABEL: func.func @bf16(%x: tensor<2x4xbf16>) -> tensor<2x3xbf16> {
// CHECK-NEXT:    %w = mlx.weight @bf.weight : tensor<4x3xbf16>
// CHECK-NEXT:    %b = mlx.weight @bf.bias : tensor<3xbf16>
// CHECK-NEXT:    %z = mlx.addmm %b, %x, %w : tensor<3xbf16>, tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
// CHECK-NEXT:    func.return %z : tensor<2x3xbf16>
// CHECK-NEXT:  }
func.func @bf16(%x: tensor<2x4xbf16>) -> tensor<2x3xbf16> {
  %w = mlx.weight @bf.weight : tensor<4x3xbf16>
  %b = mlx.weight @bf.bias : tensor<3xbf16>
  %y = mlx.matmul %x, %w : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  %z = mlx.add %y, %b : tensor<2x3xbf16>, tensor<3xbf16> -> tensor<2x3xbf16>
  func.return %z : tensor<2x3xbf16>
}

// Kept: the product is also returned, so the matmul has another use.
// CHECK-LABEL: func.func @product_used_twice(%x: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z, %y : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @product_used_twice(%x: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z, %y : tensor<2x3xf32>, tensor<2x3xf32>
}

// Kept: the bias is a function argument.
// CHECK-LABEL: func.func @bias_argument(%x: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_argument(%x: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// Kept: the bias's global has no value in the IR.
// CHECK-LABEL: func.func @bias_without_value(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @novalue.bias : tensor<3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_without_value(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @novalue.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// Kept: the bf16 bias cast to f32 is not a weight read (fold-constant-weights would
// first make the cast a weight of its own).
// CHECK-LABEL: func.func @bias_cast(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b16 = mlx.weight @bf.bias : tensor<3xbf16>
// CHECK-NEXT:    %b = mlx.astype %b16 : tensor<3xbf16> -> tensor<3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_cast(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b16 = mlx.weight @bf.bias : tensor<3xbf16>
  %b = mlx.astype %b16 : tensor<3xbf16> -> tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// Kept: the weight is a function argument, or a global without a value.
// CHECK-LABEL: func.func @weight_not_constant(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %v = mlx.weight @novalue.weight : tensor<4x3xf32>
// CHECK-NEXT:    %y2 = mlx.matmul %x, %v : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z2 = mlx.add %y2, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z, %z2 : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @weight_not_constant(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %v = mlx.weight @novalue.weight : tensor<4x3xf32>
  %y2 = mlx.matmul %x, %v : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z2 = mlx.add %y2, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z, %z2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// Kept: a bias of shape [1] (broadcast over N = 3), not [N].
// CHECK-LABEL: func.func @bias_of_one(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @one.bias : tensor<1xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_of_one(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @one.bias : tensor<1xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// Kept: a bias [3] broadcasting the [2, 1] product to [2, 3], another shape.
// CHECK-LABEL: func.func @bias_widens(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @narrow.weight : tensor<4x1xf32>
// CHECK-NEXT:    %b = mlx.weight @fc.bias : tensor<3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @bias_widens(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @narrow.weight : tensor<4x1xf32>
  %b = mlx.weight @fc.bias : tensor<3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x1xf32> -> tensor<2x1xf32>
  %z = mlx.add %y, %b : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// Kept: a full [2, 3] addend, not a bias vector [N].
// CHECK-LABEL: func.func @matrix_addend(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %w = mlx.weight @fc.weight : tensor<4x3xf32>
// CHECK-NEXT:    %b = mlx.weight @full.bias : tensor<2x3xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @matrix_addend(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = mlx.weight @fc.weight : tensor<4x3xf32>
  %b = mlx.weight @full.bias : tensor<2x3xf32>
  %y = mlx.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = mlx.add %y, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
