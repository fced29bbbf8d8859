"""`fuse-bias-add`: `matmul(x, w) + b` → `addmm(b, x, w)` for constant `w` and `b`."""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlxir.dialects import mlx
from mlxir.transforms.constant_weights import weight_matrix
from mlxir.transforms.matching import bias_add_of


class FuseBiasAdd(RewritePattern):
    """`matmul(x, w) + b` → `addmm(b, x, w)` for a constant `w` `[K, N]` and bias `b`
    `[N]` (a biased linear). BLAS adds `b` in the GEMM: f32 results agree within
    rounding (1e-6 relative), f16/bf16 ones are rounded once instead of twice."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.BinaryOp, rewriter: PatternRewriter) -> None:
        if op.name != "mlx.add":
            return
        for product in (op.lhs, op.rhs):
            matmul = product.owner
            if not isinstance(matmul, mlx.MatmulOp) or weight_matrix(matmul.rhs) is None:
                continue
            found = bias_add_of(product)
            if found is None or found[0] is not op:
                continue
            bias = found[1]
            fused = mlx.AddmmOp.build(
                operands=[bias, matmul.lhs, matmul.rhs], result_types=[op.result.type]
            )
            fused.location = op.location
            rewriter.replace(op, fused)
            rewriter.erase(matmul)
            return
