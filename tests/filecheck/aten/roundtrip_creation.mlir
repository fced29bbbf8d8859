// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of the creation ops, triangles and symbolic sizes: aten.sym_size
// results combined with arith ops feed the size lists and range bounds.

// CHECK-LABEL: func.func @filled(%x: tensor<2x?x8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %pi = arith.constant 3.140000e+00 : f64
// CHECK-NEXT:    %seven = arith.constant 7 : i64
// CHECK-NEXT:    %yes = arith.constant true
// CHECK-NEXT:    %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
// CHECK-NEXT:    %full = aten.full [2, %seq, 8], %pi : f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %full_int = aten.full [3, 3], %seven : i64 -> tensor<3x3xi64>
// CHECK-NEXT:    %full_bool = aten.full [%seq, %seq], %yes : i1 -> tensor<?x?xi1>
// CHECK-NEXT:    %full_tensor = aten.full [4], %t : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %zeros = aten.zeros [2, 3] : tensor<2x3xf32>
// CHECK-NEXT:    %zeros_dyn = aten.zeros [%seq, 8] : tensor<?x8xbf16>
// CHECK-NEXT:    %zeros_scalar = aten.zeros [] : tensor<i64>
// CHECK-NEXT:    %ones = aten.ones [1, %seq] : tensor<1x?xi1>
// CHECK-NEXT:    %ones_static = aten.ones [5] : tensor<5xf16>
// CHECK-NEXT:    %scalar = aten.scalar_tensor %pi : f64 -> tensor<f32>
// CHECK-NEXT:    %scalar_int = aten.scalar_tensor %seven : i64 -> tensor<i64>
// CHECK-NEXT:    %scalar_sym = aten.scalar_tensor %seq : index -> tensor<i64>
// CHECK-NEXT:    %zeros_like = aten.zeros_like %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %ones_like = aten.ones_like %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %full_like = aten.full_like %x, %pi : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %full_like_tensor = aten.full_like %x, %t : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf16>
// CHECK-NEXT:    func.return %full : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @filled(%x: tensor<2x?x8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %full : tensor<2x?x8xf32>
func.func @filled(%x: tensor<2x?x8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf32> {
  %pi = arith.constant 3.140000e+00 : f64
  %seven = arith.constant 7 : i64
  %yes = arith.constant true
  %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
  %full = aten.full [2, %seq, 8], %pi : f64 -> tensor<2x?x8xf32>
  %full_int = aten.full [3, 3], %seven : i64 -> tensor<3x3xi64>
  %full_bool = aten.full [%seq, %seq], %yes : i1 -> tensor<?x?xi1>
  %full_tensor = aten.full [4], %t : tensor<f32> -> tensor<4xf32>
  %zeros = aten.zeros [2, 3] : tensor<2x3xf32>
  %zeros_dyn = aten.zeros [%seq, 8] : tensor<?x8xbf16>
  %zeros_scalar = aten.zeros [] : tensor<i64>
  %ones = aten.ones [1, %seq] : tensor<1x?xi1>
  %ones_static = aten.ones [5] : tensor<5xf16>
  %scalar = aten.scalar_tensor %pi : f64 -> tensor<f32>
  %scalar_int = aten.scalar_tensor %seven : i64 -> tensor<i64>
  %scalar_sym = aten.scalar_tensor %seq : index -> tensor<i64>
  %zeros_like = aten.zeros_like %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %ones_like = aten.ones_like %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
  %full_like = aten.full_like %x, %pi : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %full_like_tensor = aten.full_like %x, %t : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf16>
  func.return %full : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @ranges(%x: tensor<2x?x8xf32>) -> tensor<?xi64> {
// CHECK-NEXT:    %zero = arith.constant 0 : i64
// CHECK-NEXT:    %one = arith.constant 1 : i64
// CHECK-NEXT:    %eight = arith.constant 8 : i64
// CHECK-NEXT:    %start = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %end = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %step = arith.constant 1.250000e-01 : f64
// CHECK-NEXT:    %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
// CHECK-NEXT:    %arange = aten.arange %zero, %seq, %one : i64, index, i64 -> tensor<?xi64>
// CHECK-NEXT:    %arange_static = aten.arange %zero, %eight, %one : i64, i64, i64 -> tensor<8xi64>
// CHECK-NEXT:    %linspace = aten.arange %start, %end, %step : f64, f64, f64 -> tensor<8xf32>
// CHECK-NEXT:    func.return %arange : tensor<?xi64>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @ranges(%x: tensor<2x?x8xf32>) -> tensor<?xi64> {
// CANON:         func.return %arange : tensor<?xi64>
func.func @ranges(%x: tensor<2x?x8xf32>) -> tensor<?xi64> {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %eight = arith.constant 8 : i64
  %start = arith.constant 0.000000e+00 : f64
  %end = arith.constant 1.000000e+00 : f64
  %step = arith.constant 1.250000e-01 : f64
  %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
  %arange = aten.arange %zero, %seq, %one : i64, index, i64 -> tensor<?xi64>
  %arange_static = aten.arange %zero, %eight, %one : i64, i64, i64 -> tensor<8xi64>
  %linspace = aten.arange %start, %end, %step : f64, f64, f64 -> tensor<8xf32>
  func.return %arange : tensor<?xi64>
}

// CHECK-LABEL: func.func @triangles(%scores: tensor<?x?xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %tril = aten.tril %scores : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %tril_diag = aten.tril %mask diagonal -1 : tensor<1x1x4x4xi1> -> tensor<1x1x4x4xi1>
// CHECK-NEXT:    %triu = aten.triu %scores diagonal 1 : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %triu_main = aten.triu %mask : tensor<1x1x4x4xi1> -> tensor<1x1x4x4xi1>
// CHECK-NEXT:    func.return %triu : tensor<?x?xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @triangles(%scores: tensor<?x?xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<?x?xf32> {
// CANON:         func.return %triu : tensor<?x?xf32>
func.func @triangles(%scores: tensor<?x?xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<?x?xf32> {
  %tril = aten.tril %scores : tensor<?x?xf32> -> tensor<?x?xf32>
  %tril_diag = aten.tril %mask diagonal -1 : tensor<1x1x4x4xi1> -> tensor<1x1x4x4xi1>
  %triu = aten.triu %scores diagonal 1 : tensor<?x?xf32> -> tensor<?x?xf32>
  %triu_main = aten.triu %mask : tensor<1x1x4x4xi1> -> tensor<1x1x4x4xi1>
  func.return %triu : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @symbolic_sizes(%x: tensor<2x?x8xf32>, %cache: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %batch = aten.sym_size %x dim 0 : tensor<2x?x8xf32>
// CHECK-NEXT:    %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
// CHECK-NEXT:    %past = aten.sym_size %cache dim -2 : tensor<2x?x8xf32>
// CHECK-NEXT:    %total = arith.addi %past, %seq : index
// CHECK-NEXT:    %prev = arith.subi %total, %c1 : index
// CHECK-NEXT:    %pairs = arith.muli %batch, %total : index
// CHECK-NEXT:    %half = arith.divui %total, %c2 : index
// CHECK-NEXT:    %joined = aten.cat %cache, %x dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %tail = aten.narrow %joined dim 1 [%prev, 1] : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT:    %front = aten.slice %joined dim 1 [0, %half, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %rows = aten.view %joined [%pairs, 8] : tensor<2x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %mask = aten.ones [%seq, %total] : tensor<?x?xi1>
// CHECK-NEXT:    %causal = aten.tril %mask diagonal 0 : tensor<?x?xi1> -> tensor<?x?xi1>
// CHECK-NEXT:    %positions = aten.arange %past, %total, %c1 : index, index, index -> tensor<?xi64>
// CHECK-NEXT:    func.return %joined : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @symbolic_sizes(%x: tensor<2x?x8xf32>, %cache: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %joined : tensor<2x?x8xf32>
func.func @symbolic_sizes(%x: tensor<2x?x8xf32>, %cache: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %batch = aten.sym_size %x dim 0 : tensor<2x?x8xf32>
  %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
  %past = aten.sym_size %cache dim -2 : tensor<2x?x8xf32>
  %total = arith.addi %past, %seq : index
  %prev = arith.subi %total, %c1 : index
  %pairs = arith.muli %batch, %total : index
  %half = arith.divui %total, %c2 : index
  %joined = aten.cat %cache, %x dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %tail = aten.narrow %joined dim 1 [%prev, 1] : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
  %front = aten.slice %joined dim 1 [0, %half, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %rows = aten.view %joined [%pairs, 8] : tensor<2x?x8xf32> -> tensor<?x8xf32>
  %mask = aten.ones [%seq, %total] : tensor<?x?xi1>
  %causal = aten.tril %mask diagonal 0 : tensor<?x?xi1> -> tensor<?x?xi1>
  %positions = aten.arange %past, %total, %c1 : index, index, index -> tensor<?xi64>
  func.return %joined : tensor<2x?x8xf32>
}

// Random draws: a distribution of the table, its parameters, sizes or a tensor to
// shape like.
// CHECK-LABEL: func.func @random(%x: tensor<2x?x8xf32>, %n: index) -> tensor<?x8xf32> {
// CHECK-NEXT:    %u = aten.random "uniform" [0.000000e+00, 1.000000e+00] [%n, 8] : tensor<?x8xf32>
// CHECK-NEXT:    %i = aten.random "randint" [3.000000e+00, 9.000000e+00] [4] : tensor<4xi64>
// CHECK-NEXT:    %e = aten.random_like "exponential" [2.000000e+00] %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %b = aten.random_like "bernoulli" [3.000000e-01] %x : tensor<2x?x8xf32> -> tensor<2x?x8xbf16>
// CHECK-NEXT:    func.return %u : tensor<?x8xf32>
// CANON-LABEL: func.func @random(
// CANON-NEXT:    %u = aten.random "uniform"
// CANON-NEXT:    %i = aten.random "randint"
// CANON-NEXT:    %e = aten.random_like "exponential"
// CANON-NEXT:    %b = aten.random_like "bernoulli"
func.func @random(%x: tensor<2x?x8xf32>, %n: index) -> tensor<?x8xf32> {
  %u = aten.random "uniform" [0.0, 1.0] [%n, 8] : tensor<?x8xf32>
  %i = aten.random "randint" [3.0, 9.0] [4] : tensor<4xi64>
  %e = aten.random_like "exponential" [2.0] %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %b = aten.random_like "bernoulli" [0.3] %x : tensor<2x?x8xf32> -> tensor<2x?x8xbf16>
  func.return %u : tensor<?x8xf32>
}
