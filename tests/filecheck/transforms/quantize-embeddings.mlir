// quantize-weights{embeddings=true}: rows of a constant float table [V, D] taken along
// axis 0 (an embedding) become mlx.quantized_take on mx.quantize of the table, in
// groups along D. A table also read by the LM head (tied) gets one quantized copy
// for both, and its float copy leaves. Without the option, takes are left alone.
// RUN: mlx-opt %s -p 'quantize-weights{bits=4 group-size=32 embeddings=true}' | filecheck %s
// RUN: mlx-opt %s -p 'quantize-weights{bits=4 group-size=32}' | filecheck %s --check-prefix=TABLES-KEPT

// CHECK-NOT:  mlx.global @embed "parameter"
// CHECK:      mlx.global @embed.q4g32 "parameter" : tensor<16x8xui32> = dense<{{.*}}> : tensor<16x8xui32>
// CHECK-NEXT: mlx.global @embed.q4g32.scales "parameter" : tensor<16x2xf32>
// CHECK-NEXT: mlx.global @embed.q4g32.biases "parameter" : tensor<16x2xf32>
// CHECK-NOT:  mlx.global
// CHECK-LABEL: func.func @tied(%ids: tensor<?xi64>) -> tensor<?x16xf32> {
// CHECK-NEXT:    %[[W:.*]] = mlx.weight @embed.q4g32 : tensor<16x8xui32>
// CHECK-NEXT:    %[[S:.*]] = mlx.weight @embed.q4g32.scales : tensor<16x2xf32>
// CHECK-NEXT:    %[[B:.*]] = mlx.weight @embed.q4g32.biases : tensor<16x2xf32>
// CHECK-NEXT:    %h = mlx.quantized_take %[[W]], %[[S]], %[[B]] indices %ids : tensor<?xi64> group_size 32 bits 4 mode "affine" : tensor<16x8xui32>, tensor<16x2xf32>, tensor<16x2xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    %[[W2:.*]] = mlx.weight @embed.q4g32 : tensor<16x8xui32>
// CHECK-NEXT:    %[[S2:.*]] = mlx.weight @embed.q4g32.scales : tensor<16x2xf32>
// CHECK-NEXT:    %[[B2:.*]] = mlx.weight @embed.q4g32.biases : tensor<16x2xf32>
// CHECK-NEXT:    %logits = mlx.quantized_matmul %h, %[[W2]], %[[S2]], %[[B2]] group_size 32 bits 4 mode "affine" transpose : tensor<?x64xf32>, tensor<16x8xui32>, tensor<16x2xf32>, tensor<16x2xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    func.return %logits : tensor<?x16xf32>
// TABLES-KEPT: mlx.global @embed "parameter" : tensor<16x64xf32>
// TABLES-KEPT: mlx.take
mlx.global @embed "parameter" : tensor<16x64xf32> = dense<0.25> : tensor<16x64xf32>

func.func @tied(%ids: tensor<?xi64>) -> tensor<?x16xf32> {
  %e = mlx.weight @embed : tensor<16x64xf32>
  %h = mlx.take %e, %ids axis 0 : tensor<16x64xf32>, tensor<?xi64> -> tensor<?x64xf32>
  %e2 = mlx.weight @embed : tensor<16x64xf32>
  %t = mlx.transpose %e2 [1, 0] : tensor<16x64xf32> -> tensor<64x16xf32>
  %logits = mlx.matmul %h, %t : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return %logits : tensor<?x16xf32>
}
