// fuse-layer-norm: the LayerNorm decomposition over the last axis,
// (x - mean(x)) * rsqrt(mean((x - mean(x))²) + eps) or (x - mean(x)) / sqrt(...),
// -> mlx.layer_norm(x) (weight and bias join it through fold-norm-affine). The pass
// alone leaves the decomposition, now unused, to dce.
// RUN: mlx-opt %s -p fuse-layer-norm | filecheck %s

// rsqrt on the left of the multiply, a dynamic dim, the variance's axis given as 2.
// CHECK-LABEL: func.func @rsqrt_form(%x: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [-1] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %sq = mlx.square %c : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
// CHECK-NEXT:    %n = mlx.layer_norm %x eps 9.9999997473787516e-06 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT:    func.return %n : tensor<2x?x8xf32>
// CHECK-NEXT:  }
func.func @rsqrt_form(%x: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %c = mlx.subtract %x, %mu : tensor<2x?x8xf32>, tensor<2x?x1xf32> -> tensor<2x?x8xf32>
  %sq = mlx.square %c : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %var = mlx.mean %sq axes [2] keepdims : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<2x?x1xf32>, tensor<f32> -> tensor<2x?x1xf32>
  %r = mlx.rsqrt %s : tensor<2x?x1xf32> -> tensor<2x?x1xf32>
  %n = mlx.multiply %r, %c : tensor<2x?x1xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %n : tensor<2x?x8xf32>
}

// Divided by sqrt, the square as ** 2, f16 (eps is the f16 constant's value).
// CHECK-LABEL: func.func @sqrt_form(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf16>, tensor<4x1xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    %two = mlx.constant dense<2.000000e+00> : tensor<f16>
// CHECK-NEXT:    %sq = mlx.power %c, %two : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %eps = mlx.constant dense<1.001360e-05> : tensor<f16>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<4x1xf16>, tensor<f16> -> tensor<4x1xf16>
// CHECK-NEXT:    %r = mlx.sqrt %s : tensor<4x1xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %n = mlx.layer_norm %x eps 1.0013580322265625e-05 : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    func.return %n : tensor<4x8xf16>
// CHECK-NEXT:  }
func.func @sqrt_form(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %mu = mlx.mean %x axes [1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
  %c = mlx.subtract %x, %mu : tensor<4x8xf16>, tensor<4x1xf16> -> tensor<4x8xf16>
  %two = mlx.constant dense<2.0> : tensor<f16>
  %sq = mlx.power %c, %two : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf16> -> tensor<4x1xf16>
  %eps = mlx.constant dense<1.0e-05> : tensor<f16>
  %s = mlx.add %var, %eps : tensor<4x1xf16>, tensor<f16> -> tensor<4x1xf16>
  %r = mlx.sqrt %s : tensor<4x1xf16> -> tensor<4x1xf16>
  %n = mlx.divide %c, %r : tensor<4x8xf16>, tensor<4x1xf16> -> tensor<4x8xf16>
  func.return %n : tensor<4x8xf16>
}

// x - mean(x) computed twice (before CSE) is still one centered value.
// CHECK-LABEL: func.func @centered_twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %c2 = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.multiply %c2, %c2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.layer_norm %x eps 9.9999997473787516e-06 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @centered_twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %c2 = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %sq = mlx.multiply %c2, %c2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// Kept: the means are over axis 0, not the last axis.
// CHECK-LABEL: func.func @wrong_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<1x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @wrong_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mu = mlx.mean %x axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %r = mlx.rsqrt %s : tensor<1x8xf32> -> tensor<1x8xf32>
  %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// Kept: x minus the mean of another value.
// CHECK-LABEL: func.func @mean_of_other(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %z axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @mean_of_other(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mu = mlx.mean %z axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// Kept: the variance is of x², not of the centered x.
// CHECK-LABEL: func.func @uncentered_variance(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @uncentered_variance(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %sq = mlx.square %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// Kept: multiplied by sqrt, divided by rsqrt.
// CHECK-LABEL: func.func @root_mismatch(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %eps = mlx.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %sqrt = mlx.sqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %a = mlx.multiply %c, %sqrt : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %rsqrt = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %b = mlx.divide %c, %rsqrt : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @root_mismatch(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = mlx.constant dense<1.0e-05> : tensor<f32>
  %s = mlx.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %sqrt = mlx.sqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %a = mlx.multiply %c, %sqrt : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %rsqrt = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %b = mlx.divide %c, %rsqrt : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// Kept: eps is no constant.
// CHECK-LABEL: func.func @eps_not_constant(%x: tensor<4x8xf32>, %e: tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %s = mlx.add %var, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @eps_not_constant(%x: tensor<4x8xf32>, %e: tensor<f32>) -> tensor<4x8xf32> {
  %mu = mlx.mean %x axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = mlx.subtract %x, %mu : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %sq = mlx.square %c : tensor<4x8xf32> -> tensor<4x8xf32>
  %var = mlx.mean %sq axes [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %s = mlx.add %var, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = mlx.rsqrt %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = mlx.multiply %c, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}
