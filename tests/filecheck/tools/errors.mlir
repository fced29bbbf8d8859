// Bad input never ends in a traceback: each failure is one diagnostic and exit 1.
// RUN: not mlx-opt %S/Inputs/parse_error.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: parse_error.mlir:3:1
// PARSE-NEXT: }
// PARSE: type expected
// PARSE-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY: verify_error.mlir:2:3: error: 'aten.exp' op result shape [3] does not match operand shape [2]
// VERIFY-NOT: Traceback

// A type constraint of a declarative format fails while the op is parsed: a parse
// error at the op.
// RUN: not mlx-opt %S/Inputs/type_constraint.mlir 2>&1 | filecheck %s --check-prefix=CONSTRAINT
// CONSTRAINT: type_constraint.mlir:2:3
// CONSTRAINT-NEXT: %0 = aten.exp %x : f32 -> f32
// CONSTRAINT: f32 should be of base attribute tensor
// CONSTRAINT-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/unterminated_string.mlir 2>&1 | filecheck %s --check-prefix=STRING
// STRING: unterminated_string.mlir:2:11
// STRING: End of file reached before closing string literal.

// A pass that fails on an op names where the op is.
// RUN: not mlx-opt %S/Inputs/lowering_error.mlir -p convert-aten-to-mlx 2>&1 | filecheck %s --check-prefix=LOWER
// LOWER: lowering_error.mlir:2:3: error: aten.index: a bool mask index selects a data-dependent number of elements
// LOWER-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// PASS: mlx-opt: error: no pass named 'no-such-pass'
// PASS-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: mlx-opt: error: pass 'canonicalize' has no option 'bogus' (it takes no options)
// OPTION-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: mlx-opt: error: cannot open '{{.*}}does-not-exist.mlir': No such file or directory

// RUN: mlx-opt --help | filecheck %s --check-prefix=HELP
// HELP: passes (use with -p
// HELP: canonicalize
// HELP: cse
// HELP: dce
