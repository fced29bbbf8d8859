// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of matmul (all the 1-D and batched cases), mm, bmm, addmm, linear, and the
// inverse, determinant, sign and log-determinant, and solve of square matrices.

// CHECK-LABEL: func.func @matmul(%x: tensor<2x?x8xf32>, %w: tensor<8x16xf32>, %v: tensor<8xf32>, %b: tensor<?x8x16xf32>) -> tensor<2x?x16xf32> {
// CHECK-NEXT:    %matmul = aten.matmul %x, %w : tensor<2x?x8xf32>, tensor<8x16xf32> -> tensor<2x?x16xf32>
// CHECK-NEXT:    %dot = aten.matmul %v, %v : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
// CHECK-NEXT:    %vecmat = aten.matmul %v, %w : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
// CHECK-NEXT:    %matvec = aten.matmul %x, %v : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    %batched = aten.matmul %x, %b : tensor<2x?x8xf32>, tensor<?x8x16xf32> -> tensor<2x?x16xf32>
// CHECK-NEXT:    func.return %matmul : tensor<2x?x16xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @matmul(%x: tensor<2x?x8xf32>, %w: tensor<8x16xf32>, %v: tensor<8xf32>, %b: tensor<?x8x16xf32>) -> tensor<2x?x16xf32> {
// CANON:         func.return %matmul : tensor<2x?x16xf32>
func.func @matmul(%x: tensor<2x?x8xf32>, %w: tensor<8x16xf32>, %v: tensor<8xf32>, %b: tensor<?x8x16xf32>) -> tensor<2x?x16xf32> {
  %matmul = aten.matmul %x, %w : tensor<2x?x8xf32>, tensor<8x16xf32> -> tensor<2x?x16xf32>
  %dot = aten.matmul %v, %v : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  %vecmat = aten.matmul %v, %w : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
  %matvec = aten.matmul %x, %v : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?xf32>
  %batched = aten.matmul %x, %b : tensor<2x?x8xf32>, tensor<?x8x16xf32> -> tensor<2x?x16xf32>
  func.return %matmul : tensor<2x?x16xf32>
}

// CHECK-LABEL: func.func @mm_bmm_addmm(%a: tensor<6x4xf32>, %b: tensor<4x5xf32>, %p: tensor<?x6x4xf16>, %q: tensor<?x4x?xf16>, %bias: tensor<5xf32>, %bias2: tensor<6x1xf32>) -> tensor<6x5xf32> {
// CHECK-NEXT:    %mm = aten.mm %a, %b : tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %bmm = aten.bmm %p, %q : tensor<?x6x4xf16>, tensor<?x4x?xf16> -> tensor<?x6x?xf16>
// CHECK-NEXT:    %addmm = aten.addmm %bias, %a, %b : tensor<5xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %addmm_scaled = aten.addmm %bias2, %a, %b beta 5.000000e-01 alpha 2.000000e+00 : tensor<6x1xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %addmm_alpha = aten.addmm %bias, %a, %b alpha 1.000000e+00 : tensor<5xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    func.return %addmm : tensor<6x5xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @mm_bmm_addmm(%a: tensor<6x4xf32>, %b: tensor<4x5xf32>, %p: tensor<?x6x4xf16>, %q: tensor<?x4x?xf16>, %bias: tensor<5xf32>, %bias2: tensor<6x1xf32>) -> tensor<6x5xf32> {
// CANON:         func.return %addmm : tensor<6x5xf32>
func.func @mm_bmm_addmm(%a: tensor<6x4xf32>, %b: tensor<4x5xf32>, %p: tensor<?x6x4xf16>, %q: tensor<?x4x?xf16>, %bias: tensor<5xf32>, %bias2: tensor<6x1xf32>) -> tensor<6x5xf32> {
  %mm = aten.mm %a, %b : tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %bmm = aten.bmm %p, %q : tensor<?x6x4xf16>, tensor<?x4x?xf16> -> tensor<?x6x?xf16>
  %addmm = aten.addmm %bias, %a, %b : tensor<5xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %addmm_scaled = aten.addmm %bias2, %a, %b beta 5.000000e-01 alpha 2.000000e+00 : tensor<6x1xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %addmm_alpha = aten.addmm %bias, %a, %b alpha 1.000000e+00 : tensor<5xf32>, tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  func.return %addmm : tensor<6x5xf32>
}

// CHECK-LABEL: func.func @linear(%x: tensor<2x?x64xf32>, %w: tensor<128x64xf32>, %bias: tensor<128xf32>, %wv: tensor<64xf32>) -> tensor<2x?x128xf32> {
// CHECK-NEXT:    %linear = aten.linear %x, %w bias %bias : tensor<128xf32> : tensor<2x?x64xf32>, tensor<128x64xf32> -> tensor<2x?x128xf32>
// CHECK-NEXT:    %no_bias = aten.linear %x, %w : tensor<2x?x64xf32>, tensor<128x64xf32> -> tensor<2x?x128xf32>
// CHECK-NEXT:    %vector = aten.linear %x, %wv : tensor<2x?x64xf32>, tensor<64xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    func.return %linear : tensor<2x?x128xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @linear(%x: tensor<2x?x64xf32>, %w: tensor<128x64xf32>, %bias: tensor<128xf32>, %wv: tensor<64xf32>) -> tensor<2x?x128xf32> {
// CANON:         func.return %linear : tensor<2x?x128xf32>
func.func @linear(%x: tensor<2x?x64xf32>, %w: tensor<128x64xf32>, %bias: tensor<128xf32>, %wv: tensor<64xf32>) -> tensor<2x?x128xf32> {
  %linear = aten.linear %x, %w bias %bias : tensor<128xf32> : tensor<2x?x64xf32>, tensor<128x64xf32> -> tensor<2x?x128xf32>
  %no_bias = aten.linear %x, %w : tensor<2x?x64xf32>, tensor<128x64xf32> -> tensor<2x?x128xf32>
  %vector = aten.linear %x, %wv : tensor<2x?x64xf32>, tensor<64xf32> -> tensor<2x?xf32>
  func.return %linear : tensor<2x?x128xf32>
}

