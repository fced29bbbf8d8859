// Products by a weight in MLX's affine quantized format: out = x @ dequantize(w).T, with
// w [N, K * bits / 32] uint32 (codes of 2, 3, 4, 6 or 8 bits; 3 and 6 bits packed in
// 3-byte runs of 8 and 4 codes), scales and biases [N, K / group_size], and every sum in
// float32 (what mx.quantized_matmul(..., transpose=True, mode="affine") means).
//
// Every path reads the codes a "pack" at a time (the codes of one 32-bit word, or of one
// 3-byte run) into 32-bit lanes, 16 packs to a block, and shifts code c of every lane
// out at once. The lanes of a block hold codes that are far apart in K, so x is laid
// out once per call in the same order (`lay_out`): no code ever moves between lanes.
//
// - Few rows of x (a decode step): its time is reading w once. Each weight row's block
//   is a sum of code * x per lane, scaled by the lane's group scale; the biases add
//   bias * sum(x) per group (x's sums precomputed with the layout). 8 weight rows at a
//   time (AVX2: 4) with a software prefetch that many rows ahead.
// - From kTileFromRows rows: a tile of weight rows is dequantized (in the same order)
//   into a buffer that stays in cache, never the whole weight, then multiplied by the
//   rows of x: as dot products of 4 x rows by 6 weight rows held in registers, or
//   (AVX-512, from kPanelFromRows rows) as panels of 32 x rows times broadcast weights.
//
// The pool splits the weight rows (and, for many rows, x's rows) into chunks fixed by
// the shape, and each output is one loop whose order depends on the shape alone, so
// results never depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

constexpr std::size_t kLanes = 16;  // packs per block, whatever the instruction set
// From this many rows of x on, dequantizing a tile and multiplying it beats decoding
// the codes again for every row (they tie at 4 rows by 3072 x 1024, 4 bits: 0.76 ms).
constexpr std::size_t kTileFromRows = 4;
constexpr std::size_t kDecodeChunkRows = 64;   // weight rows per pool chunk
constexpr std::size_t kTileChunkXRows = 256;   // x rows per pool chunk of the tile path
constexpr std::size_t kTileBytes = 512 * 1024; // one thread's dequantized tile
constexpr std::size_t kPanel = 32;             // x rows side by side (AVX-512 tile path)
// From this many rows of x on, the AVX-512 tile path multiplies panels of x rows by
// broadcast weights (no sum across lanes, x read from L1); below, a panel would be
// mostly padding and dot products of 4 x rows by 6 weight rows are faster (measured:
// they tie at 24 rows by 3072 x 1024; 8 rows 0.86 against 1.14 ms, 64 rows 4.3
// against 3.7).
constexpr std::size_t kPanelFromRows = 32;

template <int Bits>
struct Packing {
  static constexpr int codes = Bits == 3 ? 8 : Bits == 6 ? 4 : 32 / Bits;
  static constexpr int bytes = Bits == 3 || Bits == 6 ? 3 : 4;
  static constexpr std::uint32_t mask = (1u << Bits) - 1;
};

int codes_per_pack(int bits) { return bits == 3 ? 8 : bits == 6 ? 4 : 32 / bits; }
int bytes_per_pack(int bits) { return bits == 3 || bits == 6 ? 3 : 4; }

// The scales' and biases' element type (the two may differ).
enum class Real { f32, f16, bf16 };

Real real_of(mx::Dtype dtype) {
  return dtype == mx::float32 ? Real::f32 : dtype == mx::float16 ? Real::f16 : Real::bf16;
}

template <Real R>
inline float real_at(const void* base, std::size_t i) {
  if constexpr (R == Real::f32) {
    return static_cast<const float*>(base)[i];
  } else if constexpr (R == Real::f16) {
    return half_to_float(static_cast<const std::uint16_t*>(base)[i]);
  } else {
    return bfloat_to_float(static_cast<const std::uint16_t*>(base)[i]);
  }
}

// One call's shapes.
struct Problem {
  int bits;
  std::size_t rows;     // M, rows of x
  std::size_t outputs;  // N, rows of w
  std::size_t depth;    // K
  std::size_t packs;    // per weight row
  std::size_t blocks;   // ceil(packs / kLanes)
  std::size_t padded;   // floats per row of the laid-out x (blocks * kLanes * codes)
  // Floats from one laid-out row to the next: a power-of-two stride would put the same
  // offset of every row the tile kernel reads at once into one L1 set.
  std::size_t stride;
  std::size_t groups;   // per weight row
  std::size_t row_bytes;
  std::size_t lanes_per_group;  // packs per group: 2 to 32
  std::size_t tile_rows;        // weight rows per tile (a multiple of every NR)
};

struct Data {
  const std::uint8_t* w;
  const void* scales;
  const void* biases;
  const float* x;      // laid out: rows x stride
  const float* x_sums; // per pack: rows x (blocks * kLanes)
  const float* x_group_sums;  // per group: rows x groups
  const float* x_panels;  // the AVX-512 tile path's x (`lay_out_panels`), else null
  float* out;          // rows x outputs
  // Integer activations (activation_bits 8, the integer paths), else null:
  const std::int8_t* q;          // x's int8 values in the byte layout (`lay_out_bytes`)
  const std::int8_t* q_natural;  // the same values in x's order: rows x depth
  const float* q_lane_scales;    // per lane: x's scale of the lane's group (rows x blocks * kLanes)
  const float* q_group_scales;   // per group: rows x groups
};

// Row m of x in the kernels' order: block b, code c, lane p holds
// x[m][(b * kLanes + p) * codes + c] (zero past K), and x_sums the sum of each pack's x.
void lay_out(const float* x, const Problem& problem, int codes, float* laid, float* sums) {
  for (std::size_t m = 0; m < problem.rows; ++m) {
    const float* row = x + m * problem.depth;
    float* out = laid + m * problem.stride;
    float* sum = sums + m * problem.blocks * kLanes;
    for (std::size_t b = 0; b < problem.blocks; ++b) {
      for (std::size_t p = 0; p < kLanes; ++p) {
        const std::size_t pack = b * kLanes + p;
        float total = 0;
        for (int c = 0; c < codes; ++c) {
          const std::size_t k = pack * codes + c;
          const float value = pack < problem.packs ? row[k] : 0.0f;
          out[(b * codes + c) * kLanes + p] = value;
          total += value;
        }
        sum[pack] = total;
      }
    }
  }
}

// The sum of each group's x values, per row.
void group_sums_of(const float* x, const Problem& problem, float* sums) {
  const std::size_t group_size = problem.depth / problem.groups;
  for (std::size_t m = 0; m < problem.rows; ++m) {
    for (std::size_t g = 0; g < problem.groups; ++g) {
      const float* values = x + m * problem.depth + g * group_size;
      float total = 0;
      for (std::size_t k = 0; k < group_size; ++k) total += values[k];
      sums[m * problem.groups + g] = total;
    }
  }
}

// The laid-out rows of x in panels of kPanel rows: panel q holds, for each position of
// the layout, its rows' values side by side (zeros past the last row).
void lay_out_panels(const float* laid, const Problem& problem, float* panels) {
  const std::size_t count = (problem.rows + kPanel - 1) / kPanel;
  for (std::size_t q = 0; q < count; ++q) {
    float* panel = panels + q * problem.padded * kPanel;
    for (std::size_t r = 0; r < kPanel; ++r) {
      const std::size_t m = q * kPanel + r;
      const float* row = laid + m * problem.stride;
      for (std::size_t k = 0; k < problem.padded; ++k) panel[k * kPanel + r] = m < problem.rows ? row[k] : 0.0f;
    }
  }
}

