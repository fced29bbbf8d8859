"""Each native CPU kernel (`native/kernels/`) against the MLX op it replaces, at 1 and 2
threads, alternating in one process, with its ratio to the bound.

    .venv/bin/python benchmarks/native_kernels.py [--calls 21] [--threads 1,2] [--only quantized,matvec]

One process per thread count T: the native kernels' pool has T threads
(`MLXIR_CPU_STREAMS=T`, as mlxir sets it), MLX's BLAS T threads
(`OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=T`, the BLAS `import mlxir` picks preloaded);
MLX's own CPU kernels other than its BLAS use one thread whatever T is (that is what
the native kernels replace). Each case is two `mx.compile`d functions on the same
evaluated inputs, called alternately `--calls` times each after a warm-up; the table
gives the median with min-max in microseconds and native / MLX.

The bound column: a case that reads a weight (products, decode attention) is bound by
its bytes over the read bandwidth measured in this run at T threads
(`cpu_llm.read_bandwidth`, a STREAM-like sum over 512 MB); a compute-bound case
(prefill) by its FLOPs over this run's float32 GEMM rate (MLX's 2048^3 matmul on the
same BLAS at T threads). The ratio is the native median over that time: 1.0 is the
hardware. Error columns: each side's largest error against float64, relative to the
output's largest magnitude. A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cpu_llm  # noqa: E402  (read_bandwidth)
import llm  # noqa: E402  (blas_env)

Made = tuple[list[Callable[[], Any]], list[Callable[[], Any]], Any, float, float]


@dataclass(frozen=True)
class Case:
    """One kernel call: `make(module, copies)` gives (natives, mlxs, reference64, bytes,
    flops): `copies` functions of no arguments on each side, each on its own copy of
    the weights (a call reads weights that are not in cache, as a model's next layer
    does: the copies together are twice the last-level cache), the float64 result of
    the first copy, the bytes one call reads, and its FLOPs."""

    family: str
    label: str
    make: Callable[[Any, int], Made]
    weight_bytes: int


def _float64(array: Any) -> Any:
    import mlx.core as mx
    import numpy as np

    return np.array(array.astype(mx.float32)).astype(np.float64)


def _matvec(rows: int, outputs: int, depth: int, dtype_name: str) -> Case:
    def make(module: Any, copies: int) -> Made:
        import mlx.core as mx

        dtype = getattr(mx, dtype_name)
        x = mx.random.normal((rows, depth), key=mx.random.key(1)).astype(dtype)
        ws = [mx.random.normal((outputs, depth), key=mx.random.key(2 + c)).astype(dtype) for c in range(copies)]
        mx.eval(x, *ws)
        reference = _float64(x) @ _float64(ws[0]).T
        natives: list[Callable[[], Any]] = [lambda w=w: module.matvec(x, w) for w in ws]
        mlxs: list[Callable[[], Any]] = [lambda w=w: x @ w.T for w in ws]
        return natives, mlxs, reference, ws[0].nbytes, 2.0 * rows * outputs * depth

    size = 4 if dtype_name == "float32" else 2
    return Case("matvec", f"{dtype_name} {rows}x{depth} @ w[{outputs}x{depth}].T", make, outputs * depth * size)


def _quantized(rows: int, outputs: int, depth: int, bits: int, group: int, activation_bits: int = 0) -> Case:
    """With `activation_bits=8`: the approximate mode `cpu-int8-activations` asks for,
    against the same exact `mx.quantized_matmul` (its error column is the
    approximation's, about 7e-3, not rounding)."""

    def make(module: Any, copies: int) -> Made:
        import mlx.core as mx

        x = mx.random.normal((rows, depth), key=mx.random.key(3))
        quantized = [
            mx.quantize(mx.random.normal((outputs, depth), key=mx.random.key(4 + c)) * 0.05, group_size=group, bits=bits)
            for c in range(copies)
        ]
        mx.eval(x, *quantized)
        w, scales, biases = quantized[0]
        dequantized = mx.dequantize(w, scales, biases, group_size=group, bits=bits)
        reference = _float64(x) @ _float64(dequantized).T
        natives: list[Callable[[], Any]] = [
            lambda q=q: module.quantized_matmul(
                x, q[0], q[1], q[2], group_size=group, bits=bits, activation_bits=activation_bits
            )
            for q in quantized
        ]
        mlxs: list[Callable[[], Any]] = [
            lambda q=q: mx.quantized_matmul(x, q[0], q[1], q[2], transpose=True, group_size=group, bits=bits)
            for q in quantized
        ]
        read = w.nbytes + scales.nbytes + biases.nbytes
        return natives, mlxs, reference, read, 2.0 * rows * outputs * depth

    weight_bytes = outputs * depth * bits // 8 + 2 * outputs * (depth // group) * 4
    mode = " int8-x" if activation_bits else ""
    return Case("quantized", f"q{bits} g{group}{mode} {rows}x{depth} @ w[{outputs}x{depth}].T", make, weight_bytes)


def _attention64(q: Any, k: Any, v: Any, scale: float) -> Any:
    """Causal attention in float64 (queries aligned to the end of the keys), grouped
    queries sharing their K/V head."""
    import numpy as np

    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    scores = q @ k.swapaxes(-1, -2) * scale
    length, keys = q.shape[2], k.shape[2]
    keep = np.arange(keys)[None, :] <= np.arange(length)[:, None] + keys - length
    scores = np.where(keep, scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v


def _attention(heads: int, kv_heads: int, dim: int, length: int, keys: int) -> Case:
    """Causal attention of `length` query rows over `keys` keys (decode: one row)."""

    def make(module: Any, copies: int) -> Made:
        import mlx.core as mx

        scale = dim**-0.5
        q = mx.random.normal((1, heads, length, dim), key=mx.random.key(5))
        caches = [
            (mx.random.normal((1, kv_heads, keys, dim), key=mx.random.key(6 + c)),
             mx.random.normal((1, kv_heads, keys, dim), key=mx.random.key(60 + c)))
            for c in range(copies)
        ]
        mx.eval(q, *caches)
        k0, v0 = caches[0]
        mask = "causal" if length > 1 else None
        reference = _attention64(_float64(q), _float64(k0), _float64(v0), scale)
        natives: list[Callable[[], Any]] = [
            lambda kv=kv: module.attention(q, kv[0], kv[1], scale=scale, mask=mask) for kv in caches
        ]
        mlxs: list[Callable[[], Any]] = [
            lambda kv=kv: mx.fast.scaled_dot_product_attention(q, kv[0], kv[1], scale=scale, mask=mask)
            for kv in caches
        ]
        read = 2 * k0.nbytes
        flops = 4.0 * heads * length * keys * dim / (2 if length > 1 else 1)
        return natives, mlxs, reference, read, flops

    kind = "decode" if length == 1 else f"prefill {length}"
    return Case("attention", f"attention {kind} {heads}/{kv_heads}x{dim} S={keys}", make, 2 * kv_heads * keys * dim * 4)


def _elementwise(op: str, shape: tuple[int, ...]) -> Case:
    def make(module: Any, copies: int) -> Made:
        import mlx.core as mx

        xs = [mx.random.normal(shape, key=mx.random.key(7 + c)) for c in range(copies)]
        weight = mx.random.normal((shape[-1],), key=mx.random.key(8))
        mx.eval(*xs, weight)
        native_of: dict[str, Callable[[Any], Any]] = {
            "rms_norm": lambda x: module.rms_norm(x, weight, 1e-5),
            "softmax": lambda x: module.softmax(x),
            "exp": lambda x: module.exp(x),
            "sigmoid": lambda x: module.sigmoid(x),
            "erf": lambda x: module.erf(x),
        }
        mlx_of: dict[str, Callable[[Any], Any]] = {
            "rms_norm": lambda x: mx.fast.rms_norm(x, weight, 1e-5),
            "softmax": lambda x: mx.softmax(x, axis=-1, precise=True),
            "exp": mx.exp,
            "sigmoid": mx.sigmoid,
            "erf": mx.erf,
        }
        import numpy as np
        import scipy.special  # pyright: ignore[reportMissingTypeStubs]

        x64 = _float64(xs[0])
        reference_of: dict[str, Callable[[Any], Any]] = {
            "rms_norm": lambda a: a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-5) * _float64(weight),
            "softmax": lambda a: np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True),
            "exp": np.exp,
            "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
            "erf": scipy.special.erf,  # pyright: ignore[reportUnknownMemberType]
        }
        natives: list[Callable[[], Any]] = [lambda x=x: native_of[op](x) for x in xs]
        mlxs: list[Callable[[], Any]] = [lambda x=x: mlx_of[op](x) for x in xs]
        size = 1
        for d in shape:
            size *= d
        return natives, mlxs, reference_of[op](x64), 8.0 * size, 0.0

    size = 1
    for d in shape:
        size *= d
    return Case("elementwise", f"{op} {'x'.join(map(str, shape))}", make, 8 * size)


