// fold-identity-arithmetic: x*1, 1*x, x/1, x-0 and x+0, 0+x -> x, where the other
// operand is a constant (mlx.constant, mlx.full of one, mlx.zeros, mlx.ones) whose every
// element is the identity, and the op's result type is x's. Exact bit for bit: float
// x+(+0.0) is not (-0.0 + 0.0 = +0.0), so a float add folds only with -0.0, and
// x-(-0.0) stays. The pass alone leaves the unused constants to dce.
// RUN: mlx-opt %s -p fold-identity-arithmetic | filecheck %s

// From a lowered Llama: rotary cos times a 0-d 1.0; arange plus a 0-d integer 0.
// CHECK-LABEL: func.func @llama(%cos: tensor<?x?x16xf32>, %arange: tensor<?xi64>) -> (tensor<?x?x16xf32>, tensor<?xi64>) {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %c0 = mlx.constant dense<0> : tensor<i64>
// CHECK-NEXT:    func.return %cos, %arange : tensor<?x?x16xf32>, tensor<?xi64>
// CHECK-NEXT:  }
func.func @llama(%cos: tensor<?x?x16xf32>, %arange: tensor<?xi64>) -> (tensor<?x?x16xf32>, tensor<?xi64>) {
  %one = mlx.constant dense<1.0> : tensor<f32>
  %mul = mlx.multiply %cos, %one : tensor<?x?x16xf32>, tensor<f32> -> tensor<?x?x16xf32>
  %c0 = mlx.constant dense<0> : tensor<i64>
  %pos = mlx.add %arange, %c0 : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  func.return %mul, %pos : tensor<?x?x16xf32>, tensor<?xi64>
}

// Every exact identity, on either side where the op commutes: 1*x, x/1, x-(+0.0),
// x+(-0.0), (-0.0)+x; splat constants of any size that only broadcast into x's shape.
// CHECK-LABEL: func.func @float_identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %pzero = mlx.constant dense<0.000000e+00> : tensor<1x3xf32>
// CHECK-NEXT:    %nzero = mlx.constant dense<-0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @float_identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = mlx.constant dense<1.0> : tensor<3xf32>
  %pzero = mlx.constant dense<0.0> : tensor<1x3xf32>
  %nzero = mlx.constant dense<-0.0> : tensor<2x3xf32>
  %a = mlx.multiply %one, %x : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.divide %x, %one : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %c = mlx.subtract %x, %pzero : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  %d = mlx.add %x, %nzero : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %e = mlx.add %nzero, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Constants spelled as mlx.full of a constant, mlx.ones and mlx.zeros; bf16 and f16.
// CHECK-LABEL: func.func @full_ones_zeros(%x: tensor<4xbf16>, %h: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xi32>) {
// CHECK-NEXT:    %v = mlx.constant dense<1.000000e+00> : tensor<bf16>
// CHECK-NEXT:    %full = mlx.full [4], %v : tensor<bf16> -> tensor<4xbf16>
// CHECK-NEXT:    %ones = mlx.ones [1] : tensor<1xf16>
// CHECK-NEXT:    %zeros = mlx.zeros [4] : tensor<4xi32>
// CHECK-NEXT:    func.return %x, %h, %i : tensor<4xbf16>, tensor<4xf16>, tensor<4xi32>
// CHECK-NEXT:  }
func.func @full_ones_zeros(%x: tensor<4xbf16>, %h: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xi32>) {
  %v = mlx.constant dense<1.0> : tensor<bf16>
  %full = mlx.full [4], %v : tensor<bf16> -> tensor<4xbf16>
  %a = mlx.multiply %x, %full : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %ones = mlx.ones [1] : tensor<1xf16>
  %b = mlx.divide %h, %ones : tensor<4xf16>, tensor<1xf16> -> tensor<4xf16>
  %zeros = mlx.zeros [4] : tensor<4xi32>
  %c = mlx.add %zeros, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %a, %b, %c : tensor<4xbf16>, tensor<4xf16>, tensor<4xi32>
}

