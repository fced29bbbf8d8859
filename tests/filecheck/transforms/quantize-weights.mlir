// quantize-weights: a matmul against a constant weight (a `linear` weight [N, K] read
// through transpose [1, 0], or a weight [K, N] already transposed) becomes
// mlx.quantized_matmul on mx.quantize of the weight in [N, K] layout: a packed ui32
// global `<weight>.q<bits>g<group>` and its `.scales` and `.biases` (affine). An addmm
// becomes the quantized product plus its bias. A reduction dim the group size does not
// divide stays a float matmul. Weights nothing reads any more leave the module.
// RUN: mlx-opt %s -p 'quantize-weights{bits=4 group-size=32}' | filecheck %s
// RUN: mlx-opt %s -p 'quantize-weights{bits=8 group-size=64}' | filecheck %s --check-prefix=EIGHT
// activation-bits=8 (Quantize.activation_bits, approximate): the same products, each
// with activation_bits 8, as cpu-int8-activations gives them.
// RUN: mlx-opt %s -p 'quantize-weights{bits=4 group-size=32 activation-bits=8}' | filecheck %s --check-prefix=APPROX
// APPROX: %y = mlx.quantized_matmul %x, %{{.*}}, %{{.*}}, %{{.*}} group_size 32 bits 4 mode "affine" transpose activation_bits 8 : tensor<?x64xf32>
// APPROX-NOT: mlx.quantized_matmul {{.*}} transpose :

// CHECK:      mlx.global @bias "parameter" : tensor<8xf32>
// CHECK-NEXT: mlx.global @odd "parameter" : tensor<8x48xf32>
// CHECK-NEXT: mlx.global @proj.q4g32 "parameter" : tensor<8x8xui32> = dense<{{.*}}> : tensor<8x8xui32>
// CHECK-NEXT: mlx.global @proj.q4g32.scales "parameter" : tensor<8x2xf32>
// CHECK-NEXT: mlx.global @proj.q4g32.biases "parameter" : tensor<8x2xf32>
// CHECK-NEXT: func.func @linear(%x: tensor<?x64xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:   %[[W:.*]] = mlx.weight @proj.q4g32 : tensor<8x8xui32>
// CHECK-NEXT:   %[[S:.*]] = mlx.weight @proj.q4g32.scales : tensor<8x2xf32>
// CHECK-NEXT:   %[[B:.*]] = mlx.weight @proj.q4g32.biases : tensor<8x2xf32>
// CHECK-NEXT:   %y = mlx.quantized_matmul %x, %[[W]], %[[S]], %[[B]] group_size 32 bits 4 mode "affine" transpose : tensor<?x64xf32>, tensor<8x8xui32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<?x8xf32>
// CHECK-NEXT:   func.return %y : tensor<?x8xf32>
// CHECK-NEXT: }
// EIGHT:      mlx.global @proj.q8g64 "parameter" : tensor<8x16xui32>
// EIGHT:      mlx.quantized_matmul {{.*}} group_size 64 bits 8 mode "affine" transpose
mlx.global @proj "parameter" : tensor<8x64xf32> = dense<0.25> : tensor<8x64xf32>
mlx.global @kn "parameter" : tensor<64x8xf32> = dense<0.5> : tensor<64x8xf32>
mlx.global @bias "parameter" : tensor<8xf32> = dense<1.0> : tensor<8xf32>
mlx.global @odd "parameter" : tensor<8x48xf32> = dense<1.0> : tensor<8x48xf32>

func.func @linear(%x: tensor<?x64xf32>) -> tensor<?x8xf32> {
  %w = mlx.weight @proj : tensor<8x64xf32>
  %t = mlx.transpose %w [1, 0] : tensor<8x64xf32> -> tensor<64x8xf32>
  %y = mlx.matmul %x, %t : tensor<?x64xf32>, tensor<64x8xf32> -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// A weight already in [K, N] (fold-weight-transposes' output), with a bias: the
// quantized product, then the bias added; its globals go before this function.
// CHECK:       mlx.global @kn.q4g32 "parameter" : tensor<8x8xui32>
// CHECK-NEXT:  mlx.global @kn.q4g32.scales "parameter" : tensor<8x2xf32>
// CHECK-NEXT:  mlx.global @kn.q4g32.biases "parameter" : tensor<8x2xf32>
// CHECK-LABEL: func.func @biased_kn(
// CHECK:         %[[P:.*]] = mlx.quantized_matmul %x, %{{.*}}, %{{.*}}, %{{.*}} group_size 32 bits 4 mode "affine" transpose : tensor<2x64xf32>, tensor<8x8xui32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = mlx.add %b, %[[P]] : tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @biased_kn(%x: tensor<2x64xf32>) -> tensor<2x8xf32> {
  %w = mlx.weight @kn : tensor<64x8xf32>
  %b = mlx.weight @bias : tensor<8xf32>
  %y = mlx.addmm %b, %x, %w : tensor<8xf32>, tensor<2x64xf32>, tensor<64x8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// Kept: the reduction dim (48) is not a multiple of the group size.
// CHECK-LABEL: func.func @odd_reduction(
// CHECK-NOT:     mlx.quantized_matmul
// CHECK:         mlx.matmul
func.func @odd_reduction(%x: tensor<2x48xf32>) -> tensor<2x8xf32> {
  %w = mlx.weight @odd : tensor<8x48xf32>
  %t = mlx.transpose %w [1, 0] : tensor<8x48xf32> -> tensor<48x8xf32>
  %y = mlx.matmul %x, %t : tensor<2x48xf32>, tensor<48x8xf32> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
