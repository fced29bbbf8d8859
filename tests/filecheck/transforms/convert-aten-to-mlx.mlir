// convert-aten-to-mlx: every aten op lowered to mlx ops, one by one, nothing else (no
// folding, no CSE); the pass fails naming any aten op it cannot lower (those cases are
// in conversions/aten_to_mlx_errors.mlir, more lowerings in conversions/).
// RUN: mlx-opt %s -p convert-aten-to-mlx | filecheck %s

// linear(x, w, b) = x @ w.T + b.
// CHECK-LABEL: func.func @linear(%x: tensor<2x?x64xf32>, %w: tensor<128x64xf32>, %b: tensor<128xf32>) -> tensor<2x?x128xf32> {
// CHECK-NEXT:    %y = mlx.transpose %w [1, 0] : tensor<128x64xf32> -> tensor<64x128xf32>
// CHECK-NEXT:    %y_1 = mlx.matmul %x, %y : tensor<2x?x64xf32>, tensor<64x128xf32> -> tensor<2x?x128xf32>
// CHECK-NEXT:    %y_2 = mlx.add %y_1, %b : tensor<2x?x128xf32>, tensor<128xf32> -> tensor<2x?x128xf32>
// CHECK-NEXT:    func.return %y_2 : tensor<2x?x128xf32>
// CHECK-NEXT:  }
func.func @linear(%x: tensor<2x?x64xf32>, %w: tensor<128x64xf32>, %b: tensor<128xf32>) -> tensor<2x?x128xf32> {
  %y = aten.linear %x, %w bias %b : tensor<128xf32> : tensor<2x?x64xf32>, tensor<128x64xf32> -> tensor<2x?x128xf32>
  func.return %y : tensor<2x?x128xf32>
}

// layer_norm keeps weight, bias and eps; softmax's negative dim becomes a positive axis.
// CHECK-LABEL: func.func @norms(%x: tensor<2x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x?x64xf32>, tensor<2x?x64xf32>) {
// CHECK-NEXT:    %ln = mlx.layer_norm %x weight %g : tensor<64xf32> bias %b : tensor<64xf32> eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    %sm = mlx.softmax %x axes [2] : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
// CHECK-NEXT:    func.return %ln, %sm : tensor<2x?x64xf32>, tensor<2x?x64xf32>
// CHECK-NEXT:  }
func.func @norms(%x: tensor<2x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x?x64xf32>, tensor<2x?x64xf32>) {
  %ln = aten.layer_norm %x weight %g : tensor<64xf32> bias %b : tensor<64xf32> normalized_shape [64] eps 1.000000e-05 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %sm = aten.softmax %x dim -1 : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  func.return %ln, %sm : tensor<2x?x64xf32>, tensor<2x?x64xf32>
}

// permute -> transpose, _to_copy -> astype, mean's dims -> axes (non-negative).
// CHECK-LABEL: func.func @shapes_and_casts(%x: tensor<2x?x8xf32>) -> (tensor<2x8x?xf32>, tensor<2x?x8xf16>, tensor<2x?x1xf32>) {
// CHECK-NEXT:    %p = mlx.transpose %x [0, 2, 1] : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
// CHECK-NEXT:    %h = mlx.astype %x : tensor<2x?x8xf32> -> tensor<2x?x8xf16>
// CHECK-NEXT:    %m = mlx.mean %x axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    func.return %p, %h, %m : tensor<2x8x?xf32>, tensor<2x?x8xf16>, tensor<2x?x1xf32>
// CHECK-NEXT:  }
func.func @shapes_and_casts(%x: tensor<2x?x8xf32>) -> (tensor<2x8x?xf32>, tensor<2x?x8xf16>, tensor<2x?x1xf32>) {
  %p = aten.permute %x [0, 2, 1] : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
  %h = aten._to_copy %x : tensor<2x?x8xf32> -> tensor<2x?x8xf16>
  %m = aten.mean %x dims [-1] keepdim : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  func.return %p, %h, %m : tensor<2x8x?xf32>, tensor<2x?x8xf16>, tensor<2x?x1xf32>
}

