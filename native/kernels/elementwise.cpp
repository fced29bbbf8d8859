// Row-wise normalizations, softmax, and exp/sigmoid/erf of float32, float16 and
// bfloat16 arrays, computed in float32 (kernels/vector_math.h, within 2 ulp).
//
// MLX's CPU composes rms_norm and layer_norm from 5-8 ops, each a pass over memory;
// its exp costs ~14 ns an element (a scalar loop), sigmoid ~19, erf ~34, where these
// take a fraction of a nanosecond. Norms and softmax go row by row: the pool takes
// chunks of rows fixed by the shape, and each row is summed by one thread in an order
// that depends on the row alone, so results never depend on the thread count.
// Elementwise ops take chunks of kChunkElements values.
#include <nanobind/stl/optional.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/primitive.h"
#include "kernels/registry.h"
#include "kernels/thread_pool.h"
#include "kernels/vector_math.h"
#include "mlx/backend/common/unary.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mlxir::native {

namespace {

enum class Unary { exp, sigmoid, erf };
enum class RowOp { rms_norm, layer_norm, softmax };

constexpr std::size_t kSumBlock = 1024;        // values summed in float32 before a double
constexpr std::size_t kChunkElements = 16384;  // values per pool chunk (rows: at least one)

// One call's rows: x [rows, length] row-major, weight/bias already float32.
struct Rows {
  const void* x;
  mx::Dtype x_dtype;
  std::size_t length;
  const float* weight;
  const float* bias;
  bool center;
  float eps;
  void* out;
  mx::Dtype out_dtype;
};

namespace portable_body {
using namespace vmath::portable;
#define MLXIR_BODY
#include "kernels/elementwise_body.inc"
#undef MLXIR_BODY
} // namespace portable_body

#if MLXIR_X86
namespace avx2_body {
using namespace vmath::avx2;
#define MLXIR_BODY MLXIR_AVX2
#include "kernels/elementwise_body.inc"
#undef MLXIR_BODY
} // namespace avx2_body

namespace avx512_body {
using namespace vmath::avx512;
#define MLXIR_BODY MLXIR_AVX512
#include "kernels/elementwise_body.inc"
#undef MLXIR_BODY
} // namespace avx512_body
#endif

// The instruction set is read once per op, so that one op runs one path throughout.
void map_dispatch(Isa isa, Unary op, const void* in, void* out, mx::Dtype dtype, std::size_t begin,
                  std::size_t end) {
#if MLXIR_X86
  if (isa == Isa::avx512) return avx512_body::map(op, in, out, dtype, begin, end);
  if (isa == Isa::avx2) return avx2_body::map(op, in, out, dtype, begin, end);
#endif
  portable_body::map(op, in, out, dtype, begin, end);
}

void rows_dispatch(Isa isa, RowOp op, const Rows& rows, std::size_t begin, std::size_t end) {
#if MLXIR_X86
  if (isa == Isa::avx512) {
    return op == RowOp::softmax ? avx512_body::softmax_rows(rows, begin, end) : avx512_body::norm_rows(rows, begin, end);
  }
  if (isa == Isa::avx2) {
    return op == RowOp::softmax ? avx2_body::softmax_rows(rows, begin, end) : avx2_body::norm_rows(rows, begin, end);
  }
#endif
  return op == RowOp::softmax ? portable_body::softmax_rows(rows, begin, end) : portable_body::norm_rows(rows, begin, end);
}

const char* unary_name(Unary op) {
  switch (op) {
    case Unary::exp: return "MlxirExp";
    case Unary::sigmoid: return "MlxirSigmoid";
    default: return "MlxirErf";
  }
}

class Map : public mx::UnaryPrimitive {
 public:
  Map(mx::Stream stream, Unary op) : mx::UnaryPrimitive(stream), op_(op) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const mx::array& x = inputs[0];
    auto& encoder = mx::cpu::get_command_encoder(stream());
    encoder.set_input_array(x);
    // A contiguous input in any order (a transposed view too) maps its memory as it
    // lies, the output taking its strides; others are gathered row-major first.
    const bool flat = x.flags().contiguous;
    if (flat) {
      mx::set_unary_output_data(x, out);
    } else {
      out.set_data(mx::allocator::malloc(out.nbytes()));
    }
    encoder.set_output_array(out);
    encoder.dispatch([x_operand = operand(x), flat, count = flat ? x.data_size() : x.size(),
                      out_data = out.data<void>(), dtype = out.dtype(), op = op_]() {
      std::vector<char> scratch;
      const void* in = flat ? static_cast<const void*>(x_operand.data) : row_major(x_operand, scratch);
      const Isa isa = host_isa();
      const std::size_t chunks = (count + kChunkElements - 1) / kChunkElements;
      parallel_for(chunks, [&](std::size_t chunk) {
        const std::size_t begin = chunk * kChunkElements;
        map_dispatch(isa, op, in, out_data, dtype, begin, std::min(count, begin + kChunkElements));
      });
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native's exp, sigmoid and erf run on the CPU only");
  }

  const char* name() const override { return unary_name(op_); }
  bool is_equivalent(const mx::Primitive& other) const override {
    const auto* same = dynamic_cast<const Map*>(&other);
    return same && same->op_ == op_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  Unary op_;
};

class RowPrimitive : public mx::UnaryPrimitive {
 public:
  RowPrimitive(mx::Stream stream, RowOp op, float eps, bool has_weight, bool has_bias)
      : mx::UnaryPrimitive(stream), op_(op), eps_(eps), has_weight_(has_weight), has_bias_(has_bias) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const mx::array& x = inputs[0];
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (const auto& input : inputs) encoder.set_input_array(input);
    // Each row is read whole before its outputs are written: x's buffer may be reused.
    if (x.flags().row_contiguous && x.dtype() == out.dtype() && mx::is_donatable(x, out)) {
      out.copy_shared_buffer(x);
    } else {
      out.set_data(mx::allocator::malloc(out.nbytes()));
    }
    encoder.set_output_array(out);
    const std::size_t length = x.shape(-1);
    std::optional<Operand> weight, bias;
    mx::Dtype weight_dtype = mx::float32, bias_dtype = mx::float32;
    if (has_weight_) {
      weight = operand(inputs[1]);
      weight_dtype = inputs[1].dtype();
    }
    if (has_bias_) {
      bias = operand(inputs[1 + has_weight_]);
      bias_dtype = inputs[1 + has_weight_].dtype();
    }
    encoder.dispatch([x_operand = operand(x), x_dtype = x.dtype(), weight, weight_dtype, bias, bias_dtype, length,
                      out_data = out.data<void>(), out_dtype = out.dtype(), op = op_, eps = eps_]() {
      std::vector<char> x_scratch, scratch;
      const void* x_data = row_major(x_operand, x_scratch);
      auto as_float = [&](const Operand& vector, mx::Dtype dtype) {
        std::vector<float> values(length);
        const void* data = row_major(vector, scratch);
        for (std::size_t i = 0; i < length; ++i) values[i] = load_float(data, dtype, i);
        return values;
      };
      std::vector<float> weight_values, bias_values;
      if (weight) weight_values = as_float(*weight, weight_dtype);
      if (bias) bias_values = as_float(*bias, bias_dtype);
      Rows rows{x_data, x_dtype, length, weight ? weight_values.data() : nullptr,
                bias ? bias_values.data() : nullptr, op == RowOp::layer_norm, eps, out_data, out_dtype};
      const Isa isa = host_isa();
      const std::size_t total = x_operand.size / length;
      const std::size_t per_chunk = std::max<std::size_t>(1, kChunkElements / length);
      parallel_for((total + per_chunk - 1) / per_chunk, [&](std::size_t chunk) {
        const std::size_t begin = chunk * per_chunk;
        rows_dispatch(isa, op, rows, begin, std::min(total, begin + per_chunk));
      });
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("mlxir.native's norms and softmax run on the CPU only");
  }

  const char* name() const override {
    switch (op_) {
      case RowOp::rms_norm: return "MlxirRMSNorm";
      case RowOp::layer_norm: return "MlxirLayerNorm";
      default: return "MlxirSoftmax";
    }
  }
  bool is_equivalent(const mx::Primitive& other) const override {
    const auto* same = dynamic_cast<const RowPrimitive*>(&other);
    return same && same->op_ == op_ && same->eps_ == eps_ && same->has_weight_ == has_weight_ &&
           same->has_bias_ == has_bias_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  RowOp op_;
  float eps_;
  bool has_weight_;
  bool has_bias_;
};

void check_float(const char* op, const mx::array& x) {
  if (!is_float_type(x.dtype())) refuse(op, "x must be float32, float16 or bfloat16");
}

void check_vector(const char* op, const char* what, const mx::array& x, const std::optional<mx::array>& vector) {
  if (!vector) return;
  if (!is_float_type(vector->dtype())) refuse(op, std::string(what) + " must be float32, float16 or bfloat16");
  if (vector->ndim() != 1 || vector->shape(0) != x.shape(-1)) {
    refuse(op, std::string(what) + " must be one-dimensional, as long as x's last axis");
  }
}

mx::array rowwise(RowOp op, const char* name, const mx::array& x, const std::optional<mx::array>& weight,
                  const std::optional<mx::array>& bias, float eps, mx::StreamOrDevice s) {
  check_float(name, x);
  if (x.ndim() < 1) refuse(name, "x must have at least one axis");
  check_vector(name, "weight", x, weight);
  check_vector(name, "bias", x, bias);
  mx::Dtype dtype = x.dtype();
  if (weight) dtype = mx::promote_types(dtype, weight->dtype());
  if (bias) dtype = mx::promote_types(dtype, bias->dtype());
  auto stream = mx::to_stream(s, mx::Device::cpu);
  if (x.size() == 0) return mx::zeros(x.shape(), dtype, stream);
  std::vector<mx::array> inputs{x};
  if (weight) inputs.push_back(*weight);
  if (bias) inputs.push_back(*bias);
  return mx::array(x.shape(), dtype,
                   std::make_shared<RowPrimitive>(stream, op, eps, weight.has_value(), bias.has_value()),
                   std::move(inputs));
}

mx::array rms_norm(const mx::array& x, const std::optional<mx::array>& weight, float eps, mx::StreamOrDevice s) {
  return rowwise(RowOp::rms_norm, "rms_norm", x, weight, std::nullopt, eps, s);
}

mx::array layer_norm(const mx::array& x, const std::optional<mx::array>& weight, const std::optional<mx::array>& bias,
                     float eps, mx::StreamOrDevice s) {
  return rowwise(RowOp::layer_norm, "layer_norm", x, weight, bias, eps, s);
}

mx::array softmax(const mx::array& x, bool precise, mx::StreamOrDevice s) {
  // Always summed in float32 (MLX's half softmax sums in the half type unless precise).
  return rowwise(RowOp::softmax, "softmax", x, std::nullopt, std::nullopt, 0.0f, s);
}

mx::array map(Unary op, const char* name, const mx::array& x, mx::StreamOrDevice s) {
  check_float(name, x);
  auto stream = mx::to_stream(s, mx::Device::cpu);
  if (x.size() == 0) return mx::zeros(x.shape(), x.dtype(), stream);
  return mx::array(x.shape(), x.dtype(), std::make_shared<Map>(stream, op), {x});
}

void bind(nb::module_& m) {
  m.def("rms_norm", &rms_norm, "x"_a, "weight"_a.none(), "eps"_a, nb::kw_only(), "stream"_a = nb::none(),
        "mx.fast.rms_norm over the last axis, computed in float32.");
  m.def("layer_norm", &layer_norm, "x"_a, "weight"_a.none(), "bias"_a.none(), "eps"_a, nb::kw_only(),
        "stream"_a = nb::none(), "mx.fast.layer_norm over the last axis, computed in float32.");
  m.def("softmax", &softmax, "x"_a, "precise"_a = false, nb::kw_only(), "stream"_a = nb::none(),
        "mx.softmax over the last axis, summed in float32 whatever `precise` says.");
  m.def("exp", [](const mx::array& x, mx::StreamOrDevice s) { return map(Unary::exp, "exp", x, s); }, "x"_a,
        nb::kw_only(), "stream"_a = nb::none(), "mx.exp in float32 arithmetic, within 2 ulp.");
  m.def("sigmoid", [](const mx::array& x, mx::StreamOrDevice s) { return map(Unary::sigmoid, "sigmoid", x, s); },
        "x"_a, nb::kw_only(), "stream"_a = nb::none(), "mx.sigmoid in float32 arithmetic, within 2 ulp.");
  m.def("erf", [](const mx::array& x, mx::StreamOrDevice s) { return map(Unary::erf, "erf", x, s); }, "x"_a,
        nb::kw_only(), "stream"_a = nb::none(), "mx.erf in float32 arithmetic, within 2 ulp.");
}

} // namespace

MLXIR_KERNEL_FAMILY(elementwise,
                    "rms_norm, layer_norm and softmax over the last axis; exp, sigmoid and erf (mlx.rms_norm, "
                    "mlx.layer_norm, mlx.softmax, mlx.exp, mlx.sigmoid, mlx.erf)",
                    bind);

} // namespace mlxir::native
