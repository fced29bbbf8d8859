// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the indexing ops and checks its message.

func.func @index_count(%x: tensor<6x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'aten.index' op 2 index tensors but 1 indexed dims}}
  %0 = aten.index %x[%i, %i] at [0] : tensor<6x4xf32>, (tensor<3xi64>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @index_order(%x: tensor<6x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'aten.index' op indexed dims [1, 0] must be increasing and within [0, 2)}}
  %0 = aten.index %x[%i, %i] at [1, 0] : tensor<6x4xf32>, (tensor<3xi64>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @index_range(%x: tensor<6x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'aten.index' op indexed dims [2] must be increasing and within [0, 2)}}
  %0 = aten.index %x[%i] at [2] : tensor<6x4xf32>, (tensor<3xi64>) -> tensor<6x4x3xf32>
  func.return
}

// -----

func.func @index_dtype(%x: tensor<6x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'aten.index' op index tensors must be integer or bool, got f32}}
  %0 = aten.index %x[%i] at [0] : tensor<6x4xf32>, (tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @index_none(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.index' op expects at least one index tensor}}
  %0 = aten.index %x[] at [] : tensor<6x4xf32>, () -> tensor<6x4xf32>
  func.return
}

// -----

func.func @index_put_dims(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'aten.index_put' op 1 index tensors but 2 indexed dims}}
  %0 = aten.index_put %x[%i] at [0, 1], %v : tensor<6x4xf32>, (tensor<3xi64>), tensor<3xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @index_put_shape(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %v: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.index_put' op result shape [3, 4] does not match operand shape [6, 4]}}
  %0 = aten.index_put %x[%i] at [0], %v accumulate : tensor<6x4xf32>, (tensor<3xi64>), tensor<3x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @index_select_dtype(%x: tensor<6x4xf32>, %i: tensor<3xi1>) {
  // expected-error @+1 {{'aten.index_select' op index must have integer (not bool) element type, got i1}}
  %0 = aten.index_select %x, %i dim 0 : tensor<6x4xf32>, tensor<3xi1> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @index_select_rank(%x: tensor<6x4xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+1 {{'aten.index_select' op index must be 0-d or 1-D, got rank 2}}
  %0 = aten.index_select %x, %i dim 0 : tensor<6x4xf32>, tensor<3x1xi64> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @index_select_shape(%x: tensor<6x4xf32>, %i: tensor<?xi64>) {
  // expected-error @+1 {{'aten.index_select' op result shape [5, ?] does not match the expected shape [6, ?]}}
  %0 = aten.index_select %x, %i dim 1 : tensor<6x4xf32>, tensor<?xi64> -> tensor<5x?xf32>
  func.return
}

// -----

func.func @index_select_dim(%x: tensor<6x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'aten.index_select' op dim 2 is out of range for rank 2}}
  %0 = aten.index_select %x, %i dim 2 : tensor<6x4xf32>, tensor<3xi64> -> tensor<6x3xf32>
  func.return
}

// -----

func.func @index_copy_dim(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.index_copy' op dim -3 is out of range for rank 2}}
  %0 = aten.index_copy %x, %i, %s dim -3 : tensor<6x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @index_copy_dtype(%x: tensor<6x4xf32>, %i: tensor<3xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.index_copy' op index must have integer (not bool) element type, got f32}}
  %0 = aten.index_copy %x, %i, %s dim 0 : tensor<6x4xf32>, tensor<3xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @index_copy_shape(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.index_copy' op result shape [6, 5] does not match operand shape [6, 4]}}
  %0 = aten.index_copy %x, %i, %s dim 0 : tensor<6x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<6x5xf32>
  func.return
}

// -----

func.func @index_copy_source(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %s: tensor<12xf32>) {
  // expected-error @+1 {{'aten.index_copy' op source must have the input's rank}}
  %0 = aten.index_copy %x, %i, %s dim 0 : tensor<6x4xf32>, tensor<3xi64>, tensor<12xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @embedding_weight(%w: tensor<2x10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'aten.embedding' op weight must be 2-D, got rank 3}}
  %0 = aten.embedding %w, %i : tensor<2x10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @embedding_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'aten.embedding' op indices must have integer (not bool) element type, got f32}}
  %0 = aten.embedding %w, %i : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @embedding_shape(%w: tensor<10x4xf32>, %i: tensor<2x?xi64>) {
  // expected-error @+1 {{'aten.embedding' op result shape [2, ?, 10] does not match the expected shape [2, ?, 4]}}
  %0 = aten.embedding %w, %i : tensor<10x4xf32>, tensor<2x?xi64> -> tensor<2x?x10xf32>
  func.return
}

// -----

func.func @gather_dim(%x: tensor<6x4xf32>, %i: tensor<6x2xi64>) {
  // expected-error @+1 {{'aten.gather' op dim 2 is out of range for rank 2}}
  %0 = aten.gather %x, %i dim 2 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
  func.return
}

// -----

func.func @gather_dtype(%x: tensor<6x4xf32>, %i: tensor<6x2xi1>) {
  // expected-error @+1 {{'aten.gather' op index must have integer (not bool) element type, got i1}}
  %0 = aten.gather %x, %i dim 1 : tensor<6x4xf32>, tensor<6x2xi1> -> tensor<6x2xf32>
  func.return
}

// -----

func.func @gather_rank(%x: tensor<6x4xf32>, %i: tensor<6xi64>) {
  // expected-error @+1 {{'aten.gather' op index must have the input's rank}}
  %0 = aten.gather %x, %i dim 0 : tensor<6x4xf32>, tensor<6xi64> -> tensor<6xf32>
  func.return
}

// -----

func.func @gather_shape(%x: tensor<6x4xf32>, %i: tensor<6x2xi64>) {
  // expected-error @+1 {{'aten.gather' op result shape [6, 4] does not match the expected shape [6, 2]}}
  %0 = aten.gather %x, %i dim 1 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @masked_fill_mask(%x: tensor<6x4xf32>, %m: tensor<6x4xf32>, %v: f64) {
  // expected-error @+1 {{'aten.masked_fill' op mask must have bool element type, got f32}}
  %0 = aten.masked_fill %x, %m, %v : tensor<6x4xf32>, tensor<6x4xf32>, f64 -> tensor<6x4xf32>
  func.return
}

// -----

func.func @masked_fill_value(%x: tensor<6x4xf32>, %m: tensor<6x4xi1>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'aten.masked_fill' op a tensor fill value must be 0-d}}
  %0 = aten.masked_fill %x, %m, %v : tensor<6x4xf32>, tensor<6x4xi1>, tensor<4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @masked_fill_broadcast(%x: tensor<6x4xf32>, %m: tensor<4x4xi1>, %v: f64) {
  // expected-error @+1 {{'aten.masked_fill' op operand shapes [6, 4], [4, 4] are not broadcastable}}
  %0 = aten.masked_fill %x, %m, %v : tensor<6x4xf32>, tensor<4x4xi1>, f64 -> tensor<6x4xf32>
  func.return
}

// -----

func.func @masked_fill_result(%x: tensor<4xf32>, %m: tensor<3x1xi1>, %v: f64) {
  // expected-error @+1 {{'aten.masked_fill' op result shape [4] is not the broadcast shape [3, 4] of the operands}}
  %0 = aten.masked_fill %x, %m, %v : tensor<4xf32>, tensor<3x1xi1>, f64 -> tensor<4xf32>
  func.return
}

// -----

func.func @masked_fill_dtype(%x: tensor<6x4xf32>, %m: tensor<6x4xi1>, %v: f64) {
  // expected-error @+1 {{'aten.masked_fill' op result element type must equal the input's}}
  %0 = aten.masked_fill %x, %m, %v : tensor<6x4xf32>, tensor<6x4xi1>, f64 -> tensor<6x4xf16>
  func.return
}

// -----

func.func @nonzero_rank(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.nonzero' op result must be rank 2 [count, 2], got rank 1}}
  %0 = aten.nonzero %x : tensor<4x3xf32> -> tensor<?xi64>
  func.return
}

// -----

func.func @nonzero_columns(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.nonzero' op result's second dim must be the input's rank 2, got 3}}
  %0 = aten.nonzero %x : tensor<4x3xf32> -> tensor<?x3xi64>
  func.return
}

// -----

func.func @nonzero_dtype(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.nonzero' op result must have i64 element type, got i32}}
  %0 = aten.nonzero %x : tensor<4x3xf32> -> tensor<?x2xi32>
  func.return
}

// -----

func.func @unique_output(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.unique' op output must be rank 1 of the input's element type f32, got [?] of f16}}
  %0, %1, %2 = aten.unique %x : tensor<4x3xf32> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
  func.return
}

