// A sigil with no name after it, one per chunk (read by ../errors.mlir).
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  % = mlx.exp %a : tensor<4xf32> -> tensor<4xf32>
}
// -----
#
// -----
func.func @g(%a: !) -> ()
// -----
func.func @h() {
^
}
