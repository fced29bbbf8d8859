"""Lowerings of the indexing ops: advanced indexing, index_select, embedding, gather,
the scatters, masked_fill, index_put, index_copy and slice_scatter."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    TORCH_DTYPES,
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    arange,
    mixed_sizes,
    tensor_of,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    broadcast_shapes,
    dtype_of,
    index_operands,
    int_array,
    ints,
    is_bool,
    is_float,
    normalize_axis,
    rank_of,
    shape_of,
)


def _take(e: Emitter, x: SSAValue, indices: SSAValue, axis: int, result_type: Attribute) -> SSAValue:
    return e.emit(
        mlx.TakeOp(x, indices, axis, result_type)
    )


def _check_integer_indices(op: Operation, indices: Sequence[SSAValue]) -> None:
    for index in indices:
        if is_bool(dtype_of(index)):
            raise LoweringError(
                f"{op.name}: a bool mask index selects a data-dependent number of elements; "
                "mlxir needs integer indices (use torch.nonzero before export, or torch.where)"
            )


class LowerIndex(AtenLowering):
    """`aten.index.Tensor` → `take` (one index) or gather + transpose + reshape, with no
    transpose that only moves size-1 dims (docs/semantics.md §2)."""

    OPS = (aten.IndexOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexOp, rewriter: PatternRewriter) -> None:
        _check_integer_indices(op, op.indices)
        axes = list(ints(op.indexed_dims))
        x = op.input
        n = rank_of(x)

        def build(e: Emitter) -> SSAValue:
            if len(axes) == 1:
                return _take(e, x, op.indices[0], axes[0], op.result.type)
            batch = broadcast_shapes([shape_of(i) for i in op.indices])
            r = len(batch)
            slice_sizes: list[Size] = [1 if d in axes else e.dim(x, d) for d in range(n)]
            static, dynamic = index_operands(slice_sizes)
            gathered = e.emit(
                mlx.GatherOp.build(
                    operands=[x, list(op.indices), dynamic],
                    result_types=[tensor_of(dtype_of(x), [*batch, *[s if isinstance(s, int) else DYNAMIC for s in slice_sizes]])],
                    properties={"axes": int_array(axes), "static_slice_sizes": int_array(static)},
                )
            )
            contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
            if contiguous and axes[0] > 0:
                a0 = axes[0]
                perm = [*range(r, r + a0), *range(r), *range(r + a0, r + n)]
                if _moves_only_unit_dims(shape_of(gathered), perm):
                    moved = gathered
                else:
                    moved = e.transpose(gathered, perm)
            else:
                moved = gathered
            target = _index_result_sizes(e, op, x, axes, batch)
            return e.reshape(moved, target)

        self.replace(op, rewriter, build)


def _moves_only_unit_dims(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """A transpose that only reorders size-1 dims relative to each other is a reshape."""
    moved = [p for p in perm if shape[p] != 1]
    return moved == sorted(moved)


def _index_result_sizes(
    e: Emitter, op: aten.IndexOp, x: SSAValue, axes: list[int], batch: Sequence[int]
) -> list[Size]:
    result_shape = shape_of(op.result)
    sizes: list[Size] = []
    batch_sizes: list[Size] = []
    for i, d in enumerate(batch):
        if d != DYNAMIC:
            batch_sizes.append(d)
        else:
            source = next(
                idx for idx in op.indices
                if rank_of(idx) >= len(batch) - i and shape_of(idx)[i - (len(batch) - rank_of(idx))] == DYNAMIC
            )
            batch_sizes.append(e.dim(source, i - (len(batch) - rank_of(source))))
    contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
    if contiguous and axes[0] > 0:
        sizes = [*[e.dim(x, d) for d in range(axes[0])], *batch_sizes, *[e.dim(x, d) for d in range(axes[-1] + 1, rank_of(x))]]
    else:
        sizes = [*batch_sizes, *[e.dim(x, d) for d in range(rank_of(x)) if d not in axes]]
    assert len(sizes) == len(result_shape)
    return [r if r != DYNAMIC else s for s, r in zip(sizes, result_shape)]


class LowerIndexSelect(AtenLowering):
    OPS = (aten.IndexSelectOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexSelectOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))

        def build(e: Emitter) -> SSAValue:
            if rank_of(op.input) == 0:  # ATen's dim 0 of a 0-d tensor: its one element
                return op.input
            index = op.index if rank_of(op.index) == 1 else e.reshape(op.index, [1])
            return _take(e, op.input, index, axis, op.result.type)

        self.replace(op, rewriter, build)


class LowerNonzero(AtenLowering):
    OPS = (aten.NonzeroOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.NonzeroOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: e.emit(mlx.NonzeroOp.build(operands=[op.input], result_types=[op.result.type])))


class LowerUnique(AtenLowering):
    OPS = (aten.UniqueOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.UniqueOp, rewriter: PatternRewriter) -> None:
        unique = mlx.UniqueOp.build(
            operands=[op.input],
            result_types=[r.type for r in op.results],
            properties=dict(op.properties),  # the same flags at both levels (UniqueOpBase)
        )
        self.replace(op, rewriter, lambda e: e.emit_all(unique))


class LowerRepeatInterleave(AtenLowering):
    OPS = (aten.RepeatInterleaveOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.RepeatInterleaveOp, rewriter: PatternRewriter) -> None:
        self.replace(
            op, rewriter,
            lambda e: e.emit(mlx.RepeatInterleaveOp.build(operands=[op.repeats], result_types=[op.result.type])),
        )


class LowerItem(AtenLowering):
    OPS = (aten.ItemOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ItemOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: e.emit(mlx.ItemOp(op.input)))


class LowerEmbedding(AtenLowering):
    OPS = (aten.EmbeddingOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.EmbeddingOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: _take(e, op.weight, op.indices, 0, op.result.type))


class LowerGather(AtenLowering):
    OPS = (aten.GatherOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GatherOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.TakeAlongAxisOp(op.input, op.index, axis, op.result.type)
            ),
        )


def _scatter_along(
    e: Emitter, x: SSAValue, axis: int, index: SSAValue, values: SSAValue, reduce: str
) -> SSAValue:
    """ATen's scatter along `axis` as an `mlx.scatter` over every axis: the index of
    entry `p` of `index` is `index[p]` on `axis` and `p` itself elsewhere (an arange per
    axis, broadcast against `index`). `values` has the index's shape."""
    rank = rank_of(x)
    grids: list[SSAValue] = []
    for d in range(rank):
        if d == axis:
            grids.append(index)
            continue
        positions = arange(e, e.dim(index, d))
        grids.append(e.expand_dims(positions, [a for a in range(rank) if a != d]))
    updates = e.expand_dims(values, list(range(rank, 2 * rank)))
    return e.emit(
        mlx.ScatterOp.build(
            operands=[x, grids, updates],
            result_types=[x.type],
            properties={
                "axes": int_array(list(range(rank))),
                **({"reduce": StringAttr(reduce)} if reduce != "none" else {}),
            },
        )
    )


