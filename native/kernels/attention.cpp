// Attention with `mx.fast.scaled_dot_product_attention`'s meaning: out =
// softmax(scale * q @ k.T + mask) @ v for q [B, Hq, L, D], k and v [B, Hkv, S, D(v)]
// (Hq a multiple of Hkv: grouped queries), float32/float16/bfloat16 computed in
// float32. Masks as MLX's CPU composition applies them: "causal" keeps key c for
// query l where c <= l + S - L (aligned to the end of the keys), a bool mask keeps
// True and puts MLX's lowest float elsewhere (so a row that keeps nothing averages
// v), a float mask is added (a row of -inf gives NaN, as MLX's softmax does).
//
// The query rows of one K/V head are taken as one matrix of Hq/Hkv * L rows, in
// tiles of 8, against blocks of 64 keys with an online softmax (one pass over k and
// v, no score matrix). Two shapes of work:
// - a few rows a K/V head (decode): the keys are cut into fixed blocks of
//   kSplitKeys, each block a pool chunk giving a partial (max, sum, weighted v), the
//   partials combined in block order afterwards; scores are dot products over D.
// - more rows (prefill): a chunk is a tile of rows over all its keys, the keys
//   packed first into panels of 16 keys x D so that 8 rows x 32 keys of scores are
//   FMAs of broadcast query elements by panel rows.
// How work is cut depends on the shape only, and each chunk computes the same values
// whichever thread runs it: results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include <nanobind/stl/string.h>

#include "kernels/cpu.h"
#if MLXIR_X86
// GCC 12's AVX-512 intrinsics start some results from a self-initialized "undefined"
// vector, which -Wuninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#endif
#include "kernels/primitive.h"
#include "kernels/registry.h"
#include "kernels/thread_pool.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mlxir::native {

namespace {

constexpr int kTileRows = 8;             // query rows computed together
constexpr int kBlockKeys = 64;           // keys of one online-softmax step
constexpr int kPanelKeys = 16;           // keys of one packed panel
constexpr std::int64_t kSplitKeys = 256; // decode: keys of one pool chunk (a multiple of kBlockKeys)
constexpr std::int64_t kDecodeRows = 16; // at most this many query rows a K/V head: decode
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

enum class MaskMode { none = 0, causal = 1, boolean = 2, additive = 3 };

// The per-instruction-set pieces of a tile's step; scores rows are kBlockKeys wide.
struct Kernels {
  // scores[r][j] = q_r . k_j for the rows of qt (stride dkp, zero past dk) and the
  // key rows krows[0..nc); lanes past nc are left to the caller.
  void (*scores_direct)(const float* qt, int nr, int dkp, int dk, const float* const* krows, int nc,
                        float* scores);
  // The same from packed panels ([dk][16] each, zero keys past S).
  void (*scores_packed)(const float* qt, int nr, int dkp, int dk, const float* panels, int npanel,
                        float* scores);
  // The online softmax's step for rows r < nr: m[r] becomes the max of m[r] and the
  // row's scores, the scores exp(score - m[r]) (0 while m[r] is -inf), l[r] the sum
  // of weights so far, corr[r] what the weights before this block are multiplied by.
  // All rows in one call, so that their exps overlap (one row's are a latency chain).
  void (*softmax)(float* scores, int nr, float* m, float* l, float* corr);
  // acc[r] = corr[r] * acc[r] + sum_j p[r][j] * vrows[j] for r < nr (rows of stride dvp).
  void (*pv)(const float* p, int nr, const float* const* vrows, int nc, float* acc, int dvp, int dv,
             const float* corr);
};

// The running max after a block whose max is `block` (NaN if it holds a NaN: it sticks).
inline float next_max(float m, float block) { return (block > m || block != block) ? block : m; }

// ----------------------------------------------------------------------------- portable

void scores_direct_portable(const float* qt, int nr, int dkp, int dk, const float* const* krows, int nc,
                            float* scores) {
  for (int r = 0; r < nr; ++r) {
    const float* q = qt + r * dkp;
    for (int j = 0; j < nc; ++j) {
      const float* k = krows[j];
      float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int d = 0;
      for (; d + 8 <= dk; d += 8) {
        for (int i = 0; i < 8; ++i) lanes[i] += q[d + i] * k[d + i];
      }
      for (; d < dk; ++d) lanes[d % 8] += q[d] * k[d];
      scores[r * kBlockKeys + j] =
          ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
    }
  }
}

void scores_packed_portable(const float* qt, int nr, int dkp, int dk, const float* panels, int npanel,
                            float* scores) {
  for (int p = 0; p < npanel; ++p) {
    const float* panel = panels + static_cast<std::size_t>(p) * dk * kPanelKeys;
    for (int r = 0; r < nr; ++r) {
      float acc[kPanelKeys] = {};
      const float* q = qt + r * dkp;
      for (int d = 0; d < dk; ++d) {
        for (int j = 0; j < kPanelKeys; ++j) acc[j] += q[d] * panel[d * kPanelKeys + j];
      }
      for (int j = 0; j < kPanelKeys; ++j) scores[r * kBlockKeys + p * kPanelKeys + j] = acc[j];
    }
  }
}

// exp(x) by the vector paths' polynomial in plain float arithmetic, which the
// compiler vectorizes (x86-64's baseline has no rounding instruction: adding 1.5 * 2^23
// rounds); results below FLT_MIN are 0, x > 88 gives exp(88).
inline float exp_portable(float x) {
  const bool under = x < -87.3365478515625f;
  x = x > 88.0f ? 88.0f : x;  // comparisons false for NaN: it goes through
  x = x < -87.3365478515625f ? -87.3365478515625f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n == n ? n : 0.0f) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return under ? 0.0f : y * scale;
}

