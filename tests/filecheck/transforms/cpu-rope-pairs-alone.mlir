// cpu-rope-pairs alone (cpu-rope-pairs.mlir runs it with cse, as the CPU target does):
// a traditional rope over 8 dims at static positions 3.. is rotated pairs of a reshape
// to [..., 4, 2], with the angles (arange(T) + 3) * 10000^(-i/4) for i < 4; each rope
// builds its own table.
// RUN: mlx-opt %s -p cpu-rope-pairs | filecheck %s

// CHECK-LABEL: func.func @two_ropes(
// CHECK-NEXT:    %[[T:.*]] = mlx.arange [0, 4, 1] : tensor<4xf32>
// CHECK-NEXT:    %[[OFF:.*]] = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = mlx.add %[[T]], %[[OFF]] : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %[[INV:.*]] = mlx.constant dense<[1.000000e+00, 0.100000009, 0.0100000007, 0.00100000016]> : tensor<4xf32>
// CHECK-NEXT:    %[[PE:.*]] = mlx.expand_dims %[[P]] [-1] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[A:.*]] = mlx.multiply %[[PE]], %[[INV]] : tensor<4x1xf32>, tensor<4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[COS:.*]] = mlx.cos %[[A]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[SIN:.*]] = mlx.sin %[[A]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[SIGNS:.*]] = mlx.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = mlx.expand_dims %[[COS]] [-1] : tensor<4x4xf32> -> tensor<4x4x1xf32>
// CHECK-NEXT:    %[[S:.*]] = mlx.expand_dims %[[SIN]] [-1] : tensor<4x4xf32> -> tensor<4x4x1xf32>
// CHECK-NEXT:    %[[SS:.*]] = mlx.multiply %[[S]], %[[SIGNS]] : tensor<4x4x1xf32>, tensor<2xf32> -> tensor<4x4x2xf32>
// CHECK-NEXT:    %[[X:.*]] = mlx.reshape %q [1, 4, 4, 2] : tensor<1x4x8xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = mlx.slice %[[X]] [0, 0, 0, 1] to [1, 4, 4, -3] step [1, 1, 1, -1] : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[XC:.*]] = mlx.multiply %[[X]], %[[C]] : tensor<1x4x4x2xf32>, tensor<4x4x1xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[YS:.*]] = mlx.multiply %[[Y]], %[[SS]] : tensor<1x4x4x2xf32>, tensor<4x4x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[R:.*]] = mlx.add %[[XC]], %[[YS]] : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %rq = mlx.reshape %[[R]] [1, 4, 8] : tensor<1x4x4x2xf32> -> tensor<1x4x8xf32>
// k's own table, over its 2 positions.
// CHECK-NEXT:    mlx.arange [0, 2, 1] : tensor<2xf32>
// CHECK:         mlx.cos
// CHECK:         mlx.reshape %k [1, 2, 4, 2]
// CHECK:         %rk = mlx.reshape
// CHECK-NOT:     mlx.rope
func.func @two_ropes(%q: tensor<1x4x8xf32>, %k: tensor<1x2x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x2x8xf32>) {
  %rq = mlx.rope %q dims 8 traditional base 1.000000e+04 scale 1.000000e+00 offset [3] : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %rk = mlx.rope %k dims 8 traditional base 1.000000e+04 scale 1.000000e+00 offset [3] : tensor<1x2x8xf32> -> tensor<1x2x8xf32>
  func.return %rq, %rk : tensor<1x4x8xf32>, tensor<1x2x8xf32>
}