// The pack of a row at index `pack`, its codes from bit 0 up.
template <int Bits>
inline std::uint32_t pack_at(const std::uint8_t* row, std::size_t pack) {
  const std::uint8_t* at = row + pack * Packing<Bits>::bytes;
  if constexpr (Packing<Bits>::bytes == 4) {
    std::uint32_t word;
    std::memcpy(&word, at, 4);
    return word;
  } else {
    return at[0] | (static_cast<std::uint32_t>(at[1]) << 8) | (static_cast<std::uint32_t>(at[2]) << 16);
  }
}

// ---------------------------------------------------------------------------------
// Portable: each weight row dequantized into the layout's order, then a dot product
// with 16 lanes per x row (the same for few and many rows).

template <int Bits, Real S, Real B>
void dequantize_row_portable(const Problem& problem, const Data& data, std::size_t n, float* row_out) {
  constexpr int codes = Packing<Bits>::codes;
  const std::uint8_t* row = data.w + n * problem.row_bytes;
  for (std::size_t b = 0; b < problem.blocks; ++b) {
    for (std::size_t p = 0; p < kLanes; ++p) {
      const std::size_t pack = b * kLanes + p;
      float scale = 0, bias = 0;
      std::uint32_t bits = 0;
      if (pack < problem.packs) {
        const std::size_t group = n * problem.groups + pack / problem.lanes_per_group;
        scale = real_at<S>(data.scales, group);
        bias = real_at<B>(data.biases, group);
        bits = pack_at<Bits>(row, pack);
      }
      for (int c = 0; c < codes; ++c) {
        const float code = static_cast<float>((bits >> (c * Bits)) & Packing<Bits>::mask);
        row_out[(b * codes + c) * kLanes + p] = code * scale + bias;
      }
    }
  }
}

float dot_portable(const float* x, const float* w, std::size_t depth) {
  float lanes[kLanes] = {};
  for (std::size_t k = 0; k < depth; k += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += x[k + l] * w[k + l];
  }
  float total = 0;
  for (std::size_t l = 0; l < kLanes; ++l) total += lanes[l];
  return total;
}

template <int Bits, Real S, Real B>
void rows_portable(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                   std::size_t m_begin, std::size_t m_end) {
  thread_local std::vector<float> row;
  row.resize(problem.padded);
  for (std::size_t n = begin; n < end; ++n) {
    dequantize_row_portable<Bits, S, B>(problem, data, n, row.data());
    for (std::size_t m = m_begin; m < m_end; ++m) {
      data.out[m * problem.outputs + n] = dot_portable(data.x + m * problem.stride, row.data(), problem.padded);
    }
  }
}

// ---------------------------------------------------------------------------------
// Integer activations (`activation_bits`, mlx.quantized_matmul's approximate mode): x is
// quantized per group of the weight's, q = clip(round(x / s), -L, L) with s = max|x_g| / L
// (L = 127 or 32767, rounding half to even as `nearbyint` does by default and MLX's round
// does), so that x' = q * s is the generic kernel's (evaluator/linalg.py) to the bit.
//
// For 8 bits and fewer than kTileFromRows rows, codes of 2, 4 and 8 bits are multiplied
// by q as integers: per group, s_w * s_x * sum(code * q) + b_w * s_x * sum(q), every sum
// exact in int32 and only the combination in float32, so the result is the generic
// composition's within float32 rounding. Other calls (16 bits, 3 and 6 bits, many rows,
// AVX2 or AVX-512 without VNNI on 8-bit codes, whose byte products overflow vpmaddubsw's
// int16 sums) run the exact kernel on x' itself: the same meaning.

// x quantized; `q` (x's order) may be null. `prime` gets x' = q * s, `group_scales` s.
void quantize_activations(const float* x, const Problem& problem, int activation_bits, std::int8_t* q,
                          float* prime, float* group_scales) {
  const float limit = static_cast<float>((1 << (activation_bits - 1)) - 1);
  const std::size_t group_size = problem.depth / problem.groups;
  for (std::size_t m = 0; m < problem.rows; ++m) {
    for (std::size_t g = 0; g < problem.groups; ++g) {
      const std::size_t at = m * problem.depth + g * group_size;
      float largest = 0;
      for (std::size_t k = 0; k < group_size; ++k) largest = std::max(largest, std::fabs(x[at + k]));
      const float scale = largest / limit;
      group_scales[m * problem.groups + g] = scale;
      for (std::size_t k = 0; k < group_size; ++k) {
        // `scale > 0` is false for NaN too: MLX's where takes 0 there as well.
        const float level = scale > 0 ? std::clamp(std::nearbyint(x[at + k] / scale), -limit, limit) : 0.0f;
        if (q) q[at + k] = static_cast<std::int8_t>(level);
        prime[at + k] = level * scale;
      }
    }
  }
}

// Row m of q in the integer kernels' byte layout: for block b (64 bytes of a weight row,
// its 16 packs) and code c of each byte (8 / Bits codes to a byte), 64 values, byte j
// holding q[(b * 64 + j) * (8 / Bits) + c] (zero past K). A byte-wise dot product of a
// block's codes (shifted by c * Bits) with it sums, per 32-bit lane, one pack's codes
// times their x: the lane order of the float kernels. `lane_scales` get each lane's
// group scale (zero past the row).
void lay_out_bytes(const std::int8_t* q, const float* group_scales, const Problem& problem, std::int8_t* laid,
                   float* lane_scales) {
  const int per_byte = 8 / problem.bits;
  const std::size_t per_row = problem.blocks * per_byte * 64;
  for (std::size_t m = 0; m < problem.rows; ++m) {
    const std::int8_t* row = q + m * problem.depth;
    std::int8_t* out = laid + m * per_row;
    for (std::size_t b = 0; b < problem.blocks; ++b) {
      for (int c = 0; c < per_byte; ++c) {
        for (std::size_t j = 0; j < 64; ++j) {
          const std::size_t k = (b * 64 + j) * per_byte + c;
          out[(b * per_byte + c) * 64 + j] = k < problem.depth ? row[k] : 0;
        }
      }
      for (std::size_t p = 0; p < kLanes; ++p) {
        const std::size_t pack = b * kLanes + p;
        lane_scales[(m * problem.blocks + b) * kLanes + p] =
            pack < problem.packs ? group_scales[m * problem.groups + pack / problem.lanes_per_group] : 0.0f;
      }
    }
  }
}

// The biases' part of an integer product: sum over groups of b_w * sum(x'), x' = q * s_x
// (x_group_sums, summed from x' in float32 as for the exact kernel).
template <Real B>
float biases_part(const Problem& problem, const Data& data, std::size_t n, std::size_t m) {
  float total = 0;
  for (std::size_t g = 0; g < problem.groups; ++g) {
    total += real_at<B>(data.biases, n * problem.groups + g) * data.x_group_sums[m * problem.groups + g];
  }
  return total;
}

template <int Bits, Real S, Real B>
void int_rows_portable(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                       std::size_t m_begin, std::size_t m_end) {
  const std::size_t group_size = problem.depth / problem.groups;
  for (std::size_t n = begin; n < end; ++n) {
    const std::uint8_t* row = data.w + n * problem.row_bytes;
    for (std::size_t m = m_begin; m < m_end; ++m) {
      const std::int8_t* q = data.q_natural + m * problem.depth;
      float total = 0;
      for (std::size_t g = 0; g < problem.groups; ++g) {
        std::int32_t dot = 0;
        for (std::size_t k = g * group_size; k < (g + 1) * group_size; ++k) {
          const int code = (row[k * Bits / 8] >> (k * Bits % 8)) & Packing<Bits>::mask;
          dot += code * q[k];
        }
        total += real_at<S>(data.scales, n * problem.groups + g) * data.q_group_scales[m * problem.groups + g] *
                 static_cast<float>(dot);
      }
      data.out[m * problem.outputs + n] = total + biases_part<B>(problem, data, n, m);
    }
  }
}

