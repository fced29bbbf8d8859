"""Convolutions on the CPU: the native kernels where they run (`native/kernels/`),
else the generic kernels (`evaluator/`).

A depthwise `mlx.conv_general` (one input and one output channel per group: weight
`[C, *k, 1]`, groups == C), 1-D or 2-D, float32/float16/bfloat16, without input
dilation or flip, runs the native `depthwise_conv2d`/`depthwise_conv1d`: one direct
pass over the channels-last input, each output written once, where MLX's CPU computes
it in a generic grouped loop. Measured on this machine (2-vCPU Zen 5, batch 1,
float32, padding k // 2, ms, median of 11 calls each evaluated alone, the four
alternating in one process): MLX's `mx.conv2d(groups=C)`, the tap-by-tap form the
`cpu-depthwise-conv` pass writes (pad, then per tap a strided slice times the tap's
weights, summed), and the native kernel on 1 and 2 threads:

| channels, size, kernel, stride | `mx.conv2d` | taps | native, 1 thread | 2 threads |
|---|---|---|---|---|
| 32, 112², 3x3, 1 | 8.7 | 2.9 | 0.41 | 0.33 |
| 96, 112², 3x3, 2 | 6.9 | 3.8 | 0.55 | 0.50 |
| 144, 56², 3x3, 1 | 10.0 | 7.8 | 0.47 | 0.42 |
| 576, 14², 3x3, 1 | 2.6 | 0.64 | 0.13 | 0.10 |
| 960, 7², 3x3, 1 | 1.1 | 0.29 | 0.07 | 0.06 |
| 240, 28², 5x5, 1 | 10.6 | 6.7 | 0.35 | 0.28 |
| 40, 56², 7x7, 1 | 12.8 | 4.6 | 0.41 | 0.37 |
| 320, 7², 7x7, 1 | 1.7 | 0.83 | 0.07 | 0.06 |

The native kernel won on every shape measured (down to `[1, 2, 2, 3]`: 11 against
12 µs a call), so every covered call takes it. Its values are within 1e-5 of the
output's magnitude of the float64 result, as MLX's own are (chains of fused
multiply-adds: not MLX's bits); float16/bfloat16 are summed in float32 and rounded
once, as MLX's are.

The CPU target's `cpu-depthwise-conv` pass rewrites every depthwise convolution of
static spatial size into the tap form at compile time, so such a program never asks
for this kernel; it runs where that pass did not (the generic target, dynamic sizes).
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
    int_of,
    ints_of,
)
from mlxir.runtime.cpu import native

_FLOATS = (mx.float32, mx.float16, mx.bfloat16)


def _conv_general(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    mlx_kernel = GENERIC_KERNELS["mlx.conv_general"](props, result_dtypes)
    stride = ints_of(props, "stride")
    low, high = ints_of(props, "padding_lo"), ints_of(props, "padding_hi")
    dilation = ints_of(props, "kernel_dilation")
    groups = int_of(props, "groups")
    spatial = len(stride)
    if (
        spatial not in (1, 2)
        or flag_of(props, "flip")
        or any(d != 1 for d in ints_of(props, "input_dilation"))
        or min((*low, *high), default=0) < 0
    ):
        return mlx_kernel

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, w = operands[0], operands[1]
        module = native.kernels()
        if (
            module is None
            # A library built from sources older than this family (a stale in-place build).
            or not hasattr(module, "depthwise_conv2d")
            or x.dtype not in _FLOATS
            or w.dtype != x.dtype
            or x.ndim != spatial + 2
            or x.size == 0
            or groups != x.shape[-1]
            or w.shape[0] != groups
            or w.shape[-1] != 1
            or any(
                x.shape[1 + a] + low[a] + high[a] < dilation[a] * (w.shape[1 + a] - 1) + 1 for a in range(spatial)
            )
        ):
            # MLX's own op, and its error for a kernel larger than the padded input.
            return mlx_kernel(operands)
        if spatial == 1:
            return (
                module.depthwise_conv1d(
                    x, w, stride=stride[0], padding_lo=low[0], padding_hi=high[0], dilation=dilation[0]
                ),
            )
        return (
            module.depthwise_conv2d(
                x, w, stride=list(stride), padding_lo=list(low), padding_hi=list(high), dilation=list(dilation)
            ),
        )

    return run


KERNELS: dict[str, KernelFactory] = {"mlx.conv_general": _conv_general}
"""The CPU's convolution kernels, in place of the generic ones."""
