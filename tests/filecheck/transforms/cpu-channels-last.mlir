// cpu-channels-last: a convolution's channels-first transpose sinks below the ops that
// read it (elementwise with channels-first or small operands, pad, static slice,
// reductions) until the next convolution's transpose back cancels it; a weight only
// convolutions read transposed is stored transposed.
// RUN: mlx-opt %s -p cpu-channels-last | filecheck %s

// CHECK: mlx.global @conv.weight "parameter" : tensor<4x3x3x2xf32> = dense<
mlx.global @conv.weight "parameter" : tensor<4x2x3x3xf32> = dense<1.0> : tensor<4x2x3x3xf32>

// A batch norm's per-channel scale, a relu, a residual add, a max pool's pad and slice
// and the next convolution: no transpose is left between the two convolutions; the
// scale is transposed as a view of its 4 values (here a reshape: it moves size-1 dims).
// CHECK-LABEL: func.func @block(%x: tensor<?x5x5x2xf32>, %scale: tensor<4x1x1xf32>) -> tensor<?x2x2x4xf32> {
// CHECK-NEXT:    %wt = mlx.weight @conv.weight : tensor<4x3x3x2xf32>
// CHECK-NEXT:    %y = mlx.conv_general %x, %wt {{.*}} -> tensor<?x5x5x4xf32>
// CHECK-NEXT:    %{{.*}} = mlx.expand_dims %scale [0] : tensor<4x1x1xf32> -> tensor<1x4x1x1xf32>
// CHECK-NEXT:    %{{.*}} = mlx.reshape %{{.*}} [1, 1, 1, 4] : tensor<1x4x1x1xf32> -> tensor<1x1x1x4xf32>
// CHECK-NEXT:    %{{.*}} = mlx.multiply %y, %{{.*}} : tensor<?x5x5x4xf32>, tensor<1x1x1x4xf32> -> tensor<?x5x5x4xf32>
// CHECK-NEXT:    %zero = mlx.constant
// CHECK-NEXT:    %{{.*}} = mlx.maximum %{{.*}}, %zero : tensor<?x5x5x4xf32>, tensor<f32> -> tensor<?x5x5x4xf32>
// CHECK-NEXT:    %{{.*}} = mlx.add %{{.*}}, %y : tensor<?x5x5x4xf32>, tensor<?x5x5x4xf32> -> tensor<?x5x5x4xf32>
// CHECK-NEXT:    %{{.*}} = mlx.pad %{{.*}} low [0, 1, 1, 0] high [0, 1, 1, 0] {{.*}} -> tensor<?x7x7x4xf32>
// CHECK-NEXT:    %n = mlx.dim %x axis 0
// CHECK-NEXT:    %{{.*}} = mlx.slice %{{.*}} [0, 1, 1, 0] to [%n, 7, 7, 4] step [1, 3, 3, 1] : tensor<?x7x7x4xf32> -> tensor<?x2x2x4xf32>
// CHECK-NEXT:    func.return %{{.*}} : tensor<?x2x2x4xf32>
func.func @block(%x: tensor<?x5x5x2xf32>, %scale: tensor<4x1x1xf32>) -> tensor<?x2x2x4xf32> {
  %w = mlx.weight @conv.weight : tensor<4x2x3x3xf32>
  %wt = mlx.transpose %w [0, 2, 3, 1] : tensor<4x2x3x3xf32> -> tensor<4x3x3x2xf32>
  %y = mlx.conv_general %x, %wt stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<?x5x5x2xf32>, tensor<4x3x3x2xf32> -> tensor<?x5x5x4xf32>
  %nchw = mlx.transpose %y [0, 3, 1, 2] : tensor<?x5x5x4xf32> -> tensor<?x4x5x5xf32>
  %scaled = mlx.multiply %nchw, %scale : tensor<?x4x5x5xf32>, tensor<4x1x1xf32> -> tensor<?x4x5x5xf32>
  %zero = mlx.constant dense<0.0> : tensor<f32>
  %relu = mlx.maximum %scaled, %zero : tensor<?x4x5x5xf32>, tensor<f32> -> tensor<?x4x5x5xf32>
  %residual = mlx.add %relu, %nchw : tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32> -> tensor<?x4x5x5xf32>
  %padded = mlx.pad %residual low [0, 0, 1, 1] high [0, 0, 1, 1] value 0.000000e+00 : tensor<?x4x5x5xf32> -> tensor<?x4x7x7xf32>
  %n = mlx.dim %x axis 0 : tensor<?x5x5x2xf32>
  %pooled = mlx.slice %padded [0, 0, 1, 1] to [%n, 4, 7, 7] step [1, 1, 3, 3] : tensor<?x4x7x7xf32> -> tensor<?x4x2x2xf32>
  %next = mlx.transpose %pooled [0, 2, 3, 1] : tensor<?x4x2x2xf32> -> tensor<?x2x2x4xf32>
  func.return %next : tensor<?x2x2x4xf32>
}

