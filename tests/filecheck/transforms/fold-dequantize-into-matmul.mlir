// fold-dequantize-into-matmul: a matmul (or addmm) whose right operand is an
// mlx.dequantize, or its transpose [1, 0] (a `linear` weight [N, K]), becomes
// mlx.quantized_matmul on the packed weight (`transpose` for the [N, K] case), plus the
// bias for an addmm. The dequantize (and transpose) leave once nothing else reads them;
// a dequantize also read elsewhere stays for that read.
// RUN: mlx-opt %s -p fold-dequantize-into-matmul | filecheck %s

// CHECK-LABEL: func.func @linear(%x: tensor<?x64xf32>, %w: tensor<8x8xui32>, %s: tensor<8x2xf32>, %b: tensor<8x2xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    %y = mlx.quantized_matmul %x, %w, %s, %b group_size 32 bits 4 mode "affine" transpose : tensor<?x64xf32>, tensor<8x8xui32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32>
// CHECK-NEXT:  }
func.func @linear(%x: tensor<?x64xf32>, %w: tensor<8x8xui32>, %s: tensor<8x2xf32>, %b: tensor<8x2xf32>) -> tensor<?x8xf32> {
  %d = mlx.dequantize %w, %s, %b group_size 32 bits 4 mode "affine" : tensor<8x8xui32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x64xf32>
  %t = mlx.transpose %d [1, 0] : tensor<8x64xf32> -> tensor<64x8xf32>
  %y = mlx.matmul %x, %t : tensor<?x64xf32>, tensor<64x8xf32> -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// A weight [K, N] dequantized as it is, in an addmm: the product without transpose,
// then the bias.
// CHECK-LABEL: func.func @addmm_kn(%x: tensor<3x64xf32>, %w: tensor<64x2xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>, %c: tensor<32xf32>) -> tensor<3x32xf32> {
// CHECK-NEXT:    %y = mlx.quantized_matmul %x, %w, %s, %b group_size 32 bits 2 mode "affine" : tensor<3x64xf32>, tensor<64x2xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<3x32xf32>
// CHECK-NEXT:    %y_1 = mlx.add %c, %y : tensor<32xf32>, tensor<3x32xf32> -> tensor<3x32xf32>
// CHECK-NEXT:    func.return %y_1 : tensor<3x32xf32>
// CHECK-NEXT:  }
func.func @addmm_kn(%x: tensor<3x64xf32>, %w: tensor<64x2xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>, %c: tensor<32xf32>) -> tensor<3x32xf32> {
  %d = mlx.dequantize %w, %s, %b group_size 32 bits 2 mode "affine" : tensor<64x2xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<64x32xf32>
  %y = mlx.addmm %c, %x, %d : tensor<32xf32>, tensor<3x64xf32>, tensor<64x32xf32> -> tensor<3x32xf32>
  func.return %y : tensor<3x32xf32>
}

// The dequantized matrix is also returned: it stays for that use.
// CHECK-LABEL: func.func @also_read(
// CHECK-NEXT:    %d = mlx.dequantize %w, %s, %b
// CHECK-NEXT:    %t = mlx.transpose %d [1, 0]
// CHECK-NEXT:    %y = mlx.quantized_matmul %x, %w, %s, %b group_size 32 bits 4 mode "affine" transpose
// CHECK-NEXT:    func.return %y, %t
func.func @also_read(%x: tensor<2x64xf32>, %w: tensor<8x8xui32>, %s: tensor<8x2xf32>, %b: tensor<8x2xf32>) -> (tensor<2x8xf32>, tensor<64x8xf32>) {
  %d = mlx.dequantize %w, %s, %b group_size 32 bits 4 mode "affine" : tensor<8x8xui32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x64xf32>
  %t = mlx.transpose %d [1, 0] : tensor<8x64xf32> -> tensor<64x8xf32>
  %y = mlx.matmul %x, %t : tensor<2x64xf32>, tensor<64x8xf32> -> tensor<2x8xf32>
  func.return %y, %t : tensor<2x8xf32>, tensor<64x8xf32>
}

// Left alone: an addmm with alpha/beta, and a plain float weight.
// CHECK-LABEL: func.func @left(
// CHECK-NOT:     quantized_matmul
// CHECK:         func.return
func.func @left(%x: tensor<3x64xf32>, %w: tensor<64x2xui32>, %s: tensor<64x1xf32>, %b: tensor<64x1xf32>, %c: tensor<32xf32>, %f: tensor<64x32xf32>) -> (tensor<3x32xf32>, tensor<3x32xf32>) {
  %d = mlx.dequantize %w, %s, %b group_size 32 bits 2 mode "affine" : tensor<64x2xui32>, tensor<64x1xf32>, tensor<64x1xf32> -> tensor<64x32xf32>
  %y = mlx.addmm %c, %x, %d alpha 2.0 : tensor<32xf32>, tensor<3x64xf32>, tensor<64x32xf32> -> tensor<3x32xf32>
  %z = mlx.matmul %x, %f : tensor<3x64xf32>, tensor<64x32xf32> -> tensor<3x32xf32>
  func.return %y, %z : tensor<3x32xf32>, tensor<3x32xf32>
}