#if MLXIR_X86

// ---------------------------------------------------------------------------------
// AVX-512

// A scale or bias as float, float16 converted by the F16C instruction (both x86 paths).
template <Real R>
MLXIR_AVX2 inline float real_f16c(const void* base, std::size_t i) {
  if constexpr (R == Real::f16) {
    return _cvtsh_ss(static_cast<const std::uint16_t*>(base)[i]);
  } else {
    return real_at<R>(base, i);
  }
}


// 16 packs from `at`, `valid` of them (a row's last block may hold fewer); nothing past
// them is read (masked loads do not fault).
template <int Bits>
MLXIR_AVX512 inline __m512i packs_avx512(const std::uint8_t* at, std::size_t valid) {
  if constexpr (Packing<Bits>::bytes == 4) {
    if (valid == kLanes) return _mm512_loadu_si512(at);
    return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << valid) - 1), at);
  } else {
    // Runs of 3 bytes: a row's packs come in fours (K is a multiple of 32), so the valid
    // bytes are whole dwords. Each 128-bit lane takes 12 bytes, then each dword 3.
    const std::size_t dwords = valid * 3 / 4;
    const __m512i raw = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << dwords) - 1), at);
    const __m512i spread = _mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0);
    const __m512i runs = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 1, 2, -128, 3, 4, 5, -128, 6, 7, 8, -128, 9, 10, 11, -128));
    return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(spread, raw), runs);
  }
}

// Code c of every lane as float. Codes of up to 4 bits index a table of their values
// (vpermps reads an index's low 4 bits, so neither a mask nor a conversion is needed,
// and the shift and the lookup go to different ports); 8-bit codes are whole bytes,
// moved to their dword by a byte shuffle.
template <int Bits>
MLXIR_AVX512 inline __m512 code_avx512(__m512i packs, int c) {
  const __m512i shifted = c == 0 ? packs : _mm512_srli_epi32(packs, c * Bits);
  if constexpr (Bits <= 4) {
    const __m512 values = Bits == 4 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
                          : Bits == 3 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7)
                                      : _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    return _mm512_permutexvar_ps(shifted, values);
  } else if constexpr (Bits == 8) {
    // Dword j of each 128-bit lane takes byte 4j + c and three zeros (index 0x80).
    const __m512i pick = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(0x80808000u | static_cast<unsigned>(c))),
                                          _mm512_broadcast_i32x4(_mm_setr_epi32(0, 4, 8, 12)));
    return _mm512_cvtepi32_ps(_mm512_shuffle_epi8(packs, pick));
  } else {
    __m512i code = shifted;
    if ((c + 1) * Bits < Packing<Bits>::bytes * 8) code = _mm512_and_si512(code, _mm512_set1_epi32(Packing<Bits>::mask));
    return _mm512_cvtepi32_ps(code);
  }
}

template <Real R>
MLXIR_AVX512 inline __m512 reals_avx512(const void* base, std::size_t at, __mmask16 mask) {
  if constexpr (R == Real::f32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(base) + at);
  } else {
    const __m256i bits = _mm256_maskz_loadu_epi16(mask, static_cast<const std::uint16_t*>(base) + at);
    if constexpr (R == Real::f16) return _mm512_cvtph_ps(bits);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
  }
}

// Where a block's lanes find their group's scale or bias.
struct GroupLanes {
  __m512i lane_group;  // lane p's group, counted from the block's first
  std::size_t per_block;  // groups a block starts in (1 when a group spans blocks)
};

MLXIR_AVX512 inline GroupLanes group_lanes_avx512(const Problem& problem) {
  alignas(64) std::int32_t index[kLanes];
  for (std::size_t p = 0; p < kLanes; ++p) index[p] = static_cast<std::int32_t>(p / problem.lanes_per_group);
  return {_mm512_load_si512(index), std::max<std::size_t>(1, kLanes / problem.lanes_per_group)};
}

// Block b's scale (or bias) per lane, for weight row n; lanes past the row get 0.
template <Real R>
MLXIR_AVX512 inline __m512 per_lane_avx512(const void* base, const Problem& problem, const GroupLanes& lanes,
                                           std::size_t n, std::size_t b) {
  const std::size_t first = b * kLanes / problem.lanes_per_group;
  if (problem.lanes_per_group >= kLanes) return _mm512_set1_ps(real_f16c<R>(base, n * problem.groups + first));
  const std::size_t count = std::min(lanes.per_block, problem.groups - first);
  const __m512 values = reals_avx512<R>(base, n * problem.groups + first, static_cast<__mmask16>((1u << count) - 1));
  return _mm512_permutexvar_ps(lanes.lane_group, values);
}

// Weight rows [n, n + Rows) against x row m: per lane, scale * sum(code * x) plus
// bias * sum(x), one accumulator per weight row.
template <int Bits, Real S, Real B, int Rows>
MLXIR_AVX512 inline void decode_rows_avx512(const Problem& problem, const Data& data, const GroupLanes& lanes,
                                            std::size_t n, std::size_t m, bool prefetch) {
  constexpr int codes = Packing<Bits>::codes;
  constexpr std::size_t block_bytes = kLanes * Packing<Bits>::bytes;
  const float* x = data.x + m * problem.stride;
  __m512 acc[Rows];
  for (int i = 0; i < Rows; ++i) acc[i] = _mm512_setzero_ps();
  for (std::size_t b = 0; b < problem.blocks; ++b) {
    const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
    if (prefetch) {
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* ahead = data.w + (n + Rows + i) * problem.row_bytes + b * block_bytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
      }
    }
    const float* xb = x + b * kLanes * codes;
    for (int i = 0; i < Rows; ++i) {
      const __m512i packs = packs_avx512<Bits>(data.w + (n + i) * problem.row_bytes + b * block_bytes, valid);
      __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int c = 0; c < codes; c += 2) {
        even = _mm512_fmadd_ps(code_avx512<Bits>(packs, c), _mm512_loadu_ps(xb + c * kLanes), even);
        odd = _mm512_fmadd_ps(code_avx512<Bits>(packs, c + 1), _mm512_loadu_ps(xb + (c + 1) * kLanes), odd);
      }
      const __m512 scale = per_lane_avx512<S>(data.scales, problem, lanes, n + i, b);
      acc[i] = _mm512_fmadd_ps(_mm512_add_ps(even, odd), scale, acc[i]);
    }
  }
  // The biases' part, sum over groups of bias * sum(x), once per row rather than per
  // block (a tenth of the work per block, measured).
  const float* group_sums = data.x_group_sums + m * problem.groups;
  for (int i = 0; i < Rows; ++i) {
    __m512 biased = _mm512_setzero_ps();
    for (std::size_t g = 0; g < problem.groups; g += kLanes) {
      const std::size_t count = std::min(kLanes, problem.groups - g);
      const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
      biased = _mm512_fmadd_ps(reals_avx512<B>(data.biases, (n + i) * problem.groups + g, mask),
                               _mm512_maskz_loadu_ps(mask, group_sums + g), biased);
    }
    data.out[m * problem.outputs + n + i] = _mm512_reduce_add_ps(_mm512_add_ps(acc[i], biased));
  }
}

template <int Bits, Real S, Real B>
MLXIR_AVX512 void decode_avx512(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                                std::size_t m_begin, std::size_t m_end) {
  const GroupLanes lanes = group_lanes_avx512(problem);
  std::size_t n = begin;
  for (; n + 8 <= end; n += 8) {
    for (std::size_t m = m_begin; m < m_end; ++m) {
      decode_rows_avx512<Bits, S, B, 8>(problem, data, lanes, n, m, m == m_begin && n + 16 <= problem.outputs);
    }
  }
  for (; n < end; ++n) {
    for (std::size_t m = m_begin; m < m_end; ++m) decode_rows_avx512<Bits, S, B, 1>(problem, data, lanes, n, m, false);
  }
}

