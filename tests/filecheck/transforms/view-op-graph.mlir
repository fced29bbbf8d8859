// view-op-graph: the module as Graphviz DOT on stdout, before the module itself,
// which the pass leaves unchanged. Ops are nodes (name, attributes, result types),
// uses are solid edges, each op with regions a cluster whose region is a cluster too;
// edges into a cluster end at its border (lhead). A weight's dense value prints
// without its elements.
// RUN: mlx-opt %s -p view-op-graph | filecheck %s
// RUN: mlx-opt %s -p 'view-op-graph{print-attrs=false print-result-types=false print-control-flow-edges=true print-debug-info=true}' -o %t.mlir | filecheck %s --check-prefix=BARE
// RUN: filecheck %s --check-prefix=PASSED --input-file=%t.mlir
// RUN: mlx-opt %s -p 'view-op-graph{max-label-len=4}' | filecheck %s --check-prefix=SHORT
// RUN: mlx-opt %s -p 'view-op-graph{print-data-flow-edges=false}' | filecheck %s --check-prefix=NODATA

// CHECK:      digraph G {
// CHECK-NEXT:   compound = true;
// CHECK-NEXT:   subgraph cluster_1 {
// CHECK-NEXT:     label = "builtin.module";
// CHECK-NEXT:     v2 [label = "", shape = point, style = invis];
// CHECK-NEXT:     subgraph cluster_3 {
// CHECK-NEXT:       label = "region #0";
// CHECK-NEXT:       v4 [label = "mlx.global\nkind: \"parameter\"\nsym_name: \"w\"\ntype: tensor<8xf32>\nvalue: dense<...> : tensor<...", shape = ellipse];
// CHECK-NEXT:       subgraph cluster_5 {
// CHECK-NEXT:         label = "func.func\nfunction_type: (tensor<2x8xf32>) ->...\nsym_name: \"forward\"";
// CHECK-NEXT:         v6 [label = "", shape = point, style = invis];
// CHECK-NEXT:         subgraph cluster_7 {
// CHECK-NEXT:           label = "region #0";
// CHECK-NEXT:           v8 [label = "arg0", shape = plain];
// CHECK-NEXT:           v9 [label = "mlx.weight\nglobal_name: @w\ntensor<8xf32>", shape = ellipse];
// CHECK-NEXT:           v10 [label = "mlx.add\ntensor<2x8xf32>", shape = ellipse];
// CHECK-NEXT:           v11 [label = "mlx.sum\naxes: array<i64: 1>\ntensor<2xf32>", shape = ellipse];
// CHECK-NEXT:           v12 [label = "func.return", shape = ellipse];
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   v8 -> v10 [style = solid];
// CHECK-NEXT:   v9 -> v10 [style = solid];
// CHECK-NEXT:   v10 -> v11 [style = solid];
// CHECK-NEXT:   v10 -> v12 [style = solid];
// CHECK-NEXT:   v11 -> v12 [style = solid];
// CHECK-NEXT: }
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   mlx.global @w "parameter" : tensor<8xf32> = dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT:   func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>) {

// BARE:      v9 [label = "mlx.weight", shape = ellipse];
// BARE-NEXT: v10 [label = "mlx.add\nm.py:4:2", shape = ellipse];
// BARE:      v4 -> v6 [style = dashed, lhead = cluster_5];
// BARE-NEXT: v9 -> v10 [style = dashed];
// BARE-NEXT: v10 -> v11 [style = dashed];
// BARE-NEXT: v11 -> v12 [style = dashed];
// BARE-NEXT: v8 -> v10 [style = solid];
// BARE:      }
// BARE-NOT:  builtin.module

// PASSED:      mlx.global @w "parameter" : tensor<8xf32> = dense<1.000000e+00> : tensor<8xf32>
// PASSED:      %y = mlx.add %x, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// PASSED-NEXT: %s = mlx.sum %y axes [1] : tensor<2x8xf32> -> tensor<2xf32>

// SHORT: v9 [label = "mlx.weight\nglobal_name: @w\ntens...", shape = ellipse];

// NODATA-NOT: arg0
// NODATA-NOT: ->
// NODATA:     builtin.module

mlx.global @w "parameter" : tensor<8xf32> = dense<1.0> : tensor<8xf32>
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>) {
  %w = mlx.weight @w : tensor<8xf32>
  %y = mlx.add %x, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32> loc("m.py":4:2)
  %s = mlx.sum %y axes [1] : tensor<2x8xf32> -> tensor<2xf32>
  func.return %y, %s : tensor<2x8xf32>, tensor<2xf32>
}
