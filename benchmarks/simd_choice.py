"""One native kernel written two ways: the float32 matvec row kernel of
`native/kernels/matvec.cpp` (hand-written AVX-512/AVX2 intrinsics, chosen per function
at run time) against the same algorithm written with Google Highway's run-time
dispatch (`simd_choice/matvec_hwy.cpp`, Debian's `libhwy-dev`), both called through
ctypes on the same NumPy buffers, one thread, alternating call by call.

    .venv/bin/python benchmarks/simd_choice.py --calls 41

Sizes: a weight that stays in L2 (compute-bound) and one that streams from memory
(bandwidth-bound, with the read bound). Each instruction set in turn: AVX-512 where
the CPU has it, then both capped at AVX2. Prints medians (min-max) in microseconds,
the ratio Highway / intrinsics, and the largest difference between the two outputs.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "simd_choice"

SIZES = [("L2-resident 256 x 512", 256, 512), ("streamed 32000 x 512 (65 MB)", 32000, 512), ("odd 1001 x 999", 1001, 999)]


def build_highway() -> Path:
    BUILD.mkdir(parents=True, exist_ok=True)
    library = BUILD / "libmatvec_hwy.so"
    source = Path(__file__).resolve().parent / "simd_choice" / "matvec_hwy.cpp"
    if not library.exists() or library.stat().st_mtime < source.stat().st_mtime:
        subprocess.run(
            ["g++", "-std=c++17", "-O3", "-fPIC", "-shared", f"-I{source.parent}", str(source), "-lhwy", "-o", str(library)],
            check=True,
        )
    return library


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=41)
    args = parser.parse_args()
    from mlxir import native

    module = native.load()
    if module is None:
        print(f"the native kernels are unavailable: {native.unavailable_reason()}")
        return 1
    try:
        highway = ctypes.CDLL(str(build_highway()))
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"Highway is not available here ({error}): apt-get install libhwy-dev")
        return 1
    intrinsics = ctypes.CDLL(module.__file__)
    pointer = ctypes.POINTER(ctypes.c_float)
    for function in (highway.hwy_matvec_f32, intrinsics.mlxir_matvec_f32_rows):
        function.argtypes = [pointer, pointer, ctypes.c_size_t, ctypes.c_size_t, pointer]
        function.restype = None
    highway.hwy_matvec_target.restype = ctypes.c_char_p

    def as_pointer(array: np.ndarray) -> ctypes._Pointer[ctypes.c_float]:  # pyright: ignore[reportPrivateUsage]
        return array.ctypes.data_as(pointer)

    print(f"load average {os.getloadavg()[0]:.2f}, {args.calls} calls each, one thread, medians (min-max) in us")
    rng = np.random.default_rng(0)
    isas = ["avx512", "avx2"] if module.limit_isa("avx512") == "avx512" else [module.limit_isa("avx512")]
    for isa in isas:
        if isa == "avx2":
            highway.hwy_at_most_avx2()
        module.limit_isa(isa)
        print(f"\nintrinsics: {isa}; Highway: {highway.hwy_matvec_target().decode()}")
        print(f"{'weight':32} {'intrinsics':>22} {'Highway':>22} {'Hwy/intr':>9} {'GB/s intr':>10} {'max diff':>9}")
        for label, rows, depth in SIZES:
            x = rng.standard_normal(depth, dtype=np.float32)
            w = rng.standard_normal((rows, depth), dtype=np.float32)
            outputs = {"intrinsics": np.zeros(rows, np.float32), "Highway": np.zeros(rows, np.float32)}
            functions = {"intrinsics": intrinsics.mlxir_matvec_f32_rows, "Highway": highway.hwy_matvec_f32}
            times: dict[str, list[float]] = {"intrinsics": [], "Highway": []}
            for index in range(2 * args.calls + 2):
                name = "intrinsics" if index % 2 == 0 else "Highway"
                start = time.perf_counter()
                functions[name](as_pointer(x), as_pointer(w), depth, rows, as_pointer(outputs[name]))
                if index >= 2:
                    times[name].append((time.perf_counter() - start) * 1e6)
            medians = {name: statistics.median(values) for name, values in times.items()}
            cells = {name: f"{medians[name]:.1f} ({min(times[name]):.1f}-{max(times[name]):.1f})" for name in times}
            bandwidth = w.nbytes / medians["intrinsics"] / 1e3
            difference = float(np.abs(outputs["intrinsics"] - outputs["Highway"]).max())
            print(f"{label:32} {cells['intrinsics']:>22} {cells['Highway']:>22} "
                  f"{medians['Highway'] / medians['intrinsics']:>9.2f} {bandwidth:>10.1f} {difference:>9.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
