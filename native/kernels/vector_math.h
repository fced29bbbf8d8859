// Vector float32 math for the native kernels, one namespace per instruction set
// (portable, avx2, avx512) with the same names in each: a vector type V of kLanes
// floats, arithmetic, loads and stores of float32/float16/bfloat16 buffers (whole
// vectors, and a masked part of one for a row's tail, never touching memory past it),
// and exp, sigmoid and erf.
//
// exp is Cephes' expf: n = round(x / ln 2), r = x - n ln 2 in two parts (Cody and
// Waite), e^r = 1 + r + r^2 p(r) with p of degree 5, times 2^n built from exponent
// bits in two halves, so that results in float32's subnormal range round once instead
// of being flushed to zero. Within 2 ulp of the exact value for every float32;
// exp(-inf) = 0, exp(inf) = inf, NaN stays NaN. sigmoid is 1/(1 + e^-x) for x >= 0 and
// e^x/(1 + e^x) below, from one exp(-|x|) (no cancellation, no overflow). erf is
// x + x R(x^2) below 0.921875 and 1 - exp(Q(|x|)) above, R of degree 6 and Q (a fit
// of log erfc) of degree 8 on [0.921875, 4] (erf is 1 in float32 from 3.92 on): within
// 2 ulp. The fits were made for these kernels (least squares on Chebyshev nodes,
// reweighted towards minimax), their float32 coefficients checked over every 37th
// float32 in [0, 4.5] against float64's erf.
//
// Every function of a namespace carries that namespace's target attribute, so that
// code of one instruction set inlines them; the caller enters avx2/avx512 code only
// where host_isa() says the CPU runs it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/cpu.h"
#include "kernels/primitive.h"
#if MLXIR_X86
#include <immintrin.h>
#endif

