"""`fold-norm-affine`: a norm's per-feature weight and bias folded into the norm."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, rank_of, shape_of
from mlxir.transforms.matching import replace_keeping_location


def _per_feature(value: SSAValue, result: SSAValue) -> bool:
    return rank_of(value) == 1 and shape_of(value)[0] == shape_of(result)[-1] and dtype_of(
        value
    ) == dtype_of(result)


class FoldNormAffine(RewritePattern):
    """`norm(x) * w` → `norm(x, w)` and `layer_norm(x, w) + b` → `layer_norm(x, w, b)`,
    for a per-feature `w`/`b` and a norm with no other user."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        is_mul = (isinstance(op, mlx.BinaryOp) and op.name == "mlx.multiply")
        if not (is_mul or (isinstance(op, mlx.BinaryOp) and op.name == "mlx.add")):
            return
        assert isinstance(op, mlx.BinaryOp)
        for norm_value, param in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            norm = norm_value.owner
            if not isinstance(norm, mlx.RmsNormOp | mlx.LayerNormOp):
                continue
            if len(list(norm_value.uses)) != 1 or not _per_feature(param, op.result):
                continue
            if norm_value.type != op.result.type:
                continue
            if is_mul and norm.weight is None and (
                isinstance(norm, mlx.RmsNormOp) or norm.bias is None
            ):
                operands = [norm.input, [param]] + ([[]] if isinstance(norm, mlx.LayerNormOp) else [])
            elif not is_mul and isinstance(norm, mlx.LayerNormOp) and norm.bias is None:
                operands = [norm.input, [norm.weight] if norm.weight is not None else [], [param]]
            else:
                continue
            replace_keeping_location(
                op,
                type(norm).build(
                    operands=operands,
                    result_types=[op.result.type],
                    properties={"eps": norm.eps},
                ),
                rewriter,
            )
            return
