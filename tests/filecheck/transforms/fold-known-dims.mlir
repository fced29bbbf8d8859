// fold-known-dims: symbolic shape reasoning in op order. An `mlx.dim` whose size is
// already an SSA value (an earlier dim of an equal size: the same input symbol, a
// reshape's size, through transposes and broadcasts) is that value; a reshape or
// broadcast_to to its input's own symbolic shape is its input. Only sizes equal for
// every input the program accepts are reused.
// RUN: mlx-opt %s -p fold-known-dims | filecheck %s

// Inputs naming the same symbol in `mlxir.input_dims` have equal sizes; "" names nothing.
// CHECK-LABEL: func.func @input_symbols(
// CHECK-NEXT:    %a = mlx.dim %x axis 0 : tensor<?x?xf32>
// CHECK-NEXT:    %c = mlx.dim %x axis 1 : tensor<?x?xf32>
// CHECK-NEXT:    %d = mlx.dim %z axis 0 : tensor<?xf32>
// CHECK-NEXT:    func.return %a, %a, %c, %c, %d : index, index, index, index, index
func.func @input_symbols(%x: tensor<?x?xf32>, %y: tensor<3x?xf32>, %z: tensor<?xf32>) -> (index, index, index, index, index) attributes {mlxir.input_dims = [["s0", "s1"], ["", "s0"], [""]]} {
  %a = mlx.dim %x axis 0 : tensor<?x?xf32>
  %b = mlx.dim %y axis 1 : tensor<3x?xf32>
  %c = mlx.dim %x axis 1 : tensor<?x?xf32>
  %c2 = mlx.dim %x axis -1 : tensor<?x?xf32>
  %d = mlx.dim %z axis 0 : tensor<?xf32>
  func.return %a, %b, %c, %c2, %d : index, index, index, index, index
}

