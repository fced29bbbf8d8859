"""Lowering of torchao's `dequantize_affine` (docs/semantics.md §4).

A torchao weight (`IntxWeightOnlyConfig`: integers `q` in `[quant_min, quant_max]`,
per-group `scale` and `zero_point` along the rows) is `(q - zero_point) * scale`.
When MLX can hold the scheme, the lowering converts it at compile time into MLX's
affine layout and emits `mlx.dequantize`, which `fold-dequantize-into-matmul` and
`fold-dequantize-into-take` then turn into MLX's quantized kernels:

- packed `w`: `q - quant_min`, in `[0, 2^bits)`, packed as `mx.quantize` packs;
- `scales`: torchao's scales, unchanged;
- `biases`: `(quant_min - zero_point) * scale`, rounded once to the scales' type;

so `w * scales + biases` is torchao's `(q - zero_point) * scale` but for MLX's
rounding of the product and the sum (within 1 ulp of the larger of
`(q - quant_min) * scale` and the bias). `bits` is the fewest MLX has that hold
`quant_max - quant_min + 1` values: int4 is 4 bits, int7 8.

Otherwise it keeps torchao's exact arithmetic in floating point, and warns once per
weight saying why (`TorchaoSchemeWarning`). That runs at every call, unless
`fold-constant-weights` computes a small weight once at compile time.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    TORCH_DTYPES,
    AtenLowering,
    Emitter,
    LoweringError,
    tensor_of,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.aten import blocked_shapes
from mlxir.dialects.common import DYNAMIC, dtype_of, ints, is_float, is_integer, shape_of
from mlxir.support import dtypes
from mlxir.support.locations import source_location
from mlxir.transforms.constant_weights import (
    add_global,
    array_of_constant,
    drop_unread,
    weight_global,
)


class TorchaoSchemeWarning(UserWarning):
    """A torchao weight MLX's quantized kernels cannot hold: it is dequantized in
    floating point exactly as torchao does."""


@dataclass(frozen=True)
class MlxLayout:
    """A torchao weight in MLX's affine layout."""

    packed: np.ndarray
    scales: np.ndarray
    biases: np.ndarray
    bits: int
    group_size: int


