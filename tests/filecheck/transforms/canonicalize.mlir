// canonicalize: every op's canonicalization patterns together (each also runs alone, see
// the other files here), plus xDSL's removal of unused pure ops. The folds:
// transpose∘transpose, identity transposes (and ones moving only size-1 dims),
// reshape∘reshape, identity reshapes/broadcasts/slices with static and runtime sizes,
// constant casts and scalar arithmetic, and lossless cast chains (docs/semantics.md §1).
// Fusions into MLX's kernels are not canonicalization: optimize-mlx does them.
// RUN: mlx-opt %s -p canonicalize | filecheck %s

func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = mlx.transpose %a [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %c = mlx.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>) -> tensor<1x2x4xf32> {
  %a = mlx.transpose %x [1, 0, 2] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
  func.return %a : tensor<1x2x4xf32>
}
func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
  %m = arith.muli %n, %n : index
  %a = mlx.reshape %x [2, %n, 2, 2] : tensor<2x?x4xf32> -> tensor<2x?x2x2xf32>
  %b = mlx.reshape %a [%m, 4] : tensor<2x?x2x2xf32> -> tensor<?x4xf32>
  %c = mlx.reshape %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  %d = mlx.broadcast_to %x [2, %n, 4] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  func.return %b, %c, %d : tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>
}
func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
  %n = mlx.dim %x axis 1 : tensor<2x?xf32>
  %a = mlx.slice %x [0, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<2x?xf32>
  %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
  func.return %a, %b : tensor<2x?xf32>, tensor<1x?xf32>
}
func.func @constants() -> (tensor<f16>, tensor<f32>) {
  %a = mlx.constant dense<1.003> : tensor<f32>
  %b = mlx.astype %a : tensor<f32> -> tensor<f16>
  %c = mlx.constant dense<2.5> : tensor<f32>
  %d = mlx.constant dense<2.0> : tensor<f32>
  %e = mlx.multiply %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %b, %e : tensor<f16>, tensor<f32>
}
func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
  %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  func.return %y : tensor<2x?x8xf32>
}


// CHECK-LABEL: func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
// CHECK-NEXT: %b = mlx.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: func.return %b, %x : tensor<4x2x3xf32>, tensor<2x3x4xf32>
// CHECK-LABEL: func.func @unit_dim_transpose(%x: tensor<2x1x4xf32>) -> tensor<1x2x4xf32> {
// CHECK-NEXT: %a = mlx.reshape %x [1, 2, 4] : tensor<2x1x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT: func.return %a : tensor<1x2x4xf32>
// CHECK-LABEL: func.func @reshapes(%x: tensor<2x?x4xf32>) -> (tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
// CHECK-NEXT: %n = mlx.dim %x axis 1 : tensor<2x?x4xf32>
// CHECK-NEXT: %m = arith.muli %n, %n : index
// CHECK-NEXT: %b = mlx.reshape %x [%m, 4] : tensor<2x?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: func.return %b, %x, %x : tensor<?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>
// CHECK-LABEL: func.func @slices(%x: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<1x?xf32>) {
// CHECK-NEXT: %n = mlx.dim %x axis 1 : tensor<2x?xf32>
// CHECK-NEXT: %b = mlx.slice %x [1, 0] to [2, %n] step [1, 1] : tensor<2x?xf32> -> tensor<1x?xf32>
// CHECK-NEXT: func.return %x, %b : tensor<2x?xf32>, tensor<1x?xf32>
// CHECK-LABEL: func.func @constants() -> (tensor<f16>, tensor<f32>) {
// CHECK-NEXT: %b = mlx.constant dense<1.002930e+00> : tensor<f16>
// CHECK-NEXT: %e = mlx.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT: func.return %b, %e : tensor<f16>, tensor<f32>
// Kept: fusing the RMSNorm decomposition is optimize-mlx's (optimize-mlx.mlir).
// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT: %two = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
// CHECK-NEXT: %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT: %eps = mlx.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT: %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
// CHECK-NEXT: %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT: %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: %y = mlx.multiply %n, %w : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: func.return %y : tensor<2x?x8xf32>


