"""Optimizations of mlx IR (the `optimize-mlx` stage of `lower-to-mlx`), each also a
pass of its own; `transforms/catalog.py` registers them. They fuse decompositions into
MLX's fast kernels, run grouped-query attention on un-repeated K/V and fold weight
transposes into the weights; each keeps its input's values (a fused norm within the
float tolerance of MLX's kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import Pure

from mlxir import dtypes
from mlxir.dialects import mlx
from mlxir.dialects.common import (
    dims_compatible,
    dtype_of,
    int_array,
    ints,
    is_float,
    is_integer,
    mixed_values,
    rank_of,
    shape_of,
)
from mlxir.locations import fused, result_locations
from mlxir.transforms.canonicalization.mlx import (
    _constant_tensor,
    _scalar_dense,
    arange_length,
    is_lossless,
)
from mlxir.transforms.constant_weights import (
    Matrix,
    add_global,
    array_of_constant,
    drop_unread,
    evaluate,
    new_read,
    reads_of,
    untransposed,
    weight_global,
    weight_matrix,
)
from mlxir.transforms.known_dims import KnownDims, known_dims
from mlxir.transforms.quantize import matmul_operands, replace_by_quantized_product
from mlxir.weights import array_of, concatenated_columns, dense_attr

if TYPE_CHECKING:
    pass


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
# Cache writes
# ---------------------------------------------------------------------------


def _contiguous_start(index: SSAValue) -> SSAValue | None:
    """`add(start, arange(0, n, 1))` (either order), `start` a 0-d integer tensor →
    `start`: the indices of `n` consecutive slots."""
    add = index.owner
    if not isinstance(add, mlx.AddOp) or rank_of(index) != 1:
        return None
    lhs, rhs = add.operands
    for start, arange in ((lhs, rhs), (rhs, lhs)):
        if arange_length(arange) is not None and rank_of(start) == 0 and is_integer(dtype_of(start)):
            return start
    return None


class ScatterToSliceUpdate(RewritePattern):
    """A scatter of `n` slices along one axis at `start + arange(n)` (`index_copy` into
    a fixed KV cache at the written length) → one `dynamic_slice_update` at `start`.
    MLX's scatter moves the axis to the front and back, reshapes the updates and casts
    the indices: about ten graph nodes per cache write, where a slice update is one.
    The update is the scatter's with its slice axis dropped and its index axis moved
    into place (folded into the transpose index_copy's lowering made). In range both
    write the same elements; a start past the end is clamped instead of each index
    (torch rejects such an index_copy)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ScatterOp, rewriter: PatternRewriter) -> None:
        if len(op.indices) != 1 or (op.reduce is not None and op.reduce.data != "none"):
            return
        start = _contiguous_start(op.indices[0])
        rank = rank_of(op.input)
        if start is None or rank == 0:
            return
        axis = ints(op.axes)[0] % rank
        x, slices = shape_of(op.input), shape_of(op.updates)[1:]
        if slices[axis] != 1 or any(
            not dims_compatible(s, d) for i, (s, d) in enumerate(zip(slices, x)) if i != axis
        ):
            return
        new_ops: list[Operation] = []
        expand = op.updates.owner
        if isinstance(expand, mlx.ExpandDimsOp) and [a % (rank + 1) for a in ints(expand.axes)] == [1 + axis]:
            moved = expand.input  # [n, x's dims without the axis]
        else:
            moved_shape = [shape_of(op.updates)[0], *slices[:axis], *slices[axis + 1 :]]
            squeeze = mlx.SqueezeOp(op.updates, [1 + axis], TensorType(dtype_of(op.updates), moved_shape))
            new_ops.append(squeeze)
            moved = squeeze.result
        into_place = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
        inner = moved.owner
        source, perm = (
            (inner.input, [ints(inner.axes)[p] for p in into_place])
            if isinstance(inner, mlx.TransposeOp)
            else (moved, into_place)
        )
        update = source
        if perm != list(range(rank)):
            source_shape = shape_of(source)
            transpose = mlx.TransposeOp(
                source, perm, TensorType(dtype_of(source), [source_shape[p] for p in perm])
            )
            new_ops.append(transpose)
            update = transpose.result
        write = mlx.DynamicSliceUpdateOp.build(
            operands=[op.input, update, start],
            result_types=[op.result.type],
            properties={"axes": int_array([axis])},
        )
        for new in (*new_ops, write):
            new.location = op.location
        rewriter.replace(op, [*new_ops, write])


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
        weight, target = op.input.owner, weight_global(op.input)
        if not isinstance(weight, mlx.WeightOp) or target is None:
            return
        perm = list(ints(op.axes))
        reads = reads_of(target)
        if weight not in reads:
            return
        for read in reads:
            users = [use.operation for use in read.result.uses]
            if not users or not all(
                isinstance(u, mlx.TransposeOp) and list(ints(u.axes)) == perm for u in users
            ):
                return
        new_type = cast(TensorType[Attribute], op.result.type)
        transposed = array_of(cast(DenseIntOrFPElementsAttr, target.value)).transpose(perm)
        dtype = dtypes.of_ir(new_type.get_element_type())
        assert dtype is not None  # the global's value had this element type
        folded = mlx.GlobalOp(target.sym_name.data, new_type, target.kind.data)
        folded.properties["value"] = dense_attr(transposed, dtype, tuple(new_type.get_shape()))
        folded.attributes.update(target.attributes)
        folded.location = target.location
        module = cast(ModuleOp, target.parent_op())  # reads_of found reads in it
        rewriter.replace(target, folded, [])
        for read in reads:
            replacement = new_read(target.sym_name.data, new_type, module)
            replacement.location = read.location
            rewriter.insert(replacement, InsertPoint.before(read))
            for use in list(read.result.uses):
                rewriter.replace(use.operation, [], [replacement.results[0]])
            rewriter.erase(read)