def pack(values: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned `bits`-bit integers `[rows, K]` packed as `mx.quantize` packs them: a
    little-endian bit stream per row, `bits` per element, read as `uint32` words.
    `K * bits` must be a multiple of 32."""
    rows, k = values.shape
    shifts = np.arange(bits, dtype=np.uint32)
    planes = ((values[..., None].astype(np.uint32) >> shifts) & 1).astype(np.uint8)
    stream = np.packbits(planes.reshape(rows, k * bits), axis=1, bitorder="little")
    return np.ascontiguousarray(stream).view("<u4")


def _values(read: SSAValue) -> np.ndarray:
    """A weight read's values: integers as int64, floats as float64."""
    import mlx.core as mx

    array = array_of_constant(cast(Operation, read.owner))
    if array.dtype in (mx.float16, mx.bfloat16, mx.float32):
        return np.array(array.astype(mx.float32)).astype(np.float64)
    return np.array(array).astype(np.int64 if is_integer(dtype_of(read)) else np.float64)


def _payload(values: np.ndarray, dtype: Attribute) -> np.ndarray:
    """Float values as a global of `dtype` stores them (bfloat16 as its bits)."""
    import mlx.core as mx

    if dtype == BFloat16Type():
        rounded = mx.array(values.astype(np.float32)).astype(mx.bfloat16)
        return cast(np.ndarray, np.array(rounded.view(mx.uint16)))
    found = dtypes.of_ir(dtype)
    assert found is not None and found.numpy is not None
    return values.astype(found.numpy)


def mlx_layout(op: aten.DequantizeAffineOp) -> MlxLayout | str:
    """`op`'s weight in MLX's layout, or why MLX cannot hold it."""
    shape, blocks = shape_of(op.input), ints(op.block_size)
    operands = [op.input, op.scale, *([op.zero_point] if op.zero_point is not None else [])]
    if any(weight_global(v) is None for v in operands):
        return "its integers, scales or zero points are not constants of the program"
    if len(shape) != 2 or DYNAMIC in shape or blocks[0] != 1:
        return f"MLX quantizes rows of a matrix in groups; block_size {list(blocks)} is not [1, group]"
    rows, k = shape
    group = blocks[1]
    if group not in mlx.QUANTIZATION_GROUP_SIZES:
        return (
            f"MLX quantizes in groups of {', '.join(map(str, mlx.QUANTIZATION_GROUP_SIZES))}, "
            f"not {group}" + (" (per-axis)" if group == k else "")
        )
    out = dtype_of(op.result)
    if dtype_of(op.scale) != out:
        return f"its scales are {dtype_of(op.scale)}, its output {out}: MLX's scales are the output's type"
    low, high = op.quant_min.value.data, op.quant_max.value.data
    fitting = [b for b in mlx.QUANTIZATION_BITS if 2**b >= high - low + 1]
    if not fitting:
        return f"its range [{low}, {high}] needs more than {max(mlx.QUANTIZATION_BITS)} bits"
    bits = fitting[0]
    if k * bits % 32:
        return f"its rows of {k} {bits}-bit values do not fill whole 32-bit words"
    q = _values(op.input)
    if q.min() < low or q.max() > high:
        return f"it holds integers outside its range [{low}, {high}]"
    scale = _values(op.scale).reshape(rows, k // group)
    zero = _values(op.zero_point).reshape(rows, k // group) if op.zero_point is not None else 0.0
    return MlxLayout(
        packed=pack((q - low).astype(np.uint32), bits),
        scales=_payload(scale, out),
        biases=_payload((low - zero) * scale, out),
        bits=bits,
        group_size=group,
    )


def _dequantize_exactly(e: Emitter, op: aten.DequantizeAffineOp) -> SSAValue:
    """torchao's own arithmetic: `(q.to(out) - zero_point.to(out)) * scale` per block,
    the product in the promoted type of `out` and the scales, then cast to `out`."""
    import torch

    shape = shape_of(op.input)
    if DYNAMIC in shape:
        raise LoweringError("dequantize_affine needs a static shape")
    viewed, per_block = blocked_shapes(shape, ints(op.block_size))
    out = dtype_of(op.result)
    x = e.astype(e.reshape(op.input, viewed), out)
    if op.zero_point is not None:
        x = e.binary("subtract", x, e.astype(e.reshape(op.zero_point, per_block), out))
    scale_dtype = dtype_of(op.scale)
    promoted = out
    if is_float(scale_dtype):
        as_torch = torch.promote_types(TORCH_DTYPES[out], TORCH_DTYPES[scale_dtype])
        promoted = next(ir for ir, t in TORCH_DTYPES.items() if t == as_torch)
    product = e.binary(
        "multiply", e.astype(x, promoted), e.astype(e.reshape(op.scale, per_block), promoted)
    )
    return e.astype(e.reshape(product, shape), out)


def _describe(op: aten.DequantizeAffineOp) -> str:
    found = weight_global(op.input)
    scheme = f"{op.quant_min.value.data}..{op.quant_max.value.data}, block_size {list(ints(op.block_size))}"
    if found is None:
        return f"a torchao weight computed in the program ({scheme})"
    # torchao's tensor subclass exports as a parametrization: `up.parametrizations.weight.original0`
    name = found.sym_name.data
    parametrized = re.fullmatch(r"(.*)\.parametrizations\.(\w+)\.original\d+", name)
    if parametrized:
        name = f"{parametrized.group(1)}.{parametrized.group(2)}"
    return f"torchao weight '{name}' ({scheme})"


class LowerDequantizeAffine(AtenLowering):
    OPS = (aten.DequantizeAffineOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.DequantizeAffineOp, rewriter: PatternRewriter) -> None:
        layout = mlx_layout(op)
        if isinstance(layout, str):
            message = f"{_describe(op)} is not run on MLX's quantized kernels: {layout}"
            location = source_location(op.location)
            if location is not None:  # the user's line that uses the weight
                warnings.warn_explicit(
                    message, TorchaoSchemeWarning, location.filename.data, location.line.data
                )
            else:
                warnings.warn(message, TorchaoSchemeWarning, stacklevel=2)
            self.replace(op, rewriter, lambda e: _dequantize_exactly(e, op))
            return
        source = weight_global(op.input)
        assert source is not None
        name, kind, out = source.sym_name.data, source.kind.data, dtype_of(op.result)
        ui32 = IntegerType(32, Signedness.UNSIGNED)
        packed = add_global(op, f"{name}.mlx_q{layout.bits}", layout.packed, TensorType(ui32, list(layout.packed.shape)), kind)
        scales_type = TensorType(out, list(layout.scales.shape))
        scales = add_global(op, f"{name}.mlx_scales", layout.scales, scales_type, kind)
        biases = add_global(op, f"{name}.mlx_biases", layout.biases, scales_type, kind)
        old = list(op.operands)
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.DequantizeOp(
                    packed.result,
                    scales.result,
                    biases.result,
                    layout.group_size,
                    layout.bits,
                    "affine",
                    tensor_of(out, shape_of(op.result)),
                )
            ),
        )
        for read in old:
            drop_unread(read, rewriter)


PATTERNS = (LowerDequantizeAffine(),)