// embedding -> take along axis 0 of the table.
// CHECK-LABEL: func.func @embedding(%w: tensor<100x16xbf16>, %ids: tensor<2x?xi64>) -> tensor<2x?x16xbf16> {
// CHECK-NEXT:    %e = mlx.take %w, %ids axis 0 : tensor<100x16xbf16>, tensor<2x?xi64> -> tensor<2x?x16xbf16>
// CHECK-NEXT:    func.return %e : tensor<2x?x16xbf16>
// CHECK-NEXT:  }
func.func @embedding(%w: tensor<100x16xbf16>, %ids: tensor<2x?xi64>) -> tensor<2x?x16xbf16> {
  %e = aten.embedding %w, %ids : tensor<100x16xbf16>, tensor<2x?xi64> -> tensor<2x?x16xbf16>
  func.return %e : tensor<2x?x16xbf16>
}

// A view to the input's own shape becomes a reshape that stays (canonicalize removes it);
// a copy to the same dtype is no op at all.
// CHECK-LABEL: func.func @no_canonicalization(%x: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
// CHECK-NEXT:    %v = mlx.reshape %x [6, 4] : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %v, %x : tensor<6x4xf32>, tensor<6x4xf32>
// CHECK-NEXT:  }
func.func @no_canonicalization(%x: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %v = aten.view %x [6, 4] : tensor<6x4xf32> -> tensor<6x4xf32>
  %c = aten._to_copy %x : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return %v, %c : tensor<6x4xf32>, tensor<6x4xf32>
}

// Kept: mlx and arith ops pass through as they are, identities included.
// CHECK-LABEL: func.func @mlx_untouched(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, index) {
// CHECK-NEXT:    %a = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %b = mlx.transpose %a [0] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %m = arith.muli %n, %n : index
// CHECK-NEXT:    func.return %b, %m : tensor<4xf32>, index
// CHECK-NEXT:  }
func.func @mlx_untouched(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, index) {
  %a = mlx.astype %x : tensor<4xf32> -> tensor<4xf32>
  %b = mlx.transpose %a [0] : tensor<4xf32> -> tensor<4xf32>
  %m = arith.muli %n, %n : index
  func.return %b, %m : tensor<4xf32>, index
}

// Scalar operands become 0-d constants of the tensor's dtype (alpha scales the other
// operand); the arith scalars they came from are consumed and erased.
// CHECK-LABEL: func.func @scalars(%x: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xf16>, tensor<4xi64>) {
// CHECK-NEXT:    %a = mlx.constant dense<2.500000e+00> : tensor<f16>
// CHECK-NEXT:    %a_1 = mlx.multiply %x, %a : tensor<4xf16>, tensor<f16> -> tensor<4xf16>
// CHECK-NEXT:    %b = mlx.constant dense<3> : tensor<i64>
// CHECK-NEXT:    %b_1 = mlx.constant dense<2> : tensor<i64>
// CHECK-NEXT:    %b_2 = mlx.multiply %b, %b_1 : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NEXT:    %b_3 = mlx.subtract %i, %b_2 : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
// CHECK-NEXT:    func.return %a_1, %b_3 : tensor<4xf16>, tensor<4xi64>
// CHECK-NEXT:  }
func.func @scalars(%x: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xf16>, tensor<4xi64>) {
  %c = arith.constant 2.500000e+00 : f64
  %a = aten.mul %x, %c : tensor<4xf16>, f64 -> tensor<4xf16>
  %k = arith.constant 3 : i64
  %b = aten.sub %i, %k alpha 2.000000e+00 : tensor<4xi64>, i64 -> tensor<4xi64>
  func.return %a, %b : tensor<4xf16>, tensor<4xi64>
}

// An SDPA with the program's own mask keeps PyTorch's meaning for a fully masked row
// (zeros): the lowering marks it zero_masked_rows, which the kernel honours.
// CHECK-LABEL: func.func @sdpa_user_mask(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x4x8xf32>, %m: tensor<3x4xi1>) -> tensor<1x2x3x8xf32> {
// CHECK-NEXT:    %o = mlx.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x4xi1> scale 0.35355339059327373 zero_masked_rows : tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x3x8xf32>
// CHECK-NEXT:    func.return %o : tensor<1x2x3x8xf32>
// CHECK-NEXT:  }
func.func @sdpa_user_mask(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x4x8xf32>, %m: tensor<3x4xi1>) -> tensor<1x2x3x8xf32> {
  %o = aten.scaled_dot_product_attention %q, %k, %k mask %m : tensor<3x4xi1> : tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
}
