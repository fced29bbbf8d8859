// Round trip of the mlx shape ops, with runtime sizes from mlx.dim and arith.
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON
// RUN: mlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Dynamic entries are marked in the static list and read from the index operands in order.
// GENERIC: %flat = "mlx.reshape"(%x, %n) <{static_shape = array<i64: -9223372036854775808, 32>}>
// GENERIC: %b = "mlx.slice"(%x, %lo, %hi) <{static_start = array<i64: 0, -9223372036854775808, 0>, static_stop = array<i64: 8, -9223372036854775808, 16>, strides = array<i64: 2, 1, 2>, operandSegmentSizes = array<i32: 1, 1, 1>}>

// CANON-LABEL: func.func @slice(
// CANON-NEXT:    %n = mlx.dim %x axis 1
// CANON-NEXT:    %c1 = arith.constant 1 : index
// CANON-NEXT:    %hi = arith.subi %n, %c1 : index
// CANON-NEXT:    %b = mlx.slice %x [0, %lo, 0] to [8, %hi, 16] step [2, 1, 2]
// CANON-NEXT:    func.return %b

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %n = mlx.dim %x axis 0 : tensor<?x4x8xf32>
// CHECK-NEXT: %flat = mlx.reshape %x [%n, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: %n4 = arith.muli %n, %c4 : index
// CHECK-NEXT: %rows = mlx.reshape %x [%n4, 8] : tensor<?x4x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %w = mlx.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT: %w6 = mlx.reshape %w [6] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT: %s = mlx.reshape %w6 [1, 6, 1] : tensor<6xf32> -> tensor<1x6x1xf32>
// CHECK-NEXT: func.return %flat : tensor<?x32xf32>
// CHECK-NEXT: }
func.func @reshape(%x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %n = mlx.dim %x axis 0 : tensor<?x4x8xf32>
  %flat = mlx.reshape %x [%n, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
  %c4 = arith.constant 4 : index
  %n4 = arith.muli %n, %c4 : index
  %rows = mlx.reshape %x [%n4, 8] : tensor<?x4x8xf32> -> tensor<?x8xf32>
  %w = mlx.constant dense<0.000000e+00> : tensor<2x3xf32>
  %w6 = mlx.reshape %w [6] : tensor<2x3xf32> -> tensor<6xf32>
  %s = mlx.reshape %w6 [1, 6, 1] : tensor<6xf32> -> tensor<1x6x1xf32>
  func.return %flat : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME: %x: tensor<?x1xf32>, %b: tensor<1x8xi1>, %s: tensor<f32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT: %n = mlx.dim %x axis 0 : tensor<?x1xf32>
// CHECK-NEXT: %wide = mlx.broadcast_to %x [2, %n, 8] : tensor<?x1xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: %mask = mlx.broadcast_to %b [4, 8] : tensor<1x8xi1> -> tensor<4x8xi1>
// CHECK-NEXT: %full = mlx.broadcast_to %s [3, 3] : tensor<f32> -> tensor<3x3xf32>
// CHECK-NEXT: func.return %wide : tensor<2x?x8xf32>
// CHECK-NEXT: }
func.func @broadcast_to(%x: tensor<?x1xf32>, %b: tensor<1x8xi1>, %s: tensor<f32>) -> tensor<2x?x8xf32> {
  %n = mlx.dim %x axis 0 : tensor<?x1xf32>
  %wide = mlx.broadcast_to %x [2, %n, 8] : tensor<?x1xf32> -> tensor<2x?x8xf32>
  %mask = mlx.broadcast_to %b [4, 8] : tensor<1x8xi1> -> tensor<4x8xi1>
  %full = mlx.broadcast_to %s [3, 3] : tensor<f32> -> tensor<3x3xf32>
  func.return %wide : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @permute(
// CHECK-SAME: %x: tensor<2x?x8xf32>, %v: tensor<5xi32>) -> tensor<8x2x?xf32> {
// CHECK-NEXT: %t = mlx.transpose %x [2, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
// CHECK-NEXT: %id = mlx.transpose %v [0] : tensor<5xi32> -> tensor<5xi32>
// CHECK-NEXT: %e = mlx.expand_dims %x [0, -1] : tensor<2x?x8xf32> -> tensor<1x2x?x8x1xf32>
// CHECK-NEXT: %e1 = mlx.expand_dims %v [1] : tensor<5xi32> -> tensor<5x1xi32>
// CHECK-NEXT: %s = mlx.squeeze %e [0, 4] : tensor<1x2x?x8x1xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: %s1 = mlx.squeeze %x [-2] : tensor<2x?x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: func.return %t : tensor<8x2x?xf32>
// CHECK-NEXT: }
func.func @permute(%x: tensor<2x?x8xf32>, %v: tensor<5xi32>) -> tensor<8x2x?xf32> {
  %t = mlx.transpose %x [2, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
  %id = mlx.transpose %v [0] : tensor<5xi32> -> tensor<5xi32>
  %e = mlx.expand_dims %x [0, -1] : tensor<2x?x8xf32> -> tensor<1x2x?x8x1xf32>
  %e1 = mlx.expand_dims %v [1] : tensor<5xi32> -> tensor<5x1xi32>
  %s = mlx.squeeze %e [0, 4] : tensor<1x2x?x8x1xf32> -> tensor<2x?x8xf32>
  %s1 = mlx.squeeze %x [-2] : tensor<2x?x8xf32> -> tensor<2x8xf32>
  func.return %t : tensor<8x2x?xf32>
}

// Split points past the end clamp to the axis size, as in MLX and NumPy.
// CHECK-LABEL: func.func @concatenate_split(
// CHECK-SAME: %a: tensor<2x?xf32>, %b: tensor<3x?xf32>, %c: tensor<?x4xf32>) -> tensor<5x?xf32> {
// CHECK-NEXT: %ab = mlx.concatenate %a, %b axis 0 : tensor<2x?xf32>, tensor<3x?xf32> -> tensor<5x?xf32>
// CHECK-NEXT: %one = mlx.concatenate %c axis -1 : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %wide = mlx.concatenate %c, %c, %c axis 1 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x12xf32>
// CHECK-NEXT: %rows = mlx.concatenate %a, %c axis 0 : tensor<2x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %p, %p_1, %p_2 = mlx.split %wide at [4, 6] axis 1 : tensor<?x12xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>
// CHECK-NEXT: %q, %q_1 = mlx.split %c at [1] axis 0 : tensor<?x4xf32> -> tensor<1x4xf32>, tensor<?x4xf32>
// CHECK-NEXT: %whole = mlx.split %a at [] axis 1 : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %clamped, %clamped_1, %clamped_2 = mlx.split %b at [2, 6] axis 0 : tensor<3x?xf32> -> tensor<2x?xf32>, tensor<1x?xf32>, tensor<0x?xf32>
// CHECK-NEXT: func.return %ab : tensor<5x?xf32>
// CHECK-NEXT: }
func.func @concatenate_split(%a: tensor<2x?xf32>, %b: tensor<3x?xf32>, %c: tensor<?x4xf32>) -> tensor<5x?xf32> {
  %ab = mlx.concatenate %a, %b axis 0 : tensor<2x?xf32>, tensor<3x?xf32> -> tensor<5x?xf32>
  %one = mlx.concatenate %c axis -1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %wide = mlx.concatenate %c, %c, %c axis 1 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x12xf32>
  %rows = mlx.concatenate %a, %c axis 0 : tensor<2x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %p:3 = mlx.split %wide at [4, 6] axis 1 : tensor<?x12xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>
  %q:2 = mlx.split %c at [1] axis 0 : tensor<?x4xf32> -> tensor<1x4xf32>, tensor<?x4xf32>
  %whole = mlx.split %a at [] axis 1 : tensor<2x?xf32> -> tensor<2x?xf32>
  %clamped:3 = mlx.split %b at [2, 6] axis 0 : tensor<3x?xf32> -> tensor<2x?xf32>, tensor<1x?xf32>, tensor<0x?xf32>
  func.return %ab : tensor<5x?xf32>
}

// Python slicing: negative bounds wrap, out-of-range bounds clamp, steps may be negative.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME: %x: tensor<8x?x16xf32>, %lo: index) -> tensor<4x?x8xf32> {
// CHECK-NEXT: %n = mlx.dim %x axis 1 : tensor<8x?x16xf32>
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %hi = arith.subi %n, %c1 : index
// CHECK-NEXT: %a = mlx.slice %x [0, 0, 0] to [8, 5, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x5x8xf32>
// CHECK-NEXT: %b = mlx.slice %x [0, %lo, 0] to [8, %hi, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x?x8xf32>
// CHECK-NEXT: %c = mlx.slice %x [-1, 0, 15] to [-9, 4, 0] step [-1, 1, -4] : tensor<8x?x16xf32> -> tensor<8x4x4xf32>
// CHECK-NEXT: %d = mlx.slice %x [2, 1, 0] to [2, 9223372036854775807, -8] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<0x?x8xf32>
// CHECK-NEXT: func.return %b : tensor<4x?x8xf32>
// CHECK-NEXT: }
func.func @slice(%x: tensor<8x?x16xf32>, %lo: index) -> tensor<4x?x8xf32> {
  %n = mlx.dim %x axis 1 : tensor<8x?x16xf32>
  %c1 = arith.constant 1 : index
  %hi = arith.subi %n, %c1 : index
  %a = mlx.slice %x [0, 0, 0] to [8, 5, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x5x8xf32>
  %b = mlx.slice %x [0, %lo, 0] to [8, %hi, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x?x8xf32>
  %c = mlx.slice %x [-1, 0, 15] to [-9, 4, 0] step [-1, 1, -4] : tensor<8x?x16xf32> -> tensor<8x4x4xf32>
  %d = mlx.slice %x [2, 1, 0] to [2, 9223372036854775807, -8] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<0x?x8xf32>
  func.return %b : tensor<4x?x8xf32>
}

// CHECK-LABEL: func.func @pad_tile(
// CHECK-SAME: %x: tensor<2x?xf32>, %i: tensor<3xi32>) -> tensor<4x?xf32> {
// CHECK-NEXT: %p = mlx.pad %x low [1, 0] high [1, 3] value 0.000000e+00 : tensor<2x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT: %q = mlx.pad %i low [2] high [0] value -1.000000e+00 : tensor<3xi32> -> tensor<5xi32>
// CHECK-NEXT: %t = mlx.tile %x [3, 2] : tensor<2x?xf32> -> tensor<6x?xf32>
// CHECK-NEXT: %u = mlx.tile %i [2, 2] : tensor<3xi32> -> tensor<2x6xi32>
// CHECK-NEXT: %v = mlx.tile %x [4] : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: func.return %p : tensor<4x?xf32>
// CHECK-NEXT: }
func.func @pad_tile(%x: tensor<2x?xf32>, %i: tensor<3xi32>) -> tensor<4x?xf32> {
  %p = mlx.pad %x low [1, 0] high [1, 3] value 0.000000e+00 : tensor<2x?xf32> -> tensor<4x?xf32>
  %q = mlx.pad %i low [2] high [0] value -1.000000e+00 : tensor<3xi32> -> tensor<5xi32>
  %t = mlx.tile %x [3, 2] : tensor<2x?xf32> -> tensor<6x?xf32>
  %u = mlx.tile %i [2, 2] : tensor<3xi32> -> tensor<2x6xi32>
  %v = mlx.tile %x [4] : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return %p : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @diagonal(%x: tensor<2x?x4x5xf32>, %m: tensor<3x4xi1>) -> tensor<2x?x4xf32> {
// CHECK-NEXT:    %d = mlx.diagonal %x offset 0 axes 2, 3 : tensor<2x?x4x5xf32> -> tensor<2x?x4xf32>
// CHECK-NEXT:    %below = mlx.diagonal %m offset -1 axes 1, 0 : tensor<3x4xi1> -> tensor<3xi1>
// CHECK-NEXT:    func.return %d : tensor<2x?x4xf32>
// CANON-LABEL: func.func @diagonal(
// CANON:         func.return %d : tensor<2x?x4xf32>
func.func @diagonal(%x: tensor<2x?x4x5xf32>, %m: tensor<3x4xi1>) -> tensor<2x?x4xf32> {
  %d = mlx.diagonal %x offset 0 axes 2, 3 : tensor<2x?x4x5xf32> -> tensor<2x?x4xf32>
  %below = mlx.diagonal %m offset -1 axes 1, 0 : tensor<3x4xi1> -> tensor<3xi1>
  func.return %d : tensor<2x?x4xf32>
}
