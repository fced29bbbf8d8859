// Bad programs and IR the format cannot hold: one error line each, exit 1, no traceback.
// RUN: mlx-opt %S/Inputs/program.mlir -t mlx-fb -o %t.mlxfb

// RUN: head -c 100 %t.mlxfb > %t.truncated.mlxfb
// RUN: not mlx-opt %t.truncated.mlxfb 2>&1 | filecheck %s --check-prefix=TRUNCATED
// TRUNCATED: mlx-opt: error: {{.*}}truncated.mlxfb: truncated program: the FlatBuffer needs {{[0-9]+}} bytes, the file has 100
// TRUNCATED-NOT: Traceback

// RUN: printf 'definitely not a program' > %t.garbage.mlxfb
// RUN: not mlx-opt %t.garbage.mlxfb 2>&1 | filecheck %s --check-prefix=GARBAGE
// GARBAGE: mlx-opt: error: {{.*}}garbage.mlxfb: not an .mlxfb program: the file identifier is b'ly n', expected b'MLXF'

// RUN: env LC_ALL=C sed 's/mlx\.softmax/mlx.softmix/' %t.mlxfb > %t.unknown.mlxfb
// RUN: not mlx-opt %t.unknown.mlxfb 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: mlx-opt: error: {{.*}}unknown.mlxfb: program.op_names[{{[0-9]+}}]: unknown op 'mlx.softmix'

// RUN: cat %t.mlxfb %t.mlxfb > %t.twice.mlxfb
// RUN: not mlx-opt %t.twice.mlxfb 2>&1 | filecheck %s --check-prefix=TRAILING
// TRAILING: mlx-opt: error: {{.*}}twice.mlxfb: the program should be {{[0-9]+}} bytes {{.*}}: truncated or with trailing bytes

// RUN: not mlx-opt %S/Inputs/aten.mlir -t mlx-fb -o %t.never.mlxfb 2>&1 | filecheck %s --check-prefix=ATEN
// ATEN: mlx-opt: error: cannot serialize 'aten.exp': a program holds mlx ops
// RUN: not test -e %t.never.mlxfb

// RUN: not mlx-opt %S/Inputs/no_payload.mlir -t mlx-fb -o %t.never.mlxfb 2>&1 | filecheck %s --check-prefix=PAYLOAD
// PAYLOAD: mlx-opt: error: global @w has no payload: give it a dense<...> value in the IR or pass its payload to serialize

// A program printed as text holds its weights: it parses back to the same bytes.
// RUN: mlx-opt %t.mlxfb | mlx-opt -t mlx-fb -o %t.back.mlxfb
// RUN: cmp %t.mlxfb %t.back.mlxfb
