"""Optimizations of mlx IR (the `optimize-mlx` stage of `lower-to-mlx`), each also a
pass of its own; `transforms/catalog.py` registers them. They fuse decompositions into
MLX's fast kernels, run grouped-query attention on un-repeated K/V and fold weight
transposes into the weights; each keeps its input's values (a fused norm within the
float tolerance of MLX's kernel).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import Pure, SymbolTable

from mlxir import dtypes
from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, is_float, rank_of, shape_of
from mlxir.transforms.canonicalization.mlx import _constant_tensor, is_lossless
from mlxir.weights import array_of, dense_attr


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


# ---------------------------------------------------------------------------
# Normalization fusion
# ---------------------------------------------------------------------------


def _strip_cast(value: SSAValue) -> SSAValue:
    owner = value.owner
    return owner.input if isinstance(owner, mlx.AstypeOp) else value


def _strip_upcast(value: SSAValue) -> SSAValue:
    """`value` before a cast that is exact (HF's `x.to(float32)`): a norm computed on a
    lossy cast (f32 → f16) rounds and overflows where the fused kernel would not."""
    owner = value.owner
    if isinstance(owner, mlx.AstypeOp) and is_lossless(dtype_of(owner.input), dtype_of(owner.result)):
        return owner.input
    return value


def _is_square_of(value: SSAValue, x: SSAValue) -> bool:
    """`value` is x², as `square(x)`, `x * x` or `x ** 2` (x compared up to CSE)."""
    owner = value.owner
    if (isinstance(owner, mlx.UnaryOp) and owner.name == "mlx.square"):
        return _same_value(owner.input, x)
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.multiply"):
        return _same_value(owner.lhs, x) and _same_value(owner.rhs, x)
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.power"):
        exponent = _constant_tensor(owner.rhs)
        return (
            _same_value(owner.lhs, x)
            and exponent is not None
            and exponent.numel() == 1
            and float(exponent) == 2.0
        )
    return False


def _same_value(a: SSAValue, b: SSAValue, depth: int = 3) -> bool:
    """`a` and `b` are one value, or the same pure op of the same operands (what CSE
    would merge; canonicalization runs before CSE)."""
    if a == b:
        return True
    op_a, op_b = a.owner, b.owner
    if depth == 0 or not isinstance(op_a, Operation) or not isinstance(op_b, Operation):
        return False
    return (
        op_a.name == op_b.name
        and op_a.has_trait(Pure)
        and op_a.properties == op_b.properties
        and a.type == b.type
        and len(op_a.operands) == len(op_b.operands)
        and all(_same_value(x, y, depth - 1) for x, y in zip(op_a.operands, op_b.operands))
    )


def _scalar_constant(value: SSAValue) -> float | None:
    tensor = _constant_tensor(value)
    if tensor is None or tensor.numel() != 1:
        return None
    return float(tensor)


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
        eps = _scalar_constant(add.rhs)
        mean = add.lhs.owner
        if eps is None or not (isinstance(mean, mlx.ReductionOp) and mean.name == "mlx.mean"):
            continue
        axes = ints(mean.axes) if mean.axes is not None else ()
        if mean.keepdims is None or [a % rank_of(x) for a in axes] != [rank_of(x) - 1]:
            continue
        if _is_square_of(mean.input, x):
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
            source = _strip_upcast(x)
            dtype = dtype_of(op.result)
            if dtype_of(source) != dtype or dtype_of(weight) != dtype or source.type != op.result.type:
                continue
            fused = mlx.RmsNormOp(source, weight, eps)
            fused.location = op.location
            rewriter.replace(op, fused)
            return


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
        eps = _scalar_constant(add.rhs)
        variance_of = _last_axis_mean(add.lhs)
        if eps is None or variance_of is None or not _is_square_of(variance_of, centered):
            continue
        return x, eps
    return None


def _fused(op: Operation, new: Operation, rewriter: PatternRewriter) -> None:
    new.location = op.location
    rewriter.replace(op, new)


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
        _fused(
            op,
            mlx.LayerNormOp(x, None, None, eps),
            rewriter,
        )


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
            _fused(
                op,
                type(norm).build(
                    operands=operands,
                    result_types=[op.result.type],
                    properties={"eps": norm.eps},
                ),
                rewriter,
            )
            return


class FoldWeightTranspose(RewritePattern):
    """`transpose(weight @w)` → `weight @w'`, where `@w`'s value in the IR is transposed
    at compile time, when every read of `@w` is transposed the same way (the `linear`
    lowering's `w.T`). A global without a value in the IR is left alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        weight = op.input.owner
        if not isinstance(weight, mlx.WeightOp):
            return
        target = SymbolTable.lookup_symbol(op, weight.global_name)
        if not isinstance(target, mlx.GlobalOp) or not isinstance(
            target.value, DenseIntOrFPElementsAttr
        ):
            return
        module = target.parent_op()
        if not isinstance(module, ModuleOp):
            return
        perm = list(ints(op.axes))
        reads = [
            o for o in module.walk()
            if isinstance(o, mlx.WeightOp) and o.global_name == weight.global_name
        ]
        for read in reads:
            users = [use.operation for use in read.result.uses]
            if not users or not all(
                isinstance(u, mlx.TransposeOp) and list(ints(u.axes)) == perm for u in users
            ):
                return
        new_type = cast(TensorType[Attribute], op.result.type)
        transposed = array_of(target.value).transpose(perm)
        dtype = dtypes.of_ir(new_type.get_element_type())
        assert dtype is not None  # the global's value had this element type
        folded = mlx.GlobalOp(target.sym_name.data, new_type, target.kind.data)
        folded.properties["value"] = dense_attr(transposed, dtype, tuple(new_type.get_shape()))
        folded.attributes.update(target.attributes)
        folded.location = target.location
        rewriter.replace(target, folded, [])
        for read in reads:
            replacement = mlx.WeightOp(read.global_name, new_type)
            replacement.location = read.location
            rewriter.insert(replacement, InsertPoint.before(read))
            for use in list(read.result.uses):
                rewriter.replace(use.operation, [], [replacement.results[0]])
            rewriter.erase(read)
