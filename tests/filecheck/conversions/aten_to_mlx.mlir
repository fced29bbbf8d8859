// The lowering of representative aten ops, op by op (before canonicalization).
// RUN: mlx-opt %s -p convert-aten-to-mlx | filecheck %s

func.func @elementwise(%x: tensor<2x?xf16>, %i: tensor<2x?xi32>) -> (tensor<2x?xf16>, tensor<2x?xf32>, tensor<2x?xi1>) {
  %c = arith.constant 2.500000e+00 : f64
  %a = aten.add %x, %c alpha 2.000000e+00 : tensor<2x?xf16>, f64 -> tensor<2x?xf16>
  %d = aten.div %i, %c : tensor<2x?xi32>, f64 -> tensor<2x?xf32>
  %l = aten.lt %i, %c : tensor<2x?xi32>, f64 -> tensor<2x?xi1>
  func.return %a, %d, %l : tensor<2x?xf16>, tensor<2x?xf32>, tensor<2x?xi1>
}
func.func @shapes(%x: tensor<2x?x3xf32>) -> (tensor<2x?xf32>, tensor<2x?x3xf32>) {
  %v = aten.view %x [2, -1] : tensor<2x?x3xf32> -> tensor<2x?xf32>
  %s = aten.slice %x dim 1 [1, 9223372036854775807, 1] : tensor<2x?x3xf32> -> tensor<2x?x3xf32>
  func.return %v, %s : tensor<2x?xf32>, tensor<2x?x3xf32>
}
func.func @index(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x2xf32> {
  %r = aten.index %x[%i, %j] at [1, 2] : tensor<2x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}
func.func @causal(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x3x8xf32> {
  %o = aten.scaled_dot_product_attention %q, %k, %k is_causal : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
}

func.func @conv_transpose(%x: tensor<2x4x7xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x6x13xf32> {
  %r = aten.convolution %x, %w stride [2] padding [1] dilation [1] transposed groups 2 : tensor<2x4x7xf32>, tensor<4x3x3xf32> -> tensor<2x6x13xf32>
  func.return %r : tensor<2x6x13xf32>
}

// CHECK-LABEL: func.func @elementwise(%x: tensor<2x?xf16>, %i: tensor<2x?xi32>) -> (tensor<2x?xf16>, tensor<2x?xf32>, tensor<2x?xi1>) {
// CHECK-NEXT: %a = mlx.constant dense<2.500000e+00> : tensor<f16>
// CHECK-NEXT: %a_1 = mlx.constant dense<2.000000e+00> : tensor<f16>
// CHECK-NEXT: %a_2 = mlx.multiply %a, %a_1 : tensor<f16>, tensor<f16> -> tensor<f16>
// CHECK-NEXT: %a_3 = mlx.add %x, %a_2 : tensor<2x?xf16>, tensor<f16> -> tensor<2x?xf16>
// CHECK-NEXT: %d = mlx.astype %i : tensor<2x?xi32> -> tensor<2x?xf32>
// CHECK-NEXT: %d_1 = mlx.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT: %d_2 = mlx.divide %d, %d_1 : tensor<2x?xf32>, tensor<f32> -> tensor<2x?xf32>
// CHECK-NEXT: %l = mlx.astype %i : tensor<2x?xi32> -> tensor<2x?xf32>
// CHECK-NEXT: %l_1 = mlx.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT: %l_2 = mlx.less %l, %l_1 : tensor<2x?xf32>, tensor<f32> -> tensor<2x?xi1>
// CHECK-NEXT: func.return %a_3, %d_2, %l_2 : tensor<2x?xf16>, tensor<2x?xf32>, tensor<2x?xi1>
// CHECK-LABEL: func.func @shapes(%x: tensor<2x?x3xf32>) -> (tensor<2x?xf32>, tensor<2x?x3xf32>) {
// CHECK-NEXT: %v = mlx.dim %x axis 1 : tensor<2x?x3xf32>
// CHECK-NEXT: %v_1 = arith.constant 2 : index
// CHECK-NEXT: %v_2 = arith.muli %v_1, %v : index
// CHECK-NEXT: %v_3 = arith.constant 3 : index
// CHECK-NEXT: %v_4 = arith.muli %v_2, %v_3 : index
// CHECK-NEXT: %v_5 = arith.constant 2 : index
// CHECK-NEXT: %v_6 = arith.floordivsi %v_4, %v_5 : index
// CHECK-NEXT: %v_7 = mlx.reshape %x [2, %v_6] : tensor<2x?x3xf32> -> tensor<2x?xf32>
// CHECK-NEXT: %s = mlx.dim %x axis 1 : tensor<2x?x3xf32>
// CHECK-NEXT: %s_1 = mlx.dim %x axis 1 : tensor<2x?x3xf32>
// CHECK-NEXT: %s_2 = mlx.slice %x [0, 1, 0] to [2, %s, 3] step [1, 1, 1] : tensor<2x?x3xf32> -> tensor<2x?x3xf32>
// CHECK-NEXT: func.return %v_7, %s_2 : tensor<2x?xf32>, tensor<2x?x3xf32>
// CHECK-LABEL: func.func @index(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x2xf32> {
// CHECK-NEXT: %r = mlx.gather %x[%i, %j] axes [1, 2] slice_sizes [2, 1, 1] : tensor<2x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x1x1xf32>
// CHECK-NEXT: %r_1 = mlx.transpose %r [1, 0, 2, 3] : tensor<2x2x1x1xf32> -> tensor<2x2x1x1xf32>
// CHECK-NEXT: %r_2 = mlx.reshape %r_1 [2, 2] : tensor<2x2x1x1xf32> -> tensor<2x2xf32>
// CHECK-NEXT: func.return %r_2 : tensor<2x2xf32>
// CHECK-LABEL: func.func @causal(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x3x8xf32> {
// CHECK-NEXT: %o = mlx.dim %k axis 2 : tensor<1x2x?x8xf32>
// CHECK-NEXT: %o_1 = mlx.arange [0, 3, 1] : tensor<3xi64>
// CHECK-NEXT: %o_2 = mlx.arange [0, %o, 1] : tensor<?xi64>
// CHECK-NEXT: %o_3 = mlx.expand_dims %o_1 [1] : tensor<3xi64> -> tensor<3x1xi64>
// CHECK-NEXT: %o_4 = mlx.expand_dims %o_2 [0] : tensor<?xi64> -> tensor<1x?xi64>
// CHECK-NEXT: %o_5 = mlx.less_equal %o_4, %o_3 : tensor<1x?xi64>, tensor<3x1xi64> -> tensor<3x?xi1>
// CHECK-NEXT: %o_6 = mlx.scaled_dot_product_attention %q, %k, %k mask %o_5 : tensor<3x?xi1> scale 0.35355339059327373 : tensor<1x2x3x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x3x8xf32>
// CHECK-NEXT: func.return %o_6 : tensor<1x2x3x8xf32>

// A transposed convolution: the input dilated by the stride, the kernel flipped and
// its groups regrouped to [out, in/g, k].
// CHECK-LABEL: func.func @conv_transpose(%x: tensor<2x4x7xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x6x13xf32> {
// CHECK-NEXT: %r = mlx.transpose %x [0, 2, 1] : tensor<2x4x7xf32> -> tensor<2x7x4xf32>
// CHECK-NEXT: %r_1 = mlx.reshape %w [2, 2, 3, 3] : tensor<4x3x3xf32> -> tensor<2x2x3x3xf32>
// CHECK-NEXT: %r_2 = mlx.transpose %r_1 [0, 2, 1, 3] : tensor<2x2x3x3xf32> -> tensor<2x3x2x3xf32>
// CHECK-NEXT: %r_3 = mlx.reshape %r_2 [6, 2, 3] : tensor<2x3x2x3xf32> -> tensor<6x2x3xf32>
// CHECK-NEXT: %r_4 = mlx.transpose %r_3 [0, 2, 1] : tensor<6x2x3xf32> -> tensor<6x3x2xf32>
// CHECK-NEXT: %r_5 = mlx.conv_general %r, %r_4 stride [1] padding [1] [1] kernel_dilation [1] input_dilation [2] groups 2 flip : tensor<2x7x4xf32>, tensor<6x3x2xf32> -> tensor<2x13x6xf32>
// CHECK-NEXT: %r_6 = mlx.transpose %r_5 [0, 2, 1] : tensor<2x13x6xf32> -> tensor<2x6x13xf32>
// CHECK-NEXT: func.return %r_6 : tensor<2x6x13xf32>
// CHECK-NEXT: }

// The same module through the default pipeline: no aten op is left.
// RUN: mlx-opt %s -p lower-to-mlx | filecheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: aten.

// ATen sorts a 0-d tensor as its one element (dim 0 or -1); MLX needs an axis.
// CHECK-LABEL: func.func @sort_scalar
// CHECK-NEXT:    %[[V:.*]] = mlx.reshape %x [1] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %[[O:.*]] = mlx.argsort %[[V]] axis 0 : tensor<1xf32> -> tensor<1xui32>
// CHECK-NEXT:    %[[I:.*]] = mlx.astype %[[O]] : tensor<1xui32> -> tensor<1xi64>
// CHECK-NEXT:    %[[S:.*]] = mlx.take_along_axis %[[V]], %[[I]] axis 0 : tensor<1xf32>, tensor<1xi64> -> tensor<1xf32>
// CHECK-NEXT:    %{{.*}} = mlx.reshape %[[S]] [] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT:    %{{.*}} = mlx.reshape %[[I]] [] : tensor<1xi64> -> tensor<i64>
func.func @sort_scalar(%x: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %v, %i = aten.sort %x dim -1 : tensor<f32> -> tensor<f32>, tensor<i64>
  func.return %v, %i : tensor<f32>, tensor<i64>
}

// Samplers: MLX's uniform draw (in float32) through each distribution's inverse CDF,
// then the result's dtype: exponential -log(1 - u) / lambda; randint floor(low +
// (high - low) u); bernoulli u < p; cauchy median + sigma tan(pi u - pi / 2).
// CHECK-LABEL: func.func @samplers(
// CHECK:         %e = mlx.dim %x axis 1 : tensor<2x?xf32>
// CHECK-NEXT:    %e_1 = mlx.random_uniform [2, %e] : tensor<2x?xf32>
// CHECK-NEXT:    %e_2 = mlx.negative %e_1
// CHECK-NEXT:    %e_3 = mlx.log1p %e_2
// CHECK-NEXT:    %e_4 = mlx.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %e_5 = mlx.divide %e_3, %e_4
// CHECK-NEXT:    %i = mlx.random_uniform [%n, 3] : tensor<?x3xf32>
// CHECK-NEXT:    %i_1 = mlx.constant dense<6.000000e+00> : tensor<f32>
// CHECK-NEXT:    %i_2 = mlx.multiply %i, %i_1
// CHECK-NEXT:    %i_3 = mlx.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %i_4 = mlx.add %i_2, %i_3
// CHECK-NEXT:    %i_5 = mlx.floor %i_4
// CHECK-NEXT:    %i_6 = mlx.astype %i_5 : tensor<?x3xf32> -> tensor<?x3xi64>
// CHECK:         %b_1 = mlx.random_uniform [2, %b] : tensor<2x?xf32>
// CHECK-NEXT:    %b_2 = mlx.constant dense<3.000000e-01> : tensor<f32>
// CHECK-NEXT:    %b_3 = mlx.less %b_1, %b_2 : tensor<2x?xf32>, tensor<f32> -> tensor<2x?xi1>
// CHECK-NEXT:    %b_4 = mlx.astype %b_3 : tensor<2x?xi1> -> tensor<2x?xbf16>
// CHECK-NEXT:    %c = mlx.random_uniform [4] : tensor<4xf32>
// CHECK-NEXT:    %c_1 = mlx.constant dense<3.14159274> : tensor<f32>
// CHECK-NEXT:    %c_2 = mlx.multiply %c, %c_1
// CHECK-NEXT:    %c_3 = mlx.constant dense<-1.57079637> : tensor<f32>
// CHECK-NEXT:    %c_4 = mlx.add %c_2, %c_3
// CHECK-NEXT:    %c_5 = mlx.tan %c_4
// CHECK-NEXT:    %c_6 = mlx.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %c_7 = mlx.multiply %c_5, %c_6
// CHECK-NEXT:    %c_8 = mlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %c_9 = mlx.add %c_7, %c_8
// CHECK-NEXT:    func.return %e_5, %i_6, %b_4, %c_9
func.func @samplers(%x: tensor<2x?xf32>, %n: index) -> (tensor<2x?xf32>, tensor<?x3xi64>, tensor<2x?xbf16>, tensor<4xf32>) {
  %e = aten.random_like "exponential" [2.0] %x : tensor<2x?xf32> -> tensor<2x?xf32>
  %i = aten.random "randint" [3.0, 9.0] [%n, 3] : tensor<?x3xi64>
  %b = aten.random_like "bernoulli" [0.3] %x : tensor<2x?xf32> -> tensor<2x?xbf16>
  %c = aten.random "cauchy" [1.0, 0.5] [4] : tensor<4xf32>
  func.return %e, %i, %b, %c : tensor<2x?xf32>, tensor<?x3xi64>, tensor<2x?xbf16>, tensor<4xf32>
}
