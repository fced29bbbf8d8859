"""Convolutions on the CPU: `mlx.conv_general` and `mlx.conv_bias_activation` (a
convolution, a per-channel bias, then relu, relu6 or silu), chosen per call.

A depthwise convolution (one input and one output channel per group: weight
`[C, *k, 1]`, groups == C), 1-D or 2-D, without input dilation or flip, runs:
- where the native kernels run (`native.kernels()`), float32/float16/bfloat16, the
  native `depthwise_conv2d`/`depthwise_conv1d`, bias and activation included: one
  direct pass over the channels-last input, each output written once;
- elsewhere (the library missing or turned off, an `.mlxfn` export, which must name
  MLX's primitives only, float64), the tap-by-tap form built here with MLX's ops:
  `pad`, then per kernel tap a strided slice times the tap's `[C]` weights, summed
  (what the `cpu-depthwise-conv` pass, `transforms/depthwise_conv.py`, writes into a
  program, in the same order: the same bits), then the bias and the activation.
Any other convolution is `mx.conv_general`, then the bias and the activation as the
unfused ops compute them on the CPU (its `sigmoid` the polynomial one of
`polynomial.py` on enough values).

Measured on this machine (2-vCPU Zen 5, batch 1, float32, padding k // 2, ms, median
of 11 calls each evaluated alone, the four alternating in one process): MLX's
`mx.conv2d(groups=C)`, the taps, and the native kernel on 1 and 2 threads:

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
12 µs a call), and the taps beat MLX's grouped loop on every one, so there is no
threshold. The native values are within 1e-5 of the output's magnitude of the float64
result, as MLX's own are (chains of fused multiply-adds: not MLX's bits);
float16/bfloat16 are summed, biased and activated in float32 and rounded once, where
the composition rounds after each op.

The choice is made per call, not at compile time: the CPU target's
`cpu-fuse-conv-epilogue` forms `mlx.conv_bias_activation` and leaves the convolution
whole, so a program compiled once takes the native kernel where this process has it
and the taps where it does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.evaluator.linalg import activations
from mlxir.evaluator.registry import (
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    flag_of,
    int_of,
    ints_of,
)
from mlxir.runtime.cpu import native, polynomial

_NATIVE_FLOATS = (mx.float32, mx.float16, mx.bfloat16)


def depthwise_taps(
    x: mx.array, w: mx.array, stride: Sequence[int], low: Sequence[int], high: Sequence[int], dilation: Sequence[int]
) -> mx.array:
    """The depthwise convolution of channels-last `x` by `w` `[C, *k, 1]`: `x` padded,
    then for each kernel tap `t` (row-major) the padded input's strided view at `t`'s
    offset times `w[:, t]`, summed in tap order."""
    spatial = x.ndim - 2
    if any(low) or any(high):
        x = mx.pad(x, [(0, 0), *zip(low, high, strict=True), (0, 0)])
    kernel = w.shape[1:-1]
    out = [(x.shape[1 + a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in range(spatial)]
    total: mx.array | None = None
    for tap in itertools.product(*(range(k) for k in kernel)):
        window = tuple(
            slice(tap[a] * dilation[a], tap[a] * dilation[a] + stride[a] * (out[a] - 1) + 1, stride[a])
            for a in range(spatial)
        )
        scaled = x[(slice(None), *window, slice(None))] * w[(slice(None), *tap, 0)]
        total = scaled if total is None else total + scaled
    assert total is not None  # a kernel has at least one tap
    return total


def _convolution(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Either op: operands `x`, `w` and, for `conv_bias_activation`, maybe a bias."""
    conv = GENERIC_KERNELS["mlx.conv_general"](props, result_dtypes)
    activation = str(props.get("activation", "none"))
    sigmoid = polynomial.KERNELS["mlx.sigmoid"]({}, result_dtypes)
    activate = activations(lambda y: sigmoid([y])[0])[activation]

    def epilogue(y: mx.array, operands: Sequence[Any]) -> Sequence[Any]:
        if len(operands) > 2:
            y = y + operands[2]
        return (activate(y),)

    def composed(operands: Sequence[Any]) -> Sequence[Any]:
        return epilogue(conv(operands[:2])[0], operands)

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
        return composed

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, w = operands[0], operands[1]
        bias = operands[2] if len(operands) > 2 else None
        if (
            not mx.issubdtype(x.dtype, mx.floating)
            or x.ndim != spatial + 2
            or x.size == 0
            or groups != x.shape[-1]
            or w.shape[0] != groups
            or w.shape[-1] != 1
            or any(
                x.shape[1 + a] + low[a] + high[a] < dilation[a] * (w.shape[1 + a] - 1) + 1 for a in range(spatial)
            )
        ):
            # Not depthwise, or MLX's error for a kernel larger than the padded input.
            return composed(operands)
        module = native.kernels()  # per call: None inside an export
        if (
            module is not None
            # A library built from sources older than this family (a stale in-place build).
            and hasattr(module, "depthwise_conv2d")
            and x.dtype in _NATIVE_FLOATS
            and w.dtype == x.dtype
            and (bias is None or bias.dtype == x.dtype)
        ):
            return (_native(module, x, w, stride, low, high, dilation, bias, activation),)
        return epilogue(depthwise_taps(x, w, stride, low, high, dilation), operands)

    return run


def _native(
    module: Any,
    x: mx.array,
    w: mx.array,
    stride: Sequence[int],
    low: Sequence[int],
    high: Sequence[int],
    dilation: Sequence[int],
    bias: mx.array | None,
    activation: str,
) -> mx.array:
    if len(stride) == 1:
        return module.depthwise_conv1d(
            x, w, stride=stride[0], padding_lo=low[0], padding_hi=high[0], dilation=dilation[0],
            bias=bias, activation=activation,
        )
    return module.depthwise_conv2d(
        x, w, stride=list(stride), padding_lo=list(low), padding_hi=list(high), dilation=list(dilation),
        bias=bias, activation=activation,
    )


KERNELS: dict[str, KernelFactory] = {
    "mlx.conv_general": _convolution,
    "mlx.conv_bias_activation": _convolution,
}
"""The CPU's convolution kernels, in place of the generic ones."""
