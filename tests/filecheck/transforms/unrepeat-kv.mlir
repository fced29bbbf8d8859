// unrepeat-kv: HF's repeat_kv (expand_dims, broadcast_to, reshape) in front of an SDPA is removed, since MLX's SDPA takes fewer K/V heads natively; a reshape that is not a head repeat is kept.
// RUN: mlx-opt %s -p unrepeat-kv | filecheck %s

func.func @repeat_kv(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>) -> tensor<1x4x5x8xf32> {
  %e = mlx.expand_dims %k [2] : tensor<1x2x5x8xf32> -> tensor<1x2x1x5x8xf32>
  %b = mlx.broadcast_to %e [1, 2, 2, 5, 8] : tensor<1x2x1x5x8xf32> -> tensor<1x2x2x5x8xf32>
  %r = mlx.reshape %b [1, 4, 5, 8] : tensor<1x2x2x5x8xf32> -> tensor<1x4x5x8xf32>
  %o = mlx.scaled_dot_product_attention %q, %r, %r scale 0.35 : tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32> -> tensor<1x4x5x8xf32>
  func.return %o : tensor<1x4x5x8xf32>
}
func.func @not_a_repeat(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x10x8xf32>) -> tensor<1x4x5x8xf32> {
  %r = mlx.reshape %k [1, 4, 5, 8] : tensor<1x2x10x8xf32> -> tensor<1x4x5x8xf32>
  %o = mlx.scaled_dot_product_attention %q, %r, %r scale 0.35 : tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32> -> tensor<1x4x5x8xf32>
  func.return %o : tensor<1x4x5x8xf32>
}

// CHECK-LABEL: func.func @repeat_kv(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>) -> tensor<1x4x5x8xf32> {
// CHECK-NEXT: %e = mlx.expand_dims %k [2] : tensor<1x2x5x8xf32> -> tensor<1x2x1x5x8xf32>
// CHECK-NEXT: %b = mlx.broadcast_to %e [1, 2, 2, 5, 8] : tensor<1x2x1x5x8xf32> -> tensor<1x2x2x5x8xf32>
// CHECK-NEXT: %r = mlx.reshape %b [1, 4, 5, 8] : tensor<1x2x2x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %k, %k scale 3.500000e-01 : tensor<1x4x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x4x5x8xf32>
// CHECK-LABEL: func.func @not_a_repeat(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x10x8xf32>) -> tensor<1x4x5x8xf32> {
// CHECK-NEXT: %r = mlx.reshape %k [1, 4, 5, 8] : tensor<1x2x10x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT: %o = mlx.scaled_dot_product_attention %q, %r, %r scale 3.500000e-01 : tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x4x5x8xf32>
