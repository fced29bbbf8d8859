"""`fold-dequantize-into-take`: rows taken from a dequantized table →
`quantized_take`, dequantizing only the rows picked."""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlxir.dialects import mlx
from mlxir.transforms.matching import erase_if_unused


class FoldDequantizeIntoTake(RewritePattern):
    """`take(dequantize(w), indices, axis 0)` → `quantized_take(w, indices)`: only the
    rows picked are dequantized (an embedding lookup)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TakeOp, rewriter: PatternRewriter) -> None:
        dequantize = op.input.owner
        if not isinstance(dequantize, mlx.DequantizeOp) or op.axis is None:
            return
        if op.axis.value.data not in (0, -2):
            return
        taken = mlx.QuantizedTakeOp(
            dequantize.w,
            dequantize.scales,
            dequantize.biases,
            op.indices,
            dequantize.group_size.value.data,
            dequantize.bits.value.data,
            dequantize.mode.data,
            op.result.type,
        )
        taken.location = op.location
        source = op.input
        rewriter.replace(op, [taken])
        erase_if_unused(source, rewriter)
