// Verifier rules of the mlx shape ops (reshape, broadcast_to, transpose, expand_dims,
// squeeze, concatenate, split, slice, pad, tile): each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Only the generic form can get the dynamic markers and the index operands out of step.
func.func @reshape_markers(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'mlx.reshape' op shape list has 1 dynamic entries but 0 index operands}}
  %0 = "mlx.reshape"(%x) <{static_shape = array<i64: -9223372036854775808>}> : (tensor<?x4xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @reshape_list_rank(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'mlx.reshape' op shape list has 2 entries but the result has rank 3}}
  %0 = mlx.reshape %x [6, 4] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @reshape_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.reshape' op shape -2 at position 0 is negative}}
  %0 = mlx.reshape %x [-2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// The result type spells every size: no -1 to infer at this level.
func.func @reshape_infer(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.reshape' op shape -1 at position 1 is negative}}
  %0 = mlx.reshape %x [1, -1] : tensor<2x3xf32> -> tensor<1x6xf32>
  func.return
}

// -----

func.func @reshape_literal(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.reshape' op shape 4 at position 1 does not match result dim 3}}
  %0 = mlx.reshape %x [2, 4] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reshape_dynamic_literal(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'mlx.reshape' op result dim 0 is dynamic but its shape is the literal 4}}
  %0 = mlx.reshape %x [4, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.reshape' op reshape changes the element count from 6 [2, 3] to 8 [2, 4]}}
  %0 = mlx.reshape %x [2, 4] : tensor<2x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @reshape_dtype(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.reshape' op result element type i32 must equal the input's f32}}
  %0 = mlx.reshape %x [6] : tensor<2x3xf32> -> tensor<6xi32>
  func.return
}

// -----

func.func @broadcast_lower_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.broadcast_to' op broadcast_to cannot lower the rank}}
  %0 = mlx.broadcast_to %x [6] : tensor<2x3xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @broadcast_dim(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{'mlx.broadcast_to' op dim 0 of size 3 cannot broadcast to 4}}
  %0 = mlx.broadcast_to %x [4, 5] : tensor<3x1xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @broadcast_dtype(%x: tensor<1xi8>) {
  // expected-error @+1 {{'mlx.broadcast_to' op result element type i1 must equal the input's i8}}
  %0 = mlx.broadcast_to %x [4] : tensor<1xi8> -> tensor<4xi1>
  func.return
}

// -----

func.func @transpose_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.transpose' op axes [0, 0] is not a permutation of [0, 2)}}
  %0 = mlx.transpose %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @transpose_short(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'mlx.transpose' op axes [1, 0] is not a permutation of [0, 3)}}
  %0 = mlx.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @transpose_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.transpose' op result shape [2, 3] does not match the expected shape [3, 2]}}
  %0 = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @transpose_dtype(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.transpose' op result element type f64 must equal the input's f32}}
  %0 = mlx.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf64>
  func.return
}

// -----

// Axes of expand_dims count in the result, which has one more dim per axis.
func.func @expand_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.expand_dims' op axis 3 is out of range for rank 3}}
  %0 = mlx.expand_dims %x [3] : tensor<2x3xf32> -> tensor<2x3x1xf32>
  func.return
}

// -----

func.func @expand_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.expand_dims' op result shape [2, 3, 1] does not match the expected shape [1, 2, 3]}}
  %0 = mlx.expand_dims %x [0] : tensor<2x3xf32> -> tensor<2x3x1xf32>
  func.return
}

// -----

func.func @expand_dtype(%x: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.expand_dims' op result element type i16 must equal the input's i32}}
  %0 = mlx.expand_dims %x [0] : tensor<3xi32> -> tensor<1x3xi16>
  func.return
}

// -----

func.func @squeeze_non_unit(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'mlx.squeeze' op cannot squeeze axis 1 of size 3}}
  %0 = mlx.squeeze %x [1] : tensor<1x3xf32> -> tensor<1xf32>
  func.return
}

