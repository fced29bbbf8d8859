// RUN: mlx-opt %s --split-input-file --verify-diagnostics

// Each chunk breaks one rule of MLX's FFT, or of a view between element types of
// different widths.

func.func @fftn_axes_empty(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op axes must name at least one axis}}
  %0 = mlx.fftn %z axes [] : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fftn_last_size_without_irfftn(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op last_size is given exactly for a real inverse (irfftn)}}
  %0 = mlx.fftn %z axes [1] inverse last_size 8 : tensor<4x8xcomplex<f32>> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @fftn_rfftn_of_complex(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op input must have float element type, got complex<f32>}}
  %0 = mlx.fftn %z axes [1] real : tensor<4x8xcomplex<f32>> -> tensor<4x5xcomplex<f32>>
  func.return
}

// -----

func.func @fftn_irfftn_f16(%z: tensor<4x5xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op result must be f32, the parts of complex<f32>, got f16}}
  %0 = mlx.fftn %z axes [1] inverse real last_size 8 : tensor<4x5xcomplex<f32>> -> tensor<4x8xf16>
  func.return
}

// -----

func.func @fftn_irfftn_input(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op the input's last axis must be last_size / 2 + 1 = 5, got 8}}
  %0 = mlx.fftn %z axes [1] inverse real last_size 8 : tensor<4x8xcomplex<f32>> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @fftn_rank(%z: tensor<4x8xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.fftn' op result must have the input's rank}}
  %0 = mlx.fftn %z axes [1] : tensor<4x8xcomplex<f32>> -> tensor<32xcomplex<f32>>
  func.return
}

// -----

func.func @fftn_rfftn_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'mlx.fftn' op result shape [4, 8] does not match the expected shape [4, 5]}}
  %0 = mlx.fftn %x axes [1] real : tensor<4x8xf32> -> tensor<4x8xcomplex<f32>>
  func.return
}

// -----

func.func @view_widths_0d(%z: tensor<complex<f32>>) {
  // expected-error @+1 {{'mlx.view' op a view as a type of another width needs a last axis}}
  %0 = mlx.view %z : tensor<complex<f32>> -> tensor<2xf32>
  func.return
}

// -----

func.func @view_widths_bits(%x: tensor<3xf32>) {
  // expected-error @+1 {{'mlx.view' op the last axis' 96 bits do not divide into complex<f32> elements}}
  %0 = mlx.view %x : tensor<3xf32> -> tensor<1xcomplex<f32>>
  func.return
}

// -----

func.func @view_widths_shape(%z: tensor<3xcomplex<f32>>) {
  // expected-error @+1 {{'mlx.view' op result shape [3] does not match the expected shape [6]}}
  %0 = mlx.view %z : tensor<3xcomplex<f32>> -> tensor<3xf32>
  func.return
}
