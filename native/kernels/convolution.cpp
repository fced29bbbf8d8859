// Depthwise convolution (one input and one output channel per group, MLX's
// `conv_general` with groups == C and weight [C, kh, kw, 1]) as one direct pass over
// channels-last input: each output pixel's vector of channels is the sum of its taps'
// input vectors times the taps' per-channel weights, in registers, so the output is
// written once. MLX's CPU computes it in a generic grouped loop, and the tap-by-tap
// elementwise form (the `cpu-depthwise-conv` pass) writes the output once per tap.
//
// Channels are contiguous in NHWC, so the vectors run along C (16 lanes on AVX-512,
// 8 on AVX2, masked at C's tail). Columns whose taps all fall inside the input are
// computed 8 pixels at a time with no bounds checks; the border columns, pixel by
// pixel over their in-range taps only. Every output is the same chain of fused
// multiply-adds (taps in row-major order) whichever path or thread computes it, and
// the pool splits output rows, so results do not depend on the thread count.
// An optional epilogue adds a per-channel bias and applies relu, relu6 or silu.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "kernels/cpu.h"
#if MLXIR_X86
#include <immintrin.h>
#endif
#include "kernels/primitive.h"
#include "kernels/registry.h"
#include "kernels/thread_pool.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mlxir::native {

namespace {

enum class Activation { none = 0, relu = 1, relu6 = 2, silu = 3 };

constexpr int kBlock = 8;  // interior output pixels computed together

struct Conv {
  int batch, height, width, channels;
  int kernel_h, kernel_w;
  int stride_h, stride_w;
  int dilation_h, dilation_w;
  int pad_top, pad_left, pad_bottom, pad_right;
  int out_h, out_w;
  bool has_bias;
  Activation activation;
  // Output columns [interior_begin, interior_end) read every kernel column in bounds.
  int interior_begin, interior_end;

  bool operator==(const Conv& o) const {
    return batch == o.batch && height == o.height && width == o.width && channels == o.channels &&
           kernel_h == o.kernel_h && kernel_w == o.kernel_w && stride_h == o.stride_h &&
           stride_w == o.stride_w && dilation_h == o.dilation_h && dilation_w == o.dilation_w &&
           pad_top == o.pad_top && pad_left == o.pad_left && pad_bottom == o.pad_bottom &&
           pad_right == o.pad_right && has_bias == o.has_bias && activation == o.activation;
  }
};

// The taps [lo, hi) of one kernel axis whose input index base + tap * dilation lies
// in [0, extent): contiguous, since the index grows with the tap.
inline void tap_range(int base, int extent, int dilation, int taps, int& lo, int& hi) {
  lo = base >= 0 ? 0 : (-base + dilation - 1) / dilation;
  const int room = extent - 1 - base;
  hi = room < 0 ? 0 : std::min(taps, room / dilation + 1);
  if (hi < lo) hi = lo;
}

// Floor division for a positive divisor.
inline int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

float activate(float v, Activation activation) {
  switch (activation) {
    // Written so that NaN passes through, as torch's and MLX's relu keep it.
    case Activation::relu: return v < 0.0f ? 0.0f : v;
    case Activation::relu6: return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case Activation::silu: return v / (1.0f + std::exp(-v));
    default: return v;
  }
}

// What one output row reads and writes: the batch element's image [H, W, C] and the
// row of out [Wo, C], both float32.
struct Row {
  const float* image;
  const float* table;  // the weights tap-major, [kh * kw, C]
  const float* bias;   // [C] or null
  float* out;
  int oh;
};

void row_portable(const Conv& g, const Row& r) {
  const int C = g.channels;
  const int base_h = r.oh * g.stride_h - g.pad_top;
  int ki_lo, ki_hi;
  tap_range(base_h, g.height, g.dilation_h, g.kernel_h, ki_lo, ki_hi);
  for (int ow = 0; ow < g.out_w; ++ow) {
    float* __restrict__ acc = r.out + static_cast<std::ptrdiff_t>(ow) * C;
    for (int c = 0; c < C; ++c) acc[c] = 0.0f;
    const int base_w = ow * g.stride_w - g.pad_left;
    int kj_lo, kj_hi;
    tap_range(base_w, g.width, g.dilation_w, g.kernel_w, kj_lo, kj_hi);
    for (int ki = ki_lo; ki < ki_hi; ++ki) {
      const std::ptrdiff_t ih = base_h + ki * g.dilation_h;
      for (int kj = kj_lo; kj < kj_hi; ++kj) {
        const std::ptrdiff_t iw = base_w + kj * g.dilation_w;
        const float* __restrict__ x = r.image + (ih * g.width + iw) * C;
        const float* __restrict__ w = r.table + static_cast<std::ptrdiff_t>(ki * g.kernel_w + kj) * C;
        for (int c = 0; c < C; ++c) acc[c] += x[c] * w[c];
      }
    }
    if (r.bias) {
      for (int c = 0; c < C; ++c) acc[c] += r.bias[c];
    }
    if (g.activation != Activation::none) {
      for (int c = 0; c < C; ++c) acc[c] = activate(acc[c], g.activation);
    }
  }
}

#if MLXIR_X86

// exp(x) for the silu epilogue: Cephes' expf (a degree-5 polynomial of the reduced
// argument after a two-part ln 2 reduction), within 2 ulp; inputs clamped to +-88.38.
MLXIR_AVX512 inline __m512 exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-88.3762626647949f)), _mm512_set1_ps(88.3762626647949f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), x);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