// Lossless cast chains (docs/semantics.md §1) fold, identity casts go, and the inner
// cast left unused goes with them; lossy chains stay, both casts.
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @f16_f32_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}
func.func @bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}
func.func @bool_to_anything(%x: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi1> -> tensor<4xi8>
  %1 = mlx.astype %0 : tensor<4xi8> -> tensor<4xf16>
  %2 = mlx.astype %x : tensor<4xi1> -> tensor<4xf32>
  %3 = mlx.astype %2 : tensor<4xf32> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}
func.func @widening_ints(%x: tensor<4xi8>, %u: tensor<4xui8>) -> (tensor<4xi16>, tensor<4xf32>, tensor<4xf16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi32>
  %1 = mlx.astype %0 : tensor<4xi32> -> tensor<4xi16>
  %2 = mlx.astype %u : tensor<4xui8> -> tensor<4xf16>
  %3 = mlx.astype %2 : tensor<4xf16> -> tensor<4xf32>
  %4 = mlx.astype %x : tensor<4xi8> -> tensor<4xbf16>
  %5 = mlx.astype %4 : tensor<4xbf16> -> tensor<4xf16>
  func.return %1, %3, %5 : tensor<4xi16>, tensor<4xf32>, tensor<4xf16>
}
func.func @i16_i32_to_float(%x: tensor<4xi16>, %y: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  %2 = mlx.astype %y : tensor<4xi32> -> tensor<4xf64>
  %3 = mlx.astype %2 : tensor<4xf64> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}
func.func @lossy(%f: tensor<4xf32>, %i: tensor<4xi64>, %s: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf16>, tensor<4xi64>) {
  %0 = mlx.astype %f : tensor<4xf32> -> tensor<4xf16>
  %1 = mlx.astype %0 : tensor<4xf16> -> tensor<4xf32>
  %2 = mlx.astype %f : tensor<4xf32> -> tensor<4xi32>
  %3 = mlx.astype %2 : tensor<4xi32> -> tensor<4xf32>
  %4 = mlx.astype %f : tensor<4xf32> -> tensor<4xi1>
  %5 = mlx.astype %4 : tensor<4xi1> -> tensor<4xf32>
  %6 = mlx.astype %i : tensor<4xi64> -> tensor<4xf32>
  %7 = mlx.astype %6 : tensor<4xf32> -> tensor<4xi64>
  %8 = mlx.astype %f : tensor<4xf32> -> tensor<4xbf16>
  %9 = mlx.astype %8 : tensor<4xbf16> -> tensor<4xf16>
  %10 = mlx.astype %s : tensor<4xi8> -> tensor<4xui8>
  %11 = mlx.astype %10 : tensor<4xui8> -> tensor<4xi64>
  func.return %1, %3, %5, %7, %9, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf16>, tensor<4xi64>
}
func.func @chain(%x: tensor<4xi8>) -> (tensor<4xf64>, tensor<4xi16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
  %1 = mlx.astype %0 : tensor<4xi16> -> tensor<4xf32>
  %2 = mlx.astype %1 : tensor<4xf32> -> tensor<4xf64>
  func.return %2, %0 : tensor<4xf64>, tensor<4xi16>
}

