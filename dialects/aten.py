"""The `aten` dialect: the tensor level, one op per ATen operator mlxir imports.

Operand conventions follow ATen's schemas: a `Tensor` is a builtin `tensor<...>`; a
`Scalar` is an SSA value of type `f64`, `i64`, `i1` or `index` (a SymInt); an `int[]`
whose entries may be symbolic is a mixed list (`[2, %s0, -1]`), a static `array<i64>`
plus `index` operands. Result types are explicit, so type promotion is decided by
the importer and checked here, never re-derived.

The elementwise families are declared once, one row per op in
`dialects/elementwise.py`, from which `UNARY_OPS` and `BINARY_OPS` come.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlxir.dialects.common import (
    DYNAMIC,
    IntList,
    ItemOpBase,
    MixedIntList,
    MlxirOp,
    RepeatInterleaveOpBase,
    StringLiteral,
    TensorOrScalarConstr,
    UniqueOpBase,
    broadcast_shapes,
    dims_compatible,
    dtype_of,
    format_dims,
    index_operands,
    int_array,
    ints,
    is_bool,
    is_float,
    is_integer_or_bool,
    normalize_axes,
    normalize_axis,
    rank_of,
    shape_of,
    verify_broadcast_result,
    verify_diagonal,
    verify_dtype,
    verify_element_count,
    verify_fourier_types,
    verify_lu,
    verify_matrices,
    verify_min_rank,
    verify_nonzero,
    verify_per_matrix,
    verify_permutation,
    verify_qr,
    verify_reduced_shape,
    verify_same_dtype,
    verify_same_shape,
    verify_shape_matches,
    verify_singular_values,
    verify_size_list,
    verify_square_matrices,
)
from mlxir.dialects.elementwise import BINARY, UNARY, DtypeRule, aten_rules

I64Attr = IntegerAttr.constr(type=i64)
F64Attr = FloatAttr[Float64Type]
I64Array = DenseArrayBase.constr(i64)
F64Array = DenseArrayBase.constr(Float64Type())


def _shape_of_operand(value: SSAValue) -> tuple[int, ...]:
    """Shape of a tensor operand; a scalar broadcasts like a 0-d tensor."""
    return shape_of(value) if isinstance(value.type, TensorType) else ()


# ---------------------------------------------------------------------------
# Elementwise: the tables
# ---------------------------------------------------------------------------


UNARY_OPS: dict[str, DtypeRule] = aten_rules(UNARY)
"""Unary elementwise ATen ops (beyond `gelu`, which has an option) and their dtype rule."""

BINARY_OPS: dict[str, DtypeRule] = aten_rules(BINARY)
"""Binary elementwise ATen ops; `other` is a tensor or a Scalar (Tensor/Scalar overloads)."""


def verify_elementwise_dtype(
    rule: DtypeRule, inputs: Sequence[SSAValue], result: SSAValue
) -> None:
    result_dtype = dtype_of(result)
    input_dtypes = [dtype_of(v) for v in inputs if isinstance(v.type, TensorType)]
    match rule:
        case DtypeRule.SAME:
            if input_dtypes and result_dtype != input_dtypes[0]:
                raise VerifyException(
                    f"result element type {result_dtype} must equal the input's "
                    f"{input_dtypes[0]}"
                )
        case DtypeRule.FLOAT:
            if not is_float(result_dtype):
                raise VerifyException(
                    f"result element type must be floating point, got {result_dtype}"
                )
            for dtype in input_dtypes:
                if is_float(dtype) and dtype != result_dtype and len(input_dtypes) == 1:
                    raise VerifyException(
                        f"result element type {result_dtype} must equal the float input's "
                        f"{dtype}"
                    )
        case DtypeRule.FLOAT_ONLY:
            for dtype in [*input_dtypes, result_dtype]:
                if not is_float(dtype):
                    raise VerifyException(
                        f"operand and result must be floating point, got {dtype}"
                    )
            if input_dtypes and result_dtype != input_dtypes[0]:
                raise VerifyException(
                    f"result element type {result_dtype} must equal the input's "
                    f"{input_dtypes[0]}"
                )
        case DtypeRule.BOOL:
            if not is_bool(result_dtype):
                raise VerifyException(f"result element type must be i1, got {result_dtype}")
        case DtypeRule.INTEGER_OR_BOOL:
            for value in [*inputs, result]:
                dtype = dtype_of(value)
                if not (is_integer_or_bool(dtype) and not isinstance(dtype, IndexType)):
                    raise VerifyException(
                        f"operands and result must be integer or bool, got {dtype}"
                    )
        case DtypeRule.ANY:
            pass


class UnaryElementwiseOp(MlxirOp):
    """`result = op(input)` elementwise; the dtype rule comes from `UNARY_OPS`."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[input], result_types=[result_type or input.type])

    def dtype_rule(self) -> DtypeRule:
        return UNARY_OPS[self.name.removeprefix("aten.")]

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)
        verify_elementwise_dtype(self.dtype_rule(), [self.input], self.result)


class BinaryElementwiseOp(MlxirOp):
    """`result = op(input, other)` with NumPy broadcasting; `other` may be a Scalar."""

    input = operand_def(TensorType)
    other = operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        other: SSAValue,
        result_type: Attribute,
        properties: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[input, other], result_types=[result_type], properties=properties or {}
        )

    def dtype_rule(self) -> DtypeRule:
        return BINARY_OPS[self.name.removeprefix("aten.")]

    def verify_(self) -> None:
        verify_broadcast_result(
            [shape_of(self.input), _shape_of_operand(self.other)], self.result
        )
        verify_elementwise_dtype(self.dtype_rule(), [self.input, self.other], self.result)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _define_elementwise(
    base: type[IRDLOperation], name: str
) -> type[IRDLOperation]:
    cls = type(
        f"{_camel(name)}Op",
        (base,),
        {"name": f"aten.{name}", "__doc__": f"`aten.{name}`", "__module__": __name__},
    )
    return irdl_op_definition(cls)


UNARY_OP_CLASSES: dict[str, type[IRDLOperation]] = {
    name: _define_elementwise(UnaryElementwiseOp, name)
    for name in UNARY_OPS
}
BINARY_OP_CLASSES: dict[str, type[IRDLOperation]] = {
    name: _define_elementwise(BinaryElementwiseOp, name)
    for name in BINARY_OPS
    if name not in ("add", "sub", "div")
}


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`input + alpha * other`."""

    name = "aten.add"
    alpha = opt_prop_def(F64Attr)
    assembly_format = (
        "$input `,` $other (`alpha` $alpha^)? attr-dict `:` type($input) `,` type($other) "
        "`->` type($result)"
    )


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`input - alpha * other`."""

    name = "aten.sub"
    alpha = opt_prop_def(F64Attr)
    assembly_format = (
        "$input `,` $other (`alpha` $alpha^)? attr-dict `:` type($input) `,` type($other) "
        "`->` type($result)"
    )


DIV_ROUNDING_MODES = ("trunc", "floor")


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """True division, or rounded toward zero (`trunc`) or down (`floor`)."""

    name = "aten.div"
    rounding_mode = opt_prop_def(StringAttr)
    custom_directives = (StringLiteral,)
    assembly_format = (
        "$input `,` $other (`rounding_mode` custom<StringLiteral>($rounding_mode)^)? attr-dict "
        "`:` type($input) `,` type($other) `->` type($result)"
    )

    def verify_(self) -> None:
        super().verify_()
        if self.rounding_mode is None:
            if not is_float(dtype_of(self.result)):
                raise VerifyException(
                    "true division (no rounding_mode) must have a floating-point result, "
                    f"got {dtype_of(self.result)}"
                )
        elif self.rounding_mode.data not in DIV_ROUNDING_MODES:
            raise VerifyException(
                f"rounding_mode must be one of {DIV_ROUNDING_MODES}, "
                f"got '{self.rounding_mode.data}'"
            )


BINARY_OP_CLASSES.update({"add": AddOp, "sub": SubOp, "div": DivOp})

# The table-generated classes by name (`ExpOp`), as a hand-written op would be.
globals().update({cls.__name__: cls for cls in (*UNARY_OP_CLASSES.values(), *BINARY_OP_CLASSES.values())})