void softmax_portable(float* scores, int nr, float* m, float* l, float* corr) {
  for (int r = 0; r < nr; ++r) {
    float* s = scores + r * kBlockKeys;
    float block = kNegInf;
    bool nan = false;
    for (int j = 0; j < kBlockKeys; ++j) {
      block = s[j] > block ? s[j] : block;
      nan |= s[j] != s[j];
    }
    const float m_new = next_max(m[r], nan ? std::numeric_limits<float>::quiet_NaN() : block);
    // A row that has seen nothing (max -inf) subtracts 0: its weights exp(-inf) are 0.
    const float sub = m_new == kNegInf ? 0.0f : m_new;
    corr[r] = exp_portable(m[r] - sub);
    for (int j = 0; j < kBlockKeys; ++j) s[j] = exp_portable(s[j] - sub);
    float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < kBlockKeys; j += 8) {
      for (int i = 0; i < 8; ++i) lanes[i] += s[j + i];
    }
    const float sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
    l[r] = l[r] * corr[r] + sum;
    m[r] = m_new;
  }
}

void pv_portable(const float* p, int nr, const float* const* vrows, int nc, float* acc, int dvp, int dv,
                 const float* corr) {
  for (int r = 0; r < nr; ++r) {
    float* a = acc + r * dvp;
    if (corr[r] != 1.0f) {
      for (int d = 0; d < dv; ++d) a[d] *= corr[r];
    }
    for (int j = 0; j < nc; ++j) {
      const float w = p[r * kBlockKeys + j];
      const float* v = vrows[j];
      for (int d = 0; d < dv; ++d) a[d] += w * v[d];
    }
  }
}

constexpr Kernels kPortable{scores_direct_portable, scores_packed_portable, softmax_portable, pv_portable};

#if MLXIR_X86

// ----------------------------------------------------------------------------- AVX-512

// exp(x) within 2 ulp over the floats (1.01 measured over every 7th float of
// [-104, 88]): Cephes' expf polynomial on x - n ln2, scaled by 2^n with scalef, which
// also gives results below FLT_MIN as subnormals; -inf gives 0, NaN stays NaN.
MLXIR_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);  // min/max(bound, x) keep a NaN x
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  // n = round(x / ln2): adding 1.5 * 2^23 leaves the integer in the low bits
  const __m512 shifter = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), shifter), shifter);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}

// Lane i of the result is the sum of v[i]'s lanes (a fixed tree: the same bits every call).
MLXIR_AVX512 inline __m512 sum16x16(const __m512* v) {
  __m512 a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i) {
    a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d x = _mm512_castps_pd(a[2 * i]), y = _mm512_castps_pd(a[2 * i + 1]);
    b[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  for (int i = 0; i < 2; ++i) {
    c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

MLXIR_AVX512 void scores_direct_avx512(const float* qt, int nr, int dkp, int dk, const float* const* krows,
                                       int nc, float* scores) {
  const int full = dk / 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (dk - full * 16)) - 1);
  for (int r = 0; r < nr; ++r) {
    const float* q = qt + r * dkp;
    for (int j0 = 0; j0 < nc; j0 += 16) {
      const int count = std::min(16, nc - j0);
      __m512 acc[16];
      for (int j = 0; j < 16; ++j) acc[j] = _mm512_setzero_ps();
      for (int j = 0; j < count; ++j) {
        const float* k = krows[j0 + j];
        __m512 a = _mm512_setzero_ps();
        for (int c = 0; c < full; ++c) a = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * c), _mm512_loadu_ps(k + 16 * c), a);
        if (tail) a = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * full), _mm512_maskz_loadu_ps(tail, k + 16 * full), a);
        acc[j] = a;
      }
      _mm512_storeu_ps(scores + r * kBlockKeys + j0, sum16x16(acc));
    }
  }
}