template <int Bits, Real S, Real B>
MLXIR_AVX512 void dequantize_rows_avx512(const Problem& problem, const Data& data, std::size_t begin,
                                         std::size_t end, float* tile) {
  constexpr int codes = Packing<Bits>::codes;
  constexpr std::size_t block_bytes = kLanes * Packing<Bits>::bytes;
  const GroupLanes lanes = group_lanes_avx512(problem);
  for (std::size_t n = begin; n < end; ++n) {
    float* out = tile + (n - begin) * problem.stride;
    const std::uint8_t* row = data.w + n * problem.row_bytes;
    for (std::size_t b = 0; b < problem.blocks; ++b) {
      const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
      const __m512i packs = packs_avx512<Bits>(row + b * block_bytes, valid);
      const __m512 scale = per_lane_avx512<S>(data.scales, problem, lanes, n, b);
      const __m512 bias = per_lane_avx512<B>(data.biases, problem, lanes, n, b);
#pragma GCC unroll 16
      for (int c = 0; c < codes; ++c) {
        _mm512_storeu_ps(out + (b * codes + c) * kLanes, _mm512_fmadd_ps(code_avx512<Bits>(packs, c), scale, bias));
      }
    }
  }
}

// MR rows of x by NR rows of the tile, each output a dot product in 16 lanes; rows past
// mr / nr repeat the last (computed, never stored).
template <int MR, int NR>
MLXIR_AVX512 void dot_tile_avx512(const float* x, const float* w, std::size_t depth, std::size_t stride, float* out,
                                  std::size_t out_stride, std::size_t mr, std::size_t nr) {
  const float* xr[MR];
  const float* wr[NR];
  for (int i = 0; i < MR; ++i) xr[i] = x + std::min<std::size_t>(i, mr - 1) * stride;
  for (int j = 0; j < NR; ++j) wr[j] = w + std::min<std::size_t>(j, nr - 1) * stride;
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  // Unrolled in full so that the accumulators live in registers (GCC may otherwise
  // keep them on the stack and loop over them).
  for (std::size_t k = 0; k < depth; k += kLanes) {
    __m512 xv[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) xv[i] = _mm512_loadu_ps(xr[i] + k);
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      const __m512 wv = _mm512_loadu_ps(wr[j] + k);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][j] = _mm512_fmadd_ps(xv[i], wv, acc[i][j]);
    }
  }
  for (std::size_t i = 0; i < mr; ++i) {
    for (std::size_t j = 0; j < nr; ++j) out[i * out_stride + j] = _mm512_reduce_add_ps(acc[i][j]);
  }
}

// One panel of x (its rows side by side, `kPanel` floats per position of the layout)
// by NR rows of the tile: each step broadcasts one weight per row and multiplies it
// into V vectors of 16 x rows, so every output is one chain of fused multiply-adds
// over the layout's positions [k0, k1) and no sum crosses lanes; between blocks of
// positions the sums wait in `partial` (stored and loaded exactly). Rows of the tile past nr repeat
// the last, and x rows past mr (zeros in the panel) are computed, never stored.
template <int V, int NR>
MLXIR_AVX512 void panel_by_rows_avx512(const float* panel, const float* w, std::size_t k0, std::size_t k1,
                                       std::size_t stride, float* partial, bool first, bool last, float* out,
                                       std::size_t out_stride, std::size_t mr, std::size_t nr) {
  const float* wr[NR];
  for (int j = 0; j < NR; ++j) wr[j] = w + std::min<std::size_t>(j, nr - 1) * stride;
  __m512 acc[NR][V];
#pragma GCC unroll 24
  for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[j][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(partial + (j * V + v) * 16);
  }
  for (std::size_t k = k0; k < k1; ++k) {
    __m512 xv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_ps(panel + k * kPanel + v * 16);
#pragma GCC unroll 24
    for (int j = 0; j < NR; ++j) {
      const __m512 weight = _mm512_set1_ps(wr[j][k]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[j][v] = _mm512_fmadd_ps(xv[v], weight, acc[j][v]);
    }
  }
  if (!last) {
#pragma GCC unroll 24
    for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) _mm512_storeu_ps(partial + (j * V + v) * 16, acc[j][v]);
    }
    return;
  }
  alignas(64) float lanes[16];
  for (std::size_t j = 0; j < nr; ++j) {
    for (int v = 0; v < V; ++v) {
      if (static_cast<std::size_t>(v) * 16 >= mr) break;
      _mm512_store_ps(lanes, acc[j][v]);
      const std::size_t count = std::min<std::size_t>(16, mr - v * 16);
      for (std::size_t l = 0; l < count; ++l) out[(v * 16 + l) * out_stride + j] = lanes[l];
    }
  }
}

// Positions of the layout per pass over a panel: 32 x rows of them (16 KB) stay in L1
// while every block of the tile's rows passes (measured against 256 and the whole row:
// 13.5, 14.2 and 15.5 ms for 256 rows by 3072 x 1024).
constexpr std::size_t kDepthBlock = 128;

