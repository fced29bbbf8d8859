// Round trip of module-level mlx.global symbols and the ops that read and write them.
// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CANON

// CHECK: mlx.global @embed.weight "parameter" : tensor<32000x512xbf16>
// CHECK: mlx.global @norm.weight "parameter" : tensor<512xbf16> = dense<1.000000e+00> : tensor<512xbf16>
// CHECK: mlx.global @rope.inv_freq "buffer" : tensor<32xf32>
// CHECK: mlx.global @lifted_tensor_0 "constant" : tensor<2xi64> = dense<[4, -1]> : tensor<2xi64>
// CHECK: mlx.global @cache.k "state" : tensor<1x8x256x64xf16>
// CHECK: mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
// CHECK: mlx.global @blob "constant" : tensor<4xf32> = dense_resource<blob1> : tensor<4xf32>
// CHECK: mlx.global @q_proj.weight "parameter" ranks 2 : tensor<1x3xf32> = dense<{{\[}}{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00]], {{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00]]]> : tensor<2x1x3xf32>
// CHECK: mlx.global @o_proj.weight "parameter" ranks 2 : tensor<64x32xf16>
// CHECK: mlx.global @tagged "buffer" : tensor<3xf32> {origin = "rope"}
mlx.global @embed.weight "parameter" : tensor<32000x512xbf16>
mlx.global @norm.weight "parameter" : tensor<512xbf16> = dense<1.000000e+00> : tensor<512xbf16>
mlx.global @rope.inv_freq "buffer" : tensor<32xf32>
mlx.global @lifted_tensor_0 "constant" : tensor<2xi64> = dense<[4, -1]> : tensor<2xi64>
mlx.global @cache.k "state" : tensor<1x8x256x64xf16>
mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
mlx.global @blob "constant" : tensor<4xf32> = dense_resource<blob1> : tensor<4xf32>
mlx.global @q_proj.weight "parameter" ranks 2 : tensor<1x3xf32> = dense<[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]> : tensor<2x1x3xf32>
mlx.global @o_proj.weight "parameter" ranks 2 : tensor<64x32xf16>
mlx.global @tagged "buffer" : tensor<3xf32> {origin = "rope"}

// CHECK-LABEL: func.func @read_weights(
// CHECK-SAME: %ids: tensor<1x?xi32>) -> tensor<1x?x512xbf16> {
// CHECK-NEXT: %table = mlx.weight @embed.weight : tensor<32000x512xbf16>
// CHECK-NEXT: %h = mlx.take %table, %ids axis 0 : tensor<32000x512xbf16>, tensor<1x?xi32> -> tensor<1x?x512xbf16>
// CHECK-NEXT: %g = mlx.weight @norm.weight : tensor<512xbf16>
// CHECK-NEXT: %y = mlx.rms_norm %h weight %g : tensor<512xbf16> eps 1.000000e-05 : tensor<1x?x512xbf16> -> tensor<1x?x512xbf16>
// CHECK-NEXT: %f = mlx.weight @rope.inv_freq : tensor<32xf32>
// CHECK-NEXT: %s = mlx.weight @lifted_tensor_0 : tensor<2xi64>
// CHECK-NEXT: %r = mlx.weight @blob : tensor<4xf32>
// CHECK-NEXT: %t = mlx.weight @tagged {note = "x"} : tensor<3xf32>
// CHECK-NEXT: func.return %y : tensor<1x?x512xbf16>
// CHECK-NEXT: }
func.func @read_weights(%ids: tensor<1x?xi32>) -> tensor<1x?x512xbf16> {
  %table = mlx.weight @embed.weight : tensor<32000x512xbf16>
  %h = mlx.take %table, %ids axis 0 : tensor<32000x512xbf16>, tensor<1x?xi32> -> tensor<1x?x512xbf16>
  %g = mlx.weight @norm.weight : tensor<512xbf16>
  %y = mlx.rms_norm %h weight %g : tensor<512xbf16> eps 1.000000e-05 : tensor<1x?x512xbf16> -> tensor<1x?x512xbf16>
  %f = mlx.weight @rope.inv_freq : tensor<32xf32>
  %s = mlx.weight @lifted_tensor_0 : tensor<2xi64>
  %r = mlx.weight @blob : tensor<4xf32>
  %t = mlx.weight @tagged {note = "x"} : tensor<3xf32>
  func.return %y : tensor<1x?x512xbf16>
}

