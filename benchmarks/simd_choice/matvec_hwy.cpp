// The float32 matvec of native/kernels/matvec.cpp (8 weight rows at a time, a
// prefetch 8 rows ahead, the tail of K masked) written with Google Highway's run-time
// dispatch instead of hand-written intrinsics, for benchmarks/simd_choice.py: the one
// kernel measured both ways (docs/native-kernels.md). Not part of the package.
#include <cstddef>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "matvec_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace mlxir_simd_choice {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void MatvecRows(const float* x, const float* w, std::size_t depth, std::size_t rows, float* out) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t full = depth / lanes * lanes;
  const auto tail = hn::FirstN(d, depth - full);
  std::size_t n = 0;
  for (; n + 8 <= rows; n += 8) {
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    const float* w0 = w + n * depth;
    for (std::size_t k = 0; k < full; k += lanes) {
      const auto xv = hn::LoadU(d, x + k);
      if (n + 16 <= rows && (k * 4) % 64 == 0) {
        for (int i = 0; i < 8; ++i) hwy::Prefetch(w0 + (8 + i) * depth + k);
      }
      a0 = hn::MulAdd(xv, hn::LoadU(d, w0 + 0 * depth + k), a0);
      a1 = hn::MulAdd(xv, hn::LoadU(d, w0 + 1 * depth + k), a1);
      a2 = hn::MulAdd(xv, hn::LoadU(d, w0 + 2 * depth + k), a2);
      a3 = hn::MulAdd(xv, hn::LoadU(d, w0 + 3 * depth + k), a3);
      a4 = hn::MulAdd(xv, hn::LoadU(d, w0 + 4 * depth + k), a4);
      a5 = hn::MulAdd(xv, hn::LoadU(d, w0 + 5 * depth + k), a5);
      a6 = hn::MulAdd(xv, hn::LoadU(d, w0 + 6 * depth + k), a6);
      a7 = hn::MulAdd(xv, hn::LoadU(d, w0 + 7 * depth + k), a7);
    }
    if (full < depth) {
      const auto xv = hn::MaskedLoad(tail, d, x + full);
      a0 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 0 * depth + full), a0);
      a1 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 1 * depth + full), a1);
      a2 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 2 * depth + full), a2);
      a3 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 3 * depth + full), a3);
      a4 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 4 * depth + full), a4);
      a5 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 5 * depth + full), a5);
      a6 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 6 * depth + full), a6);
      a7 = hn::MulAdd(xv, hn::MaskedLoad(tail, d, w0 + 7 * depth + full), a7);
    }
    out[n + 0] = hn::GetLane(hn::SumOfLanes(d, a0));
    out[n + 1] = hn::GetLane(hn::SumOfLanes(d, a1));
    out[n + 2] = hn::GetLane(hn::SumOfLanes(d, a2));
    out[n + 3] = hn::GetLane(hn::SumOfLanes(d, a3));
    out[n + 4] = hn::GetLane(hn::SumOfLanes(d, a4));
    out[n + 5] = hn::GetLane(hn::SumOfLanes(d, a5));
    out[n + 6] = hn::GetLane(hn::SumOfLanes(d, a6));
    out[n + 7] = hn::GetLane(hn::SumOfLanes(d, a7));
  }
  for (; n < rows; ++n) {
    auto acc = hn::Zero(d);
    for (std::size_t k = 0; k < full; k += lanes) {
      acc = hn::MulAdd(hn::LoadU(d, x + k), hn::LoadU(d, w + n * depth + k), acc);
    }
    if (full < depth) {
      acc = hn::MulAdd(hn::MaskedLoad(tail, d, x + full), hn::MaskedLoad(tail, d, w + n * depth + full), acc);
    }
    out[n] = hn::GetLane(hn::SumOfLanes(d, acc));
  }
}

const char* CompiledTarget() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace mlxir_simd_choice
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mlxir_simd_choice {
HWY_EXPORT(MatvecRows);
HWY_EXPORT(CompiledTarget);
}  // namespace mlxir_simd_choice

extern "C" void hwy_matvec_f32(const float* x, const float* w, std::size_t depth, std::size_t rows, float* out) {
  HWY_DYNAMIC_DISPATCH(mlxir_simd_choice::MatvecRows)(x, w, depth, rows, out);
}

extern "C" const char* hwy_matvec_target() {
  return HWY_DYNAMIC_DISPATCH(mlxir_simd_choice::CompiledTarget)();
}

// Leaves AVX2 as the best target (Highway numbers targets best first).
extern "C" void hwy_at_most_avx2() { hwy::DisableTargets(HWY_AVX2 - 1); }
#endif