template <int Bits, Real S, Real B>
MLXIR_AVX512 void tile_avx512(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                              std::size_t m_begin, std::size_t m_end) {
  thread_local std::vector<float> tile, partial;
  tile.resize(problem.tile_rows * problem.stride);
  const std::size_t panels = (m_end - m_begin + kPanel - 1) / kPanel;
  partial.resize(panels * (problem.tile_rows + 24) * kPanel);
  for (std::size_t n0 = begin; n0 < end; n0 += problem.tile_rows) {
    const std::size_t n1 = std::min(end, n0 + problem.tile_rows);
    dequantize_rows_avx512<Bits, S, B>(problem, data, n0, n1, tile.data());
    if (!data.x_panels) {  // fewer than kPanelFromRows rows
      constexpr int MR = 4, NR = 6;
      for (std::size_t m = m_begin; m < m_end; m += MR) {
        const std::size_t mr = std::min<std::size_t>(MR, m_end - m);
        for (std::size_t n = n0; n < n1; n += NR) {
          dot_tile_avx512<MR, NR>(data.x + m * problem.stride, tile.data() + (n - n0) * problem.stride,
                                  problem.padded, problem.stride, data.out + m * problem.outputs + n,
                                  problem.outputs, mr, std::min<std::size_t>(NR, n1 - n));
        }
      }
      continue;
    }
    for (std::size_t k0 = 0; k0 < problem.padded; k0 += kDepthBlock) {
      const std::size_t k1 = std::min(problem.padded, k0 + kDepthBlock);
      const bool first = k0 == 0, last = k1 == problem.padded;
      for (std::size_t m = m_begin; m < m_end; m += kPanel) {
        const std::size_t mr = std::min(kPanel, m_end - m);
        const float* panel = data.x_panels + m / kPanel * problem.padded * kPanel;
        float* part = partial.data() + (m - m_begin) / kPanel * (problem.tile_rows + 24) * kPanel;
        float* out = data.out + m * problem.outputs;
        if (mr > 16) {
          for (std::size_t n = n0; n < n1; n += 12) {
            panel_by_rows_avx512<2, 12>(panel, tile.data() + (n - n0) * problem.stride, k0, k1, problem.stride,
                                        part + (n - n0) * kPanel, first, last, out + n, problem.outputs, mr,
                                        std::min<std::size_t>(12, n1 - n));
          }
        } else {
          for (std::size_t n = n0; n < n1; n += 24) {
            panel_by_rows_avx512<1, 24>(panel, tile.data() + (n - n0) * problem.stride, k0, k1, problem.stride,
                                        part + (n - n0) * kPanel, first, last, out + n, problem.outputs, mr,
                                        std::min<std::size_t>(24, n1 - n));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// AVX2: the same blocks of 16 packs, as two halves of 8 lanes.

template <int Bits>
MLXIR_AVX2 inline __m256i packs_avx2(const std::uint8_t* at, std::size_t valid) {
  if (valid == 0) return _mm256_setzero_si256();
  if constexpr (Packing<Bits>::bytes == 4) {
    if (valid == 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    alignas(32) std::int32_t mask[8];
    for (std::size_t i = 0; i < 8; ++i) mask[i] = i < valid ? -1 : 0;
    return _mm256_maskload_epi32(reinterpret_cast<const int*>(at), _mm256_load_si256(reinterpret_cast<const __m256i*>(mask)));
  } else {
    const std::size_t dwords = valid * 3 / 4;  // whole dwords: packs come in fours
    alignas(32) std::int32_t mask[8];
    for (std::size_t i = 0; i < 8; ++i) mask[i] = i < dwords ? -1 : 0;
    const __m256i raw = _mm256_maskload_epi32(reinterpret_cast<const int*>(at),
                                              _mm256_load_si256(reinterpret_cast<const __m256i*>(mask)));
    const __m256i spread = _mm256_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0);
    const __m256i runs = _mm256_setr_epi8(0, 1, 2, -128, 3, 4, 5, -128, 6, 7, 8, -128, 9, 10, 11, -128,
                                          0, 1, 2, -128, 3, 4, 5, -128, 6, 7, 8, -128, 9, 10, 11, -128);
    return _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(raw, spread), runs);
  }
}

template <int Bits>
MLXIR_AVX2 inline __m256 code_avx2(__m256i packs, int c) {
  __m256i code = _mm256_srli_epi32(packs, c * Bits);
  if ((c + 1) * Bits < Packing<Bits>::bytes * 8) code = _mm256_and_si256(code, _mm256_set1_epi32(Packing<Bits>::mask));
  return _mm256_cvtepi32_ps(code);
}


// Half h of block b's scale (or bias) per lane for weight row n: one group's value
// (groups of 8 lanes or more), else those of the 2 or 4 groups that start in the half;
// lanes past the row's last group get 0.
template <Real R>
MLXIR_AVX2 inline __m256 per_lane_avx2(const void* base, const Problem& problem, std::size_t n, std::size_t b,
                                       std::size_t h) {
  const std::size_t lpg = problem.lanes_per_group;
  const std::size_t first = (b * kLanes + h * 8) / lpg;
  const std::size_t at = n * problem.groups + first;
  if (lpg >= 8) return _mm256_set1_ps(real_f16c<R>(base, at));
  const std::size_t count = std::min<std::size_t>(8 / lpg, problem.groups - first);
  float values[4] = {0, 0, 0, 0};
  for (std::size_t g = 0; g < count; ++g) values[g] = real_f16c<R>(base, at + g);
  const __m256 four = _mm256_castps128_ps256(_mm_loadu_ps(values));
  const __m256i lane_group = lpg == 4 ? _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  return _mm256_permutevar8x32_ps(four, lane_group);
}

MLXIR_AVX2 inline float reduce_avx2(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

template <int Bits, Real S, Real B, int Rows>
MLXIR_AVX2 inline void decode_rows_avx2(const Problem& problem, const Data& data, std::size_t n, std::size_t m,
                                        bool prefetch) {
  constexpr int codes = Packing<Bits>::codes;
  constexpr std::size_t block_bytes = kLanes * Packing<Bits>::bytes;
  const float* x = data.x + m * problem.stride;
  const float* sums = data.x_sums + m * problem.blocks * kLanes;
  __m256 acc[Rows];
  for (int i = 0; i < Rows; ++i) acc[i] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < problem.blocks; ++b) {
    const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
    if (prefetch) {
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* ahead = data.w + (n + Rows + i) * problem.row_bytes + b * block_bytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
      }
    }
    const float* xb = x + b * kLanes * codes;
    for (std::size_t h = 0; h < 2; ++h) {
      const std::size_t half_valid = valid > h * 8 ? std::min<std::size_t>(8, valid - h * 8) : 0;
      if (half_valid == 0) break;
      const __m256 x_sum = _mm256_loadu_ps(sums + b * kLanes + h * 8);
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* row = data.w + (n + i) * problem.row_bytes + b * block_bytes;
        const __m256i packs = packs_avx2<Bits>(row + h * 8 * Packing<Bits>::bytes, half_valid);
        __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
#pragma GCC unroll 16
        for (int c = 0; c < codes; c += 2) {
          even = _mm256_fmadd_ps(code_avx2<Bits>(packs, c), _mm256_loadu_ps(xb + c * kLanes + h * 8), even);
          odd = _mm256_fmadd_ps(code_avx2<Bits>(packs, c + 1), _mm256_loadu_ps(xb + (c + 1) * kLanes + h * 8), odd);
        }
        const __m256 scale = per_lane_avx2<S>(data.scales, problem, n + i, b, h);
        const __m256 bias = per_lane_avx2<B>(data.biases, problem, n + i, b, h);
        acc[i] = _mm256_fmadd_ps(_mm256_add_ps(even, odd), scale, acc[i]);
        acc[i] = _mm256_fmadd_ps(bias, x_sum, acc[i]);
      }
    }
  }
  for (int i = 0; i < Rows; ++i) data.out[m * problem.outputs + n + i] = reduce_avx2(acc[i]);
}

template <int Bits, Real S, Real B>
MLXIR_AVX2 void decode_avx2(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                            std::size_t m_begin, std::size_t m_end) {
  std::size_t n = begin;
  for (; n + 4 <= end; n += 4) {
    for (std::size_t m = m_begin; m < m_end; ++m) {
      decode_rows_avx2<Bits, S, B, 4>(problem, data, n, m, m == m_begin && n + 8 <= problem.outputs);
    }
  }
  for (; n < end; ++n) {
    for (std::size_t m = m_begin; m < m_end; ++m) decode_rows_avx2<Bits, S, B, 1>(problem, data, n, m, false);
  }
}

template <int Bits, Real S, Real B>
MLXIR_AVX2 void dequantize_rows_avx2(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                                     float* tile) {
  constexpr int codes = Packing<Bits>::codes;
  constexpr std::size_t block_bytes = kLanes * Packing<Bits>::bytes;
  for (std::size_t n = begin; n < end; ++n) {
    float* out = tile + (n - begin) * problem.stride;
    const std::uint8_t* row = data.w + n * problem.row_bytes;
    for (std::size_t b = 0; b < problem.blocks; ++b) {
      const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
      for (std::size_t h = 0; h < 2; ++h) {
        const std::size_t half_valid = valid > h * 8 ? std::min<std::size_t>(8, valid - h * 8) : 0;
        const __m256i packs = packs_avx2<Bits>(row + b * block_bytes + h * 8 * Packing<Bits>::bytes, half_valid);
        const __m256 scale = half_valid ? per_lane_avx2<S>(data.scales, problem, n, b, h) : _mm256_setzero_ps();
        const __m256 bias = half_valid ? per_lane_avx2<B>(data.biases, problem, n, b, h) : _mm256_setzero_ps();
#pragma GCC unroll 16
        for (int c = 0; c < codes; ++c) {
          _mm256_storeu_ps(out + (b * codes + c) * kLanes + h * 8, _mm256_fmadd_ps(code_avx2<Bits>(packs, c), scale, bias));
        }
      }
    }
  }
}

template <int MR, int NR>
MLXIR_AVX2 void dot_tile_avx2(const float* x, const float* w, std::size_t depth, std::size_t stride, float* out, std::size_t out_stride,
                              std::size_t mr, std::size_t nr) {
  const float* xr[MR];
  const float* wr[NR];
  for (int i = 0; i < MR; ++i) xr[i] = x + std::min<std::size_t>(i, mr - 1) * stride;
  for (int j = 0; j < NR; ++j) wr[j] = w + std::min<std::size_t>(j, nr - 1) * stride;
  __m256 acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  }
  // Unrolled in full so that the accumulators live in registers.
  for (std::size_t k = 0; k < depth; k += 8) {
    __m256 xv[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) xv[i] = _mm256_loadu_ps(xr[i] + k);
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      const __m256 wv = _mm256_loadu_ps(wr[j] + k);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_fmadd_ps(xv[i], wv, acc[i][j]);
    }
  }
  for (std::size_t i = 0; i < mr; ++i) {
    for (std::size_t j = 0; j < nr; ++j) out[i * out_stride + j] = reduce_avx2(acc[i][j]);
  }
}

template <int Bits, Real S, Real B>
MLXIR_AVX2 void tile_avx2(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                          std::size_t m_begin, std::size_t m_end) {
  constexpr int MR = 3, NR = 4;
  thread_local std::vector<float> tile;
  tile.resize(problem.tile_rows * problem.stride);
  for (std::size_t n0 = begin; n0 < end; n0 += problem.tile_rows) {
    const std::size_t n1 = std::min(end, n0 + problem.tile_rows);
    dequantize_rows_avx2<Bits, S, B>(problem, data, n0, n1, tile.data());
    for (std::size_t m = m_begin; m < m_end; m += MR) {
      const std::size_t mr = std::min<std::size_t>(MR, m_end - m);
      for (std::size_t n = n0; n < n1; n += NR) {
        dot_tile_avx2<MR, NR>(data.x + m * problem.stride, tile.data() + (n - n0) * problem.stride, problem.padded, problem.stride,
                              data.out + m * problem.outputs + n, problem.outputs, mr,
                              std::min<std::size_t>(NR, n1 - n));
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// Integer activations on x86: a block's 64 bytes of codes, shifted and masked per code
// of a byte, times the laid-out q (unsigned codes by signed q), summed per 32-bit lane.

// acc + the byte products of `codes` (unsigned) and `q` (signed), 4 to a 32-bit lane.
// VNNI's vpdpbusd by inline assembly: the function stays compiled for AVX-512 F/BW/DQ/VL,
// so no other instruction of the VNNI set can appear where only this branch is guarded
// by host_avx512vnni(). Without VNNI, vpmaddubsw's pair sums (at most 2 * 15 * 127 for
// 4-bit codes: no saturation) then vpmaddwd by ones.
template <bool Vnni>
MLXIR_AVX512 inline __m512i byte_dot_avx512(__m512i acc, __m512i codes, __m512i q) {
  if constexpr (Vnni) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(codes), "v"(q));
    return acc;
  } else {
    const __m512i pairs = _mm512_maddubs_epi16(codes, q);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
  }
}

template <int Bits, Real S, Real B, int Rows, bool Vnni>
MLXIR_AVX512 inline void int_rows_avx512(const Problem& problem, const Data& data, const GroupLanes& lanes,
                                         std::size_t n, std::size_t m, bool prefetch) {
  constexpr int per_byte = 8 / Bits;
  constexpr std::size_t block_bytes = 64;
  const std::int8_t* q = data.q + m * problem.blocks * per_byte * 64;
  const float* lane_scales = data.q_lane_scales + m * problem.blocks * kLanes;
  __m512 acc[Rows];
  for (int i = 0; i < Rows; ++i) acc[i] = _mm512_setzero_ps();
  for (std::size_t b = 0; b < problem.blocks; ++b) {
    const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
    if (prefetch) {
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* ahead = data.w + (n + Rows + i) * problem.row_bytes + b * block_bytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
      }
    }
    __m512i qv[per_byte];
    for (int c = 0; c < per_byte; ++c) qv[c] = _mm512_loadu_si512(q + (b * per_byte + c) * 64);
    const __m512 x_scale = _mm512_loadu_ps(lane_scales + b * kLanes);
    for (int i = 0; i < Rows; ++i) {
      const __m512i packs = packs_avx512<Bits>(data.w + (n + i) * problem.row_bytes + b * block_bytes, valid);
      __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int c = 0; c < per_byte; ++c) {
        __m512i codes = c == 0 ? packs : _mm512_srli_epi16(packs, c * Bits);
        if constexpr (Bits < 8) codes = _mm512_and_si512(codes, _mm512_set1_epi8(static_cast<char>(Packing<Bits>::mask)));
        dot = byte_dot_avx512<Vnni>(dot, codes, qv[c]);
      }
      const __m512 scale = per_lane_avx512<S>(data.scales, problem, lanes, n + i, b);
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(scale, x_scale), acc[i]);
    }
  }
  const float* group_sums = data.x_group_sums + m * problem.groups;
  for (int i = 0; i < Rows; ++i) {
    __m512 biased = _mm512_setzero_ps();
    for (std::size_t g = 0; g < problem.groups; g += kLanes) {
      const std::size_t count = std::min(kLanes, problem.groups - g);
      const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
      biased = _mm512_fmadd_ps(reals_avx512<B>(data.biases, (n + i) * problem.groups + g, mask),
                               _mm512_maskz_loadu_ps(mask, group_sums + g), biased);
    }
    data.out[m * problem.outputs + n + i] = _mm512_reduce_add_ps(_mm512_add_ps(acc[i], biased));
  }
}

