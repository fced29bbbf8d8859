// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of the complex-number ops: the Fourier transforms and the
// views between complex64 and float32 pairs.

func.func @fft_dims_empty(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'aten.fft_r2c' op dims must name at least one axis}}
  %0 = aten.fft_r2c %x dims [] normalization 0 : tensor<4x8xf32> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_dims_repeated(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'aten.fft_r2c' op dims [1, -1] repeat an axis}}
  %0 = aten.fft_r2c %x dims [1, -1] normalization 0 : tensor<4x8xf32> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_normalization(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'aten.fft_c2c' op normalization must be 0, 1 or 2 (by 1, 1/sqrt(n), 1/n), got 3}}
  %0 = aten.fft_c2c %z dims [1] normalization 3 forward : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_real_input_complex(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'aten.fft_r2c' op input must have float element type, got complex<f32>}}
  %0 = aten.fft_r2c %z dims [1] normalization 0 : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_real_input_f64(%x: tensor<4x8xf64>) {
  // expected-error @+1 {{'aten.fft_r2c' op input must be f32, the parts of complex<f32>, got f64}}
  %0 = aten.fft_r2c %x dims [1] normalization 0 : tensor<4x8xf64> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_rank(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'aten.fft_c2c' op result must have the input's rank}}
  %0 = aten.fft_c2c %z dims [1] normalization 0 : tensor<4x8xcomplex<f32>> -> tensor<32xcomplex<f32>>
  func.return
}

// -----

func.func @fft_onesided_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'aten.fft_r2c' op result shape [4, 8] does not match the expected shape [4, 5]}}
  %0 = aten.fft_r2c %x dims [1] normalization 0 onesided : tensor<4x8xf32> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fft_c2r_half(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'aten.fft_c2r' op the input's last transformed dim must be the result's 8 / 2 + 1 = 5, got 8}}
  %0 = aten.fft_c2r %z dims [1] normalization 0 : tensor<4x8xcomplex<f32>> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @view_as_real_shape(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'aten.view_as_real' op result shape [4, 16] does not match the expected shape [4, 8, 2]}}
  %0 = aten.view_as_real %z : tensor<4x8xcomplex<f32>> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @view_as_real_of_real(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'aten.view_as_real' op input must have complex element type, got f32}}
  %0 = aten.view_as_real %x : tensor<4x8xf32> -> tensor<4x8x2xf32>
  func.return
}

// -----

func.func @view_as_complex_pairs(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'aten.view_as_complex' op input must be pairs [..., 2], got [4, 8]}}
  %0 = aten.view_as_complex %x : tensor<4x8xf32> -> tensor<4xcomplex<f32>>
  func.return
}

// -----

func.func @view_as_complex_result(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'aten.view_as_complex' op result must have complex element type, got f32}}
  %0 = aten.view_as_complex %x : tensor<4x2xf32> -> tensor<4xf32>
  func.return
}