// Integers and bools: x+0, 0+x, x-0, x*1 (bool: x+false, x-false, x*true).
// CHECK-LABEL: func.func @integers_and_bools(%i: tensor<3xui8>, %b: tensor<3xi1>) -> (tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
// CHECK-NEXT:    %zero = mlx.constant dense<0> : tensor<ui8>
// CHECK-NEXT:    %one = mlx.constant dense<1> : tensor<ui8>
// CHECK-NEXT:    %f = mlx.constant dense<false> : tensor<i1>
// CHECK-NEXT:    %t = mlx.constant dense<true> : tensor<3xi1>
// CHECK-NEXT:    func.return %i, %i, %i, %b, %b, %b : tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
// CHECK-NEXT:  }
func.func @integers_and_bools(%i: tensor<3xui8>, %b: tensor<3xi1>) -> (tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %zero = mlx.constant dense<0> : tensor<ui8>
  %one = mlx.constant dense<1> : tensor<ui8>
  %a = mlx.add %zero, %i : tensor<ui8>, tensor<3xui8> -> tensor<3xui8>
  %s = mlx.subtract %i, %zero : tensor<3xui8>, tensor<ui8> -> tensor<3xui8>
  %m = mlx.multiply %i, %one : tensor<3xui8>, tensor<ui8> -> tensor<3xui8>
  %f = mlx.constant dense<false> : tensor<i1>
  %t = mlx.constant dense<true> : tensor<3xi1>
  %ba = mlx.add %b, %f : tensor<3xi1>, tensor<i1> -> tensor<3xi1>
  %bs = mlx.subtract %b, %f : tensor<3xi1>, tensor<i1> -> tensor<3xi1>
  %bm = mlx.multiply %t, %b : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  func.return %a, %s, %m, %ba, %bs, %bm : tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// Kept: float x+(+0.0) and (+0.0)+x turn -0.0 into +0.0; x-(-0.0) is x+0.0; 0-x and
// 1/x are no identities.
// CHECK-LABEL: func.func @float_not_exact(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %pzero = mlx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %nzero = mlx.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %a = mlx.add %x, %pzero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %b = mlx.add %pzero, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %nzero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %d = mlx.subtract %pzero, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %e = mlx.divide %one, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %a, %b, %c, %d, %e
func.func @float_not_exact(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %pzero = mlx.constant dense<0.0> : tensor<f32>
  %nzero = mlx.constant dense<-0.0> : tensor<f32>
  %one = mlx.constant dense<1.0> : tensor<f32>
  %a = mlx.add %x, %pzero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %b = mlx.add %pzero, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %c = mlx.subtract %x, %nzero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %d = mlx.subtract %pzero, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %e = mlx.divide %one, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  func.return %a, %b, %c, %d, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Kept: the constant broadcasts x larger, statically (x is 3, the result 2x3) or
// possibly at run time (a dynamic dim of x may be 1 and grow to the constant's 3).
// CHECK-LABEL: func.func @broadcast_grows(%x: tensor<3xf32>, %d: tensor<?xf32>) -> (tensor<2x3xf32>, tensor<?xf32>) {
// CHECK-NEXT:    %ones = mlx.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %ones3 = mlx.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %a = mlx.multiply %x, %ones : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %b = mlx.multiply %d, %ones3 : tensor<?xf32>, tensor<3xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %a, %b
func.func @broadcast_grows(%x: tensor<3xf32>, %d: tensor<?xf32>) -> (tensor<2x3xf32>, tensor<?xf32>) {
  %ones = mlx.constant dense<1.0> : tensor<2x3xf32>
  %ones3 = mlx.constant dense<1.0> : tensor<3xf32>
  %a = mlx.multiply %x, %ones : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = mlx.multiply %d, %ones3 : tensor<?xf32>, tensor<3xf32> -> tensor<?xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<?xf32>
}

// Kept: a constant whose elements are not all the identity, or a NaN (written as
// its bytes: xDSL reads a bare 0x7FC00000 as an integer).
// CHECK-LABEL: func.func @not_all_identity(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
// CHECK-NEXT:    %mixed = mlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %nan = mlx.constant dense<0x7fc00000> : tensor<f32>
// CHECK-NEXT:    %izero = mlx.constant dense<[0, 1]> : tensor<2xi32>
// CHECK-NEXT:    %a = mlx.multiply %x, %mixed : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %b = mlx.multiply %x, %nan : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// CHECK-NEXT:    %i = mlx.astype %x : tensor<2xf32> -> tensor<2xi32>
// CHECK-NEXT:    %c = mlx.add %i, %izero : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT:    func.return %a, %b, %c
func.func @not_all_identity(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
  %mixed = mlx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %nan = mlx.constant dense<"0x0000C07F"> : tensor<f32>
  %izero = mlx.constant dense<[0, 1]> : tensor<2xi32>
  %a = mlx.multiply %x, %mixed : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %b = mlx.multiply %x, %nan : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %i = mlx.astype %x : tensor<2xf32> -> tensor<2xi32>
  %c = mlx.add %i, %izero : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  func.return %a, %b, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
}

// Kept: the other operand is no constant (a function argument, a dynamic mlx.full).
// CHECK-LABEL: func.func @not_constant(%x: tensor<?xf32>, %y: tensor<f32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    %one = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %full = mlx.full [%n], %one : tensor<f32> -> tensor<?xf32>
// CHECK-NEXT:    %a = mlx.multiply %x, %y : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
// CHECK-NEXT:    %b = mlx.multiply %x, %full : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %a, %b
func.func @not_constant(%x: tensor<?xf32>, %y: tensor<f32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %one = mlx.constant dense<1.0> : tensor<f32>
  %full = mlx.full [%n], %one : tensor<f32> -> tensor<?xf32>
  %a = mlx.multiply %x, %y : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %b = mlx.multiply %x, %full : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %a, %b : tensor<?xf32>, tensor<?xf32>
}