namespace mlxir::native::vmath {

namespace constants {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;  // n * kLn2High is exact for |n| < 2^9
constexpr float kLn2Low = -2.12194440e-4f;
// Clamped there, exp's n lies in [-150, 128]: both halves of 2^n are normal floats,
// e^-104 rounds to 0 and e^88.8 overflows to inf, as the exact values do.
constexpr float kExpLow = -104.0f;
constexpr float kExpHigh = 88.8f;
constexpr float kExpP0 = 1.9875691500e-4f, kExpP1 = 1.3981999507e-3f, kExpP2 = 8.3334519073e-3f,
                kExpP3 = 4.1665795894e-2f, kExpP4 = 1.6666665459e-1f, kExpP5 = 5.0000001201e-1f;
constexpr float kErfSplit = 0.921875f;
constexpr float kErfTop = 4.0f;
// erf(x) = x + x R(x^2) below kErfSplit, highest degree first.
constexpr float kErfR[] = {8.370089199e-05f, -8.142701699e-04f, 5.201031920e-03f, -2.685939893e-02f,
                           1.128369570e-01f, -3.761263490e-01f, 1.283791661e-01f};
// log(erfc(t)) on [kErfSplit, kErfTop], highest degree first.
constexpr float kErfQ[] = {1.602509428e-06f, -4.535498010e-05f, 5.907187006e-04f,
                           -4.730298650e-03f, 2.633558959e-02f, -1.099252775e-01f,
                           -6.319952011e-01f, -1.130131602e+00f, 2.942915016e-04f};
} // namespace constants

// ---------------------------------------------------------------------------- portable

namespace portable {

constexpr std::size_t kLanes = 1;
using V = float;

inline V set1(float v) { return v; }
inline V add(V a, V b) { return a + b; }
inline V sub(V a, V b) { return a - b; }
inline V mul(V a, V b) { return a * b; }
inline V div(V a, V b) { return a / b; }
inline V fmadd(V a, V b, V c) { return a * b + c; }
inline V max(V a, V b) { return a > b ? a : b; }
inline float reduce_add(V v) { return v; }
inline float reduce_max(V v) { return v; }

inline V load(const void* base, mx::Dtype dtype, std::size_t at) { return load_float(base, dtype, at); }
inline V load_part(const void* base, mx::Dtype dtype, std::size_t at, std::size_t count, float fill) {
  return count ? load_float(base, dtype, at) : fill;
}
inline V keep_part(V v, std::size_t count) { return count ? v : 0.0f; }
inline void store(void* base, mx::Dtype dtype, std::size_t at, V v) { store_float(base, dtype, at, v); }
inline void store_part(void* base, mx::Dtype dtype, std::size_t at, std::size_t count, V v) {
  if (count) store_float(base, dtype, at, v);
}

inline float scale_by_power_of_two(int n) {
  std::uint32_t bits = static_cast<std::uint32_t>(n + 127) << 23;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// exp(x) = (u + u_lo) * s1 * s2, u_lo the rounding error of u = 1 + t (sigmoid keeps it).
inline void exp_parts(V x, V& u, V& u_lo, V& s1, V& s2) {
  using namespace constants;
  // Comparisons written so that NaN falls through both and stays NaN.
  float clamped = x < kExpLow ? kExpLow : (x > kExpHigh ? kExpHigh : x);
  // Round to nearest by the 1.5 * 2^23 trick: exact for |t| < 2^22, no libm call.
  float scaled = clamped * kLog2e;
  float n = (scaled + 12582912.0f) - 12582912.0f;
  float r = clamped - n * kLn2High;
  r = r - n * kLn2Low;
  float p = ((((kExpP0 * r + kExpP1) * r + kExpP2) * r + kExpP3) * r + kExpP4) * r + kExpP5;
  float t = p * (r * r) + r;
  u = 1.0f + t;
  u_lo = (1.0f - u) + t;
  int ni = x != x ? 0 : static_cast<int>(n);
  int n1 = ni >> 1;  // arithmetic shift: floor(n / 2)
  s1 = scale_by_power_of_two(n1);
  s2 = scale_by_power_of_two(ni - n1);
  if (x != x) u = x;
}

inline V exp(V x) {
  V u, u_lo, s1, s2;
  exp_parts(x, u, u_lo, s1, s2);
  return u * s1 * s2;
}

// 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|) <= 1 kept in two parts and
// the quotient corrected by its residual: exp's own rounding would otherwise reach
// the result whole where x < 0 (2.3 ulp at worst instead of 1).
inline V sigmoid(V x) {
  V u, u_lo, s1, s2;
  exp_parts(-std::fabs(x), u, u_lo, s1, s2);
  float e = u * s1 * s2, e_lo = u_lo * s1 * s2;
  float d = 1.0f + e;
  float d_lo = ((1.0f - d) + e) + e_lo;
  float numerator = x < 0.0f ? e : 1.0f, numerator_lo = x < 0.0f ? e_lo : 0.0f;
  float q = numerator / d;
  // The residual numerator - q d, exact in double (products of two floats are).
  double residual = static_cast<double>(numerator) - static_cast<double>(q) * d;
  float correction = static_cast<float>(residual) + numerator_lo - q * d_lo;
  return q + correction / d;
}

inline V erf(V x) {
  using namespace constants;
  float a = std::fabs(x);
  if (a < kErfSplit) {
    float s = x * x;
    float r = kErfR[0];
    for (int i = 1; i < 7; ++i) r = r * s + kErfR[i];
    return r * x + x;
  }
  float t = a > kErfTop ? kErfTop : a;  // NaN stays NaN
  float q = kErfQ[0];
  for (int i = 1; i < 9; ++i) q = q * t + kErfQ[i];
  float result = 1.0f - exp(q);
  return x < 0.0f ? -result : result;
}

} // namespace portable

#if MLXIR_X86

// ---------------------------------------------------------------------------- avx2

namespace avx2 {

constexpr std::size_t kLanes = 8;
using V = __m256;

MLXIR_AVX2 inline V set1(float v) { return _mm256_set1_ps(v); }
MLXIR_AVX2 inline V add(V a, V b) { return _mm256_add_ps(a, b); }
MLXIR_AVX2 inline V sub(V a, V b) { return _mm256_sub_ps(a, b); }
MLXIR_AVX2 inline V mul(V a, V b) { return _mm256_mul_ps(a, b); }
MLXIR_AVX2 inline V div(V a, V b) { return _mm256_div_ps(a, b); }
MLXIR_AVX2 inline V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
MLXIR_AVX2 inline V max(V a, V b) { return _mm256_max_ps(a, b); }

MLXIR_AVX2 inline float reduce_add(V v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

MLXIR_AVX2 inline float reduce_max(V v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

MLXIR_AVX2 inline V load(const void* base, mx::Dtype dtype, std::size_t at) {
  if (dtype == mx::float32) return _mm256_loadu_ps(static_cast<const float*>(base) + at);
  __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(base) + at));
  if (dtype == mx::float16) return _mm256_cvtph_ps(bits);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

// A tail of `count` (< 8) elements goes through a staging buffer: AVX2 has no masked
// 16-bit load, and the scalar conversions round exactly as the vector ones.
MLXIR_AVX2 inline V load_part(const void* base, mx::Dtype dtype, std::size_t at, std::size_t count, float fill) {
  alignas(32) float staged[8];
  for (std::size_t i = 0; i < 8; ++i) staged[i] = i < count ? load_float(base, dtype, at + i) : fill;
  return _mm256_load_ps(staged);
}

// The first `count` lanes of v, zeros after.
MLXIR_AVX2 inline V keep_part(V v, std::size_t count) {
  __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
  return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
}

MLXIR_AVX2 inline void store(void* base, mx::Dtype dtype, std::size_t at, V v) {
  if (dtype == mx::float32) {
    _mm256_storeu_ps(static_cast<float*>(base) + at, v);
    return;
  }
  auto* target = reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(base) + at);
  if (dtype == mx::float16) {
    _mm_storeu_si128(target, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
  // bfloat16 rounded to nearest even, NaN as 0x7fc0: MLX's own conversion.
  __m256i bits = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  rounded = _mm256_blendv_epi8(rounded, _mm256_set1_epi32(0x7fc0), nan);
  _mm_storeu_si128(target, _mm_packus_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1)));
}

MLXIR_AVX2 inline void store_part(void* base, mx::Dtype dtype, std::size_t at, std::size_t count, V v) {
  alignas(32) float staged[8];
  _mm256_store_ps(staged, v);
  for (std::size_t i = 0; i < count; ++i) store_float(base, dtype, at + i, staged[i]);
}

MLXIR_AVX2 inline void exp_parts(V x, V& u, V& u_lo, V& s1, V& s2) {
  using namespace constants;
  // max/min give their second operand where one is NaN: x second keeps NaN.
  V clamped = _mm256_min_ps(_mm256_set1_ps(kExpHigh), _mm256_max_ps(_mm256_set1_ps(kExpLow), x));
  V n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
  V p = _mm256_fmadd_ps(_mm256_set1_ps(kExpP0), r, _mm256_set1_ps(kExpP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP5));
  V t = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
  V one = _mm256_set1_ps(1.0f);
  u = _mm256_add_ps(one, t);
  u_lo = _mm256_add_ps(_mm256_sub_ps(one, u), t);
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256i bias = _mm256_set1_epi32(127);
  s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
}

MLXIR_AVX2 inline V exp(V x) {
  V u, u_lo, s1, s2;
  exp_parts(x, u, u_lo, s1, s2);
  return _mm256_mul_ps(_mm256_mul_ps(u, s1), s2);
}

// As the portable sigmoid says; the correction's 1 / d needs only a few bits (rcp).
MLXIR_AVX2 inline V sigmoid(V x) {
  V sign = _mm256_set1_ps(-0.0f);
  V u, u_lo, s1, s2;
  exp_parts(_mm256_or_ps(x, sign), u, u_lo, s1, s2);
  V e = _mm256_mul_ps(_mm256_mul_ps(u, s1), s2);
  V e_lo = _mm256_mul_ps(_mm256_mul_ps(u_lo, s1), s2);
  V one = _mm256_set1_ps(1.0f);
  V d = _mm256_add_ps(one, e);
  V d_lo = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(one, d), e), e_lo);
  V negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  V numerator = _mm256_blendv_ps(one, e, negative);
  V numerator_lo = _mm256_and_ps(e_lo, negative);
  V q = _mm256_div_ps(numerator, d);
  V residual = _mm256_fnmadd_ps(q, d, numerator);
  residual = _mm256_fnmadd_ps(q, d_lo, _mm256_add_ps(residual, numerator_lo));
  return _mm256_fmadd_ps(residual, _mm256_rcp_ps(d), q);
}

MLXIR_AVX2 inline V erf(V x) {
  using namespace constants;
  V sign = _mm256_set1_ps(-0.0f);
  V a = _mm256_andnot_ps(sign, x);
  V s = _mm256_mul_ps(x, x);
  V r = _mm256_set1_ps(kErfR[0]);
  for (int i = 1; i < 7; ++i) r = _mm256_fmadd_ps(r, s, _mm256_set1_ps(kErfR[i]));
  V small = _mm256_fmadd_ps(r, x, x);
  V t = _mm256_min_ps(_mm256_set1_ps(kErfTop), a);
  V q = _mm256_set1_ps(kErfQ[0]);
  for (int i = 1; i < 9; ++i) q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kErfQ[i]));
  V large = _mm256_sub_ps(_mm256_set1_ps(1.0f), exp(q));
  large = _mm256_or_ps(large, _mm256_and_ps(sign, x));
  return _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(kErfSplit), _CMP_LT_OQ));
}

} // namespace avx2

