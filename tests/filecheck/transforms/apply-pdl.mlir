// apply-pdl: docs/pdl/remove-identity-casts.mlir, the catalog's remove-identity-casts
// written in PDL, gives the IR the built-in pattern gives, on the built-in pattern's own
// test cases (the CHECK lines below are remove-identity-casts.mlir's).
// RUN: mlx-opt %s -p 'apply-pdl{pdl_file="%S/../../../docs/pdl/remove-identity-casts.mlir"}' | filecheck %s
// RUN: mlx-opt %s -p remove-identity-casts | filecheck %s

// CHECK-LABEL: func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    func.return %x : tensor<4xf32>
// CHECK-NEXT:  }
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// Dynamic shapes and bool are no different.
// CHECK-LABEL: func.func @identity_dynamic(%x: tensor<?x4xbf16>, %b: tensor<?xi1>) -> (tensor<?x4xbf16>, tensor<?xi1>) {
// CHECK-NEXT:    func.return %x, %b : tensor<?x4xbf16>, tensor<?xi1>
// CHECK-NEXT:  }
func.func @identity_dynamic(%x: tensor<?x4xbf16>, %b: tensor<?xi1>) -> (tensor<?x4xbf16>, tensor<?xi1>) {
  %0 = mlx.astype %x : tensor<?x4xbf16> -> tensor<?x4xbf16>
  %1 = mlx.astype %b : tensor<?xi1> -> tensor<?xi1>
  func.return %0, %1 : tensor<?x4xbf16>, tensor<?xi1>
}

// Not an identity: f32 -> f16 rounds, ui8 -> i8 reinterprets the values above 127.
// CHECK-LABEL: func.func @real_casts(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf16>, tensor<4xi8>) {
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    %1 = mlx.astype %u : tensor<4xui8> -> tensor<4xi8>
// CHECK-NEXT:    func.return %0, %1 : tensor<4xf16>, tensor<4xi8>
// CHECK-NEXT:  }
func.func @real_casts(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf16>, tensor<4xi8>) {
  %0 = mlx.astype %x : tensor<4xf32> -> tensor<4xf16>
  %1 = mlx.astype %u : tensor<4xui8> -> tensor<4xi8>
  func.return %0, %1 : tensor<4xf16>, tensor<4xi8>
}

// A chain that returns to the input's dtype is not an identity cast: this pass leaves it.
// CHECK-LABEL: func.func @round_trip_chain(%x: tensor<4xf16>) -> tensor<4xf16> {
// CHECK-NEXT:    %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    func.return %1 : tensor<4xf16>
// CHECK-NEXT:  }
func.func @round_trip_chain(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mlx.astype %x : tensor<4xf16> -> tensor<4xf32>
  %1 = mlx.astype %0 : tensor<4xf32> -> tensor<4xf16>
  func.return %1 : tensor<4xf16>
}
