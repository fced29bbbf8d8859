// Round trip of the mlx creation ops, constants and runtime integers (mlx.dim, mlx.from_index).
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// CANON-LABEL: func.func @runtime_integers(
// CANON-NEXT:    %rows = mlx.dim %x axis 0
// CANON-NEXT:    %cols = mlx.dim %x axis 1
// CANON-NEXT:    %numel = arith.muli %rows, %cols : index
// CANON-NEXT:    %nf = mlx.from_index %numel : tensor<f32>
// CANON-NEXT:    func.return %nf

// CHECK-LABEL: func.func @fill(
// CHECK-SAME: %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %n = mlx.dim %x axis 0 : tensor<?x16xf32>
// CHECK-NEXT: %v = mlx.constant dense<-1.000000e+09> : tensor<f32>
// CHECK-NEXT: %full = mlx.full [%n, 16], %v : tensor<f32> -> tensor<?x16xf32>
// CHECK-NEXT: %t = mlx.constant dense<true> : tensor<i1>
// CHECK-NEXT: %mask = mlx.full [4, 4], %t : tensor<i1> -> tensor<4x4xi1>
// CHECK-NEXT: %z = mlx.zeros [%n, 16] : tensor<?x16xf32>
// CHECK-NEXT: %z0 = mlx.zeros [] : tensor<i64>
// CHECK-NEXT: %o = mlx.ones [2, 3] : tensor<2x3xbf16>
// CHECK-NEXT: %o1 = mlx.ones [%n, %n] : tensor<?x?xi1>
// CHECK-NEXT: func.return %full : tensor<?x16xf32>
// CHECK-NEXT: }
func.func @fill(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %n = mlx.dim %x axis 0 : tensor<?x16xf32>
  %v = mlx.constant dense<-1.000000e+09> : tensor<f32>
  %full = mlx.full [%n, 16], %v : tensor<f32> -> tensor<?x16xf32>
  %t = mlx.constant dense<true> : tensor<i1>
  %mask = mlx.full [4, 4], %t : tensor<i1> -> tensor<4x4xi1>
  %z = mlx.zeros [%n, 16] : tensor<?x16xf32>
  %z0 = mlx.zeros [] : tensor<i64>
  %o = mlx.ones [2, 3] : tensor<2x3xbf16>
  %o1 = mlx.ones [%n, %n] : tensor<?x?xi1>
  func.return %full : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @arange(
// CHECK-SAME: %x: tensor<?x16xf32>) -> tensor<?xi64> {
// CHECK-NEXT: %n = mlx.dim %x axis -2 : tensor<?x16xf32>
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %a = mlx.arange [0, %n, 1] : tensor<?xi64>
// CHECK-NEXT: %b = mlx.arange [0, 10, 3] : tensor<4xi32>
// CHECK-NEXT: %c = mlx.arange [10, 0, -3] : tensor<4xi64>
// CHECK-NEXT: %d = mlx.arange [%c2, %n, %c2] : tensor<?xi64>
// CHECK-NEXT: %e = mlx.arange [5, 5, 1] : tensor<0xf32>
// CHECK-NEXT: func.return %a : tensor<?xi64>
// CHECK-NEXT: }
func.func @arange(%x: tensor<?x16xf32>) -> tensor<?xi64> {
  %n = mlx.dim %x axis -2 : tensor<?x16xf32>
  %c2 = arith.constant 2 : index
  %a = mlx.arange [0, %n, 1] : tensor<?xi64>
  %b = mlx.arange [0, 10, 3] : tensor<4xi32>
  %c = mlx.arange [10, 0, -3] : tensor<4xi64>
  %d = mlx.arange [%c2, %n, %c2] : tensor<?xi64>
  %e = mlx.arange [5, 5, 1] : tensor<0xf32>
  func.return %a : tensor<?xi64>
}

// CHECK-LABEL: func.func @triangles(
// CHECK-SAME: %x: tensor<2x?x?xf32>, %b: tensor<8x8xi1>) -> tensor<2x?x?xf32> {
// CHECK-NEXT: %l = mlx.tril %x k 0 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
// CHECK-NEXT: %u = mlx.triu %x k 1 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
// CHECK-NEXT: %lb = mlx.tril %b k -1 : tensor<8x8xi1> -> tensor<8x8xi1>
// CHECK-NEXT: func.return %u : tensor<2x?x?xf32>
// CHECK-NEXT: }
func.func @triangles(%x: tensor<2x?x?xf32>, %b: tensor<8x8xi1>) -> tensor<2x?x?xf32> {
  %l = mlx.tril %x k 0 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  %u = mlx.triu %x k 1 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  %lb = mlx.tril %b k -1 : tensor<8x8xi1> -> tensor<8x8xi1>
  func.return %u : tensor<2x?x?xf32>
}

// CHECK-LABEL: func.func @constants(
// CHECK-SAME: ) -> tensor<2x3xf32> {
// CHECK-NEXT: %s = mlx.constant dense<3> : tensor<i64>
// CHECK-NEXT: %v = mlx.constant dense<[1, 2, 3]> : tensor<3xi32>
// CHECK-NEXT: %m = mlx.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT: %sp = mlx.constant dense<5.000000e-01> : tensor<2x3xf16>
// CHECK-NEXT: %b = mlx.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT: %e = mlx.constant dense<> : tensor<0xf32>
// CHECK-NEXT: %attr = mlx.constant {note = "folded"} dense<7> : tensor<ui8>
// CHECK-NEXT: func.return %m : tensor<2x3xf32>
// CHECK-NEXT: }
func.func @constants() -> tensor<2x3xf32> {
  %s = mlx.constant dense<3> : tensor<i64>
  %v = mlx.constant dense<[1, 2, 3]> : tensor<3xi32>
  %m = mlx.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %sp = mlx.constant dense<5.000000e-01> : tensor<2x3xf16>
  %b = mlx.constant dense<[true, false]> : tensor<2xi1>
  %e = mlx.constant dense<> : tensor<0xf32>
  %attr = mlx.constant {note = "folded"} dense<7> : tensor<ui8>
  func.return %m : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @runtime_integers(
// CHECK-SAME: %x: tensor<?x?xf32>) -> tensor<f32> {
// CHECK-NEXT: %rows = mlx.dim %x axis 0 : tensor<?x?xf32>
// CHECK-NEXT: %cols = mlx.dim %x axis 1 : tensor<?x?xf32>
// CHECK-NEXT: %numel = arith.muli %rows, %cols : index
// CHECK-NEXT: %n = mlx.from_index %numel : tensor<i64>
// CHECK-NEXT: %nf = mlx.from_index %numel : tensor<f32>
// CHECK-NEXT: %last = mlx.dim %x axis -1 : tensor<?x?xf32>
// CHECK-NEXT: %li = mlx.from_index %last : tensor<i32>
// CHECK-NEXT: func.return %nf : tensor<f32>
// CHECK-NEXT: }
func.func @runtime_integers(%x: tensor<?x?xf32>) -> tensor<f32> {
  %rows = mlx.dim %x axis 0 : tensor<?x?xf32>
  %cols = mlx.dim %x axis 1 : tensor<?x?xf32>
  %numel = arith.muli %rows, %cols : index
  %n = mlx.from_index %numel : tensor<i64>
  %nf = mlx.from_index %numel : tensor<f32>
  %last = mlx.dim %x axis -1 : tensor<?x?xf32>
  %li = mlx.from_index %last : tensor<i32>
  func.return %nf : tensor<f32>
}

// Random draws are not Pure: canonicalize and cse keep two alike draws apart (their
// values differ) and keep a draw nothing reads.
// CHECK-LABEL: func.func @draws(
// CHECK-SAME: %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %n = mlx.dim %x axis 0 : tensor<?x16xf32>
// CHECK-NEXT: %u = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
// CHECK-NEXT: %v = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
// CHECK-NEXT: %g = mlx.random_normal [3] : tensor<3xbf16>
// CHECK-NEXT: %s = mlx.add %u, %v : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: func.return %s : tensor<?x16xf32>
// CANON-LABEL: func.func @draws(
// CANON:         %u = mlx.random_uniform [%n, 16]
// CANON-NEXT:    %v = mlx.random_uniform [%n, 16]
// CANON-NEXT:    %g = mlx.random_normal [3]
// CANON-NEXT:    %s = mlx.add %u, %v
func.func @draws(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %n = mlx.dim %x axis 0 : tensor<?x16xf32>
  %u = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
  %v = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
  %g = mlx.random_normal [3] : tensor<3xbf16>
  %s = mlx.add %u, %v : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  func.return %s : tensor<?x16xf32>
}
