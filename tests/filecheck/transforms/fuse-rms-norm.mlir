// fuse-rms-norm: the RMSNorm decomposition, x * rsqrt(mean(x², -1, keepdims) + eps)
// (x² as square, x * x or x ** 2; HF's casts around it allowed), times a per-feature
// weight of the result's dtype -> mlx.rms_norm(x, w) in the input's dtype. The pass
// alone leaves the decomposition, now unused, to dce.
// RUN: mlx-opt %s -p fuse-rms-norm | filecheck %s

// x * rsqrt(mean(x ** 2, -1) + eps) * w, with a dynamic dim; eps is the f32 constant's value.
// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %two = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xf32> eps 9.9999999747524271e-07 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x?x8xf32>
// CHECK-NEXT:  }
func.func @rms_norm(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %two = mlx.constant dense<2.0> : tensor<f32>
  %sq = mlx.power %x, %two : tensor<2x?x8xf32>, tensor<f32> -> tensor<2x?x8xf32>
  %mean = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = mlx.constant dense<1.0e-06> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = mlx.multiply %x, %r : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x?x8xf32>, tensor<8xf32> -> tensor<2x?x8xf32>
  func.return %y : tensor<2x?x8xf32>
}

// HF's bf16 form: the upcast to f32 and the cast back around the normalization, the
// weight on the left; the fused op runs in the input's dtype.
// CHECK-LABEL: func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK-NEXT:    %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %back = mlx.astype %n : tensor<2x8xf32> -> tensor<2x8xbf16>
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xbf16> eps 9.9999997473787516e-06 : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    func.return %y : tensor<2x8xbf16>
// CHECK-NEXT:  }
func.func @hf_rms_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
  %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %back = mlx.astype %n : tensor<2x8xf32> -> tensor<2x8xbf16>
  %y = mlx.multiply %w, %back : tensor<8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %y : tensor<2x8xbf16>
}

// x * x as the square, rsqrt on the left of the multiply, f16 throughout.
// CHECK-LABEL: func.func @x_times_x(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %sq = mlx.multiply %x, %x : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %eps = mlx.constant dense<1.001360e-05> : tensor<f16>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<4x1xf16>, tensor<f16> -> tensor<4x1xf16>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<4x1xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %n = mlx.multiply %r, %x : tensor<4x1xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    %y = mlx.rms_norm %x weight %w : tensor<8xf16> eps 1.0013580322265625e-05 : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    func.return %y : tensor<4x8xf16>
// CHECK-NEXT:  }
func.func @x_times_x(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> tensor<4x8xf16> {
  %sq = mlx.multiply %x, %x : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %mean = mlx.mean %sq axes [1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
  %eps = mlx.constant dense<1.0e-05> : tensor<f16>
  %sum = mlx.add %mean, %eps : tensor<4x1xf16>, tensor<f16> -> tensor<4x1xf16>
  %r = mlx.rsqrt %sum : tensor<4x1xf16> -> tensor<4x1xf16>
  %n = mlx.multiply %r, %x : tensor<4x1xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %y = mlx.multiply %n, %w : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// Kept: the mean is over axis 0, not the last axis.
// CHECK-LABEL: func.func @wrong_axis(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<1x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @wrong_axis(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %mean = mlx.mean %sq axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %r = mlx.rsqrt %sum : tensor<1x8xf32> -> tensor<1x8xf32>
  %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// Kept: the mean is of z², not of x².
// CHECK-LABEL: func.func @square_of_other(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %sq = mlx.square %z : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @square_of_other(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = mlx.square %z : tensor<4x8xf32> -> tensor<4x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// Kept: eps is no constant.
// CHECK-LABEL: func.func @eps_not_constant(%x: tensor<4x8xf32>, %e: tensor<f32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %sum = mlx.add %mean, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @eps_not_constant(%x: tensor<4x8xf32>, %e: tensor<f32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %sum = mlx.add %mean, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// Kept: the weight is [4, 8], not one value per feature, and a scalar factor is no
// weight either.
// CHECK-LABEL: func.func @weight_not_per_feature(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %two = mlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %s = mlx.multiply %n, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @weight_not_per_feature(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %sum : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = mlx.multiply %n, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %two = mlx.constant dense<2.0> : tensor<f32>
  %s = mlx.multiply %n, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// Kept: the input is bf16 and the result f32; the fused op would have the input's dtype.
// CHECK-LABEL: func.func @dtype_mismatch(%x: tensor<2x8xbf16>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK-NEXT:    %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @dtype_mismatch(%x: tensor<2x8xbf16>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %h = mlx.astype %x : tensor<2x8xbf16> -> tensor<2x8xf32>
  %sq = mlx.square %h : tensor<2x8xf32> -> tensor<2x8xf32>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %sum = mlx.add %mean, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %r = mlx.rsqrt %sum : tensor<2x1xf32> -> tensor<2x1xf32>
  %n = mlx.multiply %h, %r : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = mlx.multiply %n, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// Kept: the norm is computed on a lossy cast (f32 -> f16): there x² overflows past
// |x| = 256 and the result is 0, which an f32 rms_norm would not give.
// CHECK-LABEL: func.func @downcast_inside(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    %h = mlx.astype %x : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT:    %sq = mlx.square %h : tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf16> -> tensor<2x1xf16>
// CHECK-NEXT:    %eps = mlx.constant dense<1.001360e-05> : tensor<f16>
// CHECK-NEXT:    %sum = mlx.add %mean, %eps : tensor<2x1xf16>, tensor<f16> -> tensor<2x1xf16>
// CHECK-NEXT:    %r = mlx.rsqrt %sum : tensor<2x1xf16> -> tensor<2x1xf16>
// CHECK-NEXT:    %n = mlx.multiply %h, %r : tensor<2x8xf16>, tensor<2x1xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    %back = mlx.astype %n : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT:    %y = mlx.multiply %back, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x8xf32>
// CHECK-NEXT:  }
func.func @downcast_inside(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %h = mlx.astype %x : tensor<2x8xf32> -> tensor<2x8xf16>
  %sq = mlx.square %h : tensor<2x8xf16> -> tensor<2x8xf16>
  %mean = mlx.mean %sq axes [-1] keepdims : tensor<2x8xf16> -> tensor<2x1xf16>
  %eps = mlx.constant dense<1.0e-05> : tensor<f16>
  %sum = mlx.add %mean, %eps : tensor<2x1xf16>, tensor<f16> -> tensor<2x1xf16>
  %r = mlx.rsqrt %sum : tensor<2x1xf16> -> tensor<2x1xf16>
  %n = mlx.multiply %h, %r : tensor<2x8xf16>, tensor<2x1xf16> -> tensor<2x8xf16>
  %back = mlx.astype %n : tensor<2x8xf16> -> tensor<2x8xf32>
  %y = mlx.multiply %back, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