def __getattr__(name: str) -> type[IRDLOperation]:
    """Only reached for a name this module lacks; declared so that type checkers know
    the table-generated classes (`ExpOp`) are op classes."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(MlxirOp):
    """GELU, exact (`none`, the default) or with the `tanh` approximation."""

    name = "aten.gelu"
    input = operand_def(TensorType)
    approximate = opt_prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (StringLiteral,)
    assembly_format = (
        "$input (`approximate` custom<StringLiteral>($approximate)^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)
        verify_elementwise_dtype(DtypeRule.FLOAT_ONLY, [self.input], self.result)
        if self.approximate is not None and self.approximate.data not in GELU_APPROXIMATIONS:
            raise VerifyException(
                f"approximate must be one of {GELU_APPROXIMATIONS}, "
                f"got '{self.approximate.data}'"
            )


@irdl_op_definition
class WhereOp(MlxirOp):
    """`condition ? input : other`, broadcasting all three."""

    name = "aten.where"
    condition = operand_def(TensorType)
    input = operand_def(TensorOrScalarConstr)
    other = operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $input `,` $other attr-dict `:` type($condition) `,` type($input) "
        "`,` type($other) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_dtype(self.condition, "bool", "condition")
        verify_broadcast_result(
            [
                shape_of(self.condition),
                _shape_of_operand(self.input),
                _shape_of_operand(self.other),
            ],
            self.result,
        )


@irdl_op_definition
class ClampOp(MlxirOp):
    """`min(max(input, min), max)`; either bound may be absent, a Scalar or a tensor."""

    name = "aten.clamp"
    input = operand_def(TensorType)
    min = opt_operand_def(TensorOrScalarConstr)
    max = opt_operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input (`min` $min^ `:` type($min))? (`max` $max^ `:` type($max))? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        if self.min is None and self.max is None:
            raise VerifyException("at least one of min and max must be given")
        bounds = [b for b in (self.min, self.max) if b is not None]
        verify_broadcast_result(
            [shape_of(self.input), *(_shape_of_operand(b) for b in bounds)], self.result
        )


@irdl_op_definition
class ToCopyOp(MlxirOp):
    """`aten._to_copy`: a dtype conversion (the result type gives the target dtype)."""

    name = "aten._to_copy"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)


# ---------------------------------------------------------------------------
# Reductions and scans
# ---------------------------------------------------------------------------


class ReductionOp(MlxirOp):
    """Reduces `dims` (all dims when absent), keeping them as size 1 with `keepdim`."""

    input = operand_def(TensorType)
    dims = opt_prop_def(I64Array)
    keepdim = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`dims` custom<IntList>($dims)^)? (`keepdim` $keepdim^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def __init__(
        self,
        input: SSAValue,
        dims: Sequence[int] | None,
        keepdim: bool,
        result_type: Attribute,
    ):
        properties: dict[str, Attribute] = {}
        if dims is not None:
            properties["dims"] = int_array(dims)
        if keepdim:
            properties["keepdim"] = UnitAttr()
        super().__init__(operands=[input], result_types=[result_type], properties=properties)

    def reduced_axes(self) -> list[int]:
        rank = rank_of(self.input)
        if self.dims is None or not ints(self.dims):
            return list(range(rank))
        return normalize_axes(ints(self.dims), rank)

    def verify_(self) -> None:
        verify_reduced_shape(
            shape_of(self.input), self.reduced_axes(), self.keepdim is not None, self.result
        )


def _define_reduction(name: str, doc: str) -> type[IRDLOperation]:
    cls = type(
        f"{_camel(name)}Op",
        (ReductionOp,),
        {"name": f"aten.{name}", "__doc__": doc, "__module__": __name__},
    )
    return irdl_op_definition(cls)


REDUCTION_OPS: dict[str, str] = {
    "sum": "Sum over dims (the result type may widen, as `dtype=` does).",
    "mean": "Mean over dims.",
    "amax": "Maximum over dims.",
    "amin": "Minimum over dims.",
    "prod": "Product over dims.",
    "any": "Logical or over dims (i1 result).",
    "all": "Logical and over dims (i1 result).",
    "logsumexp": "`log(sum(exp(x)))` over dims, computed stably.",
}
REDUCTION_OP_CLASSES: dict[str, type[IRDLOperation]] = {
    name: _define_reduction(name, doc) for name, doc in REDUCTION_OPS.items()
}


class VarianceOp(ReductionOp):
    """Variance or standard deviation with Bessel-style `correction` (default 1)."""

    correction = opt_prop_def(F64Attr)
    assembly_format = (
        "$input (`dims` custom<IntList>($dims)^)? (`correction` $correction^)? "
        "(`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


@irdl_op_definition
class VarOp(VarianceOp):
    name = "aten.var"


@irdl_op_definition
class StdOp(VarianceOp):
    name = "aten.std"


class ArgReductionOp(MlxirOp):
    """Index of the extreme element along `dim` (of the flattened input when absent)."""

    input = operand_def(TensorType)
    dim = opt_prop_def(I64Attr)
    keepdim = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`dim` $dim^)? (`keepdim` $keepdim^)? attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        verify_dtype(self.result, "integer (not bool)", "result")
        rank = rank_of(self.input)
        keep = self.keepdim is not None
        if self.dim is None:
            verify_shape_matches([1] * rank if keep else [], self.result)
            return
        axis = normalize_axis(self.dim.value.data, rank)
        verify_reduced_shape(shape_of(self.input), [axis], keep, self.result)


@irdl_op_definition
class ArgmaxOp(ArgReductionOp):
    name = "aten.argmax"


@irdl_op_definition
class ArgminOp(ArgReductionOp):
    name = "aten.argmin"


class AlongDimOp(MlxirOp):
    """An op that maps `input` to a same-shaped result along one `dim`."""

    input = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dim: int, result_type: Attribute | None = None):
        super().__init__(
            operands=[input],
            result_types=[result_type or input.type],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    def verify_(self) -> None:
        normalize_axis(self.dim.value.data, rank_of(self.input))
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class CumsumOp(AlongDimOp):
    name = "aten.cumsum"


@irdl_op_definition
class CumprodOp(AlongDimOp):
    name = "aten.cumprod"


@irdl_op_definition
class LogcumsumexpOp(AlongDimOp):
    """`log(cumsum(exp(input)))` along `dim`, computed stably."""

    name = "aten.logcumsumexp"

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


@irdl_op_definition
class SoftmaxOp(AlongDimOp):
    name = "aten.softmax"

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


@irdl_op_definition
class LogSoftmaxOp(AlongDimOp):
    name = "aten.log_softmax"

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


# ---------------------------------------------------------------------------
# Sorting and selection
# ---------------------------------------------------------------------------


def _verify_values_and_indices(
    input: SSAValue, values: SSAValue, indices: SSAValue, expected: Sequence[int]
) -> None:
    """`values` (the input's element type) and `indices` (an integer type) of one shape."""
    verify_shape_matches(expected, values, "values")
    verify_shape_matches(expected, indices, "indices")
    if dtype_of(values) != dtype_of(input):
        raise VerifyException(
            f"values element type {dtype_of(values)} must equal the input's {dtype_of(input)}"
        )
    verify_dtype(indices, "integer (not bool)", "indices")


@irdl_op_definition
class SortOp(MlxirOp):
    """`aten.sort`: the input sorted along `dim` (ascending, or `descending`) and each
    value's index in the input. Ties keep their input order (a stable sort, which is
    also a valid answer for ATen's `stable=False`)."""

    name = "aten.sort"
    input = operand_def(TensorType)
    dim = prop_def(I64Attr)
    descending = opt_prop_def(UnitAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dim` $dim (`descending` $descending^)? attr-dict `:` type($input) `->` "
        "type($values) `,` type($indices)"
    )

    def verify_(self) -> None:
        normalize_axis(self.dim.value.data, rank_of(self.input))
        _verify_values_and_indices(self.input, self.values, self.indices, shape_of(self.input))


class CumulativeExtremumOp(MlxirOp):
    """The running maximum (`aten.cummax`) or minimum (`aten.cummin`) along `dim`, and
    the index where each was reached: the latest of equal values; from the first NaN
    on, NaN and the latest NaN's index."""

    input = operand_def(TensorType)
    dim = prop_def(I64Attr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def verify_(self) -> None:
        normalize_axis(self.dim.value.data, rank_of(self.input))
        _verify_values_and_indices(self.input, self.values, self.indices, shape_of(self.input))


@irdl_op_definition
class CummaxOp(CumulativeExtremumOp):
    name = "aten.cummax"


@irdl_op_definition
class CumminOp(CumulativeExtremumOp):
    name = "aten.cummin"


@irdl_op_definition
class TopkOp(MlxirOp):
    """`aten.topk`: the `k` largest (or, with `smallest`, smallest) entries along `dim`,
    in sorted order, and their indices. ATen's `sorted=False` allows any order, so the
    sorted one is always a valid answer."""

    name = "aten.topk"
    input = operand_def(TensorType)
    k = prop_def(I64Attr)
    dim = prop_def(I64Attr)
    smallest = opt_prop_def(UnitAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `k` $k `dim` $dim (`smallest` $smallest^)? attr-dict `:` type($input) `->` "
        "type($values) `,` type($indices)"
    )

    def verify_(self) -> None:
        shape = list(shape_of(self.input))
        axis = normalize_axis(self.dim.value.data, len(shape))
        k = self.k.value.data
        size = shape[axis] if shape else 1
        if k < 0 or (size != DYNAMIC and k > size):
            raise VerifyException(
                f"k {k} is out of range for a dim of size {format_dims([size])[1:-1]}"
            )
        if shape:
            shape[axis] = k
        _verify_values_and_indices(self.input, self.values, self.indices, shape)


class MedianLikeOp(MlxirOp):
    """The forms and rules `aten.median` and `aten.nanmedian` share: without `dim`, of
    all elements (one 0-d result); with `dim`, along it, giving the values and their
    indices (`keepdim` keeps `dim` as size 1)."""

    input = operand_def(TensorType)
    dim = opt_prop_def(I64Attr)
    keepdim = opt_prop_def(UnitAttr)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`dim` $dim^)? (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` "
        "type($outputs)"
    )

    def verify_(self) -> None:
        if self.dim is None:
            if self.keepdim is not None:
                raise VerifyException("keepdim needs a dim")
            if len(self.outputs) != 1:
                raise VerifyException(
                    f"without a dim the median has 1 result, got {len(self.outputs)}"
                )
            verify_shape_matches([], self.outputs[0])
            if dtype_of(self.outputs[0]) != dtype_of(self.input):
                raise VerifyException("result element type must equal the input's")
            return
        if len(self.outputs) != 2:
            raise VerifyException(
                f"with a dim the median has 2 results (values, indices), got {len(self.outputs)}"
            )
        _verify_values_and_indices(
            self.input,
            self.outputs[0],
            self.outputs[1],
            _reduced_along(self.input, self.dim.value.data, self.keepdim is not None),
        )


@irdl_op_definition
class MedianOp(MedianLikeOp):
    """`aten.median`: the lower of the two middle values for an even count (NaN when
    there is a NaN)."""

    name = "aten.median"


@irdl_op_definition
class NanmedianOp(MedianLikeOp):
    """`aten.nanmedian`: the median of the elements that are not NaN (NaN only where
    all are)."""

    name = "aten.nanmedian"


def _reduced_along(input: SSAValue, dim: int, keepdim: bool) -> list[int]:
    shape = list(shape_of(input))
    axis = normalize_axis(dim, len(shape))
    if not shape:
        return []
    if keepdim:
        shape[axis] = 1
    else:
        del shape[axis]
    return shape


@irdl_op_definition
class KthvalueOp(MlxirOp):
    """`aten.kthvalue`: the `k`-th smallest value along `dim` (`k` counts from 1) and
    its index."""

    name = "aten.kthvalue"
    input = operand_def(TensorType)
    k = prop_def(I64Attr)
    dim = prop_def(I64Attr)
    keepdim = opt_prop_def(UnitAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `k` $k `dim` $dim (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` "
        "type($values) `,` type($indices)"
    )

    def verify_(self) -> None:
        shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(shape))
        k = self.k.value.data
        size = shape[axis] if shape else 1
        if k < 1 or (size != DYNAMIC and k > size):
            raise VerifyException(f"k {k} is out of range [1, {format_dims([size])[1:-1]}]")
        _verify_values_and_indices(
            self.input,
            self.values,
            self.indices,
            _reduced_along(self.input, self.dim.value.data, self.keepdim is not None),
        )


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------


class SizedOp(MlxirOp):
    """An op whose `int[]` sizes mix literals and `index` values: `[2, %s0, -1]`."""

    sizes = var_operand_def(IndexType)
    static_sizes = prop_def(I64Array)

    def size_list(self) -> tuple[int, ...]:
        return ints(self.static_sizes)


class ReshapeLikeOp(SizedOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input custom<MixedIntList>($sizes, $static_sizes) attr-dict `:` type($input) "
        "`->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def __init__(
        self, input: SSAValue, sizes: Sequence[SSAValue | int], result_type: Attribute
    ):
        static, dynamic = index_operands(sizes)
        super().__init__(
            operands=[input, dynamic],
            result_types=[result_type],
            properties={"static_sizes": int_array(static)},
        )

    def verify_(self) -> None:
        verify_size_list(
            self.size_list(), len(self.sizes), shape_of(self.result), allow_infer=True
        )
        verify_element_count(shape_of(self.input), shape_of(self.result), "reshape")
        if dtype_of(self.input) != dtype_of(self.result):
            raise VerifyException("result element type must equal the input's")


@irdl_op_definition
class ViewOp(ReshapeLikeOp):
    name = "aten.view"


@irdl_op_definition
class ReshapeOp(ReshapeLikeOp):
    name = "aten.reshape"


@irdl_op_definition
class ExpandOp(SizedOp):
    """Broadcasts size-1 dims to `sizes` (`-1` keeps a dim); may prepend dims."""

    name = "aten.expand"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input custom<MixedIntList>($sizes, $static_sizes) attr-dict `:` type($input) "
        "`->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        in_shape, out_shape = shape_of(self.input), shape_of(self.result)
        if len(out_shape) < len(in_shape):
            raise VerifyException(
                f"expand cannot lower the rank from {len(in_shape)} to {len(out_shape)}"
            )
        sizes = self.size_list()
        verify_size_list(
            sizes, len(self.sizes), out_shape, allow_infer=True, unique_infer=False
        )
        lead = len(out_shape) - len(in_shape)
        for i, d in enumerate(in_shape):
            out = out_shape[lead + i]
            if sizes[lead + i] == -1:
                if not dims_compatible(d, out):
                    raise VerifyException(f"dim {lead + i} kept by -1 changes from {d} to {out}")
            elif d not in (1, DYNAMIC) and not dims_compatible(d, out):
                raise VerifyException(
                    f"input dim {i} of size {d} is not 1 and cannot expand to {out}"
                )
        if any(s == -1 for s in sizes[:lead]):
            raise VerifyException("a new leading dim cannot be -1")


@irdl_op_definition
class PermuteOp(MlxirOp):
    name = "aten.permute"
    input = operand_def(TensorType)
    dims = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input custom<IntList>($dims) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def verify_(self) -> None:
        rank = rank_of(self.input)
        perm = [normalize_axis(d, rank) for d in ints(self.dims)]
        verify_permutation(perm, rank, "dims")
        in_shape = shape_of(self.input)
        verify_shape_matches([in_shape[p] for p in perm], self.result)


@irdl_op_definition
class TransposeOp(MlxirOp):
    name = "aten.transpose"
    input = operand_def(TensorType)
    dim0 = prop_def(I64Attr)
    dim1 = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dims` $dim0 `,` $dim1 attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        rank = rank_of(self.input)
        a = normalize_axis(self.dim0.value.data, rank)
        b = normalize_axis(self.dim1.value.data, rank)
        expected = list(shape_of(self.input))
        if expected:  # a 0-d input (dims 0 or -1) transposes to itself
            expected[a], expected[b] = expected[b], expected[a]
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class UnsqueezeOp(MlxirOp):
    name = "aten.unsqueeze"
    input = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        rank = rank_of(self.input)
        axis = normalize_axis(self.dim.value.data, rank + 1)
        expected = list(shape_of(self.input))
        expected.insert(axis, 1)
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class SqueezeOp(MlxirOp):
    """Removes the listed size-1 dims (every size-1 dim when `dims` is absent)."""

    name = "aten.squeeze"
    input = operand_def(TensorType)
    dims = opt_prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`dims` custom<IntList>($dims)^)? attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        in_shape = shape_of(self.input)
        if self.dims is None:
            axes = [i for i, d in enumerate(in_shape) if d in (1, DYNAMIC)]
        else:
            axes = normalize_axes(ints(self.dims), len(in_shape))
            if not in_shape:  # dim 0 or -1 of a 0-d input: nothing to remove
                axes = []
        # ATen keeps a listed dim that is not 1; a dynamic dim is decided at run time.
        removable = [a for a in axes if in_shape[a] in (1, DYNAMIC)]
        certain = [a for a in axes if in_shape[a] == 1]
        out_rank = rank_of(self.result)
        if not len(in_shape) - len(removable) <= out_rank <= len(in_shape) - len(certain):
            raise VerifyException(
                f"result rank {out_rank} is inconsistent with squeezing dims {axes} of "
                f"{format_dims(in_shape)}"
            )


class RangeOp(MlxirOp):
    """An op over `[start, end, step]` of one `dim`; the bounds may be `index` values."""

    bounds = var_operand_def(IndexType)
    static_bounds = prop_def(I64Array)
    dim = prop_def(I64Attr)

    def verify_range(self, input_shape: Sequence[int]) -> int:
        axis = normalize_axis(self.dim.value.data, len(input_shape))
        static = ints(self.static_bounds)
        if len(static) != 3:
            raise VerifyException(
                f"the range must be [start, end, step], got {len(static)} entries"
            )
        if sum(1 for s in static if s == DYNAMIC) != len(self.bounds):
            raise VerifyException("the range's dynamic entries do not match its index operands")
        step = static[2]
        if step != DYNAMIC and step <= 0:
            raise VerifyException(f"step must be positive, got {step}")
        return axis


def _slice_length(size: int, start: int, end: int, step: int) -> int:
    if DYNAMIC in (size, start, end, step):
        return DYNAMIC
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(0, min(size, end + size if end < 0 else end))
    return max(0, (end - start + step - 1) // step)


@irdl_op_definition
class SliceOp(RangeOp):
    name = "aten.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dim` $dim custom<MixedIntList>($bounds, $static_bounds) attr-dict "
        "`:` type($input) `->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = self.verify_range(in_shape)
        start, end, step = ints(self.static_bounds)
        expected = list(in_shape)
        expected[axis] = _slice_length(in_shape[axis], start, end, step)
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class SliceScatterOp(RangeOp):
    """Writes `src` into the `[start, end, step]` slice of `dim` of `input`."""

    name = "aten.slice_scatter"
    input = operand_def(TensorType)
    src = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $src `dim` $dim custom<MixedIntList>($bounds, $static_bounds) "
        "attr-dict `:` type($input) `,` type($src) `->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = self.verify_range(in_shape)
        verify_same_shape(self.input, self.result)
        src = shape_of(self.src)
        if len(src) != len(in_shape) or not all(
            dims_compatible(a, b) for i, (a, b) in enumerate(zip(src, in_shape)) if i != axis
        ):
            raise VerifyException(
                f"src shape {format_dims(src)} must match input shape {format_dims(in_shape)} "
                f"outside dim {axis}"
            )
        start, end, step = ints(self.static_bounds)
        expected = list(in_shape)
        expected[axis] = _slice_length(in_shape[axis], start, end, step)
        verify_shape_matches(expected, self.src, "src")


@irdl_op_definition
class SelectOp(MlxirOp):
    """`input[..., index, ...]` along `dim`, dropping that dim; `index` may be an `index`."""

    name = "aten.select"
    input = operand_def(TensorType)
    index = var_operand_def(IndexType)
    static_index = prop_def(I64Array)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dim` $dim `index` custom<MixedIntList>($index, $static_index) attr-dict "
        "`:` type($input) `->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(in_shape))
        static = ints(self.static_index)
        if len(static) != 1 or static.count(DYNAMIC) != len(self.index):
            raise VerifyException("index must be exactly one integer or index value")
        size = in_shape[axis]
        if static[0] != DYNAMIC and size != DYNAMIC and not -size <= static[0] < size:
            raise VerifyException(f"index {static[0]} is out of range for dim of size {size}")
        verify_shape_matches([d for i, d in enumerate(in_shape) if i != axis], self.result)


@irdl_op_definition
class NarrowOp(MlxirOp):
    """`input` restricted to `[start, start + length)` of `dim`."""

    name = "aten.narrow"
    input = operand_def(TensorType)
    bounds = var_operand_def(IndexType)
    static_bounds = prop_def(I64Array)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dim` $dim custom<MixedIntList>($bounds, $static_bounds) attr-dict "
        "`:` type($input) `->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(in_shape))
        static = ints(self.static_bounds)
        if len(static) != 2 or static.count(DYNAMIC) != len(self.bounds):
            raise VerifyException("narrow takes [start, length]")
        start, length = static
        size = in_shape[axis]
        if length != DYNAMIC and length < 0:
            raise VerifyException(f"length must be non-negative, got {length}")
        if DYNAMIC not in (start, length, size):
            begin = start + size if start < 0 else start
            if begin < 0 or begin + length > size:
                raise VerifyException(
                    f"start {start} and length {length} do not fit in the dim of size {size}"
                )
        expected = list(in_shape)
        expected[axis] = length
        verify_shape_matches(expected, self.result)


class JoinOp(MlxirOp):
    inputs = var_operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"

    def verify_inputs(self) -> None:
        if not self.inputs:
            raise VerifyException("expects at least one input")
        dtypes = {dtype_of(v) for v in self.inputs}
        if len(dtypes) > 1:
            raise VerifyException("inputs must share one element type")


@irdl_op_definition
class CatOp(JoinOp):
    name = "aten.cat"

    def verify_(self) -> None:
        self.verify_inputs()
        # ATen skips 1-D empty tensors (the DynamicCache starts from `empty(0)`).
        shapes = [shape_of(v) for v in self.inputs if shape_of(v) != (0,)]
        if not shapes:
            return
        rank = len(shapes[0])
        if rank == 0:
            raise VerifyException("0-d inputs cannot be concatenated")
        axis = normalize_axis(self.dim.value.data, rank)
        total = 0
        for shape in shapes:
            if len(shape) != rank:
                raise VerifyException("inputs must have equal rank")
            total = DYNAMIC if DYNAMIC in (total, shape[axis]) else total + shape[axis]
        expected = [total if i == axis else shapes[0][i] for i in range(rank)]
        for shape in shapes:
            for i, (a, b) in enumerate(zip(shape, expected)):
                if i != axis and not dims_compatible(a, b):
                    raise VerifyException(
                        f"inputs differ in dim {i} ({a} vs {b}), which is not the cat dim"
                    )
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class StackOp(JoinOp):
    name = "aten.stack"

    def verify_(self) -> None:
        self.verify_inputs()
        shape = shape_of(self.inputs[0])
        for value in self.inputs[1:]:
            if len(shape_of(value)) != len(shape) or not all(
                dims_compatible(a, b) for a, b in zip(shape_of(value), shape)
            ):
                raise VerifyException("inputs must have equal shapes")
        axis = normalize_axis(self.dim.value.data, len(shape) + 1)
        expected = list(shape)
        expected.insert(axis, len(self.inputs))
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class SplitWithSizesOp(MlxirOp):
    name = "aten.split_with_sizes"
    input = operand_def(TensorType)
    split_sizes = prop_def(I64Array)
    dim = prop_def(I64Attr)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input custom<IntList>($split_sizes) `dim` $dim attr-dict `:` type($input) "
        "`->` type($outputs)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(in_shape))
        sizes = ints(self.split_sizes)
        if len(sizes) != len(self.outputs):
            raise VerifyException(f"{len(sizes)} split sizes but {len(self.outputs)} results")
        if in_shape[axis] != DYNAMIC and sum(sizes) != in_shape[axis]:
            raise VerifyException(
                f"split sizes {list(sizes)} do not sum to the dim size {in_shape[axis]}"
            )
        for size, out in zip(sizes, self.outputs):
            expected = list(in_shape)
            expected[axis] = size
            verify_shape_matches(expected, out)


@irdl_op_definition
class SplitOp(MlxirOp):
    """Chunks of `split_size` along `dim` (the last may be shorter)."""

    name = "aten.split"
    input = operand_def(TensorType)
    split_size = prop_def(I64Attr)
    dim = prop_def(I64Attr)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `size` $split_size `dim` $dim attr-dict `:` type($input) `->` type($outputs)"
    )

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        in_shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(in_shape))
        size = self.split_size.value.data
        if size <= 0:
            raise VerifyException(f"split_size must be positive, got {size}")
        length = in_shape[axis]
        if length != DYNAMIC:
            count = max(1, -(-length // size))
            if count != len(self.outputs):
                raise VerifyException(
                    f"splitting {length} by {size} gives {count} results, "
                    f"not {len(self.outputs)}"
                )
        for i, out in enumerate(self.outputs):
            expected = list(in_shape)
            expected[axis] = DYNAMIC if length == DYNAMIC else min(size, length - i * size)
            verify_shape_matches(expected, out, f"result {i}")


@irdl_op_definition
class FlipOp(MlxirOp):
    name = "aten.flip"
    input = operand_def(TensorType)
    dims = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input custom<IntList>($dims) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def verify_(self) -> None:
        normalize_axes(ints(self.dims), rank_of(self.input))
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class RepeatOp(MlxirOp):
    """Tiles `input` `repeats[i]` times along each dim (may prepend dims)."""

    name = "aten.repeat"
    input = operand_def(TensorType)
    repeats = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input custom<IntList>($repeats) attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        reps = ints(self.repeats)
        in_shape = shape_of(self.input)
        if len(reps) < len(in_shape):
            raise VerifyException(
                f"repeats has {len(reps)} entries, fewer than the input rank {len(in_shape)}"
            )
        if any(r < 0 for r in reps):
            raise VerifyException("repeats must be non-negative")
        padded = [1] * (len(reps) - len(in_shape)) + list(in_shape)
        verify_shape_matches(
            [DYNAMIC if d == DYNAMIC else d * r for d, r in zip(padded, reps)], self.result
        )


@irdl_op_definition
class ConstantPadNdOp(MlxirOp):
    """Pads with `value`; `pad` lists (before, after) pairs from the last dim backwards."""

    name = "aten.constant_pad_nd"
    input = operand_def(TensorType)
    pad = prop_def(I64Array)
    value = opt_prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input custom<IntList>($pad) (`value` $value^)? attr-dict `:` type($input) "
        "`->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        pad = ints(self.pad)
        in_shape = list(shape_of(self.input))
        if len(pad) % 2 or len(pad) // 2 > len(in_shape):
            raise VerifyException(
                f"pad must hold (before, after) pairs for at most {len(in_shape)} dims, "
                f"got {len(pad)} entries"
            )
        for i in range(len(pad) // 2):
            axis = len(in_shape) - 1 - i
            if in_shape[axis] != DYNAMIC:
                in_shape[axis] += pad[2 * i] + pad[2 * i + 1]
        verify_shape_matches(in_shape, self.result)


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _verify_index_tensors(
    indices: Sequence[SSAValue], indexed_dims: Sequence[int], rank: int
) -> list[int]:
    dims = list(indexed_dims)
    if len(dims) != len(indices):
        raise VerifyException(
            f"{len(indices)} index tensors but {len(dims)} indexed dims"
        )
    if any(not 0 <= d < rank for d in dims) or dims != sorted(set(dims)):
        raise VerifyException(
            f"indexed dims {dims} must be increasing and within [0, {rank})"
        )
    for value in indices:
        if not is_integer_or_bool(dtype_of(value)):
            raise VerifyException(f"index tensors must be integer or bool, got {dtype_of(value)}")
    return dims


@irdl_op_definition
class IndexOp(MlxirOp):
    """`aten.index.Tensor`: advanced indexing; `at [...]` lists the indexed dims (the
    positions of non-None entries in ATen's index list)."""

    name = "aten.index"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    indexed_dims = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $indices `]` `at` custom<IntList>($indexed_dims) attr-dict `:` "
        "type($input) `,` `(` type($indices) `)` `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        _verify_index_tensors(self.indices, ints(self.indexed_dims), rank_of(self.input))
        if not self.indices:
            raise VerifyException("expects at least one index tensor")


@irdl_op_definition
class NonzeroOp(MlxirOp):
    """`aten.nonzero` (and `argwhere`): the indices of the input's nonzero elements, in
    row-major order, as int64 `[count, rank]`. The count depends on the values: the
    runtime evaluates the input there (docs/semantics.md §8)."""

    name = "aten.nonzero"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_nonzero(self.input, self.result)


@irdl_op_definition
class UniqueOp(UniqueOpBase):
    """`aten._unique2` and `aten.unique_consecutive` without a dim: the distinct values
    of the flattened input, ascending, or with `consecutive` the first of each run of
    equal neighbours, in input order. `inverse` gives each input element's position in
    `output`, `counts` how many elements each value stands for (`[0]` each unless
    `return_inverse` / `return_counts`). Each NaN is distinct, as in ATen's CPU kernel.
    The length depends on the values: a sync point (docs/semantics.md §8)."""

    name = "aten.unique"


@irdl_op_definition
class RepeatInterleaveOp(RepeatInterleaveOpBase):
    """`aten.repeat_interleave.Tensor(repeats)`: each position `i` of `repeats`,
    `repeats[i]` times (`x.repeat_interleave(r, dim)` is an `index_select` of these).
    The length, `sum(repeats)`, depends on the values: a sync point."""

    name = "aten.repeat_interleave"


@irdl_op_definition
class ItemOp(ItemOpBase):
    """`aten._local_scalar_dense` (`.item()`, `int(t)`) of an integer or bool tensor of
    one element: its value as an `index`, read on the host (a sync point). A float's
    `.item()` is imported as the 0-d tensor itself and needs no op."""

    name = "aten.item"


@irdl_op_definition
class IndexPutOp(MlxirOp):
    """`input[indices] = values` (or `+=` with `accumulate`), functionally."""

    name = "aten.index_put"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    values = operand_def(TensorType)
    indexed_dims = prop_def(I64Array)
    accumulate = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $indices `]` `at` custom<IntList>($indexed_dims) `,` $values "
        "(`accumulate` $accumulate^)? attr-dict `:` type($input) `,` `(` type($indices) `)` "
        "`,` type($values) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        _verify_index_tensors(self.indices, ints(self.indexed_dims), rank_of(self.input))
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class IndexSelectOp(MlxirOp):
    name = "aten.index_select"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $index `dim` $dim attr-dict `:` type($input) `,` type($index) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        in_shape = shape_of(self.input)
        axis = normalize_axis(self.dim.value.data, len(in_shape))
        verify_dtype(self.index, "integer (not bool)", "index")
        if rank_of(self.index) > 1:
            raise VerifyException(f"index must be 0-d or 1-D, got rank {rank_of(self.index)}")
        expected = list(in_shape)
        if expected:  # a 0-d input stays 0-d
            expected[axis] = shape_of(self.index)[0] if rank_of(self.index) else 1
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class IndexCopyOp(MlxirOp):
    """Copies `source` slices into `input` at `index` along `dim`, functionally."""

    name = "aten.index_copy"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    source = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $index `,` $source `dim` $dim attr-dict `:` type($input) `,` "
        "type($index) `,` type($source) `->` type($result)"
    )

    def verify_(self) -> None:
        normalize_axis(self.dim.value.data, rank_of(self.input))
        verify_dtype(self.index, "integer (not bool)", "index")
        verify_same_shape(self.input, self.result)
        if rank_of(self.source) != rank_of(self.input):
            raise VerifyException("source must have the input's rank")


@irdl_op_definition
class EmbeddingOp(MlxirOp):
    """Rows of `weight` [num, dim] picked by `indices`: result `indices.shape ++ [dim]`."""

    name = "aten.embedding"
    weight = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$weight `,` $indices attr-dict `:` type($weight) `,` type($indices) `->` type($result)"
    )

    def verify_(self) -> None:
        if rank_of(self.weight) != 2:
            raise VerifyException(f"weight must be 2-D, got rank {rank_of(self.weight)}")
        verify_dtype(self.indices, "integer (not bool)", "indices")
        verify_shape_matches([*shape_of(self.indices), shape_of(self.weight)[1]], self.result)


@irdl_op_definition
class GatherOp(MlxirOp):
    """`result[i][j] = input[index[i][j]][j]` along `dim` (torch.gather)."""

    name = "aten.gather"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $index `dim` $dim attr-dict `:` type($input) `,` type($index) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        normalize_axis(self.dim.value.data, rank_of(self.input))
        verify_dtype(self.index, "integer (not bool)", "index")
        if rank_of(self.index) != rank_of(self.input):
            raise VerifyException("index must have the input's rank")
        verify_shape_matches(shape_of(self.index), self.result)


def _verify_scatter_operands(
    input: SSAValue, index: SSAValue, src: SSAValue, dim: int, result: SSAValue
) -> None:
    """ATen's scatter rules: one rank for input, index and a tensor src; index no larger
    than src in any dim, nor than input outside `dim`; src of the input's type."""
    x, idx = shape_of(input), shape_of(index)
    axis = normalize_axis(dim, len(x))
    verify_dtype(index, "integer (not bool)", "index")
    if len(idx) != len(x):
        raise VerifyException(f"index must have the input's rank {len(x)}, got {len(idx)}")
    for d, (i, s) in enumerate(zip(idx, x)):
        if d != axis and DYNAMIC not in (i, s) and i > s:
            raise VerifyException(f"index dim {d} ({i}) exceeds the input's ({s})")
    if isinstance(src.type, TensorType):
        if rank_of(src) != len(x):
            raise VerifyException(f"src must have the input's rank {len(x)}, got {rank_of(src)}")
        for d, (i, s) in enumerate(zip(idx, shape_of(src))):
            if DYNAMIC not in (i, s) and i > s:
                raise VerifyException(f"index dim {d} ({i}) exceeds src's ({s})")
        if dtype_of(src) != dtype_of(input):
            raise VerifyException(
                f"src element type {dtype_of(src)} must equal the input's {dtype_of(input)}"
            )
    verify_same_shape(input, result)
    if dtype_of(result) != dtype_of(input):
        raise VerifyException("result element type must equal the input's")


SCATTER_MODES = ("add", "multiply")


@irdl_op_definition
class ScatterOp(MlxirOp):
    """`aten.scatter`: `input` with `src` written at `index` along `dim` (for dim 0,
    `result[index[i][j]][j] = src[i][j]`); `src` is a tensor or a Scalar written at
    every index. With `reduce` (`add` or `multiply`) the values combine instead."""

    name = "aten.scatter"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    src = operand_def(TensorOrScalarConstr)
    dim = prop_def(I64Attr)
    reduce = opt_prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (StringLiteral,)
    assembly_format = (
        "$input `,` $index `,` $src `dim` $dim (`reduce` custom<StringLiteral>($reduce)^)? "
        "attr-dict `:` type($input) `,` type($index) `,` type($src) `->` type($result)"
    )

    def verify_(self) -> None:
        _verify_scatter_operands(self.input, self.index, self.src, self.dim.value.data, self.result)
        if self.reduce is not None and self.reduce.data not in SCATTER_MODES:
            raise VerifyException(
                f"reduce must be one of {SCATTER_MODES}, got '{self.reduce.data}'"
            )


SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


@irdl_op_definition
class ScatterReduceOp(MlxirOp):
    """`aten.scatter_reduce` (and `scatter_add`, its `sum`): `src` combined into `input`
    at `index` along `dim` by `reduce`; without `include_self` the input's values at
    the written positions do not take part."""

    name = "aten.scatter_reduce"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    src = operand_def(TensorType)
    dim = prop_def(I64Attr)
    reduce = prop_def(StringAttr)
    include_self = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (StringLiteral,)
    assembly_format = (
        "$input `,` $index `,` $src `dim` $dim `reduce` custom<StringLiteral>($reduce) "
        "(`include_self` $include_self^)? attr-dict `:` type($input) `,` type($index) `,` "
        "type($src) `->` type($result)"
    )

    def verify_(self) -> None:
        _verify_scatter_operands(self.input, self.index, self.src, self.dim.value.data, self.result)
        if self.reduce.data not in SCATTER_REDUCTIONS:
            raise VerifyException(
                f"reduce must be one of {SCATTER_REDUCTIONS}, got '{self.reduce.data}'"
            )


@irdl_op_definition
class MaskedFillOp(MlxirOp):
    name = "aten.masked_fill"
    input = operand_def(TensorType)
    mask = operand_def(TensorType)
    value = operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $mask `,` $value attr-dict `:` type($input) `,` type($mask) `,` "
        "type($value) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_dtype(self.mask, "bool", "mask")
        if isinstance(self.value.type, TensorType) and rank_of(self.value) != 0:
            raise VerifyException("a tensor fill value must be 0-d")
        verify_broadcast_result([shape_of(self.input), shape_of(self.mask)], self.result)
        if dtype_of(self.result) != dtype_of(self.input):
            raise VerifyException("result element type must equal the input's")


# ---------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------


def _verify_matmul_shapes(a: Sequence[int], b: Sequence[int], result: SSAValue) -> None:
    """NumPy matmul shape rule, with 1-D operands promoted and their dim dropped."""
    if not a or not b:
        raise VerifyException("matmul operands must have rank >= 1")
    a2 = [1, *a] if len(a) == 1 else list(a)
    b2 = [*b, 1] if len(b) == 1 else list(b)
    if not dims_compatible(a2[-1], b2[-2]):
        raise VerifyException(
            f"contracting dims differ: {format_dims(a)} @ {format_dims(b)}"
        )
    batch = broadcast_shapes([a2[:-2], b2[:-2]])
    expected = [*batch, a2[-2], b2[-1]]
    if len(a) == 1:
        expected.pop(-2)
    if len(b) == 1:
        expected.pop(-1)
    verify_shape_matches(expected, result)


class MatmulLikeOp(MlxirOp):
    input = operand_def(TensorType)
    other = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)"
    )

    def required_rank(self) -> int | None:
        return None

    def verify_(self) -> None:
        a, b = shape_of(self.input), shape_of(self.other)
        rank = self.required_rank()
        if rank is not None and (len(a), len(b)) != (rank, rank):
            raise VerifyException(
                f"operands must both have rank {rank}, got {len(a)} and {len(b)}"
            )
        if len({dtype_of(self.input), dtype_of(self.other)}) != 1:
            raise VerifyException("operands must share one element type")
        _verify_matmul_shapes(a, b, self.result)