# ---------------------------------------------------------------------------
# Weights in the IR
# ---------------------------------------------------------------------------


def _constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a weight read or a small `mlx.constant`, seen through exact casts."""
    source = _strip_upcast(value)
    found = weight_global(source)
    if found is not None:
        assert isinstance(found.value, DenseIntOrFPElementsAttr)
        array = array_of(found.value)
        if dtype_of(source) == BFloat16Type():  # bits; bfloat16 is f32's top half
            array = (array.astype(np.uint32) << 16).view(np.float32)
    else:
        tensor = _constant_tensor(source)
        if tensor is None:
            return None
        array = tensor.double().numpy() if tensor.is_floating_point() else tensor.numpy()
    dtype = dtypes.of_ir(dtype_of(value))
    if dtype is None or dtype.numpy is None:
        return None
    if dtype_of(value) == BFloat16Type():
        return None  # wanted as bfloat16 bits: no caller needs that
    return np.asarray(array).astype(dtype.numpy)


# ---------------------------------------------------------------------------
# Rotary embeddings
# ---------------------------------------------------------------------------


def _is(value: SSAValue, name: str) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, Operation) and owner.name == name else None


def _strip_float_casts(value: SSAValue) -> SSAValue:
    """`value` before float-to-float casts: HF casts cos/sin to the activations' dtype,
    which the fused kernel does once, on its result."""
    while isinstance(value.owner, mlx.AstypeOp) and is_float(dtype_of(value.owner.input)) and is_float(
        dtype_of(value)
    ):
        value = value.owner.input
    return value


class _Sizes:
    """Equal sizes, by the function's symbolic dims (`KnownDims`), computed on first
    use: only once a pattern has matched the structure it needs sizes for."""

    def __init__(self, anchor: Operation):
        self._anchor = anchor
        self._known: KnownDims | None = None
        self._computed = False

    def _dims(self) -> KnownDims | None:
        if not self._computed:
            self._known, self._computed = known_dims(self._anchor), True
        return self._known

    def same_size(self, value: SSAValue, axis: int, size: SSAValue | int) -> bool:
        shape = shape_of(value)
        if shape[axis % len(shape)] != DYNAMIC_INDEX:
            return shape[axis % len(shape)] == size
        known = self._dims()
        return known is not None and known.same_size(value, axis, size)

    def same_axes(self, a: SSAValue, a_axis: int, b: SSAValue, b_axis: int) -> bool:
        da, db = shape_of(a)[a_axis % rank_of(a)], shape_of(b)[b_axis % rank_of(b)]
        if DYNAMIC_INDEX not in (da, db):
            return da == db
        known = self._dims()
        return known is not None and known.same_axes(a, a_axis, b, b_axis)


def _full_axis(op: mlx.SliceOp, axis: int, sizes: _Sizes) -> bool:
    """The slice takes all of `axis`: from 0, step 1, to the input's size."""
    start = mixed_values(ints(op.static_start), op.start)[axis]
    stop = mixed_values(ints(op.static_stop), op.stop)[axis]
    if start != 0 or ints(op.strides)[axis] != 1:
        return False
    size = shape_of(op.input)[axis]
    if isinstance(stop, int):
        return size != DYNAMIC_INDEX and stop >= size
    return sizes.same_size(op.input, axis, stop)


def _last_axis_slice(value: SSAValue, sizes: _Sizes) -> tuple[SSAValue, int, int] | None:
    """`x[..., lo:hi]` → (x, lo, hi): a step-1 slice of the last axis, whole elsewhere,
    or a piece of a split of the last axis (`slices-to-split` makes slices one)."""
    op = value.owner
    if isinstance(op, mlx.SplitOp) and isinstance(value, OpResult):
        size = shape_of(op.input)[-1]
        if op.axis.value.data % rank_of(op.input) != rank_of(op.input) - 1 or size == DYNAMIC_INDEX:
            return None
        bounds = [0, *(min(point, size) for point in ints(op.indices)), size]  # MLX clamps
        return op.input, bounds[value.index], bounds[value.index + 1]
    if not isinstance(op, mlx.SliceOp) or set(ints(op.strides)) != {1}:
        return None
    last = rank_of(op.input) - 1
    if not all(_full_axis(op, axis, sizes) for axis in range(last)):
        return None
    lo = mixed_values(ints(op.static_start), op.start)[last]
    hi = mixed_values(ints(op.static_stop), op.stop)[last]
    size = shape_of(op.input)[last]
    if not isinstance(lo, int) or not isinstance(hi, int) or size == DYNAMIC_INDEX:
        return None
    if not 0 <= lo <= hi <= size:
        return None
    return op.input, lo, hi


