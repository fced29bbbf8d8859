#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/registry.h"
#include "kernels/thread_pool.h"
#include "mlx/version.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mlxir::native {

bool add_family(KernelFamily family) {
  auto& table = const_cast<std::vector<KernelFamily>&>(families());
  table.push_back(family);
  return true;
}

const std::vector<KernelFamily>& families() {
  static std::vector<KernelFamily> table;
  return table;
}

} // namespace mlxir::native

#define MLXIR_STRINGIFY_(x) #x
#define MLXIR_STRINGIFY(x) MLXIR_STRINGIFY_(x)

NB_MODULE(_kernels, m) {
  namespace native = mlxir::native;
  m.doc() = "mlxir's native CPU kernels as MLX primitives (docs/native-kernels.md)";
  m.attr("MLX_VERSION") = MLXIR_STRINGIFY(MLX_VERSION_MAJOR) "." MLXIR_STRINGIFY(
      MLX_VERSION_MINOR) "." MLXIR_STRINGIFY(MLX_VERSION_PATCH);
  m.def("isa", [] { return std::string(native::isa_name(native::host_isa())); },
        "The instruction set the kernels run with on this CPU.");
  m.def("limit_isa",
        [](const std::string& name) { return std::string(native::isa_name(native::limit_isa(name))); },
        "name"_a, "Lowers the instruction set the kernels use (for tests); returns the one chosen.");
  m.def("set_threads", &native::set_threads, "count"_a, "Sizes the kernels' thread pool.");
  m.def("threads", &native::threads, "The kernels' thread count, the calling thread included.");
  m.def("families", [] {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& family : native::families()) out.emplace_back(family.name, family.summary);
    return out;
  }, "Each kernel family's name and what it replaces.");
  for (const auto& family : native::families()) family.bind(m);
}