// CHECK-LABEL: func.func @square_matrices(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>, %v: tensor<?x4xf32>, %c: tensor<?x2x4xf32>) -> tensor<?x4x4xf32> {
// CHECK-NEXT:    %inv = aten.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    %det = aten.linalg_det %a : tensor<?x4x4xf32> -> tensor<?xf32>
// CHECK-NEXT:    %sl, %sl_1 = aten.linalg_slogdet %a : tensor<?x4x4xf32> -> tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    %x = aten.linalg_solve %a, %b : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
// CHECK-NEXT:    %xv = aten.linalg_solve %a, %v right : tensor<?x4x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %t = aten.linalg_solve_triangular %a, %b upper : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
// CHECK-NEXT:    %tr = aten.linalg_solve_triangular %a, %c right unitriangular : tensor<?x4x4xf32>, tensor<?x2x4xf32> -> tensor<?x2x4xf32>
// CHECK-NEXT:    %ci = aten.cholesky_inverse %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    func.return %inv : tensor<?x4x4xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @square_matrices(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>, %v: tensor<?x4xf32>, %c: tensor<?x2x4xf32>) -> tensor<?x4x4xf32> {
// CANON-NEXT:    %inv = aten.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CANON-NEXT:    func.return %inv : tensor<?x4x4xf32>
func.func @square_matrices(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>, %v: tensor<?x4xf32>, %c: tensor<?x2x4xf32>) -> tensor<?x4x4xf32> {
  %inv = aten.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  %det = aten.linalg_det %a : tensor<?x4x4xf32> -> tensor<?xf32>
  %sl:2 = aten.linalg_slogdet %a : tensor<?x4x4xf32> -> tensor<?xf32>, tensor<?xf32>
  %x = aten.linalg_solve %a, %b : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
  %xv = aten.linalg_solve %a, %v right : tensor<?x4x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %t = aten.linalg_solve_triangular %a, %b upper : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
  %tr = aten.linalg_solve_triangular %a, %c right unitriangular : tensor<?x4x4xf32>, tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  %ci = aten.cholesky_inverse %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  func.return %inv : tensor<?x4x4xf32>
}

// CHECK-LABEL: func.func @factorizations(%a: tensor<?x4x4xf32>, %w: tensor<?x5x3xf32>) -> tensor<?x4x4xf32> {
// CHECK-NEXT:    %l, %l_1 = aten.linalg_cholesky_ex %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>, tensor<?xi32>
// CHECK-NEXT:    %u, %u_1 = aten.linalg_cholesky_ex %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>, tensor<?xi32>
// CHECK-NEXT:    %qr, %qr_1 = aten.linalg_qr %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3x3xf32>
// CHECK-NEXT:    %qc, %qc_1 = aten.linalg_qr %w complete : tensor<?x5x3xf32> -> tensor<?x5x5xf32>, tensor<?x5x3xf32>
// CHECK-NEXT:    %lu, %lu_1, %lu_2 = aten.linalg_lu_factor_ex %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3xi32>, tensor<?xi32>
// CHECK-NEXT:    %s = aten.linalg_svdvals %w : tensor<?x5x3xf32> -> tensor<?x3xf32>
// CHECK-NEXT:    %e = aten.linalg_eigvalsh %a upper : tensor<?x4x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %p = aten.linalg_pinv %w atol 1.000000e-01 rtol 5.000000e-01 : tensor<?x5x3xf32> -> tensor<?x3x5xf32>
// CHECK-NEXT:    %ph = aten.linalg_pinv %a hermitian : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    func.return %l : tensor<?x4x4xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @factorizations(%a: tensor<?x4x4xf32>, %w: tensor<?x5x3xf32>) -> tensor<?x4x4xf32> {
// CANON-NEXT:    %l, %l_1 = aten.linalg_cholesky_ex %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>, tensor<?xi32>
// CANON-NEXT:    func.return %l : tensor<?x4x4xf32>
func.func @factorizations(%a: tensor<?x4x4xf32>, %w: tensor<?x5x3xf32>) -> tensor<?x4x4xf32> {
  %l:2 = aten.linalg_cholesky_ex %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>, tensor<?xi32>
  %u:2 = aten.linalg_cholesky_ex %a upper : tensor<?x4x4xf32> -> tensor<?x4x4xf32>, tensor<?xi32>
  %qr:2 = aten.linalg_qr %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3x3xf32>
  %qc:2 = aten.linalg_qr %w complete : tensor<?x5x3xf32> -> tensor<?x5x5xf32>, tensor<?x5x3xf32>
  %lu:3 = aten.linalg_lu_factor_ex %w : tensor<?x5x3xf32> -> tensor<?x5x3xf32>, tensor<?x3xi32>, tensor<?xi32>
  %s = aten.linalg_svdvals %w : tensor<?x5x3xf32> -> tensor<?x3xf32>
  %e = aten.linalg_eigvalsh %a upper : tensor<?x4x4xf32> -> tensor<?x4xf32>
  %p = aten.linalg_pinv %w atol 1.000000e-01 rtol 5.000000e-01 : tensor<?x5x3xf32> -> tensor<?x3x5xf32>
  %ph = aten.linalg_pinv %a hermitian : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  func.return %l#0 : tensor<?x4x4xf32>
}
