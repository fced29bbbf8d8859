// Round trip of the mlx reductions, arg-reductions, scans and softmax.
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON
// RUN: mlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// An absent axes property and an empty one are different ops.
// GENERIC: %sum_all = "mlx.sum"(%i) : (tensor<4x4xi32>) -> tensor<i32>
// GENERIC: %none = "mlx.sum"(%x) <{axes = array<i64>}> : (tensor<2x?x8xf32>) -> tensor<2x?x8xf32>

// CANON-LABEL: func.func @moments(
// CANON-NEXT:    %var = mlx.var %x axes [2] ddof 0 keepdims
// CANON-NEXT:    func.return %var

// `axes []` reduces nothing; no `axes` reduces every axis: the round trip keeps them apart.
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: %x: tensor<2x?x8xf32>, %i: tensor<4x4xi32>) -> tensor<2x1x8xf32> {
// CHECK-NEXT: %sum = mlx.sum %x axes [1] keepdims : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT: %sum_all = mlx.sum %i : tensor<4x4xi32> -> tensor<i32>
// CHECK-NEXT: %prod = mlx.prod %i axes [0, -1] : tensor<4x4xi32> -> tensor<i32>
// CHECK-NEXT: %max = mlx.max %x axes [-1] : tensor<2x?x8xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %min = mlx.min %i keepdims : tensor<4x4xi32> -> tensor<1x1xi32>
// CHECK-NEXT: %mean = mlx.mean %x axes [0, 2] : tensor<2x?x8xf32> -> tensor<?xf32>
// CHECK-NEXT: %mean_i = mlx.mean %i axes [1] : tensor<4x4xi32> -> tensor<4xf32>
// CHECK-NEXT: %lse = mlx.logsumexp %x axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT: %none = mlx.sum %x axes [] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: func.return %sum : tensor<2x1x8xf32>
// CHECK-NEXT: }
func.func @reductions(%x: tensor<2x?x8xf32>, %i: tensor<4x4xi32>) -> tensor<2x1x8xf32> {
  %sum = mlx.sum %x axes [1] keepdims : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
  %sum_all = mlx.sum %i : tensor<4x4xi32> -> tensor<i32>
  %prod = mlx.prod %i axes [0, -1] : tensor<4x4xi32> -> tensor<i32>
  %max = mlx.max %x axes [-1] : tensor<2x?x8xf32> -> tensor<2x?xf32>
  %min = mlx.min %i keepdims : tensor<4x4xi32> -> tensor<1x1xi32>
  %mean = mlx.mean %x axes [0, 2] : tensor<2x?x8xf32> -> tensor<?xf32>
  %mean_i = mlx.mean %i axes [1] : tensor<4x4xi32> -> tensor<4xf32>
  %lse = mlx.logsumexp %x axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %none = mlx.sum %x axes [] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %sum : tensor<2x1x8xf32>
}

// CHECK-LABEL: func.func @predicates(
// CHECK-SAME: %b: tensor<3x?xi1>, %x: tensor<3x?xf32>) -> tensor<3xi1> {
// CHECK-NEXT: %any = mlx.any %b axes [1] : tensor<3x?xi1> -> tensor<3xi1>
// CHECK-NEXT: %all = mlx.all %b : tensor<3x?xi1> -> tensor<i1>
// CHECK-NEXT: %all_f = mlx.all %x axes [0] keepdims : tensor<3x?xf32> -> tensor<1x?xi1>
// CHECK-NEXT: func.return %any : tensor<3xi1>
// CHECK-NEXT: }
func.func @predicates(%b: tensor<3x?xi1>, %x: tensor<3x?xf32>) -> tensor<3xi1> {
  %any = mlx.any %b axes [1] : tensor<3x?xi1> -> tensor<3xi1>
  %all = mlx.all %b : tensor<3x?xi1> -> tensor<i1>
  %all_f = mlx.all %x axes [0] keepdims : tensor<3x?xf32> -> tensor<1x?xi1>
  func.return %any : tensor<3xi1>
}

// CHECK-LABEL: func.func @moments(
// CHECK-SAME: %x: tensor<2x?x8xf32>, %h: tensor<16xf16>) -> tensor<2x?x1xf32> {
// CHECK-NEXT: %var = mlx.var %x axes [2] ddof 0 keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT: %var_all = mlx.var %x ddof 1 : tensor<2x?x8xf32> -> tensor<f32>
// CHECK-NEXT: %std = mlx.std %h axes [0] ddof 1 : tensor<16xf16> -> tensor<f16>
// CHECK-NEXT: %std_keep = mlx.std %h ddof 0 keepdims : tensor<16xf16> -> tensor<1xf16>
// CHECK-NEXT: func.return %var : tensor<2x?x1xf32>
// CHECK-NEXT: }
func.func @moments(%x: tensor<2x?x8xf32>, %h: tensor<16xf16>) -> tensor<2x?x1xf32> {
  %var = mlx.var %x axes [2] ddof 0 keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %var_all = mlx.var %x ddof 1 : tensor<2x?x8xf32> -> tensor<f32>
  %std = mlx.std %h axes [0] ddof 1 : tensor<16xf16> -> tensor<f16>
  %std_keep = mlx.std %h ddof 0 keepdims : tensor<16xf16> -> tensor<1xf16>
  func.return %var : tensor<2x?x1xf32>
}

// CHECK-LABEL: func.func @arg_reductions(
// CHECK-SAME: %x: tensor<?x10xf32>) -> tensor<?xui32> {
// CHECK-NEXT: %amax = mlx.argmax %x axis 1 : tensor<?x10xf32> -> tensor<?xui32>
// CHECK-NEXT: %amax_keep = mlx.argmax %x axis -1 keepdims : tensor<?x10xf32> -> tensor<?x1xui32>
// CHECK-NEXT: %amin_flat = mlx.argmin %x : tensor<?x10xf32> -> tensor<ui32>
// CHECK-NEXT: %amin_keep = mlx.argmin %x keepdims : tensor<?x10xf32> -> tensor<1x1xi64>
// CHECK-NEXT: func.return %amax : tensor<?xui32>
// CHECK-NEXT: }
func.func @arg_reductions(%x: tensor<?x10xf32>) -> tensor<?xui32> {
  %amax = mlx.argmax %x axis 1 : tensor<?x10xf32> -> tensor<?xui32>
  %amax_keep = mlx.argmax %x axis -1 keepdims : tensor<?x10xf32> -> tensor<?x1xui32>
  %amin_flat = mlx.argmin %x : tensor<?x10xf32> -> tensor<ui32>
  %amin_keep = mlx.argmin %x keepdims : tensor<?x10xf32> -> tensor<1x1xi64>
  func.return %amax : tensor<?xui32>
}

// CHECK-LABEL: func.func @scans(
// CHECK-SAME: %x: tensor<4x?xf32>, %i: tensor<7xi64>) -> tensor<4x?xf32> {
// CHECK-NEXT: %cumsum = mlx.cumsum %x axis 1 : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT: %rev = mlx.cumsum %i axis 0 reverse : tensor<7xi64> -> tensor<7xi64>
// CHECK-NEXT: %excl = mlx.cumsum %i axis -1 exclusive : tensor<7xi64> -> tensor<7xi64>
// CHECK-NEXT: %cumprod = mlx.cumprod %x axis 0 reverse exclusive : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT: %cummax = mlx.cummax %x axis -1 : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT: %cummin = mlx.cummin %i axis 0 : tensor<7xi64> -> tensor<7xi64>
// CHECK-NEXT: %lcse = mlx.logcumsumexp %x axis 1 reverse : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK-NEXT: func.return %cumsum : tensor<4x?xf32>
// CHECK-NEXT: }
func.func @scans(%x: tensor<4x?xf32>, %i: tensor<7xi64>) -> tensor<4x?xf32> {
  %cumsum = mlx.cumsum %x axis 1 : tensor<4x?xf32> -> tensor<4x?xf32>
  %rev = mlx.cumsum %i axis 0 reverse : tensor<7xi64> -> tensor<7xi64>
  %excl = mlx.cumsum %i axis -1 exclusive : tensor<7xi64> -> tensor<7xi64>
  %cumprod = mlx.cumprod %x axis 0 reverse exclusive : tensor<4x?xf32> -> tensor<4x?xf32>
  %cummax = mlx.cummax %x axis -1 : tensor<4x?xf32> -> tensor<4x?xf32>
  %cummin = mlx.cummin %i axis 0 : tensor<7xi64> -> tensor<7xi64>
  %lcse = mlx.logcumsumexp %x axis 1 reverse : tensor<4x?xf32> -> tensor<4x?xf32>
  func.return %cumsum : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %x: tensor<1x8x?x?xf16>, %y: tensor<4x10xf32>) -> tensor<1x8x?x?xf16> {
// CHECK-NEXT: %p = mlx.softmax %x axes [-1] precise : tensor<1x8x?x?xf16> -> tensor<1x8x?x?xf16>
// CHECK-NEXT: %q = mlx.softmax %y axes [0, 1] : tensor<4x10xf32> -> tensor<4x10xf32>
// CHECK-NEXT: func.return %p : tensor<1x8x?x?xf16>
// CHECK-NEXT: }
func.func @softmax(%x: tensor<1x8x?x?xf16>, %y: tensor<4x10xf32>) -> tensor<1x8x?x?xf16> {
  %p = mlx.softmax %x axes [-1] precise : tensor<1x8x?x?xf16> -> tensor<1x8x?x?xf16>
  %q = mlx.softmax %y axes [0, 1] : tensor<4x10xf32> -> tensor<4x10xf32>
  func.return %p : tensor<1x8x?x?xf16>
}
