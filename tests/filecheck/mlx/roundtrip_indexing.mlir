// Round trip of the mlx indexing ops: take, take_along_axis, gather, scatter, slice_update,
// dynamic_slice_update.
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON
// RUN: mlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The dynamic slice size is the next index operand; the segment sizes say which is which.
// GENERIC: "mlx.gather"(%x, %i, %n) <{axes = array<i64: 2>, static_slice_sizes = array<i64: -9223372036854775808, 8, 1>, operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC: "mlx.scatter"(%x, %i, %rows) <{axes = array<i64: 0>}>
// GENERIC: "mlx.scatter"(%set, %i, %rows) <{axes = array<i64: 0>, reduce = "add"}>

// A chain of scatters survives canonicalization whole; unused takes go.
// CANON-LABEL: func.func @take(
// CANON-NEXT:    %cols = mlx.take
// CANON-NEXT:    func.return %cols
// CANON-LABEL: func.func @scatter(
// CANON-NEXT:    %set = mlx.scatter
// CANON-NEXT:    %add = mlx.scatter %set
// CANON-NEXT:    %max = mlx.scatter %add
// CANON-NEXT:    func.return %max

// CHECK-LABEL: func.func @take(
// CHECK-SAME: %x: tensor<?x16xf32>, %idx: tensor<2x3xi32>, %flat: tensor<5xi64>) -> tensor<?x2x3xf32> {
// CHECK-NEXT: %rows = mlx.take %x, %idx axis 0 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<2x3x16xf32>
// CHECK-NEXT: %cols = mlx.take %x, %idx axis -1 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<?x2x3xf32>
// CHECK-NEXT: %elems = mlx.take %x, %flat : tensor<?x16xf32>, tensor<5xi64> -> tensor<5xf32>
// CHECK-NEXT: func.return %cols : tensor<?x2x3xf32>
// CHECK-NEXT: }
func.func @take(%x: tensor<?x16xf32>, %idx: tensor<2x3xi32>, %flat: tensor<5xi64>) -> tensor<?x2x3xf32> {
  %rows = mlx.take %x, %idx axis 0 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<2x3x16xf32>
  %cols = mlx.take %x, %idx axis -1 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<?x2x3xf32>
  %elems = mlx.take %x, %flat : tensor<?x16xf32>, tensor<5xi64> -> tensor<5xf32>
  func.return %cols : tensor<?x2x3xf32>
}

// CHECK-LABEL: func.func @take_along_axis(
// CHECK-SAME: %x: tensor<4x?xf32>, %idx: tensor<4x1xui32>, %row: tensor<1x?xi64>) -> tensor<4x1xf32> {
// CHECK-NEXT: %picked = mlx.take_along_axis %x, %idx axis 1 : tensor<4x?xf32>, tensor<4x1xui32> -> tensor<4x1xf32>
// CHECK-NEXT: %bcast = mlx.take_along_axis %x, %row axis 0 : tensor<4x?xf32>, tensor<1x?xi64> -> tensor<1x?xf32>
// CHECK-NEXT: func.return %picked : tensor<4x1xf32>
// CHECK-NEXT: }
func.func @take_along_axis(%x: tensor<4x?xf32>, %idx: tensor<4x1xui32>, %row: tensor<1x?xi64>) -> tensor<4x1xf32> {
  %picked = mlx.take_along_axis %x, %idx axis 1 : tensor<4x?xf32>, tensor<4x1xui32> -> tensor<4x1xf32>
  %bcast = mlx.take_along_axis %x, %row axis 0 : tensor<4x?xf32>, tensor<1x?xi64> -> tensor<1x?xf32>
  func.return %picked : tensor<4x1xf32>
}

// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %x: tensor<?x8x16xf16>, %i: tensor<5xi32>, %j: tensor<3x1xi32>) -> tensor<3x5x1x1x16xf16> {
// CHECK-NEXT: %n = mlx.dim %x axis 0 : tensor<?x8x16xf16>
// CHECK-NEXT: %rows = mlx.gather %x[%i] axes [0] slice_sizes [1, 8, 16] : tensor<?x8x16xf16>, (tensor<5xi32>) -> tensor<5x1x8x16xf16>
// CHECK-NEXT: %pairs = mlx.gather %x[%j, %i] axes [0, 1] slice_sizes [1, 1, 16] : tensor<?x8x16xf16>, (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5x1x1x16xf16>
// CHECK-NEXT: %cols = mlx.gather %x[%i] axes [2] slice_sizes [%n, 8, 1] : tensor<?x8x16xf16>, (tensor<5xi32>) -> tensor<5x?x8x1xf16>
// CHECK-NEXT: func.return %pairs : tensor<3x5x1x1x16xf16>
// CHECK-NEXT: }
func.func @gather(%x: tensor<?x8x16xf16>, %i: tensor<5xi32>, %j: tensor<3x1xi32>) -> tensor<3x5x1x1x16xf16> {
  %n = mlx.dim %x axis 0 : tensor<?x8x16xf16>
  %rows = mlx.gather %x[%i] axes [0] slice_sizes [1, 8, 16] : tensor<?x8x16xf16>, (tensor<5xi32>) -> tensor<5x1x8x16xf16>
  %pairs = mlx.gather %x[%j, %i] axes [0, 1] slice_sizes [1, 1, 16] : tensor<?x8x16xf16>, (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5x1x1x16xf16>
  %cols = mlx.gather %x[%i] axes [2] slice_sizes [%n, 8, 1] : tensor<?x8x16xf16>, (tensor<5xi32>) -> tensor<5x?x8x1xf16>
  func.return %pairs : tensor<3x5x1x1x16xf16>
}

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME: %x: tensor<?x8xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>, %rows: tensor<5x1x8xf32>, %elems: tensor<5x1x1xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %set = mlx.scatter %x[%i] axes [0], %rows : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %add = mlx.scatter %set[%i] axes [0], %rows reduce "add" : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %max = mlx.scatter %add[%i, %j] axes [0, -1], %elems reduce "max" : tensor<?x8xf32>, (tensor<5xi64>, tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
// CHECK-NEXT: func.return %max : tensor<?x8xf32>
// CHECK-NEXT: }
func.func @scatter(%x: tensor<?x8xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>, %rows: tensor<5x1x8xf32>, %elems: tensor<5x1x1xf32>) -> tensor<?x8xf32> {
  %set = mlx.scatter %x[%i] axes [0], %rows : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
  %add = mlx.scatter %set[%i] axes [0], %rows reduce "add" : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
  %max = mlx.scatter %add[%i, %j] axes [0, -1], %elems reduce "max" : tensor<?x8xf32>, (tensor<5xi64>, tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
  func.return %max : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @slice_update(
// CHECK-SAME: %cache: tensor<1x8x?x64xf16>, %new: tensor<1x8x1x64xf16>, %pos: index) -> tensor<1x8x?x64xf16> {
// CHECK-NEXT: %static = mlx.slice_update %cache, %new start [0] axes [2] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT: %dynamic = mlx.slice_update %cache, %new start [%pos, 0] axes [2, 0] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x?x64xf16>
// CHECK-NEXT: func.return %dynamic : tensor<1x8x?x64xf16>
// CHECK-NEXT: }
func.func @slice_update(%cache: tensor<1x8x?x64xf16>, %new: tensor<1x8x1x64xf16>, %pos: index) -> tensor<1x8x?x64xf16> {
  %static = mlx.slice_update %cache, %new start [0] axes [2] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x?x64xf16>
  %dynamic = mlx.slice_update %cache, %new start [%pos, 0] axes [2, 0] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x?x64xf16>
  func.return %dynamic : tensor<1x8x?x64xf16>
}

// CHECK-LABEL: func.func @dynamic_slice_update(
// CHECK-SAME: %cache: tensor<1x8x?x64xf16>, %new: tensor<1x8x1x64xf16>, %pos: tensor<i64>, %at: tensor<2xi32>) -> tensor<1x8x?x64xf16> {
// CHECK-NEXT: %one = mlx.dynamic_slice_update %cache, %new start %pos axes [2] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16>, tensor<i64> -> tensor<1x8x?x64xf16>
// CHECK-NEXT: %two = mlx.dynamic_slice_update %one, %new start %at axes [-2, 0] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16>, tensor<2xi32> -> tensor<1x8x?x64xf16>
// CHECK-NEXT: func.return %two : tensor<1x8x?x64xf16>
// CHECK-NEXT: }
// GENERIC: "mlx.dynamic_slice_update"(%cache, %new, %pos) <{axes = array<i64: 2>}>
func.func @dynamic_slice_update(%cache: tensor<1x8x?x64xf16>, %new: tensor<1x8x1x64xf16>, %pos: tensor<i64>, %at: tensor<2xi32>) -> tensor<1x8x?x64xf16> {
  %one = mlx.dynamic_slice_update %cache, %new start %pos axes [2] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16>, tensor<i64> -> tensor<1x8x?x64xf16>
  %two = mlx.dynamic_slice_update %one, %new start %at axes [-2, 0] : tensor<1x8x?x64xf16>, tensor<1x8x1x64xf16>, tensor<2xi32> -> tensor<1x8x?x64xf16>
  func.return %two : tensor<1x8x?x64xf16>
}

// nonzero: a sync point (the count depends on the values).
// CHECK-LABEL: func.func @nonzero(%x: tensor<?x3xf16>) -> tensor<?x2xi64> {
// CHECK-NEXT:    %found = mlx.nonzero %x : tensor<?x3xf16> -> tensor<?x2xi64>
// CHECK-NEXT:    func.return %found : tensor<?x2xi64>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @nonzero(
// CANON-NEXT:    %found = mlx.nonzero %x
func.func @nonzero(%x: tensor<?x3xf16>) -> tensor<?x2xi64> {
  %found = mlx.nonzero %x : tensor<?x3xf16> -> tensor<?x2xi64>
  func.return %found : tensor<?x2xi64>
}

// unique (sorted, or of runs with consecutive), repeat_interleave and item: sync points
// (a length, or an integer, read from the values).
// CHECK-LABEL: func.func @data_dependent(%x: tensor<?x3xf16>, %r: tensor<?xi32>, %n: tensor<1xi64>) -> (tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index) {
// CHECK-NEXT:    %values, %inverse, %counts = mlx.unique %x return_inverse return_counts : tensor<?x3xf16> -> tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>
// CHECK-NEXT:    %runs, %none, %nothing = mlx.unique %x consecutive : tensor<?x3xf16> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
// CHECK-NEXT:    %positions = mlx.repeat_interleave %r : tensor<?xi32> -> tensor<?xi32>
// CHECK-NEXT:    %k = mlx.item %n : tensor<1xi64>
// CHECK-NEXT:    func.return %values, %inverse, %counts, %runs, %positions, %k : tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index
// CHECK-NEXT:  }
// CANON-LABEL: func.func @data_dependent(
// CANON-NEXT:    mlx.unique %x return_inverse return_counts
// CANON-NEXT:    mlx.unique %x consecutive
// CANON-NEXT:    mlx.repeat_interleave %r
// CANON-NEXT:    mlx.item %n
func.func @data_dependent(%x: tensor<?x3xf16>, %r: tensor<?xi32>, %n: tensor<1xi64>) -> (tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index) {
  %values, %inverse, %counts = mlx.unique %x return_inverse return_counts : tensor<?x3xf16> -> tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>
  %runs, %none, %nothing = mlx.unique %x consecutive : tensor<?x3xf16> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
  %positions = mlx.repeat_interleave %r : tensor<?xi32> -> tensor<?xi32>
  %k = mlx.item %n : tensor<1xi64>
  func.return %values, %inverse, %counts, %runs, %positions, %k : tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index
}
