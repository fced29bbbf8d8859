// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the shape ops and checks its message: size lists,
// expand, permutations, squeezes, ranges, joins, splits, repeats and padding.

func.func @view_markers(%x: tensor<2x3xf32>, %n: index) {
  // expected-error @+1 {{'aten.view' op size list has 1 dynamic entries but 0 index operands}}
  %0 = "aten.view"(%x) <{static_sizes = array<i64: -9223372036854775808, 3>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @view_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.view' op size list has 2 entries but the result has rank 1}}
  %0 = aten.view %x [2, 3] : tensor<2x3xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @view_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.view' op size -2 at position 0 is negative}}
  %0 = aten.view %x [-2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @view_size_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.view' op size 4 at position 1 does not match result dim 2}}
  %0 = aten.view %x [3, 4] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @view_literal_for_dynamic(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.view' op result dim 0 is dynamic but its size is the literal 2}}
  %0 = aten.view %x [2, 3] : tensor<2x3xf32> -> tensor<?x3xf32>
  func.return
}

// -----

func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.reshape' op at most one size may be -1 (inferred)}}
  %0 = aten.reshape %x [-1, -1] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.reshape' op reshape changes the element count from 6 [2, 3] to 8 [8]}}
  %0 = aten.reshape %x [8] : tensor<2x3xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @reshape_dtype(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.reshape' op result element type must equal the input's}}
  %0 = aten.reshape %x [6] : tensor<2x3xf32> -> tensor<6xf16>
  func.return
}

// -----

func.func @expand_lower_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.expand' op expand cannot lower the rank from 2 to 1}}
  %0 = aten.expand %x [6] : tensor<2x3xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @expand_kept_dim_changes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.expand' op dim 1 kept by -1 changes from 3 to 4}}
  %0 = aten.expand %x [-1, -1] : tensor<2x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @expand_non_one(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{'aten.expand' op input dim 0 of size 2 is not 1 and cannot expand to 4}}
  %0 = aten.expand %x [4, 3] : tensor<2x1xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @expand_new_dim_kept(%x: tensor<3xf32>) {
  // expected-error @+1 {{'aten.expand' op a new leading dim cannot be -1}}
  %0 = aten.expand %x [-1, 3] : tensor<3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @expand_sizes(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{'aten.expand' op size 5 at position 1 does not match result dim 4}}
  %0 = aten.expand %x [-1, 5] : tensor<3x1xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @permute_repeat(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'aten.permute' op dims [0, 0, 2] is not a permutation of [0, 3)}}
  %0 = aten.permute %x [0, 0, 2] : tensor<2x3x4xf32> -> tensor<2x2x4xf32>
  func.return
}

// -----

func.func @permute_short(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'aten.permute' op dims [1, 0] is not a permutation of [0, 3)}}
  %0 = aten.permute %x [1, -3] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @permute_range(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'aten.permute' op dim 3 is out of range for rank 3}}
  %0 = aten.permute %x [0, 1, 3] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @permute_shape(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'aten.permute' op result shape [2, 3, 4] does not match the expected shape [2, 4, 3]}}
  %0 = aten.permute %x [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @transpose_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.transpose' op dim 2 is out of range for rank 2}}
  %0 = aten.transpose %x dims 0, 2 : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @transpose_shape(%x: tensor<2x?x4xf32>) {
  // expected-error @+1 {{'aten.transpose' op result shape [?, 2, 4] does not match the expected shape [4, ?, 2]}}
  %0 = aten.transpose %x dims -1, 0 : tensor<2x?x4xf32> -> tensor<?x2x4xf32>
  func.return
}

// -----

func.func @unsqueeze_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.unsqueeze' op dim 3 is out of range for rank 3}}
  %0 = aten.unsqueeze %x dim 3 : tensor<2x3xf32> -> tensor<2x3x1xf32>
  func.return
}

// -----

func.func @unsqueeze_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.unsqueeze' op result shape [2, 1, 3] does not match the expected shape [2, 3, 1]}}
  %0 = aten.unsqueeze %x dim -1 : tensor<2x3xf32> -> tensor<2x1x3xf32>
  func.return
}

// -----

