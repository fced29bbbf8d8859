// --verify-diagnostics with MLIR's semantics: each expected-error names its line
// (@+N, @-N, @above, @below, or its own line) and part of the message; every
// diagnostic must be expected and every expectation met, or mlx-opt exits 1 saying
// which. Parse errors are diagnostics too.
// RUN: mlx-opt %s --split-input-file --verify-diagnostics
// RUN: mlx-opt %s -split-input-file -verify-diagnostics
// RUN: not mlx-opt %S/Inputs/wrong_expectations.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

func.func @below(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.sum' op axis 2 is out of range for rank 2}}
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @above(%x: tensor<4x8xf32>) {
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-error @-1 {{axis 2 is out of range}}
  func.return
}

// -----

func.func @above_keyword(%x: tensor<4x8xf32>) {
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-error @above {{out of range for rank 2}}
  func.return
}

// -----

func.func @below_keyword(%x: tensor<4x8xf32>) {
  // expected-error @below {{'mlx.sum' op}}
  %0 = mlx.sum %x axes [2] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @same_line(%x: tensor<4x8xf32>) {
  %0 = mlx.sum %x axes [2 : tensor<4x8xf32> -> tensor<4xf32> // expected-error {{']' expected}}
  func.return
}

// -----

// A lexer error is expected by its message as mlx-opt words it.
func.func @lone_sigil(%x: tensor<4xf32>) {
  // expected-error @+1 {{'%' must be followed by a value name}}
  % = mlx.exp %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// A chunk without diagnostics and without expectations passes.
func.func @fine(%x: tensor<4x8xf32>) {
  func.return
}

// WRONG-DAG: wrong_expectations.mlir:5:3: error: unexpected error: 'mlx.sum' op axis 2 is out of range for rank 2
// WRONG-DAG: wrong_expectations.mlir:4:3: error: expected error "out of range for rank 3" was not produced
// WRONG-DAG: wrong_expectations.mlir:13:3: error: unexpected error: 'mlx.sum' op axis 2 is out of range for rank 2
// WRONG-DAG: wrong_expectations.mlir:12:3: error: expected error "axis 2" was not produced
// WRONG-DAG: wrong_expectations.mlir:20:3: error: unexpected error: 'mlx.max' op axis 5 is out of range for rank 2
// WRONG-DAG: wrong_expectations.mlir:27:3: error: expected warning "never emitted" was not produced
