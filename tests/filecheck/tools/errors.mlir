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

// A pass option that does not exist, or a value its option cannot take, names the
// pass, the option and what it accepts; an unknown pass, the passes it may mean.
// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'quantize-weights{bitz=4}' 2>&1 | filecheck %s --check-prefix=OPTIONS
// OPTIONS: mlx-opt: error: pass 'quantize-weights' has no option 'bitz' (its options: bits, group-size, mode, embeddings, activation-bits)
// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'quantize-weights{bits=abc}' 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: mlx-opt: error: pass 'quantize-weights': option 'bits' takes an integer, not 'abc'
// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'quantize-weights{bits}' 2>&1 | filecheck %s --check-prefix=NO-VALUE
// NO-VALUE: mlx-opt: error: pass 'quantize-weights': option 'bits' needs a value (an integer)
// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p 'view-op-graph{print-attrs=maybe}' 2>&1 | filecheck %s --check-prefix=BOOL
// BOOL: mlx-opt: error: pass 'view-op-graph': option 'print-attrs' takes true or false, not 'maybe'
// RUN: not mlx-opt %S/Inputs/verify_error.mlir -p cs 2>&1 | filecheck %s --check-prefix=SUGGEST
// SUGGEST: mlx-opt: error: no pass named 'cs' (did you mean 'cse'?)

// A sigil without its name (xDSL's lexer leaves the message's placeholder unfilled).
// RUN: not mlx-opt %S/Inputs/lone_sigils.mlir --split-input-file 2>&1 | filecheck %s --check-prefix=SIGIL
// SIGIL:      lone_sigils.mlir:3:3
// SIGIL:      '%' must be followed by a value name such as %0 or %arg0
// SIGIL:      lone_sigils.mlir:6:1
// SIGIL:      '#' must be followed by an attribute name such as #map or #loc1
// SIGIL:      lone_sigils.mlir:8:18
// SIGIL:      '!' must be followed by a type name such as !t
// SIGIL:      lone_sigils.mlir:11:1
// SIGIL:      '^' must be followed by a block label such as ^bb0
// SIGIL-NOT:  first_char

// RUN: not mlx-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: mlx-opt: error: cannot open '{{.*}}does-not-exist.mlir': No such file or directory

// An output that cannot be written: a folder, or a file in a folder that does not exist.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: not mlx-opt %S/Inputs/empty.mlir -t mlx-fb -o %t.dir 2>&1 | filecheck %s --check-prefix=FOLDER
// RUN: not mlx-opt %S/Inputs/empty.mlir -o %t.dir 2>&1 | filecheck %s --check-prefix=FOLDER
// FOLDER: mlx-opt: error: cannot write '{{.*}}.dir': it is a directory
// FOLDER-NOT: internal error
// RUN: not mlx-opt %S/Inputs/empty.mlir -t mlx-fb -o %t.dir/no-such-folder/out.mlxfb 2>&1 | filecheck %s --check-prefix=NO-FOLDER
// RUN: not mlx-opt %S/Inputs/empty.mlir -o %t.dir/no-such-folder/out.mlir 2>&1 | filecheck %s --check-prefix=NO-FOLDER
// NO-FOLDER: mlx-opt: error: cannot write '{{.*}}no-such-folder/out.{{mlxfb|mlir}}': No such file or directory

// RUN: mlx-opt --help | filecheck %s --check-prefix=HELP
// RUN: mlx-opt -help | filecheck %s --check-prefix=HELP
// RUN: mlx-opt --help | head -n 1 | filecheck %s --check-prefix=USAGE
// USAGE: usage: mlx-opt
// HELP: passes (use with -p
// HELP: canonicalize
// HELP: cse
// HELP: dce
