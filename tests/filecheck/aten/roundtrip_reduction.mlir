// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of reductions, variance, arg-reductions and the along-a-dim ops
// (cumsum, cumprod, softmax, log_softmax), with dims and keepdim present and absent.

// CHECK-LABEL: func.func @reductions(%x: tensor<2x?x8xf32>, %h: tensor<4x8xf16>, %i: tensor<4x8xi64>, %b: tensor<4x8xi1>) -> tensor<2x1x8xf32> {
// CHECK-NEXT:    %sum_all = aten.sum %x : tensor<2x?x8xf32> -> tensor<f32>
// CHECK-NEXT:    %sum_keep = aten.sum %x dims [1] keepdim : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT:    %sum_neg = aten.sum %x dims [0, -1] : tensor<2x?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:    %sum_empty = aten.sum %x dims [] : tensor<2x?x8xf32> -> tensor<f32>
// CHECK-NEXT:    %sum_empty_keep = aten.sum %x dims [] keepdim : tensor<2x?x8xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %sum_widen = aten.sum %h dims [1] : tensor<4x8xf16> -> tensor<4xf32>
// CHECK-NEXT:    %sum_int = aten.sum %b dims [0] : tensor<4x8xi1> -> tensor<8xi64>
// CHECK-NEXT:    %mean = aten.mean %x dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %amax = aten.amax %x dims [1] : tensor<2x?x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %amin = aten.amin %i dims [0, 1] keepdim : tensor<4x8xi64> -> tensor<1x1xi64>
// CHECK-NEXT:    %prod = aten.prod %i dims [0] : tensor<4x8xi64> -> tensor<8xi64>
// CHECK-NEXT:    %any = aten.any %b dims [1] : tensor<4x8xi1> -> tensor<4xi1>
// CHECK-NEXT:    %all = aten.all %b : tensor<4x8xi1> -> tensor<i1>
// CHECK-NEXT:    %logsumexp = aten.logsumexp %x dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    func.return %sum_keep : tensor<2x1x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @reductions(%x: tensor<2x?x8xf32>, %h: tensor<4x8xf16>, %i: tensor<4x8xi64>, %b: tensor<4x8xi1>) -> tensor<2x1x8xf32> {
// CANON:         func.return %sum_keep : tensor<2x1x8xf32>
func.func @reductions(%x: tensor<2x?x8xf32>, %h: tensor<4x8xf16>, %i: tensor<4x8xi64>, %b: tensor<4x8xi1>) -> tensor<2x1x8xf32> {
  %sum_all = aten.sum %x : tensor<2x?x8xf32> -> tensor<f32>
  %sum_keep = aten.sum %x dims [1] keepdim : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
  %sum_neg = aten.sum %x dims [0, -1] : tensor<2x?x8xf32> -> tensor<?xf32>
  %sum_empty = aten.sum %x dims [] : tensor<2x?x8xf32> -> tensor<f32>
  %sum_empty_keep = aten.sum %x dims [] keepdim : tensor<2x?x8xf32> -> tensor<1x1x1xf32>
  %sum_widen = aten.sum %h dims [1] : tensor<4x8xf16> -> tensor<4xf32>
  %sum_int = aten.sum %b dims [0] : tensor<4x8xi1> -> tensor<8xi64>
  %mean = aten.mean %x dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %amax = aten.amax %x dims [1] : tensor<2x?x8xf32> -> tensor<2x8xf32>
  %amin = aten.amin %i dims [0, 1] keepdim : tensor<4x8xi64> -> tensor<1x1xi64>
  %prod = aten.prod %i dims [0] : tensor<4x8xi64> -> tensor<8xi64>
  %any = aten.any %b dims [1] : tensor<4x8xi1> -> tensor<4xi1>
  %all = aten.all %b : tensor<4x8xi1> -> tensor<i1>
  %logsumexp = aten.logsumexp %x dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  func.return %sum_keep : tensor<2x1x8xf32>
}

// CHECK-LABEL: func.func @statistics(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>) -> tensor<2x?x1xf32> {
// CHECK-NEXT:    %var = aten.var %x dims [-1] correction 0.000000e+00 keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %var_default = aten.var %x dims [1] : tensor<2x?x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %var_int = aten.var %i correction 1.000000e+00 : tensor<4x8xi64> -> tensor<f32>
// CHECK-NEXT:    %std = aten.std %x : tensor<2x?x8xf32> -> tensor<f32>
// CHECK-NEXT:    %std_keep = aten.std %x dims [0, 2] keepdim : tensor<2x?x8xf32> -> tensor<1x?x1xf32>
// CHECK-NEXT:    func.return %var : tensor<2x?x1xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @statistics(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>) -> tensor<2x?x1xf32> {
// CANON:         func.return %var : tensor<2x?x1xf32>
func.func @statistics(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>) -> tensor<2x?x1xf32> {
  %var = aten.var %x dims [-1] correction 0.000000e+00 keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %var_default = aten.var %x dims [1] : tensor<2x?x8xf32> -> tensor<2x8xf32>
  %var_int = aten.var %i correction 1.000000e+00 : tensor<4x8xi64> -> tensor<f32>
  %std = aten.std %x : tensor<2x?x8xf32> -> tensor<f32>
  %std_keep = aten.std %x dims [0, 2] keepdim : tensor<2x?x8xf32> -> tensor<1x?x1xf32>
  func.return %var : tensor<2x?x1xf32>
}

