// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of the shape ops: mixed static/index size lists (`[2, %n]`),
// -1 entries, negative dims, squeeze rules, slicing with index bounds, joins and splits.

// CHECK-LABEL: func.func @reshape(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<2x?xf32> {
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
// CHECK-NEXT:    %flat_len = arith.muli %seq, %c8 : index
// CHECK-NEXT:    %flat = aten.view %x [2, %flat_len] : tensor<2x?x8xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    %heads = aten.view %x [2, %seq, 2, 4] : tensor<2x?x8xf32> -> tensor<2x?x2x4xf32>
// CHECK-NEXT:    %infer = aten.reshape %x [-1, 8] : tensor<2x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %static = aten.view %s [3, -1] : tensor<6x4xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    %scalar = aten.reshape %s [24] : tensor<6x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %flat : tensor<2x?xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @reshape(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<2x?xf32> {
// CANON:         func.return %flat : tensor<2x?xf32>
func.func @reshape(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<2x?xf32> {
  %c8 = arith.constant 8 : index
  %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
  %flat_len = arith.muli %seq, %c8 : index
  %flat = aten.view %x [2, %flat_len] : tensor<2x?x8xf32> -> tensor<2x?xf32>
  %heads = aten.view %x [2, %seq, 2, 4] : tensor<2x?x8xf32> -> tensor<2x?x2x4xf32>
  %infer = aten.reshape %x [-1, 8] : tensor<2x?x8xf32> -> tensor<?x8xf32>
  %static = aten.view %s [3, -1] : tensor<6x4xf32> -> tensor<3x8xf32>
  %scalar = aten.reshape %s [24] : tensor<6x4xf32> -> tensor<24xf32>
  func.return %flat : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @broadcast_and_permute(%x: tensor<2x?x8xf32>, %m: tensor<?x1x8xf32>, %v: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %seq = aten.sym_size %x dim -2 : tensor<2x?x8xf32>
// CHECK-NEXT:    %expand = aten.expand %m [-1, 4, -1] : tensor<?x1x8xf32> -> tensor<?x4x8xf32>
// CHECK-NEXT:    %expand_new = aten.expand %v [2, %seq, 8] : tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %expand_keep = aten.expand %v [3, -1] : tensor<8xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    %permute = aten.permute %x [0, 2, 1] : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
// CHECK-NEXT:    %permute_neg = aten.permute %x [-1, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
// CHECK-NEXT:    %transpose = aten.transpose %x dims 1, 2 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
// CHECK-NEXT:    %transpose_neg = aten.transpose %x dims -1, 0 : tensor<2x?x8xf32> -> tensor<8x?x2xf32>
// CHECK-NEXT:    func.return %expand_new : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @broadcast_and_permute(%x: tensor<2x?x8xf32>, %m: tensor<?x1x8xf32>, %v: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %expand_new : tensor<2x?x8xf32>
func.func @broadcast_and_permute(%x: tensor<2x?x8xf32>, %m: tensor<?x1x8xf32>, %v: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %seq = aten.sym_size %x dim -2 : tensor<2x?x8xf32>
  %expand = aten.expand %m [-1, 4, -1] : tensor<?x1x8xf32> -> tensor<?x4x8xf32>
  %expand_new = aten.expand %v [2, %seq, 8] : tensor<8xf32> -> tensor<2x?x8xf32>
  %expand_keep = aten.expand %v [3, -1] : tensor<8xf32> -> tensor<3x8xf32>
  %permute = aten.permute %x [0, 2, 1] : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
  %permute_neg = aten.permute %x [-1, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
  %transpose = aten.transpose %x dims 1, 2 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
  %transpose_neg = aten.transpose %x dims -1, 0 : tensor<2x?x8xf32> -> tensor<8x?x2xf32>
  func.return %expand_new : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze(%x: tensor<2x?x8xf32>, %o: tensor<2x1x8xf32>, %u: tensor<1x?x1xf32>, %s: tensor<f32>) -> tensor<1x2x?x8xf32> {
// CHECK-NEXT:    %unsqueeze = aten.unsqueeze %x dim 0 : tensor<2x?x8xf32> -> tensor<1x2x?x8xf32>
// CHECK-NEXT:    %unsqueeze_last = aten.unsqueeze %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?x8x1xf32>
// CHECK-NEXT:    %unsqueeze_scalar = aten.unsqueeze %s dim 0 : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %squeeze = aten.squeeze %o dims [1] : tensor<2x1x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %squeeze_kept = aten.squeeze %o dims [0] : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT:    %squeeze_dyn = aten.squeeze %x dims [1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %squeeze_all = aten.squeeze %u : tensor<1x?x1xf32> -> tensor<?xf32>
// CHECK-NEXT:    %squeeze_scalar = aten.squeeze %s dims [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %transpose_scalar = aten.transpose %s dims 0, -1 : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %unsqueeze : tensor<1x2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @squeeze_unsqueeze(%x: tensor<2x?x8xf32>, %o: tensor<2x1x8xf32>, %u: tensor<1x?x1xf32>, %s: tensor<f32>) -> tensor<1x2x?x8xf32> {
// CANON:         func.return %unsqueeze : tensor<1x2x?x8xf32>
func.func @squeeze_unsqueeze(%x: tensor<2x?x8xf32>, %o: tensor<2x1x8xf32>, %u: tensor<1x?x1xf32>, %s: tensor<f32>) -> tensor<1x2x?x8xf32> {
  %unsqueeze = aten.unsqueeze %x dim 0 : tensor<2x?x8xf32> -> tensor<1x2x?x8xf32>
  %unsqueeze_last = aten.unsqueeze %x dim -1 : tensor<2x?x8xf32> -> tensor<2x?x8x1xf32>
  %unsqueeze_scalar = aten.unsqueeze %s dim 0 : tensor<f32> -> tensor<1xf32>
  %squeeze = aten.squeeze %o dims [1] : tensor<2x1x8xf32> -> tensor<2x8xf32>
  %squeeze_kept = aten.squeeze %o dims [0] : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %squeeze_dyn = aten.squeeze %x dims [1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %squeeze_all = aten.squeeze %u : tensor<1x?x1xf32> -> tensor<?xf32>
  %squeeze_scalar = aten.squeeze %s dims [0] : tensor<f32> -> tensor<f32>
  %transpose_scalar = aten.transpose %s dims 0, -1 : tensor<f32> -> tensor<f32>
  func.return %unsqueeze : tensor<1x2x?x8xf32>
}

// CHECK-LABEL: func.func @slicing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %src: tensor<3x4xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
// CHECK-NEXT:    %last = arith.subi %seq, %c1 : index
// CHECK-NEXT:    %slice = aten.slice %x dim 1 [0, %last, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %slice_step = aten.slice %s dim 0 [1, 9223372036854775807, 2] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %slice_neg = aten.slice %s dim -1 [-2, 9223372036854775807, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    %slice_empty = aten.slice %s dim 0 [4, 2, 1] : tensor<6x4xf32> -> tensor<0x4xf32>
// CHECK-NEXT:    %scatter = aten.slice_scatter %s, %src dim 0 [0, 6, 2] : tensor<6x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %scatter_dyn = aten.slice_scatter %x, %x dim 1 [%c1, %seq, 1] : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %select = aten.select %x dim 0 index [1] : tensor<2x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %select_neg = aten.select %s dim 1 index [-1] : tensor<6x4xf32> -> tensor<6xf32>
// CHECK-NEXT:    %select_dyn = aten.select %x dim 1 index [%last] : tensor<2x?x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %narrow = aten.narrow %x dim 2 [0, 4] : tensor<2x?x8xf32> -> tensor<2x?x4xf32>
// CHECK-NEXT:    %narrow_neg = aten.narrow %s dim 0 [-3, 3] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %narrow_dyn = aten.narrow %x dim 1 [%c1, %last] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %slice : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @slicing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %src: tensor<3x4xf32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %slice : tensor<2x?x8xf32>
func.func @slicing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %src: tensor<3x4xf32>) -> tensor<2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %seq = aten.sym_size %x dim 1 : tensor<2x?x8xf32>
  %last = arith.subi %seq, %c1 : index
  %slice = aten.slice %x dim 1 [0, %last, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %slice_step = aten.slice %s dim 0 [1, 9223372036854775807, 2] : tensor<6x4xf32> -> tensor<3x4xf32>
  %slice_neg = aten.slice %s dim -1 [-2, 9223372036854775807, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
  %slice_empty = aten.slice %s dim 0 [4, 2, 1] : tensor<6x4xf32> -> tensor<0x4xf32>
  %scatter = aten.slice_scatter %s, %src dim 0 [0, 6, 2] : tensor<6x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  %scatter_dyn = aten.slice_scatter %x, %x dim 1 [%c1, %seq, 1] : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %select = aten.select %x dim 0 index [1] : tensor<2x?x8xf32> -> tensor<?x8xf32>
  %select_neg = aten.select %s dim 1 index [-1] : tensor<6x4xf32> -> tensor<6xf32>
  %select_dyn = aten.select %x dim 1 index [%last] : tensor<2x?x8xf32> -> tensor<2x8xf32>
  %narrow = aten.narrow %x dim 2 [0, 4] : tensor<2x?x8xf32> -> tensor<2x?x4xf32>
  %narrow_neg = aten.narrow %s dim 0 [-3, 3] : tensor<6x4xf32> -> tensor<3x4xf32>
  %narrow_dyn = aten.narrow %x dim 1 [%c1, %last] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %slice : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @join_and_split(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %e: tensor<0xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %cat = aten.cat %x, %x dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %cat_static = aten.cat %s, %s, %s dim -1 : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x12xf32>
// CHECK-NEXT:    %cat_empty = aten.cat %e, %s dim 0 : tensor<0xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %cat_one = aten.cat %s dim 0 : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %stack = aten.stack %s, %s dim 0 : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %stack_last = aten.stack %x, %x, %x dim -1 : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8x3xf32>
// CHECK-NEXT:    %chunk0, %chunk1 = aten.split %s size 4 dim 0 : tensor<6x4xf32> -> tensor<4x4xf32>, tensor<2x4xf32>
// CHECK-NEXT:    %whole = aten.split %s size 8 dim 1 : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %dyn0, %dyn1 = aten.split %x size 4 dim 1 : tensor<2x?x8xf32> -> tensor<2x4x8xf32>, tensor<2x?x8xf32>
// CHECK-NEXT:    %part0, %part1, %part2 = aten.split_with_sizes %s [1, 2, 3] dim 0 : tensor<6x4xf32> -> tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>
// CHECK-NEXT:    %half0, %half1 = aten.split_with_sizes %x [4, 4] dim -1 : tensor<2x?x8xf32> -> tensor<2x?x4xf32>, tensor<2x?x4xf32>
// CHECK-NEXT:    func.return %cat : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @join_and_split(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %e: tensor<0xf32>) -> tensor<2x?x8xf32> {
// CANON:         func.return %cat : tensor<2x?x8xf32>
func.func @join_and_split(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %e: tensor<0xf32>) -> tensor<2x?x8xf32> {
  %cat = aten.cat %x, %x dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %cat_static = aten.cat %s, %s, %s dim -1 : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x12xf32>
  %cat_empty = aten.cat %e, %s dim 0 : tensor<0xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
  %cat_one = aten.cat %s dim 0 : tensor<6x4xf32> -> tensor<6x4xf32>
  %stack = aten.stack %s, %s dim 0 : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<2x6x4xf32>
  %stack_last = aten.stack %x, %x, %x dim -1 : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8x3xf32>
  %chunk0, %chunk1 = aten.split %s size 4 dim 0 : tensor<6x4xf32> -> tensor<4x4xf32>, tensor<2x4xf32>
  %whole = aten.split %s size 8 dim 1 : tensor<6x4xf32> -> tensor<6x4xf32>
  %dyn0, %dyn1 = aten.split %x size 4 dim 1 : tensor<2x?x8xf32> -> tensor<2x4x8xf32>, tensor<2x?x8xf32>
  %part0, %part1, %part2 = aten.split_with_sizes %s [1, 2, 3] dim 0 : tensor<6x4xf32> -> tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>
  %half0, %half1 = aten.split_with_sizes %x [4, 4] dim -1 : tensor<2x?x8xf32> -> tensor<2x?x4xf32>, tensor<2x?x4xf32>
  func.return %cat : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @rearrange(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<8x6xf32> {
// CHECK-NEXT:    %flip = aten.flip %x [0, -1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %flip_none = aten.flip %s [] : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %repeat = aten.repeat %s [2, 1, 3] : tensor<6x4xf32> -> tensor<2x6x12xf32>
// CHECK-NEXT:    %repeat_dyn = aten.repeat %x [1, 2, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %pad = aten.constant_pad_nd %s [1, 1, 0, 2] value 0.000000e+00 : tensor<6x4xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %pad_default = aten.constant_pad_nd %x [0, 0, 3, 0] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %crop = aten.constant_pad_nd %s [-1, -1] value -1.000000e+00 : tensor<6x4xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    func.return %pad : tensor<8x6xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @rearrange(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<8x6xf32> {
// CANON:         func.return %pad : tensor<8x6xf32>
func.func @rearrange(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>) -> tensor<8x6xf32> {
  %flip = aten.flip %x [0, -1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %flip_none = aten.flip %s [] : tensor<6x4xf32> -> tensor<6x4xf32>
  %repeat = aten.repeat %s [2, 1, 3] : tensor<6x4xf32> -> tensor<2x6x12xf32>
  %repeat_dyn = aten.repeat %x [1, 2, 1] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %pad = aten.constant_pad_nd %s [1, 1, 0, 2] value 0.000000e+00 : tensor<6x4xf32> -> tensor<8x6xf32>
  %pad_default = aten.constant_pad_nd %x [0, 0, 3, 0] : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %crop = aten.constant_pad_nd %s [-1, -1] value -1.000000e+00 : tensor<6x4xf32> -> tensor<6x2xf32>
  func.return %pad : tensor<8x6xf32>
}

// CHECK-LABEL: func.func @diagonal(%x: tensor<2x?x4x5xf32>, %m: tensor<3x4xi64>) -> tensor<2x?x4xf32> {
// CHECK-NEXT:    %d = aten.diagonal %x offset 0 dims 2, 3 : tensor<2x?x4x5xf32> -> tensor<2x?x4xf32>
// CHECK-NEXT:    %above = aten.diagonal %m offset 1 dims 0, 1 : tensor<3x4xi64> -> tensor<3xi64>
// CHECK-NEXT:    %below = aten.diagonal %x offset -2 dims -1, 0 : tensor<2x?x4x5xf32> -> tensor<?x4x2xf32>
// CHECK-NEXT:    %outside = aten.diagonal %m offset 7 dims 0, 1 : tensor<3x4xi64> -> tensor<0xi64>
// CHECK-NEXT:    func.return %d : tensor<2x?x4xf32>
// CANON-LABEL: func.func @diagonal(
// CANON:         func.return %d : tensor<2x?x4xf32>
func.func @diagonal(%x: tensor<2x?x4x5xf32>, %m: tensor<3x4xi64>) -> tensor<2x?x4xf32> {
  %d = aten.diagonal %x offset 0 dims 2, 3 : tensor<2x?x4x5xf32> -> tensor<2x?x4xf32>
  %above = aten.diagonal %m offset 1 dims 0, 1 : tensor<3x4xi64> -> tensor<3xi64>
  %below = aten.diagonal %x offset -2 dims -1, 0 : tensor<2x?x4x5xf32> -> tensor<?x4x2xf32>
  %outside = aten.diagonal %m offset 7 dims 0, 1 : tensor<3x4xi64> -> tensor<0xi64>
  func.return %d : tensor<2x?x4xf32>
}
