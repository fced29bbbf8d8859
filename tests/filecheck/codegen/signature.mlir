// The exported call signature (`mlxir.signature`: how the module's nested arguments
// and results wrap the function's inputs and outputs) travels in the program: written,
// printed back and written again byte for byte. One that does not describe the
// function is refused with the rule it breaks.
// RUN: mlx-opt %s -t mlx-fb -o %t.mlxfb
// RUN: mlx-opt %t.mlxfb | filecheck %s
// RUN: mlx-opt %t.mlxfb -t mlx-fb -o %t.again.mlxfb
// RUN: cmp %t.mlxfb %t.again.mlxfb
// RUN: not mlx-opt %S/Inputs/bad_signature.mlir -t mlx-fb -o %t.bad.mlxfb 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: func.func @forward(%ids: tensor<2xf32>, %kv: tensor<2xf32>, %kv_1: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-SAME: mlxir.signature = {inputs = {kind = "tuple", children = [{kind = "tuple", children = ["*", {kind = "tuple", children = ["*", "*"]}]}, {kind = "dict", children = [{kind = "constant", value = 5.000000e-01 : f64}], keys = ["scale"]}]}, outputs = {kind = "dict", children = ["*", "*"], keys = ["logits", "kv"]}, arg_names = ["ids", "past_kv"]}

// BAD: mlx-opt: error: @forward mlxir.signature: signature: the inputs have 1 leaves, the program 2 inputs
// BAD-NOT: Traceback

func.func @forward(%ids: tensor<2xf32>, %kv: tensor<2xf32>, %kv_1: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) attributes {mlxir.signature = {arg_names = ["ids", "past_kv"], inputs = {kind = "tuple", children = [{kind = "tuple", children = ["*", {kind = "tuple", children = ["*", "*"]}]}, {kind = "dict", keys = ["scale"], children = [{kind = "constant", value = 0.5 : f64}]}]}, outputs = {kind = "dict", keys = ["logits", "kv"], children = ["*", "*"]}}} {
  %sum = mlx.add %ids, %kv : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %sum, %kv_1 : tensor<2xf32>, tensor<2xf32>
}
