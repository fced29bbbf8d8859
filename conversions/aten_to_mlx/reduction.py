"""Lowerings of reductions, scans (cumulative ops, softmax) and sorting; sorting and
selection are a stable argsort, then picks with `take_along_axis`."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import (
    Float32Type,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    INT32_MAX,
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    arange,
    full_range_slice,
    numel,
    tensor_of,
    to_bool,
    with_dtype,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import dtype_of, int_array, is_float, normalize_axis, rank_of, shape_of

REDUCTION_LOWERINGS: dict[str, str] = {
    "sum": "sum",
    "mean": "mean",
    "amax": "max",
    "amin": "min",
    "prod": "prod",
    "any": "any",
    "all": "all",
    "logsumexp": "logsumexp",
}


def _mlx_axes(axes: list[int], input: SSAValue) -> list[int]:
    """ATen's reduced axes as MLX's: a 0-d tensor has a dim 0 (or -1) in ATen, which
    reduces nothing, and no axes in MLX (`mx.sum(mx.array(1.0), axis=0)` is an error)."""
    return [a for a in axes if a < rank_of(input)]


class LowerReduction(AtenLowering):
    # The table's reductions: var and std are ReductionOps too, but LowerVariance's.
    OPS = tuple(aten.REDUCTION_OP_CLASSES.values())

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ReductionOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, aten.VarianceOp):
            return
        name = REDUCTION_LOWERINGS[op.name.removeprefix("aten.")]
        dtype = dtype_of(op.result)
        axes = _mlx_axes(op.reduced_axes(), op.input)
        keep = op.keepdim is not None

        def build(e: Emitter) -> SSAValue:
            x = op.input
            x = to_bool(e, x) if name in ("any", "all") else e.astype(x, dtype)
            return e.reduce(name, x, axes, keep, dtype)

        self.replace(op, rewriter, build)


class LowerVariance(AtenLowering):
    OPS = (aten.VarianceOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.VarianceOp, rewriter: PatternRewriter) -> None:
        correction = op.correction.value.data if op.correction is not None else 1.0
        if correction != int(correction):
            raise LoweringError(f"{op.name}: a fractional correction {correction} is not supported")
        dtype = dtype_of(op.result)
        axes = op.reduced_axes()
        keep = op.keepdim is not None
        shape = [(1 if keep else None) if i in axes else d for i, d in enumerate(shape_of(op.input))]
        op_cls = mlx.VarOp if op.name == "aten.var" else mlx.StdOp

        def build(e: Emitter) -> SSAValue:
            return e.emit(
                op_cls.build(
                    operands=[e.astype(op.input, dtype)],
                    result_types=[tensor_of(dtype, [d for d in shape if d is not None])],
                    properties={
                        "axes": int_array(axes),
                        "ddof": IntegerAttr(int(correction), i64),
                        **({"keepdims": UnitAttr()} if keep else {}),
                    },
                )
            )

        self.replace(op, rewriter, build)


class LowerArgReduction(AtenLowering):
    OPS = (aten.ArgReductionOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ArgReductionOp, rewriter: PatternRewriter) -> None:
        op_cls = mlx.ArgmaxOp if op.name == "aten.argmax" else mlx.ArgminOp
        props = {k: v for k, v in (("axis", op.dim), ("keepdims", op.keepdim)) if v is not None}
        if rank_of(op.input) == 0:  # ATen's dim 0 of a 0-d tensor: its only index is 0
            props = {}  # (MLX fails on a 0-d argmin with keepdims; the result is 0-d anyway)
        # MLX returns uint32 indices; the cast to ATen's int64 is explicit.
        u32 = IntegerType(32, Signedness.UNSIGNED)
        self.replace(
            op,
            rewriter,
            lambda e: e.astype(
                e.emit(
                    op_cls.build(
                        operands=[op.input],
                        result_types=[with_dtype(op.result.type, u32)],
                        properties=props,
                    )
                ),
                dtype_of(op.result),
            ),
        )


_U32 = IntegerType(32, Signedness.UNSIGNED)


SortingBody = Callable[[Emitter, SSAValue, int], list[SSAValue]]


def _along_sort_axis(op: Operation, input: SSAValue, dim: int, body: SortingBody) -> Callable[[Emitter], list[SSAValue]]:
    """Builds `body(e, x, axis)`'s results. ATen sorts a 0-d tensor as its one element
    (`dim` 0 or -1), where MLX needs an axis: then `body` runs on the 1-element vector,
    and its results are reshaped to the op's 0-d results."""
    if rank_of(input) != 0:
        axis = normalize_axis(dim, rank_of(input))
        return lambda e: body(e, input, axis)
    normalize_axis(dim, 1)  # ATen's rule: a 0-d tensor takes dim 0 or -1

    def build(e: Emitter) -> list[SSAValue]:
        results = body(e, e.reshape(input, [1]), 0)
        return [e.reshape(value, list(shape_of(result))) for value, result in zip(results, op.results)]

    return build