MLXIR_AVX512 inline __m512 epilogue512(const Conv& g, __m512 v, const float* bias, __mmask16 m) {
  if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias));
  switch (g.activation) {
    // max/min return their second operand when either is NaN: v second keeps NaN.
    case Activation::relu: return _mm512_max_ps(_mm512_setzero_ps(), v);
    case Activation::relu6: return _mm512_min_ps(_mm512_set1_ps(6.0f), _mm512_max_ps(_mm512_setzero_ps(), v));
    case Activation::silu:
      return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), exp512(_mm512_sub_ps(_mm512_setzero_ps(), v))));
    default: return v;
  }
}

// One output pixel's 16 channels from c0, over its in-range taps.
MLXIR_AVX512 inline void pixel512(const Conv& g, const Row& r, int ki_lo, int ki_hi, int base_h, int ow,
                                  int c0, __mmask16 m) {
  const int C = g.channels;
  const int base_w = ow * g.stride_w - g.pad_left;
  int kj_lo, kj_hi;
  tap_range(base_w, g.width, g.dilation_w, g.kernel_w, kj_lo, kj_hi);
  __m512 acc = _mm512_setzero_ps();
  for (int ki = ki_lo; ki < ki_hi; ++ki) {
    const std::ptrdiff_t ih = base_h + ki * g.dilation_h;
    const float* w = r.table + static_cast<std::ptrdiff_t>(ki * g.kernel_w) * C + c0;
    for (int kj = kj_lo; kj < kj_hi; ++kj) {
      const std::ptrdiff_t iw = base_w + kj * g.dilation_w;
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r.image + (ih * g.width + iw) * C + c0),
                            _mm512_maskz_loadu_ps(m, w + static_cast<std::ptrdiff_t>(kj) * C), acc);
    }
  }
  _mm512_mask_storeu_ps(r.out + static_cast<std::ptrdiff_t>(ow) * C + c0, m,
                        epilogue512(g, acc, r.bias ? r.bias + c0 : nullptr, m));
}

// kBlock interior pixels from ow: each tap's weights loaded once for all of them.
MLXIR_AVX512 inline void block512(const Conv& g, const Row& r, int ki_lo, int ki_hi, int base_h, int ow, int c0,
                                  __mmask16 m) {
  const int C = g.channels;
  const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(g.stride_w) * C;
  __m512 acc[kBlock];
  for (int b = 0; b < kBlock; ++b) acc[b] = _mm512_setzero_ps();
  for (int ki = ki_lo; ki < ki_hi; ++ki) {
    const std::ptrdiff_t ih = base_h + ki * g.dilation_h;
    const float* w = r.table + static_cast<std::ptrdiff_t>(ki * g.kernel_w) * C + c0;
    const float* x = r.image + (ih * g.width + ow * g.stride_w - g.pad_left) * C + c0;
    for (int kj = 0; kj < g.kernel_w; ++kj) {
      const __m512 wv = _mm512_maskz_loadu_ps(m, w + static_cast<std::ptrdiff_t>(kj) * C);
      const float* xj = x + static_cast<std::ptrdiff_t>(kj) * g.dilation_w * C;
      for (int b = 0; b < kBlock; ++b) acc[b] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xj + b * step), wv, acc[b]);
    }
  }
  const float* bias = r.bias ? r.bias + c0 : nullptr;
  for (int b = 0; b < kBlock; ++b) {
    _mm512_mask_storeu_ps(r.out + static_cast<std::ptrdiff_t>(ow + b) * C + c0, m, epilogue512(g, acc[b], bias, m));
  }
}

