// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the sorting and selection ops and checks its message.

func.func @sort_dim(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.sort' op dim 2 is out of range for rank 2}}
  %v, %i = aten.sort %x dim 2 : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3x4xi64>
  func.return
}

// -----

func.func @sort_values_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.sort' op values shape [4, 3] does not match the expected shape [3, 4]}}
  %v, %i = aten.sort %x dim 0 : tensor<3x4xf32> -> tensor<4x3xf32>, tensor<3x4xi64>
  func.return
}

// -----

func.func @sort_indices_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.sort' op indices shape [3] does not match the expected shape [3, 4]}}
  %v, %i = aten.sort %x dim 0 : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3xi64>
  func.return
}

// -----

func.func @sort_values_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.sort' op values element type f16 must equal the input's f32}}
  %v, %i = aten.sort %x dim 0 : tensor<3x4xf32> -> tensor<3x4xf16>, tensor<3x4xi64>
  func.return
}

// -----

func.func @sort_indices_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.sort' op indices must have integer (not bool) element type, got f32}}
  %v, %i = aten.sort %x dim 0 : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3x4xf32>
  func.return
}

// -----

func.func @topk_k(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.topk' op k 5 is out of range for a dim of size 4}}
  %v, %i = aten.topk %x k 5 dim 1 : tensor<3x4xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
  func.return
}

// -----

func.func @topk_negative_k(%x: tensor<3x?xf32>) {
  // expected-error @+1 {{'aten.topk' op k -1 is out of range for a dim of size ?}}
  %v, %i = aten.topk %x k -1 dim 1 : tensor<3x?xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
  func.return
}

// -----

func.func @topk_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.topk' op values shape [3, 4] does not match the expected shape [3, 2]}}
  %v, %i = aten.topk %x k 2 dim 1 : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3x2xi64>
  func.return
}

// -----

func.func @median_keepdim(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op keepdim needs a dim}}
  %m = aten.median %x keepdim : tensor<3x4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @median_all_results(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op without a dim the median has 1 result, got 2}}
  %m, %i = aten.median %x : tensor<3x4xf32> -> tensor<f32>, tensor<i64>
  func.return
}

// -----

func.func @median_all_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op result shape [1] does not match the expected shape []}}
  %m = aten.median %x : tensor<3x4xf32> -> tensor<1xf32>
  func.return
}

// -----

func.func @median_all_dtype(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op result element type must equal the input's}}
  %m = aten.median %x : tensor<3x4xf32> -> tensor<i64>
  func.return
}

// -----

func.func @median_dim_results(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op with a dim the median has 2 results (values, indices), got 1}}
  %m = aten.median %x dim 1 : tensor<3x4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @median_dim_keepdim_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.median' op values shape [3] does not match the expected shape [3, 1]}}
  %m, %i = aten.median %x dim 1 keepdim : tensor<3x4xf32> -> tensor<3xf32>, tensor<3xi64>
  func.return
}

// -----

func.func @kthvalue_k(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.kthvalue' op k 0 is out of range [1, 4]}}
  %v, %i = aten.kthvalue %x k 0 dim 1 : tensor<3x4xf32> -> tensor<3xf32>, tensor<3xi64>
  func.return
}

// -----

func.func @kthvalue_k_large(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.kthvalue' op k 5 is out of range [1, 4]}}
  %v, %i = aten.kthvalue %x k 5 dim -1 : tensor<3x4xf32> -> tensor<3xf32>, tensor<3xi64>
  func.return
}

// -----

func.func @kthvalue_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'aten.kthvalue' op indices shape [3, 1] does not match the expected shape [3]}}
  %v, %i = aten.kthvalue %x k 1 dim 1 : tensor<3x4xf32> -> tensor<3xf32>, tensor<3x1xi64>
  func.return
}
