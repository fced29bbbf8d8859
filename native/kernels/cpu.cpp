#include "kernels/cpu.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace mlxir::native {

namespace {

Isa detect() {
#if MLXIR_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma")) {
    return Isa::avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    return Isa::avx2;
  }
#endif
  return Isa::portable;
}

bool detect_vnni() {
#if MLXIR_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

constexpr const char* kNoVnni = "avx512-novnni";

Isa parse(const std::string& name) {
  if (name == "portable") return Isa::portable;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512" || name == kNoVnni) return Isa::avx512;
  throw std::invalid_argument(
      "unknown instruction set '" + name + "' (expected portable, avx2, avx512 or avx512-novnni)");
}

// VNNI allowed (where the CPU has it): off after limit_isa("avx512-novnni") or with
// MLXIR_NATIVE_ISA=avx512-novnni.
std::atomic<bool>& vnni_allowed() {
  static std::atomic<bool> allowed = [] {
    const char* forced = std::getenv("MLXIR_NATIVE_ISA");
    return !(forced && std::string(forced) == kNoVnni);
  }();
  return allowed;
}

std::atomic<int>& current() {
  static std::atomic<int> isa = [] {
    Isa found = detect();
    if (const char* forced = std::getenv("MLXIR_NATIVE_ISA")) {
      try {
        Isa asked = parse(forced);
        if (asked < found) found = asked;
      } catch (const std::invalid_argument&) {
        // An unknown name keeps the detected set: the Python side reports it.
      }
    }
    return static_cast<int>(found);
  }();
  return isa;
}

} // namespace

Isa host_isa() {
  return static_cast<Isa>(current().load(std::memory_order_relaxed));
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    default: return "portable";
  }
}

Isa limit_isa(const std::string& name) {
  Isa asked = parse(name);
  Isa best = detect();
  Isa chosen = asked < best ? asked : best;
  current().store(static_cast<int>(chosen));
  vnni_allowed().store(name != kNoVnni);
  return chosen;
}

bool host_avx512vnni() {
  static const bool detected = detect_vnni();
  return detected && host_isa() == Isa::avx512 && vnni_allowed().load(std::memory_order_relaxed);
}

} // namespace mlxir::native