// -----

// MLX gives a 0-d array no axes, neither 0 nor -1.
func.func @squeeze_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'mlx.squeeze' op axis -1 is out of range for rank 0}}
  %0 = mlx.squeeze %x [-1] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @squeeze_shape(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'mlx.squeeze' op result shape [1, 3] does not match the expected shape [3]}}
  %0 = mlx.squeeze %x [0] : tensor<1x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

func.func @squeeze_dtype(%x: tensor<1x3xi32>) {
  // expected-error @+1 {{'mlx.squeeze' op result element type ui32 must equal the input's i32}}
  %0 = mlx.squeeze %x [0] : tensor<1x3xi32> -> tensor<3xui32>
  func.return
}

// -----

func.func @concatenate_nothing() {
  // expected-error @+1 {{'mlx.concatenate' op expects at least one input}}
  %0 = "mlx.concatenate"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  func.return
}

// -----

func.func @concatenate_dtype(%a: tensor<2xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'mlx.concatenate' op inputs and result must share one element type, got f32, f16, f32}}
  %0 = mlx.concatenate %a, %b axis 0 : tensor<2xf32>, tensor<3xf16> -> tensor<5xf32>
  func.return
}

// -----

func.func @concatenate_rank(%a: tensor<2x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.concatenate' op inputs must have equal rank}}
  %0 = mlx.concatenate %a, %b axis 0 : tensor<2x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @concatenate_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'mlx.concatenate' op axis 2 is out of range for rank 2}}
  %0 = mlx.concatenate %a, %a axis 2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @concatenate_other_dims(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'mlx.concatenate' op inputs differ in axis 1 (5 vs 4), which is not the concat axis}}
  %0 = mlx.concatenate %a, %b axis 0 : tensor<2x4xf32>, tensor<3x5xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @concatenate_shape(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.concatenate' op result shape [6, 4] does not match the expected shape [5, 4]}}
  %0 = mlx.concatenate %a, %b axis 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @split_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.split' op axis 1 is out of range for rank 1}}
  %0:2 = mlx.split %x at [4] axis 1 : tensor<8xf32> -> tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

func.func @split_unsorted(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.split' op split points [6, 2] must be non-negative and sorted}}
  %0:3 = mlx.split %x at [6, 2] axis 0 : tensor<8xf32> -> tensor<6xf32>, tensor<0xf32>, tensor<6xf32>
  func.return
}

// -----

func.func @split_negative(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.split' op split points [-1] must be non-negative and sorted}}
  %0:2 = mlx.split %x at [-1] axis 0 : tensor<8xf32> -> tensor<7xf32>, tensor<1xf32>
  func.return
}

// -----

func.func @split_count(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.split' op 2 split points give 3 results, not 2}}
  %0:2 = mlx.split %x at [2, 4] axis 0 : tensor<8xf32> -> tensor<2xf32>, tensor<6xf32>
  func.return
}

// -----

func.func @split_shape(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'mlx.split' op result #1 shape [3, 4] does not match the expected shape [2, 4]}}
  %0:3 = mlx.split %x at [2, 4] axis 0 : tensor<8x4xf32> -> tensor<2x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>
  func.return
}

// -----

// Split points clamp to the axis size (MLX follows NumPy): the pieces are 2, 2 and 0.
func.func @split_clamped_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.split' op result #1 shape [4] does not match the expected shape [2]}}
  %0:3 = mlx.split %x at [2, 6] axis 0 : tensor<4xf32> -> tensor<2xf32>, tensor<4xf32>, tensor<0xf32>
  func.return
}

// -----

func.func @split_dtype(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.split' op result element type f16 must equal the input's f32}}
  %0:2 = mlx.split %x at [4] axis 0 : tensor<8xf32> -> tensor<4xf32>, tensor<4xf16>
  func.return
}

// -----

