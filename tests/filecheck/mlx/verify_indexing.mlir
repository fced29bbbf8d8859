// Verifier rules of the mlx indexing ops (take, take_along_axis, gather, scatter,
// slice_update, dynamic_slice_update): each chunk breaks exactly one rule.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics

func.func @take_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'mlx.take' op indices must be integer, got f32}}
  %0 = mlx.take %x, %i axis 0 : tensor<4x8xf32>, tensor<3xf32> -> tensor<3x8xf32>
  func.return
}

// -----

// A boolean mask is not an index tensor at this level.
func.func @take_bool_indices(%x: tensor<4x8xf32>, %i: tensor<3xi1>) {
  // expected-error @+1 {{'mlx.take' op indices must be integer, got i1}}
  %0 = mlx.take %x, %i axis 0 : tensor<4x8xf32>, tensor<3xi1> -> tensor<3x8xf32>
  func.return
}

// -----

func.func @take_axis_range(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.take' op axis 2 is out of range for rank 2}}
  %0 = mlx.take %x, %i axis 2 : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  func.return
}

// -----

// The index dims replace the axis in place.
func.func @take_shape(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.take' op result shape [3, 8] does not match the expected shape [4, 3]}}
  %0 = mlx.take %x, %i axis 1 : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  func.return
}

// -----

// Without an axis, take reads the flattened input: the result has the indices' shape.
func.func @take_flat_shape(%x: tensor<4x8xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'mlx.take' op result shape [2, 8] does not match the expected shape [2]}}
  %0 = mlx.take %x, %i : tensor<4x8xf32>, tensor<2xi32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @take_dtype(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.take' op result element type f16 must equal the input's f32}}
  %0 = mlx.take %x, %i axis 0 : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf16>
  func.return
}

// -----

func.func @take_along_rank(%x: tensor<4x8xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op indices must have the input's rank}}
  %0 = mlx.take_along_axis %x, %i axis 1 : tensor<4x8xf32>, tensor<4xi32> -> tensor<4xf32>
  func.return
}

// -----

func.func @take_along_axis_range(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op axis -3 is out of range for rank 2}}
  %0 = mlx.take_along_axis %x, %i axis -3 : tensor<4x8xf32>, tensor<4x1xi32> -> tensor<4x1xf32>
  func.return
}

// -----

// Outside the axis, the indices broadcast against the input (as MLX requires).
func.func @take_along_broadcast(%x: tensor<4x8xf32>, %i: tensor<1x2xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op operand shapes [1, 8], [1, 2] are not broadcastable}}
  %0 = mlx.take_along_axis %x, %i axis 0 : tensor<4x8xf32>, tensor<1x2xi32> -> tensor<1x2xf32>
  func.return
}

// -----

func.func @take_along_shape(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op result shape [4, 2] does not match the expected shape [4, 1]}}
  %0 = mlx.take_along_axis %x, %i axis 1 : tensor<4x8xf32>, tensor<4x1xi32> -> tensor<4x2xf32>
  func.return
}

// -----

func.func @take_along_dtype(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'mlx.take_along_axis' op result element type i32 must equal the input's f32}}
  %0 = mlx.take_along_axis %x, %i axis 1 : tensor<4x8xf32>, tensor<4x1xi32> -> tensor<4x1xi32>
  func.return
}

// -----

func.func @gather_axes_count(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op 1 index tensors but 2 axes}}
  %0 = mlx.gather %x[%i] axes [0, 1] slice_sizes [1, 1] : tensor<4x8xf32>, (tensor<3xi32>) -> tensor<3x1x1xf32>
  func.return
}

// -----

func.func @gather_axes_repeat(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op axes [1, -1] repeat an axis}}
  %0 = mlx.gather %x[%i, %i] axes [1, -1] slice_sizes [4, 1] : tensor<4x8xf32>, (tensor<3xi32>, tensor<3xi32>) -> tensor<3x4x1xf32>
  func.return
}

// -----