// Without `mlxir.input_dims`, each argument's axis is its own size.
// CHECK-LABEL: func.func @no_input_dims(
// CHECK-NEXT:    %a = mlx.dim %x axis 0 : tensor<?xf32>
// CHECK-NEXT:    %b = mlx.dim %y axis 0 : tensor<?xf32>
// CHECK-NEXT:    func.return %a, %b, %a : index, index, index
func.func @no_input_dims(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (index, index, index) {
  %a = mlx.dim %x axis 0 : tensor<?xf32>
  %b = mlx.dim %y axis 0 : tensor<?xf32>
  %a2 = mlx.dim %x axis 0 : tensor<?xf32>
  func.return %a, %b, %a2 : index, index, index
}

// A reshape's dims are its sizes; a transpose permutes them; elementwise ops broadcast
// them (a static 1 gives way); a full slice keeps them.
// CHECK-LABEL: func.func @through_ops(
// CHECK-NEXT:    %n = mlx.dim %x axis 0 : tensor<?x64xf32>
// CHECK-NEXT:    %t = mlx.dim %y axis 0 : tensor<?x8xf32>
// CHECK-NEXT:    %r = mlx.reshape %x [%n, %t, 4, 2] : tensor<?x64xf32> -> tensor<?x?x4x2xf32>
// CHECK-NEXT:    %p = mlx.transpose %r [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
// CHECK-NEXT:    %e = mlx.exp %p : tensor<?x4x?x2xf32> -> tensor<?x4x?x2xf32>
// CHECK-NEXT:    %m = mlx.multiply %e, %bias : tensor<?x4x?x2xf32>, tensor<1x1x1x2xf32> -> tensor<?x4x?x2xf32>
// CHECK-NEXT:    %s = mlx.slice %m [0, 0, 0, 0] to [%n, 4, %t, 1] step [1, 1, 1, 1] : tensor<?x4x?x2xf32> -> tensor<?x4x?x1xf32>
// CHECK-NEXT:    func.return %n, %t, %n, %t : index, index, index, index
func.func @through_ops(%x: tensor<?x64xf32>, %y: tensor<?x8xf32>, %bias: tensor<1x1x1x2xf32>) -> (index, index, index, index) {
  %n = mlx.dim %x axis 0 : tensor<?x64xf32>
  %t = mlx.dim %y axis 0 : tensor<?x8xf32>
  %r = mlx.reshape %x [%n, %t, 4, 2] : tensor<?x64xf32> -> tensor<?x?x4x2xf32>
  %p = mlx.transpose %r [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
  %e = mlx.exp %p : tensor<?x4x?x2xf32> -> tensor<?x4x?x2xf32>
  %m = mlx.multiply %e, %bias : tensor<?x4x?x2xf32>, tensor<1x1x1x2xf32> -> tensor<?x4x?x2xf32>
  %a = mlx.dim %m axis 0 : tensor<?x4x?x2xf32>
  %b = mlx.dim %m axis 2 : tensor<?x4x?x2xf32>
  %s = mlx.slice %m [0, 0, 0, 0] to [%a, 4, %b, 1] step [1, 1, 1, 1] : tensor<?x4x?x2xf32> -> tensor<?x4x?x1xf32>
  %c = mlx.dim %s axis 0 : tensor<?x4x?x1xf32>
  %d = mlx.dim %s axis 2 : tensor<?x4x?x1xf32>
  func.return %a, %b, %c, %d : index, index, index, index
}

// The Llama attention shape round trip: `reshape(sdpa_out, [B, 4, T, 16])` where the
// query was `transpose(reshape(x, [B, T, 4, 16]))` is an identity, and so is a
// broadcast_to of a mask to its own (symbolic) shape.
// CHECK-LABEL: func.func @identity_reshapes(
// CHECK-NEXT:    %b = mlx.dim %ids axis 0 : tensor<?x?xi64>
// CHECK-NEXT:    %t = mlx.dim %ids axis 1 : tensor<?x?xi64>
// CHECK-NEXT:    %q = mlx.reshape %x [%b, %t, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
// CHECK-NEXT:    %qt = mlx.transpose %q [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %o = mlx.scaled_dot_product_attention %qt, %kv, %kv scale 2.500000e-01 : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %m = mlx.less_equal %cols, %rows : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
// CHECK-NEXT:    func.return %o, %m : tensor<?x4x?x16xf32>, tensor<?x?xi1>
func.func @identity_reshapes(%ids: tensor<?x?xi64>, %x: tensor<?x?x64xf32>, %kv: tensor<?x2x?x16xf32>, %cols: tensor<1x?xi64>, %rows: tensor<?x1xi64>) -> (tensor<?x4x?x16xf32>, tensor<?x?xi1>) attributes {mlxir.input_dims = [["s33", "s70"], ["s33", "s70"], ["s33", "", "s18", ""], ["", "s70"], ["s70", ""]]} {
  %b = mlx.dim %ids axis 0 : tensor<?x?xi64>
  %t = mlx.dim %ids axis 1 : tensor<?x?xi64>
  %q = mlx.reshape %x [%b, %t, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %qt = mlx.transpose %q [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %o = mlx.scaled_dot_product_attention %qt, %kv, %kv scale 2.500000e-01 : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  %b2 = mlx.dim %kv axis 0 : tensor<?x2x?x16xf32>
  %back = mlx.reshape %o [%b2, 4, %t, 16] : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %m = mlx.less_equal %cols, %rows : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %mb = mlx.broadcast_to %m [%t, %t] : tensor<?x?xi1> -> tensor<?x?xi1>
  func.return %back, %mb : tensor<?x4x?x16xf32>, tensor<?x?xi1>
}

// Index arithmetic of equal operands is equal: an arange from 0 to `s + n` by 1 has
// `s + n` elements (sizes are never negative).
// CHECK-LABEL: func.func @arithmetic(
// CHECK-NEXT:    %s = mlx.dim %cache axis 0 : tensor<?xf32>
// CHECK-NEXT:    %n = mlx.dim %x axis 0 : tensor<?xf32>
// CHECK-NEXT:    %total = arith.addi %s, %n : index
// CHECK-NEXT:    %total2 = arith.addi %s, %n : index
// CHECK-NEXT:    %r = mlx.arange [0, %total2, 1] : tensor<?xi64>
// CHECK-NEXT:    func.return %total, %total : index, index
func.func @arithmetic(%cache: tensor<?xf32>, %x: tensor<?xf32>) -> (index, index) {
  %s = mlx.dim %cache axis 0 : tensor<?xf32>
  %n = mlx.dim %x axis 0 : tensor<?xf32>
  %total = arith.addi %s, %n : index
  %s2 = mlx.dim %cache axis 0 : tensor<?xf32>
  %total2 = arith.addi %s2, %n : index
  %r = mlx.arange [0, %total2, 1] : tensor<?xi64>
  %len = mlx.dim %r axis 0 : tensor<?xi64>
  func.return %total, %len : index, index
}

// Kept: a reshape to different symbolic dims (swapped) is a real reshape, and its
// result's dims are the swapped ones.
// CHECK-LABEL: func.func @swapped_dims(
// CHECK-NEXT:    %r = mlx.dim %y axis 0 : tensor<?x?xf32>
// CHECK-NEXT:    %s = mlx.dim %y axis 1 : tensor<?x?xf32>
// CHECK-NEXT:    %c = mlx.reshape %y [%s, %r] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %c, %s : tensor<?x?xf32>, index
func.func @swapped_dims(%y: tensor<?x?xf32>) -> (tensor<?x?xf32>, index) attributes {mlxir.input_dims = [["s0", "s1"]]} {
  %r = mlx.dim %y axis 0 : tensor<?x?xf32>
  %s = mlx.dim %y axis 1 : tensor<?x?xf32>
  %c = mlx.reshape %y [%s, %r] : tensor<?x?xf32> -> tensor<?x?xf32>
  %c0 = mlx.dim %c axis 0 : tensor<?x?xf32>
  func.return %c, %c0 : tensor<?x?xf32>, index
}

// Kept: broadcasting against a dynamic dim of unknown size (either side may be 1), so
// the sum's dim is neither input's and the reshape to `x`'s dim is real.
// CHECK-LABEL: func.func @unknown_broadcast(
// CHECK-NEXT:    %n = mlx.dim %x axis 0 : tensor<?xf32>
// CHECK-NEXT:    %sum = mlx.add %x, %z : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %m = mlx.dim %sum axis 0 : tensor<?xf32>
// CHECK-NEXT:    %r = mlx.reshape %sum [%n] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %b = mlx.broadcast_to %sum [%n] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %m, %r, %b : index, tensor<?xf32>, tensor<?xf32>
func.func @unknown_broadcast(%x: tensor<?xf32>, %z: tensor<?xf32>) -> (index, tensor<?xf32>, tensor<?xf32>) attributes {mlxir.input_dims = [["s0"], [""]]} {
  %n = mlx.dim %x axis 0 : tensor<?xf32>
  %sum = mlx.add %x, %z : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %m = mlx.dim %sum axis 0 : tensor<?xf32>
  %r = mlx.reshape %sum [%n] : tensor<?xf32> -> tensor<?xf32>
  %b = mlx.broadcast_to %sum [%n] : tensor<?xf32> -> tensor<?xf32>
  func.return %m, %r, %b : index, tensor<?xf32>, tensor<?xf32>
}

// Kept: an `index` argument may be -1 (a reshape then infers the size), so the
// reshape's dim is not known to be that argument; and an identity by keys whose types
// differ stays (the result is the less static type).
// CHECK-LABEL: func.func @not_sizes(
// CHECK-NEXT:    %r = mlx.reshape %x [%k] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %d = mlx.dim %r axis 0 : tensor<?xf32>
// CHECK-NEXT:    %four = arith.constant 4 : index
// CHECK-NEXT:    %s = mlx.reshape %w [%four] : tensor<4xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %d, %s : index, tensor<?xf32>
func.func @not_sizes(%x: tensor<?xf32>, %k: index, %w: tensor<4xf32>) -> (index, tensor<?xf32>) {
  %r = mlx.reshape %x [%k] : tensor<?xf32> -> tensor<?xf32>
  %d = mlx.dim %r axis 0 : tensor<?xf32>
  %four = arith.constant 4 : index
  %s = mlx.reshape %w [%four] : tensor<4xf32> -> tensor<?xf32>
  func.return %d, %s : index, tensor<?xf32>
}

// An expression in `mlxir.input_dims` is a size of its own when the runtime checks it
// (its symbols are bound by input axes); one over an unbound symbol is not.
// CHECK-LABEL: func.func @expressions(
// CHECK-NEXT:    %a = mlx.dim %y axis 0 : tensor<?xf32>
// CHECK-NEXT:    %c = mlx.dim %u axis 0 : tensor<?xf32>
// CHECK-NEXT:    %d = mlx.dim %v axis 0 : tensor<?xf32>
// CHECK-NEXT:    func.return %a, %a, %c, %d : index, index, index, index
func.func @expressions(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>, %u: tensor<?xf32>, %v: tensor<?xf32>) -> (index, index, index, index) attributes {mlxir.input_dims = [["s0"], ["s0 + 1"], ["s0 + 1"], ["s9 + 1"], ["s9 + 1"]]} {
  %a = mlx.dim %y axis 0 : tensor<?xf32>
  %b = mlx.dim %z axis 0 : tensor<?xf32>
  %c = mlx.dim %u axis 0 : tensor<?xf32>
  %d = mlx.dim %v axis 0 : tensor<?xf32>
  func.return %a, %b, %c, %d : index, index, index, index
}
