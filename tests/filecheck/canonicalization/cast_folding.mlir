// Lossless cast folding (docs/semantics.md §1): astype(astype(x, d1), d2) -> astype(x, d2)
// exactly when dtype(x) -> d1 is exact for every value; astype(x, dtype(x)) -> x.
// RUN: mlx-opt %s --split-input-file -p fold-lossless-casts,remove-identity-casts,dce | filecheck %s
// RUN: mlx-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: @identity
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK-NEXT: func.return %x : tensor<4xf32>

// -----

// CHECK-LABEL: @f16_f32_f16
func.func @f16_f32_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}
// CHECK-NEXT: func.return %x : tensor<4xf16>

// -----

// CHECK-LABEL: @bf16_f32_f16
func.func @bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT: func.return

// -----

// CHECK-LABEL: @bool_to_anything
func.func @bool_to_anything(%x: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi1> -> tensor<4xi8>
  %1 = mlx.astype %0 : tensor<4xi8> -> tensor<4xf16>
  %2 = mlx.astype %x : tensor<4xi1> -> tensor<4xf32>
  %3 = mlx.astype %2 : tensor<4xf32> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi1> -> tensor<4xf16>
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi1> -> tensor<4xi32>

// -----

// CHECK-LABEL: @widening_ints
func.func @widening_ints(%x: tensor<4xi8>, %u: tensor<4xui8>) -> (tensor<4xi16>, tensor<4xf32>, tensor<4xf16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi32>
  %1 = mlx.astype %0 : tensor<4xi32> -> tensor<4xi16>
  %2 = mlx.astype %u : tensor<4xui8> -> tensor<4xf16>
  %3 = mlx.astype %2 : tensor<4xf16> -> tensor<4xf32>
  %4 = mlx.astype %x : tensor<4xi8> -> tensor<4xbf16>
  %5 = mlx.astype %4 : tensor<4xbf16> -> tensor<4xf16>
  func.return %1, %3, %5 : tensor<4xi16>, tensor<4xf32>, tensor<4xf16>
}
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT: %{{.*}} = mlx.astype %u : tensor<4xui8> -> tensor<4xf32>
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi8> -> tensor<4xf16>

// -----

// CHECK-LABEL: @i16_i32_to_float
func.func @i16_i32_to_float(%x: tensor<4xi16>, %y: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  %2 = mlx.astype %y : tensor<4xi32> -> tensor<4xf64>
  %3 = mlx.astype %2 : tensor<4xf64> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi16> -> tensor<4xf16>
// CHECK-NEXT: func.return %{{.*}}, %y

// -----

// The lossy chains stay, both casts.
// CHECK-LABEL: @lossy
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

// -----

// Chains of three or more fold step by step; an intermediate with other users stays.
// CHECK-LABEL: @chain
func.func @chain(%x: tensor<4xi8>) -> (tensor<4xf64>, tensor<4xi16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
  %1 = mlx.astype %0 : tensor<4xi16> -> tensor<4xf32>
  %2 = mlx.astype %1 : tensor<4xf32> -> tensor<4xf64>
  func.return %2, %0 : tensor<4xf64>, tensor<4xi16>
}
// CHECK-NEXT: %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT: %{{.*}} = mlx.astype %x : tensor<4xi8> -> tensor<4xf64>
// CHECK-NEXT: func.return %{{.*}}, %0