class SquareMatricesOp(MlxirOp):
    """A function of each square matrix of `input` (`[..., n, n]`): by default a
    matrix of the same shape and type for each."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_square_matrices(self.input)
        verify_same_shape(self.input, self.result)
        verify_same_dtype([self.input, self.result], "input and result")


@irdl_op_definition
class LinalgInvOp(SquareMatricesOp):
    """`torch.linalg.inv`: each matrix's inverse (from `linalg_inv_ex`, whose `info`
    the importer makes zeros: a singular matrix fails the run instead)."""

    name = "aten.linalg_inv"


@irdl_op_definition
class LinalgDetOp(SquareMatricesOp):
    """`torch.linalg.det` (`_linalg_det`'s first result): each matrix's determinant."""

    name = "aten.linalg_det"

    def verify_(self) -> None:
        verify_per_matrix(self.input, self.result)


@irdl_op_definition
class LinalgSlogdetOp(MlxirOp):
    """`torch.linalg.slogdet` (`_linalg_slogdet`'s first two results): the sign of each
    matrix's determinant (0 for a singular one) and the log of its absolute value."""

    name = "aten.linalg_slogdet"
    input = operand_def(TensorType)
    sign = result_def(TensorType)
    logabsdet = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($sign) `,` type($logabsdet)"

    def verify_(self) -> None:
        verify_per_matrix(self.input, self.sign, "sign")
        verify_per_matrix(self.input, self.logabsdet, "logabsdet")


class SolveOp(MlxirOp):
    """X with `A X = B`, or `X A = B` with `right`, for square matrices A; what B may
    be (`B_RULE`, from `B_MIN_RANK`) is each solve's own."""

    B_MIN_RANK: ClassVar[int]
    B_RULE: ClassVar[str]
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    right = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        verify_square_matrices(self.a, "A")
        if rank_of(self.b) < self.B_MIN_RANK or rank_of(self.result) < rank_of(self.b):
            raise VerifyException(
                f"B {format_dims(shape_of(self.b))} {self.B_RULE}, and the result "
                f"{format_dims(shape_of(self.result))} at least B's rank"
            )
        verify_same_dtype([self.a, self.b, self.result], "A, B and the result")


@irdl_op_definition
class LinalgSolveOp(SolveOp):
    """`torch.linalg.solve(A, B, left)` (`_linalg_solve_ex`'s first result), `right`
    for `left=False`. B is a stack of matrices, or of vectors where `B.ndim == 1` or B
    is `A.shape[:-1]` (torch's rule)."""

    name = "aten.linalg_solve"
    B_MIN_RANK: ClassVar[int] = 1
    B_RULE: ClassVar[str] = "must have a rank of at least 1"
    assembly_format = "$a `,` $b (`right` $right^)? attr-dict `:` type($a) `,` type($b) `->` type($result)"


@irdl_op_definition
class LinalgSolveTriangularOp(SolveOp):
    """`torch.linalg.solve_triangular(A, B, upper, left, unitriangular)`, `right` for
    `left=False`, reading only A's upper or lower triangle, its diagonal taken as ones
    with `unitriangular`. B is a stack of matrices."""

    name = "aten.linalg_solve_triangular"
    B_MIN_RANK: ClassVar[int] = 2
    B_RULE: ClassVar[str] = "must be matrices"
    upper = opt_prop_def(UnitAttr)
    unitriangular = opt_prop_def(UnitAttr)
    assembly_format = (
        "$a `,` $b (`upper` $upper^)? (`right` $right^)? (`unitriangular` $unitriangular^)? attr-dict "
        "`:` type($a) `,` type($b) `->` type($result)"
    )


@irdl_op_definition
class CholeskyInverseOp(SquareMatricesOp):
    """`torch.cholesky_inverse(L, upper)`: the inverse of `L L^T` (of `U^T U` with
    `upper`), from each matrix's Cholesky factor."""

    name = "aten.cholesky_inverse"
    upper = opt_prop_def(UnitAttr)
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($result)"


@irdl_op_definition
class LinalgCholeskyExOp(MlxirOp):
    """`torch.linalg.cholesky_ex(A, upper)`: each matrix's Cholesky factor L (U = L^T
    with `upper`), and `info`, LAPACK's: 0, or the order of the first leading minor
    that is not positive definite."""

    name = "aten.linalg_cholesky_ex"
    input = operand_def(TensorType)
    upper = opt_prop_def(UnitAttr)
    factor = result_def(TensorType)
    info = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($factor) `,` type($info)"

    def verify_(self) -> None:
        batch = verify_square_matrices(self.input)
        verify_same_shape(self.input, self.factor, "factor")
        verify_same_dtype([self.input, self.factor], "input and factor")
        verify_shape_matches(batch, self.info, "info")
        if dtype_of(self.info) != i32:
            raise VerifyException(f"info must be i32, got {dtype_of(self.info)}")


@irdl_op_definition
class LinalgLuFactorExOp(MlxirOp):
    """`torch.linalg.lu_factor_ex(A)` (with pivoting): each matrix `[..., m, n]`'s LU
    factors packed in one matrix (L below the diagonal, its unit diagonal implicit; U
    on and above it), the pivots `[..., k]` (k = min(m, n); 1-based, row i was swapped
    with row `pivots[i]`, in order) and `info`, LAPACK's: 0, or the 1-based index of
    the first zero on U's diagonal."""

    name = "aten.linalg_lu_factor_ex"
    input = operand_def(TensorType)
    lu = result_def(TensorType)
    pivots = result_def(TensorType)
    info = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($lu) `,` type($pivots) `,` type($info)"

    def verify_(self) -> None:
        batch = verify_lu(self.input, self.lu, self.pivots)
        verify_shape_matches(batch, self.info, "info")
        for what, value in (("pivots", self.pivots), ("info", self.info)):
            if dtype_of(value) != i32:
                raise VerifyException(f"{what} must be i32, got {dtype_of(value)}")


@irdl_op_definition
class LinalgQrOp(MlxirOp):
    """`torch.linalg.qr(A, mode)`: Q `[..., m, k]` with orthonormal columns and upper
    triangular R `[..., k, n]`, k = min(m, n); with `complete` (`mode="complete"`),
    k = m."""

    name = "aten.linalg_qr"
    input = operand_def(TensorType)
    complete = opt_prop_def(UnitAttr)
    q = result_def(TensorType)
    r = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`complete` $complete^)? attr-dict `:` type($input) `->` type($q) `,` type($r)"

    def verify_(self) -> None:
        verify_qr(self.input, self.q, self.r, self.complete is not None)


@irdl_op_definition
class LinalgSvdvalsOp(MlxirOp):
    """The singular values of each matrix, in descending order (`_linalg_svd`'s
    second result: torch.linalg.svdvals, matrix_rank, cond, the nuclear norm)."""

    name = "aten.linalg_svdvals"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_singular_values(self.input, self.result)


@irdl_op_definition
class LinalgEigvalshOp(MlxirOp):
    """The eigenvalues of each symmetric matrix, in ascending order, reading only its
    lower (or, with `upper`, upper) triangle (`_linalg_eigh`'s first result:
    torch.linalg.eigvalsh, matrix_rank with `hermitian`)."""

    name = "aten.linalg_eigvalsh"
    input = operand_def(TensorType)
    upper = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_square_matrices(self.input)
        verify_singular_values(self.input, self.result, "eigenvalues")


@irdl_op_definition
class LinalgPinvOp(MlxirOp):
    """`torch.linalg.pinv(A, atol, rtol, hermitian)`: each matrix's pseudo-inverse
    `[..., n, m]`, the singular values (the eigenvalues' magnitudes, reading the lower
    triangle, with `hermitian`) at most `max(atol, rtol * largest)` taken as zero.
    Unset tolerances are torch's defaults: atol 0, rtol `eps * max(m, n)` (0 where
    atol is positive)."""

    name = "aten.linalg_pinv"
    input = operand_def(TensorType)
    atol = opt_prop_def(F64Attr)
    rtol = opt_prop_def(F64Attr)
    hermitian = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`atol` $atol^)? (`rtol` $rtol^)? (`hermitian` $hermitian^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        batch, m, n, _ = verify_matrices(self.input)
        if self.hermitian is not None:
            verify_square_matrices(self.input)
        verify_shape_matches([*batch, n, m], self.result)
        verify_same_dtype([self.input, self.result], "input and result")


@irdl_op_definition
class MatmulOp(MatmulLikeOp):
    name = "aten.matmul"


@irdl_op_definition
class MmOp(MatmulLikeOp):
    name = "aten.mm"

    def required_rank(self) -> int | None:
        return 2


@irdl_op_definition
class BmmOp(MatmulLikeOp):
    name = "aten.bmm"

    def required_rank(self) -> int | None:
        return 3


@irdl_op_definition
class AddmmOp(MlxirOp):
    """`beta * bias + alpha * (mat1 @ mat2)`."""

    name = "aten.addmm"
    bias = operand_def(TensorType)
    mat1 = operand_def(TensorType)
    mat2 = operand_def(TensorType)
    beta = opt_prop_def(F64Attr)
    alpha = opt_prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$bias `,` $mat1 `,` $mat2 (`beta` $beta^)? (`alpha` $alpha^)? attr-dict `:` "
        "type($bias) `,` type($mat1) `,` type($mat2) `->` type($result)"
    )

    def verify_(self) -> None:
        if (rank_of(self.mat1), rank_of(self.mat2)) != (2, 2):
            raise VerifyException("mat1 and mat2 must be 2-D")
        _verify_matmul_shapes(shape_of(self.mat1), shape_of(self.mat2), self.result)
        verify_broadcast_result([shape_of(self.bias), shape_of(self.result)], self.result)


