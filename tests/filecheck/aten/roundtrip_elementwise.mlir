// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// Custom and generic round trips of the elementwise ops: the unary and binary
// tables, gelu, where, clamp and _to_copy. Scalars are arith.constant values;
// results broadcast and promote as the importer decides.

// CHECK-LABEL: func.func @unary_same(%x: tensor<2x?x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %abs = aten.abs %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %abs_int = aten.abs %i : tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    %neg = aten.neg %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sign = aten.sign %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %square = aten.square %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %relu = aten.relu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %floor = aten.floor %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %ceil = aten.ceil %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %round = aten.round %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %trunc = aten.trunc %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %clone = aten.clone %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %relu : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @unary_same(%x: tensor<2x?x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CANON:         func.return %relu : tensor<2x?x8xf32>
func.func @unary_same(%x: tensor<2x?x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
  %abs = aten.abs %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %abs_int = aten.abs %i : tensor<4xi64> -> tensor<4xi64>
  %neg = aten.neg %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %sign = aten.sign %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %square = aten.square %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %relu = aten.relu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %floor = aten.floor %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %ceil = aten.ceil %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %round = aten.round %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %trunc = aten.trunc %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %clone = aten.clone %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %relu : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @unary_float(%x: tensor<2x?x8xf32>, %h: tensor<4x?xbf16>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %exp = aten.exp %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %expm1 = aten.expm1 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %log = aten.log %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %log1p = aten.log1p %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %log2 = aten.log2 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %log10 = aten.log10 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sqrt = aten.sqrt %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sqrt_int = aten.sqrt %i : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %rsqrt = aten.rsqrt %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
// CHECK-NEXT:    %sin = aten.sin %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %cos = aten.cos %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %tan = aten.tan %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %asin = aten.asin %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %acos = aten.acos %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %atan = aten.atan %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sinh = aten.sinh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %cosh = aten.cosh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %tanh = aten.tanh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %asinh = aten.asinh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %acosh = aten.acosh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %atanh = aten.atanh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sigmoid = aten.sigmoid %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
// CHECK-NEXT:    %erf = aten.erf %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %erfinv = aten.erfinv %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
// CHECK-NEXT:    %erfc = aten.erfc %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %exp2 = aten.exp2 %i : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %lgamma = aten.lgamma %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
// CHECK-NEXT:    %digamma = aten.digamma %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %reciprocal = aten.reciprocal %i : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %silu = aten.silu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %gelu = aten.gelu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %gelu_tanh = aten.gelu %h approximate "tanh" : tensor<4x?xbf16> -> tensor<4x?xbf16>
// CHECK-NEXT:    %gelu_none = aten.gelu %x approximate "none" : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %gelu : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @unary_float(%x: tensor<2x?x8xf32>, %h: tensor<4x?xbf16>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CANON:         func.return %gelu : tensor<2x?x8xf32>
func.func @unary_float(%x: tensor<2x?x8xf32>, %h: tensor<4x?xbf16>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
  %exp = aten.exp %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %expm1 = aten.expm1 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %log = aten.log %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %log1p = aten.log1p %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %log2 = aten.log2 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %log10 = aten.log10 %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %sqrt = aten.sqrt %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %sqrt_int = aten.sqrt %i : tensor<4xi64> -> tensor<4xf32>
  %rsqrt = aten.rsqrt %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
  %sin = aten.sin %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %cos = aten.cos %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %tan = aten.tan %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %asin = aten.asin %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %acos = aten.acos %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %atan = aten.atan %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %sinh = aten.sinh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %cosh = aten.cosh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %tanh = aten.tanh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %asinh = aten.asinh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %acosh = aten.acosh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %atanh = aten.atanh %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %sigmoid = aten.sigmoid %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
  %erf = aten.erf %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %erfinv = aten.erfinv %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
  %erfc = aten.erfc %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %exp2 = aten.exp2 %i : tensor<4xi64> -> tensor<4xf32>
  %lgamma = aten.lgamma %h : tensor<4x?xbf16> -> tensor<4x?xbf16>
  %digamma = aten.digamma %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %reciprocal = aten.reciprocal %i : tensor<4xi64> -> tensor<4xf32>
  %silu = aten.silu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %gelu = aten.gelu %x : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %gelu_tanh = aten.gelu %h approximate "tanh" : tensor<4x?xbf16> -> tensor<4x?xbf16>
  %gelu_none = aten.gelu %x approximate "none" : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %gelu : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @unary_bool_and_bits(%x: tensor<2x?x8xf32>, %b: tensor<?x?xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
// CHECK-NEXT:    %not = aten.logical_not %b : tensor<?x?xi1> -> tensor<?x?xi1>
// CHECK-NEXT:    %not_float = aten.logical_not %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %isnan = aten.isnan %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %signbit = aten.signbit %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %isinf = aten.isinf %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %bnot = aten.bitwise_not %i : tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    %bnot_bool = aten.bitwise_not %b : tensor<?x?xi1> -> tensor<?x?xi1>
// CHECK-NEXT:    func.return %isnan : tensor<2x?x8xi1>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @unary_bool_and_bits(%x: tensor<2x?x8xf32>, %b: tensor<?x?xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
// CANON:         func.return %isnan : tensor<2x?x8xi1>
func.func @unary_bool_and_bits(%x: tensor<2x?x8xf32>, %b: tensor<?x?xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
  %not = aten.logical_not %b : tensor<?x?xi1> -> tensor<?x?xi1>
  %not_float = aten.logical_not %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
  %isnan = aten.isnan %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
  %signbit = aten.signbit %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
  %isinf = aten.isinf %x : tensor<2x?x8xf32> -> tensor<2x?x8xi1>
  %bnot = aten.bitwise_not %i : tensor<4xi64> -> tensor<4xi64>
  %bnot_bool = aten.bitwise_not %b : tensor<?x?xi1> -> tensor<?x?xi1>
  func.return %isnan : tensor<2x?x8xi1>
}

// CHECK-LABEL: func.func @binary_arith(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %z: tensor<?x1x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %three = arith.constant 3 : i64
// CHECK-NEXT:    %add = aten.add %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %add_alpha = aten.add %x, %z alpha 5.000000e-01 : tensor<2x?x8xf32>, tensor<?x1x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %add_scalar = aten.add %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sub = aten.sub %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sub_alpha = aten.sub %i, %three alpha 2.000000e+00 : tensor<4xi64>, i64 -> tensor<4xi64>
// CHECK-NEXT:    %mul = aten.mul %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %mul_promote = aten.mul %i, %two : tensor<4xi64>, f64 -> tensor<4xf32>
// CHECK-NEXT:    %div = aten.div %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %div_int = aten.div %i, %three : tensor<4xi64>, i64 -> tensor<4xf32>
// CHECK-NEXT:    %div_floor = aten.div %i, %three rounding_mode "floor" : tensor<4xi64>, i64 -> tensor<4xi64>
// CHECK-NEXT:    %div_trunc = aten.div %x, %two rounding_mode "trunc" : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %pow = aten.pow %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %maximum = aten.maximum %x, %z : tensor<2x?x8xf32>, tensor<?x1x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %minimum = aten.minimum %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %remainder = aten.remainder %i, %three : tensor<4xi64>, i64 -> tensor<4xi64>
// CHECK-NEXT:    %fmod = aten.fmod %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %floor_divide = aten.floor_divide %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    %atan2 = aten.atan2 %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %atan2_int = aten.atan2 %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %hypot = aten.hypot %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %copysign = aten.copysign %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT:    %fmax = aten.fmax %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %fmin = aten.fmin %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    func.return %add : tensor<2x?x8xf32>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @binary_arith(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %z: tensor<?x1x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
// CANON:         func.return %add : tensor<2x?x8xf32>
func.func @binary_arith(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %z: tensor<?x1x8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
  %two = arith.constant 2.000000e+00 : f64
  %three = arith.constant 3 : i64
  %add = aten.add %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %add_alpha = aten.add %x, %z alpha 5.000000e-01 : tensor<2x?x8xf32>, tensor<?x1x8xf32> -> tensor<2x?x8xf32>
  %add_scalar = aten.add %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %sub = aten.sub %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %sub_alpha = aten.sub %i, %three alpha 2.000000e+00 : tensor<4xi64>, i64 -> tensor<4xi64>
  %mul = aten.mul %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %mul_promote = aten.mul %i, %two : tensor<4xi64>, f64 -> tensor<4xf32>
  %div = aten.div %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %div_int = aten.div %i, %three : tensor<4xi64>, i64 -> tensor<4xf32>
  %div_floor = aten.div %i, %three rounding_mode "floor" : tensor<4xi64>, i64 -> tensor<4xi64>
  %div_trunc = aten.div %x, %two rounding_mode "trunc" : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %pow = aten.pow %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %maximum = aten.maximum %x, %z : tensor<2x?x8xf32>, tensor<?x1x8xf32> -> tensor<2x?x8xf32>
  %minimum = aten.minimum %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %remainder = aten.remainder %i, %three : tensor<4xi64>, i64 -> tensor<4xi64>
  %fmod = aten.fmod %x, %two : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %floor_divide = aten.floor_divide %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %atan2 = aten.atan2 %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %atan2_int = aten.atan2 %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
  %hypot = aten.hypot %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %copysign = aten.copysign %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
  %fmax = aten.fmax %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %fmin = aten.fmin %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return %add : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @binary_compare_and_logic(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %b: tensor<2x?x8xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %true = arith.constant true
// CHECK-NEXT:    %eq = aten.eq %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %ne = aten.ne %x, %zero : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xi1>
// CHECK-NEXT:    %lt = aten.lt %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %le = aten.le %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %gt = aten.gt %x, %zero : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xi1>
// CHECK-NEXT:    %ge = aten.ge %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
// CHECK-NEXT:    %and = aten.logical_and %b, %eq : tensor<2x?x8xi1>, tensor<2x?x8xi1> -> tensor<2x?x8xi1>
// CHECK-NEXT:    %or = aten.logical_or %b, %true : tensor<2x?x8xi1>, i1 -> tensor<2x?x8xi1>
// CHECK-NEXT:    %xor = aten.logical_xor %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
// CHECK-NEXT:    func.return %and : tensor<2x?x8xi1>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @binary_compare_and_logic(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %b: tensor<2x?x8xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
// CANON:         func.return %and : tensor<2x?x8xi1>
func.func @binary_compare_and_logic(%x: tensor<2x?x8xf32>, %y: tensor<8xf32>, %b: tensor<2x?x8xi1>, %i: tensor<4xi64>) -> tensor<2x?x8xi1> {
  %zero = arith.constant 0.000000e+00 : f64
  %true = arith.constant true
  %eq = aten.eq %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
  %ne = aten.ne %x, %zero : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xi1>
  %lt = aten.lt %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
  %le = aten.le %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
  %gt = aten.gt %x, %zero : tensor<2x?x8xf32>, f64 -> tensor<2x?x8xi1>
  %ge = aten.ge %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  %and = aten.logical_and %b, %eq : tensor<2x?x8xi1>, tensor<2x?x8xi1> -> tensor<2x?x8xi1>
  %or = aten.logical_or %b, %true : tensor<2x?x8xi1>, i1 -> tensor<2x?x8xi1>
  %xor = aten.logical_xor %x, %y : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xi1>
  func.return %and : tensor<2x?x8xi1>
}

// CHECK-LABEL: func.func @binary_bitwise(%i: tensor<4x?xi64>, %j: tensor<?xi64>, %b: tensor<4x?xi1>) -> tensor<4x?xi64> {
// CHECK-NEXT:    %one = arith.constant 1 : i64
// CHECK-NEXT:    %and = aten.bitwise_and %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
// CHECK-NEXT:    %and_bool = aten.bitwise_and %b, %b : tensor<4x?xi1>, tensor<4x?xi1> -> tensor<4x?xi1>
// CHECK-NEXT:    %or = aten.bitwise_or %i, %one : tensor<4x?xi64>, i64 -> tensor<4x?xi64>
// CHECK-NEXT:    %xor = aten.bitwise_xor %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
// CHECK-NEXT:    %shl = aten.bitwise_left_shift %i, %one : tensor<4x?xi64>, i64 -> tensor<4x?xi64>
// CHECK-NEXT:    %shr = aten.bitwise_right_shift %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
// CHECK-NEXT:    func.return %shl : tensor<4x?xi64>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @binary_bitwise(%i: tensor<4x?xi64>, %j: tensor<?xi64>, %b: tensor<4x?xi1>) -> tensor<4x?xi64> {
// CANON:         func.return %shl : tensor<4x?xi64>
func.func @binary_bitwise(%i: tensor<4x?xi64>, %j: tensor<?xi64>, %b: tensor<4x?xi1>) -> tensor<4x?xi64> {
  %one = arith.constant 1 : i64
  %and = aten.bitwise_and %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
  %and_bool = aten.bitwise_and %b, %b : tensor<4x?xi1>, tensor<4x?xi1> -> tensor<4x?xi1>
  %or = aten.bitwise_or %i, %one : tensor<4x?xi64>, i64 -> tensor<4x?xi64>
  %xor = aten.bitwise_xor %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
  %shl = aten.bitwise_left_shift %i, %one : tensor<4x?xi64>, i64 -> tensor<4x?xi64>
  %shr = aten.bitwise_right_shift %i, %j : tensor<4x?xi64>, tensor<?xi64> -> tensor<4x?xi64>
  func.return %shl : tensor<4x?xi64>
}

// CHECK-LABEL: func.func @select_clamp_convert(%x: tensor<2x?x8xf32>, %c: tensor<?x1xi1>, %lo: tensor<8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf16> {
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %six = arith.constant 6.000000e+00 : f64
// CHECK-NEXT:    %lim = arith.constant 10 : i64
// CHECK-NEXT:    %where = aten.where %c, %x, %lo : tensor<?x1xi1>, tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %where_scalar = aten.where %c, %x, %zero : tensor<?x1xi1>, tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
// CHECK-NEXT:    %where_scalars = aten.where %c, %six, %zero : tensor<?x1xi1>, f64, f64 -> tensor<?x1xf32>
// CHECK-NEXT:    %clamp = aten.clamp %x min %zero : f64 max %six : f64 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %clamp_min = aten.clamp %x min %lo : tensor<8xf32> : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %clamp_max = aten.clamp %x max %t : tensor<f32> : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %clamp_int = aten.clamp %x max %lim : i64 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %half = aten._to_copy %clamp : tensor<2x?x8xf32> -> tensor<2x?x8xf16>
// CHECK-NEXT:    %to_int = aten._to_copy %x : tensor<2x?x8xf32> -> tensor<2x?x8xi32>
// CHECK-NEXT:    func.return %half : tensor<2x?x8xf16>
// CHECK-NEXT:  }
// CANON-LABEL: func.func @select_clamp_convert(%x: tensor<2x?x8xf32>, %c: tensor<?x1xi1>, %lo: tensor<8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf16> {
// CANON:         func.return %half : tensor<2x?x8xf16>
func.func @select_clamp_convert(%x: tensor<2x?x8xf32>, %c: tensor<?x1xi1>, %lo: tensor<8xf32>, %t: tensor<f32>) -> tensor<2x?x8xf16> {
  %zero = arith.constant 0.000000e+00 : f64
  %six = arith.constant 6.000000e+00 : f64
  %lim = arith.constant 10 : i64
  %where = aten.where %c, %x, %lo : tensor<?x1xi1>, tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  %where_scalar = aten.where %c, %x, %zero : tensor<?x1xi1>, tensor<2x?x8xf32>, f64 -> tensor<2x?x8xf32>
  %where_scalars = aten.where %c, %six, %zero : tensor<?x1xi1>, f64, f64 -> tensor<?x1xf32>
  %clamp = aten.clamp %x min %zero : f64 max %six : f64 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %clamp_min = aten.clamp %x min %lo : tensor<8xf32> : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %clamp_max = aten.clamp %x max %t : tensor<f32> : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %clamp_int = aten.clamp %x max %lim : i64 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %half = aten._to_copy %clamp : tensor<2x?x8xf32> -> tensor<2x?x8xf16>
  %to_int = aten._to_copy %x : tensor<2x?x8xf32> -> tensor<2x?x8xi32>
  func.return %half : tensor<2x?x8xf16>
}
