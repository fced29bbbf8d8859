"""Canonicalization patterns of the `mlx` dialect, each attached to the op it rewrites
(through `HasCanonicalizationPatternsTrait` in `dialects/mlx.py`) and each also a pass
of its own (`catalog.CANONICALIZATION_PATTERNS`, built into passes by `passes.py`), so
any subset runs from `mlx-opt -p`.

The three seed transformations (docs/semantics.md states what each computes):

- lossless cast folding (`FoldLosslessCastChain`, `RemoveIdentityCast`);
- fully masked SDPA rows are exact zeros (`ZeroFullyMaskedRows`);
- advanced indexing is expanded by the lowering (`LowerIndex` in aten_to_mlx), which
  emits no transpose that only moves size-1 dims; here `RemoveIdentityTranspose`
  and `ComposeTransposes` clean up what remains.

and the usual folds: transposes, reshapes, identity broadcasts and slices, constant
casts and scalar arithmetic, the RMSNorm decomposition fused into `mlx.rms_norm`, and
grouped-query attention run on un-repeated K/V.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import Pure, SymbolTable

from mlxir.dialects import mlx

if TYPE_CHECKING:
    import torch
from mlxir.dialects.common import (
    DYNAMIC,
    dtype_of,
    int_array,
    ints,
    is_float,
    mixed_values,
    rank_of,
    shape_of,
)

# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


def _int_info(dtype: Attribute) -> tuple[int, bool] | None:
    """(width, signed) of an integer type other than i1."""
    if isinstance(dtype, IntegerType) and dtype.width.data > 1:
        return dtype.width.data, dtype.signedness.data != Signedness.UNSIGNED
    return None


def _is_bool(dtype: Attribute) -> bool:
    return isinstance(dtype, IntegerType) and dtype.width.data == 1


_FLOAT_RANK = {BFloat16Type(): "bf16", Float16Type(): "f16", Float32Type(): "f32", Float64Type(): "f64"}


def is_lossless(source: Attribute, target: Attribute) -> bool:
    """Whether casting every value of `source` to `target` is exact (docs/semantics.md §1)."""
    if source == target:
        return True
    if _is_bool(source):
        return isinstance(target, IntegerType) or target in _FLOAT_RANK
    src_float, dst_float = _FLOAT_RANK.get(source), _FLOAT_RANK.get(target)
    if src_float and dst_float:
        return (src_float, dst_float) in {
            ("f16", "f32"),
            ("f16", "f64"),
            ("bf16", "f32"),
            ("bf16", "f64"),
            ("f32", "f64"),
        }
    src_int, dst_int = _int_info(source), _int_info(target)
    if src_int and dst_int:
        (sw, ss), (dw, ds) = src_int, dst_int
        return ss == ds and dw >= sw
    if src_int and dst_float:
        width, _signed = src_int
        if width == 8:
            return dst_float in ("f16", "bf16", "f32", "f64")
        if width == 16:
            return dst_float in ("f32", "f64")
        if width == 32:
            return dst_float == "f64"
    return False


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------


class RemoveIdentityCast(RewritePattern):
    """`astype(x, dtype(x))` → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class FoldLosslessCastChain(RewritePattern):
    """`astype(astype(x, d1), d2)` → `astype(x, d2)` when `dtype(x) → d1` is exact for
    every value; lossy chains (f32→f16→f32, f32→i32→f32, ...) stay."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.AstypeOp):
            return
        if not is_lossless(dtype_of(inner.input), dtype_of(inner.result)):
            return
        if inner.input.type == op.result.type:
            rewriter.replace(op, [], [inner.input])
            return
        folded = mlx.AstypeOp(inner.input, op.result.type)
        folded.location = op.location
        rewriter.replace(op, folded)


_TORCH_NAMES = {
    Float32Type(): "float32",
    Float16Type(): "float16",
    BFloat16Type(): "bfloat16",
    Float64Type(): "float64",
    IntegerType(1): "bool",
    IntegerType(8): "int8",
    IntegerType(16): "int16",
    IntegerType(32): "int32",
    IntegerType(64): "int64",
    IntegerType(8, Signedness.UNSIGNED): "uint8",
}
"""Element type → torch dtype name; torch does the folding arithmetic because it rounds
f16/bf16 exactly as MLX does (torch is imported only when a fold happens)."""


def _torch_dtype(element_type: Attribute) -> torch.dtype | None:
    import torch

    name = _TORCH_NAMES.get(element_type)
    return getattr(torch, name) if name is not None else None


MAX_FOLDED_ELEMENTS = 64
"""Constant folding only touches small constants (scalars, short vectors)."""


def _constant_tensor(value: SSAValue) -> torch.Tensor | None:
    import torch

    owner = value.owner
    if not isinstance(owner, mlx.ConstantOp):
        return None
    attr = owner.value
    dtype = _torch_dtype(attr.get_element_type())
    shape = list(attr.get_shape())
    if dtype is None or math.prod(shape) > MAX_FOLDED_ELEMENTS:
        return None
    values = cast(Sequence[float], attr.get_values())
    as_float = dtype.is_floating_point
    data = torch.tensor(
        [float(v) if as_float else int(v) for v in values],
        dtype=torch.float64 if as_float else torch.int64,
    )
    if len(values) == 1 and math.prod(shape) != 1:
        data = data.expand(math.prod(shape))
    return data.to(dtype).reshape(shape)


def _constant_op(tensor: torch.Tensor, result_type: Attribute) -> mlx.ConstantOp | None:
    import torch

    assert isinstance(result_type, TensorType)
    flat = tensor.reshape(-1)
    if tensor.dtype.is_floating_point:
        values: list[float] | list[int] = [float(v) for v in flat.to(torch.float64)]
    else:
        values = [int(v) for v in flat.to(torch.int64)]
    return mlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(result_type, values))


class FoldConstantCast(RewritePattern):
    """`astype(constant)` → a constant of the new type, rounded as MLX would (PyTorch's
    IEEE conversion, bf16 included)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        value = _constant_tensor(op.input)
        target = _torch_dtype(dtype_of(op.result))
        if value is None or target is None:
            return
        folded = _constant_op(value.to(target), op.result.type)
        if folded is not None:
            rewriter.replace(op, folded)


