// cpu-polynomial-exp: exp as 2^n * p(r) of arithmetic ops (n = floor(x log2 e + 1/2),
// r = x - n ln 2 in two parts, p Cephes' expf polynomial, 2^n from exponent bits);
// sigmoid and softmax from it; float16/bfloat16 through float32.
// RUN: mlx-opt %s -p cpu-polynomial-exp | filecheck %s

// CHECK-LABEL: func.func @forward
// CHECK-NOT:     mlx.exp
// CHECK:         %[[LO:.*]] = mlx.maximum %x, %{{.*}} : tensor<16x?x1024xf32>, tensor<f32>
// CHECK:         %[[CLAMPED:.*]] = mlx.minimum %[[LO]]
// CHECK:         %[[N:.*]] = mlx.floor
// CHECK:         mlx.astype %[[N]] : tensor<16x?x1024xf32> -> tensor<16x?x1024xi32>
// CHECK:         mlx.left_shift
// CHECK:         mlx.view %{{.*}} : tensor<16x?x1024xi32> -> tensor<16x?x1024xf32>
// CHECK:         mlx.less %x
// CHECK:         mlx.where
// CHECK:         mlx.greater %x
// CHECK:         %[[E:.*]] = mlx.where
// The sigmoid: 1 / (1 + exp(-x)) in float32, cast back.
// CHECK:         %[[H:.*]] = mlx.astype %h : tensor<16384xbf16> -> tensor<16384xf32>
// CHECK-NEXT:    mlx.negative %[[H]]
// CHECK-NOT:     mlx.sigmoid
// CHECK:         mlx.divide
// CHECK-NEXT:    %[[S:.*]] = mlx.astype %{{.*}} : tensor<16384xf32> -> tensor<16384xbf16>
// The softmax: exp(x - max(x)) / sum.
// CHECK-NEXT:    %[[MAX:.*]] = mlx.max %x axes [-1] keepdims : tensor<16x?x1024xf32> -> tensor<16x?x1xf32>
// CHECK-NEXT:    mlx.subtract %x, %[[MAX]]
// CHECK-NOT:     mlx.softmax
// CHECK:         %[[SUM:.*]] = mlx.sum %{{.*}} axes [-1] keepdims : tensor<16x?x1024xf32> -> tensor<16x?x1xf32>
// CHECK-NEXT:    %[[M:.*]] = mlx.divide %{{.*}}, %[[SUM]]
// CHECK-NEXT:    func.return %[[E]], %[[S]], %[[M]]
func.func @forward(%x: tensor<16x?x1024xf32>, %h: tensor<16384xbf16>) -> (tensor<16x?x1024xf32>, tensor<16384xbf16>, tensor<16x?x1024xf32>) {
  %e = mlx.exp %x : tensor<16x?x1024xf32> -> tensor<16x?x1024xf32>
  %s = mlx.sigmoid %h : tensor<16384xbf16> -> tensor<16384xbf16>
  %m = mlx.softmax %x axes [-1] : tensor<16x?x1024xf32> -> tensor<16x?x1024xf32>
  func.return %e, %s, %m : tensor<16x?x1024xf32>, tensor<16384xbf16>, tensor<16x?x1024xf32>
}

// erf: the series below |x| = 1/2, 1 - erfc(|x|) with the polynomial exp above.
// CHECK-LABEL: func.func @erf
// CHECK-NOT:     mlx.erf
// CHECK:         %[[Z:.*]] = mlx.abs %x
// CHECK:         mlx.floor
// CHECK:         %[[NEG:.*]] = mlx.less %x
// CHECK:         %[[SMALL:.*]] = mlx.less %[[Z]]
// CHECK-NEXT:    %[[R:.*]] = mlx.where %[[SMALL]]
// CHECK-NEXT:    func.return %[[R]]
func.func @erf(%x: tensor<16384xf32>) -> tensor<16384xf32> {
  %e = mlx.erf %x : tensor<16384xf32> -> tensor<16384xf32>
  func.return %e : tensor<16384xf32>
}

// float64 is left alone (the polynomial is float32's), and so are sizes under
// POLYNOMIAL_MIN_ELEMENTS known elements (dynamic ones count as 1).
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    mlx.exp %d
// CHECK-NEXT:    mlx.sigmoid %s
func.func @kept(%d: tensor<16384xf64>, %s: tensor<?x?x1408xf32>) -> (tensor<16384xf64>, tensor<?x?x1408xf32>) {
  %e = mlx.exp %d : tensor<16384xf64> -> tensor<16384xf64>
  %g = mlx.sigmoid %s : tensor<?x?x1408xf32> -> tensor<?x?x1408xf32>
  func.return %e, %g : tensor<16384xf64>, tensor<?x?x1408xf32>
}