template <int NR>
MLXIR_AVX512 void scores_packed_avx512_rows(const float* qt, int dkp, int dk, const float* panels, int npanel,
                                            float* scores) {
  const std::size_t panel_size = static_cast<std::size_t>(dk) * kPanelKeys;
  int p = 0;
  for (; p + 2 <= npanel; p += 2) {
    const float* k0 = panels + p * panel_size;
    const float* k1 = k0 + panel_size;
    __m512 a0[NR], a1[NR];
    for (int r = 0; r < NR; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    for (int d = 0; d < dk; ++d) {
      const __m512 x0 = _mm512_loadu_ps(k0 + d * kPanelKeys), x1 = _mm512_loadu_ps(k1 + d * kPanelKeys);
      for (int r = 0; r < NR; ++r) {
        const __m512 qb = _mm512_set1_ps(qt[r * dkp + d]);
        a0[r] = _mm512_fmadd_ps(qb, x0, a0[r]);
        a1[r] = _mm512_fmadd_ps(qb, x1, a1[r]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      _mm512_storeu_ps(scores + r * kBlockKeys + p * kPanelKeys, a0[r]);
      _mm512_storeu_ps(scores + r * kBlockKeys + (p + 1) * kPanelKeys, a1[r]);
    }
  }
  if (p < npanel) {
    const float* k0 = panels + p * panel_size;
    __m512 a0[NR];
    for (int r = 0; r < NR; ++r) a0[r] = _mm512_setzero_ps();
    for (int d = 0; d < dk; ++d) {
      const __m512 x0 = _mm512_loadu_ps(k0 + d * kPanelKeys);
      for (int r = 0; r < NR; ++r) a0[r] = _mm512_fmadd_ps(_mm512_set1_ps(qt[r * dkp + d]), x0, a0[r]);
    }
    for (int r = 0; r < NR; ++r) _mm512_storeu_ps(scores + r * kBlockKeys + p * kPanelKeys, a0[r]);
  }
}

MLXIR_AVX512 void scores_packed_avx512(const float* qt, int nr, int dkp, int dk, const float* panels, int npanel,
                                       float* scores) {
  switch (nr) {
    case 1: return scores_packed_avx512_rows<1>(qt, dkp, dk, panels, npanel, scores);
    case 2: return scores_packed_avx512_rows<2>(qt, dkp, dk, panels, npanel, scores);
    case 3: return scores_packed_avx512_rows<3>(qt, dkp, dk, panels, npanel, scores);
    case 4: return scores_packed_avx512_rows<4>(qt, dkp, dk, panels, npanel, scores);
    case 5: return scores_packed_avx512_rows<5>(qt, dkp, dk, panels, npanel, scores);
    case 6: return scores_packed_avx512_rows<6>(qt, dkp, dk, panels, npanel, scores);
    case 7: return scores_packed_avx512_rows<7>(qt, dkp, dk, panels, npanel, scores);
    default: return scores_packed_avx512_rows<8>(qt, dkp, dk, panels, npanel, scores);
  }
}

// The rows' new maxima and corrections side by side in one vector, then each row's
// exps: no branch on the data, so the rows' latency chains overlap.
MLXIR_AVX512 void softmax_avx512(float* scores, int nr, float* m, float* l, float* corr) {
  alignas(64) float block[16], subtract[16], sums[16];
  for (int r = 0; r < nr; ++r) {
    const float* s = scores + r * kBlockKeys;
    const __m512 v0 = _mm512_loadu_ps(s), v1 = _mm512_loadu_ps(s + 16);
    const __m512 v2 = _mm512_loadu_ps(s + 32), v3 = _mm512_loadu_ps(s + 48);
    const __mmask16 nan = _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q) |
                          _mm512_cmp_ps_mask(v2, v2, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v3, v3, _CMP_UNORD_Q);
    const float most = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(v0, v1), _mm512_max_ps(v2, v3)));
    block[r] = nan ? std::numeric_limits<float>::quiet_NaN() : most;
  }
  const __mmask16 rows = static_cast<__mmask16>((1u << nr) - 1);
  const __m512 m_old = _mm512_maskz_loadu_ps(rows, m), b = _mm512_maskz_loadu_ps(rows, block);
  // next_max, lane-wise: the block's max where greater or NaN
  const __m512 m_new = _mm512_mask_blend_ps(
      _mm512_cmp_ps_mask(b, m_old, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), m_old, b);
  // A row that has seen nothing (max -inf) subtracts 0: its weights exp(-inf) are 0.
  const __m512 sub = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m_new, _mm512_set1_ps(kNegInf), _CMP_EQ_OQ), m_new,
                                          _mm512_setzero_ps());
  const __m512 c = exp16(_mm512_sub_ps(m_old, sub));  // exp(0) is exactly 1
  _mm512_mask_storeu_ps(m, rows, m_new);
  _mm512_mask_storeu_ps(corr, rows, c);
  _mm512_store_ps(subtract, sub);
  for (int r = 0; r < nr; ++r) {
    float* s = scores + r * kBlockKeys;
    const __m512 mv = _mm512_set1_ps(subtract[r]);
    __m512 e[4];
    for (int i = 0; i < 4; ++i) {
      e[i] = exp16(_mm512_sub_ps(_mm512_loadu_ps(s + 16 * i), mv));
      _mm512_storeu_ps(s + 16 * i, e[i]);
    }
    sums[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(e[0], e[1]), _mm512_add_ps(e[2], e[3])));
  }
  const __m512 total = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(rows, l), c), _mm512_maskz_loadu_ps(rows, sums));
  _mm512_mask_storeu_ps(l, rows, total);
}

// NR rows x CW chunks of 16 output lanes in registers while the block's keys stream by.
template <int NR, int CW>
MLXIR_AVX512 void pv_avx512_rows(const float* p, const float* const* vrows, int nc, float* acc, int dvp, int dv,
                                 const float* corr) {
  const int chunks = dvp / 16;
  for (int c0 = 0; c0 < chunks; c0 += CW) {
    __mmask16 masks[CW];
    for (int w = 0; w < CW; ++w) {
      const int lanes = std::max(0, std::min(16, dv - (c0 + w) * 16));
      masks[w] = static_cast<__mmask16>((1u << lanes) - 1);
    }
    __m512 a[NR][CW];
    for (int r = 0; r < NR; ++r) {
      for (int w = 0; w < CW; ++w) {
        a[r][w] = c0 + w < chunks ? _mm512_mul_ps(_mm512_loadu_ps(acc + r * dvp + (c0 + w) * 16), _mm512_set1_ps(corr[r]))
                                  : _mm512_setzero_ps();
      }
    }
    for (int j = 0; j < nc; ++j) {
      const float* v = vrows[j] + c0 * 16;
      __m512 pb[NR];
      for (int r = 0; r < NR; ++r) pb[r] = _mm512_set1_ps(p[r * kBlockKeys + j]);
      for (int w = 0; w < CW; ++w) {
        if (c0 + w >= chunks) break;
        const __m512 vv = _mm512_maskz_loadu_ps(masks[w], v + w * 16);
        for (int r = 0; r < NR; ++r) a[r][w] = _mm512_fmadd_ps(pb[r], vv, a[r][w]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      for (int w = 0; w < CW && c0 + w < chunks; ++w) _mm512_storeu_ps(acc + r * dvp + (c0 + w) * 16, a[r][w]);
    }
  }
}

MLXIR_AVX512 void pv_avx512(const float* p, int nr, const float* const* vrows, int nc, float* acc, int dvp,
                            int dv, const float* corr) {
  switch (nr) {
    case 1: return pv_avx512_rows<1, 8>(p, vrows, nc, acc, dvp, dv, corr);
    case 2: return pv_avx512_rows<2, 4>(p, vrows, nc, acc, dvp, dv, corr);
    case 3: return pv_avx512_rows<3, 4>(p, vrows, nc, acc, dvp, dv, corr);
    case 4: return pv_avx512_rows<4, 4>(p, vrows, nc, acc, dvp, dv, corr);
    case 5: return pv_avx512_rows<5, 2>(p, vrows, nc, acc, dvp, dv, corr);
    case 6: return pv_avx512_rows<6, 2>(p, vrows, nc, acc, dvp, dv, corr);
    case 7: return pv_avx512_rows<7, 2>(p, vrows, nc, acc, dvp, dv, corr);
    default: return pv_avx512_rows<8, 2>(p, vrows, nc, acc, dvp, dv, corr);
  }
}

constexpr Kernels kAvx512{scores_direct_avx512, scores_packed_avx512, softmax_avx512, pv_avx512};

// ----------------------------------------------------------------------------- AVX2

// exp(x) within 2 ulp for x <= 88 (the same polynomial as exp16); results below
// FLT_MIN are 0 (what a softmax weight that small adds is below its sum's rounding).
MLXIR_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.3365478515625f);
  const __m256 under = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_set1_ps(88.0f), x);
  x = _mm256_max_ps(lowest, x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(y, _mm256_castsi256_ps(bits)));
}

