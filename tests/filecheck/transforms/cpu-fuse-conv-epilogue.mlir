// cpu-fuse-conv-epilogue: a convolution, the add of a per-channel [C] bias after it and
// a relu (maximum with 0), relu6 (then minimum with 6) or silu (x * sigmoid(x)) after
// that are one mlx.conv_bias_activation, when nothing else reads what it fuses.
// RUN: mlx-opt %s -p cpu-fuse-conv-epilogue --mlir-print-debuginfo | filecheck %s

// A depthwise convolution, its bias (either operand order) and relu6 (MobileNet-V2);
// the fused op has the last op's location, and the constants stay for dce.
// CHECK-LABEL: func.func @depthwise_bias_relu6
// CHECK-NEXT:    %zero = mlx.constant
// CHECK-NEXT:    %six = mlx.constant
// CHECK-NEXT:    %[[Y:.*]] = mlx.conv_bias_activation %x, %w bias %b : tensor<8xf32> stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 activation "relu6" : tensor<?x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<?x5x5x8xf32> loc("clamp")
// CHECK-NEXT:    func.return %[[Y]]
func.func @depthwise_bias_relu6(%x: tensor<?x9x9x8xf32>, %w: tensor<8x3x3x1xf32>, %b: tensor<8xf32>) -> tensor<?x5x5x8xf32> {
  %zero = mlx.constant dense<0.000000e+00> : tensor<f32>
  %six = mlx.constant dense<6.000000e+00> : tensor<f32>
  %y = mlx.conv_general %x, %w stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<?x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<?x5x5x8xf32> loc("conv")
  %biased = mlx.add %b, %y : tensor<8xf32>, tensor<?x5x5x8xf32> -> tensor<?x5x5x8xf32> loc("bias")
  %low = mlx.maximum %biased, %zero : tensor<?x5x5x8xf32>, tensor<f32> -> tensor<?x5x5x8xf32> loc("relu")
  %clamped = mlx.minimum %low, %six : tensor<?x5x5x8xf32>, tensor<f32> -> tensor<?x5x5x8xf32> loc("clamp")
  func.return %clamped : tensor<?x5x5x8xf32>
}

// A dense convolution, its bias and silu in half precision (EfficientNet), the
// multiply's operands either way round.
// CHECK-LABEL: func.func @dense_bias_silu
// CHECK-NEXT:    %[[A:.*]] = mlx.conv_bias_activation %x, %w bias %b : tensor<4xf16> stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 activation "silu" : tensor<1x6x6x8xf16>, tensor<4x1x1x8xf16> -> tensor<1x6x6x4xf16>
// CHECK-NEXT:    %[[B:.*]] = mlx.conv_bias_activation %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 activation "silu" : tensor<1x6x6x8xf16>, tensor<4x1x1x8xf16> -> tensor<1x6x6x4xf16>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @dense_bias_silu(%x: tensor<1x6x6x8xf16>, %w: tensor<4x1x1x8xf16>, %b: tensor<4xf16>) -> (tensor<1x6x6x4xf16>, tensor<1x6x6x4xf16>) {
  %y = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x6x6x8xf16>, tensor<4x1x1x8xf16> -> tensor<1x6x6x4xf16>
  %biased = mlx.add %y, %b : tensor<1x6x6x4xf16>, tensor<4xf16> -> tensor<1x6x6x4xf16>
  %gate = mlx.sigmoid %biased : tensor<1x6x6x4xf16> -> tensor<1x6x6x4xf16>
  %silu = mlx.multiply %biased, %gate : tensor<1x6x6x4xf16>, tensor<1x6x6x4xf16> -> tensor<1x6x6x4xf16>
  %y2 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x6x6x8xf16>, tensor<4x1x1x8xf16> -> tensor<1x6x6x4xf16>
  %gate2 = mlx.sigmoid %y2 : tensor<1x6x6x4xf16> -> tensor<1x6x6x4xf16>
  %silu2 = mlx.multiply %gate2, %y2 : tensor<1x6x6x4xf16>, tensor<1x6x6x4xf16> -> tensor<1x6x6x4xf16>
  func.return %silu, %silu2 : tensor<1x6x6x4xf16>, tensor<1x6x6x4xf16>
}

