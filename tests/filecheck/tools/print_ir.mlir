// --mlir-print-ir-* print the module around passes to stderr, headed as mlir-opt heads
// them; --mlir-timing reports parsing, each pass nested under its anchor, verifying
// and printing (--time-passes gives the same report).
// RUN: mlx-opt %s --pass-pipeline='builtin.module(cse,canonicalize)' --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: mlx-opt %s -p cse,canonicalize --mlir-print-ir-before=canonicalize -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: mlx-opt %s -p cse,canonicalize --mlir-print-ir-after-change -o /dev/null 2>&1 | filecheck %s --check-prefix=CHANGE
// RUN: not mlx-opt %s -p cse --mlir-print-ir-after=no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: mlx-opt %s --pass-pipeline='builtin.module(func.func(cse,dce),canonicalize)' --mlir-timing -o /dev/null 2>&1 | filecheck %s --check-prefix=TIMING
// RUN: mlx-opt %s -p cse --time-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=TIMEPASSES

func.func @twice(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.multiply %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// AFTER:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// AFTER-NEXT: builtin.module {
// AFTER:        mlx.add
// AFTER-NOT:    mlx.add
// AFTER:      // -----// IR Dump After CanonicalizePass (canonicalize) //----- //

// BEFORE-NOT: IR Dump Before CommonSubexpressionElimination
// BEFORE:     // -----// IR Dump Before CanonicalizePass (canonicalize) //----- //
// BEFORE-NOT: IR Dump

// cse merges the two adds; canonicalize then has nothing to change.
// CHANGE:     // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// CHANGE-NOT: IR Dump After CanonicalizePass

// UNKNOWN: mlx-opt: error: --mlir-print-ir-after: no pass named 'no-such-pass'

// TIMING:      ... Execution time report ...
// TIMING:      Total Execution Time: {{[0-9.]+}} seconds
// TIMING:      ----Wall Time----  ----Name----
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  'func.func' Pipeline
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    cse
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    dce
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  canonicalize
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Verifier
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// TIMING-NEXT: {{[0-9.]+}} (100.0%)  Total

// TIMEPASSES: Execution time report
// TIMEPASSES: {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