MLXIR_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

MLXIR_AVX2 inline float max8(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Lane i of the result is the sum of v[i]'s lanes.
MLXIR_AVX2 inline __m256 sum8x8(const __m256* v) {
  __m256 a[4], b[2];
  for (int i = 0; i < 4; ++i) {
    a[i] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 2; ++i) {
    const __m256d x = _mm256_castps_pd(a[2 * i]), y = _mm256_castps_pd(a[2 * i + 1]);
    b[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
  }
  return _mm256_add_ps(_mm256_permute2f128_ps(b[0], b[1], 0x20), _mm256_permute2f128_ps(b[0], b[1], 0x31));
}

MLXIR_AVX2 inline __m256i lanes8(int count) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), index);
}

MLXIR_AVX2 void scores_direct_avx2(const float* qt, int nr, int dkp, int dk, const float* const* krows, int nc,
                                   float* scores) {
  const int full = dk / 8;
  const int rest = dk - full * 8;
  const __m256i tail = lanes8(rest);
  for (int r = 0; r < nr; ++r) {
    const float* q = qt + r * dkp;
    for (int j0 = 0; j0 < nc; j0 += 8) {
      const int count = std::min(8, nc - j0);
      __m256 acc[8];
      for (int j = 0; j < 8; ++j) acc[j] = _mm256_setzero_ps();
      for (int j = 0; j < count; ++j) {
        const float* k = krows[j0 + j];
        __m256 a = _mm256_setzero_ps();
        for (int c = 0; c < full; ++c) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * c), _mm256_loadu_ps(k + 8 * c), a);
        if (rest) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * full), _mm256_maskload_ps(k + 8 * full, tail), a);
        acc[j] = a;
      }
      _mm256_storeu_ps(scores + r * kBlockKeys + j0, sum8x8(acc));
    }
  }
}

template <int NR>
MLXIR_AVX2 void scores_packed_avx2_rows(const float* qt, int dkp, int dk, const float* panels, int npanel,
                                        float* scores) {
  const std::size_t panel_size = static_cast<std::size_t>(dk) * kPanelKeys;
  for (int p = 0; p < npanel; ++p) {
    const float* k0 = panels + p * panel_size;
    __m256 a[NR][2];
    for (int r = 0; r < NR; ++r) a[r][0] = a[r][1] = _mm256_setzero_ps();
    for (int d = 0; d < dk; ++d) {
      const __m256 x0 = _mm256_loadu_ps(k0 + d * kPanelKeys), x1 = _mm256_loadu_ps(k0 + d * kPanelKeys + 8);
      for (int r = 0; r < NR; ++r) {
        const __m256 qb = _mm256_broadcast_ss(qt + r * dkp + d);
        a[r][0] = _mm256_fmadd_ps(qb, x0, a[r][0]);
        a[r][1] = _mm256_fmadd_ps(qb, x1, a[r][1]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      _mm256_storeu_ps(scores + r * kBlockKeys + p * kPanelKeys, a[r][0]);
      _mm256_storeu_ps(scores + r * kBlockKeys + p * kPanelKeys + 8, a[r][1]);
    }
  }
}

MLXIR_AVX2 void scores_packed_avx2(const float* qt, int nr, int dkp, int dk, const float* panels, int npanel,
                                   float* scores) {
  for (int r0 = 0; r0 < nr; r0 += 4) {
    const float* q = qt + r0 * dkp;
    float* s = scores + r0 * kBlockKeys;
    switch (std::min(4, nr - r0)) {
      case 1: scores_packed_avx2_rows<1>(q, dkp, dk, panels, npanel, s); break;
      case 2: scores_packed_avx2_rows<2>(q, dkp, dk, panels, npanel, s); break;
      case 3: scores_packed_avx2_rows<3>(q, dkp, dk, panels, npanel, s); break;
      default: scores_packed_avx2_rows<4>(q, dkp, dk, panels, npanel, s); break;
    }
  }
}

MLXIR_AVX2 void softmax_avx2(float* scores, int nr, float* m, float* l, float* corr) {
  alignas(32) float block[8], subtract[8], sums[8];
  for (int r = 0; r < nr; ++r) {
    const float* s = scores + r * kBlockKeys;
    __m256 most = _mm256_loadu_ps(s), nan = _mm256_cmp_ps(most, most, _CMP_UNORD_Q);
    for (int i = 1; i < 8; ++i) {
      const __m256 v = _mm256_loadu_ps(s + 8 * i);
      most = _mm256_max_ps(most, v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    block[r] = _mm256_movemask_ps(nan) ? std::numeric_limits<float>::quiet_NaN() : max8(most);
  }
  const __m256i rows = lanes8(nr);
  const __m256 m_old = _mm256_maskload_ps(m, rows), b = _mm256_maskload_ps(block, rows);
  const __m256 take = _mm256_or_ps(_mm256_cmp_ps(b, m_old, _CMP_GT_OQ), _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  const __m256 m_new = _mm256_blendv_ps(m_old, b, take);
  const __m256 sub = _mm256_blendv_ps(m_new, _mm256_setzero_ps(),
                                      _mm256_cmp_ps(m_new, _mm256_set1_ps(kNegInf), _CMP_EQ_OQ));
  const __m256 c = exp8(_mm256_sub_ps(m_old, sub));
  _mm256_maskstore_ps(m, rows, m_new);
  _mm256_maskstore_ps(corr, rows, c);
  _mm256_store_ps(subtract, sub);
  for (int r = 0; r < nr; ++r) {
    float* s = scores + r * kBlockKeys;
    const __m256 mv = _mm256_set1_ps(subtract[r]);
    __m256 e[8];
    for (int i = 0; i < 8; ++i) {
      e[i] = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + 8 * i), mv));
      _mm256_storeu_ps(s + 8 * i, e[i]);
    }
    sums[r] = sum8(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(e[0], e[1]), _mm256_add_ps(e[2], e[3])),
                                 _mm256_add_ps(_mm256_add_ps(e[4], e[5]), _mm256_add_ps(e[6], e[7]))));
  }
  const __m256 total = _mm256_add_ps(_mm256_mul_ps(_mm256_maskload_ps(l, rows), c), _mm256_maskload_ps(sums, rows));
  _mm256_maskstore_ps(l, rows, total);
}

