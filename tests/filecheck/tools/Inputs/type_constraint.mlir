func.func @f(%x: f32) {
  %0 = aten.exp %x : f32 -> f32
  func.return
}
