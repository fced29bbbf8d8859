// fuse-rope: HF's rotary embedding, x * cos + rotate_half(x) * sin with
// rotate_half(x) = cat(-x[..., h:], x[..., :h], -1), cos/sin = expand_dims(cos/sin(a), 1),
// a = cat(f, f, -1), f = float(positions[..., None]) * inv_freq, -> mlx.rope (mx.fast.rope)
// with freqs = 1 / inv_freq as a new global `<inv_freq global>.rope_freqs` (one global per
// distinct value, reused across functions). Fused only where the positions provably count
// up by one along x's sequence axis: `offsets[:, None] + arange(S)` (per-row offsets, with
// `offsets` provably x's batch) or `arange(S) + k` (a scalar start), S provably x's -2
// size. Partial rotary, cat(rope(x[..., :r]), x[..., r:], -1), is one rope of `dims r`.
// The interleaved form (rotate_pairs, angles repeated in a row) is a `traditional` rope.
// The pass alone leaves the decomposition, now unused, to dce.
// The IR is written by hand after what HF's LlamaRotaryEmbedding / apply_rotary_pos_emb
// lower to (q is [B, 4 heads, S, 16]); inv_freq is [1, 1/2, 1/4, ...] so 1/inv_freq is exact.
// RUN: mlx-opt %s -p fuse-rope | filecheck %s
// RUN: mlx-opt %s -p fuse-rope | filecheck %s --check-prefix=GLOBAL

// The frequencies are new globals, inserted before the first function that needs them and
// reused after: 1/inv_freq of the f32 value, [1, 2, 4, ..., 128] and [1, 4, 16, 64]. An
// inv_freq that is an inline mlx.constant gets a global named "rope.rope_freqs".
// (filecheck's CHECK-NOT also covers the text of the next match, hence the narrow
// GLOBAL-NOTs before a global that is expected.)
// GLOBAL:      mlx.global @rotary_emb.inv_freq "buffer" : tensor<8xf32>
// GLOBAL-NEXT: mlx.global @partial.inv_freq "buffer" : tensor<4xf32>
// GLOBAL-NEXT: mlx.global @zero.inv_freq "buffer" : tensor<8xf32>
// GLOBAL-NEXT: mlx.global @rotary_emb.inv_freq.rope_freqs "buffer" : tensor<8xf32> = dense<[1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00, 1.600000e+01, 3.200000e+01, 6.400000e+01, 1.280000e+02]> : tensor<8xf32>
// GLOBAL-NEXT: func.func @per_row_offsets(
// GLOBAL-NOT:  mlx.global @rotary_emb
// GLOBAL:      mlx.global @rope.rope_freqs "buffer" : tensor<8xf32> = dense<[1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00, 1.600000e+01, 3.200000e+01, 6.400000e+01, 1.280000e+02]> : tensor<8xf32>
// GLOBAL-NEXT: func.func @constant_start(
// GLOBAL-NOT:  mlx.global @{{(rope|rotary_emb)}}
// GLOBAL:      mlx.global @partial.inv_freq.rope_freqs "buffer" : tensor<4xf32> = dense<[1.000000e+00, 4.000000e+00, 1.600000e+01, 6.400000e+01]> : tensor<4xf32>
// GLOBAL-NEXT: func.func @partial_rotary(
// GLOBAL-NOT:  mlx.global

mlx.global @rotary_emb.inv_freq "buffer" : tensor<8xf32> = dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
mlx.global @partial.inv_freq "buffer" : tensor<4xf32> = dense<[1.0, 0.25, 0.0625, 0.015625]> : tensor<4xf32>
mlx.global @zero.inv_freq "buffer" : tensor<8xf32> = dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0]> : tensor<8xf32>

