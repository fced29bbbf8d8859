// Float products of a few rows by a linear layer's weight: out = x @ w.T, with w
// [N, K] row-contiguous (how `nn.Linear` stores it), float32/float16/bfloat16, summed
// in float32. A decode step is one row: its time is reading w once, so the kernel
// walks 8 weight rows at a time with a software prefetch 8 rows ahead, and the pool
// splits the rows of w. Each output is one dot product computed by the same loop
// whatever thread takes its rows, so results do not depend on the thread count.
#include <algorithm>
#include <cstdint>
#include <vector>

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

constexpr int kMaxRows = 16;          // the most rows of x this kernel takes
constexpr std::size_t kChunkRows = 64;  // weight rows per pool chunk

// One weight row's element k as float, whatever its dtype (the portable path).
struct WeightRows {
  const void* data;
  mx::Dtype dtype;
  std::size_t depth;
};

void rows_portable(const float* x, int m, WeightRows w, std::size_t begin, std::size_t end,
                   float* out, std::size_t n_total) {
  for (std::size_t n = begin; n < end; ++n) {
    for (int r = 0; r < m; ++r) {
      float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      const float* xr = x + r * w.depth;
      std::size_t k = 0;
      for (; k + 8 <= w.depth; k += 8) {
        for (int l = 0; l < 8; ++l) lanes[l] += xr[k + l] * load_float(w.data, w.dtype, n * w.depth + k + l);
      }
      for (; k < w.depth; ++k) lanes[k % 8] += xr[k] * load_float(w.data, w.dtype, n * w.depth + k);
      float sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
      out[r * n_total + n] = sum;
    }
  }
}

#if MLXIR_X86

MLXIR_AVX512 inline __m512 load16(const void* base, mx::Dtype dtype, std::size_t at) {
  if (dtype == mx::float32) return _mm512_loadu_ps(static_cast<const float*>(base) + at);
  __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(base) + at));
  if (dtype == mx::float16) return _mm512_cvtph_ps(bits);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

MLXIR_AVX512 inline __m512 load16_masked(const void* base, mx::Dtype dtype, std::size_t at, __mmask16 mask) {
  if (dtype == mx::float32) return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(base) + at);
  __m256i bits = _mm256_maskz_loadu_epi16(mask, static_cast<const std::uint16_t*>(base) + at);
  if (dtype == mx::float16) return _mm512_cvtph_ps(bits);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// 8 weight rows against one x row, 16 lanes each; the tail of K masked.
MLXIR_AVX512 void rows_avx512(const float* x, int m, WeightRows w, std::size_t begin,
                              std::size_t end, float* out, std::size_t n_total) {
  const std::size_t depth = w.depth;
  const std::size_t row_bytes = depth * (w.dtype == mx::float32 ? 4 : 2);
  const auto* bytes = static_cast<const char*>(w.data);
  const std::size_t full = depth / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (depth - full)) - 1);
  std::size_t n = begin;
  for (; n + 8 <= end; n += 8) {
    for (int r = 0; r < m; ++r) {
      const float* xr = x + r * depth;
      __m512 acc[8];
      for (int i = 0; i < 8; ++i) acc[i] = _mm512_setzero_ps();
      for (std::size_t k = 0; k < full; k += 16) {
        __m512 xv = _mm512_loadu_ps(xr + k);
        if (r == 0 && n + 16 <= end) {
          std::size_t offset = k * (w.dtype == mx::float32 ? 4 : 2);
          if (offset % 64 == 0 || (w.dtype != mx::float32 && offset % 64 == 32)) {
            for (int i = 0; i < 8; ++i) _mm_prefetch(bytes + (n + 8 + i) * row_bytes + offset, _MM_HINT_T0);
          }
        }
        for (int i = 0; i < 8; ++i) {
          acc[i] = _mm512_fmadd_ps(xv, load16(w.data, w.dtype, (n + i) * depth + k), acc[i]);
        }
      }
      if (tail) {
        __m512 xv = _mm512_maskz_loadu_ps(tail, xr + full);
        for (int i = 0; i < 8; ++i) {
          acc[i] = _mm512_fmadd_ps(xv, load16_masked(w.data, w.dtype, (n + i) * depth + full, tail), acc[i]);
        }
      }
      for (int i = 0; i < 8; ++i) out[r * n_total + n + i] = _mm512_reduce_add_ps(acc[i]);
    }
  }
  for (; n < end; ++n) {
    for (int r = 0; r < m; ++r) {
      const float* xr = x + r * depth;
      __m512 acc = _mm512_setzero_ps();
      for (std::size_t k = 0; k < full; k += 16) {
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(xr + k), load16(w.data, w.dtype, n * depth + k), acc);
      }
      if (tail) {
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, xr + full),
                              load16_masked(w.data, w.dtype, n * depth + full, tail), acc);
      }
      out[r * n_total + n] = _mm512_reduce_add_ps(acc);
    }
  }
}

MLXIR_AVX2 inline __m256 load8(const void* base, mx::Dtype dtype, std::size_t at) {
  if (dtype == mx::float32) return _mm256_loadu_ps(static_cast<const float*>(base) + at);
  __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(base) + at));
  if (dtype == mx::float16) return _mm256_cvtph_ps(bits);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