template <int Bits, Real S, Real B, bool Vnni>
MLXIR_AVX512 void int_decode_avx512(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                                    std::size_t m_begin, std::size_t m_end) {
  const GroupLanes lanes = group_lanes_avx512(problem);
  std::size_t n = begin;
  for (; n + 8 <= end; n += 8) {
    for (std::size_t m = m_begin; m < m_end; ++m) {
      int_rows_avx512<Bits, S, B, 8, Vnni>(problem, data, lanes, n, m, m == m_begin && n + 16 <= problem.outputs);
    }
  }
  for (; n < end; ++n) {
    for (std::size_t m = m_begin; m < m_end; ++m) int_rows_avx512<Bits, S, B, 1, Vnni>(problem, data, lanes, n, m, false);
  }
}

// AVX2: a block as two halves of 32 bytes (8 packs), vpmaddubsw then vpmaddwd (codes
// of up to 4 bits).
template <int Bits, Real S, Real B, int Rows>
MLXIR_AVX2 inline void int_rows_avx2(const Problem& problem, const Data& data, std::size_t n, std::size_t m,
                                     bool prefetch) {
  static_assert(Bits <= 4, "vpmaddubsw's int16 pair sums overflow for 8-bit codes");
  constexpr int per_byte = 8 / Bits;
  constexpr std::size_t block_bytes = 64;
  const std::int8_t* q = data.q + m * problem.blocks * per_byte * 64;
  const float* lane_scales = data.q_lane_scales + m * problem.blocks * kLanes;
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i mask = _mm256_set1_epi8(static_cast<char>(Packing<Bits>::mask));
  __m256 acc[Rows];
  for (int i = 0; i < Rows; ++i) acc[i] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < problem.blocks; ++b) {
    const std::size_t valid = std::min(kLanes, problem.packs - b * kLanes);
    if (prefetch) {
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* ahead = data.w + (n + Rows + i) * problem.row_bytes + b * block_bytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
      }
    }
    for (std::size_t h = 0; h < 2; ++h) {
      const std::size_t half_valid = valid > h * 8 ? std::min<std::size_t>(8, valid - h * 8) : 0;
      if (half_valid == 0) break;
      const __m256 x_scale = _mm256_loadu_ps(lane_scales + b * kLanes + h * 8);
      for (int i = 0; i < Rows; ++i) {
        const std::uint8_t* row = data.w + (n + i) * problem.row_bytes + b * block_bytes;
        const __m256i packs = packs_avx2<Bits>(row + h * 32, half_valid);
        __m256i dot = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < per_byte; ++c) {
          const __m256i codes = _mm256_and_si256(c == 0 ? packs : _mm256_srli_epi16(packs, c * Bits), mask);
          const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + (b * per_byte + c) * 64 + h * 32));
          dot = _mm256_add_epi32(dot, _mm256_madd_epi16(_mm256_maddubs_epi16(codes, qv), ones));
        }
        const __m256 scale = per_lane_avx2<S>(data.scales, problem, n + i, b, h);
        acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(scale, x_scale), acc[i]);
      }
    }
  }
  for (int i = 0; i < Rows; ++i) {
    data.out[m * problem.outputs + n + i] = reduce_avx2(acc[i]) + biases_part<B>(problem, data, n + i, m);
  }
}