_SCALAR_FOLDS = {
    "mlx.add": "add",
    "mlx.subtract": "sub",
    "mlx.multiply": "mul",
    "mlx.divide": "div",
    "mlx.maximum": "maximum",
    "mlx.minimum": "minimum",
}
"""Foldable binary ops → the torch function computing them."""


class FoldConstantArithmetic(RewritePattern):
    """Binary arithmetic on two small constants → a constant (computed in the result's
    dtype, as MLX computes it)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fold = _SCALAR_FOLDS.get(op.name)
        if fold is None or not isinstance(op, mlx.BinaryOp):
            return
        lhs, rhs = _constant_tensor(op.lhs), _constant_tensor(op.rhs)
        if lhs is None or rhs is None or not lhs.dtype.is_floating_point:
            return
        import torch

        result = getattr(torch, fold)(lhs, rhs).to(lhs.dtype)
        if list(result.shape) != list(shape_of(op.result)):
            return
        folded = _constant_op(result, op.result.type)
        if folded is not None:
            rewriter.replace(op, folded)


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


class RemoveIdentityTranspose(RewritePattern):
    """A transpose whose permutation is the identity, or that only reorders size-1
    dims among themselves, is (a reshape to) its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = list(ints(op.axes))
        if perm == sorted(perm):
            rewriter.replace(op, [], [op.input])
            return
        shape = shape_of(op.input)
        moved = [p for p in perm if shape[p] != 1]
        if moved == sorted(moved) and DYNAMIC not in shape:
            reshape = mlx.ReshapeOp(op.input, list(shape_of(op.result)), op.result.type)
            reshape.location = op.location
            rewriter.replace(op, reshape)