@irdl_op_definition
class LinearOp(MlxirOp):
    """`input @ weight.T + bias`, weight `[out, in]`."""

    name = "aten.linear"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`bias` $bias^ `:` type($bias))? attr-dict `:` type($input) `,` "
        "type($weight) `->` type($result)"
    )

    def verify_(self) -> None:
        w = shape_of(self.weight)
        x = shape_of(self.input)
        if len(w) not in (1, 2) or not x:
            raise VerifyException(
                f"weight must be 1-D or 2-D and input at least 1-D, got ranks {len(w)}, {len(x)}"
            )
        if not dims_compatible(x[-1], w[-1]):
            raise VerifyException(
                f"input features {x[-1]} do not match weight in-features {w[-1]}"
            )
        expected = [*x[:-1], w[0]] if len(w) == 2 else list(x[:-1])
        verify_shape_matches(expected, self.result)
        if self.bias is not None:
            broadcast_shapes([shape_of(self.bias), expected])


# ---------------------------------------------------------------------------
# Convolution, pooling, normalization
# ---------------------------------------------------------------------------


def _verify_window_lists(
    spatial: int, **lists: Sequence[int]
) -> None:
    for list_name, values in lists.items():
        if len(values) not in (1, spatial):
            raise VerifyException(
                f"{list_name} must have 1 or {spatial} entries, got {len(values)}"
            )