template <int Bits, Real S, Real B>
MLXIR_AVX2 void int_decode_avx2(const Problem& problem, const Data& data, std::size_t begin, std::size_t end,
                                std::size_t m_begin, std::size_t m_end) {
  std::size_t n = begin;
  for (; n + 4 <= end; n += 4) {
    for (std::size_t m = m_begin; m < m_end; ++m) {
      int_rows_avx2<Bits, S, B, 4>(problem, data, n, m, m == m_begin && n + 8 <= problem.outputs);
    }
  }
  for (; n < end; ++n) {
    for (std::size_t m = m_begin; m < m_end; ++m) int_rows_avx2<Bits, S, B, 1>(problem, data, n, m, false);
  }
}

#endif  // MLXIR_X86

// A kernel for weight rows [begin, end) and x rows [m_begin, m_end).
using RowsKernel = void (*)(const Problem&, const Data&, std::size_t, std::size_t, std::size_t, std::size_t);

template <int Bits, Real S, Real B>
RowsKernel pick_typed(Isa isa, bool tile) {
#if MLXIR_X86
  if (isa == Isa::avx512) return tile ? &tile_avx512<Bits, S, B> : &decode_avx512<Bits, S, B>;
  if (isa == Isa::avx2) return tile ? &tile_avx2<Bits, S, B> : &decode_avx2<Bits, S, B>;
#endif
  return &rows_portable<Bits, S, B>;
}

template <int Bits, Real S>
RowsKernel pick_bias(Real bias, Isa isa, bool tile) {
  switch (bias) {
    case Real::f32: return pick_typed<Bits, S, Real::f32>(isa, tile);
    case Real::f16: return pick_typed<Bits, S, Real::f16>(isa, tile);
    default: return pick_typed<Bits, S, Real::bf16>(isa, tile);
  }
}

template <int Bits>
RowsKernel pick_scale(Real scale, Real bias, Isa isa, bool tile) {
  switch (scale) {
    case Real::f32: return pick_bias<Bits, Real::f32>(bias, isa, tile);
    case Real::f16: return pick_bias<Bits, Real::f16>(bias, isa, tile);
    default: return pick_bias<Bits, Real::bf16>(bias, isa, tile);
  }
}

RowsKernel pick(int bits, Real scale, Real bias, Isa isa, bool tile) {
  switch (bits) {
    case 2: return pick_scale<2>(scale, bias, isa, tile);
    case 3: return pick_scale<3>(scale, bias, isa, tile);
    case 4: return pick_scale<4>(scale, bias, isa, tile);
    case 6: return pick_scale<6>(scale, bias, isa, tile);
    default: return pick_scale<8>(scale, bias, isa, tile);
  }
}

// The integer kernel for 8-bit activations, or null where the exact kernel runs on x'
// (codes of 3 or 6 bits; 8-bit codes without VNNI on x86).
template <int Bits, Real S, Real B>
RowsKernel pick_int_typed(Isa isa, bool vnni) {
#if MLXIR_X86
  if (isa == Isa::avx512 && vnni) return &int_decode_avx512<Bits, S, B, true>;
  if constexpr (Bits <= 4) {
    if (isa == Isa::avx512) return &int_decode_avx512<Bits, S, B, false>;
    if (isa == Isa::avx2) return &int_decode_avx2<Bits, S, B>;
  } else {
    if (isa != Isa::portable) return nullptr;
  }
#endif
  (void)isa;
  (void)vnni;
  return &int_rows_portable<Bits, S, B>;
}

template <int Bits, Real S>
RowsKernel pick_int_bias(Real bias, Isa isa, bool vnni) {
  switch (bias) {
    case Real::f32: return pick_int_typed<Bits, S, Real::f32>(isa, vnni);
    case Real::f16: return pick_int_typed<Bits, S, Real::f16>(isa, vnni);
    default: return pick_int_typed<Bits, S, Real::bf16>(isa, vnni);
  }
}

template <int Bits>
RowsKernel pick_int_scale(Real scale, Real bias, Isa isa, bool vnni) {
  switch (scale) {
    case Real::f32: return pick_int_bias<Bits, Real::f32>(bias, isa, vnni);
    case Real::f16: return pick_int_bias<Bits, Real::f16>(bias, isa, vnni);
    default: return pick_int_bias<Bits, Real::bf16>(bias, isa, vnni);
  }
}

RowsKernel pick_int(int bits, Real scale, Real bias, Isa isa, bool vnni) {
  switch (bits) {
    case 2: return pick_int_scale<2>(scale, bias, isa, vnni);
    case 4: return pick_int_scale<4>(scale, bias, isa, vnni);
    case 8: return pick_int_scale<8>(scale, bias, isa, vnni);
    default: return nullptr;
  }
}

Problem problem_of(int bits, int group_size, std::size_t rows, std::size_t outputs, std::size_t depth) {
  Problem problem{};
  const int codes = codes_per_pack(bits);
  problem.bits = bits;
  problem.rows = rows;
  problem.outputs = outputs;
  problem.depth = depth;
  problem.packs = depth / codes;
  problem.blocks = (problem.packs + kLanes - 1) / kLanes;
  problem.padded = problem.blocks * kLanes * codes;
  problem.stride = problem.padded % 256 == 0 ? problem.padded + 16 : problem.padded;
  problem.groups = depth / group_size;
  problem.row_bytes = problem.packs * bytes_per_pack(bits);
  problem.lanes_per_group = group_size / codes;
  // A multiple of 12, every path's NR (6 and 4) divides it: a tile's rows are the same
  // whichever path runs (not needed for the bits, but keeps tiles whole).
  const std::size_t fit = kTileBytes / (problem.stride * sizeof(float));
  problem.tile_rows = std::max<std::size_t>(12, std::min<std::size_t>(192, fit / 12 * 12));
  return problem;
}

