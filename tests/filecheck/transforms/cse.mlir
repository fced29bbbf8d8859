// cse: common subexpression elimination (xDSL's): an op with no effects that repeats
// another (same name, operands, properties and result types) is replaced by it. Ops
// with effects (reads and writes of state) are never merged.
// RUN: mlx-opt %s -p cse | filecheck %s

// CHECK:      mlx.global @w "parameter" : tensor<8xf32>
// CHECK-NEXT: mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
mlx.global @w "parameter" : tensor<8xf32>
mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>

// Two adds, two dims, two constants, two reads of one weight: one of each is left.
// CHECK-LABEL: func.func @merged(%x: tensor<2x?xf32>, %y: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>, index, tensor<f32>, tensor<8xf32>) {
// CHECK-NEXT:    %a = mlx.add %x, %y : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    %n = mlx.dim %x axis 1 : tensor<2x?xf32>
// CHECK-NEXT:    %s = arith.addi %n, %n : index
// CHECK-NEXT:    %c = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %e = mlx.multiply %c, %c : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %w1 = mlx.weight @w : tensor<8xf32>
// CHECK-NEXT:    %ww = mlx.add %w1, %w1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %a, %a, %s, %e, %ww : tensor<2x?xf32>, tensor<2x?xf32>, index, tensor<f32>, tensor<8xf32>
// CHECK-NEXT:  }
func.func @merged(%x: tensor<2x?xf32>, %y: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>, index, tensor<f32>, tensor<8xf32>) {
  %a = mlx.add %x, %y : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %b = mlx.add %x, %y : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %n = mlx.dim %x axis 1 : tensor<2x?xf32>
  %m = mlx.dim %x axis 1 : tensor<2x?xf32>
  %s = arith.addi %n, %m : index
  %c = mlx.constant dense<2.0> : tensor<f32>
  %d = mlx.constant dense<2.0> : tensor<f32>
  %e = mlx.multiply %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  %w1 = mlx.weight @w : tensor<8xf32>
  %w2 = mlx.weight @w : tensor<8xf32>
  %ww = mlx.add %w1, %w2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %a, %b, %s, %e, %ww : tensor<2x?xf32>, tensor<2x?xf32>, index, tensor<f32>, tensor<8xf32>
}

// Kept: the permutations differ, the operands are swapped (subtract does not commute),
// the constants have different types.
// CHECK-LABEL: func.func @kept(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f16>, tensor<f32>) {
// CHECK-NEXT:    %t = mlx.transpose %z [1, 0, 2] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
// CHECK-NEXT:    %u = mlx.transpose %z [2, 1, 0] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
// CHECK-NEXT:    %a = mlx.subtract %x, %y : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %b = mlx.subtract %y, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %c = mlx.constant dense<2.000000e+00> : tensor<f16>
// CHECK-NEXT:    %d = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    func.return %t, %u, %a, %b, %c, %d : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f16>, tensor<f32>
// CHECK-NEXT:  }
func.func @kept(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f16>, tensor<f32>) {
  %t = mlx.transpose %z [1, 0, 2] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %u = mlx.transpose %z [2, 1, 0] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %a = mlx.subtract %x, %y : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.subtract %y, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %c = mlx.constant dense<2.0> : tensor<f16>
  %d = mlx.constant dense<2.0> : tensor<f32>
  func.return %t, %u, %a, %b, %c, %d : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f16>, tensor<f32>
}

// Kept: the read after the store sees the new value; merging the reads would be wrong.
// CHECK-LABEL: func.func @state(%v: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
// CHECK-NEXT:    %old = mlx.load_state @step : tensor<i64>
// CHECK-NEXT:    mlx.store_state %v to @step : tensor<i64>
// CHECK-NEXT:    %new = mlx.load_state @step : tensor<i64>
// CHECK-NEXT:    func.return %old, %new : tensor<i64>, tensor<i64>
// CHECK-NEXT:  }
func.func @state(%v: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %old = mlx.load_state @step : tensor<i64>
  mlx.store_state %v to @step : tensor<i64>
  %new = mlx.load_state @step : tensor<i64>
  func.return %old, %new : tensor<i64>, tensor<i64>
}