func.func @slice_entries(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.slice' op start, stop and step need one entry per axis (2), got 1, 2, 2}}
  %0 = mlx.slice %x [0] to [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_markers(%x: tensor<8xf32>, %n: index) {
  // expected-error @+1 {{'mlx.slice' op dynamic bounds do not match their index operands}}
  %0 = "mlx.slice"(%x, %n) <{static_start = array<i64: 0>, static_stop = array<i64: -9223372036854775808>, strides = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<8xf32>, index) -> tensor<?xf32>
  func.return
}

// -----

func.func @slice_zero_step(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.slice' op step must be non-zero}}
  %0 = mlx.slice %x [0] to [8] step [0] : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

// x[1:8:3] has 3 elements (1, 4, 7).
func.func @slice_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.slice' op result shape [2] does not match the expected shape [3]}}
  %0 = mlx.slice %x [1] to [8] step [3] : tensor<8xf32> -> tensor<2xf32>
  func.return
}

// -----

// x[-1:-9:-1] reverses all 8 elements; x[2:100] clamps to 6.
func.func @slice_negative_step_and_clamp(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'mlx.slice' op result shape [8, 7] does not match the expected shape [8, 6]}}
  %0 = mlx.slice %x [-1, 2] to [-9, 100] step [-1, 1] : tensor<8x8xf32> -> tensor<8x7xf32>
  func.return
}

// -----

func.func @slice_dtype(%x: tensor<8xf32>) {
  // expected-error @+1 {{'mlx.slice' op result element type bf16 must equal the input's f32}}
  %0 = mlx.slice %x [0] to [8] step [1] : tensor<8xf32> -> tensor<8xbf16>
  func.return
}

// -----

func.func @pad_entries(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.pad' op low and high need 2 entries each}}
  %0 = mlx.pad %x low [1] high [1, 1] value 0.000000e+00 : tensor<2x3xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.pad' op pad widths must be non-negative}}
  %0 = mlx.pad %x low [0, -1] high [0, 0] value 0.000000e+00 : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @pad_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.pad' op result shape [4, 3] does not match the expected shape [4, 5]}}
  %0 = mlx.pad %x low [1, 1] high [1, 1] value 0.000000e+00 : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @pad_dtype(%x: tensor<2xi32>) {
  // expected-error @+1 {{'mlx.pad' op result element type i64 must equal the input's i32}}
  %0 = mlx.pad %x low [1] high [1] value 0.000000e+00 : tensor<2xi32> -> tensor<4xi64>
  func.return
}

// -----

func.func @tile_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.tile' op reps must be non-negative}}
  %0 = mlx.tile %x [1, -2] : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

// Reps longer than the rank prepend dims, as in numpy.tile.
func.func @tile_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mlx.tile' op result shape [2, 6] does not match the expected shape [2, 2, 6]}}
  %0 = mlx.tile %x [2, 1, 2] : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @tile_dtype(%x: tensor<3xbf16>) {
  // expected-error @+1 {{'mlx.tile' op result element type f16 must equal the input's bf16}}
  %0 = mlx.tile %x [2] : tensor<3xbf16> -> tensor<6xf16>
  func.return
}

// -----

func.func @diagonal_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'mlx.diagonal' op input must have rank >= 2, got 1}}
  %0 = mlx.diagonal %x offset 0 axes 0, 1 : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @diagonal_same_axes(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.diagonal' op dims [1, 1] repeat an axis}}
  %0 = mlx.diagonal %x offset 0 axes 1, 1 : tensor<3x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @diagonal_length(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.diagonal' op result shape [2] does not match the expected shape [3]}}
  %0 = mlx.diagonal %x offset -1 axes 1, 0 : tensor<3x4xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @diagonal_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'mlx.diagonal' op result element type must equal the input's}}
  %0 = mlx.diagonal %x offset 0 axes 0, 1 : tensor<3x4xf32> -> tensor<3xi1>
  func.return
}
