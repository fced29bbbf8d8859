"""Lowerings of the shape and view ops: reshape, expand, permute, squeeze, slices,
concatenation, split, flip, repeat and padding. ATen's `-1` sizes and open slice ends
become runtime sizes from `mlx.dim`, never the export-time values."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    INT32_MAX,
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    full_range_slice,
    mixed_sizes,
    numel,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    dtype_of,
    int_array,
    ints,
    normalize_axes,
    normalize_axis,
    rank_of,
    shape_of,
)


def _resolve_inferred(e: Emitter, x: SSAValue, sizes: list[Size], result_shape: Sequence[int]) -> list[Size]:
    """Replaces ATen's `-1` size by the result's static size or a runtime size."""
    if -1 not in sizes:
        return sizes
    at = sizes.index(-1)
    if result_shape[at] != DYNAMIC:
        sizes[at] = result_shape[at]
        return sizes
    total = numel(e, e.dims(x))
    others = numel(e, [size for i, size in enumerate(sizes) if i != at])
    sizes[at] = e.floordiv(total, others)
    return sizes


class LowerReshape(AtenLowering):
    OPS = (aten.ReshapeLikeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ReshapeLikeOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            sizes = _resolve_inferred(
                e, op.input, mixed_sizes(op.size_list(), op.sizes), shape_of(op.result)
            )
            return e.emit(mlx.ReshapeOp(op.input, sizes, op.result.type))

        self.replace(op, rewriter, build)


class LowerExpand(AtenLowering):
    OPS = (aten.ExpandOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ExpandOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            sizes = mixed_sizes(op.size_list(), op.sizes)
            lead = len(sizes) - rank_of(op.input)
            for i, size in enumerate(sizes):
                if size == -1:
                    sizes[i] = e.dim(op.input, i - lead)
            return e.emit(mlx.BroadcastToOp(op.input, sizes, op.result.type))

        self.replace(op, rewriter, build)


class LowerPermute(AtenLowering):
    OPS = (aten.PermuteOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.PermuteOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        perm = [normalize_axis(d, rank) for d in ints(op.dims)]
        self.replace(op, rewriter, lambda e: e.transpose(op.input, perm))


class LowerTranspose(AtenLowering):
    OPS = (aten.TransposeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TransposeOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        a = normalize_axis(op.dim0.value.data, rank)
        b = normalize_axis(op.dim1.value.data, rank)
        perm = list(range(rank))
        if rank == 0:  # ATen's dims 0 and -1 of a 0-d tensor: nothing to swap
            self.replace(op, rewriter, lambda e: op.input)
            return
        perm[a], perm[b] = perm[b], perm[a]
        self.replace(op, rewriter, lambda e: e.transpose(op.input, perm))


class LowerUnsqueeze(AtenLowering):
    OPS = (aten.UnsqueezeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.UnsqueezeOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input) + 1)
        self.replace(op, rewriter, lambda e: e.expand_dims(op.input, [axis]))


class LowerSqueeze(AtenLowering):
    OPS = (aten.SqueezeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SqueezeOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.input)
        if not shape:  # a 0-d tensor's dim 0 (or -1), which torch allows: nothing to drop
            self.replace(op, rewriter, lambda e: op.input)
            return
        candidates = (
            normalize_axes(ints(op.dims), len(shape))
            if op.dims is not None
            else list(range(len(shape)))
        )
        axes = [a for a in candidates if shape[a] == 1]
        dynamic = [a for a in candidates if shape[a] == DYNAMIC]
        removed = len(shape) - rank_of(op.result)
        if removed != len(axes):
            if removed != len(axes) + len(dynamic):
                raise LoweringError(
                    f"{op.name}: cannot tell which dynamic dims of {shape} are squeezed"
                )
            axes = sorted(axes + dynamic)
        self.replace(op, rewriter, lambda e: e.squeeze(op.input, axes))


_INT64_MAX = 2**63 - 1


def _clamp_end(e: Emitter, x: SSAValue, axis: int, end: Size) -> Size:
    """ATen's open end (`INT64_MAX`) as the dim's size."""
    size = shape_of(x)[axis]
    if isinstance(end, int) and (end >= _INT64_MAX or (size != DYNAMIC and end > size)):
        return e.dim(x, axis)
    return end


class LowerSlice(AtenLowering):
    OPS = (aten.SliceOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SliceOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, end, step = mixed_sizes(ints(op.static_bounds), op.bounds)
        if not isinstance(step, int):
            raise LoweringError(f"{op.name}: a runtime step is not supported")

        def build(e: Emitter) -> SSAValue:
            stop = _clamp_end(e, op.input, axis, end)
            return full_range_slice(e, op.input, axis, start, stop, step, shape_of(op.result))

        self.replace(op, rewriter, build)


class LowerSelect(AtenLowering):
    OPS = (aten.SelectOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SelectOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        (index,) = mixed_sizes(ints(op.static_index), op.index)
        size = shape_of(op.input)[axis]
        if isinstance(index, int) and index < 0 and size != DYNAMIC:
            index += size

        def build(e: Emitter) -> SSAValue:
            stop: Size
            if isinstance(index, int):
                stop = index + 1 if index != -1 else e.dim(op.input, axis)
            else:
                stop = e.add(index, 1)
            kept = list(shape_of(op.input))
            kept[axis] = 1
            sliced = full_range_slice(e, op.input, axis, index, stop, 1, kept)
            return e.squeeze(sliced, [axis])

        self.replace(op, rewriter, build)


class LowerNarrow(AtenLowering):
    OPS = (aten.NarrowOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.NarrowOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, length = mixed_sizes(ints(op.static_bounds), op.bounds)

        def build(e: Emitter) -> SSAValue:
            return full_range_slice(
                e, op.input, axis, start, e.add(start, length), 1, shape_of(op.result)
            )

        self.replace(op, rewriter, build)


class LowerCat(AtenLowering):
    OPS = (aten.CatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.CatOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        # ATen skips 1-D empty inputs (the DynamicCache starts from `empty(0)`).
        inputs = [v for v in op.inputs if shape_of(v) != (0,) or rank_of(op.result) == 1]
        axis = normalize_axis(op.dim.value.data, rank_of(op.result))

        def build(e: Emitter) -> SSAValue:
            cast = [e.astype(v, dtype) for v in inputs]
            return e.concatenate(cast, axis, op.result.type)

        self.replace(op, rewriter, build)


class LowerStack(AtenLowering):
    OPS = (aten.StackOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.StackOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.result))
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            parts = [e.expand_dims(e.astype(v, dtype), [axis]) for v in op.inputs]
            return e.concatenate(parts, axis, op.result.type)

        self.replace(op, rewriter, build)


class LowerSplit(AtenLowering):
    OPS = (aten.SplitOp, aten.SplitWithSizesOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SplitOp | aten.SplitWithSizesOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        if isinstance(op, aten.SplitOp):
            sizes = [op.split_size.value.data] * (len(op.outputs) - 1)
        else:
            sizes = list(ints(op.split_sizes))[:-1]
        points = [sum(sizes[: i + 1]) for i in range(len(sizes))]

        def build(e: Emitter) -> list[SSAValue]:
            if not points:
                return [op.input]
            return e.emit_all(
                mlx.SplitOp.build(
                    operands=[op.input],
                    result_types=[[r.type for r in op.outputs]],
                    properties={"indices": int_array(points), "axis": IntegerAttr(axis, i64)},
                )
            )

        self.replace(op, rewriter, build)


class LowerFlip(AtenLowering):
    OPS = (aten.FlipOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.FlipOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        axes = normalize_axes(ints(op.dims), rank)

        def build(e: Emitter) -> SSAValue:
            starts: list[Size] = [0] * rank
            stops: list[Size] = e.dims(op.input)
            steps = [1] * rank
            for a in axes:
                # x[-1 : -(n+1) : -1] reverses a dim of any size n.
                starts[a] = -1
                stops[a] = -INT32_MAX
                steps[a] = -1
            return e.slice(op.input, starts, stops, steps, shape_of(op.result))

        self.replace(op, rewriter, build)


class LowerRepeat(AtenLowering):
    OPS = (aten.RepeatOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.RepeatOp, rewriter: PatternRewriter) -> None:
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.TileOp(op.input, ints(op.repeats), op.result.type)
            ),
        )


class LowerConstantPad(AtenLowering):
    OPS = (aten.ConstantPadNdOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ConstantPadNdOp, rewriter: PatternRewriter) -> None:
        pad = ints(op.pad)
        rank = rank_of(op.input)
        low, high = [0] * rank, [0] * rank
        for i in range(len(pad) // 2):
            low[rank - 1 - i], high[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
        value = op.value.value.data if op.value is not None else 0.0

        def build(e: Emitter) -> SSAValue:
            x: SSAValue = op.input
            if any(p < 0 for p in (*low, *high)):  # torch crops by negative padding
                dims = e.dims(x)
                starts: list[Size] = [max(0, -lo) for lo in low]
                stops: list[Size] = [e.add(d, min(0, hi)) for d, hi in zip(dims, high)]
                cropped = [
                    DYNAMIC if d == DYNAMIC else d - max(0, -lo) - max(0, -hi)
                    for d, lo, hi in zip(shape_of(x), low, high)
                ]
                x = e.slice(x, starts, stops, [1] * rank, cropped)
            grow_low, grow_high = [max(0, p) for p in low], [max(0, p) for p in high]
            if not any(grow_low) and not any(grow_high):
                return x
            return e.emit(mlx.PadOp(x, grow_low, grow_high, value, op.result.type))

        self.replace(op, rewriter, build)


PATTERNS: tuple[AtenLowering, ...] = (
    LowerReshape(),
    LowerExpand(),
    LowerPermute(),
    LowerTranspose(),
    LowerUnsqueeze(),
    LowerSqueeze(),
    LowerSlice(),
    LowerSelect(),
    LowerNarrow(),
    LowerCat(),
    LowerStack(),
    LowerSplit(),
    LowerFlip(),
    LowerRepeat(),
    LowerConstantPad(),
)
