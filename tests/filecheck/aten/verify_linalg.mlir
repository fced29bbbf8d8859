// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of matmul, mm, bmm, addmm, linear, or the square-matrix
// ops (inverse, determinant, slogdet, solve).

func.func @matmul_0d(%x: tensor<f32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'aten.matmul' op matmul operands must have rank >= 1}}
  %0 = aten.matmul %x, %y : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_contracting(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{'aten.matmul' op contracting dims differ: [2, 3] @ [4, 5]}}
  %0 = aten.matmul %x, %y : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_batch(%x: tensor<2x4x3xf32>, %y: tensor<5x3x6xf32>) {
  // expected-error @+1 {{'aten.matmul' op operand shapes [2], [5] are not broadcastable}}
  %0 = aten.matmul %x, %y : tensor<2x4x3xf32>, tensor<5x3x6xf32> -> tensor<2x4x6xf32>
  func.return
}

// -----

func.func @matmul_vector_shape(%x: tensor<?x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'aten.matmul' op result shape [?, 1] does not match the expected shape [?]}}
  %0 = aten.matmul %x, %y : tensor<?x3xf32>, tensor<3xf32> -> tensor<?x1xf32>
  func.return
}

// -----

func.func @matmul_dtypes(%x: tensor<2x3xf32>, %y: tensor<3x4xf16>) {
  // expected-error @+1 {{'aten.matmul' op operands must share one element type}}
  %0 = aten.matmul %x, %y : tensor<2x3xf32>, tensor<3x4xf16> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @mm_rank(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'aten.mm' op operands must both have rank 2, got 2 and 1}}
  %0 = aten.mm %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @mm_shape(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.mm' op result shape [4, 2] does not match the expected shape [2, 4]}}
  %0 = aten.mm %x, %y : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<4x2xf32>
  func.return
}

// -----

