"""Lowering of the complex-number ops: ATen's discrete Fourier transforms into MLX's
FFT primitive (`mlx.fftn`) and a scale, and the views between complex tensors and
their real pairs into `mlx.view` and a reshape.

MLX's forward transforms are unscaled and its inverses scaled by 1/n; ATen's `_fft_*`
compute the unscaled transform in either direction and then scale it by their
`normalization` (`fft_norm_mode`: 0 by 1, 1 by 1/sqrt(n), 2 by 1/n, n the number of
elements of the transformed signal). So an inverse is MLX's times n, times ATen's
scale; where the two cancel (an inverse by 1/n) nothing is multiplied."""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type, IntegerAttr, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    numel,
    tensor_of,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    dtype_of,
    int_array,
    ints,
    normalize_axes,
    rank_of,
    shape_of,
)

_F32 = Float32Type()


def _scale(e: Emitter, n: Size, normalization: int, inverse: bool) -> SSAValue | float | None:
    """The factor turning MLX's transform of a signal of `n` elements into ATen's with
    `normalization` (None: 1): a literal for a static `n`, else a float32 0-d tensor."""
    # n to the power: forward 0, -1/2, -1 by normalization; an inverse one more.
    power = -normalization / 2 + (1 if inverse else 0)
    if power == 0:
        return None
    if isinstance(n, int):
        return float(n) ** power
    size = e.astype(e.emit(mlx.FromIndexOp(e.index(n), tensor_of(aten.i64, []))), _F32)
    match power:
        case 1:
            return size
        case 0.5:
            return e.unary("sqrt", size)
        case -0.5:
            return e.unary("rsqrt", size)
        case _:  # -1
            return e.unary("reciprocal", size)


def _scaled(e: Emitter, value: SSAValue, factor: SSAValue | float | None) -> SSAValue:
    if factor is None:
        return value
    dtype = dtype_of(value)
    scale = e.astype(factor, dtype) if isinstance(factor, SSAValue) else e.constant(factor, dtype)
    return e.binary("multiply", value, scale)


class LowerFft(AtenLowering):
    """`_fft_r2c`, `_fft_c2c` and `_fft_c2r` → `mlx.fftn` and a scale. A one-sided real
    transform is MLX's `rfftn`, a two-sided one the complex transform of the input as
    complex64; a real inverse (`irfftn`) needs its last signal size static, MLX takes
    it as an option."""

    OPS = (aten.FftOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.FftOp, rewriter: PatternRewriter) -> None:
        axes = normalize_axes(ints(op.dims), rank_of(op.input))
        real_input = isinstance(op, aten.FftR2cOp)
        real_result = isinstance(op, aten.FftC2rOp)
        inverse = real_result or (isinstance(op, aten.FftC2cOp) and op.forward is None)
        rfft = real_input and op.onesided is not None
        last_size = shape_of(op.result)[axes[-1]]
        if real_result and last_size == DYNAMIC:
            raise LoweringError(
                f"{op.name}: the inverse real transform's last signal size must be static"
            )

        def build(e: Emitter) -> SSAValue:
            signal = op.result if real_result else op.input
            n = numel(e, [e.dim(signal, axis) for axis in axes])
            x = op.input
            if real_input and not rfft:
                x = e.astype(x, dtype_of(op.result))
            properties: dict[str, Attribute] = {"axes": int_array(axes)}
            if inverse:
                properties["inverse"] = UnitAttr()
            if rfft or real_result:
                properties["real"] = UnitAttr()
            if real_result:
                properties["last_size"] = IntegerAttr(last_size, i64)
            transformed = e.emit(
                mlx.FftnOp.build(operands=[x], result_types=[op.result.type], properties=properties)
            )
            return _scaled(e, transformed, _scale(e, n, op.normalization.value.data, inverse))

        self.replace(op, rewriter, build)


class LowerViewAsReal(AtenLowering):
    """`view_as_real(z)` `[..., n]` → MLX's view of the complex64 elements as float32
    pairs, `[..., 2n]`, split into `[..., n, 2]`."""

    OPS = (aten.ViewAsRealOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ViewAsRealOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            dims = e.dims(op.input)
            x = e.reshape(op.input, [1]) if not dims else op.input
            last = shape_of(x)[-1]
            pairs = tensor_of(_F32, [*shape_of(x)[:-1], DYNAMIC if last == DYNAMIC else 2 * last])
            return e.reshape(e.emit(mlx.ViewOp(x, pairs)), [*dims, 2])

        self.replace(op, rewriter, build)


class LowerViewAsComplex(AtenLowering):
    """`view_as_complex(x)` `[..., n, 2]` → `[..., 2n]` viewed as complex64 `[..., n]`."""

    OPS = (aten.ViewAsComplexOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ViewAsComplexOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            dims = e.dims(op.input)[:-1]
            pairs = e.reshape(op.input, [*dims[:-1], e.mul(dims[-1], 2)] if dims else [2])
            halves = [*shape_of(pairs)[:-1], shape_of(op.input)[-2] if dims else 1]
            viewed = e.emit(mlx.ViewOp(pairs, tensor_of(dtype_of(op.result), halves)))
            return e.reshape(viewed, dims)

        self.replace(op, rewriter, build)


PATTERNS: tuple[AtenLowering, ...] = (LowerFft(), LowerViewAsReal(), LowerViewAsComplex())