// Per-row offsets (the LLM step programs' `position_offset[:, None] + arange(S)`): x's batch
// and the offsets' length are one symbol in `mlxir.input_dims`, S is x's own dim. One
// mlx.rope with `rows`; the freqs read is placed just before it.
// CHECK-LABEL: func.func @per_row_offsets(
// CHECK-NEXT:    %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
// CHECK-NEXT:    %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
// CHECK-NEXT:    %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
// CHECK-NEXT:    %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
// CHECK-NEXT:    %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
// CHECK-NEXT:    %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
// CHECK-NEXT:    %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
// CHECK-NEXT:    %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
// CHECK-NEXT:    %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT:    %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT:    %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT:    %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
// CHECK-NEXT:    %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT:    %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
// CHECK-NEXT:    %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
// CHECK-NEXT:    %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
// CHECK-NEXT:    %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
// CHECK-NEXT:    %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    %[[FREQS:.*]] = mlx.weight @rotary_emb.inv_freq.rope_freqs : tensor<8xf32>
// CHECK-NEXT:    %out = mlx.rope %q dims 16 freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    func.return %out : tensor<?x4x?x16xf32>
// CHECK-NEXT:  }
func.func @per_row_offsets(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Per-row offsets without `mlxir.input_dims`: q is reshaped from sizes that are the offsets'
// own dim and the hidden states' dim the arange stops at; operands in the other order
// (expand_dims(arange, 0) + offsets, inv_freq * positions, cos * q, sin * rot, the sin
// term first) and the concatenations on axis -1.
// CHECK-LABEL: func.func @per_row_offsets_reshape(
// CHECK-NOT:    mlx.rope
// CHECK:        %[[FREQS:.*]] = mlx.weight @rotary_emb.inv_freq.rope_freqs : tensor<8xf32>
// CHECK-NEXT:   %out = mlx.rope %q dims 16 freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @per_row_offsets_reshape(%h: tensor<?x?x64xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %position_offset axis 0 : tensor<?xi64>
  %s = mlx.dim %h axis 1 : tensor<?x?x64xf32>
  %view = mlx.reshape %h [%b, %s, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %q = mlx.transpose %view [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %steps = mlx.expand_dims %arange [0] : tensor<?xi64> -> tensor<1x?xi64>
  %pos = mlx.add %steps, %rows : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %inv_freq, %pf : tensor<8xf32>, tensor<?x?x1xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis -1 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis -1 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %cos, %q : tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %sin, %rot : tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %rs, %qc : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// A scalar start, `arange(S) + past` (past a cache's length as an index): `offset [%past]`.
// CHECK-LABEL: func.func @scalar_start(
// CHECK-NOT:    mlx.rope
// CHECK:        %[[FREQS:.*]] = mlx.weight @rotary_emb.inv_freq.rope_freqs : tensor<8xf32>
// CHECK-NEXT:   %out = mlx.rope %q dims 16 freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [%past] : tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<1x4x?x16xf32>
func.func @scalar_start(%q: tensor<1x4x?x16xf32>, %cache: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %s = mlx.dim %q axis 2 : tensor<1x4x?x16xf32>
  %past = mlx.dim %cache axis 2 : tensor<1x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %start = mlx.from_index %past : tensor<i64>
  %steps = mlx.add %arange, %start : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  %pos = mlx.expand_dims %steps [0] : tensor<?xi64> -> tensor<1x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<1x?xi64> -> tensor<1x?x1xi64>
  %pf = mlx.astype %pe : tensor<1x?x1xi64> -> tensor<1x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<1x?x1xf32>, tensor<8xf32> -> tensor<1x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<1x?x8xf32>, tensor<1x?x8xf32> -> tensor<1x?x16xf32>
  %c = mlx.cos %emb : tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<1x?x16xf32> -> tensor<1x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<1x?x16xf32> -> tensor<1x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [1, 4, %s, 16] step [1, 1, 1, 1] : tensor<1x4x?x16xf32> -> tensor<1x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [1, 4, %s, 8] step [1, 1, 1, 1] : tensor<1x4x?x16xf32> -> tensor<1x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<1x4x?x8xf32> -> tensor<1x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<1x4x?x16xf32>, tensor<1x1x?x16xf32> -> tensor<1x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<1x4x?x16xf32>, tensor<1x1x?x16xf32> -> tensor<1x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  func.return %out : tensor<1x4x?x16xf32>
}

// Static shapes, a constant start (`3 + arange(5)`), inv_freq an inline mlx.constant.
// CHECK-LABEL: func.func @constant_start(
// CHECK-NOT:    mlx.rope
// CHECK:        %[[FREQS:.*]] = mlx.weight @rope.rope_freqs : tensor<8xf32>
// CHECK-NEXT:   %out = mlx.rope %q dims 16 freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [3] : tensor<2x4x5x16xf32> -> tensor<2x4x5x16xf32>
// CHECK-NEXT:   func.return %out : tensor<2x4x5x16xf32>
func.func @constant_start(%q: tensor<2x4x5x16xf32>) -> tensor<2x4x5x16xf32> {
  %inv_freq = mlx.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %arange = mlx.arange [0, 5, 1] : tensor<5xi64>
  %start = mlx.constant dense<3> : tensor<i64>
  %steps = mlx.add %start, %arange : tensor<i64>, tensor<5xi64> -> tensor<5xi64>
  %pos = mlx.expand_dims %steps [0] : tensor<5xi64> -> tensor<1x5xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<1x5xi64> -> tensor<1x5x1xi64>
  %pf = mlx.astype %pe : tensor<1x5x1xi64> -> tensor<1x5x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<1x5x1xf32>, tensor<8xf32> -> tensor<1x5x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<1x5x8xf32>, tensor<1x5x8xf32> -> tensor<1x5x16xf32>
  %c = mlx.cos %emb : tensor<1x5x16xf32> -> tensor<1x5x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<1x5x16xf32> -> tensor<1x1x5x16xf32>
  %sn = mlx.sin %emb : tensor<1x5x16xf32> -> tensor<1x5x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<1x5x16xf32> -> tensor<1x1x5x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [2, 4, 5, 16] step [1, 1, 1, 1] : tensor<2x4x5x16xf32> -> tensor<2x4x5x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [2, 4, 5, 8] step [1, 1, 1, 1] : tensor<2x4x5x16xf32> -> tensor<2x4x5x8xf32>
  %neg = mlx.negative %x2 : tensor<2x4x5x8xf32> -> tensor<2x4x5x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32> -> tensor<2x4x5x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<2x4x5x16xf32>, tensor<1x1x5x16xf32> -> tensor<2x4x5x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<2x4x5x16xf32>, tensor<1x1x5x16xf32> -> tensor<2x4x5x16xf32>
  %out = mlx.add %qc, %rs : tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32> -> tensor<2x4x5x16xf32>
  func.return %out : tensor<2x4x5x16xf32>
}

// Partial rotary: the rope form on x[..., :8] of a 16-wide x, then cat(rope, x[..., 8:16]):
// one mlx.rope of x with `dims 8` (the rope of the slice is left to dce).
// CHECK-LABEL: func.func @partial_rotary(
// CHECK-NOT:    mlx.rope
// CHECK:        %[[FREQS:.*]] = mlx.weight @partial.inv_freq.rope_freqs : tensor<4xf32>
// CHECK-NEXT:   %roped = mlx.rope %q dims 8 freqs %[[FREQS]] : tensor<4xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
// CHECK-NEXT:   %out = mlx.rope %x dims 8 freqs %[[FREQS]] : tensor<4xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @partial_rotary(%x: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @partial.inv_freq : tensor<4xf32>
  %b = mlx.dim %x axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %x axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<4xf32> -> tensor<?x?x4xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x8xf32>
  %c = mlx.cos %emb : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x8xf32> -> tensor<?x1x?x8xf32>
  %sn = mlx.sin %emb : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x8xf32> -> tensor<?x1x?x8xf32>
  %q = mlx.slice %x [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %pass = mlx.slice %x [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x2 = mlx.slice %q [0, 0, 0, 4] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x8xf32> -> tensor<?x4x?x4xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 4] step [1, 1, 1, 1] : tensor<?x4x?x8xf32> -> tensor<?x4x?x4xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x4xf32> -> tensor<?x4x?x4xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32> -> tensor<?x4x?x8xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x4x?x8xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x4x?x8xf32>
  %roped = mlx.add %qc, %rs : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %out = mlx.concatenate %roped, %pass axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// bf16 activations, the f32 cos/sin cast to bf16 (HF's `.to(x.dtype)`): fused, in bf16.
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT:    mlx.rope
// CHECK:        %[[FREQS:.*]] = mlx.weight @rotary_emb.inv_freq.rope_freqs : tensor<8xf32>
// CHECK-NEXT:   %out = mlx.rope %q dims 16 freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x16xbf16> -> tensor<?x4x?x16xbf16>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xbf16>
func.func @bf16(%q: tensor<?x4x?x16xbf16>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xbf16> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xbf16>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xbf16>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %c16 = mlx.astype %c : tensor<?x?x16xf32> -> tensor<?x?x16xbf16>
  %cos = mlx.expand_dims %c16 [1] : tensor<?x?x16xbf16> -> tensor<?x1x?x16xbf16>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %s16 = mlx.astype %sn : tensor<?x?x16xf32> -> tensor<?x?x16xbf16>
  %sin = mlx.expand_dims %s16 [1] : tensor<?x?x16xbf16> -> tensor<?x1x?x16xbf16>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xbf16> -> tensor<?x4x?x8xbf16>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xbf16> -> tensor<?x4x?x8xbf16>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xbf16> -> tensor<?x4x?x8xbf16>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xbf16>, tensor<?x4x?x8xbf16> -> tensor<?x4x?x16xbf16>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xbf16>, tensor<?x1x?x16xbf16> -> tensor<?x4x?x16xbf16>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xbf16>, tensor<?x1x?x16xbf16> -> tensor<?x4x?x16xbf16>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16> -> tensor<?x4x?x16xbf16>
  func.return %out : tensor<?x4x?x16xbf16>
}

// Kept: the positions are an input (`position_ids`), not provably contiguous, even
// with their shape tied to q's by `mlxir.input_dims`.
// CHECK-LABEL: func.func @arbitrary_positions(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @arbitrary_positions(%q: tensor<?x4x?x16xf32>, %position_ids: tensor<?x?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b", "s"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %pe = mlx.expand_dims %position_ids [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: rotate_half with the halves the wrong way, cat(-x[..., :8], x[..., 8:]),
// is the rotation by -angle.
// CHECK-LABEL: func.func @swapped_halves(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @swapped_halves(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: cos and sin scaled (an attention scaling of 2.0) between the trig and the
// products; mlx.rope's `scale` scales positions, not the result.
// CHECK-LABEL: func.func @attention_scaling(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @attention_scaling(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %two = mlx.constant dense<2.0> : tensor<f32>
  %c2 = mlx.multiply %c, %two : tensor<?x?x16xf32>, tensor<f32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c2 [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %s2 = mlx.multiply %sn, %two : tensor<?x?x16xf32>, tensor<f32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %s2 [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: inv_freq is a function argument, not a constant.
// CHECK-LABEL: func.func @inv_freq_argument(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @inv_freq_argument(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>, %inv_freq: tensor<8xf32>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"], [""]]} {
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: an inv_freq with a 0 (no finite 1/inv_freq).
// CHECK-LABEL: func.func @zero_inv_freq(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @zero_inv_freq(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @zero.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: the arange stops at another input's dim, not provably q's sequence length
// (positions of length 1 would broadcast over S).
// CHECK-LABEL: func.func @unknown_length(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @unknown_length(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>, %ids: tensor<?x?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"], ["b", ""]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %n = mlx.dim %ids axis 1 : tensor<?x?xi64>
  %arange = mlx.arange [0, %n, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: per-row offsets without `mlxir.input_dims`: their length is not provably
// q's batch.
// CHECK-LABEL: func.func @unknown_batch(
// CHECK-NOT:    mlx.rope
// CHECK:        %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:   func.return %out : tensor<?x4x?x16xf32>
func.func @unknown_batch(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %x2 = mlx.slice %q [0, 0, 0, 8] to [%b, 4, %s, 16] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %x1 = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 8] step [1, 1, 1, 1] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %x2 : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %rot = mlx.concatenate %neg, %x1 axis 3 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Interleaved rotary (GPT-J style, HF's Cohere): pairs of features rotate together,
// rotate_pairs(x) = stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2), and each angle
// of f repeated twice in a row (torch's repeat_interleave(f, 2, -1): a broadcast of
// f[..., None] to [..., 8, 2], reshaped) -> mlx.rope with `traditional`.
// CHECK-LABEL: func.func @interleaved(
// CHECK:         %[[FREQS:.*]] = mlx.weight @rotary_emb.inv_freq.rope_freqs : tensor<8xf32>
// CHECK-NEXT:    %out = mlx.rope %q dims 16 traditional freqs %[[FREQS]] : tensor<8xf32> scale 1.000000e+00 offset [0] rows %position_offset : tensor<?xi64> : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT:    func.return %out : tensor<?x4x?x16xf32>
// CHECK-NEXT:  }
func.func @interleaved(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %f1 = mlx.expand_dims %f [3] : tensor<?x?x8xf32> -> tensor<?x?x8x1xf32>
  %f2 = mlx.broadcast_to %f1 [%b, %s, 8, 2] : tensor<?x?x8x1xf32> -> tensor<?x?x8x2xf32>
  %emb = mlx.reshape %f2 [%b, %s, 16] : tensor<?x?x8x2xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %even = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 16] step [1, 1, 1, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %odd = mlx.slice %q [0, 0, 0, 1] to [%b, 4, %s, 16] step [1, 1, 1, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %odd : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %neg1 = mlx.expand_dims %neg [4] : tensor<?x4x?x8xf32> -> tensor<?x4x?x8x1xf32>
  %even1 = mlx.expand_dims %even [4] : tensor<?x4x?x8xf32> -> tensor<?x4x?x8x1xf32>
  %pairs = mlx.concatenate %neg1, %even1 axis 4 : tensor<?x4x?x8x1xf32>, tensor<?x4x?x8x1xf32> -> tensor<?x4x?x8x2xf32>
  %rot = mlx.reshape %pairs [%b, 4, %s, 16] : tensor<?x4x?x8x2xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}

// Kept: interleaved rotation with angles repeated one copy after the other (cat(f, f)):
// the two layouts do not mix.
// CHECK-LABEL: func.func @interleaved_rotation_half_angles(
// CHECK-NOT:     mlx.rope
// CHECK:         func.return
func.func @interleaved_rotation_half_angles(%q: tensor<?x4x?x16xf32>, %position_offset: tensor<?xi64>) -> tensor<?x4x?x16xf32> attributes {mlxir.input_dims = [["b", "", "s", ""], ["b"]]} {
  %inv_freq = mlx.weight @rotary_emb.inv_freq : tensor<8xf32>
  %b = mlx.dim %q axis 0 : tensor<?x4x?x16xf32>
  %s = mlx.dim %q axis 2 : tensor<?x4x?x16xf32>
  %arange = mlx.arange [0, %s, 1] : tensor<?xi64>
  %rows = mlx.expand_dims %position_offset [1] : tensor<?xi64> -> tensor<?x1xi64>
  %pos = mlx.add %rows, %arange : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %pe = mlx.expand_dims %pos [2] : tensor<?x?xi64> -> tensor<?x?x1xi64>
  %pf = mlx.astype %pe : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
  %f = mlx.multiply %pf, %inv_freq : tensor<?x?x1xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %emb = mlx.concatenate %f, %f axis 2 : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
  %c = mlx.cos %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %cos = mlx.expand_dims %c [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %sn = mlx.sin %emb : tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %sin = mlx.expand_dims %sn [1] : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
  %even = mlx.slice %q [0, 0, 0, 0] to [%b, 4, %s, 16] step [1, 1, 1, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %odd = mlx.slice %q [0, 0, 0, 1] to [%b, 4, %s, 16] step [1, 1, 1, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x?x8xf32>
  %neg = mlx.negative %odd : tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  %neg1 = mlx.expand_dims %neg [4] : tensor<?x4x?x8xf32> -> tensor<?x4x?x8x1xf32>
  %even1 = mlx.expand_dims %even [4] : tensor<?x4x?x8xf32> -> tensor<?x4x?x8x1xf32>
  %pairs = mlx.concatenate %neg1, %even1 axis 4 : tensor<?x4x?x8x1xf32>, tensor<?x4x?x8x1xf32> -> tensor<?x4x?x8x2xf32>
  %rot = mlx.reshape %pairs [%b, 4, %s, 16] : tensor<?x4x?x8x2xf32> -> tensor<?x4x?x16xf32>
  %qc = mlx.multiply %q, %cos : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %rs = mlx.multiply %rot, %sin : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %out = mlx.add %qc, %rs : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  func.return %out : tensor<?x4x?x16xf32>
}