func.func @gather_index_typed_indices(%x: tensor<4x8xf32>, %i: tensor<3xindex>) {
  // expected-error @+1 {{'mlx.gather' op indices must be integer, got index}}
  %0 = mlx.gather %x[%i] axes [0] slice_sizes [1, 8] : tensor<4x8xf32>, (tensor<3xindex>) -> tensor<3x1x8xf32>
  func.return
}

// -----

func.func @gather_indices_broadcast(%x: tensor<4x8xf32>, %i: tensor<3xi32>, %j: tensor<2xi32>) {
  // expected-error @+1 {{'mlx.gather' op operand shapes [3], [2] are not broadcastable}}
  %0 = mlx.gather %x[%i, %j] axes [0, 1] slice_sizes [1, 1] : tensor<4x8xf32>, (tensor<3xi32>, tensor<2xi32>) -> tensor<3x1x1xf32>
  func.return
}

// -----

func.func @gather_slice_sizes_count(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op slice_sizes has 1 entries but the input has rank 2}}
  %0 = mlx.gather %x[%i] axes [0] slice_sizes [1] : tensor<4x8xf32>, (tensor<3xi32>) -> tensor<3x1xf32>
  func.return
}

// -----

// Only the generic form can get the dynamic markers and the index operands out of step.
func.func @gather_slice_sizes_markers(%x: tensor<?x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op slice_sizes' dynamic entries do not match its index operands}}
  %0 = "mlx.gather"(%x, %i) <{axes = array<i64: 1>, static_slice_sizes = array<i64: -9223372036854775808, 1>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<?x8xf32>, tensor<3xi32>) -> tensor<3x?x1xf32>
  func.return
}

// -----

func.func @gather_slice_too_big(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op slice size 9 of axis 1 exceeds the dim size 8}}
  %0 = mlx.gather %x[%i] axes [0] slice_sizes [1, 9] : tensor<4x8xf32>, (tensor<3xi32>) -> tensor<3x1x9xf32>
  func.return
}

// -----

func.func @gather_slice_negative(%x: tensor<?x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op slice size -1 of axis 0 is negative}}
  %0 = mlx.gather %x[%i] axes [1] slice_sizes [-1, 1] : tensor<?x8xf32>, (tensor<3xi32>) -> tensor<3x?x1xf32>
  func.return
}

// -----

// The result is broadcast(indices) ++ slice_sizes.
func.func @gather_shape(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op result shape [3, 8] does not match the expected shape [3, 1, 8]}}
  %0 = mlx.gather %x[%i] axes [0] slice_sizes [1, 8] : tensor<4x8xf32>, (tensor<3xi32>) -> tensor<3x8xf32>
  func.return
}

// -----

func.func @gather_dtype(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'mlx.gather' op result element type bf16 must equal the input's f32}}
  %0 = mlx.gather %x[%i] axes [0] slice_sizes [1, 8] : tensor<4x8xf32>, (tensor<3xi32>) -> tensor<3x1x8xbf16>
  func.return
}

// -----

