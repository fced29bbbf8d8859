"""Lowerings of the neural-network ops: layer, RMS, batch and group norms, and scaled
dot-product attention."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import Float64Type, FloatAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    TORCH_DTYPES,
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    arange,
    numel,
    tensor_of,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import DYNAMIC, dtype_of, ints, is_bool, rank_of, shape_of


def _flatten_trailing(e: Emitter, x: SSAValue, count: int) -> SSAValue:
    if count == 1:
        return x
    dims = e.dims(x)
    return e.reshape(x, [*dims[:-count], numel(e, dims[-count:])])


def _eps_or_default(eps: FloatAttr | None, dtype: Attribute) -> float:
    if eps is not None:
        return eps.value.data
    return float(torch.finfo(TORCH_DTYPES[dtype]).eps)


class LowerNorm(AtenLowering):
    """layer_norm / rms_norm over trailing dims → MLX's fast kernels over the last axis."""

    OPS = (aten.LayerNormOp, aten.RmsNormOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LayerNormOp | aten.RmsNormOp, rewriter: PatternRewriter) -> None:
        count = len(ints(op.normalized_shape))
        dtype = dtype_of(op.result)
        eps = _eps_or_default(op.eps, dtype)
        is_layer = isinstance(op, aten.LayerNormOp)

        def build(e: Emitter) -> SSAValue:
            x = _flatten_trailing(e, e.astype(op.input, dtype), count)
            params = [op.weight] + ([op.bias] if isinstance(op, aten.LayerNormOp) else [])
            flat = [
                [e.reshape(e.astype(p, dtype), [math.prod(ints(op.normalized_shape))])] if p is not None else []
                for p in params
            ]
            op_cls = mlx.LayerNormOp if is_layer else mlx.RmsNormOp
            normed = e.emit(
                op_cls.build(
                    operands=[x, *flat],
                    result_types=[x.type],
                    properties={"eps": FloatAttr(eps, Float64Type())},
                )
            )
            return e.reshape(normed, e.dims(op.input)) if count > 1 else normed

        self.replace(op, rewriter, build)


def _channel_param(e: Emitter, param: SSAValue, rank: int, dtype: Attribute) -> SSAValue:
    """A per-channel `[C]` vector shaped `[C, 1, ...]` to broadcast against `[N, C, ...]`."""
    value = e.astype(param, dtype)
    return e.expand_dims(value, list(range(1, rank - 1))) if rank > 2 else value