// CHECK-LABEL: func.func @update_state(
// CHECK-SAME: %k: tensor<1x8x1x64xf16>, %pos: index) -> tensor<1x8x256x64xf16> {
// CHECK-NEXT: %cache = mlx.load_state @cache.k : tensor<1x8x256x64xf16>
// CHECK-NEXT: %new = mlx.slice_update %cache, %k start [%pos] axes [2] : tensor<1x8x256x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x256x64xf16>
// CHECK-NEXT: mlx.store_state %new to @cache.k : tensor<1x8x256x64xf16>
// CHECK-NEXT: %step = mlx.load_state @step : tensor<i64>
// CHECK-NEXT: %one = mlx.constant dense<1> : tensor<i64>
// CHECK-NEXT: %next = mlx.add %step, %one : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NEXT: mlx.store_state %next to @step : tensor<i64>
// CHECK-NEXT: func.return %new : tensor<1x8x256x64xf16>
// CHECK-NEXT: }
func.func @update_state(%k: tensor<1x8x1x64xf16>, %pos: index) -> tensor<1x8x256x64xf16> {
  %cache = mlx.load_state @cache.k : tensor<1x8x256x64xf16>
  %new = mlx.slice_update %cache, %k start [%pos] axes [2] : tensor<1x8x256x64xf16>, tensor<1x8x1x64xf16> -> tensor<1x8x256x64xf16>
  mlx.store_state %new to @cache.k : tensor<1x8x256x64xf16>
  %step = mlx.load_state @step : tensor<i64>
  %one = mlx.constant dense<1> : tensor<i64>
  %next = mlx.add %step, %one : tensor<i64>, tensor<i64> -> tensor<i64>
  mlx.store_state %next to @step : tensor<i64>
  func.return %new : tensor<1x8x256x64xf16>
}

// Weights are Pure (merged, dropped when dead); state reads and writes stay in order.
// CANON-LABEL: func.func @effects(
// CANON-NEXT:    %a = mlx.weight @norm.weight : tensor<512xbf16>
// CANON-NEXT:    %s0 = mlx.load_state @step : tensor<i64>
// CANON-NEXT:    %inc = mlx.add %s0, %s0 : tensor<i64>, tensor<i64> -> tensor<i64>
// CANON-NEXT:    mlx.store_state %inc to @step : tensor<i64>
// CANON-NEXT:    %s1 = mlx.load_state @step : tensor<i64>
// CANON-NEXT:    func.return %a, %a, %s1 : tensor<512xbf16>, tensor<512xbf16>, tensor<i64>
// CHECK-LABEL: func.func @effects(
// CHECK-SAME: ) -> (tensor<512xbf16>, tensor<512xbf16>, tensor<i64>) {
// CHECK-NEXT: %a = mlx.weight @norm.weight : tensor<512xbf16>
// CHECK-NEXT: %b = mlx.weight @norm.weight : tensor<512xbf16>
// CHECK-NEXT: %dead = mlx.weight @embed.weight : tensor<32000x512xbf16>
// CHECK-NEXT: %s0 = mlx.load_state @step : tensor<i64>
// CHECK-NEXT: %inc = mlx.add %s0, %s0 : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NEXT: mlx.store_state %inc to @step : tensor<i64>
// CHECK-NEXT: %s1 = mlx.load_state @step : tensor<i64>
// CHECK-NEXT: func.return %a, %b, %s1 : tensor<512xbf16>, tensor<512xbf16>, tensor<i64>
// CHECK-NEXT: }
func.func @effects() -> (tensor<512xbf16>, tensor<512xbf16>, tensor<i64>) {
  %a = mlx.weight @norm.weight : tensor<512xbf16>
  %b = mlx.weight @norm.weight : tensor<512xbf16>
  %dead = mlx.weight @embed.weight : tensor<32000x512xbf16>
  %s0 = mlx.load_state @step : tensor<i64>
  %inc = mlx.add %s0, %s0 : tensor<i64>, tensor<i64> -> tensor<i64>
  mlx.store_state %inc to @step : tensor<i64>
  %s1 = mlx.load_state @step : tensor<i64>
  func.return %a, %b, %s1 : tensor<512xbf16>, tensor<512xbf16>, tensor<i64>
}