def _depthwise(size: int, channels: int, kernel: int, stride: int) -> Case:
    def make(module: Any, copies: int) -> Made:
        import mlx.core as mx

        pad = kernel // 2
        xs = [mx.random.normal((1, size, size, channels), key=mx.random.key(9 + c)) for c in range(copies)]
        w = mx.random.normal((channels, kernel, kernel, 1), key=mx.random.key(10)) * 0.2
        mx.eval(*xs, w)
        import numpy as np

        padded = np.pad(_float64(xs[0]), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        taps = _float64(w)[:, :, :, 0]
        out = -(-size // stride)
        reference = sum(
            padded[:, i : i + stride * out : stride, j : j + stride * out : stride, :] * taps[:, i, j]
            for i in range(kernel)
            for j in range(kernel)
        )
        natives: list[Callable[[], Any]] = [
            lambda x=x: module.depthwise_conv2d(
                x, w, stride=(stride, stride), padding_lo=(pad, pad), padding_hi=(pad, pad))
            for x in xs
        ]
        mlxs: list[Callable[[], Any]] = [
            lambda x=x: mx.conv_general(x, w, stride=stride, padding=pad, groups=channels) for x in xs
        ]
        out = -(-size // stride)
        return natives, mlxs, reference, xs[0].nbytes + 4.0 * out * out * channels, 2.0 * out * out * channels * kernel * kernel

    return Case("convolution", f"depthwise {size}^2x{channels} {kernel}x{kernel} s{stride}", make, size * size * channels * 4)


CASES: list[Case] = [
    _matvec(1, 32000, 512, "float32"),
    _matvec(1, 1408, 512, "float32"),
    _matvec(1, 3072, 1024, "float32"),
    _matvec(1, 3072, 1024, "bfloat16"),
    _quantized(1, 1408, 512, 4, 64),
    _quantized(1, 32000, 512, 4, 64),
    _quantized(1, 3072, 1024, 4, 64),
    _quantized(1, 3072, 1024, 8, 64),
    _quantized(128, 1408, 512, 4, 64),
    _attention(8, 8, 64, 1, 2048),
    _attention(16, 8, 128, 1, 2048),
    _attention(8, 8, 64, 512, 512),
    _elementwise("rms_norm", (128, 1024)),
    _elementwise("softmax", (8, 512, 512)),
    _elementwise("exp", (1, 1 << 20)),
    _elementwise("sigmoid", (1, 180224)),
    _elementwise("erf", (1, 1 << 20)),
    _depthwise(112, 96, 3, 2),
    _depthwise(56, 144, 3, 1),
    _depthwise(56, 40, 7, 1),
    _quantized(1, 1408, 512, 4, 64, activation_bits=8),
    _quantized(1, 32000, 512, 4, 64, activation_bits=8),
    _quantized(1, 3072, 1024, 4, 64, activation_bits=8),
]


def last_level_cache() -> int:
    """Bytes of this CPU's largest cache (sysfs), 32 MB where it cannot be read."""
    sizes: list[int] = []
    for path in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = path.read_text().strip()
        scale = {"K": 2**10, "M": 2**20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes, default=32 * 2**20)


def _time(function: Callable[[], Any]) -> float:
    import mlx.core as mx

    start = time.perf_counter()
    mx.eval(function())
    return (time.perf_counter() - start) * 1e6


def gemm_rate() -> float:
    """This process's float32 GEMM rate in FLOP/s: MLX's matmul of 2048^3 on its BLAS."""
    import mlx.core as mx

    a = mx.random.normal((2048, 2048))
    b = mx.random.normal((2048, 2048))
    mx.eval(a, b)
    mx.eval(a @ b)
    best = min(_time(lambda: a @ b) for _ in range(5))
    return 2.0 * 2048**3 / (best / 1e6)


def worker(calls: int, only: str | None) -> None:
    import mlx.core as mx

    from mlxir.runtime.cpu import native

    module = native.kernels()
    if module is None:
        print(json.dumps({"error": "native kernels unavailable"}))
        return
    families = {name for name, _ in module.families()}
    rows: list[dict[str, Any]] = []
    for case in CASES:
        if only and case.family not in only.split(","):
            continue
        if case.family not in families:
            rows.append({"family": case.family, "label": case.label, "missing": True})
            continue
        copies = max(1, -(-2 * last_level_cache() // case.weight_bytes))
        natives, mlxs, reference, read, flops = case.make(module, copies)
        compiled = {"native": [mx.compile(f) for f in natives], "mlx": [mx.compile(f) for f in mlxs]}
        errors: dict[str, float] = {}
        for name, functions in compiled.items():
            for function in functions:  # warm-up: every trace, every copy
                mx.eval(function())
            if reference is not None:
                import numpy as np

                scale = float(np.abs(reference).max()) or 1.0
                errors[name] = float(np.abs(_float64(functions[0]()) - reference).max()) / scale
        times: dict[str, list[float]] = {"native": [], "mlx": []}
        for index in range(2 * calls):
            name = "native" if index % 2 == 0 else "mlx"
            functions = compiled[name]
            times[name].append(_time(functions[(index // 2) % len(functions)]))
        rows.append({"family": case.family, "label": case.label, "times": times, "errors": errors, "read": read, "flops": flops})
    print(json.dumps({"rows": rows, "gemm": gemm_rate(), "isa": module.isa(), "threads": module.threads()}))


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=21)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--only", help="kernel families, comma-separated (matvec,quantized,attention,elementwise,convolution)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.calls, args.only)
        return 0
    load_before = os.getloadavg()
    cache = Path(tempfile.gettempdir()) / "mlxir-bench-kernels"
    cache.mkdir(exist_ok=True)
    for threads in (int(t) for t in args.threads.split(",")):
        bandwidth = cpu_llm.read_bandwidth(cache, threads)
        env, blas = llm.blas_env(threads)
        env["MLXIR_CPU_STREAMS"] = str(threads)
        command = [sys.executable, __file__, "--worker", "--calls", str(args.calls)]
        if args.only:
            command += ["--only", args.only]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if "error" in result:
            print(result["error"])
            return 1
        print(
            f"\n{threads} thread(s): native pool {result['threads']} threads ({result['isa']}); {blas}; "
            f"read bandwidth {bandwidth:.1f} GB/s; float32 GEMM {result['gemm'] / 1e9:.0f} GFLOP/s"
        )
        print(f"{'case':44} {'native us':>24} {'MLX us':>26} {'nat/MLX':>8} {'bound us':>9} {'nat/bound':>9} {'err nat':>8} {'err MLX':>8}")
        for row in result["rows"]:
            if row.get("missing"):
                print(f"{row['label']:44} (the {row['family']} family is not built)")
                continue
            native_median = statistics.median(row["times"]["native"])
            mlx_median = statistics.median(row["times"]["mlx"])
            memory_bound = row["read"] / (bandwidth * 1e9) * 1e6
            compute_bound = row["flops"] / result["gemm"] * 1e6
            bound = max(memory_bound, compute_bound)
            errors = row["errors"]
            print(
                f"{row['label']:44} {_cell(row['times']['native']):>24} {_cell(row['times']['mlx']):>26} "
                f"{native_median / mlx_median:>8.3f} {bound:>9.1f} {native_median / bound:>9.2f} "
                f"{errors.get('native', float('nan')):>8.1e} {errors.get('mlx', float('nan')):>8.1e}"
            )
    load_after = os.getloadavg()
    print(f"\n{args.calls} calls per system per case; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
