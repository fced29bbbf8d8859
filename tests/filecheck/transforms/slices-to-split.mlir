// slices-to-split: step-1 slices of one value that cut the same axis into non-empty,
// static, contiguous ranges covering all of it, each taking all of every other axis
// (a runtime stop there is an `mlx.dim` of the value, or provably its size by the
// symbolic dims), become one split, right after the value is defined. Exact: the
// pieces of a split are those slices. The pass alone leaves unused dims to dce.
// RUN: mlx-opt %s -p slices-to-split | filecheck %s

// Phi-3's fused qkv_proj output cut into q, k, v along the last axis; the value is an
// argument, so the split opens the block.
// CHECK-LABEL: func.func @qkv(%x: tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
// CHECK-NEXT:    %q, %k, %v = mlx.split %x at [64, 96] axis 2 : tensor<?x?x128xf32> -> tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>
// CHECK-NEXT:    %b = mlx.dim %x axis 0 : tensor<?x?x128xf32>
// CHECK-NEXT:    %s = mlx.dim %x axis 1 : tensor<?x?x128xf32>
// CHECK-NEXT:    func.return %q, %k, %v : tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>
// CHECK-NEXT:  }
func.func @qkv(%x: tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %b = mlx.dim %x axis 0 : tensor<?x?x128xf32>
  %s = mlx.dim %x axis 1 : tensor<?x?x128xf32>
  %q = mlx.slice %x [0, 0, 0] to [%b, %s, 64] step [1, 1, 1] : tensor<?x?x128xf32> -> tensor<?x?x64xf32>
  %k = mlx.slice %x [0, 0, 64] to [%b, %s, 96] step [1, 1, 1] : tensor<?x?x128xf32> -> tensor<?x?x32xf32>
  %v = mlx.slice %x [0, 0, 96] to [%b, %s, 128] step [1, 1, 1] : tensor<?x?x128xf32> -> tensor<?x?x32xf32>
  func.return %q, %k, %v : tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// The stops are dims of the function's input, not of the sliced value: the symbolic
// dims prove them its size (a matmul keeps the batch and sequence axes). The split
// follows the matmul, before the first slice's position.
// CHECK-LABEL: func.func @by_known_dims(%x: tensor<?x?x128xf32>, %w: tensor<128x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
// CHECK-NEXT:    %b = mlx.dim %x axis 0 : tensor<?x?x128xf32>
// CHECK-NEXT:    %s = mlx.dim %x axis 1 : tensor<?x?x128xf32>
// CHECK-NEXT:    %y = mlx.matmul %x, %w : tensor<?x?x128xf32>, tensor<128x128xf32> -> tensor<?x?x128xf32>
// CHECK-NEXT:    %lo, %hi = mlx.split %y at [64] axis 2 : tensor<?x?x128xf32> -> tensor<?x?x64xf32>, tensor<?x?x64xf32>
// CHECK-NEXT:    %e = mlx.exp %hi : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
// CHECK-NEXT:    func.return %lo, %e : tensor<?x?x64xf32>, tensor<?x?x64xf32>
// CHECK-NEXT:  }
func.func @by_known_dims(%x: tensor<?x?x128xf32>, %w: tensor<128x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %b = mlx.dim %x axis 0 : tensor<?x?x128xf32>
  %s = mlx.dim %x axis 1 : tensor<?x?x128xf32>
  %y = mlx.matmul %x, %w : tensor<?x?x128xf32>, tensor<128x128xf32> -> tensor<?x?x128xf32>
  %hi = mlx.slice %y [0, 0, 64] to [%b, %s, 128] step [1, 1, 1] : tensor<?x?x128xf32> -> tensor<?x?x64xf32>
  %e = mlx.exp %hi : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %lo = mlx.slice %y [0, 0, 0] to [%b, %s, 64] step [1, 1, 1] : tensor<?x?x128xf32> -> tensor<?x?x64xf32>
  func.return %lo, %e : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// Static shapes, the first axis, slices out of order, bounds counted from the end or
// past it (clamped as MLX clamps them). A slice of another axis is left alone.
// CHECK-LABEL: func.func @rows(%x: tensor<6x4xf16>) -> (tensor<2x4xf16>, tensor<3x4xf16>, tensor<1x4xf16>, tensor<6x2xf16>) {
// CHECK-NEXT:    %t = mlx.exp %x : tensor<6x4xf16> -> tensor<6x4xf16>
// CHECK-NEXT:    %a, %b, %c = mlx.split %t at [2, 5] axis 0 : tensor<6x4xf16> -> tensor<2x4xf16>, tensor<3x4xf16>, tensor<1x4xf16>
// CHECK-NEXT:    %cols = mlx.slice %t [0, 0] to [6, 2] step [1, 1] : tensor<6x4xf16> -> tensor<6x2xf16>
// CHECK-NEXT:    func.return %a, %b, %c, %cols : tensor<2x4xf16>, tensor<3x4xf16>, tensor<1x4xf16>, tensor<6x2xf16>
// CHECK-NEXT:  }
func.func @rows(%x: tensor<6x4xf16>) -> (tensor<2x4xf16>, tensor<3x4xf16>, tensor<1x4xf16>, tensor<6x2xf16>) {
  %t = mlx.exp %x : tensor<6x4xf16> -> tensor<6x4xf16>
  %c = mlx.slice %t [-1, 0] to [100, 4] step [1, 1] : tensor<6x4xf16> -> tensor<1x4xf16>
  %cols = mlx.slice %t [0, 0] to [6, 2] step [1, 1] : tensor<6x4xf16> -> tensor<6x2xf16>
  %a = mlx.slice %t [0, 0] to [2, 9] step [1, 1] : tensor<6x4xf16> -> tensor<2x4xf16>
  %b = mlx.slice %t [2, 0] to [-1, 4] step [1, 1] : tensor<6x4xf16> -> tensor<3x4xf16>
  func.return %a, %b, %c, %cols : tensor<2x4xf16>, tensor<3x4xf16>, tensor<1x4xf16>, tensor<6x2xf16>
}

// Kept: a gap ([0, 2) and [3, 6)); overlapping ranges; the same range twice; a
// piece with step 2; a piece short on another axis; a lone slice.
// CHECK-LABEL: func.func @kept_static(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<6x2xf32>) {
// CHECK-NEXT:    %gap_a = mlx.slice %x [0, 0] to [2, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %gap_b = mlx.slice %x [3, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %y = mlx.exp %x : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %over_a = mlx.slice %y [0, 0] to [4, 4] step [1, 1] : tensor<6x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %over_b = mlx.slice %y [2, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %z = mlx.log %x : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %dup_a = mlx.slice %z [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %dup_b = mlx.slice %z [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %dup_c = mlx.slice %z [3, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %u = mlx.sin %x : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %step_a = mlx.slice %u [0, 0] to [2, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %step_b = mlx.slice %u [2, 0] to [6, 4] step [2, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %w = mlx.cos %x : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %short_a = mlx.slice %w [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %short_b = mlx.slice %w [3, 0] to [6, 3] step [1, 1] : tensor<6x4xf32> -> tensor<3x3xf32>
// CHECK-NEXT:    %lone = mlx.slice %x [0, 0] to [6, 2] step [1, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
func.func @kept_static(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<6x2xf32>) {
  %gap_a = mlx.slice %x [0, 0] to [2, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
  %gap_b = mlx.slice %x [3, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
  %y = mlx.exp %x : tensor<6x4xf32> -> tensor<6x4xf32>
  %over_a = mlx.slice %y [0, 0] to [4, 4] step [1, 1] : tensor<6x4xf32> -> tensor<4x4xf32>
  %over_b = mlx.slice %y [2, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<4x4xf32>
  %z = mlx.log %x : tensor<6x4xf32> -> tensor<6x4xf32>
  %dup_a = mlx.slice %z [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
  %dup_b = mlx.slice %z [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
  %dup_c = mlx.slice %z [3, 0] to [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
  %u = mlx.sin %x : tensor<6x4xf32> -> tensor<6x4xf32>
  %step_a = mlx.slice %u [0, 0] to [2, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
  %step_b = mlx.slice %u [2, 0] to [6, 4] step [2, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
  %w = mlx.cos %x : tensor<6x4xf32> -> tensor<6x4xf32>
  %short_a = mlx.slice %w [0, 0] to [3, 4] step [1, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
  %short_b = mlx.slice %w [3, 0] to [6, 3] step [1, 1] : tensor<6x4xf32> -> tensor<3x3xf32>
  %lone = mlx.slice %x [0, 0] to [6, 2] step [1, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
  func.return %gap_a, %gap_b, %over_a, %step_b, %dup_b, %lone : tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<6x2xf32>
}

// Kept: runtime stops that are not the size of their axis (the dims swapped, an
// unrelated index), a runtime start, a dynamic cut axis, and an empty piece beside one
// of the whole axis (Phi-3's x[..., :16], x[..., 16:16]: the first is the input, for
// remove-identity-slices).
// CHECK-LABEL: func.func @kept_dynamic(%x: tensor<?x?x8xf32>, %n: index, %r: tensor<?x?xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?x0xf32>) {
// CHECK-NEXT:    %b = mlx.dim %x axis 0 : tensor<?x?x8xf32>
// CHECK-NEXT:    %s = mlx.dim %x axis 1 : tensor<?x?x8xf32>
// CHECK-NEXT:    %swapped = mlx.exp %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %swapped_a = mlx.slice %swapped [0, 0, 0] to [%s, %b, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %swapped_b = mlx.slice %swapped [0, 0, 4] to [%s, %b, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %other = mlx.log %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %other_a = mlx.slice %other [0, 0, 0] to [%b, %n, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %other_b = mlx.slice %other [0, 0, 4] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %start_a = mlx.slice %x [%n, 0, 0] to [%b, %s, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %start_b = mlx.slice %x [0, 0, 4] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
// CHECK-NEXT:    %d = mlx.dim %r axis 0 : tensor<?x?xf32>
// CHECK-NEXT:    %c = mlx.dim %r axis 1 : tensor<?x?xf32>
// CHECK-NEXT:    %dyn_a = mlx.slice %r [0, 0] to [%d, 4] step [1, 1] : tensor<?x?xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %dyn_b = mlx.slice %r [0, 4] to [%d, %c] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %e = mlx.sin %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %whole = mlx.slice %e [0, 0, 0] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %empty = mlx.slice %e [0, 0, 8] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x0xf32>
func.func @kept_dynamic(%x: tensor<?x?x8xf32>, %n: index, %r: tensor<?x?xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?x0xf32>) {
  %b = mlx.dim %x axis 0 : tensor<?x?x8xf32>
  %s = mlx.dim %x axis 1 : tensor<?x?x8xf32>
  %swapped = mlx.exp %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %swapped_a = mlx.slice %swapped [0, 0, 0] to [%s, %b, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %swapped_b = mlx.slice %swapped [0, 0, 4] to [%s, %b, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %other = mlx.log %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %other_a = mlx.slice %other [0, 0, 0] to [%b, %n, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %other_b = mlx.slice %other [0, 0, 4] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %start_a = mlx.slice %x [%n, 0, 0] to [%b, %s, 4] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %start_b = mlx.slice %x [0, 0, 4] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x4xf32>
  %d = mlx.dim %r axis 0 : tensor<?x?xf32>
  %c = mlx.dim %r axis 1 : tensor<?x?xf32>
  %dyn_a = mlx.slice %r [0, 0] to [%d, 4] step [1, 1] : tensor<?x?xf32> -> tensor<?x4xf32>
  %dyn_b = mlx.slice %r [0, 4] to [%d, %c] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %e = mlx.sin %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %whole = mlx.slice %e [0, 0, 0] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %empty = mlx.slice %e [0, 0, 8] to [%b, %s, 8] step [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x?x0xf32>
  func.return %swapped_a, %other_b, %start_a, %dyn_b, %empty : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?x0xf32>
}