MLXIR_AVX2 inline float reduce8(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

// 8 weight rows against one x row, 8 lanes each (AVX2 has 16 vector registers: 8
// accumulators, x, and the loads); K's tail in scalar arithmetic.
MLXIR_AVX2 void rows_avx2(const float* x, int m, WeightRows w, std::size_t begin,
                          std::size_t end, float* out, std::size_t n_total) {
  const std::size_t depth = w.depth;
  const std::size_t full = depth / 8 * 8;
  const std::size_t element = w.dtype == mx::float32 ? 4 : 2;
  const std::size_t row_bytes = depth * element;
  const auto* bytes = static_cast<const char*>(w.data);
  for (std::size_t n = begin; n < end; n += 8) {
    const int count = static_cast<int>(std::min<std::size_t>(8, end - n));
    for (int r = 0; r < m; ++r) {
      const float* xr = x + r * depth;
      __m256 acc[8];
      for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
      for (std::size_t k = 0; k < full; k += 8) {
        __m256 xv = _mm256_loadu_ps(xr + k);
        if (r == 0 && n + 16 <= end && (k * element) % 64 == 0) {
          for (int i = 0; i < 8; ++i) _mm_prefetch(bytes + (n + 8 + i) * row_bytes + k * element, _MM_HINT_T0);
        }
        if (count == 8) {
          for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(xv, load8(w.data, w.dtype, (n + i) * depth + k), acc[i]);
        } else {
          for (int i = 0; i < count; ++i) acc[i] = _mm256_fmadd_ps(xv, load8(w.data, w.dtype, (n + i) * depth + k), acc[i]);
        }
      }
      for (int i = 0; i < count; ++i) {
        float sum = reduce8(acc[i]);
        for (std::size_t k = full; k < depth; ++k) sum += xr[k] * load_float(w.data, w.dtype, (n + i) * depth + k);
        out[r * n_total + n + i] = sum;
      }
    }
  }
}

#endif

void rows_dispatch(const float* x, int m, WeightRows w, std::size_t begin, std::size_t end,
                   float* out, std::size_t n_total) {
#if MLXIR_X86
  switch (host_isa()) {
    case Isa::avx512: return rows_avx512(x, m, w, begin, end, out, n_total);
    case Isa::avx2: return rows_avx2(x, m, w, begin, end, out, n_total);
    default: break;
  }
#endif
  rows_portable(x, m, w, begin, end, out, n_total);
}

class Matvec : public mx::UnaryPrimitive {
 public:
  explicit Matvec(mx::Stream stream) : mx::UnaryPrimitive(stream) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const mx::array& x = inputs[0];
    const mx::array& w = inputs[1];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    encoder.set_input_array(x);
    encoder.set_input_array(w);
    encoder.set_output_array(out);
    const std::size_t depth = w.shape(1), n_total = w.shape(0);
    const int m = static_cast<int>(depth ? x.size() / depth : 0);
    encoder.dispatch([x_operand = operand(x), x_dtype = x.dtype(), w_operand = operand(w),
                      w_dtype = w.dtype(), out_data = out.data<void>(), out_dtype = out.dtype(),
                      depth, n_total, m]() {
      std::vector<char> x_scratch, w_scratch;
      const void* x_data = row_major(x_operand, x_scratch);
      const void* w_data = row_major(w_operand, w_scratch);
      std::vector<float> xf(static_cast<std::size_t>(m) * depth);
      for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = load_float(x_data, x_dtype, i);
      std::vector<float> staged;
      float* result = static_cast<float*>(out_data);
      if (out_dtype != mx::float32) {
        staged.resize(static_cast<std::size_t>(m) * n_total);
        result = staged.data();
      }
      WeightRows rows{w_data, w_dtype, depth};
      const std::size_t chunks = (n_total + kChunkRows - 1) / kChunkRows;
      parallel_for(chunks, [&](std::size_t chunk) {
        std::size_t begin = chunk * kChunkRows, end = std::min(n_total, begin + kChunkRows);
        rows_dispatch(xf.data(), m, rows, begin, end, result, n_total);
      });
      if (out_dtype != mx::float32) {
        for (std::size_t i = 0; i < staged.size(); ++i) store_float(out_data, out_dtype, i, staged[i]);
      }
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native.matvec runs on the CPU only");
  }

  const char* name() const override { return "MlxirMatvec"; }
  bool is_equivalent(const mx::Primitive&) const override { return true; }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    mx::Shape shape = inputs[0].shape();
    shape.back() = inputs[1].shape(0);
    return {shape};
  }
};

mx::array matvec(const mx::array& x, const mx::array& w, mx::StreamOrDevice s) {
  if (!is_float_type(x.dtype()) || w.dtype() != x.dtype()) {
    refuse("matvec", "x and w must share one dtype of float32, float16 or bfloat16");
  }
  if (w.ndim() != 2 || x.ndim() < 1 || x.shape(-1) != w.shape(1)) {
    refuse("matvec", "w must be [N, K] and x [..., K]");
  }
  if (w.shape(1) == 0 || x.size() / w.shape(1) > kMaxRows) {
    refuse("matvec", "x must have between 1 and 16 rows of a non-empty K");
  }
  mx::Shape shape = x.shape();
  shape.back() = w.shape(0);
  auto stream = mx::to_stream(s, mx::Device::cpu);
  return mx::array(shape, x.dtype(), std::make_shared<Matvec>(stream), {x, w});
}

void bind(nb::module_& m) {
  m.def("matvec", &matvec, "x"_a, "w"_a, nb::kw_only(), "stream"_a = nb::none(),
        "x @ w.T for w [N, K] and at most 16 rows of x, summed in float32.");
}

} // namespace

// The float32 row kernel alone, one thread, for benchmarks/simd_choice.py, which
// measures it against the same kernel written with Highway (called through ctypes).
extern "C" __attribute__((visibility("default"))) void mlxir_matvec_f32_rows(
    const float* x, const float* w, std::size_t depth, std::size_t rows, float* out) {
  rows_dispatch(x, 1, WeightRows{w, mx::float32, depth}, 0, rows, out, rows);
}

MLXIR_KERNEL_FAMILY(matvec, "float products of up to 16 rows by a linear weight (mlx.matmul by w.T)", bind);

} // namespace mlxir::native
