// cpu-depthwise-conv: a convolution with one channel per group is a pad, then per
// kernel tap a strided slice of the padded input times that tap's per-channel weights,
// summed. On request: the CPU target leaves depthwise convolutions whole, and its
// backend builds the same taps per call where its native kernel cannot run.
// RUN: mlx-opt %s -p cpu-depthwise-conv | filecheck %s

// A 2x2 kernel, stride 2, padding 1 low and 0 high, over a dynamic batch: four taps at
// offsets (0, 0), (0, 1), (1, 0), (1, 1) of the padded 5x5 input; the batch bound is
// the input's own size.
// CHECK-LABEL: func.func @depthwise(%x: tensor<?x4x4x3xf32>, %w: tensor<3x2x2x1xf32>) -> tensor<?x2x2x3xf32> {
// CHECK-NEXT:    %[[P:.*]] = mlx.pad %x low [0, 1, 1, 0] high [0, 0, 0, 0] value 0.000000e+00 : tensor<?x4x4x3xf32> -> tensor<?x5x5x3xf32>
// CHECK-NEXT:    %[[M:.*]] = mlx.transpose %w [1, 2, 0, 3] : tensor<3x2x2x1xf32> -> tensor<2x2x3x1xf32>
// CHECK-NEXT:    %[[T:.*]] = mlx.reshape %[[M]] [4, 3] : tensor<2x2x3x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[N:.*]] = mlx.dim %x axis 0
// CHECK-NEXT:    %[[V0:.*]] = mlx.slice %[[P]] [0, 0, 0, 0] to [%[[N]], 3, 3, 3] step [1, 2, 2, 1]
// CHECK-NEXT:    %[[R0:.*]] = mlx.slice %[[T]] [0, 0] to [1, 3] step [1, 1]
// CHECK-NEXT:    %[[S0:.*]] = mlx.multiply %[[V0]], %[[R0]]
// CHECK-NEXT:    %[[V1:.*]] = mlx.slice %[[P]] [0, 0, 1, 0] to [%[[N]], 3, 4, 3] step [1, 2, 2, 1]
// CHECK-NEXT:    %[[R1:.*]] = mlx.slice %[[T]] [1, 0] to [2, 3] step [1, 1]
// CHECK-NEXT:    %[[S1:.*]] = mlx.multiply %[[V1]], %[[R1]]
// CHECK-NEXT:    %[[A1:.*]] = mlx.add %[[S0]], %[[S1]]
// CHECK-NEXT:    %[[V2:.*]] = mlx.slice %[[P]] [0, 1, 0, 0] to [%[[N]], 4, 3, 3] step [1, 2, 2, 1]
// CHECK:         %[[V3:.*]] = mlx.slice %[[P]] [0, 1, 1, 0] to [%[[N]], 4, 4, 3] step [1, 2, 2, 1]
// CHECK-NEXT:    %[[R3:.*]] = mlx.slice %[[T]] [3, 0] to [4, 3] step [1, 1]
// CHECK-NEXT:    %[[S3:.*]] = mlx.multiply %[[V3]], %[[R3]]
// CHECK-NEXT:    %[[A3:.*]] = mlx.add %{{.*}}, %[[S3]] : tensor<?x2x2x3xf32>, tensor<?x2x2x3xf32> -> tensor<?x2x2x3xf32>
// CHECK-NEXT:    func.return %[[A3]]
func.func @depthwise(%x: tensor<?x4x4x3xf32>, %w: tensor<3x2x2x1xf32>) -> tensor<?x2x2x3xf32> {
  %y = mlx.conv_general %x, %w stride [2, 2] padding [1, 1] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 3 : tensor<?x4x4x3xf32>, tensor<3x2x2x1xf32> -> tensor<?x2x2x3xf32>
  func.return %y : tensor<?x2x2x3xf32>
}

// Left alone: a dense convolution, and groups of two channels.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    mlx.conv_general %x, %dense {{.*}} groups 1
// CHECK-NEXT:    mlx.conv_general %x, %grouped {{.*}} groups 2
func.func @kept(%x: tensor<1x4x4x4xf32>, %dense: tensor<4x3x3x4xf32>, %grouped: tensor<4x3x3x2xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) {
  %a = mlx.conv_general %x, %dense stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 1 : tensor<1x4x4x4xf32>, tensor<4x3x3x4xf32> -> tensor<1x2x2x4xf32>
  %b = mlx.conv_general %x, %grouped stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<1x4x4x4xf32>, tensor<4x3x3x2xf32> -> tensor<1x2x2x4xf32>
  func.return %a, %b : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>
}