// Without a bias, relu (0 on the left); a bias alone (ConvNeXt's depthwise 7x7, a
// layer norm after it); a 1-D depthwise convolution. The relu's result read twice is
// still the fused op's result.
// CHECK-LABEL: func.func @partial
// CHECK-NEXT:    %zero = mlx.constant
// CHECK-NEXT:    %[[R:.*]] = mlx.conv_bias_activation %x, %w stride {{.*}} activation "relu"
// CHECK-NEXT:    %[[T:.*]] = mlx.add %[[R]], %[[R]]
// CHECK-NEXT:    %[[B:.*]] = mlx.conv_bias_activation %x, %w bias %b : tensor<8xf32> stride {{.*}} activation "none"
// CHECK-NEXT:    %[[S:.*]] = mlx.conv_bias_activation %seq, %k bias %b : tensor<8xf32> stride [1] padding [1] [1] kernel_dilation [1] input_dilation [1] groups 8 activation "relu"
// CHECK-NEXT:    func.return %[[T]], %[[B]], %[[S]]
func.func @partial(%x: tensor<1x9x9x8xf32>, %w: tensor<8x3x3x1xf32>, %b: tensor<8xf32>, %seq: tensor<2x7x8xf32>, %k: tensor<8x3x1xf32>) -> (tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<2x7x8xf32>) {
  %zero = mlx.constant dense<0.000000e+00> : tensor<f32>
  %y = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<1x7x7x8xf32>
  %relu = mlx.maximum %zero, %y : tensor<f32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %twice = mlx.add %relu, %relu : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %y2 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<1x7x7x8xf32>
  %biased = mlx.add %y2, %b : tensor<1x7x7x8xf32>, tensor<8xf32> -> tensor<1x7x7x8xf32>
  %s = mlx.conv_general %seq, %k stride [1] padding [1] [1] kernel_dilation [1] input_dilation [1] groups 8 : tensor<2x7x8xf32>, tensor<8x3x1xf32> -> tensor<2x7x8xf32>
  %sb = mlx.add %s, %b : tensor<2x7x8xf32>, tensor<8xf32> -> tensor<2x7x8xf32>
  %sr = mlx.maximum %sb, %zero : tensor<2x7x8xf32>, tensor<f32> -> tensor<2x7x8xf32>
  func.return %twice, %biased, %sr : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<2x7x8xf32>
}

// Stopped where a value it would fuse has another reader: the biased value read by the
// relu and returned (the bias fuses, the relu stays); the relu's result read by the
// minimum and returned (relu fuses, not relu6); the convolution's result read by the
// sigmoid, the multiply and returned (no silu, and nothing to fuse).
// CHECK-LABEL: func.func @other_readers
// CHECK-NEXT:    %zero = mlx.constant
// CHECK-NEXT:    %six = mlx.constant
// CHECK-NEXT:    %[[A:.*]] = mlx.conv_bias_activation %x, %w bias %b : tensor<8xf32> {{.*}} activation "none"
// CHECK-NEXT:    %[[A1:.*]] = mlx.maximum %[[A]], %zero
// CHECK-NEXT:    %[[R:.*]] = mlx.conv_bias_activation %x, %w bias %b : tensor<8xf32> {{.*}} activation "relu"
// CHECK-NEXT:    %[[R6:.*]] = mlx.minimum %[[R]], %six
// CHECK-NEXT:    %[[Y:.*]] = mlx.conv_general %x, %w
// CHECK-NEXT:    %[[G:.*]] = mlx.sigmoid %[[Y]]
// CHECK-NEXT:    %[[S:.*]] = mlx.multiply %[[Y]], %[[G]]
// CHECK-NEXT:    func.return %[[A]], %[[A1]], %[[R]], %[[R6]], %[[Y]], %[[S]]
func.func @other_readers(%x: tensor<1x9x9x8xf32>, %w: tensor<8x3x3x1xf32>, %b: tensor<8xf32>) -> (tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>) {
  %zero = mlx.constant dense<0.000000e+00> : tensor<f32>
  %six = mlx.constant dense<6.000000e+00> : tensor<f32>
  %y = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<1x7x7x8xf32>
  %a = mlx.add %y, %b : tensor<1x7x7x8xf32>, tensor<8xf32> -> tensor<1x7x7x8xf32>
  %a1 = mlx.maximum %a, %zero : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %y2 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<1x7x7x8xf32>
  %r0 = mlx.add %y2, %b : tensor<1x7x7x8xf32>, tensor<8xf32> -> tensor<1x7x7x8xf32>
  %r = mlx.maximum %r0, %zero : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %r6 = mlx.minimum %r, %six : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %y3 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x9x9x8xf32>, tensor<8x3x3x1xf32> -> tensor<1x7x7x8xf32>
  %g = mlx.sigmoid %y3 : tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %s = mlx.multiply %y3, %g : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  func.return %a, %a1, %r, %r6, %y3, %s : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>
}

