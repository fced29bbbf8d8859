// lower-to-mlx{target=...}: the generic pipeline, then the target's passes. On a
// float16 attention the CPU target's cpu-float32-attention computes in float32 (MLX's
// CPU rounds its scores to 16 bits); the generic target keeps the operands' dtype; an
// unknown target is an error naming the known ones.
// RUN: mlx-opt %s -p 'lower-to-mlx{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: mlx-opt %s -p lower-to-mlx | filecheck %s --check-prefix=GENERIC
// RUN: mlx-opt %s -p 'lower-to-mlx{target=generic}' | filecheck %s --check-prefix=GENERIC
// RUN: not mlx-opt %s -p 'lower-to-mlx{target=tpu}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CPU-LABEL: func.func @attention(
// CPU-NEXT:    %[[Q:.*]] = mlx.astype %q : tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf32>
// CPU-NEXT:    %[[K:.*]] = mlx.astype %k : tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf32>
// CPU-NEXT:    %[[V:.*]] = mlx.astype %v : tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf32>
// CPU-NEXT:    %[[O:.*]] = mlx.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] scale 0.35355339059327373 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CPU-NEXT:    %[[R:.*]] = mlx.astype %[[O]] : tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf16>
// CPU-NEXT:    func.return %[[R]] : tensor<1x2x4x8xf16>

// GENERIC-LABEL: func.func @attention(
// GENERIC-NEXT:    %[[O:.*]] = mlx.scaled_dot_product_attention %q, %k, %v scale 0.35355339059327373 : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
// GENERIC-NEXT:    func.return %[[O]] : tensor<1x2x4x8xf16>

// UNKNOWN: lower-to-mlx: unknown target 'tpu' (known: generic, cpu)
func.func @attention(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16> {
  %0 = aten.scaled_dot_product_attention %q, %k, %v : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf16>
  func.return %0 : tensor<1x2x4x8xf16>
}
