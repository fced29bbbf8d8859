// A program survives the .mlxfb format: mlx-opt writes it, prints it back as mlx IR
// (globals without their payloads, which stay in the file), and writes it back byte
// for byte. A weight read is no instruction (it is its global's slot), so it prints
// back right before its first use, unnamed, and an unused one not at all. Globals of every kind, dynamic dims, index arithmetic, a multi-result op,
// optional operands, inline constants, state, locations and symbolic-shape attributes.
// RUN: mlx-opt %s -t mlx-fb -o %t.mlxfb
// RUN: mlx-opt %t.mlxfb | filecheck %s
// RUN: mlx-opt %t.mlxfb -t mlx-fb -o %t.again.mlxfb
// RUN: cmp %t.mlxfb %t.again.mlxfb
// RUN: mlx-opt %t.mlxfb --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlx-opt %t.mlxfb -p canonicalize,cse -t mlx-fb | mlx-opt -f mlxfb | filecheck %s --check-prefix=CANON

// CHECK:      mlx.global @embed.weight "parameter" : tensor<16x8xf32>
// CHECK-NEXT: mlx.global @norm.weight "parameter" : tensor<8xbf16>
// CHECK-NEXT: mlx.global @proj.bias "buffer" : tensor<8xf16>
// CHECK-NEXT: mlx.global @lifted_tensor_0 "constant" : tensor<2xi64>
// CHECK-NEXT: mlx.global @mask "constant" : tensor<4xi1>
// CHECK-NEXT: mlx.global @cache "state" : tensor<1x4x8xf32>
// CHECK-NEXT: func.func @forward(%ids: tensor<1x?xi64>, %pos: index) -> (tensor<1x?x8xf32>, tensor<1x?x4xf32>, index) attributes {mlxir.input_dims = {{\[\["", "s0"\], \[\]\]}}, mlxir.symbol_ranges = {s0 = array<i64: 1, 4>}} {
// CHECK-NEXT:   %n = mlx.dim %ids axis 1 : tensor<1x?xi64>
// CHECK-NEXT:   %c1 = arith.constant 1 : index
// CHECK-NEXT:   %n1 = arith.addi %n, %c1 : index
// CHECK-NEXT:   %q = arith.floordivsi %n1, %c1 : index
// CHECK-NEXT:   %lt = arith.cmpi slt, %q, %n : index
// CHECK-NEXT:   %sel = arith.select %lt, %q, %n : index
// CHECK-NEXT:   %[[TABLE:.*]] = mlx.weight @embed.weight : tensor<16x8xf32>
// CHECK-NEXT:   %h = mlx.take %[[TABLE]], %ids axis 0 : tensor<16x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32>
// CHECK-NEXT:   %ln = mlx.layer_norm %h eps 1.000000e-05 : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT:   %parts, %parts_1 = mlx.split %ln at [4] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x4xf32>
// CHECK-NEXT:   %sum = mlx.add %parts, %parts_1 : tensor<1x?x4xf32>, tensor<1x?x4xf32> -> tensor<1x?x4xf32>
// CHECK-NEXT:   %hb = mlx.astype %ln : tensor<1x?x8xf32> -> tensor<1x?x8xbf16>
// CHECK-NEXT:   %[[G:.*]] = mlx.weight @norm.weight : tensor<8xbf16>
// CHECK-NEXT:   %y = mlx.rms_norm %hb weight %[[G]] : tensor<8xbf16> eps 1.000000e-06 : tensor<1x?x8xbf16> -> tensor<1x?x8xbf16>
// CHECK-NEXT:   %half = mlx.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:   %scaled = mlx.multiply %h, %half : tensor<1x?x8xf32>, tensor<f32> -> tensor<1x?x8xf32>
// CHECK-NEXT:   %cache = mlx.load_state @cache : tensor<1x4x8xf32>
// CHECK-NEXT:   %new = mlx.slice_update %cache, %scaled start [%pos] axes [1] : tensor<1x4x8xf32>, tensor<1x?x8xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT:   mlx.store_state %new to @cache : tensor<1x4x8xf32>
// CHECK-NEXT:   func.return %scaled, %sum, %sel : tensor<1x?x8xf32>, tensor<1x?x4xf32>, index
// CHECK-NEXT: }

// LOC: mlx.take {{.*}} loc("model.py":13:8)

// Dead code goes; the state write stays.
// CANON-LABEL: func.func @forward(
// CANON-NOT:     mlx.weight @lifted_tensor_0
// CANON:         mlx.store_state %{{.*}} to @cache

mlx.global @embed.weight "parameter" : tensor<16x8xf32> = dense<0.5> : tensor<16x8xf32>
mlx.global @norm.weight "parameter" : tensor<8xbf16> = dense<1.0> : tensor<8xbf16>
mlx.global @proj.bias "buffer" : tensor<8xf16> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf16>
mlx.global @lifted_tensor_0 "constant" : tensor<2xi64> = dense<[4, -1]> : tensor<2xi64>
mlx.global @mask "constant" : tensor<4xi1> = dense<[true, false, true, true]> : tensor<4xi1>
mlx.global @cache "state" : tensor<1x4x8xf32> = dense<0.0> : tensor<1x4x8xf32>
func.func @forward(%ids: tensor<1x?xi64>, %pos: index) -> (tensor<1x?x8xf32>, tensor<1x?x4xf32>, index) attributes {mlxir.input_dims = [["", "s0"], []], mlxir.symbol_ranges = {s0 = array<i64: 1, 4>}} {
  %n = mlx.dim %ids axis 1 : tensor<1x?xi64>
  %c1 = arith.constant 1 : index
  %n1 = arith.addi %n, %c1 : index
  %q = arith.floordivsi %n1, %c1 : index
  %lt = arith.cmpi slt, %q, %n : index
  %sel = arith.select %lt, %q, %n : index
  %table = mlx.weight @embed.weight : tensor<16x8xf32>
  %h = mlx.take %table, %ids axis 0 : tensor<16x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32> loc("model.py":13:8)
  %ln = mlx.layer_norm %h eps 1.000000e-05 : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %parts:2 = mlx.split %ln at [4] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x4xf32>
  %sum = mlx.add %parts#0, %parts#1 : tensor<1x?x4xf32>, tensor<1x?x4xf32> -> tensor<1x?x4xf32>
  %g = mlx.weight @norm.weight : tensor<8xbf16>
  %hb = mlx.astype %ln : tensor<1x?x8xf32> -> tensor<1x?x8xbf16>
  %y = mlx.rms_norm %hb weight %g : tensor<8xbf16> eps 1.000000e-06 : tensor<1x?x8xbf16> -> tensor<1x?x8xbf16>
  %b = mlx.weight @proj.bias : tensor<8xf16>
  %shape = mlx.weight @lifted_tensor_0 : tensor<2xi64>
  %mk = mlx.weight @mask : tensor<4xi1>
  %half = mlx.constant dense<5.000000e-01> : tensor<f32>
  %scaled = mlx.multiply %h, %half : tensor<1x?x8xf32>, tensor<f32> -> tensor<1x?x8xf32>
  %cache = mlx.load_state @cache : tensor<1x4x8xf32>
  %new = mlx.slice_update %cache, %scaled start [%pos] axes [1] : tensor<1x4x8xf32>, tensor<1x?x8xf32> -> tensor<1x4x8xf32>
  mlx.store_state %new to @cache : tensor<1x4x8xf32>
  func.return %scaled, %sum, %sel : tensor<1x?x8xf32>, tensor<1x?x4xf32>, index
}
