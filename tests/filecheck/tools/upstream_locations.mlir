// A module as upstream mlir-opt prints it with -mlir-print-debuginfo
// -mlir-print-op-generic: location aliases (`loc(#loc2)`) defined after the module,
// name, fused and call-site locations. mlx-opt reads every location and prints it
// back (its own generic output reads back too).
// RUN: mlx-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: mlx-opt %s --mlir-print-debuginfo --mlir-print-op-generic | mlx-opt - --mlir-print-debuginfo | filecheck %s

// CHECK:      func.func @f(%arg0: tensor<4xf32> loc("model.py":1:10)) -> tensor<4xf32> {
// CHECK-NEXT:   %0 = mlx.exp %arg0 : tensor<4xf32> -> tensor<4xf32> loc("exp"("model.py":2:3))
// CHECK-NEXT:   %1 = mlx.exp %0 : tensor<4xf32> -> tensor<4xf32> loc(callsite("model.py":2:3 at "model.py":1:1))
// CHECK-NEXT:   func.return %1 : tensor<4xf32> loc(fused["model.py":2:3, "exp"("model.py":2:3)])
// CHECK-NEXT: } loc("model.py":1:1)
#loc = loc("model.py":1:1)
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "f"}> ({
  ^bb0(%arg0: tensor<4xf32> loc("model.py":1:10)):
    %0 = "mlx.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc2)
    %1 = "mlx.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc4)
    "func.return"(%1) : (tensor<4xf32>) -> () loc(#loc3)
  }) : () -> () loc(#loc)
}) : () -> () loc(#loc)
#loc1 = loc("model.py":2:3)
#loc2 = loc("exp"(#loc1))
#loc3 = loc(fused[#loc1, #loc2])
#loc4 = loc(callsite(#loc1 at #loc))