// -----

func.func @unique_inverse_shape(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.unique' op inverse shape [0] does not match the expected shape [4, 3]}}
  %0, %1, %2 = aten.unique %x return_inverse : tensor<4x3xf32> -> tensor<?xf32>, tensor<0xi64>, tensor<0xi64>
  func.return
}

// -----

func.func @unique_counts_dtype(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'aten.unique' op counts must have i64 element type, got i32}}
  %0, %1, %2 = aten.unique %x return_counts : tensor<4x3xf32> -> tensor<?xf32>, tensor<0xi64>, tensor<?xi32>
  func.return
}

// -----

func.func @repeat_interleave_rank(%r: tensor<2x3xi64>) {
  // expected-error @+1 {{'aten.repeat_interleave' op repeats must be rank 1, got rank 2}}
  %0 = aten.repeat_interleave %r : tensor<2x3xi64> -> tensor<?xi64>
  func.return
}

// -----

func.func @repeat_interleave_dtype(%r: tensor<3xi64>) {
  // expected-error @+1 {{'aten.repeat_interleave' op result must be rank 1 of the repeats' element type i64, got [?] of i32}}
  %0 = aten.repeat_interleave %r : tensor<3xi64> -> tensor<?xi32>
  func.return
}

// -----

func.func @item_elements(%n: tensor<2xi64>) {
  // expected-error @+1 {{'aten.item' op input must hold one element, got shape [2]}}
  %0 = aten.item %n : tensor<2xi64>
  func.return
}

// -----

func.func @item_float(%n: tensor<f32>) {
  // expected-error @+1 {{'aten.item' op input must have integer or bool element type, got f32}}
  %0 = aten.item %n : tensor<f32>
  func.return
}