def _rotated_half(value: SSAValue, sizes: _Sizes) -> SSAValue | None:
    """HF's `rotate_half(x)`: `cat(-x[..., h:], x[..., :h], -1)` with 2h x's last dim → x."""
    cat = value.owner
    if not isinstance(cat, mlx.ConcatenateOp) or len(cat.inputs) != 2:
        return None
    if cat.axis.value.data % rank_of(value) != rank_of(value) - 1:
        return None
    neg = _is(cat.inputs[0], "mlx.negative")
    if neg is None:
        return None
    second, first = _last_axis_slice(neg.operands[0], sizes), _last_axis_slice(cat.inputs[1], sizes)
    if second is None or first is None or second[0] != first[0]:
        return None
    x, size = first[0], shape_of(first[0])[-1]
    if size % 2 or first[1:] != (0, size // 2) or second[1:] != (size // 2, size):
        return None
    return x


def _every_other(value: SSAValue, sizes: _Sizes) -> tuple[SSAValue, int] | None:
    """`x[..., first::2]` (first 0 or 1, whole elsewhere) → (x, first)."""
    op = value.owner
    if not isinstance(op, mlx.SliceOp):
        return None
    last = rank_of(op.input) - 1
    size = shape_of(op.input)[last]
    strides = list(ints(op.strides))
    if size == DYNAMIC_INDEX or size % 2 or strides[:-1] != [1] * last or strides[-1] != 2:
        return None
    if not all(_full_axis(op, axis, sizes) for axis in range(last)):
        return None
    first = mixed_values(ints(op.static_start), op.start)[last]
    stop = mixed_values(ints(op.static_stop), op.stop)[last]
    if first not in (0, 1) or not isinstance(stop, int) or stop < size - 1 + cast(int, first):
        return None
    return op.input, cast(int, first)


def _rotated_pairs(value: SSAValue, sizes: _Sizes) -> SSAValue | None:
    """The interleaved (GPT-J, Cohere) rotation of x's feature pairs,
    `stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2)`: a reshape of
    `cat(expand_dims(-odd, r), expand_dims(even, r), r)` → x."""
    reshape = value.owner
    if not isinstance(reshape, mlx.ReshapeOp):
        return None
    cat = reshape.input.owner
    rank = rank_of(reshape.input)
    if not isinstance(cat, mlx.ConcatenateOp) or len(cat.inputs) != 2 or rank != rank_of(value) + 1:
        return None
    if cat.axis.value.data % rank != rank - 1 or shape_of(cat.result)[-1] != 2:
        return None
    pieces: list[SSAValue] = []
    for piece in cat.inputs:
        expand = piece.owner
        if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) in ([rank - 1], [-1])):
            return None
        pieces.append(expand.input)
    neg = _is(pieces[0], "mlx.negative")
    if neg is None:
        return None
    odd, even = _every_other(neg.operands[0], sizes), _every_other(pieces[1], sizes)
    if odd is None or even is None or odd[0] != even[0] or (odd[1], even[1]) != (1, 0):
        return None
    x = even[0]
    if x.type != value.type or not all(
        sizes.same_axes(value, axis, x, axis) for axis in range(rank_of(x) - 1)
    ):
        return None
    return x


@dataclass(frozen=True)
class _Positions:
    """Contiguous positions: `offset + row_offsets[b] + t` for `t < length`."""

    length: SSAValue | int
    offset: SSAValue | int = 0
    row_offsets: SSAValue | None = None


def _scalar_offset(value: SSAValue) -> SSAValue | int | None:
    """A 0-d integer tensor as an index value or literal."""
    if shape_of(value) != () or is_float(dtype_of(value)):
        return None
    if isinstance(value.owner, mlx.FromIndexOp):
        return value.owner.input
    constant = _constant_tensor(value)
    return int(constant) if constant is not None else None


def _steps(value: SSAValue) -> tuple[SSAValue | int, SSAValue | int] | None:
    """`arange(0, n) [+ k]` (rank 1, k 0-d) → (n, k)."""
    length = arange_length(value)
    if length is not None:
        return length, 0
    add = _is(value, "mlx.add")
    if add is None or rank_of(value) != 1:
        return None
    for a, k in (add.operands, reversed(add.operands)):
        length, offset = arange_length(a), _scalar_offset(k)
        if length is not None and offset is not None:
            return length, offset
    return None


def _contiguous_positions(value: SSAValue) -> _Positions | None:
    """Positions `[rows or 1, S]` that provably count up by one along S."""
    if rank_of(value) != 2 or is_float(dtype_of(value)):
        return None
    owner = value.owner
    if isinstance(owner, mlx.ExpandDimsOp) and list(ints(owner.axes)) == [0]:
        steps = _steps(owner.input)
        return None if steps is None else _Positions(steps[0], steps[1])
    add = _is(value, "mlx.add")
    if add is None:
        return None
    for rows, steps_value in (add.operands, reversed(add.operands)):
        expand = rows.owner
        if not (
            isinstance(expand, mlx.ExpandDimsOp)
            and list(ints(expand.axes)) == [1]
            and rank_of(expand.input) == 1
            and shape_of(rows)[1] == 1
        ):
            continue
        if isinstance(steps_value.owner, mlx.ExpandDimsOp) and list(ints(steps_value.owner.axes)) == [0]:
            steps_value = steps_value.owner.input
        steps = _steps(steps_value)
        if steps is not None and dtype_of(expand.input) == dtype_of(value):
            return _Positions(steps[0], steps[1], expand.input)
    return None


@dataclass(frozen=True)
class _Angles:
    """`positions[..., None] * inv_freq`, repeated twice along the features: one copy
    after the other (`cat(f, f)`), or each angle twice in a row (`traditional`)."""

    positions: _Positions
    inv_freq: np.ndarray
    source: str
    traditional: bool = False


def _angles(value: SSAValue) -> _Angles | None:
    """`cat(f, f, -1)`, or `f` with each angle repeated twice in a row
    (`reshape(broadcast_to(f[..., None], [..., n, 2]), [..., 2n])`, torch's
    `repeat_interleave(f, 2, -1)`), with `f = float(positions[..., None]) * inv_freq`
    (rank 3)."""
    if rank_of(value) != 3:
        return None
    owner = value.owner
    if isinstance(owner, mlx.ConcatenateOp):
        if len(owner.inputs) != 2 or owner.inputs[0] != owner.inputs[1] or owner.axis.value.data % 3 != 2:
            return None
        return _angle_products(owner.inputs[0], traditional=False)
    if not isinstance(owner, mlx.ReshapeOp):
        return None
    broadcast = owner.input.owner
    if not isinstance(broadcast, mlx.BroadcastToOp) or shape_of(broadcast.result)[-1] != 2:
        return None
    expand = broadcast.input.owner
    if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) in ([3], [-1])):
        return None
    f = expand.input
    if shape_of(f)[-1] == DYNAMIC_INDEX or 2 * shape_of(f)[-1] != shape_of(value)[-1]:
        return None
    return _angle_products(f, traditional=True)


