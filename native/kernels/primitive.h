// What every native primitive shares: its inputs made row-contiguous on the CPU stream
// it runs on, float16/bfloat16 element access, and the family's op guard.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlx/array.h"
#include "mlx/backend/cpu/encoder.h"
#include "mlx/ops.h"
#include "mlx/primitives.h"
#include "mlx/utils.h"

namespace mx = mlx::core;

namespace mlxir::native {

// An input as a kernel reads it on the stream's thread: where its elements are and how
// they are laid out, captured when the primitive is evaluated (before its data is
// computed: MLX's CPU streams fill inputs in order, ahead of the kernel).
struct Operand {
  const char* data;
  mx::Shape shape;
  mx::Strides strides;
  std::size_t itemsize;
  std::size_t size;
  bool row_contiguous;
};

inline Operand operand(const mx::array& array) {
  return {array.data<char>(), array.shape(), array.strides(), array.itemsize(), array.size(),
          array.flags().row_contiguous};
}

// The operand's elements in row-major order: its own memory, or (a view with other
// strides, broadcast included) a copy gathered into `scratch`. Called in the kernel.
inline const void* row_major(const Operand& op, std::vector<char>& scratch) {
  if (op.row_contiguous) return op.data;
  scratch.resize(op.size * op.itemsize);
  const int ndim = static_cast<int>(op.shape.size());
  std::vector<std::int64_t> index(ndim, 0);
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < op.size; ++i) {
    std::memcpy(scratch.data() + i * op.itemsize, op.data + offset * static_cast<std::int64_t>(op.itemsize), op.itemsize);
    for (int d = ndim - 1; d >= 0; --d) {
      offset += op.strides[d];
      if (++index[d] < op.shape[d]) break;
      offset -= op.strides[d] * op.shape[d];
      index[d] = 0;
    }
  }
  return scratch.data();
}

inline float half_to_float(std::uint16_t bits) {
  mx::float16_t value;
  std::memcpy(&value, &bits, sizeof bits);
  return static_cast<float>(value);
}

inline float bfloat_to_float(std::uint16_t bits) {
  std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// Rounds to nearest even, as MLX's own float -> bfloat16 conversion does.
inline std::uint16_t float_to_bfloat(float value) {
  mx::bfloat16_t rounded(value);
  std::uint16_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return bits;
}

inline std::uint16_t float_to_half(float value) {
  mx::float16_t rounded(value);
  std::uint16_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return bits;
}

// Reads element i of a float32/float16/bfloat16 buffer as float.
inline float load_float(const void* data, mx::Dtype dtype, std::size_t i) {
  if (dtype == mx::float32) return static_cast<const float*>(data)[i];
  auto bits = static_cast<const std::uint16_t*>(data)[i];
  return dtype == mx::float16 ? half_to_float(bits) : bfloat_to_float(bits);
}

inline void store_float(void* data, mx::Dtype dtype, std::size_t i, float value) {
  if (dtype == mx::float32) {
    static_cast<float*>(data)[i] = value;
  } else if (dtype == mx::float16) {
    static_cast<std::uint16_t*>(data)[i] = float_to_half(value);
  } else {
    static_cast<std::uint16_t*>(data)[i] = float_to_bfloat(value);
  }
}

inline bool is_float_type(mx::Dtype dtype) {
  return dtype == mx::float32 || dtype == mx::float16 || dtype == mx::bfloat16;
}

// One line naming the op and the broken rule, raised when the op is built (never in
// a kernel: a kernel runs on MLX's stream thread, where an exception ends the process).
[[noreturn]] inline void refuse(const char* op, const std::string& rule) {
  throw std::invalid_argument(std::string(op) + ": " + rule);
}

} // namespace mlxir::native
