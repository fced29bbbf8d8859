"""Normalizations and softmax on the CPU: the native kernels where they run
(`native/kernels/elementwise.cpp`), else the generic kernels (`evaluator/`).

`mlx.rms_norm` and `mlx.layer_norm` (weight and bias each a vector as long as the last
axis, or absent) and `mlx.softmax` over the last axis alone, of float32, float16 or
bfloat16, run the native `rms_norm`, `layer_norm` and `softmax`: one pass to sum a row
and one to write it (softmax: a max pass first), in float32 whatever the input type,
each row on one thread. MLX's CPU composes `mx.fast.rms_norm`/`layer_norm` from 5-8
ops (a pass over memory each) and computes a float16/bfloat16 softmax in the half type
unless `precise`. Measured on this machine (2-vCPU Zen 5, float32, µs, median of 50
calls each evaluated alone, MLX's op and the native one alternating in one process,
the native pool at 1 and 2 threads). The VM was shared with other builds (load ~2)
while measuring, so the second thread found no free core: the 2-thread column shows
no gain here.

| op, shape | MLX | native, 1 thread | 2 threads |
|---|---|---|---|
| rms_norm [1, 512] | 17 | 5.9 | 5.8 |
| rms_norm [1, 2048] | 19 | 6.5 | 6.3 |
| rms_norm [128, 1024] | 140 | 33 | 32 |
| layer_norm [1, 768] | 28 | 7.8 | 8.1 |
| layer_norm [128, 1024] | 261 | 41 | 43 |
| softmax [1, 8, 1, 64] | 11-17 | 7-11 | 5 |
| softmax [1, 8, 128, 128] | 1635 | 77 | 78 |
| softmax [8, 512, 512] | 26855 | 1383 | 1407 |

The native op won on every shape measured, so every covered call takes it. Against
float64, relative to each row's magnitude, over `tests/test_native_elementwise.py`'s
rows (lengths 1 to 4097, every path): float32 within 4.4e-7 (MLX's own: 3.2e-6);
float16/bfloat16 within half a unit of their last place (rounded once from float32;
MLX's: up to 5e-2 and 0.23 for its half softmax); a row far from zero (mean 3000,
deviation 0.5) 1.6e-7, where MLX's layer_norm loses 2.7e-3 to its mean's rounding.
Not MLX's bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.evaluator.registry import (
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    flag_of,
    float_of,
    ints_of,
    segments_of,
)
from mlxir.runtime.cpu import native

_FLOATS = (mx.float32, mx.float16, mx.bfloat16)


def _covers(x: Any, *vectors: Any) -> bool:
    """Whether the native kernels compute this call: float rows, and each vector
    (weight, bias; None when absent) a float vector as long as a row."""
    if x.dtype not in _FLOATS or x.ndim < 1:
        return False
    return all(v is None or (v.dtype in _FLOATS and v.ndim == 1 and v.shape[0] == x.shape[-1]) for v in vectors)


def _elementwise_module() -> Any:
    """The native module where this call may use it and it has this family (a library
    built from sources older than the family lacks it), else None."""
    module = native.kernels()
    return module if module is not None and hasattr(module, "rms_norm") else None


def _rms_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    mlx_kernel = GENERIC_KERNELS["mlx.rms_norm"](props, result_dtypes)
    eps = float_of(props, "eps")

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        weight = operands[1] if len(operands) > 1 else None
        module = _elementwise_module()
        if module is None or not _covers(x, weight):
            return mlx_kernel(operands)
        return (module.rms_norm(x, weight, eps),)

    return run


def _layer_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    mlx_kernel = GENERIC_KERNELS["mlx.layer_norm"](props, result_dtypes)
    eps = float_of(props, "eps")
    _, has_weight, has_bias = segments_of(props)
    bias_at = 1 + has_weight

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        weight = operands[1] if has_weight else None
        bias = operands[bias_at] if has_bias else None
        module = _elementwise_module()
        if module is None or not _covers(x, weight, bias):
            return mlx_kernel(operands)
        return (module.layer_norm(x, weight, bias, eps),)

    return run


def _softmax(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    mlx_kernel = GENERIC_KERNELS["mlx.softmax"](props, result_dtypes)
    axes = ints_of(props, "axes")
    precise = flag_of(props, "precise")
    if len(axes) != 1:
        return mlx_kernel

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        module = _elementwise_module()
        if module is None or not _covers(x) or axes[0] not in (-1, x.ndim - 1):
            return mlx_kernel(operands)
        return (module.softmax(x, precise),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "mlx.rms_norm": _rms_norm,
    "mlx.layer_norm": _layer_norm,
    "mlx.softmax": _softmax,
}
"""The CPU's normalization kernels, in place of the generic ones."""