@irdl_op_definition
class ConvolutionOp(MlxirOp):
    """N-d convolution (input `[N, C, *spatial]`), transposed when `transposed` is set."""

    name = "aten.convolution"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    stride = prop_def(I64Array)
    padding = prop_def(I64Array)
    dilation = prop_def(I64Array)
    output_padding = opt_prop_def(I64Array)
    transposed = opt_prop_def(UnitAttr)
    groups = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`bias` $bias^ `:` type($bias))? `stride` custom<IntList>($stride) "
        "`padding` custom<IntList>($padding) `dilation` custom<IntList>($dilation) "
        "(`output_padding` custom<IntList>($output_padding)^)? (`transposed` $transposed^)? "
        "`groups` $groups attr-dict `:` type($input) `,` type($weight) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x, w = shape_of(self.input), shape_of(self.weight)
        if len(x) < 3 or len(x) != len(w):
            raise VerifyException(
                f"input and weight must have equal rank >= 3, got {len(x)} and {len(w)}"
            )
        spatial = len(x) - 2
        lists = {
            "stride": ints(self.stride),
            "padding": ints(self.padding),
            "dilation": ints(self.dilation),
        }
        if self.output_padding is not None:
            lists["output_padding"] = ints(self.output_padding)
        _verify_window_lists(spatial, **lists)
        groups = self.groups.value.data
        if groups < 1:
            raise VerifyException(f"groups must be >= 1, got {groups}")
        if self.transposed:
            in_channels = w[0]
        else:
            in_channels = DYNAMIC if w[1] == DYNAMIC else w[1] * groups
        if not dims_compatible(x[1], in_channels):
            raise VerifyException(
                f"input channels {x[1]} do not match weight channels {in_channels} "
                f"(groups={groups})"
            )
        if rank_of(self.result) != len(x):
            raise VerifyException("result must have the input's rank")


