"""`cpu-float32-attention`: float16/bfloat16 attention computed in float32 on the CPU."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    LocationAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, shape_of

_LOW_PRECISION = (Float16Type, BFloat16Type)


def _as_float32(value: SSAValue, rewriter: PatternRewriter, location: LocationAttr) -> SSAValue:
    cast = mlx.AstypeOp(value, TensorType(Float32Type(), shape_of(value)))
    cast.location = location
    rewriter.insert(cast)
    return cast.result


class Float32Attention(RewritePattern):
    """`scaled_dot_product_attention` on float16/bfloat16 q, k, v → the same attention
    on their float32 casts, its result cast back. MLX's CPU has no attention kernel:
    it composes one in the operands' dtype, rounding the scores and the softmax's
    probabilities to 16 bits, where torch's CPU kernel and MLX's GPU kernels keep them
    in float32. An additive mask is cast with them (exactly: float32 holds every
    float16/bfloat16 value); a bool mask stays. Only the result's rounding to the
    operands' dtype remains, as in torch's kernel."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: mlx.ScaledDotProductAttentionOp, rewriter: PatternRewriter
    ) -> None:
        dtype = dtype_of(op.query)
        if not isinstance(dtype, _LOW_PRECISION):
            return
        query, key, value = (
            _as_float32(v, rewriter, op.location) for v in (op.query, op.key, op.value)
        )
        mask = op.mask
        if mask is not None and dtype_of(mask) == dtype:
            mask = _as_float32(mask, rewriter, op.location)
        attention = mlx.ScaledDotProductAttentionOp(
            query,
            key,
            value,
            TensorType(Float32Type(), shape_of(op.result)),
            scale=op.scale.value.data,
            mask=mask,
            mask_mode=op.mask_mode.data if op.mask_mode is not None else None,
            zero_masked_rows=op.zero_masked_rows is not None,
        )
        back = mlx.AstypeOp(attention.result, op.result.type)
        attention.location = back.location = op.location
        rewriter.replace(op, [attention, back])


@dataclass(frozen=True)
class CpuFloat32AttentionPass(ModulePass):
    """CPU target: float16/bfloat16 attention computed in float32.

    MLX's CPU rounds its scores to 16 bits (`Float32Attention`)."""

    name = "cpu-float32-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Float32Attention(), apply_recursively=False).rewrite_module(op)
