// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s

// Round trips of sorting and selection: sort, topk, median (of all elements and
// along a dim) and kthvalue, with their optional flags present and absent.

// CHECK-LABEL: func.func @sorting(%x: tensor<3x?x4xf32>, %i: tensor<5xi32>) -> tensor<3x?x4xf32> {
// CHECK-NEXT:    %values, %indices = aten.sort %x dim 1 : tensor<3x?x4xf32> -> tensor<3x?x4xf32>, tensor<3x?x4xi64>
// CHECK-NEXT:    %down, %down_idx = aten.sort %i dim -1 descending : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
// CHECK-NEXT:    %top, %top_idx = aten.topk %x k 2 dim 2 : tensor<3x?x4xf32> -> tensor<3x?x2xf32>, tensor<3x?x2xi64>
// CHECK-NEXT:    %low, %low_idx = aten.topk %i k 5 dim 0 smallest : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
// CHECK-NEXT:    %median = aten.median %x : tensor<3x?x4xf32> -> tensor<f32>
// CHECK-NEXT:    %med, %med_idx = aten.median %x dim 1 : tensor<3x?x4xf32> -> tensor<3x4xf32>, tensor<3x4xi64>
// CHECK-NEXT:    %medk, %medk_idx = aten.median %i dim 0 keepdim : tensor<5xi32> -> tensor<1xi32>, tensor<1xi64>
// CHECK-NEXT:    %cmax, %cmax_idx = aten.cummax %x dim 1 : tensor<3x?x4xf32> -> tensor<3x?x4xf32>, tensor<3x?x4xi64>
// CHECK-NEXT:    %cmin, %cmin_idx = aten.cummin %i dim -1 : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
// CHECK-NEXT:    %nanmedian = aten.nanmedian %x : tensor<3x?x4xf32> -> tensor<f32>
// CHECK-NEXT:    %nanmed, %nanmed_idx = aten.nanmedian %x dim -1 keepdim : tensor<3x?x4xf32> -> tensor<3x?x1xf32>, tensor<3x?x1xi64>
// CHECK-NEXT:    %kth, %kth_idx = aten.kthvalue %x k 2 dim -1 : tensor<3x?x4xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
// CHECK-NEXT:    %kthk, %kthk_idx = aten.kthvalue %x k 3 dim 0 keepdim : tensor<3x?x4xf32> -> tensor<1x?x4xf32>, tensor<1x?x4xi64>
// CHECK-NEXT:    func.return %values : tensor<3x?x4xf32>
// CHECK-NEXT:  }
func.func @sorting(%x: tensor<3x?x4xf32>, %i: tensor<5xi32>) -> tensor<3x?x4xf32> {
  %values, %indices = aten.sort %x dim 1 : tensor<3x?x4xf32> -> tensor<3x?x4xf32>, tensor<3x?x4xi64>
  %down, %down_idx = aten.sort %i dim -1 descending : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
  %top, %top_idx = aten.topk %x k 2 dim 2 : tensor<3x?x4xf32> -> tensor<3x?x2xf32>, tensor<3x?x2xi64>
  %low, %low_idx = aten.topk %i k 5 dim 0 smallest : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
  %median = aten.median %x : tensor<3x?x4xf32> -> tensor<f32>
  %med, %med_idx = aten.median %x dim 1 : tensor<3x?x4xf32> -> tensor<3x4xf32>, tensor<3x4xi64>
  %medk, %medk_idx = aten.median %i dim 0 keepdim : tensor<5xi32> -> tensor<1xi32>, tensor<1xi64>
  %cmax, %cmax_idx = aten.cummax %x dim 1 : tensor<3x?x4xf32> -> tensor<3x?x4xf32>, tensor<3x?x4xi64>
  %cmin, %cmin_idx = aten.cummin %i dim -1 : tensor<5xi32> -> tensor<5xi32>, tensor<5xi64>
  %nanmedian = aten.nanmedian %x : tensor<3x?x4xf32> -> tensor<f32>
  %nanmed, %nanmed_idx = aten.nanmedian %x dim -1 keepdim : tensor<3x?x4xf32> -> tensor<3x?x1xf32>, tensor<3x?x1xi64>
  %kth, %kth_idx = aten.kthvalue %x k 2 dim -1 : tensor<3x?x4xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
  %kthk, %kthk_idx = aten.kthvalue %x k 3 dim 0 keepdim : tensor<3x?x4xf32> -> tensor<1x?x4xf32>, tensor<1x?x4xi64>
  func.return %values : tensor<3x?x4xf32>
}
