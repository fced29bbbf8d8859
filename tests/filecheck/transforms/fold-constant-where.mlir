// fold-constant-where: where(c, x, y) with a constant condition whose elements are all
// true -> x, all false -> y, when that branch's type is the result type and neither
// the condition nor the other branch can broadcast it larger. Exact: where copies
// elements. The pass alone leaves the unused condition to dce.
// RUN: mlx-opt %s -p fold-constant-where | filecheck %s

// CHECK-LABEL: func.func @selects(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %t = mlx.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %f = mlx.constant dense<false> : tensor<2x3xi1>
// CHECK-NEXT:    func.return %x, %y : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @selects(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = mlx.constant dense<true> : tensor<i1>
  %f = mlx.constant dense<false> : tensor<2x3xi1>
  %a = mlx.where %t, %x, %y : tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.where %f, %x, %y : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}

// The other branch and the condition may broadcast into the selected one (a 0-d fill
// value, a size-1 dim); mlx.full and mlx.ones conditions; dynamic dims of the selected
// branch are fine when nothing else has a dim there other than 1.
// CHECK-LABEL: func.func @broadcast_into(%x: tensor<?x4xf32>, %n: index) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
// CHECK-NEXT:    %zero = mlx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %v = mlx.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %c = mlx.full [1, 4], %v : tensor<i1> -> tensor<1x4xi1>
// CHECK-NEXT:    %ones = mlx.ones [4] : tensor<4xi1>
// CHECK-NEXT:    func.return %x, %x : tensor<?x4xf32>, tensor<?x4xf32>
// CHECK-NEXT:  }
func.func @broadcast_into(%x: tensor<?x4xf32>, %n: index) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %zero = mlx.constant dense<0.0> : tensor<f32>
  %v = mlx.constant dense<true> : tensor<i1>
  %c = mlx.full [1, 4], %v : tensor<i1> -> tensor<1x4xi1>
  %a = mlx.where %c, %x, %zero : tensor<1x4xi1>, tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  %ones = mlx.ones [4] : tensor<4xi1>
  %b = mlx.where %ones, %x, %zero : tensor<4xi1>, tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  func.return %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
}

// Kept: a condition that is no constant, or mixes true and false.
// CHECK-LABEL: func.func @not_constant(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT:    %mixed = mlx.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %a = mlx.where %c, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %b = mlx.where %mixed, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %a, %b
func.func @not_constant(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %mixed = mlx.constant dense<[true, false]> : tensor<2xi1>
  %a = mlx.where %c, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %b = mlx.where %mixed, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// Kept: the selected branch is broadcast larger, by the other branch (statically: a
// 0-d x against a 2x3 y; or possibly at run time: ? against ?) or by the condition.
// CHECK-LABEL: func.func @grows(%s: tensor<f32>, %y: tensor<2x3xf32>, %d: tensor<?xf32>, %e: tensor<?xf32>, %x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<?xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %t = mlx.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %t23 = mlx.constant dense<true> : tensor<2x3xi1>
// CHECK-NEXT:    %a = mlx.where %t, %s, %y : tensor<i1>, tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %b = mlx.where %t, %d, %e : tensor<i1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %c = mlx.where %t23, %x, %x : tensor<2x3xi1>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %a, %b, %c
func.func @grows(%s: tensor<f32>, %y: tensor<2x3xf32>, %d: tensor<?xf32>, %e: tensor<?xf32>, %x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<?xf32>, tensor<2x3xf32>) {
  %t = mlx.constant dense<true> : tensor<i1>
  %t23 = mlx.constant dense<true> : tensor<2x3xi1>
  %a = mlx.where %t, %s, %y : tensor<i1>, tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.where %t, %d, %e : tensor<i1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %c = mlx.where %t23, %x, %x : tensor<2x3xi1>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %a, %b, %c : tensor<2x3xf32>, tensor<?xf32>, tensor<2x3xf32>
}