// ---------------------------------------------------------------------------- avx512

namespace avx512 {

constexpr std::size_t kLanes = 16;
using V = __m512;

MLXIR_AVX512 inline V set1(float v) { return _mm512_set1_ps(v); }
MLXIR_AVX512 inline V add(V a, V b) { return _mm512_add_ps(a, b); }
MLXIR_AVX512 inline V sub(V a, V b) { return _mm512_sub_ps(a, b); }
MLXIR_AVX512 inline V mul(V a, V b) { return _mm512_mul_ps(a, b); }
MLXIR_AVX512 inline V div(V a, V b) { return _mm512_div_ps(a, b); }
MLXIR_AVX512 inline V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
MLXIR_AVX512 inline V max(V a, V b) { return _mm512_max_ps(a, b); }
MLXIR_AVX512 inline float reduce_add(V v) { return _mm512_reduce_add_ps(v); }
MLXIR_AVX512 inline float reduce_max(V v) { return _mm512_reduce_max_ps(v); }

MLXIR_AVX512 inline __mmask16 first(std::size_t count) {
  return static_cast<__mmask16>((1u << count) - 1);
}

MLXIR_AVX512 inline V widen(__m256i bits, mx::Dtype dtype) {
  if (dtype == mx::float16) return _mm512_cvtph_ps(bits);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

MLXIR_AVX512 inline __m256i narrow(V v, mx::Dtype dtype) {
  if (dtype == mx::float16) return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // bfloat16 rounded to nearest even, NaN as 0x7fc0: MLX's own conversion.
  __m512i bits = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  rounded = _mm512_mask_mov_epi32(rounded, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
  return _mm512_cvtepi32_epi16(rounded);
}

MLXIR_AVX512 inline V load(const void* base, mx::Dtype dtype, std::size_t at) {
  if (dtype == mx::float32) return _mm512_loadu_ps(static_cast<const float*>(base) + at);
  return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(base) + at)),
               dtype);
}

