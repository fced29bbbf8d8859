// Bad input never ends in a traceback: each failure is one diagnostic and exit 1.
// RUN: not mlx-opt %S/Inputs/parse_error.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: parse_error.mlir:3:1
// PARSE-NEXT: }
// PARSE: type expected
// PARSE-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY: verify_error.mlir: error: 'aten.exp' op result shape [3] does not match operand shape [2]
// VERIFY-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// PASS: mlx-opt: error: Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: mlx-opt: error: {{.*}}bogus
// OPTION-NOT: Traceback

// RUN: not mlx-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: mlx-opt: error: cannot open '{{.*}}does-not-exist.mlir': No such file or directory

// RUN: mlx-opt --help | filecheck %s --check-prefix=HELP
// HELP: passes (use with -p
// HELP: canonicalize
// HELP: cse
// HELP: dce