def _scatter_values(e: Emitter, src: SSAValue, index: SSAValue, dtype: Attribute) -> SSAValue:
    """The scattered values, in the index's shape: a Scalar broadcast to it, or the
    leading `index.shape` block of `src` (ATen reads only that part)."""
    if not isinstance(src.type, TensorType):
        return e.broadcast_to(e.as_tensor(src, dtype), e.dims(index))
    src = e.astype(src, dtype)
    if shape_of(src) == shape_of(index) and DYNAMIC not in shape_of(index):
        return src
    rank = rank_of(index)
    return e.slice(src, [0] * rank, e.dims(index), [1] * rank, shape_of(index))


_SCATTER_MODES = {"add": "add", "multiply": "prod"}


class LowerScatter(AtenLowering):
    OPS = (aten.ScatterOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ScatterOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        reduce = _SCATTER_MODES[op.reduce.data] if op.reduce is not None else "none"

        def build(e: Emitter) -> SSAValue:
            values = _scatter_values(e, op.src, op.index, dtype_of(op.input))
            return _scatter_along(e, op.input, axis, op.index, values, reduce)

        self.replace(op, rewriter, build)


_SCATTER_REDUCTIONS = {"sum": "add", "prod": "prod", "amax": "max", "amin": "min", "mean": "add"}


def _reduction_identity(op: Operation, reduce: str, dtype: Attribute) -> float | int:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    torch_dtype = TORCH_DTYPES[dtype]
    if torch_dtype == torch.bool:
        raise LoweringError(f"{op.name}: {reduce} of bool tensors is not supported")
    if torch_dtype.is_floating_point:
        return -math.inf if reduce == "amax" else math.inf
    info = torch.iinfo(torch_dtype)
    return info.min if reduce == "amax" else info.max


class LowerScatterReduce(AtenLowering):
    """`scatter_reduce`: without `include_self` the written positions are first reset to
    the reduction's identity; `mean` divides a scatter-add by a scatter-added count
    (floor division for integers, as ATen)."""

    OPS = (aten.ScatterReduceOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ScatterReduceOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        reduce = op.reduce.data
        include_self = op.include_self is not None
        dtype = dtype_of(op.input)
        identity = _reduction_identity(op, reduce, dtype)

        def build(e: Emitter) -> SSAValue:
            x, index = op.input, op.index
            values = _scatter_values(e, op.src, index, dtype)
            if not include_self:
                reset = e.broadcast_to(e.constant(identity, dtype), e.dims(index))
                x = _scatter_along(e, x, axis, index, reset, "none")
            total = _scatter_along(e, x, axis, index, values, _SCATTER_REDUCTIONS[reduce])
            if reduce != "mean":
                return total
            start = e.broadcast_to(e.constant(1 if include_self else 0, dtype), e.dims(x))
            ones = e.broadcast_to(e.constant(1, dtype), e.dims(index))
            counts = _scatter_along(e, start, axis, index, ones, "add")
            counts = e.binary("maximum", counts, e.constant(1, dtype))
            return e.binary("divide" if is_float(dtype) else "floor_divide", total, counts)

        self.replace(op, rewriter, build)


class LowerMaskedFill(AtenLowering):
    OPS = (aten.MaskedFillOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MaskedFillOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            filled = e.where(op.mask, e.as_tensor(op.value, dtype), op.input)
            if shape_of(filled) != shape_of(op.result):
                filled = e.broadcast_to(filled, e.dims(op.input))
            return filled

        self.replace(op, rewriter, build)


def _index_batch_sizes(e: Emitter, op: aten.IndexPutOp, batch: list[int]) -> list[Size]:
    """The broadcast shape of `op`'s index tensors as sizes: a dynamic dim is read from
    the one index tensor that has it (the indices of one shape, or one index: an
    inverse permutation `inv[perm] = arange(n)` with `n` a dynamic token count);
    several indices broadcast along a dynamic dim are refused."""
    sizes: list[Size] = []
    for axis, size in enumerate(batch):
        if size != DYNAMIC:
            sizes.append(size)
            continue
        holders = [
            i for i in op.indices
            if len(shape_of(i)) == len(batch) and shape_of(i)[axis] == DYNAMIC
        ]
        others = [i for i in op.indices if i not in holders]
        # Right-aligned broadcasting: another index has this dim iff its rank reaches it.
        if not holders or any(
            len(shape_of(i)) >= len(batch) - axis and shape_of(i)[axis - len(batch)] != 1 for i in others
        ):
            raise LoweringError(f"{op.name}: index tensors broadcast along a dynamic dim are not supported yet")
        sizes.append(e.dim(holders[0], axis))
    return sizes


class LowerIndexPut(AtenLowering):
    """`x[indices] = values` → `mlx.scatter` with updates `broadcast(indices) ++ slice`."""

    OPS = (aten.IndexPutOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexPutOp, rewriter: PatternRewriter) -> None:
        _check_integer_indices(op, op.indices)
        axes = list(ints(op.indexed_dims))
        x = op.input
        n = rank_of(x)
        batch = broadcast_shapes([shape_of(i) for i in op.indices])
        r = len(batch)
        contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
        in_place = contiguous and axes[0] > 0

        def build(e: Emitter) -> SSAValue:
            rest = [d for d in range(n) if d not in axes]
            batch_sizes = _index_batch_sizes(e, op, batch)
            # The shape `x[indices]` has in PyTorch; values broadcast to it.
            if in_place:
                indexed_shape = [*shape_of(x)[: axes[0]], *batch, *shape_of(x)[axes[-1] + 1 :]]
                indexed_sizes = [*[e.dim(x, d) for d in range(axes[0])], *batch_sizes, *[e.dim(x, d) for d in range(axes[-1] + 1, n)]]
            else:
                indexed_shape = [*batch, *[shape_of(x)[d] for d in rest]]
                indexed_sizes = [*batch_sizes, *[e.dim(x, d) for d in rest]]
            values = e.astype(op.values, dtype_of(x))
            values = e.broadcast_to(values, indexed_sizes) if list(shape_of(values)) != indexed_shape else values
            if in_place:
                a0 = axes[0]
                perm = [*range(a0, a0 + r), *range(a0), *range(a0 + r, a0 + r + len(rest) - a0)]
                values = e.transpose(values, perm)
            # updates: batch ++ [1 at indexed axes, x's size elsewhere]
            for a in axes:
                values = e.expand_dims(values, [r + a])
            return e.emit(
                mlx.ScatterOp.build(
                    operands=[x, list(op.indices), values],
                    result_types=[op.result.type],
                    properties={
                        "axes": int_array(axes),
                        **({"reduce": StringAttr("add")} if op.accumulate is not None else {}),
                    },
                )
            )

        self.replace(op, rewriter, build)


class LowerIndexCopy(AtenLowering):
    OPS = (aten.IndexCopyOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexCopyOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        axis = normalize_axis(op.dim.value.data, rank)

        def build(e: Emitter) -> SSAValue:
            source = e.astype(op.source, dtype_of(op.input))
            if rank == 0:  # index 0 of a 0-d tensor is the tensor: the source replaces it
                return e.reshape(source, [])
            perm = [axis, *[d for d in range(rank) if d != axis]]
            moved = e.transpose(source, perm)  # [k, rest...]
            updates = e.expand_dims(moved, [1 + axis])  # [k, x dims with 1 at axis]
            index = op.index if rank_of(op.index) == 1 else e.reshape(op.index, [1])
            return e.emit(
                mlx.ScatterOp.build(
                    operands=[op.input, [index], updates],
                    result_types=[op.result.type],
                    properties={"axes": int_array([axis])},
                )
            )

        self.replace(op, rewriter, build)


class LowerSliceScatter(AtenLowering):
    OPS = (aten.SliceScatterOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SliceScatterOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, _end, step = mixed_sizes(ints(op.static_bounds), op.bounds)
        if step != 1:
            raise LoweringError(f"{op.name}: only step 1 is supported, got {step}")
        size = shape_of(op.input)[axis]
        if isinstance(start, int) and start < 0:
            if size == DYNAMIC:
                raise LoweringError(f"{op.name}: a negative start on a dynamic dim")
            start += size
        static, dynamic = index_operands([start])

        def build(e: Emitter) -> SSAValue:
            return e.emit(
                mlx.SliceUpdateOp.build(
                    operands=[op.input, e.astype(op.src, dtype_of(op.input)), dynamic],
                    result_types=[op.result.type],
                    properties={"static_start": int_array(static), "axes": int_array([axis])},
                )
            )

        self.replace(op, rewriter, build)


PATTERNS: tuple[AtenLowering, ...] = (
    LowerIndex(),
    LowerIndexSelect(),
    LowerEmbedding(),
    LowerNonzero(),
    LowerUnique(),
    LowerRepeatInterleave(),
    LowerItem(),
    LowerGather(),
    LowerScatter(),
    LowerScatterReduce(),
    LowerMaskedFill(),
    LowerIndexPut(),
    LowerIndexCopy(),
    LowerSliceScatter(),
)