MLXIR_AVX512 inline V load_part(const void* base, mx::Dtype dtype, std::size_t at, std::size_t count, float fill) {
  __mmask16 mask = first(count);
  if (dtype == mx::float32) return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), mask, static_cast<const float*>(base) + at);
  V v = widen(_mm256_maskz_loadu_epi16(mask, static_cast<const std::uint16_t*>(base) + at), dtype);
  return _mm512_mask_blend_ps(mask, _mm512_set1_ps(fill), v);
}

MLXIR_AVX512 inline V keep_part(V v, std::size_t count) { return _mm512_maskz_mov_ps(first(count), v); }

MLXIR_AVX512 inline void store(void* base, mx::Dtype dtype, std::size_t at, V v) {
  if (dtype == mx::float32) {
    _mm512_storeu_ps(static_cast<float*>(base) + at, v);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(base) + at), narrow(v, dtype));
  }
}

MLXIR_AVX512 inline void store_part(void* base, mx::Dtype dtype, std::size_t at, std::size_t count, V v) {
  __mmask16 mask = first(count);
  if (dtype == mx::float32) {
    _mm512_mask_storeu_ps(static_cast<float*>(base) + at, mask, v);
  } else {
    _mm256_mask_storeu_epi16(static_cast<std::uint16_t*>(base) + at, mask, narrow(v, dtype));
  }
}

