// fold-norm-affine: norm(x) * w -> norm(x, w) (rms_norm, or layer_norm without weight
// and bias) and layer_norm(x[, w]) + b -> layer_norm(x[, w], b), for a per-feature w/b
// (rank 1, the result's last dim and dtype) and a norm with no other user.
// RUN: mlx-opt %s -p fold-norm-affine | filecheck %s

// The weight on the left.
// CHECK-LABEL: func.func @rms_weight(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @rms_weight(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %y = mlx.multiply %w, %n : tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// Weight, then bias, step by step; a dynamic dim, bf16.
// CHECK-LABEL: func.func @layer_weight_bias(%x: tensor<2x?x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x?x8xbf16> {
// CHECK-NEXT:    %n = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
// CHECK-NEXT:    %y = mlx.layer_norm %x weight %w : tensor<8xbf16> eps 1.000000e-05 : tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
// CHECK-NEXT:    %z = mlx.layer_norm %x weight %w : tensor<8xbf16> bias %b : tensor<8xbf16> eps 1.000000e-05 : tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
// CHECK-NEXT:    func.return %z : tensor<2x?x8xbf16>
// CHECK-NEXT:  }
func.func @layer_weight_bias(%x: tensor<2x?x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x?x8xbf16> {
  %n = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x?x8xbf16> -> tensor<2x?x8xbf16>
  %y = mlx.multiply %n, %w : tensor<2x?x8xbf16>, tensor<8xbf16> -> tensor<2x?x8xbf16>
  %z = mlx.add %y, %b : tensor<2x?x8xbf16>, tensor<8xbf16> -> tensor<2x?x8xbf16>
  func.return %z : tensor<2x?x8xbf16>
}

// A bias alone (on the left of the add) joins a layer_norm without weight.
// CHECK-LABEL: func.func @layer_bias_only(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %n = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %z = mlx.layer_norm %x bias %b : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %z : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @layer_bias_only(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %z = mlx.add %b, %n : tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %z : tensor<2x8xf32>
}

// Kept: the norm is returned too; folding would compute it twice.
// CHECK-LABEL: func.func @norm_used_elsewhere(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
// CHECK-NEXT:    %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y, %n : tensor<2x8xf32>, tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @norm_used_elsewhere(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y, %n : tensor<2x8xf32>, tensor<2x8xf32>
}

// Kept: a second weight (on rms_norm or layer_norm with weight), a weight after a
// bias ((norm + b) * v is not norm * v + b), a second bias.
// CHECK-LABEL: func.func @already_affine(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
// CHECK-NEXT:    %r = mlx.rms_norm %x weight %w : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %a = mlx.multiply %r, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %l = mlx.layer_norm %x weight %w : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %b2 = mlx.multiply %l, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %lb = mlx.layer_norm %x bias %b : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %c = mlx.multiply %lb, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %lwb = mlx.layer_norm %x weight %w : tensor<8xf32> bias %b : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %d = mlx.add %lwb, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %a, %b2, %c, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @already_affine(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %r = mlx.rms_norm %x weight %w : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %a = mlx.multiply %r, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %l = mlx.layer_norm %x weight %w : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %b2 = mlx.multiply %l, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %lb = mlx.layer_norm %x bias %b : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %c = mlx.multiply %lb, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %lwb = mlx.layer_norm %x weight %w : tensor<8xf32> bias %b : tensor<8xf32> eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %d = mlx.add %lwb, %v : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %a, %b2, %c, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// Kept: rms_norm takes no bias.
// CHECK-LABEL: func.func @rms_plus_bias(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %z = mlx.add %n, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %z : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @rms_plus_bias(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %z = mlx.add %n, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %z : tensor<2x8xf32>
}

// Kept: a [2, 8] factor, a scalar factor, a [1] bias (broadcast, not per feature).
// CHECK-LABEL: func.func @not_per_feature(%x: tensor<2x8xf32>, %m: tensor<2x8xf32>, %s: tensor<f32>, %one: tensor<1xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
// CHECK-NEXT:    %n1 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %a = mlx.multiply %n1, %m : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %n2 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %b = mlx.multiply %n2, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
// CHECK-NEXT:    %n3 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %c = mlx.add %n3, %one : tensor<2x8xf32>, tensor<1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %a, %b, %c : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @not_per_feature(%x: tensor<2x8xf32>, %m: tensor<2x8xf32>, %s: tensor<f32>, %one: tensor<1xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %n1 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %a = mlx.multiply %n1, %m : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %n2 = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %b = mlx.multiply %n2, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %n3 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  %c = mlx.add %n3, %one : tensor<2x8xf32>, tensor<1xf32> -> tensor<2x8xf32>
  func.return %a, %b, %c : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// Kept: the norm [2, 1] broadcasts against w [8]; the norm is not the result's type.
// CHECK-LABEL: func.func @broadcasting_norm(%x: tensor<2x1xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<2x1xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @broadcasting_norm(%x: tensor<2x1xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x1xf32> -> tensor<2x1xf32>
  %y = mlx.multiply %n, %w : tensor<2x1xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// Kept: a cast between the norm and the weight.
// CHECK-LABEL: func.func @dtype_mismatch(%x: tensor<2x8xf16>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    %c = mlx.astype %n : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %c, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @dtype_mismatch(%x: tensor<2x8xf16>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = mlx.rms_norm %x eps 1.000000e-05 : tensor<2x8xf16> -> tensor<2x8xf16>
  %c = mlx.astype %n : tensor<2x8xf16> -> tensor<2x8xf32>
  %y = mlx.multiply %c, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