class LowerBatchNorm(AtenLowering):
    OPS = (aten.BatchNormOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.BatchNormOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        rank = rank_of(op.input)

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            mean = _channel_param(e, op.running_mean, rank, dtype)
            var = _channel_param(e, op.running_var, rank, dtype)
            scale = e.unary("rsqrt", e.binary("add", var, e.constant(op.eps.value.data, dtype)))
            if op.weight is not None:
                scale = e.binary("multiply", scale, _channel_param(e, op.weight, rank, dtype))
            out = e.binary("multiply", e.binary("subtract", x, mean), scale)
            if op.bias is not None:
                out = e.binary("add", out, _channel_param(e, op.bias, rank, dtype))
            return out

        self.replace(op, rewriter, build)


class LowerGroupNorm(AtenLowering):
    OPS = (aten.GroupNormOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GroupNormOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        rank = rank_of(op.input)
        groups = op.num_groups.value.data
        eps = op.eps.value.data

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            dims = e.dims(x)
            grouped = e.reshape(x, [dims[0], groups, e.floordiv(numel(e, dims[1:]), groups)])
            mean = e.reduce("mean", grouped, [2], True, dtype)
            centered = e.binary("subtract", grouped, mean)
            var = e.reduce("mean", e.unary("square", centered), [2], True, dtype)
            normed = e.binary(
                "multiply", centered, e.unary("rsqrt", e.binary("add", var, e.constant(eps, dtype)))
            )
            out = e.reshape(normed, dims)
            if op.weight is not None:
                out = e.binary("multiply", out, _channel_param(e, op.weight, rank, dtype))
            if op.bias is not None:
                out = e.binary("add", out, _channel_param(e, op.bias, rank, dtype))
            return out

        self.replace(op, rewriter, build)


class LowerAttention(AtenLowering):
    """SDPA → `mlx.scaled_dot_product_attention`. PyTorch's `is_causal` is upper-left
    aligned and MLX's `causal` lower-right: they agree only when the query and key
    lengths are provably equal; otherwise an explicit `j <= i` mask is built. A mask
    of the program's own is marked `zero_masked_rows`: PyTorch zeroes a row whose
    keys are all masked, and the lowering alone must keep that meaning."""

    OPS = (aten.ScaledDotProductAttentionOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ScaledDotProductAttentionOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        head_dim = shape_of(op.query)[-1]
        if op.scale is not None:
            scale = op.scale.value.data
        elif head_dim != DYNAMIC:
            scale = 1 / math.sqrt(head_dim)
        else:
            raise LoweringError(f"{op.name}: a dynamic head dim needs an explicit scale")
        rank = rank_of(op.query)
        if rank < 3:
            raise LoweringError(f"{op.name}: attention needs a head or batch dim (3-D or more)")
        leading = [shape_of(t)[: rank - 3] for t in (op.query, op.key, op.value)]
        if rank > 4 and (
            any(rank_of(t) != rank for t in (op.key, op.value)) or any(lead != leading[0] for lead in leading)
        ):
            raise LoweringError(f"{op.name}: query, key and value must have the same batch dims")

        def build(e: Emitter) -> SSAValue:
            q, k, v = (e.astype(t, dtype) for t in (op.query, op.key, op.value))
            batch_dims = e.dims(q)[: rank - 3]
            if rank == 3:
                q, k, v = (e.expand_dims(t, [0]) for t in (q, k, v))
            elif rank > 4:  # windows of heads (Twins, Hiera): the batch dims become one
                q, k, v = (_collapse_batch_dims(e, t, rank - 3) for t in (q, k, v))
            mask: SSAValue | None = op.attn_mask
            mask_mode: str | None = None
            if mask is not None:
                if not is_bool(dtype_of(mask)):
                    mask = e.astype(mask, dtype)
                if rank == 3 and rank_of(mask) == 3:
                    mask = e.expand_dims(mask, [0])
                elif rank > 4:
                    mask = _batch_collapsed_mask(e, mask, batch_dims)
            elif op.is_causal is not None:
                lq, lk = shape_of(q)[2], shape_of(k)[2]
                same_length = (lq == lk and lq != DYNAMIC) or _same_runtime_length(op.query, op.key)
                if same_length:
                    mask_mode = "causal"
                else:
                    mask = _upper_left_causal_mask(e, q, k)
            out = e.emit(
                mlx.ScaledDotProductAttentionOp(
                    q,
                    k,
                    v,
                    tensor_of(dtype, [*shape_of(q)[:-1], shape_of(v)[-1]]),
                    scale=scale,
                    mask=mask,
                    mask_mode=mask_mode,
                    zero_masked_rows=op.attn_mask is not None,
                )
            )
            if rank == 3:
                return e.squeeze(out, [0])
            if rank > 4:
                return e.reshape(out, [*batch_dims, *e.dims(out)[1:]])
            return out

        self.replace(op, rewriter, build)


def _collapse_batch_dims(e: Emitter, value: SSAValue, count: int) -> SSAValue:
    """`value` with its first `count` dims made one."""
    dims = e.dims(value)
    batch: Size = 1
    for dim in dims[:count]:
        batch = e.mul(batch, dim)
    return e.reshape(value, [batch, *dims[count:]])


def _batch_collapsed_mask(e: Emitter, mask: SSAValue, batch_dims: Sequence[Size]) -> SSAValue:
    """A mask of attention whose batch dims were collapsed into one (`[B, H, L, S]`
    from `[*batch, H, L, S]`): its own batch dims broadcast to the query's first, unless
    they are all 1 (they then broadcast as one)."""
    count = len(batch_dims)
    mask = e.expand_dims(mask, list(range(count + 3 - rank_of(mask)))) if rank_of(mask) < count + 3 else mask
    dims = e.dims(mask)
    if all(isinstance(d, int) and d == 1 for d in dims[:count]):
        return e.reshape(mask, [1, *dims[count:]])
    mask = e.broadcast_to(mask, [*batch_dims, *dims[count:]])
    return _collapse_batch_dims(e, mask, count)


def _same_runtime_length(query: SSAValue, key: SSAValue) -> bool:
    """True when q and k are one SSA value (self-attention without a cache)."""
    return query is key


def _upper_left_causal_mask(e: Emitter, q: SSAValue, k: SSAValue) -> SSAValue:
    lq, lk = e.dim(q, 2), e.dim(k, 2)
    rows = arange(e, lq)
    cols = arange(e, lk)
    rows_col = e.expand_dims(rows, [1])
    cols_row = e.expand_dims(cols, [0])
    return e.binary("less_equal", cols_row, rows_col)


PATTERNS: tuple[AtenLowering, ...] = (
    LowerNorm(),
    LowerBatchNorm(),
    LowerGroupNorm(),
    LowerAttention(),
)
