// dce: dead code elimination (xDSL's): ops whose results are unused and that have no
// effects go, chains of them included. Ops with effects stay, used or not, and nothing
// else changes (no folding, no symbol removal).
// RUN: mlx-opt %s -p dce | filecheck %s

// Globals stay, read or not.
// CHECK:      mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
// CHECK-NEXT: mlx.global @unread "parameter" : tensor<8xf32>
mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
mlx.global @unread "parameter" : tensor<8xf32>

// The dead chain dim -> reshape -> exp goes, and the dead multiply; the identity cast,
// used, stays (folding it is canonicalize's business).
// CHECK-LABEL: func.func @unused(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
// CHECK-NEXT:    %c = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %y = mlx.add %x, %c : tensor<2x?xf32>, tensor<f32> -> tensor<2x?xf32>
// CHECK-NEXT:    %same = mlx.astype %y : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    func.return %same : tensor<2x?xf32>
// CHECK-NEXT:  }
func.func @unused(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %n = mlx.dim %x axis 1 : tensor<2x?xf32>
  %r = mlx.reshape %x [%n, 2] : tensor<2x?xf32> -> tensor<?x2xf32>
  %e = mlx.exp %r : tensor<?x2xf32> -> tensor<?x2xf32>
  %c = mlx.constant dense<1.0> : tensor<f32>
  %y = mlx.add %x, %c : tensor<2x?xf32>, tensor<f32> -> tensor<2x?xf32>
  %dead = mlx.multiply %y, %y : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %same = mlx.astype %y : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return %same : tensor<2x?xf32>
}

// Kept: the state read, unused, and the store, which has no result.
// CHECK-LABEL: func.func @effects(%v: tensor<i64>) {
// CHECK-NEXT:    %old = mlx.load_state @step : tensor<i64>
// CHECK-NEXT:    %one = mlx.constant dense<1> : tensor<i64>
// CHECK-NEXT:    %next = mlx.add %v, %one : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NEXT:    mlx.store_state %next to @step : tensor<i64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @effects(%v: tensor<i64>) {
  %old = mlx.load_state @step : tensor<i64>
  %one = mlx.constant dense<1> : tensor<i64>
  %next = mlx.add %v, %one : tensor<i64>, tensor<i64> -> tensor<i64>
  mlx.store_state %next to @step : tensor<i64>
  func.return
}
