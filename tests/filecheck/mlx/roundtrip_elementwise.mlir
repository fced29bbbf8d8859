// Round trip of the elementwise mlx ops: every unary and binary op, mlx.astype, mlx.view, mlx.where.
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @unary_float(
// CHECK-SAME: %x: tensor<2x?xf32>, %h: tensor<8xbf16>) -> tensor<2x?xf32> {
// CHECK-NEXT: %exp = mlx.exp %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %expm1 = mlx.expm1 %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %log = mlx.log %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %log1p = mlx.log1p %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %log2 = mlx.log2 %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %log10 = mlx.log10 %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %sqrt = mlx.sqrt %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %rsqrt = mlx.rsqrt %h : tensor<8xbf16> -> tensor<8xbf16>
// CHECK-NEXT: %sin = mlx.sin %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %cos = mlx.cos %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %tan = mlx.tan %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %arcsin = mlx.arcsin %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %arccos = mlx.arccos %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %arctan = mlx.arctan %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %sinh = mlx.sinh %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %cosh = mlx.cosh %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %tanh = mlx.tanh %h : tensor<8xbf16> -> tensor<8xbf16>
// CHECK-NEXT: %arcsinh = mlx.arcsinh %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %arccosh = mlx.arccosh %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %arctanh = mlx.arctanh %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %sigmoid = mlx.sigmoid %h : tensor<8xbf16> -> tensor<8xbf16>
// CHECK-NEXT: %erf = mlx.erf %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %erfinv = mlx.erfinv %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %reciprocal = mlx.reciprocal %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: func.return %reciprocal : tensor<2x?xf32>
// CHECK-NEXT: }
func.func @unary_float(%x: tensor<2x?xf32>, %h: tensor<8xbf16>) -> tensor<2x?xf32> {
  %exp = mlx.exp %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %expm1 = mlx.expm1 %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %log = mlx.log %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %log1p = mlx.log1p %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %log2 = mlx.log2 %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %log10 = mlx.log10 %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %sqrt = mlx.sqrt %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %rsqrt = mlx.rsqrt %h : tensor<8xbf16> -> tensor<8xbf16>
  %sin = mlx.sin %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %cos = mlx.cos %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %tan = mlx.tan %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %arcsin = mlx.arcsin %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %arccos = mlx.arccos %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %arctan = mlx.arctan %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %sinh = mlx.sinh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %cosh = mlx.cosh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %tanh = mlx.tanh %h : tensor<8xbf16> -> tensor<8xbf16>
  %arcsinh = mlx.arcsinh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %arccosh = mlx.arccosh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %arctanh = mlx.arctanh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %sigmoid = mlx.sigmoid %h : tensor<8xbf16> -> tensor<8xbf16>
  %erf = mlx.erf %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %erfinv = mlx.erfinv %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %reciprocal = mlx.reciprocal %x : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return %reciprocal : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @unary_same(
// CHECK-SAME: %x: tensor<2x?xf32>, %i: tensor<3x4xi32>, %s: tensor<f16>) -> tensor<3x4xi32> {
// CHECK-NEXT: %abs = mlx.abs %i : tensor<3x4xi32> -> tensor<3x4xi32>
// CHECK-NEXT: %negative = mlx.negative %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %sign = mlx.sign %i : tensor<3x4xi32> -> tensor<3x4xi32>
// CHECK-NEXT: %square = mlx.square %s : tensor<f16> -> tensor<f16>
// CHECK-NEXT: %floor = mlx.floor %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %ceil = mlx.ceil %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %round = mlx.round %x : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: func.return %abs : tensor<3x4xi32>
// CHECK-NEXT: }
func.func @unary_same(%x: tensor<2x?xf32>, %i: tensor<3x4xi32>, %s: tensor<f16>) -> tensor<3x4xi32> {
  %abs = mlx.abs %i : tensor<3x4xi32> -> tensor<3x4xi32>
  %negative = mlx.negative %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %sign = mlx.sign %i : tensor<3x4xi32> -> tensor<3x4xi32>
  %square = mlx.square %s : tensor<f16> -> tensor<f16>
  %floor = mlx.floor %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %ceil = mlx.ceil %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %round = mlx.round %x : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return %abs : tensor<3x4xi32>
}

// CHECK-LABEL: func.func @unary_predicates(
// CHECK-SAME: %x: tensor<2x?xf32>, %b: tensor<4xi1>, %u: tensor<4xui8>) -> tensor<4xi1> {
// CHECK-NEXT: %isnan = mlx.isnan %x : tensor<2x?xf32> -> tensor<2x?xi1>
// CHECK-NEXT: %isinf = mlx.isinf %x : tensor<2x?xf32> -> tensor<2x?xi1>
// CHECK-NEXT: %not = mlx.logical_not %b : tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT: %inv = mlx.bitwise_invert %u : tensor<4xui8> -> tensor<4xui8>
// CHECK-NEXT: %binv = mlx.bitwise_invert %b : tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT: func.return %not : tensor<4xi1>
// CHECK-NEXT: }
func.func @unary_predicates(%x: tensor<2x?xf32>, %b: tensor<4xi1>, %u: tensor<4xui8>) -> tensor<4xi1> {
  %isnan = mlx.isnan %x : tensor<2x?xf32> -> tensor<2x?xi1>
  %isinf = mlx.isinf %x : tensor<2x?xf32> -> tensor<2x?xi1>
  %not = mlx.logical_not %b : tensor<4xi1> -> tensor<4xi1>
  %inv = mlx.bitwise_invert %u : tensor<4xui8> -> tensor<4xui8>
  %binv = mlx.bitwise_invert %b : tensor<4xi1> -> tensor<4xi1>
  func.return %not : tensor<4xi1>
}

// CHECK-LABEL: func.func @binary(
// CHECK-SAME: %x: tensor<2x?xf32>, %row: tensor<?xf32>, %col: tensor<4x1xf32>, %r: tensor<1x3xf32>, %i: tensor<3xi64>, %j: tensor<2x3xi64>) -> tensor<2x?xf32> {
// CHECK-NEXT: %add = mlx.add %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %sub = mlx.subtract %col, %r : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %mul = mlx.multiply %x, %x : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %div = mlx.divide %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %fdiv = mlx.floor_divide %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi64>
// CHECK-NEXT: %rem = mlx.remainder %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi64>
// CHECK-NEXT: %pow = mlx.power %col, %r : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %max = mlx.maximum %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %min = mlx.minimum %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
// CHECK-NEXT: %atan2 = mlx.arctan2 %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: func.return %atan2 : tensor<2x?xf32>
// CHECK-NEXT: }
func.func @binary(%x: tensor<2x?xf32>, %row: tensor<?xf32>, %col: tensor<4x1xf32>, %r: tensor<1x3xf32>, %i: tensor<3xi64>, %j: tensor<2x3xi64>) -> tensor<2x?xf32> {
  %add = mlx.add %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  %sub = mlx.subtract %col, %r : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  %mul = mlx.multiply %x, %x : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %div = mlx.divide %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  %fdiv = mlx.floor_divide %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi64>
  %rem = mlx.remainder %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi64>
  %pow = mlx.power %col, %r : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  %max = mlx.maximum %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  %min = mlx.minimum %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %atan2 = mlx.arctan2 %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  func.return %atan2 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @binary_compare(
// CHECK-SAME: %x: tensor<2x?xf32>, %row: tensor<?xf32>, %i: tensor<3xi64>, %j: tensor<2x3xi64>) -> tensor<2x3xi1> {
// CHECK-NEXT: %eq = mlx.equal %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xi1>
// CHECK-NEXT: %ne = mlx.not_equal %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi1>
// CHECK-NEXT: %lt = mlx.less %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xi1>
// CHECK-NEXT: %le = mlx.less_equal %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi1>
// CHECK-NEXT: %gt = mlx.greater %x, %x : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xi1>
// CHECK-NEXT: %ge = mlx.greater_equal %j, %j : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
// CHECK-NEXT: %and = mlx.logical_and %ne, %le : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
// CHECK-NEXT: %or = mlx.logical_or %lt, %eq : tensor<2x?xi1>, tensor<2x?xi1> -> tensor<2x?xi1>
// CHECK-NEXT: func.return %and : tensor<2x3xi1>
// CHECK-NEXT: }
func.func @binary_compare(%x: tensor<2x?xf32>, %row: tensor<?xf32>, %i: tensor<3xi64>, %j: tensor<2x3xi64>) -> tensor<2x3xi1> {
  %eq = mlx.equal %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xi1>
  %ne = mlx.not_equal %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi1>
  %lt = mlx.less %x, %row : tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xi1>
  %le = mlx.less_equal %j, %i : tensor<2x3xi64>, tensor<3xi64> -> tensor<2x3xi1>
  %gt = mlx.greater %x, %x : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xi1>
  %ge = mlx.greater_equal %j, %j : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %and = mlx.logical_and %ne, %le : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %or = mlx.logical_or %lt, %eq : tensor<2x?xi1>, tensor<2x?xi1> -> tensor<2x?xi1>
  func.return %and : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @binary_bitwise(
// CHECK-SAME: %a: tensor<4x8xui32>, %b: tensor<8xui32>, %p: tensor<4xi1>, %q: tensor<4xi1>, %i: tensor<?xi16>) -> tensor<4x8xui32> {
// CHECK-NEXT: %band = mlx.bitwise_and %a, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
// CHECK-NEXT: %bor = mlx.bitwise_or %p, %q : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT: %bxor = mlx.bitwise_xor %i, %i : tensor<?xi16>, tensor<?xi16> -> tensor<?xi16>
// CHECK-NEXT: %shl = mlx.left_shift %a, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
// CHECK-NEXT: %shr = mlx.right_shift %band, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
// CHECK-NEXT: func.return %shr : tensor<4x8xui32>
// CHECK-NEXT: }
func.func @binary_bitwise(%a: tensor<4x8xui32>, %b: tensor<8xui32>, %p: tensor<4xi1>, %q: tensor<4xi1>, %i: tensor<?xi16>) -> tensor<4x8xui32> {
  %band = mlx.bitwise_and %a, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
  %bor = mlx.bitwise_or %p, %q : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %bxor = mlx.bitwise_xor %i, %i : tensor<?xi16>, tensor<?xi16> -> tensor<?xi16>
  %shl = mlx.left_shift %a, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
  %shr = mlx.right_shift %band, %b : tensor<4x8xui32>, tensor<8xui32> -> tensor<4x8xui32>
  func.return %shr : tensor<4x8xui32>
}

// CHECK-LABEL: func.func @astype_where(
// CHECK-SAME: %x: tensor<2x?xf32>, %c: tensor<2x1xi1>, %y: tensor<?xf32>, %i: tensor<?xi32>) -> tensor<2x?xf16> {
// CHECK-NEXT: %h = mlx.astype %x : tensor<2x?xf32> -> tensor<2x?xf16>
// CHECK-NEXT: %f = mlx.astype %i : tensor<?xi32> -> tensor<?xf32>
// CHECK-NEXT: %b = mlx.astype %i : tensor<?xi32> -> tensor<?xi1>
// CHECK-NEXT: %bits = mlx.view %x : tensor<2x?xf32> -> tensor<2x?xi32>
// CHECK-NEXT: %halves = mlx.view %h : tensor<2x?xf16> -> tensor<2x?xbf16>
// CHECK-NEXT: %w = mlx.where %c, %x, %y : tensor<2x1xi1>, tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %w2 = mlx.where %b, %f, %y : tensor<?xi1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: func.return %h : tensor<2x?xf16>
// CHECK-NEXT: }
func.func @astype_where(%x: tensor<2x?xf32>, %c: tensor<2x1xi1>, %y: tensor<?xf32>, %i: tensor<?xi32>) -> tensor<2x?xf16> {
  %h = mlx.astype %x : tensor<2x?xf32> -> tensor<2x?xf16>
  %f = mlx.astype %i : tensor<?xi32> -> tensor<?xf32>
  %b = mlx.astype %i : tensor<?xi32> -> tensor<?xi1>
  %bits = mlx.view %x : tensor<2x?xf32> -> tensor<2x?xi32>
  %halves = mlx.view %h : tensor<2x?xf16> -> tensor<2x?xbf16>
  %w = mlx.where %c, %x, %y : tensor<2x1xi1>, tensor<2x?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  %w2 = mlx.where %b, %f, %y : tensor<?xi1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %h : tensor<2x?xf16>
}

// Elementwise ops are Pure: canonicalize drops the dead one and cse merges the twins.
// CANON-LABEL: func.func @pure_elementwise(
// CANON-NEXT:    %e = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
// CANON-NEXT:    %s = mlx.add %e, %e : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CANON-NEXT:    func.return %s : tensor<4xf32>
// CHECK-LABEL: func.func @pure_elementwise(
// CHECK-SAME: %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %e = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %e2 = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %dead = mlx.log %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %s = mlx.add %e, %e2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: func.return %s : tensor<4xf32>
// CHECK-NEXT: }
func.func @pure_elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
  %e2 = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
  %dead = mlx.log %x : tensor<4xf32> -> tensor<4xf32>
  %s = mlx.add %e, %e2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
