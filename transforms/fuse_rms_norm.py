"""`fuse-rms-norm`: the RMSNorm decomposition times a weight → `mlx.rms_norm`
(within the float tolerance of MLX's kernel)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, rank_of, shape_of
from mlxir.transforms.matching import is_square_of, scalar_constant, strip_upcast


def _strip_cast(value: SSAValue) -> SSAValue:
    owner = value.owner
    return owner.input if isinstance(owner, mlx.AstypeOp) else value


def _match_rms(normalized: SSAValue) -> tuple[SSAValue, float] | None:
    """`x * rsqrt(mean(x², -1, keepdims) + eps)` → (x, eps)."""
    mul = normalized.owner
    if not (isinstance(mul, mlx.BinaryOp) and mul.name == "mlx.multiply"):
        return None
    for x, scale in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        rsqrt = scale.owner
        if not (isinstance(rsqrt, mlx.UnaryOp) and rsqrt.name == "mlx.rsqrt"):
            continue
        add = rsqrt.input.owner
        if not (isinstance(add, mlx.BinaryOp) and add.name == "mlx.add"):
            continue
        eps = scalar_constant(add.rhs)
        mean = add.lhs.owner
        if eps is None or not (isinstance(mean, mlx.ReductionOp) and mean.name == "mlx.mean"):
            continue
        axes = ints(mean.axes) if mean.axes is not None else ()
        if mean.keepdims is None or [a % rank_of(x) for a in axes] != [rank_of(x) - 1]:
            continue
        if is_square_of(mean.input, x):
            return x, eps
    return None


class FuseRmsNorm(RewritePattern):
    """The RMSNorm decomposition (`pow`/`mean`/`add`/`rsqrt`/`mul`, with HF's casts
    around it) times a weight → `mlx.rms_norm`, in the input's dtype."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (isinstance(op, mlx.BinaryOp) and op.name == "mlx.multiply"):
            return
        for weight, normalized in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
            if rank_of(weight) != 1 or shape_of(weight)[0] != shape_of(op.result)[-1]:
                continue
            matched = _match_rms(_strip_cast(normalized))
            if matched is None:
                continue
            x, eps = matched
            source = strip_upcast(x)
            dtype = dtype_of(op.result)
            if dtype_of(source) != dtype or dtype_of(weight) != dtype or source.type != op.result.type:
                continue
            fused = mlx.RmsNormOp(source, weight, eps)
            fused.location = op.location
            rewriter.replace(op, fused)
            return
