// mlir-opt's habits: MLIR's textual pipeline (anchors, nested func.func pipelines,
// options in braces), `-` for standard input and output, and malformed pipelines
// as one-line errors.
// RUN: mlx-opt %s --pass-pipeline='builtin.module(func.func(cse), quantize-weights{bits=8 group-size=32}, canonicalize)' | filecheck %s
// RUN: mlx-opt %s -p 'cse,quantize-weights{bits=8 group-size=32},canonicalize' | filecheck %s
// RUN: cat %s | mlx-opt - --pass-pipeline='builtin.module(cse)' -o - | filecheck %s
// RUN: not mlx-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// RUN: not mlx-opt %s --pass-pipeline='gpu.module(cse)' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not mlx-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not mlx-opt %s -p cse --pass-pipeline='builtin.module(cse)' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not mlx-opt %s -p 'canonicalize{' 2>&1 | filecheck %s --check-prefix=BRACE
// RUN: not mlx-opt %s -p 'cse,,dce' 2>&1 | filecheck %s --check-prefix=EMPTY

// CHECK-LABEL: func.func @twice
// CHECK-NEXT:    %[[S:.*]] = mlx.add %a, %b
// CHECK-NEXT:    %[[P:.*]] = mlx.multiply %[[S]], %[[S]]
// CHECK-NEXT:    func.return %[[P]]
func.func @twice(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.multiply %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// UNCLOSED: mlx-opt: error: malformed --pass-pipeline at column 19 (after 'builtin.module(cse'): expected ',' or ')'
// ANCHOR: mlx-opt: error: malformed --pass-pipeline at column 1 (after ''): 'gpu.module' is not an anchor mlx-opt runs pipelines on (builtin.module, func.func, any)
// UNKNOWN: mlx-opt: error: no pass named 'no-such-pass'
// BOTH: mlx-opt: error: give the passes with -p, with --pass-pipeline or as flags (--cse), not together
// BRACE: mlx-opt: error: malformed pass pipeline 'canonicalize{' at column 14: Expected argument name here
// EMPTY: mlx-opt: error: malformed pass pipeline 'cse,,dce' at column 5: Expected pass name here
