// fold-lossless-casts (docs/semantics.md §1): astype(astype(x, d1), d2) -> astype(x, d2)
// exactly when dtype(x) -> d1 is exact for every value (and -> x when d2 is dtype(x)).
// Lossy chains stay; the pass alone leaves the now unused inner cast to dce.
// RUN: mlx-opt %s --split-input-file -p fold-lossless-casts | filecheck %s

// A single cast, even an identity one, is not a chain (remove-identity-casts drops it).
// CHECK-LABEL: @identity
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4xf32>
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: @f16_f32_f16
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    func.return %x : tensor<4xf16>
func.func @f16_f32_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}

// -----

// CHECK-LABEL: @bf16_f32_f16
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT:    %1 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT:    func.return %1 : tensor<4xf16>
func.func @bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}

// -----

// CHECK-LABEL: @bool_to_anything
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xi1> -> tensor<4xi8>
// CHECK-NEXT:    %1 = mlx.astype %x : tensor<4xi1> -> tensor<4xf16>
// CHECK-NEXT:    %2 = mlx.astype %x : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT:    %3 = mlx.astype %x : tensor<4xi1> -> tensor<4xi32>
// CHECK-NEXT:    func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
func.func @bool_to_anything(%x: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi1> -> tensor<4xi8>
  %1 = mlx.astype %0 : tensor<4xi8> -> tensor<4xf16>
  %2 = mlx.astype %x : tensor<4xi1> -> tensor<4xf32>
  %3 = mlx.astype %2 : tensor<4xf32> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}

// -----

// CHECK-LABEL: @widening_ints
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi32>
// CHECK-NEXT:    %1 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT:    %2 = mlx.astype %u : tensor<4xui8> -> tensor<4xf16>
// CHECK-NEXT:    %3 = mlx.astype %u : tensor<4xui8> -> tensor<4xf32>
// CHECK-NEXT:    %4 = mlx.astype %x : tensor<4xi8> -> tensor<4xbf16>
// CHECK-NEXT:    %5 = mlx.astype %x : tensor<4xi8> -> tensor<4xf16>
// CHECK-NEXT:    func.return %1, %3, %5 : tensor<4xi16>, tensor<4xf32>, tensor<4xf16>
func.func @widening_ints(%x: tensor<4xi8>, %u: tensor<4xui8>) -> (tensor<4xi16>, tensor<4xf32>, tensor<4xf16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi32>
  %1 = mlx.astype %0 : tensor<4xi32> -> tensor<4xi16>
  %2 = mlx.astype %u : tensor<4xui8> -> tensor<4xf16>
  %3 = mlx.astype %2 : tensor<4xf16> -> tensor<4xf32>
  %4 = mlx.astype %x : tensor<4xi8> -> tensor<4xbf16>
  %5 = mlx.astype %4 : tensor<4xbf16> -> tensor<4xf16>
  func.return %1, %3, %5 : tensor<4xi16>, tensor<4xf32>, tensor<4xf16>
}

// -----

// CHECK-LABEL: @i16_i32_to_float
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xi16> -> tensor<4xf32>
// CHECK-NEXT:    %1 = mlx.astype %x : tensor<4xi16> -> tensor<4xf16>
// CHECK-NEXT:    %2 = mlx.astype %y : tensor<4xi32> -> tensor<4xf64>
// CHECK-NEXT:    func.return %1, %y : tensor<4xf16>, tensor<4xi32>
func.func @i16_i32_to_float(%x: tensor<4xi16>, %y: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = mlx.astype %x : tensor<4xi16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  %2 = mlx.astype %y : tensor<4xi32> -> tensor<4xf64>
  %3 = mlx.astype %2 : tensor<4xf64> -> tensor<4xi32>
  func.return %1, %3 : tensor<4xf16>, tensor<4xi32>
}

// -----

// The lossy chains stay, both casts: f32 -> f16, f32 -> i32, f32 -> i1, i64 -> f32,
// f32 -> bf16 and i8 -> ui8 each change some value.
// CHECK-LABEL: @lossy
// CHECK-NEXT:    %0 = mlx.astype %f : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    %1 = mlx.astype %0 : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %2 = mlx.astype %f : tensor<4xf32> -> tensor<4xi32>
// CHECK-NEXT:    %3 = mlx.astype %2 : tensor<4xi32> -> tensor<4xf32>
// CHECK-NEXT:    %4 = mlx.astype %f : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    %5 = mlx.astype %4 : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT:    %6 = mlx.astype %i : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %7 = mlx.astype %6 : tensor<4xf32> -> tensor<4xi64>
// CHECK-NEXT:    %8 = mlx.astype %f : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT:    %9 = mlx.astype %8 : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT:    %10 = mlx.astype %s : tensor<4xi8> -> tensor<4xui8>
// CHECK-NEXT:    %11 = mlx.astype %10 : tensor<4xui8> -> tensor<4xi64>
// CHECK-NEXT:    func.return %1, %3, %5, %7, %9, %11
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

// -----

// Chains of three or more fold step by step; an intermediate with other users stays.
// CHECK-LABEL: @chain
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
// CHECK-NEXT:    %1 = mlx.astype %x : tensor<4xi8> -> tensor<4xf32>
// CHECK-NEXT:    %2 = mlx.astype %x : tensor<4xi8> -> tensor<4xf64>
// CHECK-NEXT:    func.return %2, %0 : tensor<4xf64>, tensor<4xi16>
func.func @chain(%x: tensor<4xi8>) -> (tensor<4xf64>, tensor<4xi16>) {
  %0 = mlx.astype %x : tensor<4xi8> -> tensor<4xi16>
  %1 = mlx.astype %0 : tensor<4xi16> -> tensor<4xf32>
  %2 = mlx.astype %1 : tensor<4xf32> -> tensor<4xf64>
  func.return %2, %0 : tensor<4xf64>, tensor<4xi16>
}
