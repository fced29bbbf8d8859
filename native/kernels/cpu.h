// The instruction sets a kernel may use, chosen at run time per function: the module
// is compiled for the architecture's baseline, and each fast path carries its own
// target attribute (MLXIR_AVX2, MLXIR_AVX512), entered only where host_isa() allows.
#pragma once

#include <string>

namespace mlxir::native {

enum class Isa { portable = 0, avx2 = 1, avx512 = 2 };

// The best instruction set of this CPU that the kernels have a path for, lowered by
// `limit_isa` (tests run every path on one machine) or MLXIR_NATIVE_ISA.
Isa host_isa();
const char* isa_name(Isa isa);
// Lowers (never raises) the instruction sets the kernels use; returns the result.
// "avx512-novnni" is "avx512" without VNNI (the tests run that path on a VNNI CPU); any
// other name allows VNNI again where the CPU has it and the set stays at avx512.
Isa limit_isa(const std::string& name);
// Whether the AVX-512 paths may use VNNI's byte dot products (vpdpbusd): the CPU has
// AVX512_VNNI and the set is avx512. A flag beside `Isa`, not a level of it: the other
// families test `isa == Isa::avx512`, and VNNI changes nothing for them.
bool host_avx512vnni();

} // namespace mlxir::native

#if defined(__x86_64__) || defined(_M_X64)
#define MLXIR_X86 1
// AVX2 with FMA and F16C (half conversions): Haswell and Zen 1 on.
#define MLXIR_AVX2 __attribute__((target("avx2,fma,f16c")))
// AVX-512 F/BW/DQ/VL: Skylake-SP, Ice Lake, Zen 4 on.
#define MLXIR_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")))
#else
#define MLXIR_X86 0
#endif
