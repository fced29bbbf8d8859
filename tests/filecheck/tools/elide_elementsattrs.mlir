// --mlir-elide-elementsattrs-if-larger=N prints each dense value of more than N
// elements as MLIR does, `dense_resource<__elided__>`, in the output and in the IR
// dumps; a splat, one element however large its type, stays. A program read from a
// .mlxfb (weights in the IR) prints without them.
// RUN: mlx-opt %s --mlir-elide-elementsattrs-if-larger=4 | filecheck %s
// RUN: mlx-opt %s -mlir-elide-elementsattrs-if-larger 4 | filecheck %s
// RUN: mlx-opt %s --mlir-elide-elementsattrs-if-larger=4 --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: mlx-opt %s --mlir-elide-elementsattrs-if-larger=4 -cse -mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=DUMP
// RUN: mlx-opt %s --mlir-elide-elementsattrs-if-larger=0 | filecheck %s --check-prefix=ZERO
// RUN: mlx-opt %s | filecheck %s --check-prefix=WHOLE
// RUN: mlx-opt %s -t mlx-fb -o %t.mlxfb
// RUN: mlx-opt %t.mlxfb --mlir-elide-elementsattrs-if-larger=4 | filecheck %s
// RUN: not mlx-opt %s --mlir-elide-elementsattrs-if-larger=-1 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not mlx-opt %s --mlir-elide-elementsattrs-if-larger=many 2>&1 | filecheck %s --check-prefix=NOT-A-NUMBER

// CHECK:      mlx.global @w "parameter" : tensor<2x4xf32> = dense_resource<__elided__> : tensor<2x4xf32>
// CHECK-NEXT: mlx.global @ones "parameter" : tensor<2x4xf32> = dense<1.000000e+00> : tensor<2x4xf32>
// CHECK:      mlx.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NOT:  dialect_resources

// GENERIC: "mlx.global"() <{{{.*}}value = dense_resource<__elided__> : tensor<2x4xf32>}>
// GENERIC: "mlx.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}>

// DUMP: IR Dump After CommonSubexpressionElimination (cse)
// DUMP: mlx.global @w "parameter" : tensor<2x4xf32> = dense_resource<__elided__> : tensor<2x4xf32>

// ZERO: mlx.global @w "parameter" : tensor<2x4xf32> = dense_resource<__elided__> : tensor<2x4xf32>
// ZERO: mlx.global @ones "parameter" : tensor<2x4xf32> = dense<1.000000e+00> : tensor<2x4xf32>
// ZERO: mlx.constant dense_resource<__elided__> : tensor<4xf32>

// WHOLE-NOT: __elided__

// NEGATIVE: mlx-opt: error: argument --mlir-elide-elementsattrs-if-larger: expected a number of elements (0 or more), not '-1'
// NOT-A-NUMBER: mlx-opt: error: argument --mlir-elide-elementsattrs-if-larger: expected a number of elements (0 or more), not 'many'

mlx.global @w "parameter" : tensor<2x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
mlx.global @ones "parameter" : tensor<2x4xf32> = dense<1.0> : tensor<2x4xf32>
func.func @f(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = mlx.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w = mlx.weight @w : tensor<2x4xf32>
  %0 = mlx.add %a, %w : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