func.func @squeeze_listed(%x: tensor<2x1x3xf32>) {
  // expected-error @+1 {{'aten.squeeze' op result rank 3 is inconsistent with squeezing dims [1] of [2, 1, 3]}}
  %0 = aten.squeeze %x dims [1] : tensor<2x1x3xf32> -> tensor<2x1x3xf32>
  func.return
}

// -----

func.func @squeeze_all(%x: tensor<1x?x1xf32>) {
  // expected-error @+1 {{'aten.squeeze' op result rank 3 is inconsistent with squeezing dims [0, 1, 2] of [1, ?, 1]}}
  %0 = aten.squeeze %x : tensor<1x?x1xf32> -> tensor<1x?x1xf32>
  func.return
}

// -----

func.func @squeeze_repeat(%x: tensor<2x1x3xf32>) {
  // expected-error @+1 {{'aten.squeeze' op dims [1, -2] repeat an axis}}
  %0 = aten.squeeze %x dims [1, -2] : tensor<2x1x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @slice_two_bounds(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.slice' op the range must be [start, end, step], got 2 entries}}
  %0 = aten.slice %x dim 0 [0, 2] : tensor<6x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @slice_markers(%x: tensor<6x4xf32>, %n: index) {
  // expected-error @+1 {{'aten.slice' op the range's dynamic entries do not match its index operands}}
  %0 = "aten.slice"(%x, %n) <{dim = 0 : i64, static_bounds = array<i64: -9223372036854775808, -9223372036854775808, 1>}> : (tensor<6x4xf32>, index) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @slice_step(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.slice' op step must be positive, got 0}}
  %0 = aten.slice %x dim 0 [0, 6, 0] : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @slice_shape(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.slice' op result shape [6, 1] does not match the expected shape [6, 2]}}
  %0 = aten.slice %x dim 1 [-3, 9223372036854775807, 2] : tensor<6x4xf32> -> tensor<6x1xf32>
  func.return
}

// -----

func.func @slice_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.slice' op input must have rank >= 1, got 0}}
  %0 = aten.slice %x dim 0 [0, 1, 1] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @slice_dim(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.slice' op dim -3 is out of range for rank 2}}
  %0 = aten.slice %x dim -3 [0, 1, 1] : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_outside_dim(%x: tensor<6x4xf32>, %s: tensor<3x5xf32>) {
  // expected-error @+1 {{'aten.slice_scatter' op src shape [3, 5] must match input shape [6, 4] outside dim 0}}
  %0 = aten.slice_scatter %x, %s dim 0 [0, 6, 2] : tensor<6x4xf32>, tensor<3x5xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_slice_length(%x: tensor<6x4xf32>, %s: tensor<2x4xf32>) {
  // expected-error @+1 {{'aten.slice_scatter' op src shape [2, 4] does not match the expected shape [3, 4]}}
  %0 = aten.slice_scatter %x, %s dim 0 [0, 6, 2] : tensor<6x4xf32>, tensor<2x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_result(%x: tensor<6x4xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.slice_scatter' op result shape [3, 4] does not match operand shape [6, 4]}}
  %0 = aten.slice_scatter %x, %s dim 0 [0, 6, 2] : tensor<6x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @scatter_step(%x: tensor<6x4xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.slice_scatter' op step must be positive, got -1}}
  %0 = aten.slice_scatter %x, %s dim 0 [0, 6, -1] : tensor<6x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.slice_scatter' op input must have rank >= 1, got 0}}
  %0 = aten.slice_scatter %x, %x dim 0 [0, 1, 1] : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @select_two_indices(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.select' op index must be exactly one integer or index value}}
  %0 = aten.select %x dim 0 index [1, 2] : tensor<6x4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @select_range(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.select' op index -5 is out of range for dim of size 4}}
  %0 = aten.select %x dim 1 index [-5] : tensor<6x4xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @select_shape(%x: tensor<6x4xf32>, %i: index) {
  // expected-error @+1 {{'aten.select' op result shape [6] does not match the expected shape [4]}}
  %0 = aten.select %x dim 0 index [%i] : tensor<6x4xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @select_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.select' op input must have rank >= 1, got 0}}
  %0 = aten.select %x dim 0 index [0] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @narrow_entries(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.narrow' op narrow takes [start, length]}}
  %0 = aten.narrow %x dim 0 [0, 2, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @narrow_negative_length(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.narrow' op length must be non-negative, got -1}}
  %0 = aten.narrow %x dim 0 [0, -1] : tensor<6x4xf32> -> tensor<0x4xf32>
  func.return
}

// -----

func.func @narrow_past_end(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.narrow' op start 4 and length 3 do not fit in the dim of size 6}}
  %0 = aten.narrow %x dim 0 [4, 3] : tensor<6x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @narrow_before_start(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.narrow' op start -7 and length 1 do not fit in the dim of size 6}}
  %0 = aten.narrow %x dim 0 [-7, 1] : tensor<6x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

func.func @narrow_shape(%x: tensor<6x?xf32>, %i: index) {
  // expected-error @+1 {{'aten.narrow' op result shape [6, 3] does not match the expected shape [6, 2]}}
  %0 = aten.narrow %x dim 1 [%i, 2] : tensor<6x?xf32> -> tensor<6x3xf32>
  func.return
}

// -----

func.func @narrow_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.narrow' op input must have rank >= 1, got 0}}
  %0 = aten.narrow %x dim 0 [0, 1] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @cat_empty() {
  // expected-error @+1 {{'aten.cat' op expects at least one input}}
  %0 = aten.cat dim 0 : -> tensor<2xf32>
  func.return
}

// -----

func.func @cat_dtypes(%x: tensor<2xf32>, %y: tensor<2xf16>) {
  // expected-error @+1 {{'aten.cat' op inputs must share one element type}}
  %0 = aten.cat %x, %y dim 0 : tensor<2xf32>, tensor<2xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @cat_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.cat' op 0-d inputs cannot be concatenated}}
  %0 = aten.cat %x, %x dim 0 : tensor<f32>, tensor<f32> -> tensor<2xf32>
  func.return
}

// -----

func.func @cat_rank(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'aten.cat' op inputs must have equal rank}}
  %0 = aten.cat %x, %y dim 0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  func.return
}

// -----

func.func @cat_other_dim(%x: tensor<2x3xf32>, %y: tensor<2x2xf32>) {
  // expected-error @+1 {{'aten.cat' op inputs differ in dim 1 (2 vs 3), which is not the cat dim}}
  %0 = aten.cat %x, %y dim 0 : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @cat_shape(%x: tensor<2x3xf32>, %y: tensor<2x?xf32>) {
  // expected-error @+1 {{'aten.cat' op result shape [3, ?] does not match the expected shape [2, ?]}}
  %0 = aten.cat %x, %y dim -1 : tensor<2x3xf32>, tensor<2x?xf32> -> tensor<3x?xf32>
  func.return
}

// -----

func.func @cat_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.cat' op dim 2 is out of range for rank 2}}
  %0 = aten.cat %x, %x dim 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @stack_empty() {
  // expected-error @+1 {{'aten.stack' op expects at least one input}}
  %0 = aten.stack dim 0 : -> tensor<0xf32>
  func.return
}

// -----

func.func @stack_dtypes(%x: tensor<2xf32>, %y: tensor<2xi32>) {
  // expected-error @+1 {{'aten.stack' op inputs must share one element type}}
  %0 = aten.stack %x, %y dim 0 : tensor<2xf32>, tensor<2xi32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @stack_shapes(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) {
  // expected-error @+1 {{'aten.stack' op inputs must have equal shapes}}
  %0 = aten.stack %x, %y dim 0 : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2x3xf32>
  func.return
}

// -----

func.func @stack_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.stack' op result shape [3, 2, 3] does not match the expected shape [2, 3, 3]}}
  %0 = aten.stack %x, %x, %x dim -1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<3x2x3xf32>
  func.return
}

// -----

func.func @stack_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.stack' op dim 3 is out of range for rank 3}}
  %0 = aten.stack %x dim 3 : tensor<2x3xf32> -> tensor<2x3x1xf32>
  func.return
}

// -----

func.func @split_sizes_count(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split_with_sizes' op 3 split sizes but 2 results}}
  %0, %1 = aten.split_with_sizes %x [1, 2, 3] dim 0 : tensor<6x4xf32> -> tensor<1x4xf32>, tensor<5x4xf32>
  func.return
}

// -----

func.func @split_sizes_sum(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split_with_sizes' op split sizes [1, 2] do not sum to the dim size 6}}
  %0, %1 = aten.split_with_sizes %x [1, 2] dim 0 : tensor<6x4xf32> -> tensor<1x4xf32>, tensor<2x4xf32>
  func.return
}

// -----

func.func @split_sizes_shape(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split_with_sizes' op result shape [2, 6] does not match the expected shape [6, 2]}}
  %0, %1 = aten.split_with_sizes %x [2, 2] dim 1 : tensor<6x4xf32> -> tensor<6x2xf32>, tensor<2x6xf32>
  func.return
}

// -----

func.func @split_sizes_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.split_with_sizes' op input must have rank >= 1, got 0}}
  %0 = aten.split_with_sizes %x [1] dim 0 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @split_size_zero(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split' op split_size must be positive, got 0}}
  %0 = aten.split %x size 0 dim 0 : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @split_count(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split' op splitting 6 by 4 gives 2 results, not 3}}
  %0, %1, %2 = aten.split %x size 4 dim 0 : tensor<6x4xf32> -> tensor<4x4xf32>, tensor<2x4xf32>, tensor<0x4xf32>
  func.return
}

// -----

func.func @split_last_chunk(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'aten.split' op result 1 shape [4, 4] does not match the expected shape [2, 4]}}
  %0, %1 = aten.split %x size 4 dim 0 : tensor<6x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  func.return
}

// -----

func.func @split_dynamic_chunk(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'aten.split' op result 1 shape [?, 5] does not match the expected shape [?, 4]}}
  %0, %1 = aten.split %x size 2 dim 0 : tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x5xf32>
  func.return
}

// -----

func.func @split_0d(%x: tensor<f32>) {
  // expected-error @+1 {{'aten.split' op input must have rank >= 1, got 0}}
  %0 = aten.split %x size 1 dim 0 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @flip_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.flip' op dims [0, -2] repeat an axis}}
  %0 = aten.flip %x [0, -2] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @flip_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.flip' op result shape [3, 2] does not match operand shape [2, 3]}}
  %0 = aten.flip %x [1] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @repeat_short(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.repeat' op repeats has 1 entries, fewer than the input rank 2}}
  %0 = aten.repeat %x [2] : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @repeat_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.repeat' op repeats must be non-negative}}
  %0 = aten.repeat %x [1, -1] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @repeat_shape(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{'aten.repeat' op result shape [3, 2, ?] does not match the expected shape [3, 4, ?]}}
  %0 = aten.repeat %x [3, 2, 1] : tensor<2x?xf32> -> tensor<3x2x?xf32>
  func.return
}

// -----

func.func @pad_odd(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.constant_pad_nd' op pad must hold (before, after) pairs for at most 2 dims, got 3 entries}}
  %0 = aten.constant_pad_nd %x [1, 1, 1] : tensor<2x3xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @pad_too_long(%x: tensor<3xf32>) {
  // expected-error @+1 {{'aten.constant_pad_nd' op pad must hold (before, after) pairs for at most 1 dims, got 4 entries}}
  %0 = aten.constant_pad_nd %x [1, 1, 1, 1] : tensor<3xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @pad_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'aten.constant_pad_nd' op result shape [3, 4] does not match the expected shape [4, 4]}}
  %0 = aten.constant_pad_nd %x [0, 1, 2, 0] value 1.000000e+00 : tensor<2x3xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @diagonal_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'aten.diagonal' op input must have rank >= 2, got 1}}
  %0 = aten.diagonal %x offset 0 dims 0, 1 : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @diagonal_same_dims(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.diagonal' op dims [0, -2] repeat an axis}}
  %0 = aten.diagonal %x offset 0 dims 0, -2 : tensor<3x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @diagonal_dim_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.diagonal' op dim 2 is out of range for rank 2}}
  %0 = aten.diagonal %x offset 0 dims 0, 2 : tensor<3x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @diagonal_length(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.diagonal' op result shape [3] does not match the expected shape [2]}}
  %0 = aten.diagonal %x offset 2 dims 0, 1 : tensor<3x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @diagonal_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.diagonal' op result element type must equal the input's}}
  %0 = aten.diagonal %x offset 0 dims 0, 1 : tensor<3x4xf32> -> tensor<3xf16>
  func.return
}