// Left alone: adds that are not a per-channel bias (a residual [N, H, W, C], a
// [W, C] table, a [1, 1, 1, C] vector: only [C] is), a maximum with 1 and a minimum with
// 5 (not relu, not relu6: the relu before the minimum fuses), a sigmoid gate of another
// value, and a convolution read twice.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %one = mlx.constant
// CHECK-NEXT:    %five = mlx.constant
// CHECK-NEXT:    %zero = mlx.constant
// CHECK-NEXT:    %y = mlx.conv_general
// CHECK-NEXT:    %residual = mlx.add %y, %x
// CHECK-NEXT:    %y2 = mlx.conv_general
// CHECK-NEXT:    %table = mlx.add %y2, %t
// CHECK-NEXT:    %y3 = mlx.conv_general
// CHECK-NEXT:    %wide = mlx.add %y3, %v
// CHECK-NEXT:    %y4 = mlx.conv_general
// CHECK-NEXT:    %not_relu = mlx.maximum %y4, %one
// CHECK-NEXT:    %[[R:.*]] = mlx.conv_bias_activation %x, %w {{.*}} activation "relu"
// CHECK-NEXT:    %not_relu6 = mlx.minimum %[[R]], %five
// CHECK-NEXT:    %y6 = mlx.conv_general
// CHECK-NEXT:    %g = mlx.sigmoid %x
// CHECK-NEXT:    %gated = mlx.multiply %y6, %g
// CHECK-NEXT:    %y7 = mlx.conv_general
// CHECK-NEXT:    %twice = mlx.add %y7, %y7
func.func @kept(%x: tensor<1x7x7x8xf32>, %w: tensor<8x1x1x1xf32>, %t: tensor<7x8xf32>, %v: tensor<1x1x1x8xf32>) -> (tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>) {
  %one = mlx.constant dense<1.000000e+00> : tensor<f32>
  %five = mlx.constant dense<5.000000e+00> : tensor<f32>
  %zero = mlx.constant dense<0.000000e+00> : tensor<f32>
  %y = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %residual = mlx.add %y, %x : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %y2 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %table = mlx.add %y2, %t : tensor<1x7x7x8xf32>, tensor<7x8xf32> -> tensor<1x7x7x8xf32>
  %y3 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %wide = mlx.add %y3, %v : tensor<1x7x7x8xf32>, tensor<1x1x1x8xf32> -> tensor<1x7x7x8xf32>
  %y4 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %not_relu = mlx.maximum %y4, %one : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %y5 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %relu = mlx.maximum %y5, %zero : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %not_relu6 = mlx.minimum %relu, %five : tensor<1x7x7x8xf32>, tensor<f32> -> tensor<1x7x7x8xf32>
  %y6 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %g = mlx.sigmoid %x : tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %gated = mlx.multiply %y6, %g : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  %y7 = mlx.conv_general %x, %w stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 8 : tensor<1x7x7x8xf32>, tensor<8x1x1x1xf32> -> tensor<1x7x7x8xf32>
  %twice = mlx.add %y7, %y7 : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32> -> tensor<1x7x7x8xf32>
  func.return %residual, %table, %wide, %not_relu, %not_relu6, %gated, %twice : tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>, tensor<1x7x7x8xf32>
}