class ComposeTransposes(RewritePattern):
    """`transpose(transpose(x, p1), p2)` → `transpose(x, p1[p2])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.TransposeOp):
            return
        first, second = ints(inner.axes), ints(op.axes)
        composed = [first[p] for p in second]
        new = mlx.TransposeOp(inner.input, composed, op.result.type)
        new.location = op.location
        rewriter.replace(op, new)


def _sizes_are_input_shape(value: SSAValue, sizes: Sequence[SSAValue | int]) -> bool:
    """Whether a mixed size list spells `value`'s own shape (literals for static dims,
    `mlx.dim value axis i` for dynamic ones)."""
    shape = shape_of(value)
    if len(sizes) != len(shape):
        return False
    for axis, (size, dim) in enumerate(zip(sizes, shape)):
        if isinstance(size, int):
            if size != dim:
                return False
        else:
            owner = size.owner
            if not (
                isinstance(owner, mlx.DimOp)
                and owner.input == value
                and owner.axis.value.data % len(shape) == axis
            ):
                return False
    return True


class RemoveIdentityReshape(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ShapedResultOp, rewriter: PatternRewriter) -> None:
        if op.input.type != op.result.type:
            return
        if _sizes_are_input_shape(op.input, mixed_values(ints(op.static_shape), op.shape)):
            rewriter.replace(op, [], [op.input])


class ComposeReshapes(RewritePattern):
    """`reshape(reshape(x))` → `reshape(x)` with the outer sizes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.ReshapeOp):
            return
        # A dynamic outer size may be an `mlx.dim` of the inner result: that stays valid
        # (the inner op stays alive for it); sizes are values, not positions.
        sizes = mixed_values(ints(op.static_shape), op.shape)
        new = mlx.ReshapeOp(inner.input, sizes, op.result.type)
        new.location = op.location
        rewriter.replace(op, new)