def _angle_products(value: SSAValue, traditional: bool) -> _Angles | None:
    """`float(positions[..., None]) * inv_freq`."""
    mul = _is(value, "mlx.multiply")
    if mul is None or dtype_of(mul.results[0]) != Float32Type():
        return None
    for positions, inv in (mul.operands, reversed(mul.operands)):
        cast_op = positions.owner
        if not isinstance(cast_op, mlx.AstypeOp):
            continue
        expand = cast_op.input.owner
        if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) == [2]):
            continue
        found = _contiguous_positions(expand.input)
        inv_freq = _constant_array(inv) if rank_of(inv) == 1 else None
        if found is None or inv_freq is None or not np.all(inv_freq > 0):
            continue
        weight = weight_global(_strip_upcast(inv))
        source = weight.sym_name.data if weight is not None else "rope"
        return _Angles(found, inv_freq.astype(np.float32), source, traditional)
    return None


def _trig_of(value: SSAValue, name: str) -> SSAValue | None:
    """`expand_dims(fn(angles), [1])`, float casts allowed around it → the angles."""
    value = _strip_float_casts(value)
    expand = value.owner
    if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) == [1]):
        return None
    trig = _is(_strip_float_casts(expand.input), name)
    return trig.operands[0] if trig is not None else None


def _rope_operands(op: Operation, sizes: _Sizes) -> tuple[SSAValue, _Angles] | None:
    """`x * cos + rotate_half(x) * sin` (any operand order) → (x, the angles)."""
    for cos_term, sin_term in (op.operands, reversed(op.operands)):
        cos_mul, sin_mul = _is(cos_term, "mlx.multiply"), _is(sin_term, "mlx.multiply")
        if cos_mul is None or sin_mul is None:
            continue
        for x, cos in (cos_mul.operands, reversed(cos_mul.operands)):
            for rotated, sin in (sin_mul.operands, reversed(sin_mul.operands)):
                if _rotated_half(rotated, sizes) == x:
                    traditional = False
                elif _rotated_pairs(rotated, sizes) == x:
                    traditional = True
                else:
                    continue
                cos_angles, sin_angles = _trig_of(cos, "mlx.cos"), _trig_of(sin, "mlx.sin")
                if cos_angles is None or cos_angles != sin_angles:
                    continue
                angles = _angles(cos_angles)
                if angles is not None and angles.traditional == traditional:
                    return x, angles
    return None


def _freqs(angles: _Angles, anchor: Operation) -> SSAValue:
    """MLX's `freqs` (the inverse of `inv_freq`, computed once in f32) as a new global."""
    freqs = (np.float32(1.0) / angles.inv_freq).astype(np.float32)
    tensor_type = TensorType(Float32Type(), [len(freqs)])
    return add_global(anchor, f"{angles.source}.rope_freqs", freqs, tensor_type, "buffer").result


class FuseRope(RewritePattern):
    """HF's rotary embedding → `mlx.rope` (`mx.fast.rope`):

    - `x * cos + rotate_half(x) * sin`, where cos/sin are `expand_dims(cos(a), 1)` of
      the angles `a = cat(f, f)`, `f = float(positions[..., None]) * inv_freq`, and the
      positions provably count up by one along x's sequence axis (-2) from a scalar
      or per-row start: `arange(n) + k`, or `offsets[:, None] + arange(n)`;
    - interleaved (GPT-J style, Cohere): `x * cos + rotate_pairs(x) * sin`, with
      `rotate_pairs(x) = stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2)` and each
      angle of `f` repeated twice in a row → `mlx.rope` with `traditional`;
    - partial rotary: `cat(rope(x[..., :r]), x[..., r:], -1)` → `rope(x)` of `dims r`.

    `freqs` is `1 / inv_freq` of the program's own (possibly scaled) constant, not a
    `base`: exact up to the f32 rounding of the angle (5e-7 at position 2047 in f32).
    In f16/bf16 HF rounds cos and sin to the activations' dtype and each product; the
    kernel rounds once, so the result is within the dtype's rounding of HF's."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, mlx.ConcatenateOp):
            self._merge_pass_through(op, rewriter)
            return
        if op.name != "mlx.add":
            return
        sizes = _Sizes(op)
        found = _rope_operands(op, sizes)
        if found is None:
            return
        x, angles = found
        if op.results[0].type != x.type or rank_of(x) < 3 or not is_float(dtype_of(x)):
            return
        positions = angles.positions
        if not sizes.same_size(x, -2, positions.length):
            return
        if positions.row_offsets is not None and not sizes.same_axes(x, 0, positions.row_offsets, 0):
            return
        if 2 * len(angles.inv_freq) != shape_of(x)[-1]:
            return
        freqs = _freqs(angles, op)
        rope = mlx.RopeOp(
            x,
            shape_of(x)[-1],
            freqs=freqs,
            offset=positions.offset,
            row_offsets=positions.row_offsets,
            traditional=angles.traditional,
        )
        rope.location = op.location
        rewriter.replace(op, rope)

    @staticmethod
    def _merge_pass_through(op: mlx.ConcatenateOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) != 2 or op.axis.value.data % rank_of(op.result) != rank_of(op.result) - 1:
            return
        rope = op.inputs[0].owner
        if not isinstance(rope, mlx.RopeOp):
            return
        sizes = _Sizes(op)
        rotated, passed = _last_axis_slice(rope.input, sizes), _last_axis_slice(op.inputs[1], sizes)
        if rotated is None or passed is None or rotated[0] != passed[0]:
            return
        x, size = rotated[0], shape_of(rotated[0])[-1]
        dims = rope.dims.value.data
        if rotated[1:] != (0, dims) or passed[1:] != (dims, size) or x.type != op.result.type:
            return
        new = _rope_like(rope, x, dims)
        new.location = op.location
        rewriter.replace(op, new)


def _rope_like(rope: mlx.RopeOp, x: SSAValue, dims: int) -> mlx.RopeOp:
    """`rope`'s embedding (frequencies, positions) applied to `x`."""
    offset = mixed_values(ints(rope.static_offset), rope.offset)[0]
    return mlx.RopeOp(
        x,
        dims,
        freqs=rope.freqs,
        base=rope.base.value.data if rope.base is not None else None,
        offset=offset,
        row_offsets=rope.row_offsets,
        traditional=rope.traditional is not None,
        scale=rope.scale.value.data,
    )