MLXIR_AVX512 void row_avx512(const Conv& g, const Row& r) {
  const int C = g.channels;
  const int base_h = r.oh * g.stride_h - g.pad_top;
  int ki_lo, ki_hi;
  tap_range(base_h, g.height, g.dilation_h, g.kernel_h, ki_lo, ki_hi);
  for (int c0 = 0; c0 < C; c0 += 16) {
    const __mmask16 m = C - c0 >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (C - c0)) - 1);
    int ow = 0;
    for (; ow < g.interior_begin; ++ow) pixel512(g, r, ki_lo, ki_hi, base_h, ow, c0, m);
    for (; ow + kBlock <= g.interior_end; ow += kBlock) block512(g, r, ki_lo, ki_hi, base_h, ow, c0, m);
    for (; ow < g.out_w; ++ow) pixel512(g, r, ki_lo, ki_hi, base_h, ow, c0, m);
  }
}

// AVX2: 8 channels a vector; C's tail (under 8) through masked loads and stores.
MLXIR_AVX2 inline __m256 load8(const float* p, bool tail, __m256i mask) {
  return tail ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

MLXIR_AVX2 inline void store8(float* p, __m256 v, bool tail, __m256i mask) {
  if (tail) {
    _mm256_maskstore_ps(p, mask, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

MLXIR_AVX2 inline __m256 exp256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f)), _mm256_set1_ps(88.3762626647949f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  // 2^n in two halves, so that n = -127 (below float's normal range) stays finite.
  __m256i k = _mm256_cvtps_epi32(n);
  __m256i half = _mm256_srai_epi32(k, 1);
  __m256 a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23));
  __m256 b = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, half), _mm256_set1_epi32(127)), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, a), b);
}

MLXIR_AVX2 inline __m256 epilogue256(const Conv& g, __m256 v, const float* bias, bool tail, __m256i mask) {
  if (bias) v = _mm256_add_ps(v, load8(bias, tail, mask));
  switch (g.activation) {
    // max/min return their second operand when either is NaN: v second keeps NaN.
    case Activation::relu: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case Activation::relu6: return _mm256_min_ps(_mm256_set1_ps(6.0f), _mm256_max_ps(_mm256_setzero_ps(), v));
    case Activation::silu:
      return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), exp256(_mm256_sub_ps(_mm256_setzero_ps(), v))));
    default: return v;
  }
}

MLXIR_AVX2 inline void pixel256(const Conv& g, const Row& r, int ki_lo, int ki_hi, int base_h, int ow, int c0,
                                bool tail, __m256i mask) {
  const int C = g.channels;
  const int base_w = ow * g.stride_w - g.pad_left;
  int kj_lo, kj_hi;
  tap_range(base_w, g.width, g.dilation_w, g.kernel_w, kj_lo, kj_hi);
  __m256 acc = _mm256_setzero_ps();
  for (int ki = ki_lo; ki < ki_hi; ++ki) {
    const std::ptrdiff_t ih = base_h + ki * g.dilation_h;
    const float* w = r.table + static_cast<std::ptrdiff_t>(ki * g.kernel_w) * C + c0;
    for (int kj = kj_lo; kj < kj_hi; ++kj) {
      const std::ptrdiff_t iw = base_w + kj * g.dilation_w;
      acc = _mm256_fmadd_ps(load8(r.image + (ih * g.width + iw) * C + c0, tail, mask),
                            load8(w + static_cast<std::ptrdiff_t>(kj) * C, tail, mask), acc);
    }
  }
  store8(r.out + static_cast<std::ptrdiff_t>(ow) * C + c0,
         epilogue256(g, acc, r.bias ? r.bias + c0 : nullptr, tail, mask), tail, mask);
}

