// An input with no op (empty, or only comments: this file) is an empty module, as
// for mlir-opt; so is an empty chunk of --split-input-file. -f names the format
// whatever the file's extension; without it, an extension mlx-opt does not know
// is a one-line error.
// RUN: mlx-opt %S/Inputs/empty.mlir | filecheck %s
// RUN: mlx-opt %s | filecheck %s
// RUN: mlx-opt - < %S/Inputs/empty.mlir | filecheck %s
// RUN: mlx-opt %s -split-input-file | filecheck %s --check-prefix=CHUNKS
// RUN: mlx-opt %S/Inputs/module.txt -f mlir | filecheck %s --check-prefix=TXT
// RUN: mlx-opt -f mlir %S/Inputs/module.txt -p cse | filecheck %s --check-prefix=TXT
// RUN: not mlx-opt %S/Inputs/module.txt 2>&1 | filecheck %s --check-prefix=EXTENSION

// CHECK:      builtin.module {
// CHECK-NEXT: }
// CHECK-NOT:  {{.}}

// -----
// A chunk of nothing but comments.

// CHUNKS:      builtin.module {
// CHUNKS-NEXT: }
// CHUNKS-EMPTY:
// CHUNKS-NEXT: {{^// -{5}$}}
// CHUNKS-NEXT: builtin.module {
// CHUNKS-NEXT: }
// CHUNKS-NOT:  {{.}}

// TXT: func.func @from_a_txt_file

// EXTENSION: mlx-opt: error: cannot tell the format of '{{.*}}module.txt' from its extension: give -f with one of mlir, mlxfb, pt2
