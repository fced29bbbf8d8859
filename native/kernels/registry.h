// The kernel families: each kernels/<family>.cpp registers its Python functions and
// says which instruction set it runs with, so that adding a family touches no other
// file (bindings.cpp walks this table).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/variant.h>  // mx::StreamOrDevice arguments

#include <vector>

namespace mlxir::native {

struct KernelFamily {
  const char* name;
  const char* summary;  // what it replaces, for `mlxir info`
  void (*bind)(nanobind::module_& module);
};

bool add_family(KernelFamily family);
const std::vector<KernelFamily>& families();

} // namespace mlxir::native

#define MLXIR_KERNEL_FAMILY(IDENT, SUMMARY, BIND) \
  static const bool mlxir_family_##IDENT =       \
      ::mlxir::native::add_family({#IDENT, SUMMARY, BIND})
