"""`unrepeat-kv`: grouped-query attention on un-repeated K/V (HF's `repeat_kv`
removed in front of SDPA, which broadcasts KV heads itself)."""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlxir.dialects import mlx
from mlxir.dialects.common import ints, rank_of, shape_of


def _unrepeated_heads(value: SSAValue) -> SSAValue | None:
    """HF's `repeat_kv`: `reshape(broadcast_to(expand_dims(kv, [2]), [B, H, g, L, D]),
    [B, H*g, L, D])` → `kv` (MLX's SDPA takes fewer KV heads natively)."""
    reshape = value.owner
    if not isinstance(reshape, mlx.ReshapeOp):
        return None
    broadcast = reshape.input.owner
    if not isinstance(broadcast, mlx.BroadcastToOp):
        return None
    expand = broadcast.input.owner
    if not isinstance(expand, mlx.ExpandDimsOp) or list(ints(expand.axes)) != [2]:
        return None
    kv = expand.input
    if rank_of(kv) != 4 or rank_of(value) != 4:
        return None
    kv_shape, out_shape = shape_of(kv), shape_of(value)
    if DYNAMIC_INDEX in (kv_shape[1], out_shape[1]) or out_shape[1] % kv_shape[1]:
        return None
    return kv


class UnrepeatKV(RewritePattern):
    """Grouped-query attention runs on un-repeated K/V: MLX's SDPA broadcasts KV heads."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ScaledDotProductAttentionOp, rewriter: PatternRewriter) -> None:
        key, value = _unrepeated_heads(op.key), _unrepeated_heads(op.value)
        if key is None or value is None:
            return
        new = mlx.ScaledDotProductAttentionOp.build(
            operands=[op.query, key, value, [op.mask] if op.mask is not None else []],
            result_types=[op.result.type],
            properties=dict(op.properties),
        )
        new.location = op.location
        rewriter.replace(op, new)