class QuantizedMatmul : public mx::UnaryPrimitive {
 public:
  QuantizedMatmul(mx::Stream stream, int group_size, int bits, int activation_bits)
      : mx::UnaryPrimitive(stream), group_size_(group_size), bits_(bits), activation_bits_(activation_bits) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const mx::array& x = inputs[0];
    const mx::array& w = inputs[1];
    const mx::array& scales = inputs[2];
    const mx::array& biases = inputs[3];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (const auto& input : inputs) encoder.set_input_array(input);
    encoder.set_output_array(out);
    const std::size_t depth = w.shape(1) * 32 / bits_;
    const Problem problem = problem_of(bits_, group_size_, depth ? x.size() / depth : 0, w.shape(0), depth);
    encoder.dispatch([x_operand = operand(x), x_dtype = x.dtype(), w_operand = operand(w),
                      scales_operand = operand(scales), scales_dtype = scales.dtype(),
                      biases_operand = operand(biases), biases_dtype = biases.dtype(),
                      out_data = out.data<void>(), out_dtype = out.dtype(), problem,
                      activation_bits = activation_bits_]() {
      if (problem.rows == 0 || problem.outputs == 0) return;
      std::vector<char> x_scratch, w_scratch, scales_scratch, biases_scratch;
      const void* x_data = row_major(x_operand, x_scratch);
      const int codes = codes_per_pack(problem.bits);
      std::vector<float> xf(problem.rows * problem.depth);
      for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = load_float(x_data, x_dtype, i);
      const bool tile = problem.rows >= kTileFromRows;
      const Isa isa = host_isa();
      // Integer activations: x quantized (xf becomes x'), and the integer kernel where
      // one covers the call (else the exact kernel below runs on x').
      RowsKernel int_kernel = nullptr;
      std::vector<std::int8_t> q, q_laid;
      std::vector<float> q_group_scales, q_lane_scales;
      if (activation_bits != 0) {
        if (activation_bits == 8 && !tile) {
          int_kernel = pick_int(problem.bits, real_of(scales_dtype), real_of(biases_dtype), isa, host_avx512vnni());
        }
        q_group_scales.resize(problem.rows * problem.groups);
        if (int_kernel) q.resize(xf.size());
        quantize_activations(xf.data(), problem, activation_bits, int_kernel ? q.data() : nullptr, xf.data(),
                             q_group_scales.data());
        if (int_kernel && isa != Isa::portable) {
          q_laid.resize(problem.rows * problem.blocks * (8 / problem.bits) * 64);
          q_lane_scales.resize(problem.rows * problem.blocks * kLanes);
          lay_out_bytes(q.data(), q_group_scales.data(), problem, q_laid.data(), q_lane_scales.data());
        }
      }
      std::vector<float> laid, sums;
      if (!int_kernel) {
        laid.resize(problem.rows * problem.stride);
        sums.resize(problem.rows * problem.blocks * kLanes);
        lay_out(xf.data(), problem, codes, laid.data(), sums.data());
      }
      // x's (or x''s) sum per group: the biases' part of every decode kernel.
      std::vector<float> group_sums(problem.rows * problem.groups);
      group_sums_of(xf.data(), problem, group_sums.data());
      std::vector<float> staged;
      float* result = static_cast<float*>(out_data);
      if (out_dtype != mx::float32) {
        staged.resize(problem.rows * problem.outputs);
        result = staged.data();
      }
      std::vector<float> panels;
      if (tile && isa == Isa::avx512 && problem.rows >= kPanelFromRows) {
        panels.resize((problem.rows + kPanel - 1) / kPanel * kPanel * problem.padded);
        lay_out_panels(laid.data(), problem, panels.data());
      }
      const Data data{static_cast<const std::uint8_t*>(row_major(w_operand, w_scratch)),
                      row_major(scales_operand, scales_scratch), row_major(biases_operand, biases_scratch),
                      laid.data(), sums.data(), group_sums.data(), panels.data(), result,
                      q_laid.data(), q.data(), q_lane_scales.data(), q_group_scales.data()};
      const RowsKernel kernel =
          int_kernel ? int_kernel : pick(problem.bits, real_of(scales_dtype), real_of(biases_dtype), isa, tile);
      const std::size_t n_step = tile ? problem.tile_rows : kDecodeChunkRows;
      const std::size_t m_step = tile ? kTileChunkXRows : problem.rows;
      const std::size_t n_chunks = (problem.outputs + n_step - 1) / n_step;
      const std::size_t m_chunks = (problem.rows + m_step - 1) / m_step;
      parallel_for(n_chunks * m_chunks, [&](std::size_t chunk) {
        const std::size_t n = chunk % n_chunks * n_step, m = chunk / n_chunks * m_step;
        kernel(problem, data, n, std::min(problem.outputs, n + n_step), m, std::min(problem.rows, m + m_step));
      });
      if (out_dtype != mx::float32) {
        for (std::size_t i = 0; i < staged.size(); ++i) store_float(out_data, out_dtype, i, staged[i]);
      }
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native.quantized_matmul runs on the CPU only");
  }

  const char* name() const override { return "MlxirQuantizedMatmul"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    const auto& that = static_cast<const QuantizedMatmul&>(other);
    return group_size_ == that.group_size_ && bits_ == that.bits_ && activation_bits_ == that.activation_bits_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    mx::Shape shape = inputs[0].shape();
    shape.back() = inputs[1].shape(0);
    return {shape};
  }

 private:
  int group_size_;
  int bits_;
  int activation_bits_;  // 0: exact; 8 or 16: x quantized first (mlx.quantized_matmul's activation_bits)
};

mx::array quantized_matmul(const mx::array& x, const mx::array& w, const mx::array& scales, const mx::array& biases,
                           int group_size, int bits, int activation_bits, mx::StreamOrDevice s) {
  constexpr const char* op = "quantized_matmul";
  if (bits != 2 && bits != 3 && bits != 4 && bits != 6 && bits != 8) refuse(op, "bits must be 2, 3, 4, 6 or 8");
  if (activation_bits != 0 && activation_bits != 8 && activation_bits != 16) {
    refuse(op, "activation_bits must be 0 (exact), 8 or 16");
  }
  if (group_size != 32 && group_size != 64 && group_size != 128) refuse(op, "group_size must be 32, 64 or 128");
  if (!is_float_type(x.dtype())) refuse(op, "x must be float32, float16 or bfloat16");
  if (!is_float_type(scales.dtype()) || !is_float_type(biases.dtype())) {
    refuse(op, "scales and biases must be float32, float16 or bfloat16");
  }
  if (w.dtype() != mx::uint32 || w.ndim() != 2) refuse(op, "w must be a 2-D uint32 matrix [N, K * bits / 32]");
  if (x.ndim() < 1 || static_cast<std::int64_t>(x.shape(-1)) * bits != static_cast<std::int64_t>(w.shape(1)) * 32 ||
      x.shape(-1) == 0) {
    refuse(op, "x must be [..., K] with K = w.shape[1] * 32 / bits > 0");
  }
  const int groups = x.shape(-1) / group_size;
  if (x.shape(-1) % group_size != 0) refuse(op, "K must be a multiple of group_size");
  const mx::Shape group_shape{w.shape(0), groups};
  if (scales.shape() != group_shape || biases.shape() != group_shape) {
    refuse(op, "scales and biases must be [N, K / group_size]");
  }
  mx::Shape shape = x.shape();
  shape.back() = w.shape(0);
  const mx::Dtype out_dtype = mx::promote_types(mx::promote_types(x.dtype(), scales.dtype()), biases.dtype());
  auto stream = mx::to_stream(s, mx::Device::cpu);
  return mx::array(shape, out_dtype, std::make_shared<QuantizedMatmul>(stream, group_size, bits, activation_bits),
                   {x, w, scales, biases});
}

void bind(nb::module_& m) {
  m.def("quantized_matmul", &quantized_matmul, "x"_a, "w"_a, "scales"_a, "biases"_a, nb::kw_only(), "group_size"_a,
        "bits"_a, "activation_bits"_a = 0, "stream"_a = nb::none(),
        "mx.quantized_matmul(x, w, scales, biases, transpose=True, mode='affine') for a 2-D w, summed in float32; "
        "activation_bits 8 or 16: x quantized per group first (mlx.quantized_matmul's approximate mode).");
}

} // namespace

MLXIR_KERNEL_FAMILY(quantized, "affine quantized products x @ dequantize(w).T (mlx.quantized_matmul)", bind);

} // namespace mlxir::native
