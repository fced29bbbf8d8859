// fold-empty-concatenate: a concatenate drops the inputs whose size along its axis is
// statically 0; when one input is left and its type is the result type, the
// concatenate is that input. Exact: an empty input contributes no element.
// RUN: mlx-opt %s -p fold-empty-concatenate | filecheck %s

// Phi-3's full rotary: cat(rope(x[..., :16]), x[..., 16:16]) is the rope alone. The
// pass alone leaves the unused slice to dce.
// CHECK-LABEL: func.func @rotary_pass_through(%x: tensor<?x4x?x16xf32>, %r: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
// CHECK-NEXT:    %b = mlx.dim %x axis 0 : tensor<?x4x?x16xf32>
// CHECK-NEXT:    %s = mlx.dim %x axis 2 : tensor<?x4x?x16xf32>
// CHECK-NEXT:    %e = mlx.slice %x [0, 0, 0, 16] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x0xf32>
// CHECK-NEXT:    func.return %r : tensor<?x4x?x16xf32>
// CHECK-NEXT:  }
func.func @rotary_pass_through(%x: tensor<?x4x?x16xf32>, %r: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %b = mlx.dim %x axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %x axis 2 : tensor<?x4x?x16xf32>
  %e = mlx.slice %x [0, 0, 0, 16] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x0xf32>
  %cat = mlx.concatenate %r, %e axis 3 : tensor<?x4x?x16xf32>, tensor<?x4x?x0xf32> -> tensor<?x4x?x16xf32>
  func.return %cat : tensor<?x4x?x16xf32>
}

// Empty inputs anywhere (a negative axis counts from the end); with two inputs left
// the concatenate stays, on those two, with its result type.
// CHECK-LABEL: func.func @static(%a: tensor<2x0xf16>, %x: tensor<2x3xf16>, %y: tensor<2x5xf16>) -> (tensor<2x3xf16>, tensor<2x8xf16>) {
// CHECK-NEXT:    %two = mlx.concatenate %x, %y axis -1 : tensor<2x3xf16>, tensor<2x5xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    func.return %x, %two : tensor<2x3xf16>, tensor<2x8xf16>
// CHECK-NEXT:  }
func.func @static(%a: tensor<2x0xf16>, %x: tensor<2x3xf16>, %y: tensor<2x5xf16>) -> (tensor<2x3xf16>, tensor<2x8xf16>) {
  %one = mlx.concatenate %a, %x, %a axis 1 : tensor<2x0xf16>, tensor<2x3xf16>, tensor<2x0xf16> -> tensor<2x3xf16>
  %two = mlx.concatenate %x, %a, %y axis -1 : tensor<2x3xf16>, tensor<2x0xf16>, tensor<2x5xf16> -> tensor<2x8xf16>
  func.return %one, %two : tensor<2x3xf16>, tensor<2x8xf16>
}

// An empty input along the first axis, the one left with a dynamic dim elsewhere.
// CHECK-LABEL: func.func @first_axis(%a: tensor<0x?xi32>, %x: tensor<3x?xi32>) -> tensor<3x?xi32> {
// CHECK-NEXT:    func.return %x : tensor<3x?xi32>
// CHECK-NEXT:  }
func.func @first_axis(%a: tensor<0x?xi32>, %x: tensor<3x?xi32>) -> tensor<3x?xi32> {
  %cat = mlx.concatenate %a, %x axis 0 : tensor<0x?xi32>, tensor<3x?xi32> -> tensor<3x?xi32>
  func.return %cat : tensor<3x?xi32>
}

// Kept: every input empty; the input left has another type than the result (the
// concatenate states the static row count); no input is statically empty (a dynamic
// size on the axis may be 0 at run time, or not); a size-0 dim off the axis.
// CHECK-LABEL: func.func @kept(%a: tensor<2x0xf32>, %x: tensor<?x4xf32>, %y: tensor<2x?xf32>, %z: tensor<0x3xf32>) -> (tensor<2x0xf32>, tensor<2x4xf32>, tensor<2x?xf32>, tensor<0x6xf32>) {
// CHECK-NEXT:    %none = mlx.concatenate %a, %a axis 1 : tensor<2x0xf32>, tensor<2x0xf32> -> tensor<2x0xf32>
// CHECK-NEXT:    %typed = mlx.concatenate %x, %a axis 1 : tensor<?x4xf32>, tensor<2x0xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %dynamic = mlx.concatenate %y, %y axis 1 : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    %off_axis = mlx.concatenate %z, %z axis 1 : tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x6xf32>
// CHECK-NEXT:    func.return %none, %typed, %dynamic, %off_axis : tensor<2x0xf32>, tensor<2x4xf32>, tensor<2x?xf32>, tensor<0x6xf32>
// CHECK-NEXT:  }
func.func @kept(%a: tensor<2x0xf32>, %x: tensor<?x4xf32>, %y: tensor<2x?xf32>, %z: tensor<0x3xf32>) -> (tensor<2x0xf32>, tensor<2x4xf32>, tensor<2x?xf32>, tensor<0x6xf32>) {
  %none = mlx.concatenate %a, %a axis 1 : tensor<2x0xf32>, tensor<2x0xf32> -> tensor<2x0xf32>
  %typed = mlx.concatenate %x, %a axis 1 : tensor<?x4xf32>, tensor<2x0xf32> -> tensor<2x4xf32>
  %dynamic = mlx.concatenate %y, %y axis 1 : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %off_axis = mlx.concatenate %z, %z axis 1 : tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x6xf32>
  func.return %none, %typed, %dynamic, %off_axis : tensor<2x0xf32>, tensor<2x4xf32>, tensor<2x?xf32>, tensor<0x6xf32>
}
