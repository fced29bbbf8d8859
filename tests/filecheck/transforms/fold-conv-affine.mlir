// fold-conv-affine: a channels-last convolution's per-channel chain of + c, - c, c - and
// * c, with constants computed at compile time (an inference batch norm), is one
// convolution with scaled weights and one bias.
// RUN: mlx-opt %s -p fold-conv-affine | filecheck %s

// Weights 1, 2 per output channel; the norm: (y - [1, 2]) * rsqrt([4, 16]) + [10, 20]
// = y * [0.5, 0.25] + [9.5, 19.5]: the weights become 0.5 and 0.5, the bias 9.5 and 19.5.
// The norm's globals, read by it alone, are gone; the weight stays (@kept reads it).
// CHECK:      mlx.global @conv.weight "parameter"
// CHECK-NEXT: mlx.global @conv.weight.affine "parameter" : tensor<2x1x1x1xf32> = dense<5.000000e-01> : tensor<2x1x1x1xf32>
// CHECK-NEXT: mlx.global @conv.weight.affine_bias "constant" : tensor<2xf32> = dense<[9.500000e+00, 1.950000e+01]> : tensor<2xf32>
// CHECK-NEXT: func.func @norm
mlx.global @conv.weight "parameter" : tensor<2x1x1x1xf32> = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
mlx.global @norm.mean "buffer" : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
mlx.global @norm.var "buffer" : tensor<2xf32> = dense<[4.0, 16.0]> : tensor<2xf32>
mlx.global @norm.bias "parameter" : tensor<2xf32> = dense<[10.0, 20.0]> : tensor<2xf32>

// CHECK-SAME:  (%x: tensor<?x3x3x1xf32>) -> tensor<?x3x3x2xf32> {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @conv.weight.affine : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = mlx.conv_general %x, %[[W]]
// CHECK-NEXT:    %[[B:.*]] = mlx.weight @conv.weight.affine_bias : tensor<2xf32>
// CHECK-NEXT:    %[[Z:.*]] = mlx.add %[[Y]], %[[B]] : tensor<?x3x3x2xf32>, tensor<2xf32> -> tensor<?x3x3x2xf32>
// CHECK-NEXT:    func.return %[[Z]]
func.func @norm(%x: tensor<?x3x3x1xf32>) -> tensor<?x3x3x2xf32> {
  %w = mlx.weight @conv.weight : tensor<2x1x1x1xf32>
  %y = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<?x3x3x1xf32>, tensor<2x1x1x1xf32> -> tensor<?x3x3x2xf32>
  %mean = mlx.weight @norm.mean : tensor<2xf32>
  %var = mlx.weight @norm.var : tensor<2xf32>
  %bias = mlx.weight @norm.bias : tensor<2xf32>
  %m = mlx.reshape %mean [1, 1, 1, 2] : tensor<2xf32> -> tensor<1x1x1x2xf32>
  %s = mlx.rsqrt %var : tensor<2xf32> -> tensor<2xf32>
  %centered = mlx.subtract %y, %m : tensor<?x3x3x2xf32>, tensor<1x1x1x2xf32> -> tensor<?x3x3x2xf32>
  %scaled = mlx.multiply %centered, %s : tensor<?x3x3x2xf32>, tensor<2xf32> -> tensor<?x3x3x2xf32>
  %shifted = mlx.add %bias, %scaled : tensor<2xf32>, tensor<?x3x3x2xf32> -> tensor<?x3x3x2xf32>
  func.return %shifted : tensor<?x3x3x2xf32>
}

// Left alone: a result read twice (the chain would change both readers), a constant
// that varies along a spatial axis, and an operand computed at run time.
// CHECK-LABEL: func.func @kept
// CHECK:         mlx.multiply %y, %y
// CHECK:         mlx.multiply %y2, %spatial
// CHECK:         mlx.add %y3, %x
func.func @kept(%x: tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) {
  %w = mlx.weight @conv.weight : tensor<2x1x1x1xf32>
  %x1 = mlx.slice %x [0, 0, 0, 0] to [1, 3, 3, 1] step [1, 1, 1, 1] : tensor<1x3x3x2xf32> -> tensor<1x3x3x1xf32>
  %y = mlx.conv_general %x1, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x3x3x1xf32>, tensor<2x1x1x1xf32> -> tensor<1x3x3x2xf32>
  %square = mlx.multiply %y, %y : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  %y2 = mlx.conv_general %x1, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x3x3x1xf32>, tensor<2x1x1x1xf32> -> tensor<1x3x3x2xf32>
  %spatial = mlx.constant dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>
  %by_row = mlx.multiply %y2, %spatial : tensor<1x3x3x2xf32>, tensor<1x3x1xf32> -> tensor<1x3x3x2xf32>
  %y3 = mlx.conv_general %x1, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x3x3x1xf32>, tensor<2x1x1x1xf32> -> tensor<1x3x3x2xf32>
  %plus_input = mlx.add %y3, %x : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  func.return %square, %by_row, %plus_input : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>
}
