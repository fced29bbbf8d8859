// --split-input-file processes every chunk whatever the others did: each failing
// chunk is reported at its own line, the good ones are printed, and the exit status
// is 1 if any failed.
// RUN: not mlx-opt %S/Inputs/split_chunks.mlir --split-input-file > %t.out 2> %t.err
// RUN: filecheck %s --check-prefix=OUT < %t.out
// RUN: filecheck %s --check-prefix=ERR < %t.err

// OUT:      func.func @first
// OUT:      // -----
// OUT:      // -----
// OUT:      func.func @third
// OUT:      // -----
// OUT-NOT:  func.func

// ERR:      split_chunks.mlir:11:3: error: 'mlx.sum' op axis 2 is out of range for rank 2
// ERR:      split_chunks.mlir:26:3
// ERR-NEXT:   func.return %0 : tensor<4xf32>
// ERR:        type expected