// CHECK-LABEL: func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: func.return %x : tensor<4xf32>
// CHECK-LABEL: func.func @f16_f32_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
// CHECK-NEXT: func.return %x : tensor<4xf16>
// CHECK-LABEL: func.func @bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT: func.return %0 : tensor<4xf16>
// CHECK-LABEL: func.func @bool_to_anything(%x: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xi32>) {
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xi1> -> tensor<4xf16>
// CHECK-NEXT: %1 = mlx.astype %x : tensor<4xi1> -> tensor<4xi32>
// CHECK-NEXT: func.return %0, %1 : tensor<4xf16>, tensor<4xi32>
// CHECK-LABEL: func.func @widening_ints(%x: tensor<4xi8>, %u: tensor<4xui8>) -> (tensor<4xi16>, tensor<4xf32>, tensor<4xf16>) {
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT: %1 = mlx.astype %u : tensor<4xui8> -> tensor<4xf32>
// CHECK-NEXT: %2 = mlx.astype %x : tensor<4xi8> -> tensor<4xf16>
// CHECK-NEXT: func.return %0, %1, %2 : tensor<4xi16>, tensor<4xf32>, tensor<4xf16>
// CHECK-LABEL: func.func @i16_i32_to_float(%x: tensor<4xi16>, %y: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xi16> -> tensor<4xf16>
// CHECK-NEXT: func.return %0, %y : tensor<4xf16>, tensor<4xi32>
// CHECK-LABEL: func.func @lossy(
// CHECK-NEXT: %0 = mlx.astype %f : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT: %1 = mlx.astype %0 : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: %2 = mlx.astype %f : tensor<4xf32> -> tensor<4xi32>
// CHECK-NEXT: %3 = mlx.astype %2 : tensor<4xi32> -> tensor<4xf32>
// CHECK-NEXT: %4 = mlx.astype %f : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT: %5 = mlx.astype %4 : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT: %6 = mlx.astype %i : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT: %7 = mlx.astype %6 : tensor<4xf32> -> tensor<4xi64>
// CHECK-NEXT: %8 = mlx.astype %f : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: %9 = mlx.astype %8 : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT: %10 = mlx.astype %s : tensor<4xi8> -> tensor<4xui8>
// CHECK-NEXT: %11 = mlx.astype %10 : tensor<4xui8> -> tensor<4xi64>
// CHECK-NEXT: func.return %1, %3, %5, %7, %9, %11
// CHECK-LABEL: func.func @chain(%x: tensor<4xi8>) -> (tensor<4xf64>, tensor<4xi16>) {
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT: %1 = mlx.astype %x : tensor<4xi8> -> tensor<4xf64>
// CHECK-NEXT: func.return %1, %0 : tensor<4xf64>, tensor<4xi16>

// Patterns feed each other: constant arithmetic, then the constant cast of its result.
func.func @constant_chain() -> tensor<f16> {
  %a = mlx.constant dense<0.1> : tensor<f32>
  %b = mlx.constant dense<0.2> : tensor<f32>
  %c = mlx.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %d = mlx.astype %c : tensor<f32> -> tensor<f16>
  func.return %d : tensor<f16>
}

// f32(0.1) + f32(0.2) = 0.300000012, to the nearest f16: 1229 * 2^-12.
// CHECK-LABEL: func.func @constant_chain() -> tensor<f16> {
// CHECK-NEXT: %d = mlx.constant dense<3.000490e-01> : tensor<f16>
// CHECK-NEXT: func.return %d : tensor<f16>

// Not canonicalization: an unused pure op goes, but equal ops are not merged (that is
// cse) and an op with effects stays, used or not.
mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
func.func @kept(%x: tensor<2x3xf32>, %s: tensor<i64>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %dead = mlx.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %t = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %u = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %old = mlx.load_state @step : tensor<i64>
  mlx.store_state %s to @step : tensor<i64>
  func.return %t, %u : tensor<3x2xf32>, tensor<3x2xf32>
}

// CHECK: mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
// CHECK-LABEL: func.func @kept(%x: tensor<2x3xf32>, %s: tensor<i64>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
// CHECK-NEXT: %t = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: %u = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: %old = mlx.load_state @step : tensor<i64>
// CHECK-NEXT: mlx.store_state %s to @step : tensor<i64>
// CHECK-NEXT: func.return %t, %u : tensor<3x2xf32>, tensor<3x2xf32>