func.func @bmm_rank(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.bmm' op operands must both have rank 3, got 2 and 2}}
  %0 = aten.bmm %x, %y : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @bmm_contracting(%x: tensor<?x2x3xf32>, %y: tensor<?x2x4xf32>) {
  // expected-error @+1 {{'aten.bmm' op contracting dims differ: [?, 2, 3] @ [?, 2, 4]}}
  %0 = aten.bmm %x, %y : tensor<?x2x3xf32>, tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  func.return
}

// -----

func.func @addmm_rank(%b: tensor<4xf32>, %x: tensor<1x2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.addmm' op mat1 and mat2 must be 2-D}}
  %0 = aten.addmm %b, %x, %y : tensor<4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @addmm_contracting(%b: tensor<4xf32>, %x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.addmm' op contracting dims differ: [2, 3] @ [2, 4]}}
  %0 = aten.addmm %b, %x, %y : tensor<4xf32>, tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @addmm_bias(%b: tensor<3xf32>, %x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.addmm' op operand shapes [3], [2, 4] are not broadcastable}}
  %0 = aten.addmm %b, %x, %y beta 1.000000e+00 : tensor<3xf32>, tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @addmm_bias_rank(%b: tensor<1x2x4xf32>, %x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.addmm' op result shape [2, 4] is not the broadcast shape [1, 2, 4] of the operands}}
  %0 = aten.addmm %b, %x, %y : tensor<1x2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x3xf32>, %w: tensor<1x4x3xf32>) {
  // expected-error @+1 {{'aten.linear' op weight must be 1-D or 2-D and input at least 1-D, got ranks 3, 2}}
  %0 = aten.linear %x, %w : tensor<2x3xf32>, tensor<1x4x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.linear' op weight must be 1-D or 2-D and input at least 1-D, got ranks 2, 0}}
  %0 = aten.linear %x, %w : tensor<f32>, tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @linear_features(%x: tensor<2x?x3xf32>, %w: tensor<4x5xf32>) {
  // expected-error @+1 {{'aten.linear' op input features 3 do not match weight in-features 5}}
  %0 = aten.linear %x, %w : tensor<2x?x3xf32>, tensor<4x5xf32> -> tensor<2x?x4xf32>
  func.return
}

// -----

func.func @linear_shape(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.linear' op result shape [2, 3] does not match the expected shape [2, 4]}}
  %0 = aten.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @linear_bias(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'aten.linear' op operand shapes [3], [2, 4] are not broadcastable}}
  %0 = aten.linear %x, %w bias %b : tensor<3xf32> : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @inv_not_square(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'aten.linalg_inv' op input must be square matrices [..., n, n], got [2, 3, 4]}}
  %0 = aten.linalg_inv %a : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @det_of_integers(%a: tensor<3x3xi64>) {
  // expected-error @+1 {{'aten.linalg_det' op input must have float element type, got i64}}
  %0 = aten.linalg_det %a : tensor<3x3xi64> -> tensor<i64>
  func.return
}

// -----

func.func @slogdet_batch(%a: tensor<2x3x3xf32>) {
  // expected-error @+1 {{'aten.linalg_slogdet' op logabsdet shape [3] must be the batch dims [2]}}
  %0:2 = aten.linalg_slogdet %a : tensor<2x3x3xf32> -> tensor<2xf32>, tensor<3xf32>
  func.return
}

// -----

func.func @solve_scalar_b(%a: tensor<3x3xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'aten.linalg_solve' op B [] must have a rank of at least 1, and the result [3] at least B's rank}}
  %0 = aten.linalg_solve %a, %b : tensor<3x3xf32>, tensor<f32> -> tensor<3xf32>
  func.return
}

// -----

func.func @inv_dtype(%a: tensor<3x3xf32>) {
  // expected-error @+1 {{'aten.linalg_inv' op input and result must share one element type, got f32, f16}}
  %0 = aten.linalg_inv %a : tensor<3x3xf32> -> tensor<3x3xf16>
  func.return
}

// -----

func.func @solve_dtype(%a: tensor<3x3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'aten.linalg_solve' op A, B and the result must share one element type, got f32, f16, f32}}
  %0 = aten.linalg_solve %a, %b : tensor<3x3xf32>, tensor<3xf16> -> tensor<3xf32>
  func.return
}

// -----

func.func @det_dtype(%a: tensor<2x3x3xf32>) {
  // expected-error @+1 {{'aten.linalg_det' op result element type f16 must be the input's f32}}
  %0 = aten.linalg_det %a : tensor<2x3x3xf32> -> tensor<2xf16>
  func.return
}

// -----

func.func @solve_triangular_vector(%a: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'aten.linalg_solve_triangular' op B [4] must be matrices, and the result [4] at least B's rank}}
  %0 = aten.linalg_solve_triangular %a, %b upper : tensor<4x4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @cholesky_inverse_not_square(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.cholesky_inverse' op input must be square matrices [..., n, n], got [4, 3]}}
  %0 = aten.cholesky_inverse %a : tensor<4x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @cholesky_ex_info_dtype(%a: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'aten.linalg_cholesky_ex' op info must be i32, got i64}}
  %0:2 = aten.linalg_cholesky_ex %a : tensor<2x4x4xf32> -> tensor<2x4x4xf32>, tensor<2xi64>
  func.return
}

// -----

func.func @qr_vector(%a: tensor<5xf32>) {
  // expected-error @+1 {{'aten.linalg_qr' op input must be matrices [..., m, n], got [5]}}
  %0:2 = aten.linalg_qr %a : tensor<5xf32> -> tensor<5xf32>, tensor<5xf32>
  func.return
}

// -----

func.func @qr_complete_r(%a: tensor<5x3xf32>) {
  // expected-error @+1 {{'aten.linalg_qr' op R shape [3, 3] does not match the expected shape [5, 3]}}
  %0:2 = aten.linalg_qr %a complete : tensor<5x3xf32> -> tensor<5x5xf32>, tensor<3x3xf32>
  func.return
}

// -----

func.func @pinv_not_transposed(%a: tensor<5x3xf32>) {
  // expected-error @+1 {{'aten.linalg_pinv' op result shape [5, 3] does not match the expected shape [3, 5]}}
  %0 = aten.linalg_pinv %a : tensor<5x3xf32> -> tensor<5x3xf32>
  func.return
}

// -----

func.func @lu_factor_pivots_shape(%a: tensor<3x5xf32>) {
  // expected-error @+1 {{'aten.linalg_lu_factor_ex' op pivots shape [3, 5] does not match the expected shape [3]}}
  %0:3 = aten.linalg_lu_factor_ex %a : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x5xi32>, tensor<i32>
  func.return
}

// -----

func.func @lu_factor_pivots_dtype(%a: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'aten.linalg_lu_factor_ex' op pivots must be i32, got i64}}
  %0:3 = aten.linalg_lu_factor_ex %a : tensor<2x4x4xf32> -> tensor<2x4x4xf32>, tensor<2x4xi64>, tensor<2xi32>
  func.return
}