def _reverse(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    """`x` reversed along `axis` (`x[-1 : -(n+1) : -1]` works for any size n)."""
    return full_range_slice(e, x, axis, -1, -INT32_MAX, -1, shape_of(x))


def _argsort(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    return e.emit(
        mlx.ArgsortOp.build(
            operands=[x],
            result_types=[with_dtype(x.type, _U32)],
            properties={"axis": IntegerAttr(axis, i64)},
        )
    )


def _sorting_indices(e: Emitter, x: SSAValue, axis: int, descending: bool) -> SSAValue:
    """The i64 indices that sort `x` along `axis`, stably: equal values keep their input
    order in both directions. Descending is the ascending sort of the reversed input,
    reversed back (negating would overflow integers and cannot order bools); entry `j`
    of the reversed input is entry `n - 1 - j` of `x`."""
    if not descending:
        return e.astype(_argsort(e, x, axis), i64)
    backwards = e.astype(_reverse(e, _argsort(e, _reverse(e, x, axis), axis), axis), i64)
    size = e.dim(x, axis)
    last = e.constant(size - 1, i64) if isinstance(size, int) else e.as_tensor(e.index(e.add(size, -1)), i64)
    return e.binary("subtract", last, backwards)


def _take_along(e: Emitter, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
    return e.emit(mlx.TakeAlongAxisOp(x, indices, axis, tensor_of(dtype_of(x), shape_of(indices))))


def _pick(e: Emitter, indices: SSAValue, axis: int, position: Size) -> SSAValue:
    """The `position`-th entry of `indices` along `axis`, keeping the axis as size 1."""
    shape = list(shape_of(indices))
    shape[axis] = 1
    return full_range_slice(e, indices, axis, position, e.add(position, 1), 1, shape)


class LowerSort(AtenLowering):
    OPS = (aten.SortOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SortOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter, x: SSAValue, axis: int) -> list[SSAValue]:
            indices = _sorting_indices(e, x, axis, op.descending is not None)
            values = _take_along(e, x, indices, axis)
            return [values, e.astype(indices, dtype_of(op.indices))]

        self.replace(op, rewriter, _along_sort_axis(op, op.input, op.dim.value.data, build))


class LowerTopk(AtenLowering):
    OPS = (aten.TopkOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TopkOp, rewriter: PatternRewriter) -> None:
        k = op.k.value.data

        def build(e: Emitter, x: SSAValue, axis: int) -> list[SSAValue]:
            indices = _sorting_indices(e, x, axis, op.smallest is None)
            shape = list(shape_of(x))
            shape[axis] = k
            first = full_range_slice(e, indices, axis, 0, k, 1, shape)
            return [_take_along(e, x, first, axis), e.astype(first, dtype_of(op.indices))]

        self.replace(op, rewriter, _along_sort_axis(op, op.input, op.dim.value.data, build))


def _lower_middle(e: Emitter, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
    """The index (size 1 along `axis`) of the lower median of sorted `indices`; for
    floats, the index of a NaN instead when there is one (NaN sorts last), as ATen."""
    size = e.dim(x, axis)
    last = e.add(size, -1)
    middle = _pick(e, indices, axis, e.floordiv(last, 2))
    if not is_float(dtype_of(x)):
        return middle
    last_index = _pick(e, indices, axis, last)
    last_value = _take_along(e, x, last_index, axis)
    is_nan = e.unary("isnan", last_value, with_dtype(last_value.type, i1))
    return e.where(is_nan, last_index, middle)


def _lower_middle_of_numbers(e: Emitter, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
    """`_lower_middle` among the elements that are not NaN (which sort last): position
    (count - 1) // 2 of each row's sorted `indices`, 0 for a row of NaNs only."""
    if not is_float(dtype_of(x)):
        return _lower_middle(e, x, indices, axis)
    numbers = e.astype(e.unary("logical_not", e.unary("isnan", x, with_dtype(x.type, i1))), i64)
    count = e.reduce("sum", numbers, [axis], True, i64)
    last = e.binary("maximum", e.binary("subtract", count, e.constant(1, i64)), e.constant(0, i64))
    return _take_along(e, indices, e.binary("floor_divide", last, e.constant(2, i64)), axis)


class LowerMedian(AtenLowering):
    OPS = (aten.MedianOp, aten.NanmedianOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MedianLikeOp, rewriter: PatternRewriter) -> None:
        x = op.input
        dim = op.dim.value.data if op.dim is not None else None
        keep = op.keepdim is not None
        middle_of = _lower_middle_of_numbers if isinstance(op, aten.NanmedianOp) else _lower_middle

        def whole(e: Emitter) -> list[SSAValue]:
            flat = e.reshape(x, [numel(e, e.dims(x))])
            indices = _sorting_indices(e, flat, 0, False)
            value = _take_along(e, flat, middle_of(e, flat, indices, 0), 0)
            return [e.reshape(value, [])]

        def along(e: Emitter, x: SSAValue, axis: int) -> list[SSAValue]:
            indices = _sorting_indices(e, x, axis, False)
            middle = middle_of(e, x, indices, axis)
            values = _take_along(e, x, middle, axis)
            if not keep:
                values, middle = e.squeeze(values, [axis]), e.squeeze(middle, [axis])
            return [values, e.astype(middle, dtype_of(op.outputs[1]))]

        self.replace(op, rewriter, whole if dim is None else _along_sort_axis(op, x, dim, along))


class LowerCumulativeExtremum(AtenLowering):
    OPS = (aten.CummaxOp, aten.CumminOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.CumulativeExtremumOp, rewriter: PatternRewriter) -> None:
        scan_cls = mlx.CummaxOp if op.name == "aten.cummax" else mlx.CumminOp

        def scan(e: Emitter, cls: type[IRDLOperation], x: SSAValue, axis: int) -> SSAValue:
            return e.emit(cls.build(operands=[x], result_types=[x.type], properties={"axis": IntegerAttr(axis, i64)}))

        def build(e: Emitter, x: SSAValue, axis: int) -> list[SSAValue]:
            values = scan(e, scan_cls, x, axis)
            shape: list[Size] = [1] * rank_of(x)
            shape[axis] = e.dim(x, axis)
            positions = e.reshape(arange(e, shape[axis]), shape)
            # The latest position whose element equals the running extremum so far.
            reached = e.where(e.binary("equal", x, values), positions, e.constant(-1, i64))
            indices = scan(e, mlx.CummaxOp, reached, axis)
            if is_float(dtype_of(x)):  # from a NaN on: NaN, at the latest NaN
                is_nan = e.unary("isnan", x, with_dtype(x.type, i1))
                latest_nan = scan(e, mlx.CummaxOp, e.where(is_nan, positions, e.constant(-1, i64)), axis)
                seen = e.binary("greater_equal", latest_nan, e.constant(0, i64))
                values = e.where(seen, e.constant(math.nan, dtype_of(x)), values)
                indices = e.where(seen, latest_nan, indices)
            return [values, e.astype(indices, dtype_of(op.indices))]

        self.replace(op, rewriter, _along_sort_axis(op, op.input, op.dim.value.data, build))


class LowerKthvalue(AtenLowering):
    OPS = (aten.KthvalueOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.KthvalueOp, rewriter: PatternRewriter) -> None:
        k = op.k.value.data
        keep = op.keepdim is not None

        def build(e: Emitter, x: SSAValue, axis: int) -> list[SSAValue]:
            indices = _pick(e, _sorting_indices(e, x, axis, False), axis, k - 1)
            values = _take_along(e, x, indices, axis)
            if not keep:
                values, indices = e.squeeze(values, [axis]), e.squeeze(indices, [axis])
            return [values, e.astype(indices, dtype_of(op.indices))]

        self.replace(op, rewriter, _along_sort_axis(op, op.input, op.dim.value.data, build))


SCAN_LOWERINGS: dict[str, type[IRDLOperation]] = {
    "aten.cumsum": mlx.CumsumOp,
    "aten.cumprod": mlx.CumprodOp,
    "aten.logcumsumexp": mlx.LogcumsumexpOp,
}


class LowerScan(AtenLowering):
    OPS = (aten.AlongDimOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.AlongDimOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            match op.name:
                case "aten.cumsum" | "aten.cumprod" | "aten.logcumsumexp":
                    op_cls = SCAN_LOWERINGS[op.name]
                    return e.emit(
                        op_cls.build(
                            operands=[x],
                            result_types=[op.result.type],
                            properties={"axis": IntegerAttr(axis, i64)},
                        )
                    )
                case "aten.softmax":
                    return _softmax(e, x, axis)
                case _:  # log_softmax
                    lse = e.reduce("logsumexp", x, [axis], True, dtype)
                    return e.binary("subtract", x, lse)

        self.replace(op, rewriter, build)


def _softmax(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    return e.emit(mlx.SoftmaxOp(x, [axis], precise=dtype_of(x) != Float32Type()))


PATTERNS: tuple[AtenLowering, ...] = (
    LowerReduction(),
    LowerVariance(),
    LowerArgReduction(),
    LowerSort(),
    LowerTopk(),
    LowerMedian(),
    LowerKthvalue(),
    LowerCumulativeExtremum(),
    LowerScan(),
)