MLXIR_AVX2 inline void block256(const Conv& g, const Row& r, int ki_lo, int ki_hi, int base_h, int ow, int c0,
                                bool tail, __m256i mask) {
  const int C = g.channels;
  const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(g.stride_w) * C;
  __m256 acc[kBlock];
  for (int b = 0; b < kBlock; ++b) acc[b] = _mm256_setzero_ps();
  for (int ki = ki_lo; ki < ki_hi; ++ki) {
    const std::ptrdiff_t ih = base_h + ki * g.dilation_h;
    const float* w = r.table + static_cast<std::ptrdiff_t>(ki * g.kernel_w) * C + c0;
    const float* x = r.image + (ih * g.width + ow * g.stride_w - g.pad_left) * C + c0;
    for (int kj = 0; kj < g.kernel_w; ++kj) {
      const __m256 wv = load8(w + static_cast<std::ptrdiff_t>(kj) * C, tail, mask);
      const float* xj = x + static_cast<std::ptrdiff_t>(kj) * g.dilation_w * C;
      for (int b = 0; b < kBlock; ++b) acc[b] = _mm256_fmadd_ps(load8(xj + b * step, tail, mask), wv, acc[b]);
    }
  }
  const float* bias = r.bias ? r.bias + c0 : nullptr;
  for (int b = 0; b < kBlock; ++b) {
    store8(r.out + static_cast<std::ptrdiff_t>(ow + b) * C + c0, epilogue256(g, acc[b], bias, tail, mask), tail,
           mask);
  }
}