// CHECK-LABEL: func.func @arg_reductions(%x: tensor<2x?x8xf32>, %s: tensor<f32>) -> tensor<2x?xi64> {
// CHECK-NEXT:    %argmax = aten.argmax %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?xi64>
// CHECK-NEXT:    %argmax_keep = aten.argmax %x dim 1 keepdim : tensor<2x?x8xf32> -> tensor<2x1x8xi64>
// CHECK-NEXT:    %argmax_flat = aten.argmax %x : tensor<2x?x8xf32> -> tensor<i64>
// CHECK-NEXT:    %argmin = aten.argmin %x dim 0 : tensor<2x?x8xf32> -> tensor<?x8xi32>
// CHECK-NEXT:    %argmin_flat_keep = aten.argmin %x keepdim : tensor<2x?x8xf32> -> tensor<1x1x1xi64>
// CHECK-NEXT:    %argmin_scalar = aten.argmin %s dim -1 : tensor<f32> -> tensor<i64>
// CHECK-NEXT:    func.return %argmax : tensor<2x?xi64>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @arg_reductions(%x: tensor<2x?x8xf32>, %s: tensor<f32>) -> tensor<2x?xi64> {
// CANON:         func.return %argmax : tensor<2x?xi64>
func.func @arg_reductions(%x: tensor<2x?x8xf32>, %s: tensor<f32>) -> tensor<2x?xi64> {
  %argmax = aten.argmax %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?xi64>
  %argmax_keep = aten.argmax %x dim 1 keepdim : tensor<2x?x8xf32> -> tensor<2x1x8xi64>
  %argmax_flat = aten.argmax %x : tensor<2x?x8xf32> -> tensor<i64>
  %argmin = aten.argmin %x dim 0 : tensor<2x?x8xf32> -> tensor<?x8xi32>
  %argmin_flat_keep = aten.argmin %x keepdim : tensor<2x?x8xf32> -> tensor<1x1x1xi64>
  %argmin_scalar = aten.argmin %s dim -1 : tensor<f32> -> tensor<i64>
  func.return %argmax : tensor<2x?xi64>
}

// CHECK-LABEL: func.func @along_dim(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>, %s: tensor<f32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %cumsum = aten.cumsum %x dim 1 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %cumsum_int = aten.cumsum %i dim -1 : tensor<4x8xi64> -> tensor<4x8xi64>
// CHECK-NEXT:    %cumprod = aten.cumprod %i dim 0 : tensor<4x8xi64> -> tensor<4x8xi64>
// CHECK-NEXT:    %logcumsumexp = aten.logcumsumexp %x dim -2 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %softmax = aten.softmax %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %softmax_scalar = aten.softmax %s dim 0 : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %softmax_int = aten.softmax %i dim 1 : tensor<4x8xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    %log_softmax = aten.log_softmax %x dim 2 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %log_softmax_scalar = aten.log_softmax %s dim -1 : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %softmax : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @along_dim(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>, %s: tensor<f32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %softmax : tensor<2x?x8xf32>
func.func @along_dim(%x: tensor<2x?x8xf32>, %i: tensor<4x8xi64>, %s: tensor<f32>) -> tensor<2x?x8xf32> {
  %cumsum = aten.cumsum %x dim 1 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %cumsum_int = aten.cumsum %i dim -1 : tensor<4x8xi64> -> tensor<4x8xi64>
  %cumprod = aten.cumprod %i dim 0 : tensor<4x8xi64> -> tensor<4x8xi64>
  %logcumsumexp = aten.logcumsumexp %x dim -2 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %softmax = aten.softmax %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %softmax_scalar = aten.softmax %s dim 0 : tensor<f32> -> tensor<f32>
  %softmax_int = aten.softmax %i dim 1 : tensor<4x8xi64> -> tensor<4x8xf32>
  %log_softmax = aten.log_softmax %x dim 2 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %log_softmax_scalar = aten.log_softmax %s dim -1 : tensor<f32> -> tensor<f32>
  func.return %softmax : tensor<2x?x8xf32>
}
