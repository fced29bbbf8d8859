// RUN: mlx-opt %s | mlx-opt | filecheck %s
// RUN: mlx-opt %s --print-op-generic | mlx-opt | filecheck %s
// RUN: mlx-opt %s -p canonicalize,cse,dce | filecheck %s --check-prefix=KEPT

// Round trips of the collectives: mlx.all_sum, mlx.all_gather, mlx.send, mlx.recv.

// CHECK-LABEL: func.func @collectives(%x: tensor<?x?x64xf32>, %h: tensor<2x8xbf16>) -> (tensor<?x?x64xf32>, tensor<?x?x256xf32>, tensor<2x8xbf16>) {
// CHECK-NEXT:    %sum = mlx.all_sum %x : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
// CHECK-NEXT:    %gathered = mlx.all_gather %x axis 2 ranks 4 : tensor<?x?x64xf32> -> tensor<?x?x256xf32>
// CHECK-NEXT:    %sent = mlx.send %h peer 1 : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    %received = mlx.recv %sent peer 0 : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    func.return %sum, %gathered, %received : tensor<?x?x64xf32>, tensor<?x?x256xf32>, tensor<2x8xbf16>
// CHECK-NEXT:  }
func.func @collectives(%x: tensor<?x?x64xf32>, %h: tensor<2x8xbf16>) -> (tensor<?x?x64xf32>, tensor<?x?x256xf32>, tensor<2x8xbf16>) {
  %sum = mlx.all_sum %x : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %gathered = mlx.all_gather %x axis 2 ranks 4 : tensor<?x?x64xf32> -> tensor<?x?x256xf32>
  %sent = mlx.send %h peer 1 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %received = mlx.recv %sent peer 0 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %sum, %gathered, %received : tensor<?x?x64xf32>, tensor<?x?x256xf32>, tensor<2x8xbf16>
}

// A collective is a step every rank takes: neither CSE nor DCE removes one, even
// unused or repeated.
// KEPT-LABEL: func.func @unused
// KEPT-NEXT:    %{{.*}} = mlx.all_sum %x
// KEPT-NEXT:    %{{.*}} = mlx.all_sum %x
// KEPT-NEXT:    %{{.*}} = mlx.send %x peer 1
// KEPT-NEXT:    func.return
func.func @unused(%x: tensor<4xf32>) {
  %0 = mlx.all_sum %x : tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.all_sum %x : tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.send %x peer 1 : tensor<4xf32> -> tensor<4xf32>
  func.return
}