# ---------------------------------------------------------------------------
# Projections
# ---------------------------------------------------------------------------


def _bias_vector(value: SSAValue, size: int) -> mlx.GlobalOp | None:
    found = weight_global(value)
    return found if found is not None and tuple(shape_of(value)) == (size,) else None


def _bias_add_of(product: SSAValue) -> tuple[Operation, SSAValue] | None:
    """The `add` of a constant bias `[N]` that is `product`'s only use, and the bias."""
    if product.uses.get_length() != 1:
        return None
    add = next(iter(product.uses)).operation
    if add.name != "mlx.add" or add.results[0].type != product.type:
        return None
    bias = add.operands[1] if add.operands[0] == product else add.operands[0]
    if _bias_vector(bias, shape_of(product)[-1]) is None or dtype_of(bias) != dtype_of(product):
        return None
    return add, bias


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
            found = _bias_add_of(product)
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


def _projection(op: Operation) -> tuple[SSAValue, Matrix, SSAValue | None] | None:
    """`matmul(x, w)` or `addmm(b, x, w)` (alpha = beta = 1) with constant `w` [K, N]
    (and `b` [N]) → (x, w's global, b)."""
    if isinstance(op, mlx.MatmulOp):
        weight = weight_matrix(op.rhs)
        return None if weight is None else (op.lhs, weight, None)
    if isinstance(op, mlx.AddmmOp) and op.alpha is None and op.beta is None:
        weight = weight_matrix(op.b)
        if weight is None or _bias_vector(op.c, shape_of(op.b)[1]) is None:
            return None
        return op.a, weight, op.c
    return None


def _merged_name(names: list[str]) -> str:
    """`a.q_proj.weight`, `a.k_proj.weight` → `a.q_proj+k_proj.weight`."""
    parts = [n.split(".") for n in names]
    prefix = 0
    while all(len(p) > prefix + 1 for p in parts) and len({p[prefix] for p in parts}) == 1:
        prefix += 1
    suffix = 0
    while (
        all(len(p) > prefix + suffix + 1 for p in parts)
        and len({p[-1 - suffix] for p in parts}) == 1
    ):
        suffix += 1
    middles = ["_".join(p[prefix : len(p) - suffix]) or "_" for p in parts]
    return ".".join([*parts[0][:prefix], "+".join(middles), *parts[0][len(parts[0]) - suffix :]])


