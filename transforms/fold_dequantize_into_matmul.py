"""`fold-dequantize-into-matmul`: a product with a dequantized weight (or its
transpose) → `quantized_matmul` on the packed weight."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of
from mlxir.transforms.constant_weights import untransposed
from mlxir.transforms.matching import erase_if_unused
from mlxir.transforms.quantize import matmul_operands, replace_by_quantized_product


def _dequantized_matrix(value: SSAValue) -> tuple[mlx.DequantizeOp, bool] | None:
    """The `mlx.dequantize` a matmul operand is (or is the transpose of), and whether
    it is transposed."""
    matrix, transposed = untransposed(value)
    owner = matrix.owner
    return (owner, transposed) if isinstance(owner, mlx.DequantizeOp) else None


class FoldDequantizeIntoMatmul(RewritePattern):
    """`matmul(x, dequantize(w))`, or of its transpose (a `linear` weight), and the
    `addmm` forms → `quantized_matmul(x, w)` (plus the bias): MLX's kernel dequantizes
    each group as `mx.dequantize` does, inside the product."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        operands = matmul_operands(op)
        if operands is None:
            return
        x, weight, _ = operands
        found = _dequantized_matrix(weight)
        if found is None or dtype_of(x) != dtype_of(weight):
            return
        dequantize, transposed = found
        packed = (dequantize.w, dequantize.scales, dequantize.biases)
        scheme = (dequantize.group_size.value.data, dequantize.bits.value.data, dequantize.mode.data)
        replace_by_quantized_product(op, rewriter, packed, scheme, transposed)
        erase_if_unused(weight, rewriter)
