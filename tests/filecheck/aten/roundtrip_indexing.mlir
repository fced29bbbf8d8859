// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Round trips of the indexing ops: advanced indexing, index_put, index_select,
// index_copy, embedding, gather and masked_fill.

// CHECK-LABEL: func.func @advanced_indexing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %rows: tensor<3x1xi64>, %cols: tensor<1x2xi32>, %m: tensor<6x4xi1>, %v: tensor<3x4xf32>) -> tensor<6x4xf32> {
// CHECK-NEXT:    %index = aten.index %x[%idx] at [0] : tensor<2x?x8xf32>, (tensor<3xi64>) -> tensor<3x?x8xf32>
// CHECK-NEXT:    %index_2d = aten.index %s[%rows, %cols] at [0, 1] : tensor<6x4xf32>, (tensor<3x1xi64>, tensor<1x2xi32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %index_inner = aten.index %x[%idx] at [2] : tensor<2x?x8xf32>, (tensor<3xi64>) -> tensor<2x?x3xf32>
// CHECK-NEXT:    %index_mask = aten.index %s[%m] at [0] : tensor<6x4xf32>, (tensor<6x4xi1>) -> tensor<?xf32>
// CHECK-NEXT:    %put = aten.index_put %s[%idx] at [0], %v : tensor<6x4xf32>, (tensor<3xi64>), tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %put_acc = aten.index_put %s[%rows, %cols] at [0, 1], %v accumulate : tensor<6x4xf32>, (tensor<3x1xi64>, tensor<1x2xi32>), tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %put : tensor<6x4xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @advanced_indexing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %rows: tensor<3x1xi64>, %cols: tensor<1x2xi32>, %m: tensor<6x4xi1>, %v: tensor<3x4xf32>) -> tensor<6x4xf32> {
// CANON:         func.return %put : tensor<6x4xf32>
func.func @advanced_indexing(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %rows: tensor<3x1xi64>, %cols: tensor<1x2xi32>, %m: tensor<6x4xi1>, %v: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %index = aten.index %x[%idx] at [0] : tensor<2x?x8xf32>, (tensor<3xi64>) -> tensor<3x?x8xf32>
  %index_2d = aten.index %s[%rows, %cols] at [0, 1] : tensor<6x4xf32>, (tensor<3x1xi64>, tensor<1x2xi32>) -> tensor<3x2xf32>
  %index_inner = aten.index %x[%idx] at [2] : tensor<2x?x8xf32>, (tensor<3xi64>) -> tensor<2x?x3xf32>
  %index_mask = aten.index %s[%m] at [0] : tensor<6x4xf32>, (tensor<6x4xi1>) -> tensor<?xf32>
  %put = aten.index_put %s[%idx] at [0], %v : tensor<6x4xf32>, (tensor<3xi64>), tensor<3x4xf32> -> tensor<6x4xf32>
  %put_acc = aten.index_put %s[%rows, %cols] at [0, 1], %v accumulate : tensor<6x4xf32>, (tensor<3x1xi64>, tensor<1x2xi32>), tensor<3x4xf32> -> tensor<6x4xf32>
  func.return %put : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @gathers(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %i0: tensor<i64>, %src: tensor<3x4xf32>, %w: tensor<32000x64xbf16>, %ids: tensor<2x?xi64>, %gi: tensor<6x2xi64>, %scalar: tensor<f32>) -> tensor<2x?x64xbf16> {
// CHECK-NEXT:    %select = aten.index_select %s, %idx dim 0 : tensor<6x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
// CHECK-NEXT:    %select_dyn = aten.index_select %x, %idx dim -2 : tensor<2x?x8xf32>, tensor<3xi64> -> tensor<2x3x8xf32>
// CHECK-NEXT:    %select_0d = aten.index_select %s, %i0 dim 1 : tensor<6x4xf32>, tensor<i64> -> tensor<6x1xf32>
// CHECK-NEXT:    %select_scalar = aten.index_select %scalar, %i0 dim 0 : tensor<f32>, tensor<i64> -> tensor<f32>
// CHECK-NEXT:    %copy = aten.index_copy %s, %idx, %src dim 0 : tensor<6x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %embedding = aten.embedding %w, %ids : tensor<32000x64xbf16>, tensor<2x?xi64> -> tensor<2x?x64xbf16>
// CHECK-NEXT:    %gather = aten.gather %s, %gi dim 1 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
// CHECK-NEXT:    %gather_neg = aten.gather %s, %gi dim -1 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
// CHECK-NEXT:    func.return %embedding : tensor<2x?x64xbf16>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @gathers(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %i0: tensor<i64>, %src: tensor<3x4xf32>, %w: tensor<32000x64xbf16>, %ids: tensor<2x?xi64>, %gi: tensor<6x2xi64>, %scalar: tensor<f32>) -> tensor<2x?x64xbf16> {
// CANON:         func.return %embedding : tensor<2x?x64xbf16>
func.func @gathers(%x: tensor<2x?x8xf32>, %s: tensor<6x4xf32>, %idx: tensor<3xi64>, %i0: tensor<i64>, %src: tensor<3x4xf32>, %w: tensor<32000x64xbf16>, %ids: tensor<2x?xi64>, %gi: tensor<6x2xi64>, %scalar: tensor<f32>) -> tensor<2x?x64xbf16> {
  %select = aten.index_select %s, %idx dim 0 : tensor<6x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %select_dyn = aten.index_select %x, %idx dim -2 : tensor<2x?x8xf32>, tensor<3xi64> -> tensor<2x3x8xf32>
  %select_0d = aten.index_select %s, %i0 dim 1 : tensor<6x4xf32>, tensor<i64> -> tensor<6x1xf32>
  %select_scalar = aten.index_select %scalar, %i0 dim 0 : tensor<f32>, tensor<i64> -> tensor<f32>
  %copy = aten.index_copy %s, %idx, %src dim 0 : tensor<6x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<6x4xf32>
  %embedding = aten.embedding %w, %ids : tensor<32000x64xbf16>, tensor<2x?xi64> -> tensor<2x?x64xbf16>
  %gather = aten.gather %s, %gi dim 1 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
  %gather_neg = aten.gather %s, %gi dim -1 : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
  func.return %embedding : tensor<2x?x64xbf16>
}

// CHECK-LABEL: func.func @masked_fill(%scores: tensor<2x4x?x?xf32>, %mask: tensor<1x1x?x?xi1>, %fill: tensor<f32>, %i: tensor<4x?xi64>, %im: tensor<?xi1>) -> tensor<2x4x?x?xf32> {
// CHECK-NEXT:    %ninf = arith.constant 0xfff0000000000000 : f64
// CHECK-NEXT:    %zero = arith.constant 0 : i64
// CHECK-NEXT:    %masked = aten.masked_fill %scores, %mask, %ninf : tensor<2x4x?x?xf32>, tensor<1x1x?x?xi1>, f64 -> tensor<2x4x?x?xf32>
// CHECK-NEXT:    %masked_tensor = aten.masked_fill %scores, %mask, %fill : tensor<2x4x?x?xf32>, tensor<1x1x?x?xi1>, tensor<f32> -> tensor<2x4x?x?xf32>
// CHECK-NEXT:    %masked_int = aten.masked_fill %i, %im, %zero : tensor<4x?xi64>, tensor<?xi1>, i64 -> tensor<4x?xi64>
// CHECK-NEXT:    func.return %masked : tensor<2x4x?x?xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @masked_fill(%scores: tensor<2x4x?x?xf32>, %mask: tensor<1x1x?x?xi1>, %fill: tensor<f32>, %i: tensor<4x?xi64>, %im: tensor<?xi1>) -> tensor<2x4x?x?xf32> {
// CANON:         func.return %masked : tensor<2x4x?x?xf32>
func.func @masked_fill(%scores: tensor<2x4x?x?xf32>, %mask: tensor<1x1x?x?xi1>, %fill: tensor<f32>, %i: tensor<4x?xi64>, %im: tensor<?xi1>) -> tensor<2x4x?x?xf32> {
  %ninf = arith.constant 0xfff0000000000000 : f64
  %zero = arith.constant 0 : i64
  %masked = aten.masked_fill %scores, %mask, %ninf : tensor<2x4x?x?xf32>, tensor<1x1x?x?xi1>, f64 -> tensor<2x4x?x?xf32>
  %masked_tensor = aten.masked_fill %scores, %mask, %fill : tensor<2x4x?x?xf32>, tensor<1x1x?x?xi1>, tensor<f32> -> tensor<2x4x?x?xf32>
  %masked_int = aten.masked_fill %i, %im, %zero : tensor<4x?xi64>, tensor<?xi1>, i64 -> tensor<4x?xi64>
  func.return %masked : tensor<2x4x?x?xf32>
}

// nonzero: the indices of the true (nonzero) elements, [count, rank]; the count is
// dynamic (it depends on the values).
// CHECK-LABEL: func.func @nonzero(%m: tensor<4x?xi1>, %s: tensor<f32>) -> (tensor<?x2xi64>, tensor<?x0xi64>) {
// CHECK-NEXT:    %found = aten.nonzero %m : tensor<4x?xi1> -> tensor<?x2xi64>
// CHECK-NEXT:    %scalar = aten.nonzero %s : tensor<f32> -> tensor<?x0xi64>
// CHECK-NEXT:    func.return %found, %scalar : tensor<?x2xi64>, tensor<?x0xi64>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @nonzero(
// CANON:         aten.nonzero %m
func.func @nonzero(%m: tensor<4x?xi1>, %s: tensor<f32>) -> (tensor<?x2xi64>, tensor<?x0xi64>) {
  %found = aten.nonzero %m : tensor<4x?xi1> -> tensor<?x2xi64>
  %scalar = aten.nonzero %s : tensor<f32> -> tensor<?x0xi64>
  func.return %found, %scalar : tensor<?x2xi64>, tensor<?x0xi64>
}

// unique (sorted, or of runs with consecutive), repeat_interleave and item: sync points
// (a length, or an integer, read from the values).
// CHECK-LABEL: func.func @data_dependent(%x: tensor<?x3xf16>, %r: tensor<?xi32>, %n: tensor<1xi64>) -> (tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index) {
// CHECK-NEXT:    %values, %inverse, %counts = aten.unique %x return_inverse return_counts : tensor<?x3xf16> -> tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>
// CHECK-NEXT:    %runs, %none, %nothing = aten.unique %x consecutive : tensor<?x3xf16> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
// CHECK-NEXT:    %positions = aten.repeat_interleave %r : tensor<?xi32> -> tensor<?xi32>
// CHECK-NEXT:    %k = aten.item %n : tensor<1xi64>
// CHECK-NEXT:    func.return %values, %inverse, %counts, %runs, %positions, %k : tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index
// CHECK-NEXT:  }
// CANON-LABEL: func.func @data_dependent(
// CANON-NEXT:    aten.unique %x return_inverse return_counts
// CANON-NEXT:    aten.unique %x consecutive
// CANON-NEXT:    aten.repeat_interleave %r
// CANON-NEXT:    aten.item %n
func.func @data_dependent(%x: tensor<?x3xf16>, %r: tensor<?xi32>, %n: tensor<1xi64>) -> (tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index) {
  %values, %inverse, %counts = aten.unique %x return_inverse return_counts : tensor<?x3xf16> -> tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>
  %runs, %none, %nothing = aten.unique %x consecutive : tensor<?x3xf16> -> tensor<?xf16>, tensor<0xi64>, tensor<0xi64>
  %positions = aten.repeat_interleave %r : tensor<?xi32> -> tensor<?xi32>
  %k = aten.item %n : tensor<1xi64>
  func.return %values, %inverse, %counts, %runs, %positions, %k : tensor<?xf16>, tensor<?x3xi64>, tensor<?xi64>, tensor<?xf16>, tensor<?xi32>, index
}