class MergeProjections(RewritePattern):
    """Projections of one input by constant weights (`matmul(x, w_i)`, or all
    `addmm(b_i, x, w_i)`) → one product with the weights (and biases) concatenated at
    compile time, then `split` on the last axis: q/k/v, gate/up. Each output column is
    the same dot product as before, so the values are those of the separate products
    (BLAS may block the wider GEMM differently: f32 within 1e-6 relative). The old
    weights leave the program once nothing reads them."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        found = _projection(op)
        if found is None or (isinstance(op, mlx.MatmulOp) and _bias_add_of(op.result)):
            return  # a biased linear merges once `fuse-bias-add` has made it an addmm
        x, _, bias = found
        kind = type(op)
        group: list[tuple[Operation, Matrix, SSAValue | None]] = []
        block = op.parent_block()
        if block is None:
            return
        for use in x.uses:
            user = use.operation
            if isinstance(user, mlx.MatmulOp) and _projection(user) and _bias_add_of(user.result):
                return  # merge once every biased sibling is an addmm, all in one split
            if type(user) is not kind or user.parent_block() is not block or user in [g[0] for g in group]:
                continue
            sibling = _projection(user)
            if sibling is None or sibling[0] != x or (sibling[2] is None) != (bias is None):
                continue
            if isinstance(user, mlx.MatmulOp) and _bias_add_of(user.result):
                continue
            group.append((user, sibling[1], sibling[2]))
        if len(group) < 2:
            return
        rows, dtype = shape_of(group[0][0].results[0])[:-1], dtype_of(group[0][0].results[0])
        depth = shape_of(x)[-1]
        if any(
            shape_of(o.operands[-1])[0] != depth
            or dtype_of(o.operands[-1]) != dtype
            or shape_of(o.results[0])[:-1] != rows
            or dtype_of(o.results[0]) != dtype
            for o, g, _ in group
        ):
            return
        order = {o: i for i, o in enumerate(block.ops)}
        group.sort(key=lambda g: order[g[0]])
        anchor = group[0][0]
        widths = [shape_of(o.operands[-1])[1] for o, _, _ in group]
        name = _merged_name([m.source.sym_name.data for _, m, _ in group])
        kind = group[0][1].source.kind.data
        if all(m.transposed for _, m, _ in group):
            # `linear` weights [N_i, K], read through `w.T`: stacked as rows (a plain
            # copy of each) and read through one transpose, which MLX's matmul takes
            # without a copy, as the separate products did.
            stacked = np.concatenate([array_of(cast(DenseIntOrFPElementsAttr, m.source.value)) for _, m, _ in group])
            weight = add_global(anchor, name, stacked, TensorType(dtype, [sum(widths), depth]), kind)
            transposed = mlx.TransposeOp(weight.result, [1, 0], TensorType(dtype, [depth, sum(widths)]))
            rewriter.insert(transposed, InsertPoint.before(anchor))
            rhs = transposed.result
            weight_ops: list[Operation] = [weight, transposed]
        else:
            columns = concatenated_columns([m.array() for _, m, _ in group])
            weight = add_global(anchor, name, columns, TensorType(dtype, [depth, sum(widths)]), kind)
            rhs = weight.result
            weight_ops = [weight]
        result_type = TensorType(dtype, [*rows, sum(widths)])
        if bias is None:
            merged: Operation = mlx.MatmulOp(x, rhs, result_type)
        else:
            biases = [cast(SSAValue, b) for _, _, b in group]
            bias_globals = [cast(mlx.GlobalOp, weight_global(b)) for b in biases]
            values = np.concatenate([array_of(cast(DenseIntOrFPElementsAttr, g.value)) for g in bias_globals])
            merged_bias = add_global(
                anchor,
                _merged_name([g.sym_name.data for g in bias_globals]),
                values,
                TensorType(dtype, [sum(widths)]),
                bias_globals[0].kind.data,
            )
            merged = mlx.AddmmOp.build(
                operands=[merged_bias.result, x, rhs], result_types=[result_type]
            )
            weight_ops.append(merged_bias)
        merged.location = fused([projection.location for projection, _, _ in group])
        for weight_op in weight_ops:
            weight_op.location = merged.location
        rewriter.insert(merged, InsertPoint.before(anchor))
        points = [int(p) for p in np.cumsum(widths)[:-1]]
        split = mlx.SplitOp.build(
            operands=[merged.results[0]],
            result_types=[[TensorType(dtype, [*rows, w]) for w in widths]],
            properties={"indices": int_array(points), "axis": IntegerAttr(len(rows), 64)},
        )
        split.location = fused([projection.location for projection, _, _ in group])
        rewriter.insert(split, InsertPoint.before(anchor))
        for (projection, _, _), piece in zip(group, split.results, strict=True):
            reads = list(projection.operands)
            rewriter.replace(projection, [], [piece])
            for read in reads:
                if read != x:
                    drop_unread(read, rewriter)


def _heads(value: SSAValue) -> tuple[mlx.ReshapeOp, mlx.TransposeOp] | None:
    """`transpose(reshape(value, [..., h, d]), perm)`, each the only use of its input."""
    if value.uses.get_length() != 1:
        return None
    reshape = next(iter(value.uses)).operation
    if not isinstance(reshape, mlx.ReshapeOp) or reshape.result.uses.get_length() != 1:
        return None
    transpose = next(iter(reshape.result.uses)).operation
    if not isinstance(transpose, mlx.TransposeOp):
        return None
    rank = rank_of(value)
    sizes = mixed_values(ints(reshape.static_shape), reshape.shape)
    if len(sizes) != rank + 1 or not all(isinstance(s, int) for s in sizes[-2:]):
        return None
    if shape_of(value)[-1] != cast(int, sizes[-2]) * cast(int, sizes[-1]):
        return None
    return reshape, transpose


def _alike(pairs: list[tuple[mlx.ReshapeOp, mlx.TransposeOp]]) -> bool:
    """The pieces are reshaped to the same leading sizes and head dim and transposed by
    the same permutation."""
    reshape0, transpose0 = pairs[0]
    prefix = mixed_values(ints(reshape0.static_shape), reshape0.shape)[:-2]
    head_dim = shape_of(reshape0.result)[-1]
    perm = list(ints(transpose0.axes))
    for reshape, transpose in pairs:
        sizes = mixed_values(ints(reshape.static_shape), reshape.shape)
        if sizes[:-2] != prefix or sizes[-1] != head_dim or list(ints(transpose.axes)) != perm:
            return False
    return True


class SplitHeadsOnce(RewritePattern):
    """`split(y)` on the last axis, each piece reshaped to `[..., h_i, d]` and transposed
    the same way → `reshape(y, [..., sum h_i, d])`, one transpose, one split on the
    heads axis: the pieces' values, moved, with three ops instead of three per piece.
    Where only a run of consecutive pieces are heads (a parallel block's q, k, v next to
    its MLP's pieces), the run is first split off as one piece, split again."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SplitOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        if op.axis.value.data % rank != rank - 1:
            return
        found = [_heads(piece) for piece in op.outputs]
        if any(f is None for f in found):
            self._split_off_heads(op, found, rewriter)
            return
        pairs = cast(list[tuple[mlx.ReshapeOp, mlx.TransposeOp]], found)
        if len(pairs) < 2 or not _alike(pairs):
            return
        reshape0, transpose0 = pairs[0]
        prefix = mixed_values(ints(reshape0.static_shape), reshape0.shape)[:-2]
        head_dim = shape_of(reshape0.result)[-1]
        perm = list(ints(transpose0.axes))
        heads = [shape_of(r.result)[-2] for r, _ in pairs]
        dtype = dtype_of(op.input)
        whole = [*prefix, sum(heads), head_dim]
        reshaped_shape = [s if isinstance(s, int) else DYNAMIC_INDEX for s in whole]
        reshape = mlx.ReshapeOp(op.input, whole, TensorType(dtype, reshaped_shape))
        moved_shape = [reshaped_shape[p] for p in perm]
        transpose = mlx.TransposeOp(reshape.result, perm, TensorType(dtype, moved_shape))
        axis = perm.index(rank - 1)  # the heads axis of the [..., heads, d] reshape
        split = mlx.SplitOp.build(
            operands=[transpose.result],
            result_types=[[t.result.type for _, t in pairs]],
            properties={
                "indices": int_array([int(h) for h in np.cumsum(heads)[:-1]]),
                "axis": IntegerAttr(axis, 64),
            },
        )
        for new in (reshape, transpose):
            new.location = op.location
        split.location = fused([t.location for _, t in pairs])
        for new in (reshape, transpose, split):
            rewriter.insert(new, InsertPoint.before(op))
        for (old_reshape, old_transpose), piece in zip(pairs, split.results, strict=True):
            rewriter.replace(old_transpose, [], [piece])
            rewriter.erase(old_reshape)
        rewriter.erase(op)

    @staticmethod
    def _split_off_heads(
        op: mlx.SplitOp,
        found: list[tuple[mlx.ReshapeOp, mlx.TransposeOp] | None],
        rewriter: PatternRewriter,
    ) -> None:
        widths = [shape_of(piece)[-1] for piece in op.outputs]
        if DYNAMIC_INDEX in widths:
            return
        start = 0
        while start < len(found):
            end = start
            while end < len(found) and found[end] is not None:
                end += 1
            run = cast(list[tuple[mlx.ReshapeOp, mlx.TransposeOp]], found[start:end])
            if len(run) >= 2 and _alike(run):
                break
            start = end + 1
        else:
            return
        bounds = [0, *np.cumsum(widths).tolist()]
        outer_points = [b for i, b in enumerate(bounds[1:-1], 1) if not start < i < end]
        piece_type = cast(TensorType[Attribute], op.outputs[start].type)
        merged_type = TensorType(
            piece_type.get_element_type(), [*piece_type.get_shape()[:-1], sum(widths[start:end])]
        )
        outer_types = [p.type for p in op.outputs[:start]] + [merged_type] + [p.type for p in op.outputs[end:]]
        outer = mlx.SplitOp.build(
            operands=[op.input],
            result_types=[outer_types],
            properties={"indices": int_array(outer_points), "axis": op.axis},
        )
        run_points = np.cumsum(widths[start:end])[:-1].tolist()
        inner = mlx.SplitOp.build(
            operands=[outer.results[start]],
            result_types=[[p.type for p in op.outputs[start:end]]],
            properties={"indices": int_array(run_points), "axis": op.axis},
        )
        pieces_at = result_locations(op)
        outer.location = fused([*pieces_at[:start], fused(pieces_at[start:end]), *pieces_at[end:]])
        inner.location = fused(pieces_at[start:end])
        pieces = [*outer.results[:start], *inner.results, *outer.results[start + 1 :]]
        rewriter.replace(op, [outer, inner], pieces)


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


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def _times_constant(value: SSAValue, name: str) -> tuple[SSAValue, float] | None:
    """`name(v, c)` or `name(c, v)` with `c` a one-element constant → (v, c)."""
    op = _is(value, name)
    if op is None:
        return None
    for operand, constant in (op.operands, reversed(op.operands)):
        found = _scalar_constant(constant)
        if found is not None and _scalar_constant(operand) is None:
            return operand, found
    return None


def _is_cube_of(value: SSAValue, x: SSAValue) -> bool:
    """`x³` as `power(x, 3)`, `square(x) * x` or `x * square(x)`."""
    power = _is(value, "mlx.power")
    if power is not None:
        return power.operands[0] == x and _scalar_constant(power.operands[1]) == 3.0
    product = _is(value, "mlx.multiply")
    if product is None:
        return False
    a, b = product.operands
    return (a == x and _is_square_of(b, x)) or (b == x and _is_square_of(a, x))


def _tanh_gelu_inner(value: SSAValue) -> tuple[SSAValue, float, float] | None:
    """`k * (x + c * x³)` → (x, k, c)."""
    scaled = _times_constant(value, "mlx.multiply")
    if scaled is None:
        return None
    inner, k = scaled
    add = _is(inner, "mlx.add")
    if add is None:
        return None
    for x, term in (add.operands, reversed(add.operands)):
        cubic = _times_constant(term, "mlx.multiply")
        if cubic is not None and _is_cube_of(cubic[0], x):
            return x, k, cubic[1]
    return None


def _tanh_gelu(op: Operation) -> tuple[SSAValue, float, float] | None:
    """`(0.5 * x) * (1 + tanh(k * (x + c * x³)))`, any operand order → (x, k, c)."""
    for half_x, one_plus in (op.operands, reversed(op.operands)):
        half = _times_constant(half_x, "mlx.multiply")
        shifted = _times_constant(one_plus, "mlx.add")
        if half is None or half[1] != 0.5 or shifted is None or shifted[1] != 1.0:
            continue
        tanh = _is(shifted[0], "mlx.tanh")
        inner = _tanh_gelu_inner(tanh.operands[0]) if tanh is not None else None
        if inner is not None and inner[0] == half[0]:
            return inner
    return None


class TanhGeluAsSigmoid(RewritePattern):
    """The tanh approximation of GELU, `0.5x(1 + tanh(k(x + c x³)))` (torch's
    `gelu(approximate="tanh")` as lowered, HF's `NewGELUActivation`), nine ops →
    `x * sigmoid(x * (2k + 2kc x²))`, six: equal in the reals, since
    `(1 + tanh z) / 2 = sigmoid(2z)`. Not bit-exact: against torch's GELU computed in
    float64 on the same f32 inputs over [-12, 12], within 5e-7 (measured 3.7e-7; the
    decomposition 4.3e-7), and in f16/bf16 within one unit in the last place of the
    result, as the decomposition is. It does not suffer the decomposition's
    cancellation in `1 + tanh z` for negative x (16 ulps at most against 660)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "mlx.multiply":
            return
        found = _tanh_gelu(op)
        if found is None:
            return
        x, k, c = found
        if op.results[0].type != x.type or not is_float(dtype_of(x)):
            return
        dtype = dtype_of(x)
        new: list[Operation] = []

        def add(operation: Operation) -> SSAValue:
            new.append(operation)
            return operation.results[0]

        def constant(value: float) -> SSAValue:
            return add(mlx.ConstantOp(_scalar_dense(dtype, value)))

        def unary(name: str, a: SSAValue) -> SSAValue:
            return add(cast(type[mlx.UnaryOp], mlx.UNARY_OP_CLASSES[name])(a))

        def binary(name: str, a: SSAValue, b: SSAValue) -> SSAValue:
            return add(mlx.BINARY_OP_CLASSES[name](a, b, x.type))

        quadratic = binary("multiply", unary("square", x), constant(2 * k * c))
        twice_z = binary("multiply", x, binary("add", quadratic, constant(2 * k)))
        binary("multiply", x, unary("sigmoid", twice_z))
        for operation in new:
            operation.location = op.location
        rewriter.replace(op, new)


# ---------------------------------------------------------------------------
# Weights computed at compile time
# ---------------------------------------------------------------------------


FOLDED_WEIGHT_BYTES = 1 << 20
"""`fold-constant-weights` computes a result at compile time when it is at most this
big or no bigger than its constant operands together: a broadcast or an upcast of a
large weight would grow the program and its memory."""


def _constant_operand(value: SSAValue) -> Operation | None:
    """The op giving a constant operand: a read of a weight with its value in the IR, or
    an `mlx.constant`."""
    owner = value.owner
    if isinstance(owner, mlx.ConstantOp) or weight_global(value) is not None:
        return cast(Operation, owner)
    return None


def _bytes(value: SSAValue) -> int:
    """The size of a static tensor value."""
    found = dtypes.of_ir(dtype_of(value))
    itemsize = np.dtype(found.numpy).itemsize if found is not None and found.numpy is not None else 8
    return int(np.prod(shape_of(value))) * itemsize


class FoldConstantWeights(RewritePattern):
    """An elementwise op or cast whose operands are all constants, one of them a weight
    (Gemma's `1 + norm.weight`, a weight's upcast) → a new weight holding the result,
    computed at compile time by the runtime's own kernel (so bit for bit what the run
    would compute). Results that would grow the program (`FOLDED_WEIGHT_BYTES`) are left to run time."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mlx.UnaryOp | mlx.BinaryOp | mlx.AstypeOp):
            return
        sources = [_constant_operand(v) for v in op.operands]
        if any(s is None for s in sources) or not any(isinstance(s, mlx.WeightOp) for s in sources):
            return
        result = op.results[0]
        result_type = cast(TensorType[Attribute], result.type)
        shape = result_type.get_shape()
        dtype = dtypes.of_ir(result_type.get_element_type())
        if DYNAMIC_INDEX in shape or dtype is None or dtype.numpy is None:
            return
        size = _bytes(result)
        operand_sizes = sum(_bytes(v) for v in op.operands)
        if size > max(FOLDED_WEIGHT_BYTES, operand_sizes):
            return
        import mlx.core as mx

        value = evaluate(op, [array_of_constant(cast(Operation, s)) for s in sources])[0]
        raw = value.view(mx.uint16) if value.dtype == mx.bfloat16 else value
        array = np.array(raw, copy=True)
        weight = next(s for s in sources if isinstance(s, mlx.WeightOp))
        assert isinstance(weight, mlx.WeightOp)
        name = f"{weight.global_name.root_reference.data}.{op.name.removeprefix('mlx.')}"
        kind = cast(mlx.GlobalOp, weight_global(weight.result)).kind.data
        read = add_global(op, name, array, result_type, kind)
        read.location = op.location
        operands = list(op.operands)
        rewriter.replace(op, [], [read.result])
        for operand in operands:
            drop_unread(operand, rewriter)


# ---------------------------------------------------------------------------
# Quantized weights
# ---------------------------------------------------------------------------


def _dequantized_matrix(value: SSAValue) -> tuple[mlx.DequantizeOp, bool] | None:
    """The `mlx.dequantize` a matmul operand is (or is the transpose of), and whether
    it is transposed."""
    matrix, transposed = untransposed(value)
    owner = matrix.owner
    return (owner, transposed) if isinstance(owner, mlx.DequantizeOp) else None


def _erase_if_unused(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases `value`'s op (a transpose or a dequantize) and, through a transpose, the
    dequantize under it, once nothing uses them."""
    op = value.owner
    if value.uses or not isinstance(op, mlx.TransposeOp | mlx.DequantizeOp):
        return
    source = op.input if isinstance(op, mlx.TransposeOp) else None
    rewriter.erase(op)
    if source is not None:
        _erase_if_unused(source, rewriter)


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
        _erase_if_unused(weight, rewriter)


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
        _erase_if_unused(source, rewriter)