MLXIR_AVX512 inline void exp_parts(V x, V& u, V& u_lo, V& s1, V& s2) {
  using namespace constants;
  // max/min give their second operand where one is NaN: x second keeps NaN.
  V clamped = _mm512_min_ps(_mm512_set1_ps(kExpHigh), _mm512_max_ps(_mm512_set1_ps(kExpLow), x));
  V n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  V p = _mm512_fmadd_ps(_mm512_set1_ps(kExpP0), r, _mm512_set1_ps(kExpP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP5));
  V t = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  V one = _mm512_set1_ps(1.0f);
  u = _mm512_add_ps(one, t);
  u_lo = _mm512_add_ps(_mm512_sub_ps(one, u), t);
  __m512i ni = _mm512_cvtps_epi32(n);
  __m512i n1 = _mm512_srai_epi32(ni, 1);
  __m512i n2 = _mm512_sub_epi32(ni, n1);
  __m512i bias = _mm512_set1_epi32(127);
  s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
}

MLXIR_AVX512 inline V exp(V x) {
  V u, u_lo, s1, s2;
  exp_parts(x, u, u_lo, s1, s2);
  return _mm512_mul_ps(_mm512_mul_ps(u, s1), s2);
}

// As the portable sigmoid says; the correction's 1 / d needs only a few bits (rcp14).
MLXIR_AVX512 inline V sigmoid(V x) {
  V u, u_lo, s1, s2;
  exp_parts(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)), u, u_lo, s1, s2);
  V e = _mm512_mul_ps(_mm512_mul_ps(u, s1), s2);
  V e_lo = _mm512_mul_ps(_mm512_mul_ps(u_lo, s1), s2);
  V one = _mm512_set1_ps(1.0f);
  V d = _mm512_add_ps(one, e);
  V d_lo = _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(one, d), e), e_lo);
  __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  V numerator = _mm512_mask_blend_ps(negative, one, e);
  V numerator_lo = _mm512_maskz_mov_ps(negative, e_lo);
  V q = _mm512_div_ps(numerator, d);
  V residual = _mm512_fnmadd_ps(q, d, numerator);
  residual = _mm512_fnmadd_ps(q, d_lo, _mm512_add_ps(residual, numerator_lo));
  return _mm512_fmadd_ps(residual, _mm512_rcp14_ps(d), q);
}

MLXIR_AVX512 inline V erf(V x) {
  using namespace constants;
  V a = _mm512_abs_ps(x);
  V s = _mm512_mul_ps(x, x);
  V r = _mm512_set1_ps(kErfR[0]);
  for (int i = 1; i < 7; ++i) r = _mm512_fmadd_ps(r, s, _mm512_set1_ps(kErfR[i]));
  V small = _mm512_fmadd_ps(r, x, x);
  V t = _mm512_min_ps(_mm512_set1_ps(kErfTop), a);
  V q = _mm512_set1_ps(kErfQ[0]);
  for (int i = 1; i < 9; ++i) q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kErfQ[i]));
  V large = _mm512_sub_ps(_mm512_set1_ps(1.0f), exp(q));
  large = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(large), _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(kErfSplit), _CMP_LT_OQ), large, small);
}

} // namespace avx512

#endif

} // namespace mlxir::native::vmath