// A mean over the spatial axes with keepdims keeps the transpose (it then moves only
// size-1 dims: a reshape); without keepdims the channels are in order and none is left.
// CHECK-LABEL: func.func @pool(%y: tensor<2x5x5x4xf32>) -> (tensor<2x4x1x1xf32>, tensor<2x4xf32>) {
// CHECK-NEXT:    %{{.*}} = mlx.mean %y axes [1, 2] keepdims : tensor<2x5x5x4xf32> -> tensor<2x1x1x4xf32>
// CHECK-NEXT:    %{{.*}} = mlx.reshape %{{.*}} [2, 4, 1, 1] : tensor<2x1x1x4xf32> -> tensor<2x4x1x1xf32>
// CHECK-NEXT:    %{{.*}} = mlx.mean %y axes [1, 2] : tensor<2x5x5x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return
func.func @pool(%y: tensor<2x5x5x4xf32>) -> (tensor<2x4x1x1xf32>, tensor<2x4xf32>) {
  %nchw = mlx.transpose %y [0, 3, 1, 2] : tensor<2x5x5x4xf32> -> tensor<2x4x5x5xf32>
  %kept = mlx.mean %nchw axes [2, 3] keepdims : tensor<2x4x5x5xf32> -> tensor<2x4x1x1xf32>
  %flat = mlx.mean %nchw axes [2, 3] : tensor<2x4x5x5xf32> -> tensor<2x4xf32>
  func.return %kept, %flat : tensor<2x4x1x1xf32>, tensor<2x4xf32>
}

// Left alone: a large operand that is not channels-first (transposing it would copy
// it), a transpose of attention heads (not a channel move) and a rank-3 [0, 2, 1]
// (a batched matrix transpose, its own inverse).
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %nchw = mlx.transpose %y [0, 3, 1, 2]
// CHECK-NEXT:    %sum = mlx.add %nchw, %big
// CHECK-NEXT:    %heads = mlx.transpose %q [0, 2, 1, 3]
// CHECK-NEXT:    %e = mlx.exp %heads
// CHECK-NEXT:    %mt = mlx.transpose %m [0, 2, 1]
// CHECK-NEXT:    %shifted = mlx.add %mt, %c
func.func @kept(%y: tensor<2x5x5x4000xf32>, %big: tensor<2x4000x5x5xf32>, %q: tensor<2x8x4x16xf32>, %m: tensor<2x4x4xf32>, %c: tensor<4x4xf32>) -> (tensor<2x4000x5x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x4xf32>) {
  %nchw = mlx.transpose %y [0, 3, 1, 2] : tensor<2x5x5x4000xf32> -> tensor<2x4000x5x5xf32>
  %sum = mlx.add %nchw, %big : tensor<2x4000x5x5xf32>, tensor<2x4000x5x5xf32> -> tensor<2x4000x5x5xf32>
  %heads = mlx.transpose %q [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %e = mlx.exp %heads : tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %mt = mlx.transpose %m [0, 2, 1] : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %shifted = mlx.add %mt, %c : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  func.return %sum, %e, %shifted : tensor<2x4000x5x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x4xf32>
}
