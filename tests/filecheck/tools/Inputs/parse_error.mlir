func.func @f(%x: tensor<2xf32>) {
  %0 = aten.exp %x : tensor<2xf32> -> 
}
