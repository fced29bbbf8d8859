"""`transpose-before-norm`: `transpose(norm(x))` → `norm(transpose(x))` when the
last axis stays last, so that `split-heads-once` sees the heads' reshape/transpose."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, shape_of


class TransposeBeforeNorm(RewritePattern):
    """`transpose(norm(x), perm)` with `perm` keeping the last axis last →
    `norm(transpose(x, perm))`, for `rms_norm` and `layer_norm` (which normalize each
    last-axis row, wherever the row sits). Qwen3 normalizes q and k per head between
    the head reshape and the transpose; with the transpose first, `split-heads-once`
    sees its reshape/transpose pairs. MLX's kernels give the same bits either way (the
    rows are the same contiguous vectors)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        norm = op.input.owner
        if not isinstance(norm, mlx.RmsNormOp | mlx.LayerNormOp) or op.input.uses.get_length() != 1:
            return
        perm = list(ints(op.axes))
        if perm[-1] != len(perm) - 1:
            return
        x = norm.input
        moved_shape = [shape_of(x)[p] for p in perm]
        transpose = mlx.TransposeOp(x, perm, TensorType(dtype_of(x), moved_shape))
        moved = type(norm).create(
            operands=[transpose.result, *norm.operands[1:]],
            result_types=[op.result.type],
            properties=dict(norm.properties),
            attributes=dict(norm.attributes),
        )
        for new in (transpose, moved):
            new.location = op.location
        rewriter.insert(transpose, InsertPoint.before(op))
        rewriter.replace(op, moved)
        rewriter.erase(norm)