class PoolOp(MlxirOp):
    """Max or average pooling over the trailing `spatial` dims of `[(N,) C, *spatial]`."""

    SPATIAL: ClassVar[int] = 2
    input = operand_def(TensorType)
    kernel_size = prop_def(I64Array)
    stride = prop_def(I64Array)
    padding = prop_def(I64Array)
    ceil_mode = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)

    def verify_pool(self) -> None:
        n = self.SPATIAL
        if rank_of(self.input) not in (n + 1, n + 2):
            raise VerifyException(
                f"input must be [C, *spatial] or [N, C, *spatial] with {n} spatial dims, "
                f"got rank {rank_of(self.input)}"
            )
        _verify_window_lists(
            n,
            kernel_size=ints(self.kernel_size),
            stride=ints(self.stride) or [1],
            padding=ints(self.padding),
        )
        if rank_of(self.result) != rank_of(self.input):
            raise VerifyException("result must have the input's rank")


class MaxPoolOp(PoolOp):
    dilation = prop_def(I64Array)
    assembly_format = (
        "$input `kernel` custom<IntList>($kernel_size) `stride` custom<IntList>($stride) "
        "`padding` custom<IntList>($padding) `dilation` custom<IntList>($dilation) "
        "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        self.verify_pool()
        _verify_window_lists(self.SPATIAL, dilation=ints(self.dilation))


class AvgPoolOp(PoolOp):
    count_include_pad = opt_prop_def(UnitAttr)
    divisor_override = opt_prop_def(I64Attr)
    assembly_format = (
        "$input `kernel` custom<IntList>($kernel_size) `stride` custom<IntList>($stride) "
        "`padding` custom<IntList>($padding) (`ceil_mode` $ceil_mode^)? "
        "(`count_include_pad` $count_include_pad^)? (`divisor_override` $divisor_override^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        self.verify_pool()


@irdl_op_definition
class MaxPool2dOp(MaxPoolOp):
    name = "aten.max_pool2d"


@irdl_op_definition
class MaxPool3dOp(MaxPoolOp):
    name = "aten.max_pool3d"
    SPATIAL: ClassVar[int] = 3


@irdl_op_definition
class AvgPool2dOp(AvgPoolOp):
    name = "aten.avg_pool2d"


@irdl_op_definition
class AvgPool3dOp(AvgPoolOp):
    name = "aten.avg_pool3d"
    SPATIAL: ClassVar[int] = 3


def _verify_positive_eps(eps: FloatAttr | None) -> None:
    if eps is not None and eps.value.data < 0:
        raise VerifyException(f"eps must be non-negative, got {eps.value.data}")


def _verify_normalized_shape(input: SSAValue, normalized_shape: DenseArrayBase) -> list[int]:
    """The normalized shape of a layer or RMS norm, checked against the input's trailing
    dims."""
    norm = list(ints(normalized_shape))
    x = shape_of(input)
    if not norm or len(norm) > len(x):
        raise VerifyException(
            f"normalized_shape {norm} must be non-empty and no longer than the input rank"
        )
    tail = x[len(x) - len(norm):]
    if not all(dims_compatible(a, b) for a, b in zip(tail, norm)):
        raise VerifyException(
            f"input trailing dims {format_dims(tail)} do not match normalized_shape {norm}"
        )
    return norm


def _verify_affine_param(
    param: SSAValue | None, expected: Sequence[int], what: str
) -> None:
    if param is not None:
        verify_shape_matches(expected, param, what)


@irdl_op_definition
class LayerNormOp(MlxirOp):
    """Normalizes over the trailing `normalized_shape` dims, then scales and shifts."""

    name = "aten.layer_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    normalized_shape = prop_def(I64Array)
    eps = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? (`bias` $bias^ `:` type($bias))? "
        "`normalized_shape` custom<IntList>($normalized_shape) `eps` $eps attr-dict `:` "
        "type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        norm = _verify_normalized_shape(self.input, self.normalized_shape)
        _verify_affine_param(self.weight, norm, "weight")
        _verify_affine_param(self.bias, norm, "bias")
        _verify_positive_eps(self.eps)
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class RmsNormOp(MlxirOp):
    """`x * rsqrt(mean(x^2 over normalized dims) + eps) * weight`."""

    name = "aten.rms_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    normalized_shape = prop_def(I64Array)
    eps = opt_prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? `normalized_shape` "
        "custom<IntList>($normalized_shape) (`eps` $eps^)? attr-dict `:` type($input) "
        "`->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        norm = _verify_normalized_shape(self.input, self.normalized_shape)
        _verify_affine_param(self.weight, norm, "weight")
        _verify_positive_eps(self.eps)
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class BatchNormOp(MlxirOp):
    """Inference batch norm (`_native_batch_norm_legit_no_training`): running stats."""

    name = "aten.batch_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    running_mean = operand_def(TensorType)
    running_var = operand_def(TensorType)
    eps = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? (`bias` $bias^ `:` type($bias))? "
        "`stats` $running_mean `,` $running_var `eps` $eps attr-dict `:` type($input) `,` "
        "type($running_mean) `,` type($running_var) `->` type($result)"
    )

    def verify_(self) -> None:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException(f"input must be [N, C, ...], got rank {len(x)}")
        channels = [x[1]]
        for what, value in (
            ("weight", self.weight),
            ("bias", self.bias),
            ("running_mean", self.running_mean),
            ("running_var", self.running_var),
        ):
            _verify_affine_param(value, channels, what)
        _verify_positive_eps(self.eps)
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class GroupNormOp(MlxirOp):
    name = "aten.group_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    num_groups = prop_def(I64Attr)
    eps = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? (`bias` $bias^ `:` type($bias))? "
        "`groups` $num_groups `eps` $eps attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException(f"input must be [N, C, ...], got rank {len(x)}")
        groups = self.num_groups.value.data
        if groups < 1 or (x[1] != DYNAMIC and x[1] % groups):
            channels = "?" if x[1] == DYNAMIC else x[1]
            raise VerifyException(
                f"num_groups {groups} must be positive and divide the {channels} channels"
            )
        _verify_affine_param(self.weight, [x[1]], "weight")
        _verify_affine_param(self.bias, [x[1]], "bias")
        _verify_positive_eps(self.eps)
        verify_same_shape(self.input, self.result)


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def verify_attention(
    query: SSAValue,
    key: SSAValue,
    value: SSAValue,
    mask: SSAValue | None,
    result: SSAValue,
    allow_gqa: bool,
) -> None:
    q, k, v = shape_of(query), shape_of(key), shape_of(value)
    if not (len(q) == len(k) == len(v) >= 2):
        raise VerifyException(
            f"query, key and value must have one rank >= 2, got {len(q)}, {len(k)}, {len(v)}"
        )
    if not dims_compatible(q[-1], k[-1]):
        raise VerifyException(f"query head dim {q[-1]} does not match key head dim {k[-1]}")
    if not dims_compatible(k[-2], v[-2]):
        raise VerifyException(f"key length {k[-2]} does not match value length {v[-2]}")
    if len(q) >= 3 and DYNAMIC not in (q[-3], k[-3]):
        heads_q, heads_k = q[-3], k[-3]
        if heads_q != heads_k and not (allow_gqa and heads_k and heads_q % heads_k == 0):
            raise VerifyException(
                f"{heads_q} query heads and {heads_k} key heads need "
                + ("a divisible count" if allow_gqa else "enable_gqa")
            )
    if mask is not None:
        dtype = dtype_of(mask)
        if not (is_bool(dtype) or dtype == dtype_of(query)):
            raise VerifyException(
                f"mask must be i1 or the query's element type {dtype_of(query)}, got {dtype}"
            )
        broadcast_shapes([shape_of(mask), [*q[:-1], k[-2]]])
    verify_shape_matches([*q[:-1], v[-1]], result)


@irdl_op_definition
class ScaledDotProductAttentionOp(MlxirOp):
    """softmax(q @ k.T * scale + mask) @ v; `is_causal` is PyTorch's upper-left causal mask."""

    name = "aten.scaled_dot_product_attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    attn_mask = opt_operand_def(TensorType)
    dropout_p = opt_prop_def(F64Attr)
    is_causal = opt_prop_def(UnitAttr)
    scale = opt_prop_def(F64Attr)
    enable_gqa = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $attn_mask^ `:` type($attn_mask))? "
        "(`dropout_p` $dropout_p^)? (`is_causal` $is_causal^)? (`scale` $scale^)? "
        "(`enable_gqa` $enable_gqa^)? attr-dict `:` type($query) `,` type($key) `,` "
        "type($value) `->` type($result)"
    )

    def verify_(self) -> None:
        if self.dropout_p is not None and self.dropout_p.value.data != 0.0:
            raise VerifyException(
                f"dropout_p must be 0 for inference, got {self.dropout_p.value.data}"
            )
        if self.is_causal is not None and self.attn_mask is not None:
            raise VerifyException("is_causal and an explicit mask are mutually exclusive")
        verify_attention(
            self.query,
            self.key,
            self.value,
            self.attn_mask,
            self.result,
            self.enable_gqa is not None,
        )


# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------


class CreationOp(SizedOp):
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        verify_size_list(self.size_list(), len(self.sizes), shape_of(self.result))


@irdl_op_definition
class FullOp(CreationOp):
    name = "aten.full"
    fill_value = operand_def(TensorOrScalarConstr)
    assembly_format = (
        "custom<MixedIntList>($sizes, $static_sizes) `,` $fill_value attr-dict `:` "
        "type($fill_value) `->` type($result)"
    )
    custom_directives = (MixedIntList,)

    def verify_(self) -> None:
        super().verify_()
        if isinstance(self.fill_value.type, TensorType) and rank_of(self.fill_value) != 0:
            raise VerifyException("a tensor fill value must be 0-d")


@irdl_op_definition
class ZerosOp(CreationOp):
    name = "aten.zeros"
    assembly_format = (
        "custom<MixedIntList>($sizes, $static_sizes) attr-dict `:` type($result)"
    )
    custom_directives = (MixedIntList,)


@irdl_op_definition
class OnesOp(CreationOp):
    name = "aten.ones"
    assembly_format = (
        "custom<MixedIntList>($sizes, $static_sizes) attr-dict `:` type($result)"
    )
    custom_directives = (MixedIntList,)


@irdl_op_definition
class ScalarTensorOp(MlxirOp):
    """A 0-d tensor holding a Scalar."""

    name = "aten.scalar_tensor"
    value = operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"

    def verify_(self) -> None:
        if rank_of(self.result) != 0:
            raise VerifyException("result must be 0-d")


class LikeOp(MlxirOp):
    """A fresh tensor with the shape of `input` (dtype from the result type)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class ZerosLikeOp(LikeOp):
    name = "aten.zeros_like"


@irdl_op_definition
class OnesLikeOp(LikeOp):
    name = "aten.ones_like"


@irdl_op_definition
class FullLikeOp(LikeOp):
    name = "aten.full_like"
    fill_value = operand_def(TensorOrScalarConstr)
    assembly_format = (
        "$input `,` $fill_value attr-dict `:` type($input) `,` type($fill_value) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        super().verify_()
        if isinstance(self.fill_value.type, TensorType) and rank_of(self.fill_value) != 0:
            raise VerifyException("a tensor fill value must be 0-d")


@dataclass(frozen=True)
class Distribution:
    parameters: tuple[str, ...]
    """Its parameters' names, in order."""
    continuous: bool
    """Its values need a float result."""


RANDOM_DISTRIBUTIONS: dict[str, Distribution] = {
    "uniform": Distribution(("low", "high"), continuous=True),
    "normal": Distribution(("mean", "std"), continuous=True),
    "log_normal": Distribution(("mean", "std"), continuous=True),
    "exponential": Distribution(("lambd",), continuous=True),
    "cauchy": Distribution(("median", "sigma"), continuous=True),
    "geometric": Distribution(("p",), continuous=False),
    "bernoulli": Distribution(("p",), continuous=False),
    "randint": Distribution(("low", "high"), continuous=False),
}
"""Each distribution `aten.random` draws from: torch's `rand*`, `randn*`, `randint*`,
`normal`, `uniform`, `exponential`, `cauchy`, `geometric`, `log_normal` and
`bernoulli` (docs/semantics.md)."""


class RandomDraw(MlxirOp):
    """Values drawn at random from `distribution` with `parameters`. Not `Pure`: two
    draws are not the same value, so neither CSE nor constant folding may touch one."""

    distribution = prop_def(StringAttr)
    parameters = prop_def(F64Array)
    result = result_def(TensorType)

    def verify_draw(self) -> None:
        distribution = RANDOM_DISTRIBUTIONS.get(self.distribution.data)
        if distribution is None:
            raise VerifyException(
                f"distribution must be one of {sorted(RANDOM_DISTRIBUTIONS)}, got '{self.distribution.data}'"
            )
        count, names = len(self.parameters.get_values()), distribution.parameters
        if count != len(names):
            raise VerifyException(
                f"{self.distribution.data} takes {len(names)} parameter(s) ({', '.join(names)}), got {count}"
            )
        if distribution.continuous and not is_float(dtype_of(self.result)):
            raise VerifyException(f"{self.distribution.data} values need a float result, got {dtype_of(self.result)}")


@irdl_op_definition
class RandomOp(SizedOp, RandomDraw):
    """A tensor of the given sizes drawn at random (`rand`, `randn`, `randint`,
    `normal.float_float`)."""

    name = "aten.random"
    assembly_format = (
        "custom<StringLiteral>($distribution) $parameters custom<MixedIntList>($sizes, $static_sizes) "
        "attr-dict `:` type($result)"
    )
    custom_directives = (StringLiteral, MixedIntList)

    def verify_(self) -> None:
        self.verify_draw()
        verify_size_list(self.size_list(), len(self.sizes), shape_of(self.result))


@irdl_op_definition
class RandomLikeOp(RandomDraw):
    """A tensor shaped like `input` drawn at random (`rand_like`, `uniform`,
    `exponential`, `bernoulli.p`, ...: the functional forms of torch's in-place
    samplers, whose input gives only the shape)."""

    name = "aten.random_like"
    input = operand_def(TensorType)
    assembly_format = (
        "custom<StringLiteral>($distribution) $parameters $input attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (StringLiteral,)

    def verify_(self) -> None:
        self.verify_draw()
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class ArangeOp(MlxirOp):
    """`[start, start + step, ...)` below `end`; bounds are Scalars (maybe symbolic)."""

    name = "aten.arange"
    start = operand_def(TensorOrScalarConstr)
    end = operand_def(TensorOrScalarConstr)
    step = operand_def(TensorOrScalarConstr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$start `,` $end `,` $step attr-dict `:` type($start) `,` type($end) `,` "
        "type($step) `->` type($result)"
    )

    def verify_(self) -> None:
        for what, value in (("start", self.start), ("end", self.end), ("step", self.step)):
            if isinstance(value.type, TensorType):
                raise VerifyException(f"{what} must be a Scalar, not a tensor")
        if rank_of(self.result) != 1:
            raise VerifyException(f"result must be 1-D, got rank {rank_of(self.result)}")


@irdl_op_definition
class DiagonalOp(MlxirOp):
    """Diagonal `offset` of the planes spanned by `dim1` and `dim2`, as the last dim."""

    name = "aten.diagonal"
    input = operand_def(TensorType)
    offset = prop_def(I64Attr)
    dim1 = prop_def(I64Attr)
    dim2 = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `offset` $offset `dims` $dim1 `,` $dim2 attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_diagonal(
            self.input, self.result, self.offset.value.data, (self.dim1.value.data, self.dim2.value.data)
        )


class TriangleOp(MlxirOp):
    input = operand_def(TensorType)
    diagonal = opt_prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`diagonal` $diagonal^)? attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_min_rank(self.input, 2)
        verify_same_shape(self.input, self.result)
        if dtype_of(self.input) != dtype_of(self.result):
            raise VerifyException("result element type must equal the input's")


@irdl_op_definition
class TrilOp(TriangleOp):
    name = "aten.tril"


@irdl_op_definition
class TriuOp(TriangleOp):
    name = "aten.triu"


# ---------------------------------------------------------------------------
# Symbolic integers
# ---------------------------------------------------------------------------