MLXIR_AVX2 void row_avx2(const Conv& g, const Row& r) {
  const int C = g.channels;
  const int base_h = r.oh * g.stride_h - g.pad_top;
  int ki_lo, ki_hi;
  tap_range(base_h, g.height, g.dilation_h, g.kernel_h, ki_lo, ki_hi);
  for (int c0 = 0; c0 < C; c0 += 8) {
    const bool tail = C - c0 < 8;
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(C - c0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    int ow = 0;
    for (; ow < g.interior_begin; ++ow) pixel256(g, r, ki_lo, ki_hi, base_h, ow, c0, tail, mask);
    for (; ow + kBlock <= g.interior_end; ow += kBlock) block256(g, r, ki_lo, ki_hi, base_h, ow, c0, tail, mask);
    for (; ow < g.out_w; ++ow) pixel256(g, r, ki_lo, ki_hi, base_h, ow, c0, tail, mask);
  }
}

#endif

void row_dispatch(Isa isa, const Conv& g, const Row& r) {
#if MLXIR_X86
  switch (isa) {
    case Isa::avx512: return row_avx512(g, r);
    case Isa::avx2: return row_avx2(g, r);
    default: break;
  }
#endif
  row_portable(g, r);
}

class DepthwiseConv2d : public mx::UnaryPrimitive {
 public:
  DepthwiseConv2d(mx::Stream stream, Conv conv) : mx::UnaryPrimitive(stream), conv_(conv) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (const auto& input : inputs) encoder.set_input_array(input);
    encoder.set_output_array(out);
    const bool has_bias = inputs.size() > 2;
    encoder.dispatch([g = conv_, x_op = operand(inputs[0]), w_op = operand(inputs[1]),
                      b_op = has_bias ? operand(inputs[2]) : operand(inputs[1]), dtype = out.dtype(),
                      out_data = out.data<void>(), has_bias]() {
      const Isa isa = host_isa();
      const std::size_t C = g.channels, taps = static_cast<std::size_t>(g.kernel_h) * g.kernel_w;
      const std::size_t image = static_cast<std::size_t>(g.height) * g.width * C;
      const std::size_t out_image = static_cast<std::size_t>(g.out_h) * g.out_w * C;
      if (g.batch == 0 || out_image == 0) return;
      std::vector<char> x_scratch, w_scratch, b_scratch;
      const void* x_data = row_major(x_op, x_scratch);
      const void* w_data = row_major(w_op, w_scratch);
      // The weights tap-major, so that a tap's channels are one contiguous vector.
      std::vector<float> table(taps * C);
      for (std::size_t c = 0; c < C; ++c) {
        for (std::size_t t = 0; t < taps; ++t) table[t * C + c] = load_float(w_data, dtype, c * taps + t);
      }
      std::vector<float> bias;
      if (has_bias) {
        const void* b_data = row_major(b_op, b_scratch);
        bias.resize(C);
        for (std::size_t c = 0; c < C; ++c) bias[c] = load_float(b_data, dtype, c);
      }
      const std::size_t in_rows = static_cast<std::size_t>(g.batch) * g.height;
      const std::size_t row_in = static_cast<std::size_t>(g.width) * C;
      const float* x = static_cast<const float*>(x_data);
      std::vector<float> x_float;
      if (dtype != mx::float32) {
        x_float.resize(in_rows * row_in);
        parallel_for(in_rows, [&](std::size_t row) {
          for (std::size_t i = row * row_in; i < (row + 1) * row_in; ++i) x_float[i] = load_float(x_data, dtype, i);
        });
        x = x_float.data();
      }
      const std::size_t rows = static_cast<std::size_t>(g.batch) * g.out_h;
      const std::size_t row_out = static_cast<std::size_t>(g.out_w) * C;
      std::vector<float> staged;
      float* result = static_cast<float*>(out_data);
      if (dtype != mx::float32) {
        staged.resize(rows * row_out);
        result = staged.data();
      }
      parallel_for(rows, [&](std::size_t row) {
        const std::size_t n = row / g.out_h;
        Row r{x + n * image, table.data(), has_bias ? bias.data() : nullptr, result + row * row_out,
              static_cast<int>(row % g.out_h)};
        row_dispatch(isa, g, r);
        if (dtype != mx::float32) {
          for (std::size_t i = row * row_out; i < (row + 1) * row_out; ++i) store_float(out_data, dtype, i, staged[i]);
        }
      });
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native.depthwise_conv2d runs on the CPU only");
  }

  const char* name() const override { return "MlxirDepthwiseConv2d"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return conv_ == static_cast<const DepthwiseConv2d&>(other).conv_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>&) override {
    return {{conv_.batch, conv_.out_h, conv_.out_w, conv_.channels}};
  }

 private:
  Conv conv_;
};

constexpr const char* kOp2d = "depthwise_conv2d";

std::vector<int> pair_of(const char* op, const char* name, const std::vector<int>& values, int count, int least) {
  if (static_cast<int>(values.size()) != count) {
    refuse(op, std::string(name) + " must have " + std::to_string(count) + " value(s)");
  }
  for (int v : values) {
    if (v < least) refuse(op, std::string(name) + " must be at least " + std::to_string(least));
  }
  return values;
}

Activation activation_of(const char* op, const std::string& name) {
  if (name == "none") return Activation::none;
  if (name == "relu") return Activation::relu;
  if (name == "relu6") return Activation::relu6;
  if (name == "silu") return Activation::silu;
  refuse(op, "activation must be none, relu, relu6 or silu, not '" + name + "'");
}

mx::array depthwise_conv2d(const mx::array& x, const mx::array& w, const std::vector<int>& stride,
                           const std::vector<int>& padding_lo, const std::vector<int>& padding_hi,
                           const std::vector<int>& dilation, const std::optional<mx::array>& bias,
                           const std::string& activation, mx::StreamOrDevice s, const char* op = kOp2d) {
  if (!is_float_type(x.dtype()) || w.dtype() != x.dtype() || (bias && bias->dtype() != x.dtype())) {
    refuse(op, "x, w and bias must share one dtype of float32, float16 or bfloat16");
  }
  if (x.ndim() != 4 || w.ndim() != 4 || w.shape(0) != x.shape(3) || w.shape(3) != 1) {
    refuse(op, "x must be [N, H, W, C] and w [C, kh, kw, 1]");
  }
  if (bias && (bias->ndim() != 1 || bias->shape(0) != x.shape(3))) refuse(op, "bias must be [C]");
  auto st = pair_of(op, "stride", stride, 2, 1);
  auto lo = pair_of(op, "padding_lo", padding_lo, 2, 0);
  auto hi = pair_of(op, "padding_hi", padding_hi, 2, 0);
  auto di = pair_of(op, "dilation", dilation, 2, 1);
  Conv g{};
  g.batch = x.shape(0);
  g.height = x.shape(1);
  g.width = x.shape(2);
  g.channels = x.shape(3);
  g.kernel_h = w.shape(1);
  g.kernel_w = w.shape(2);
  if (g.kernel_h < 1 || g.kernel_w < 1) refuse(op, "the kernel must have at least one tap");
  g.stride_h = st[0];
  g.stride_w = st[1];
  g.dilation_h = di[0];
  g.dilation_w = di[1];
  g.pad_top = lo[0];
  g.pad_left = lo[1];
  g.pad_bottom = hi[0];
  g.pad_right = hi[1];
  const long extent_h = static_cast<long>(g.dilation_h) * (g.kernel_h - 1) + 1;
  const long extent_w = static_cast<long>(g.dilation_w) * (g.kernel_w - 1) + 1;
  const long padded_h = static_cast<long>(g.height) + g.pad_top + g.pad_bottom;
  const long padded_w = static_cast<long>(g.width) + g.pad_left + g.pad_right;
  if (padded_h < extent_h || padded_w < extent_w) {
    refuse(op, "the padded input must be at least as large as the dilated kernel");
  }
  g.out_h = static_cast<int>((padded_h - extent_h) / g.stride_h + 1);
  g.out_w = static_cast<int>((padded_w - extent_w) / g.stride_w + 1);
  g.has_bias = bias.has_value();
  g.activation = activation_of(op, activation);
  // The first output column whose leftmost tap is in bounds, and one past the last
  // whose rightmost tap is, both within [0, Wo].
  g.interior_begin = std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int last = floor_div(g.width - 1 + g.pad_left - (g.kernel_w - 1) * g.dilation_w, g.stride_w);
  g.interior_end = std::max(g.interior_begin, std::min(g.out_w, last + 1));
  auto stream = mx::to_stream(s, mx::Device::cpu);
  std::vector<mx::array> inputs{x, w};
  if (bias) inputs.push_back(*bias);
  return mx::array({g.batch, g.out_h, g.out_w, g.channels}, x.dtype(), std::make_shared<DepthwiseConv2d>(stream, g),
                   std::move(inputs));
}

// 1-D as 2-D with one row: x [N, L, C] -> [N, 1, L, C], w [C, k, 1] -> [C, 1, k, 1].
mx::array depthwise_conv1d(const mx::array& x, const mx::array& w, int stride, int padding_lo, int padding_hi,
                           int dilation, const std::optional<mx::array>& bias, const std::string& activation,
                           mx::StreamOrDevice s) {
  constexpr const char* op = "depthwise_conv1d";
  if (x.ndim() != 3 || w.ndim() != 3) refuse(op, "x must be [N, L, C] and w [C, k, 1]");
  auto stream = mx::to_stream(s, mx::Device::cpu);
  mx::array x2 = mx::expand_dims(x, 1, stream);
  mx::array w2 = mx::expand_dims(w, 1, stream);
  mx::array out = depthwise_conv2d(x2, w2, {1, stride}, {0, padding_lo}, {0, padding_hi}, {1, dilation}, bias,
                                   activation, stream, op);
  return mx::squeeze(out, 1, stream);
}

mx::array depthwise_conv2d_op(const mx::array& x, const mx::array& w, const std::vector<int>& stride,
                              const std::vector<int>& padding_lo, const std::vector<int>& padding_hi,
                              const std::vector<int>& dilation, const std::optional<mx::array>& bias,
                              const std::string& activation, mx::StreamOrDevice s) {
  return depthwise_conv2d(x, w, stride, padding_lo, padding_hi, dilation, bias, activation, s);
}

void bind(nb::module_& m) {
  m.def("depthwise_conv2d", &depthwise_conv2d_op, "x"_a, "w"_a, nb::kw_only(), "stride"_a = std::vector<int>{1, 1},
        "padding_lo"_a = std::vector<int>{0, 0}, "padding_hi"_a = std::vector<int>{0, 0},
        "dilation"_a = std::vector<int>{1, 1}, "bias"_a = nb::none(), "activation"_a = "none",
        "stream"_a = nb::none(),
        "mx.conv_general(x, w, groups=C) for x [N, H, W, C] and w [C, kh, kw, 1] in one pass, summed in "
        "float32; then + bias [C] and activation (none, relu, relu6, silu).");
  m.def("depthwise_conv1d", &depthwise_conv1d, "x"_a, "w"_a, nb::kw_only(), "stride"_a = 1, "padding_lo"_a = 0,
        "padding_hi"_a = 0, "dilation"_a = 1, "bias"_a = nb::none(), "activation"_a = "none",
        "stream"_a = nb::none(), "depthwise_conv2d over one row: x [N, L, C], w [C, k, 1].");
}

} // namespace

MLXIR_KERNEL_FAMILY(convolution, "depthwise convolution in one pass (mlx.conv_general with groups == C)", bind);

} // namespace mlxir::native
