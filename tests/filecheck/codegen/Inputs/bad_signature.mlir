// A signature with one input leaf on a function of two inputs (for signature.mlir).
func.func @forward(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> attributes {mlxir.signature = {inputs = {kind = "tuple", children = [{kind = "tuple", children = ["*"]}, {kind = "dict"}]}, outputs = "*"}} {
  %sum = mlx.add %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %sum : tensor<2xf32>
}