func.func @scatter_axes_count(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x1x1xf32>) {
  // expected-error @+1 {{'mlx.scatter' op 2 index tensors but 1 axes}}
  %0 = mlx.scatter %x[%i, %i] axes [0], %u : tensor<4x8xf32>, (tensor<3xi64>, tensor<3xi64>), tensor<3x1x1xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_axis_range(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x1x1xf32>) {
  // expected-error @+1 {{'mlx.scatter' op axis 2 is out of range for rank 2}}
  %0 = mlx.scatter %x[%i] axes [2], %u : tensor<4x8xf32>, (tensor<3xi64>), tensor<3x1x1xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf16>, %u: tensor<3x1x8xf32>) {
  // expected-error @+1 {{'mlx.scatter' op indices must be integer, got f16}}
  %0 = mlx.scatter %x[%i] axes [0], %u : tensor<4x8xf32>, (tensor<3xf16>), tensor<3x1x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_updates_rank(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x8xf32>) {
  // expected-error @+1 {{'mlx.scatter' op updates must have rank 3 (index rank + input rank), got 2}}
  %0 = mlx.scatter %x[%i] axes [0], %u : tensor<4x8xf32>, (tensor<3xi64>), tensor<3x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_reduce(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x1x8xf32>) {
  // expected-error @+1 {{'mlx.scatter' op reduce must be one of ('none', 'add', 'prod', 'max', 'min'), got 'mean'}}
  %0 = mlx.scatter %x[%i] axes [0], %u reduce "mean" : tensor<4x8xf32>, (tensor<3xi64>), tensor<3x1x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_shape(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x1x8xf32>) {
  // expected-error @+1 {{'mlx.scatter' op result shape [8, 4] does not match operand shape [4, 8]}}
  %0 = mlx.scatter %x[%i] axes [0], %u : tensor<4x8xf32>, (tensor<3xi64>), tensor<3x1x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_dtype(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %u: tensor<3x1x8xf16>) {
  // expected-error @+1 {{'mlx.scatter' op input, updates and result must share one element type, got f32, f16, f32}}
  %0 = mlx.scatter %x[%i] axes [0], %u reduce "add" : tensor<4x8xf32>, (tensor<3xi64>), tensor<3x1x8xf16> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_start_count(%x: tensor<4x8xf32>, %u: tensor<1x1xf32>) {
  // expected-error @+1 {{'mlx.slice_update' op 1 start entries but 2 axes}}
  %0 = mlx.slice_update %x, %u start [0] axes [0, 1] : tensor<4x8xf32>, tensor<1x1xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_axis_range(%x: tensor<4x8xf32>, %u: tensor<1x8xf32>) {
  // expected-error @+1 {{'mlx.slice_update' op axis -3 is out of range for rank 2}}
  %0 = mlx.slice_update %x, %u start [0] axes [-3] : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_markers(%x: tensor<4x8xf32>, %u: tensor<1x8xf32>, %p: index) {
  // expected-error @+1 {{'mlx.slice_update' op start's dynamic entries do not match its index operands}}
  %0 = "mlx.slice_update"(%x, %u, %p) <{static_start = array<i64: 0>, axes = array<i64: 0>}> : (tensor<4x8xf32>, tensor<1x8xf32>, index) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_rank(%x: tensor<4x8xf32>, %u: tensor<8xf32>, %p: index) {
  // expected-error @+1 {{'mlx.slice_update' op update must have the input's rank}}
  %0 = mlx.slice_update %x, %u start [%p] axes [0] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_dims(%x: tensor<1x8x256x64xf16>, %u: tensor<1x8x1x32xf16>, %p: index) {
  // expected-error @+1 {{'mlx.slice_update' op update dim 3 (32) must equal the input's (64) outside the axes}}
  %0 = mlx.slice_update %x, %u start [%p] axes [2] : tensor<1x8x256x64xf16>, tensor<1x8x1x32xf16> -> tensor<1x8x256x64xf16>
  func.return
}

// -----

func.func @slice_update_shape(%x: tensor<1x8x256x64xf16>, %u: tensor<1x8x1x64xf16>, %p: index) {
  // expected-error @+1 {{'mlx.slice_update' op result shape [1, 8, 257, 64] does not match operand shape [1, 8, 256, 64]}}
  %0 = mlx.slice_update %x, %u start [%p] axes [2] : tensor<1x8x256x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x257x64xf16>
  func.return
}

// -----

func.func @slice_update_dtype(%x: tensor<1x8x256x64xf16>, %u: tensor<1x8x1x64xf32>, %p: index) {
  // expected-error @+1 {{'mlx.slice_update' op input, update and result must share one element type, got f16, f32, f16}}
  %0 = mlx.slice_update %x, %u start [%p] axes [2] : tensor<1x8x256x64xf16>, tensor<1x8x1x64xf32> -> tensor<1x8x256x64xf16>
  func.return
}

// -----

func.func @nonzero_rank(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.nonzero' op result must be rank 2 [count, 2], got rank 1}}
  %0 = mlx.nonzero %x : tensor<4x3xf32> -> tensor<?xi64>
  func.return
}

// -----

func.func @nonzero_columns(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.nonzero' op result's second dim must be the input's rank 2, got 3}}
  %0 = mlx.nonzero %x : tensor<4x3xf32> -> tensor<?x3xi64>
  func.return
}

// -----

func.func @nonzero_dtype(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.nonzero' op result must have i64 element type, got i32}}
  %0 = mlx.nonzero %x : tensor<4x3xf32> -> tensor<?x2xi32>
  func.return
}

// -----

func.func @unique_output(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.unique' op output must be rank 1 of the input's element type f32, got [?] of f16}}
  %0, %1, %2 = mlx.unique %x : tensor<4x3xf32> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
  func.return
}

// -----

func.func @unique_inverse_shape(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.unique' op inverse shape [0] does not match the expected shape [4, 3]}}
  %0, %1, %2 = mlx.unique %x return_inverse : tensor<4x3xf32> -> tensor<?xf32>, tensor<0xi64>, tensor<0xi64>
  func.return
}

// -----

func.func @unique_counts_dtype(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'mlx.unique' op counts must have i64 element type, got i32}}
  %0, %1, %2 = mlx.unique %x return_counts : tensor<4x3xf32> -> tensor<?xf32>, tensor<0xi64>, tensor<?xi32>
  func.return
}

// -----

func.func @repeat_interleave_rank(%r: tensor<2x3xi64>) {
  // expected-error @+1 {{'mlx.repeat_interleave' op repeats must be rank 1, got rank 2}}
  %0 = mlx.repeat_interleave %r : tensor<2x3xi64> -> tensor<?xi64>
  func.return
}

// -----

func.func @repeat_interleave_dtype(%r: tensor<3xi64>) {
  // expected-error @+1 {{'mlx.repeat_interleave' op result must be rank 1 of the repeats' element type i64, got [?] of i32}}
  %0 = mlx.repeat_interleave %r : tensor<3xi64> -> tensor<?xi32>
  func.return
}

// -----

func.func @item_elements(%n: tensor<2xi64>) {
  // expected-error @+1 {{'mlx.item' op input must hold one element, got shape [2]}}
  %0 = mlx.item %n : tensor<2xi64>
  func.return
}

// -----

func.func @item_float(%n: tensor<f32>) {
  // expected-error @+1 {{'mlx.item' op input must have integer or bool element type, got f32}}
  %0 = mlx.item %n : tensor<f32>
  func.return
}

// -----

func.func @dynamic_slice_update_float_start(%x: tensor<4x8xf32>, %u: tensor<1x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op start must be an integer tensor, got f32}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [0] : tensor<4x8xf32>, tensor<1x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @dynamic_slice_update_start_count(%x: tensor<4x8xf32>, %u: tensor<1x1xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op start has 3 entries but 2 axes}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [0, 1] : tensor<4x8xf32>, tensor<1x1xf32>, tensor<3xi64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @dynamic_slice_update_scalar_start(%x: tensor<4x8xf32>, %u: tensor<1x1xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op start must be 0-d (one axis) or 1-d with an entry per axis, got rank 0 for 2 axes}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [0, 1] : tensor<4x8xf32>, tensor<1x1xf32>, tensor<i64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @dynamic_slice_update_repeated_axis(%x: tensor<4x8xf32>, %u: tensor<1x1xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op axes [1, -1] repeat an axis}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [1, -1] : tensor<4x8xf32>, tensor<1x1xf32>, tensor<2xi64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @dynamic_slice_update_partial_row(%x: tensor<4x8xf32>, %u: tensor<1x4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op update dim 1 (4) must equal the input's (8) outside the axes}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [0] : tensor<4x8xf32>, tensor<1x4xf32>, tensor<i64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @dynamic_slice_update_too_long(%x: tensor<4x8xf32>, %u: tensor<5x8xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'mlx.dynamic_slice_update' op update dim 0 (5) exceeds the input's (4)}}
  %0 = mlx.dynamic_slice_update %x, %u start %s axes [0] : tensor<4x8xf32>, tensor<5x8xf32>, tensor<i64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_update_too_long(%x: tensor<4x8xf32>, %u: tensor<5x8xf32>) {
  // expected-error @+1 {{'mlx.slice_update' op update dim 0 (5) exceeds the input's (4)}}
  %0 = mlx.slice_update %x, %u start [0] axes [0] : tensor<4x8xf32>, tensor<5x8xf32> -> tensor<4x8xf32>
  func.return
}
