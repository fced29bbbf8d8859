"""`fuse-layer-norm`: the LayerNorm decomposition over the last axis →
`mlx.layer_norm` (within the float tolerance of MLX's kernel)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, is_float, rank_of
from mlxir.transforms.matching import is_square_of, replace_keeping_location, scalar_constant


def _last_axis_mean(value: SSAValue) -> SSAValue | None:
    """`mean(x, [-1], keepdims)` → x."""
    mean = value.owner
    if not (isinstance(mean, mlx.ReductionOp) and mean.name == "mlx.mean") or mean.keepdims is None:
        return None
    rank = rank_of(mean.input)
    axes = ints(mean.axes) if mean.axes is not None else tuple(range(rank))
    if [a % rank for a in axes] != [rank - 1]:
        return None
    return mean.input


def _match_layer_norm(normalized: SSAValue) -> tuple[SSAValue, float] | None:
    """`(x - mean(x)) * rsqrt(mean((x - mean(x))²) + eps)` (or `/ sqrt(...)`) → (x, eps)."""
    op = normalized.owner
    if (isinstance(op, mlx.BinaryOp) and op.name == "mlx.multiply"):
        pairs = ((op.lhs, op.rhs), (op.rhs, op.lhs))
        root_name = "rsqrt"
    elif (isinstance(op, mlx.BinaryOp) and op.name == "mlx.divide"):
        pairs = ((op.lhs, op.rhs),)
        root_name = "sqrt"
    else:
        return None
    for centered, scale in pairs:
        sub = centered.owner
        root = scale.owner
        if not (isinstance(sub, mlx.BinaryOp) and sub.name == "mlx.subtract"):
            continue
        if not (isinstance(root, mlx.UnaryOp) and root.name == f"mlx.{root_name}"):
            continue
        x = sub.lhs
        if _last_axis_mean(sub.rhs) != x:
            continue
        add = root.input.owner
        if not (isinstance(add, mlx.BinaryOp) and add.name == "mlx.add"):
            continue
        eps = scalar_constant(add.rhs)
        variance_of = _last_axis_mean(add.lhs)
        if eps is None or variance_of is None or not is_square_of(variance_of, centered):
            continue
        return x, eps
    return None


class FuseLayerNorm(RewritePattern):
    """The LayerNorm decomposition over the last axis → `mlx.layer_norm` (weight and
    bias then join it through `FoldNormAffine`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (isinstance(op, mlx.BinaryOp) and op.name in ("mlx.multiply", "mlx.divide")):
            return
        matched = _match_layer_norm(op.results[0])
        if matched is None:
            return
        x, eps = matched
        if x.type != op.results[0].type or not is_float(dtype_of(x)):
            return
        replace_keeping_location(
            op,
            mlx.LayerNormOp(x, None, None, eps),
            rewriter,
        )