class RemoveIdentitySlice(RewritePattern):
    """A slice from 0 to each dim's size with step 1 is its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SliceOp, rewriter: PatternRewriter) -> None:
        if set(ints(op.strides)) - {1}:
            return
        starts = mixed_values(ints(op.static_start), op.start)
        stops = mixed_values(ints(op.static_stop), op.stop)
        if any(s != 0 for s in starts):
            return
        if _sizes_are_input_shape(op.input, stops) and op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def _scalar_dense(dtype: Attribute, value: float) -> DenseIntOrFPElementsAttr:
    """A 0-d float literal of `dtype`."""
    tensor_type = cast(Any, TensorType(dtype, []))
    return DenseIntOrFPElementsAttr.from_list(tensor_type, [value])


def _is_guarded(op: mlx.ScaledDotProductAttentionOp) -> bool:
    """Whether the result already feeds the `where(any(mask), sdpa, 0)` guard."""
    uses = list(op.result.uses)
    if len(uses) != 1:
        return False
    user = uses[0].operation
    return (
        isinstance(user, mlx.WhereOp)
        and user.x == op.result
        and (isinstance(user.condition.owner, mlx.ReductionOp) and user.condition.owner.name == "mlx.any")
    )


def _arange_from_zero(value: SSAValue) -> bool:
    """`value` is `expand_dims(arange(0, n, 1))` (possibly cast): non-negative, starts at 0."""
    owner = value.owner
    while isinstance(owner, mlx.ExpandDimsOp | mlx.AstypeOp | mlx.ReshapeOp):
        owner = owner.input.owner
    return isinstance(owner, mlx.ArangeOp) and ints(owner.static_bounds)[0] == 0 and ints(
        owner.static_bounds
    )[2] == 1


def _provably_nonempty_rows(mask: SSAValue) -> bool:
    """A causal mask `cols <= rows` (or `rows >= cols`) over aranges from 0: every row
    attends key 0."""
    owner = mask.owner
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.less_equal"):
        cols, rows = owner.lhs, owner.rhs
    elif (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.greater_equal"):
        rows, cols = owner.lhs, owner.rhs
    else:
        return False
    return (
        _arange_from_zero(cols)
        and _arange_from_zero(rows)
        and rank_of(cols) >= 1
        and shape_of(cols)[-1] != 1
    )


class ZeroFullyMaskedRows(RewritePattern):
    """PyTorch returns exact zeros for a query row whose keys are all masked (bool row
    all False, additive row all -inf); MLX does not. `sdpa(q, k, v, mask)` becomes
    `where(any(attendable(mask), -1, keepdims), sdpa(...), 0)`. Skipped when no row can
    be empty: no mask, or a causal mask built from aranges."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ScaledDotProductAttentionOp, rewriter: PatternRewriter) -> None:
        mask = op.mask
        if mask is None or _is_guarded(op) or _provably_nonempty_rows(mask):
            return
        dtype = dtype_of(op.result)
        new_ops: list[Operation] = []
        attendable = mask
        mask_shape = list(shape_of(mask))
        bool_type = TensorType(IntegerType(1), mask_shape)
        if not _is_bool(dtype_of(mask)):
            neg_inf = mlx.ConstantOp(_scalar_dense(dtype_of(mask), -math.inf))
            greater = mlx.BINARY_OP_CLASSES["greater"].build(
                operands=[mask, neg_inf.result], result_types=[bool_type]
            )
            new_ops += [neg_inf, greater]
            attendable = greater.results[0]
        any_shape = [*mask_shape[:-1], 1]
        any_op = mlx.REDUCTION_OP_CLASSES["any"].build(
            operands=[attendable],
            result_types=[TensorType(IntegerType(1), any_shape)],
            properties={"axes": int_array([len(mask_shape) - 1]), "keepdims": UnitAttr()},
        )
        zero = mlx.ConstantOp(_scalar_dense(dtype, 0.0))
        guarded_sdpa = op.clone()
        where = mlx.WhereOp.build(
            operands=[any_op.results[0], guarded_sdpa.results[0], zero.result],
            result_types=[op.result.type],
        )
        new_ops += [any_op, zero, guarded_sdpa, where]
        for new in new_ops:
            new.location = op.location
        rewriter.replace(op, new_ops, [where.results[0]])


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
            source = _strip_cast(x)
            dtype = dtype_of(op.result)
            if dtype_of(source) != dtype or dtype_of(weight) != dtype or source.type != op.result.type:
                continue
            fused = mlx.RmsNormOp.build(
                operands=[source, [weight]],
                result_types=[op.result.type],
                properties={"eps": FloatAttr(eps, Float64Type())},
            )
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
            mlx.LayerNormOp.build(
                operands=[x, [], []],
                result_types=[x.type],
                properties={"eps": FloatAttr(eps, Float64Type())},
            ),
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
    """`transpose(weight @w)` → `weight @w'` with the payload transposed at compile time,
    when every read of `@w` is transposed the same way (the `linear` lowering's
    `w.T`). Needs the payload beside the module (`payloads_of`); skipped otherwise."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        weight = op.input.owner
        if not isinstance(weight, mlx.WeightOp):
            return
        module = op.get_toplevel_object()
        if not isinstance(module, ModuleOp):
            return
        payloads = _payloads(module)
        name = weight.global_name.root_reference.data
        target = SymbolTable.lookup_symbol(op, weight.global_name)
        if payloads is None or name not in payloads or not isinstance(target, mlx.GlobalOp):
            return
        if target.value is not None:
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
        payloads[name] = payloads[name].permute(*perm).contiguous()
        new_type = op.result.type
        target.properties["type"] = new_type
        rewriter.notify_op_modified(target)
        for read in reads:
            replacement = mlx.WeightOp.build(
                properties={"global_name": read.global_name}, result_types=[new_type]
            )
            replacement.location = read.location
            rewriter.insert(replacement, InsertPoint.before(read))
            for use in list(read.result.uses):
                rewriter.replace(use.operation, [], [replacement.results[0]])
            rewriter.erase(read)


def _payloads(module: Operation) -> dict[str, Any] | None:
    """The payload dict the importer keeps beside a module, if the importer is loaded."""
    importer = sys.modules.get("mlxir.conversions.torch_to_aten")
    if importer is None or not isinstance(module, ModuleOp):
        return None
    payloads = importer.payloads_of(module)
    return payloads if payloads else None


def patterns_by_op() -> dict[str, tuple[RewritePattern, ...]]:
    """Op name → its canonicalization patterns (what `MlxCanonicalization` attaches)."""
    table: dict[str, list[RewritePattern]] = {}

    def attach(op_names: Sequence[str], *patterns: RewritePattern) -> None:
        for name in op_names:
            table.setdefault(name, []).extend(patterns)

    attach(["mlx.astype"], RemoveIdentityCast(), FoldLosslessCastChain(), FoldConstantCast())
    attach(list(_SCALAR_FOLDS), FoldConstantArithmetic())
    attach(["mlx.multiply"], FuseRmsNorm(), FuseLayerNorm(), FoldNormAffine())
    attach(["mlx.divide"], FuseLayerNorm())
    attach(["mlx.add"], FoldNormAffine())
    attach(["mlx.transpose"], RemoveIdentityTranspose(), ComposeTransposes(), FoldWeightTranspose())
    attach(["mlx.reshape"], RemoveIdentityReshape(), ComposeReshapes())
    attach(["mlx.broadcast_to"], RemoveIdentityReshape())
    attach(["mlx.slice"], RemoveIdentitySlice())
    attach(["mlx.scaled_dot_product_attention"], UnrepeatKV(), ZeroFullyMaskedRows())
    return {name: tuple(patterns) for name, patterns in table.items()}