@irdl_op_definition
class SymSizeOp(MlxirOp):
    """The runtime size of `dim` of `input`, as an `index` (`aten.sym_size.int`)."""

    name = "aten.sym_size"
    input = operand_def(TensorType)
    dim = prop_def(I64Attr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, dim: int):
        super().__init__(
            operands=[input],
            result_types=[IndexType()],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    def verify_(self) -> None:
        verify_min_rank(self.input, 1)
        normalize_axis(self.dim.value.data, rank_of(self.input))


# ---------------------------------------------------------------------------
# Quantization (torchao)
# ---------------------------------------------------------------------------


def blocked_shapes(shape: Sequence[int], block_size: Sequence[int]) -> tuple[list[int], list[int]]:
    """torchao's view of a quantized tensor for its blocks (`_get_reduction_params`):
    each dim whose block is neither 1 nor the whole dim splits into `[count, block]`.
    Returns that shape and the shape of the scales (and zero points) under it: size 1
    where a block spans the dim. Static dims only."""
    viewed: list[int] = []
    per_block: list[int] = []
    for size, block in zip(shape, block_size, strict=True):
        if block not in (1, size):
            viewed += [size // block, block]
            per_block += [size // block, 1]
        else:
            viewed.append(size)
            per_block.append(1 if block != 1 else size)
    return viewed, per_block


@irdl_op_definition
class DequantizeAffineOp(MlxirOp):
    """torchao's `dequantize_affine`: `(input - zero_point) * scale` per block of
    `block_size` elements, in the result's float type (torchao computes
    `input.to(out) - zero_point.to(out)`, times `scale` in their promoted type, then
    casts to `out`). `quant_min`/`quant_max` are the range the integers were quantized
    to; `zero_point` may be absent (symmetric)."""

    name = "aten.dequantize_affine"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = opt_operand_def(TensorType)
    block_size = prop_def(I64Array)
    quant_min = prop_def(I64Attr)
    quant_max = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale (`zero_point` $zero_point^ `:` type($zero_point))? `block_size` "
        "custom<IntList>($block_size) `range` $quant_min `to` $quant_max attr-dict `:` "
        "type($input) `,` type($scale) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        verify_dtype(self.input, "integer (not bool)", "input")
        verify_dtype(self.result, "float", "result")
        verify_same_shape(self.input, self.result)
        shape, blocks = shape_of(self.input), ints(self.block_size)
        if len(blocks) != len(shape):
            raise VerifyException(
                f"block_size has {len(blocks)} entries for a rank-{len(shape)} input"
            )
        if self.quant_min.value.data > self.quant_max.value.data:
            raise VerifyException(
                f"quant_min {self.quant_min.value.data} exceeds quant_max {self.quant_max.value.data}"
            )
        if DYNAMIC in shape:
            return
        for axis, (size, block) in enumerate(zip(shape, blocks, strict=True)):
            if block < 1 or size % block:
                raise VerifyException(f"dim {axis} of size {size} does not split into blocks of {block}")
        _, per_block = blocked_shapes(shape, blocks)
        for what, value in (("scale", self.scale), ("zero_point", self.zero_point)):
            if value is not None:
                verify_element_count(per_block, shape_of(value), f"viewing {what} per block")


# ---------------------------------------------------------------------------
# Complex numbers: Fourier transforms, complex views
# ---------------------------------------------------------------------------


class FftOp(MlxirOp):
    """A discrete Fourier transform of `input` over `dims`, as ATen's `_fft_*` ops: the
    unscaled transform, then scaled by `normalization` (torch's `fft_norm_mode`: 0 by
    1, 1 by 1/sqrt(n), 2 by 1/n, n the number of elements of the transformed signal)."""

    input = operand_def(TensorType)
    dims = prop_def(I64Array)
    normalization = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    INPUT: ClassVar[str]
    """The input's element type ("complex" or "float": float32)."""
    RESULT: ClassVar[str]

    def verify_(self) -> None:
        axes = normalize_axes(ints(self.dims), rank_of(self.input))
        if not axes:
            raise VerifyException("dims must name at least one axis")
        if self.normalization.value.data not in (0, 1, 2):
            raise VerifyException(
                f"normalization must be 0, 1 or 2 (by 1, 1/sqrt(n), 1/n), got "
                f"{self.normalization.value.data}"
            )
        verify_fourier_types(self.input, self.INPUT, self.result, self.RESULT)
        expected = list(shape_of(self.input))
        if rank_of(self.result) != len(expected):
            raise VerifyException("result must have the input's rank")
        expected[axes[-1]] = self.last_size(expected[axes[-1]], shape_of(self.result)[axes[-1]])
        verify_shape_matches(expected, self.result)

    def last_size(self, input_size: int, result_size: int) -> int:
        """The result's size along the last transformed dim, given the input's."""
        return input_size


_FFT_FORMAT = (
    "$input `dims` custom<IntList>($dims) `normalization` $normalization{} attr-dict "
    "`:` type($input) `->` type($result)"
)


@irdl_op_definition
class FftR2cOp(FftOp):
    """`_fft_r2c(self, dim, normalization, onesided)`: the transform of a real signal;
    `onesided` keeps the first n/2 + 1 entries of the last dim (the rest are their
    conjugates)."""

    name = "aten.fft_r2c"
    onesided = opt_prop_def(UnitAttr)
    assembly_format = _FFT_FORMAT.format(" (`onesided` $onesided^)?")
    custom_directives = (IntList,)
    INPUT: ClassVar[str] = "float"
    RESULT: ClassVar[str] = "complex"

    def last_size(self, input_size: int, result_size: int) -> int:
        if self.onesided is None or input_size == DYNAMIC:
            return input_size
        return input_size // 2 + 1


@irdl_op_definition
class FftC2cOp(FftOp):
    """`_fft_c2c(self, dim, normalization, forward)`: the transform of a complex signal,
    or (without `forward`) its inverse, unscaled before `normalization`."""

    name = "aten.fft_c2c"
    forward = opt_prop_def(UnitAttr)
    assembly_format = _FFT_FORMAT.format(" (`forward` $forward^)?")
    custom_directives = (IntList,)
    INPUT: ClassVar[str] = "complex"
    RESULT: ClassVar[str] = "complex"


@irdl_op_definition
class FftC2rOp(FftOp):
    """`_fft_c2r(self, dim, normalization, last_dim_size)`: the inverse transform of a
    one-sided spectrum to the real signal whose last dim is `last_dim_size` (the
    result's), from the input's first `last_dim_size / 2 + 1` entries."""

    name = "aten.fft_c2r"
    assembly_format = _FFT_FORMAT.format("")
    custom_directives = (IntList,)
    INPUT: ClassVar[str] = "complex"
    RESULT: ClassVar[str] = "float"

    def last_size(self, input_size: int, result_size: int) -> int:
        if result_size == DYNAMIC or input_size == DYNAMIC:
            return DYNAMIC
        if input_size != result_size // 2 + 1:
            raise VerifyException(
                f"the input's last transformed dim must be the result's {result_size} / 2 + 1 "
                f"= {result_size // 2 + 1}, got {input_size}"
            )
        return result_size


class ComplexViewOp(MlxirOp):
    """A view between complex64 values and their float32 (real, imaginary) pairs."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])


@irdl_op_definition
class ViewAsRealOp(ComplexViewOp):
    """`torch.view_as_real`: complex64 `[...]` as its float32 (real, imaginary) pairs,
    `[..., 2]`."""

    name = "aten.view_as_real"

    def verify_(self) -> None:
        verify_dtype(self.input, "complex", "input")
        verify_dtype(self.result, "float", "result")
        verify_shape_matches([*shape_of(self.input), 2], self.result)


@irdl_op_definition
class ViewAsComplexOp(ComplexViewOp):
    """`torch.view_as_complex`: float32 pairs `[..., 2]` as complex64 `[...]`."""

    name = "aten.view_as_complex"

    def verify_(self) -> None:
        verify_dtype(self.input, "float", "input")
        verify_dtype(self.result, "complex", "result")
        if shape_of(self.input)[-1:] not in ((2,), (DYNAMIC,)):
            raise VerifyException(
                f"input must be pairs [..., 2], got {format_dims(shape_of(self.input))}"
            )
        verify_shape_matches(list(shape_of(self.input)[:-1]), self.result)


ATEN_OPS: list[type[IRDLOperation]] = [
    *UNARY_OP_CLASSES.values(),
    FftR2cOp,
    FftC2cOp,
    FftC2rOp,
    ViewAsRealOp,
    ViewAsComplexOp,
    *BINARY_OP_CLASSES.values(),
    *REDUCTION_OP_CLASSES.values(),
    GeluOp,
    WhereOp,
    ClampOp,
    ToCopyOp,
    VarOp,
    StdOp,
    ArgmaxOp,
    ArgminOp,
    SortOp,
    TopkOp,
    MedianOp,
    CummaxOp,
    CumminOp,
    NanmedianOp,
    KthvalueOp,
    CumsumOp,
    CumprodOp,
    LogcumsumexpOp,
    SoftmaxOp,
    LogSoftmaxOp,
    ViewOp,
    ReshapeOp,
    ExpandOp,
    PermuteOp,
    TransposeOp,
    UnsqueezeOp,
    SqueezeOp,
    SliceOp,
    SliceScatterOp,
    SelectOp,
    NarrowOp,
    CatOp,
    StackOp,
    SplitOp,
    SplitWithSizesOp,
    FlipOp,
    RepeatOp,
    ConstantPadNdOp,
    IndexOp,
    IndexPutOp,
    NonzeroOp,
    UniqueOp,
    RepeatInterleaveOp,
    ItemOp,
    IndexSelectOp,
    IndexCopyOp,
    EmbeddingOp,
    GatherOp,
    ScatterOp,
    ScatterReduceOp,
    MaskedFillOp,
    MatmulOp,
    MmOp,
    BmmOp,
    LinalgInvOp,
    LinalgDetOp,
    LinalgSlogdetOp,
    LinalgSolveOp,
    LinalgSolveTriangularOp,
    CholeskyInverseOp,
    LinalgCholeskyExOp,
    LinalgLuFactorExOp,
    LinalgQrOp,
    LinalgSvdvalsOp,
    LinalgEigvalshOp,
    LinalgPinvOp,
    AddmmOp,
    LinearOp,
    DequantizeAffineOp,
    ConvolutionOp,
    MaxPool2dOp,
    MaxPool3dOp,
    AvgPool2dOp,
    AvgPool3dOp,
    LayerNormOp,
    RmsNormOp,
    BatchNormOp,
    GroupNormOp,
    ScaledDotProductAttentionOp,
    FullOp,
    ZerosOp,
    OnesOp,
    ScalarTensorOp,
    ZerosLikeOp,
    OnesLikeOp,
    FullLikeOp,
    RandomOp,
    RandomLikeOp,
    ArangeOp,
    TrilOp,
    TriuOp,
    DiagonalOp,
    SymSizeOp,
]

Aten = Dialect("aten", [*ATEN_OPS], [])
