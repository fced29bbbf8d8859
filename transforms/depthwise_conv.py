"""`cpu-depthwise-conv`: a depthwise convolution as a sum of shifted views of its
padded input, each scaled by one tap's per-channel weights.

MLX's CPU computes a grouped convolution with one channel per group in a generic
loop. The same convolution written as `pad`, then per kernel tap a strided `slice`
times the tap's `[C]` weights, summed, is elementwise work MLX's CPU does at memory
speed. Measured on this machine (one thread, channels-last f32, batch 1, ms, median
of 10; MLX conv against the taps; both give the same bits):

| channels, size, kernel, stride | `mx.conv_general` | taps |
|---|---|---|
| 32, 112², 3x3, 1 | 14.7 | 3.6 |
| 96, 112², 3x3, 2 | 9.0 | 3.3 |
| 144, 56², 3x3, 1 | 13.5 | 3.6 |
| 960, 7², 3x3, 1 | 1.6 | 0.6 |
| 240, 28², 5x5, 1 | 13.8 | 4.0 |
| 672, 14², 5x5, 2 | 2.8 | 2.0 |
| 40, 56², 7x7, 1 | 18.8 | 5.2 |
| 320, 7², 7x7, 1 | 2.6 | 1.9 |

(Eager torch's direct kernel takes 0.15-0.5 ms on the 3x3 shapes: the taps are
elementwise passes over memory, one multiply and one add per tap, where its kernel
makes one.) Every shape measured was faster as taps, so there is no threshold: every
depthwise convolution with static spatial sizes is rewritten.

A pass run on request, no longer in the CPU target: the CPU backend now makes this
choice per call (`runtime/cpu/convolution.py`), running the native depthwise kernel
where the process has it (5-20x faster than these taps) and the same taps, built at
run time, where it does not. A program rewritten here runs the taps everywhere."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, shape_of


class DepthwiseConvAsTaps(RewritePattern):
    """`conv_general(x, w)` with one input and one output channel per group (weight
    `[C, *k, 1]`), no input dilation and static spatial sizes → `pad(x)`, then the sum
    over the kernel's taps `t` of `slice(padded at t, stride) * w[:, t]`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ConvGeneralOp, rewriter: PatternRewriter) -> None:
        x_shape, w_shape, out_shape = shape_of(op.input), shape_of(op.weight), shape_of(op.result)
        channels = x_shape[-1]
        spatial = len(x_shape) - 2
        if (
            channels == DYNAMIC_INDEX
            or op.groups.value.data != channels
            or w_shape[0] != channels
            or w_shape[-1] != 1
            or op.flip is not None
            or any(d != 1 for d in ints(op.input_dilation))
            or DYNAMIC_INDEX in x_shape[1:]
        ):
            return
        element = dtype_of(op.result)
        kernel = w_shape[1:-1]
        low, high = ints(op.padding_lo), ints(op.padding_hi)
        stride, dilation = ints(op.stride), ints(op.kernel_dilation)
        new: list[Operation] = []

        def add(created: Operation) -> SSAValue:
            created.location = op.location
            new.append(created)
            return created.results[0]

        padded_shape = [x_shape[0], *(x_shape[1 + a] + low[a] + high[a] for a in range(spatial)), channels]
        padded = op.input
        if any(low) or any(high):
            padded = add(mlx.PadOp(op.input, [0, *low, 0], [0, *high, 0], 0.0, TensorType(element, padded_shape)))
        # The weights tap-major, `[taps, C]`: row t is tap t's per-channel scale.
        taps = math.prod(kernel)
        moved = add(mlx.TransposeOp(op.weight, [*range(1, spatial + 1), 0, spatial + 1], TensorType(element, [*kernel, channels, 1])))
        table = add(mlx.ReshapeOp(moved, [taps, channels], TensorType(element, [taps, channels])))
        batch: SSAValue | int = x_shape[0]
        if batch == DYNAMIC_INDEX:
            batch = add(mlx.DimOp(op.input, 0))
        total: SSAValue | None = None
        for index, tap in enumerate(itertools.product(*(range(k) for k in kernel))):
            starts = [tap[a] * dilation[a] for a in range(spatial)]
            stops = [starts[a] + stride[a] * (out_shape[1 + a] - 1) + 1 for a in range(spatial)]
            view = add(
                mlx.SliceOp(padded, [0, *starts, 0], [batch, *stops, channels], [1, *stride, 1], op.result.type)
            )
            row = add(mlx.SliceOp(table, [index, 0], [index + 1, channels], [1, 1], TensorType(element, [1, channels])))
            scaled = add(mlx.BINARY_OP_CLASSES["multiply"](view, row, op.result.type))
            total = scaled if total is None else add(mlx.BINARY_OP_CLASSES["add"](total, scaled, op.result.type))
        assert total is not None  # a kernel has at least one tap
        rewriter.replace(op, new, [total])


@dataclass(frozen=True)
class CpuDepthwiseConvPass(ModulePass):
    """Depthwise convolutions as sums of shifted views scaled per tap (on request).

    MLX's CPU computes a grouped convolution in a generic loop (`DepthwiseConvAsTaps`);
    the CPU backend builds the same taps per call where its native kernel cannot run."""

    name = "cpu-depthwise-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DepthwiseConvAsTaps(), apply_recursively=False).rewrite_module(op)
