// mlir-opt's spellings: a long option with one dash, passes as flags (`--cse` or
// `-cse`, options after `=`) run in command-line order, and the short options
// (-p, -o, -t, -f) as before.
// RUN: mlx-opt %s -split-input-file -pass-pipeline='builtin.module(cse)' | filecheck %s
// RUN: mlx-opt %s -split-input-file -pass-pipeline 'builtin.module(cse)' | filecheck %s
// RUN: mlx-opt %s -split-input-file --cse | filecheck %s
// RUN: mlx-opt %s -split-input-file -cse | filecheck %s
// RUN: mlx-opt %s -split-input-file --quantize-weights='bits=8 group-size=32' -cse | filecheck %s
// RUN: mlx-opt %s -split-input-file -p cse -t mlir -o %t && filecheck %s < %t
// RUN: mlx-opt -f mlir -split-input-file -pcse -o - < %s | filecheck %s

// Passes as flags run in the order they are given.
// RUN: mlx-opt %s --cse --canonicalize -mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: mlx-opt %s -canonicalize -cse -mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=REVERSED

// RUN: mlx-opt %s -cse -mlir-timing -o /dev/null 2>&1 | filecheck %s --check-prefix=TIMING

// A flag's options reach its pass; flags and -p or --pass-pipeline do not mix.
// RUN: not mlx-opt %s --quantize-weights=bits=abc 2>&1 | filecheck %s --check-prefix=FLAG-OPTION
// RUN: not mlx-opt %s -p cse -dce 2>&1 | filecheck %s --check-prefix=MIXED
// RUN: not mlx-opt %s --pass-pipeline='builtin.module(cse)' --dce 2>&1 | filecheck %s --check-prefix=MIXED

// A one-dash word that is neither an option nor a pass is not taken apart.
// RUN: not mlx-opt %s -no-such-thing 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %[[S:.*]] = mlx.add %a, %b
// CHECK-NEXT:    %[[P:.*]] = mlx.multiply %[[S]], %[[S]]
// CHECK-NEXT:    func.return %[[P]]
// CHECK:       // -----
// CHECK-LABEL: func.func @second
// CHECK-NEXT:    %[[E:.*]] = mlx.exp %a
// CHECK-NEXT:    %[[Q:.*]] = mlx.add %[[E]], %[[E]]
// CHECK-NEXT:    func.return %[[Q]]
func.func @first(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.multiply %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

func.func @second(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.exp %a : tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.exp %a : tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.add %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// ORDER:     IR Dump After CommonSubexpressionElimination (cse)
// ORDER:     IR Dump After CanonicalizePass (canonicalize)
// ORDER-NOT: IR Dump

// REVERSED:     IR Dump After CanonicalizePass (canonicalize)
// REVERSED:     IR Dump After CommonSubexpressionElimination (cse)
// REVERSED-NOT: IR Dump

// TIMING:      ----Wall Time----  ----Name----
// TIMING-NEXT: Parser
// TIMING-NEXT: cse

// FLAG-OPTION: mlx-opt: error: pass 'quantize-weights': option 'bits' takes an integer, not 'abc'
// MIXED: mlx-opt: error: give the passes with -p, with --pass-pipeline or as flags (--cse), not together
// UNKNOWN: mlx-opt: error: unrecognized arguments: -no-such-thing