template <int NR, int CW>
MLXIR_AVX2 void pv_avx2_rows(const float* p, const float* const* vrows, int nc, float* acc, int dvp, int dv,
                             const float* corr) {
  const int chunks = dvp / 8;
  for (int c0 = 0; c0 < chunks; c0 += CW) {
    __m256i masks[CW];
    for (int w = 0; w < CW; ++w) masks[w] = lanes8(std::max(0, std::min(8, dv - (c0 + w) * 8)));
    __m256 a[NR][CW];
    for (int r = 0; r < NR; ++r) {
      for (int w = 0; w < CW; ++w) {
        a[r][w] = c0 + w < chunks ? _mm256_mul_ps(_mm256_loadu_ps(acc + r * dvp + (c0 + w) * 8), _mm256_set1_ps(corr[r]))
                                  : _mm256_setzero_ps();
      }
    }
    for (int j = 0; j < nc; ++j) {
      const float* v = vrows[j] + c0 * 8;
      __m256 pb[NR];
      for (int r = 0; r < NR; ++r) pb[r] = _mm256_broadcast_ss(p + r * kBlockKeys + j);
      for (int w = 0; w < CW; ++w) {
        if (c0 + w >= chunks) break;
        const __m256 vv = _mm256_maskload_ps(v + w * 8, masks[w]);
        for (int r = 0; r < NR; ++r) a[r][w] = _mm256_fmadd_ps(pb[r], vv, a[r][w]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      for (int w = 0; w < CW && c0 + w < chunks; ++w) _mm256_storeu_ps(acc + r * dvp + (c0 + w) * 8, a[r][w]);
    }
  }
}

MLXIR_AVX2 void pv_avx2(const float* p, int nr, const float* const* vrows, int nc, float* acc, int dvp, int dv,
                        const float* corr) {
  for (int r0 = 0; r0 < nr; r0 += 4) {
    const float* pr = p + r0 * kBlockKeys;
    float* a = acc + r0 * dvp;
    const float* c = corr + r0;
    switch (std::min(4, nr - r0)) {
      case 1: pv_avx2_rows<1, 8>(pr, vrows, nc, a, dvp, dv, c); break;
      case 2: pv_avx2_rows<2, 4>(pr, vrows, nc, a, dvp, dv, c); break;
      case 3: pv_avx2_rows<3, 2>(pr, vrows, nc, a, dvp, dv, c); break;
      default: pv_avx2_rows<4, 2>(pr, vrows, nc, a, dvp, dv, c); break;
    }
  }
}

constexpr Kernels kAvx2{scores_direct_avx2, scores_packed_avx2, softmax_avx2, pv_avx2};

#endif

const Kernels& kernels_for(Isa isa) {
#if MLXIR_X86
  if (isa == Isa::avx512) return kAvx512;
  if (isa == Isa::avx2) return kAvx2;
#endif
  return kPortable;
}

// ----------------------------------------------------------------------------- the job

inline float load_at(const char* base, mx::Dtype dtype, std::int64_t element) {
  const char* at = base + element * static_cast<std::int64_t>(mx::size_of(dtype));
  if (dtype == mx::float32) {
    float value;
    std::memcpy(&value, at, sizeof value);
    return value;
  }
  std::uint16_t bits;
  std::memcpy(&bits, at, sizeof bits);
  return dtype == mx::float16 ? half_to_float(bits) : bfloat_to_float(bits);
}

// Rows of a [B, H, S, D] float32 operand whose last axis is contiguous.
struct Rows {
  const float* base;
  std::int64_t b, h, s;
  const float* row(std::int64_t bi, std::int64_t hi, std::int64_t si) const { return base + bi * b + hi * h + si * s; }
};

// k or v as float32 rows: its own memory where it is float32 with a contiguous last
// axis (a KV cache's slice is), else a float32 copy in `scratch`.
Rows float_rows(const Operand& op, mx::Dtype dtype, std::vector<float>& scratch) {
  const auto& shape = op.shape;
  const auto& st = op.strides;
  if (dtype == mx::float32 && (shape[3] <= 1 || st[3] == 1)) {
    return {reinterpret_cast<const float*>(op.data), st[0], st[1], st[2]};
  }
  scratch.resize(op.size);
  std::size_t i = 0;
  for (std::int64_t b = 0; b < shape[0]; ++b) {
    for (std::int64_t h = 0; h < shape[1]; ++h) {
      for (std::int64_t s = 0; s < shape[2]; ++s) {
        for (std::int64_t d = 0; d < shape[3]; ++d) {
          scratch[i++] = load_at(op.data, dtype, b * st[0] + h * st[1] + s * st[2] + d * st[3]);
        }
      }
    }
  }
  return {scratch.data(), static_cast<std::int64_t>(shape[1]) * shape[2] * shape[3],
          static_cast<std::int64_t>(shape[2]) * shape[3], shape[3]};
}

struct Job {
  std::int64_t B, Hq, Hkv, G, L, S, Dk, Dv, R;  // R = G * L query rows a K/V head
  int dkp, dvp;                                // Dk, Dv rounded up to 16
  float scale;
  MaskMode mode;
  Operand q;
  mx::Dtype q_dtype = mx::float32;
  Rows k, v;
  Operand mask;  // broadcast to [B, Hq, L, S]
  mx::Dtype mask_dtype = mx::bool_;
  void* out;
  mx::Dtype out_dtype = mx::float32;
  const float* packed;  // null: direct scores
  std::int64_t panels;  // packed panels a K/V head
  std::int64_t tiles, splits;
  float* partial;  // splits > 1: [B * Hkv][splits][R][2 + Dv]
};

struct Tile {
  std::vector<float> qt, acc, m, l;
  float scores[kTileRows * kBlockKeys];
  float corr[kTileRows];
  const float* rows[kBlockKeys];
  explicit Tile(const Job& job)
      : qt(static_cast<std::size_t>(kTileRows) * job.dkp), acc(static_cast<std::size_t>(kTileRows) * job.dvp),
        m(kTileRows), l(kTileRows) {}
};

// Query row r of K/V head (b, hkv) is query head hkv * G + r % G at position r / G, so
// a tile's rows share few positions (one causal limit a position).
inline std::int64_t head_of(const Job& job, std::int64_t hkv, std::int64_t r) { return hkv * job.G + r % job.G; }
inline std::int64_t position_of(const Job& job, std::int64_t r) { return r / job.G; }

// Rows [r0, r0 + nr) of K/V head (b, hkv) over keys [k0, k1): t.m, t.l and t.acc (the
// running max, the sum of weights, and the weighted sum of v rows, unnormalized).
void run_tile(const Job& job, const Kernels& kern, std::int64_t b, std::int64_t hkv, std::int64_t r0, int nr,
              std::int64_t k0, std::int64_t k1, Tile& t) {
  std::fill(t.qt.begin(), t.qt.end(), 0.0f);
  std::fill(t.acc.begin(), t.acc.end(), 0.0f);
  const auto& qs = job.q.strides;
  for (int i = 0; i < nr; ++i) {
    const std::int64_t r = r0 + i;
    const std::int64_t base = b * qs[0] + head_of(job, hkv, r) * qs[1] + position_of(job, r) * qs[2];
    // scale * q rounded to float32 first, as MLX's composition scales the queries.
    float* qt = t.qt.data() + i * job.dkp;
    if (job.q_dtype == mx::float32 && (job.Dk <= 1 || qs[3] == 1)) {
      const float* q = reinterpret_cast<const float*>(job.q.data) + base;
      for (std::int64_t d = 0; d < job.Dk; ++d) qt[d] = job.scale * q[d];
    } else {
      for (std::int64_t d = 0; d < job.Dk; ++d) qt[d] = job.scale * load_at(job.q.data, job.q_dtype, base + d * qs[3]);
    }
    t.m[i] = kNegInf;
    t.l[i] = 0.0f;
  }
  const std::int64_t shift = job.S - job.L;  // causal: key c is seen by position l iff c <= l + shift
  std::int64_t unmasked_end = k1;            // keys below it are seen by every row of the tile
  if (job.mode == MaskMode::causal) {
    k1 = std::min(k1, position_of(job, r0 + nr - 1) + shift + 1);
    unmasked_end = position_of(job, r0) + shift + 1;
  }
  const int dk = static_cast<int>(job.Dk), dv = static_cast<int>(job.Dv);
  for (std::int64_t c0 = k0; c0 < k1; c0 += kBlockKeys) {
    const int nc = static_cast<int>(std::min<std::int64_t>(kBlockKeys, k1 - c0));
    if (job.packed) {
      const float* panels = job.packed + ((b * job.Hkv + hkv) * job.panels + c0 / kPanelKeys) * job.Dk * kPanelKeys;
      kern.scores_packed(t.qt.data(), nr, job.dkp, dk, panels, (nc + kPanelKeys - 1) / kPanelKeys, t.scores);
    } else {
      for (int j = 0; j < nc; ++j) t.rows[j] = job.k.row(b, hkv, c0 + j);
      kern.scores_direct(t.qt.data(), nr, job.dkp, dk, t.rows, nc, t.scores);
    }
    for (int i = 0; i < nr; ++i) {
      float* s = t.scores + i * kBlockKeys;
      std::fill(s + nc, s + kBlockKeys, kNegInf);
      const std::int64_t r = r0 + i;
      if (job.mode == MaskMode::causal) {
        if (c0 + nc > unmasked_end) {
          const std::int64_t limit = position_of(job, r) + shift;
          for (int j = static_cast<int>(std::max<std::int64_t>(0, limit + 1 - c0)); j < nc; ++j) s[j] = kNegInf;
        }
      } else if (job.mode != MaskMode::none) {
        const auto& ms = job.mask.strides;
        const std::int64_t base = b * ms[0] + head_of(job, hkv, r) * ms[1] + position_of(job, r) * ms[2] + c0 * ms[3];
        if (job.mode == MaskMode::boolean) {
          const auto* keep = reinterpret_cast<const bool*>(job.mask.data);
          for (int j = 0; j < nc; ++j) {
            if (!keep[base + j * ms[3]]) s[j] = kNegInf;
          }
        } else if (job.mask_dtype == mx::float32) {
          const auto* add = reinterpret_cast<const float*>(job.mask.data) + base;
          for (int j = 0; j < nc; ++j) s[j] += add[j * ms[3]];
        } else {
          for (int j = 0; j < nc; ++j) s[j] += load_at(job.mask.data, job.mask_dtype, base + j * ms[3]);
        }
      }
    }
    kern.softmax(t.scores, nr, t.m.data(), t.l.data(), t.corr);
    for (int j = 0; j < nc; ++j) t.rows[j] = job.v.row(b, hkv, c0 + j);
    kern.pv(t.scores, nr, t.rows, nc, t.acc.data(), job.dvp, dv, t.corr);
  }
}

void write_row(const Job& job, std::int64_t b, std::int64_t h, std::int64_t l, const float* values, float divisor) {
  const std::size_t at = static_cast<std::size_t>(((b * job.Hq + h) * job.L + l) * job.Dv);
  if (job.out_dtype == mx::float32) {
    float* out = static_cast<float*>(job.out) + at;
    for (std::int64_t d = 0; d < job.Dv; ++d) out[d] = values[d] / divisor;
  } else {
    for (std::int64_t d = 0; d < job.Dv; ++d) store_float(job.out, job.out_dtype, at + d, values[d] / divisor);
  }
}

// A row that sees no key: MLX's composition puts one lowest float on every masked
// score (bool masks, causal), so its weights are uniform and it averages v; an
// additive mask of -inf (or no mask with -inf scores) gives NaN. No keys at all: 0.
void write_unseen_row(const Job& job, std::int64_t b, std::int64_t hkv, std::int64_t r, std::vector<float>& sum) {
  const std::int64_t h = head_of(job, hkv, r), l = position_of(job, r);
  sum.assign(job.Dv, 0.0f);
  if (job.S == 0) return write_row(job, b, h, l, sum.data(), 1.0f);
  if (job.mode == MaskMode::additive || job.mode == MaskMode::none) {
    sum.assign(job.Dv, std::numeric_limits<float>::quiet_NaN());
    return write_row(job, b, h, l, sum.data(), 1.0f);
  }
  for (std::int64_t c = 0; c < job.S; ++c) {
    const float* v = job.v.row(b, hkv, c);
    for (std::int64_t d = 0; d < job.Dv; ++d) sum[d] += v[d];
  }
  write_row(job, b, h, l, sum.data(), static_cast<float>(job.S));
}

void run_chunk(const Job& job, const Kernels& kern, std::size_t chunk) {
  const std::int64_t split = static_cast<std::int64_t>(chunk) % job.splits;
  const std::int64_t tile = static_cast<std::int64_t>(chunk) / job.splits % job.tiles;
  const std::int64_t group = static_cast<std::int64_t>(chunk) / job.splits / job.tiles;
  const std::int64_t b = group / job.Hkv, hkv = group % job.Hkv;
  const std::int64_t r0 = tile * kTileRows;
  const int nr = static_cast<int>(std::min<std::int64_t>(kTileRows, job.R - r0));
  const std::int64_t k0 = job.splits > 1 ? split * kSplitKeys : 0;
  const std::int64_t k1 = job.splits > 1 ? std::min(job.S, k0 + kSplitKeys) : job.S;
  Tile t(job);
  run_tile(job, kern, b, hkv, r0, nr, k0, k1, t);
  if (job.splits > 1) {
    for (int i = 0; i < nr; ++i) {
      float* part = job.partial + ((group * job.splits + split) * job.R + r0 + i) * (2 + job.Dv);
      part[0] = t.m[i];
      part[1] = t.l[i];
      std::copy(t.acc.begin() + i * job.dvp, t.acc.begin() + i * job.dvp + job.Dv, part + 2);
    }
    return;
  }
  std::vector<float> sum;
  for (int i = 0; i < nr; ++i) {
    if (t.m[i] == kNegInf) {
      write_unseen_row(job, b, hkv, r0 + i, sum);
    } else {
      write_row(job, b, head_of(job, hkv, r0 + i), position_of(job, r0 + i), t.acc.data() + i * job.dvp, t.l[i]);
    }
  }
}

// The partials of K/V head `group`'s rows, in block order.
void combine(const Job& job, std::int64_t group) {
  const std::int64_t b = group / job.Hkv, hkv = group % job.Hkv;
  const std::int64_t stride = 2 + job.Dv;
  std::vector<float> acc(job.Dv);
  for (std::int64_t r = 0; r < job.R; ++r) {
    const float* first = job.partial + (group * job.splits * job.R + r) * stride;
    float m = kNegInf;
    for (std::int64_t s = 0; s < job.splits; ++s) {
      const float ms = first[s * job.R * stride];
      m = (ms > m || ms != ms) ? ms : m;
    }
    if (m == kNegInf) {
      write_unseen_row(job, b, hkv, r, acc);
      continue;
    }
    std::fill(acc.begin(), acc.end(), 0.0f);
    float l = 0.0f;
    for (std::int64_t s = 0; s < job.splits; ++s) {
      const float* part = first + s * job.R * stride;
      if (part[0] == kNegInf) continue;  // saw no key: adds nothing
      const float w = std::exp(part[0] - m);
      l += w * part[1];
      for (std::int64_t d = 0; d < job.Dv; ++d) acc[d] += w * part[2 + d];
    }
    write_row(job, b, head_of(job, hkv, r), position_of(job, r), acc.data(), l);
  }
}

// K of head `group`, keys of panels [p0, p1), into panels of [D][16] (zeros past S).
void pack_panels(const Job& job, std::int64_t group, std::int64_t p0, std::int64_t p1, float* packed) {
  const std::int64_t b = group / job.Hkv, hkv = group % job.Hkv;
  for (std::int64_t p = p0; p < p1; ++p) {
    float* panel = packed + (group * job.panels + p) * job.Dk * kPanelKeys;
    for (int j = 0; j < kPanelKeys; ++j) {
      const std::int64_t c = p * kPanelKeys + j;
      if (c < job.S) {
        const float* k = job.k.row(b, hkv, c);
        for (std::int64_t d = 0; d < job.Dk; ++d) panel[d * kPanelKeys + j] = k[d];
      } else {
        for (std::int64_t d = 0; d < job.Dk; ++d) panel[d * kPanelKeys + j] = 0.0f;
      }
    }
  }
}

void run_job(Job job) {
  const Kernels& kern = kernels_for(host_isa());
  job.tiles = (job.R + kTileRows - 1) / kTileRows;
  const std::int64_t groups = job.B * job.Hkv;
  const bool decode = job.R <= kDecodeRows;
  job.splits = decode ? std::max<std::int64_t>(1, (job.S + kSplitKeys - 1) / kSplitKeys) : 1;
  std::vector<float> packed, partial;
  if (!decode) {
    constexpr std::int64_t kPackPanels = 16;
    job.panels = (job.S + kPanelKeys - 1) / kPanelKeys;
    packed.resize(static_cast<std::size_t>(groups * job.panels * job.Dk * kPanelKeys));
    const std::int64_t per_group = (job.panels + kPackPanels - 1) / kPackPanels;
    parallel_for(static_cast<std::size_t>(groups * per_group), [&](std::size_t chunk) {
      const std::int64_t group = static_cast<std::int64_t>(chunk) / per_group;
      const std::int64_t p0 = static_cast<std::int64_t>(chunk) % per_group * kPackPanels;
      pack_panels(job, group, p0, std::min(job.panels, p0 + kPackPanels), packed.data());
    });
    job.packed = packed.data();
  }
  if (job.splits > 1) {
    partial.resize(static_cast<std::size_t>(groups * job.splits * job.R * (2 + job.Dv)));
    job.partial = partial.data();
  }
  parallel_for(static_cast<std::size_t>(groups * job.tiles * job.splits),
               [&](std::size_t chunk) { run_chunk(job, kern, chunk); });
  if (job.splits > 1) {
    parallel_for(static_cast<std::size_t>(groups), [&](std::size_t group) { combine(job, static_cast<std::int64_t>(group)); });
  }
}

// ----------------------------------------------------------------------------- the primitive

class Attention : public mx::UnaryPrimitive {
 public:
  Attention(mx::Stream stream, float scale, MaskMode mode) : mx::UnaryPrimitive(stream), scale_(scale), mode_(mode) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (const auto& input : inputs) encoder.set_input_array(input);
    encoder.set_output_array(out);
    const mx::array& q = inputs[0];
    const mx::array& k = inputs[1];
    const mx::array& v = inputs[2];
    Job job{};
    job.B = q.shape(0);
    job.Hq = q.shape(1);
    job.L = q.shape(2);
    job.Dk = q.shape(3);
    job.Hkv = k.shape(1);
    job.S = k.shape(2);
    job.Dv = v.shape(3);
    job.G = job.Hq / job.Hkv;
    job.R = job.G * job.L;
    job.dkp = static_cast<int>((job.Dk + 15) / 16 * 16);
    job.dvp = static_cast<int>((job.Dv + 15) / 16 * 16);
    job.scale = scale_;
    job.mode = mode_;
    job.q = operand(q);
    job.q_dtype = q.dtype();
    job.out = out.data<void>();
    job.out_dtype = out.dtype();
    if (inputs.size() > 3) {
      job.mask = operand(inputs[3]);
      job.mask_dtype = inputs[3].dtype();
    }
    if (out.size() == 0) return;
    encoder.dispatch([job, k_operand = operand(k), k_dtype = k.dtype(), v_operand = operand(v),
                      v_dtype = v.dtype()]() mutable {
      std::vector<float> k_scratch, v_scratch;
      job.k = float_rows(k_operand, k_dtype, k_scratch);
      job.v = float_rows(v_operand, v_dtype, v_scratch);
      run_job(job);
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native.attention runs on the CPU only");
  }

  const char* name() const override { return "MlxirAttention"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    const auto* o = dynamic_cast<const Attention*>(&other);
    return o && o->scale_ == scale_ && o->mode_ == mode_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {{inputs[0].shape(0), inputs[0].shape(1), inputs[0].shape(2), inputs[2].shape(3)}};
  }

 private:
  float scale_;
  MaskMode mode_;
};

using Mask = std::variant<std::monostate, std::string, mx::array>;

mx::array attention(const mx::array& q, const mx::array& k, const mx::array& v, float scale, const Mask& mask,
                    mx::StreamOrDevice s) {
  constexpr const char* op = "attention";
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) refuse(op, "q, k and v must be rank 4 ([B, H, L, D])");
  if (!is_float_type(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
    refuse(op, "q, k and v must share one dtype of float32, float16 or bfloat16");
  }
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0) || k.shape(1) != v.shape(1) ||
      k.shape(2) != v.shape(2) || k.shape(3) != q.shape(3)) {
    refuse(op, "k must be [B, Hkv, S, D] for q [B, Hq, L, D], and v [B, Hkv, S, Dv]");
  }
  if (k.shape(1) == 0 || q.shape(1) % k.shape(1) != 0) refuse(op, "the query heads must be a multiple of the K/V heads");
  std::vector<mx::array> inputs{q, k, v};
  MaskMode mode = MaskMode::none;
  auto stream = mx::to_stream(s, mx::Device::cpu);
  if (const auto* name = std::get_if<std::string>(&mask)) {
    if (*name != "causal") refuse(op, "a mask given by name must be \"causal\"");
    mode = MaskMode::causal;
  } else if (const auto* array = std::get_if<mx::array>(&mask)) {
    if (array->dtype() != mx::bool_ && !is_float_type(array->dtype())) {
      refuse(op, "a mask must be bool (keeps True) or float32/float16/bfloat16 (added)");
    }
    const mx::Shape target{q.shape(0), q.shape(1), q.shape(2), k.shape(2)};
    bool fits = array->ndim() <= 4;
    for (int i = 1; fits && i <= static_cast<int>(array->ndim()); ++i) {
      const int size = array->shape(-i);
      fits = size == 1 || size == target[4 - i];
    }
    if (!fits) refuse(op, "the mask must broadcast to [B, Hq, L, S]");
    mode = array->dtype() == mx::bool_ ? MaskMode::boolean : MaskMode::additive;
    inputs.push_back(mx::broadcast_to(*array, target, stream));
  }
  mx::Shape shape{q.shape(0), q.shape(1), q.shape(2), v.shape(3)};
  return mx::array(shape, q.dtype(), std::make_shared<Attention>(stream, scale, mode), std::move(inputs));
}

void bind(nb::module_& m) {
  m.def("attention", &attention, "q"_a, "k"_a, "v"_a, nb::kw_only(), "scale"_a, "mask"_a = nb::none(),
        "stream"_a = nb::none(),
        "mx.fast.scaled_dot_product_attention's values for q [B, Hq, L, D], k and v [B, Hkv, S, D]: mask None, "
        "\"causal\" (aligned to the end of the keys), a bool array (keeps True) or a float array (added), "
        "broadcast to [B, Hq, L, S]; computed in float32.");
}

} // namespace

MLXIR_KERNEL_FAMILY(attention, "attention in one pass, an online softmax (mlx.fast.scaled_dot_product_attention)",
                    bind);

} // namespace mlxir::native
