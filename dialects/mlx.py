"""The `mlx` dialect: one op per MLX primitive, in MLX's own vocabulary.

Unlike `aten`, ops here do no implicit type promotion: operands of an arithmetic op
share one element type and casts are explicit `mlx.astype`s, which is what makes
cast folding decidable. Shape-like operands mix literals and `index` values; an
`index` comes from `mlx.dim` (the runtime size of a dimension) or `arith` ops.

Weights, buffers and mutable state are module-level `mlx.global` symbols whose
payload is their `dense<...>` value, in the IR (`dialects/weights.py`; printed as hex
beyond 100 elements); functions
read them with `mlx.weight` / `mlx.load_state` and write state with `mlx.store_state`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import DynamicIndexList
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    base,
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
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from mlxir.dialects.common import (
    DYNAMIC,
    IntList,
    ItemOpBase,
    MlxirOp,
    RepeatInterleaveOpBase,
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
    is_integer,
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
from mlxir.dialects.elementwise import (
    MLX_BINARY_OPS,
    MLX_REDUCTION_OPS,
    MLX_UNARY_OPS,
    ElementwiseKind,
)

I64Attr = IntegerAttr.constr(type=i64)
F64Attr = FloatAttr[Float64Type]
I64Array = DenseArrayBase.constr(i64)


def _dim(d: int) -> str:
    """One dim as diagnostics print it: `?` when dynamic."""
    return "?" if d == DYNAMIC else str(d)


def _axis(axis: int, rank: int) -> int:
    """An MLX axis of a rank-`rank` array. Unlike ATen, MLX gives a 0-d array no axes:
    `mx.sum(mx.array(1.0), axis=0)` (or `axis=-1`) is an error."""
    if rank == 0:
        raise VerifyException(f"axis {axis} is out of range for rank 0")
    return normalize_axis(axis, rank, "axis")


def _axes(axes: Sequence[int], rank: int) -> list[int]:
    if rank == 0 and axes:
        raise VerifyException(f"axis {axes[0]} is out of range for rank 0")
    return normalize_axes(axes, rank, "axis")


def _verify_result_dtype(input: SSAValue, result: SSAValue) -> None:
    """No implicit promotion: an op that moves or reshapes elements keeps their type."""
    if dtype_of(input) != dtype_of(result):
        raise VerifyException(
            f"result element type {dtype_of(result)} must equal the input's {dtype_of(input)}"
        )


# ---------------------------------------------------------------------------
# Elementwise: the tables
# ---------------------------------------------------------------------------


# The tables live beside the rows they come from, which the runtime reads without xDSL.
UNARY_OPS = MLX_UNARY_OPS
BINARY_OPS = MLX_BINARY_OPS


def verify_elementwise_kind(
    kind: ElementwiseKind, operands: Sequence[SSAValue], result: SSAValue
) -> None:
    if kind is not ElementwiseKind.PREDICATE:
        verify_same_dtype(operands)
    operand_dtype = dtype_of(operands[0])
    result_dtype = dtype_of(result)
    match kind:
        case ElementwiseKind.SAME | ElementwiseKind.FLOAT | ElementwiseKind.BITWISE:
            if result_dtype != operand_dtype:
                raise VerifyException(
                    f"result element type {result_dtype} must equal the operands' "
                    f"{operand_dtype}"
                )
            if kind is ElementwiseKind.FLOAT and not is_float(operand_dtype):
                raise VerifyException(
                    f"operands must be floating point, got {operand_dtype}"
                )
            if kind is ElementwiseKind.BITWISE and not is_integer_or_bool(operand_dtype):
                raise VerifyException(
                    f"operands must be integer or bool, got {operand_dtype}"
                )
        case ElementwiseKind.COMPARE | ElementwiseKind.PREDICATE:
            if not is_bool(result_dtype):
                raise VerifyException(f"result element type must be i1, got {result_dtype}")
        case ElementwiseKind.LOGICAL:
            for dtype in (operand_dtype, result_dtype):
                if not is_bool(dtype):
                    raise VerifyException(f"operands and result must be i1, got {dtype}")


CANONICALIZATION_PATTERNS: dict[str, tuple[RewritePattern, ...]] = {}
"""Op name → its canonicalization patterns: filled by `transforms/canonicalize.py` when
it is imported (the patterns are transforms; the dialect names none of them). Asked
for before, the trait raises instead of finding none."""


class MlxCanonicalization(HasCanonicalizationPatternsTrait):
    """Attaches an op's canonicalization patterns (`CANONICALIZATION_PATTERNS`)."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        if not CANONICALIZATION_PATTERNS:
            # Empty, it would canonicalize nothing without a word.
            raise RuntimeError(
                "the mlx ops' canonicalization patterns are not registered: run mlxir's "
                "canonicalize pass (mlxir.transforms.canonicalize.CanonicalizePass)"
            )
        return CANONICALIZATION_PATTERNS.get(op.name, ())

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


class UnaryOp(MlxirOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[input], result_types=[result_type or input.type])

    def kind(self) -> ElementwiseKind:
        return UNARY_OPS[self.name.removeprefix("mlx.")]

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)
        verify_elementwise_kind(self.kind(), [self.input], self.result)


class BinaryOp(MlxirOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def kind(self) -> ElementwiseKind:
        return BINARY_OPS[self.name.removeprefix("mlx.")]

    def verify_(self) -> None:
        verify_broadcast_result([shape_of(self.lhs), shape_of(self.rhs)], self.result)
        verify_elementwise_kind(self.kind(), [self.lhs, self.rhs], self.result)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _define(base_cls: type[IRDLOperation], name: str, doc: str) -> type[IRDLOperation]:
    cls = type(
        f"{_camel(name)}Op",
        (base_cls,),
        {"name": f"mlx.{name}", "__doc__": doc, "__module__": __name__},
    )
    return irdl_op_definition(cls)


UNARY_OP_CLASSES: dict[str, type[IRDLOperation]] = {
    name: _define(UnaryOp, name, f"`mx.{name}`: {kind.value}.")
    for name, kind in UNARY_OPS.items()
}
BINARY_OP_CLASSES: dict[str, type[BinaryOp]] = {
    name: cast(type[BinaryOp], _define(BinaryOp, name, f"`mx.{name}`: {kind.value}."))
    for name, kind in BINARY_OPS.items()
}

# The table-generated classes by name (`ExpOp`), as a hand-written op would be.
globals().update({cls.__name__: cls for cls in (*UNARY_OP_CLASSES.values(), *BINARY_OP_CLASSES.values())})


def __getattr__(name: str) -> type[IRDLOperation]:
    """Only reached for a name this module lacks; declared so that type checkers know
    the table-generated classes (`ExpOp`) are op classes."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@irdl_op_definition
class AstypeOp(MlxirOp):
    """`x.astype(dtype)`: the one way an element type changes at this level."""

    name = "mlx.astype"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class ViewOp(MlxirOp):
    """`x.view(dtype)`: the same bits read as another element type (a float's sign bit,
    NaNs included, as a signed integer's). Between types of different widths the last
    axis' bytes are read anew, as MLX does: complex64 `[..., n]` is float32 `[..., 2n]`."""

    name = "mlx.view"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        widths = [_element_bits(dtype_of(v)) for v in (self.input, self.result)]
        if widths[0] is None or widths[1] is None:
            raise VerifyException(
                f"element types {dtype_of(self.input)} and {dtype_of(self.result)} must "
                "both have a bit width (bool has none)"
            )
        if widths[0] == widths[1]:
            verify_same_shape(self.input, self.result)
            return
        shape = list(shape_of(self.input))
        if not shape:
            raise VerifyException("a view as a type of another width needs a last axis")
        if shape[-1] != DYNAMIC:
            bits = shape[-1] * widths[0]
            if bits % widths[1]:
                raise VerifyException(
                    f"the last axis' {bits} bits do not divide into {dtype_of(self.result)} "
                    "elements"
                )
            shape[-1] = bits // widths[1]
        verify_shape_matches(shape, self.result)


def _element_bits(dtype: Attribute) -> int | None:
    """Bits per element; None for bool, which MLX stores in a byte it does not define."""
    if isinstance(dtype, AnyFloat):
        return dtype.bitwidth
    if isinstance(dtype, ComplexType):
        return 64  # complex<f32>, MLX's one complex type
    if isinstance(dtype, IntegerType) and (bits := cast(IntegerType, dtype).width.data) > 1:
        return bits
    return None


@irdl_op_definition
class WhereOp(MlxirOp):
    name = "mlx.where"
    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())

    def __init__(self, condition: SSAValue, x: SSAValue, y: SSAValue, result_type: Attribute):
        super().__init__(operands=[condition, x, y], result_types=[result_type])
    assembly_format = (
        "$condition `,` $x `,` $y attr-dict `:` type($condition) `,` type($x) `,` type($y) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        verify_dtype(self.condition, "bool", "condition")
        verify_same_dtype([self.x, self.y, self.result], "x, y and result")
        verify_broadcast_result(
            [shape_of(self.condition), shape_of(self.x), shape_of(self.y)], self.result
        )


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _verify_indices(indices: Sequence[SSAValue]) -> list[int]:
    for value in indices:
        dtype = dtype_of(value)
        if not is_integer_or_bool(dtype) or is_bool(dtype):
            raise VerifyException(f"indices must be integer, got {dtype}")
    return broadcast_shapes([shape_of(v) for v in indices])


@irdl_op_definition
class NonzeroOp(MlxirOp):
    """The indices of the input's nonzero elements in row-major order, int64 `[count,
    rank]` (MLX has no such primitive: the runtime counts them, which evaluates the
    input, then places each index). The program's one kind of sync point: its result's
    shape depends on values, so a program holding it runs interpreted
    (docs/semantics.md §8)."""

    name = "mlx.nonzero"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_nonzero(self.input, self.result)


@irdl_op_definition
class UniqueOp(UniqueOpBase):
    """The distinct values of the flattened input, ascending (NaNs last, each distinct),
    or with `consecutive` the first of each run of equal neighbours in input order, with
    each element's position in `output` (`inverse`) and each value's count (`counts`),
    `[0]` unless asked for. MLX has no such primitive: the runtime sorts, marks where
    a value changes and counts the marks, which evaluates the input (a sync point)."""

    name = "mlx.unique"


@irdl_op_definition
class RepeatInterleaveOp(RepeatInterleaveOpBase):
    """Each position `i` of `repeats`, `repeats[i]` times, in its dtype. MLX has no such
    primitive: the runtime sums `repeats` on the host (a sync point), then marks where
    each position's run ends and counts the marks."""

    name = "mlx.repeat_interleave"


@irdl_op_definition
class ItemOp(ItemOpBase):
    """The value of a one-element integer or bool tensor as an `index`, read on the
    host: a sync point (`mx.array.item`)."""

    name = "mlx.item"


@irdl_op_definition
class TakeOp(MlxirOp):
    """`mx.take(x, indices, axis)`: whole slices along `axis` (of the flattened input
    when `axis` is absent); the index dims replace `axis` in place."""

    name = "mlx.take"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = opt_prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, indices: SSAValue, axis: int | None, result_type: Attribute):
        properties = {"axis": IntegerAttr(axis, i64)} if axis is not None else {}
        super().__init__(
            operands=[input, indices], result_types=[result_type], properties=properties
        )
    assembly_format = (
        "$input `,` $indices (`axis` $axis^)? attr-dict `:` type($input) `,` type($indices) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        _verify_indices([self.indices])
        _verify_result_dtype(self.input, self.result)
        x, idx = shape_of(self.input), shape_of(self.indices)
        if self.axis is None:
            verify_shape_matches(idx, self.result)
            return
        axis = _axis(self.axis.value.data, len(x))
        verify_shape_matches([*x[:axis], *idx, *x[axis + 1:]], self.result)


@irdl_op_definition
class TakeAlongAxisOp(MlxirOp):
    """`mx.take_along_axis`: elementwise picks along `axis` (torch.gather semantics)."""

    name = "mlx.take_along_axis"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, indices: SSAValue, axis: int, result_type: Attribute):
        super().__init__(
            operands=[input, indices],
            result_types=[result_type],
            properties={"axis": IntegerAttr(axis, i64)},
        )
    assembly_format = (
        "$input `,` $indices `axis` $axis attr-dict `:` type($input) `,` type($indices) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        _verify_indices([self.indices])
        x, idx = shape_of(self.input), shape_of(self.indices)
        axis = _axis(self.axis.value.data, len(x))
        if len(idx) != len(x):
            raise VerifyException("indices must have the input's rank")
        expected = broadcast_shapes(
            [[1 if i == axis else d for i, d in enumerate(x)], idx]
        )
        expected[axis] = idx[axis]
        verify_shape_matches(expected, self.result)
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class GatherOp(MlxirOp):
    """MLX's general gather: `result[b..., s...] = x[idx_0[b], ..., slice s]` with the
    index tensors addressing `axes`; shape `broadcast(indices) ++ slice_sizes`.
    Slice sizes may be runtime values (a dynamic non-indexed dim)."""

    name = "mlx.gather"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    slice_sizes = var_operand_def(IndexType)
    axes = prop_def(I64Array)
    static_slice_sizes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input `[` $indices `]` `axes` custom<IntList>($axes) `slice_sizes` "
        "custom<DynamicIndexList>($slice_sizes, $static_slice_sizes) attr-dict `:` "
        "type($input) `,` `(` type($indices) `)` `->` type($result)"
    )
    custom_directives = (IntList, DynamicIndexList)

    def verify_(self) -> None:
        x = shape_of(self.input)
        axes = _axes(ints(self.axes), len(x))
        if len(axes) != len(self.indices):
            raise VerifyException(f"{len(self.indices)} index tensors but {len(axes)} axes")
        batch = _verify_indices(self.indices)
        sizes = ints(self.static_slice_sizes)
        if len(sizes) != len(x):
            raise VerifyException(
                f"slice_sizes has {len(sizes)} entries but the input has rank {len(x)}"
            )
        if sizes.count(DYNAMIC) != len(self.slice_sizes):
            raise VerifyException("slice_sizes' dynamic entries do not match its index operands")
        for i, (s, d) in enumerate(zip(sizes, x)):
            if s == DYNAMIC:
                continue
            if s < 0:
                raise VerifyException(f"slice size {s} of axis {i} is negative")
            if d != DYNAMIC and s > d:
                raise VerifyException(f"slice size {s} of axis {i} exceeds the dim size {d}")
        verify_shape_matches([*batch, *sizes], self.result)
        _verify_result_dtype(self.input, self.result)


SCATTER_REDUCTIONS = ("none", "add", "prod", "max", "min")


@irdl_op_definition
class ScatterOp(MlxirOp):
    """`mx.scatter` (and `scatter_add`/…): writes `updates` (`broadcast(indices) ++
    slice shape`) into `input` at `indices` on `axes`."""

    name = "mlx.scatter"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    updates = operand_def(TensorType)
    axes = prop_def(I64Array)
    reduce = opt_prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $indices `]` `axes` custom<IntList>($axes) `,` $updates "
        "(`reduce` $reduce^)? attr-dict `:` type($input) `,` `(` type($indices) `)` `,` "
        "type($updates) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x = shape_of(self.input)
        axes = _axes(ints(self.axes), len(x))
        if len(axes) != len(self.indices):
            raise VerifyException(f"{len(self.indices)} index tensors but {len(axes)} axes")
        batch = _verify_indices(self.indices)
        if rank_of(self.updates) != len(batch) + len(x):
            raise VerifyException(
                f"updates must have rank {len(batch) + len(x)} (index rank + input rank), "
                f"got {rank_of(self.updates)}"
            )
        if self.reduce is not None and self.reduce.data not in SCATTER_REDUCTIONS:
            raise VerifyException(
                f"reduce must be one of {SCATTER_REDUCTIONS}, got '{self.reduce.data}'"
            )
        verify_same_shape(self.input, self.result)
        verify_same_dtype([self.input, self.updates, self.result], "input, updates and result")


def _verify_update_fits(
    input: SSAValue, update: SSAValue, result: SSAValue, axes: Sequence[int]
) -> None:
    """A slice update's `update` has the input's rank, its dims outside `axes`, and
    at most its dims along them; the result is the input's type."""
    x, u = shape_of(input), shape_of(update)
    if len(u) != len(x):
        raise VerifyException("update must have the input's rank")
    for i, (a, b) in enumerate(zip(u, x)):
        if i not in axes and not dims_compatible(a, b):
            raise VerifyException(
                f"update dim {i} ({a}) must equal the input's ({b}) outside the axes"
            )
        if i in axes and DYNAMIC not in (a, b) and a > b:
            raise VerifyException(f"update dim {i} ({a}) exceeds the input's ({b})")
    verify_same_shape(input, result)
    verify_same_dtype([input, update, result], "input, update and result")


@irdl_op_definition
class SliceUpdateOp(MlxirOp):
    """`mx.slice_update`: `input` with `update` written at `start` along `axes`."""

    name = "mlx.slice_update"
    input = operand_def(TensorType)
    update = operand_def(TensorType)
    start = var_operand_def(IndexType)
    static_start = prop_def(I64Array)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $update `start` custom<DynamicIndexList>($start, $static_start) `axes` "
        "custom<IntList>($axes) attr-dict `:` type($input) `,` type($update) "
        "`->` type($result)"
    )
    custom_directives = (IntList, DynamicIndexList)

    def verify_(self) -> None:
        axes = _axes(ints(self.axes), rank_of(self.input))
        starts = ints(self.static_start)
        if len(starts) != len(axes):
            raise VerifyException(f"{len(starts)} start entries but {len(axes)} axes")
        if starts.count(DYNAMIC) != len(self.start):
            raise VerifyException("start's dynamic entries do not match its index operands")
        _verify_update_fits(self.input, self.update, self.result, axes)


@irdl_op_definition
class DynamicSliceUpdateOp(MlxirOp):
    """`mx.slice_update` with its start in a tensor (MLX's `DynamicSliceUpdate`):
    `input` with `update` written at `start` along `axes`. `start` holds one integer
    per axis (a 0-d tensor for one axis), computed on the device, so a compiled
    trace does not fix it. Each start is clamped into `[0, dim - update dim]`: the
    whole update lands inside the input (MLX itself does not check)."""

    name = "mlx.dynamic_slice_update"
    input = operand_def(TensorType)
    update = operand_def(TensorType)
    start = operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $update `start` $start `axes` custom<IntList>($axes) attr-dict `:` "
        "type($input) `,` type($update) `,` type($start) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        axes = _axes(ints(self.axes), rank_of(self.input))
        if not is_integer(dtype_of(self.start)):
            raise VerifyException(f"start must be an integer tensor, got {dtype_of(self.start)}")
        start = shape_of(self.start)
        if len(start) > 1 or (len(start) == 0 and len(axes) != 1):
            raise VerifyException(
                "start must be 0-d (one axis) or 1-d with an entry per axis, "
                f"got rank {len(start)} for {len(axes)} axes"
            )
        if len(start) == 1 and not dims_compatible(start[0], len(axes)):
            raise VerifyException(f"start has {start[0]} entries but {len(axes)} axes")
        _verify_update_fits(self.input, self.update, self.result, axes)


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------


class ShapedResultOp(MlxirOp):
    """An op whose result shape is a mixed list of literals and `index` values."""

    input = operand_def(TensorType)
    shape = var_operand_def(IndexType)
    static_shape = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    assembly_format = (
        "$input custom<DynamicIndexList>($shape, $static_shape) attr-dict `:` type($input) "
        "`->` type($result)"
    )
    custom_directives = (DynamicIndexList,)

    def __init__(
        self, input: SSAValue, shape: Sequence[SSAValue | int], result_type: Attribute
    ):
        static, dynamic = index_operands(shape)
        super().__init__(
            operands=[input, dynamic],
            result_types=[result_type],
            properties={"static_shape": int_array(static)},
        )

    def verify_(self) -> None:
        verify_size_list(ints(self.static_shape), len(self.shape), shape_of(self.result), "shape")
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class ReshapeOp(ShapedResultOp):
    name = "mlx.reshape"

    def verify_(self) -> None:
        super().verify_()
        verify_element_count(shape_of(self.input), shape_of(self.result), "reshape")


@irdl_op_definition
class BroadcastToOp(ShapedResultOp):
    name = "mlx.broadcast_to"

    def verify_(self) -> None:
        super().verify_()
        x, out = shape_of(self.input), shape_of(self.result)
        if len(out) < len(x):
            raise VerifyException("broadcast_to cannot lower the rank")
        for i, d in enumerate(x):
            target = out[len(out) - len(x) + i]
            if d not in (1, DYNAMIC) and not dims_compatible(d, target):
                raise VerifyException(f"dim {i} of size {d} cannot broadcast to {target}")


@irdl_op_definition
class TransposeOp(MlxirOp):
    name = "mlx.transpose"
    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    assembly_format = "$input custom<IntList>($axes) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def __init__(self, input: SSAValue, axes: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"axes": int_array(axes)}
        )

    def verify_(self) -> None:
        x = shape_of(self.input)
        perm = ints(self.axes)
        verify_permutation(perm, len(x), "axes")
        verify_shape_matches([x[p] for p in perm], self.result)
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class ExpandDimsOp(MlxirOp):
    name = "mlx.expand_dims"
    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axes: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"axes": int_array(axes)}
        )
    assembly_format = "$input custom<IntList>($axes) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x = shape_of(self.input)
        out_rank = len(x) + len(ints(self.axes))
        axes = _axes(ints(self.axes), out_rank)
        rest = iter(x)
        verify_shape_matches(
            [1 if i in axes else next(rest) for i in range(out_rank)], self.result
        )
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class SqueezeOp(MlxirOp):
    name = "mlx.squeeze"
    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axes: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"axes": int_array(axes)}
        )
    assembly_format = "$input custom<IntList>($axes) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x = shape_of(self.input)
        axes = _axes(ints(self.axes), len(x))
        for a in axes:
            if x[a] not in (1, DYNAMIC):
                raise VerifyException(f"cannot squeeze axis {a} of size {x[a]}")
        verify_shape_matches([d for i, d in enumerate(x) if i not in axes], self.result)
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class ConcatenateOp(MlxirOp):
    name = "mlx.concatenate"
    inputs = var_operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())

    def __init__(self, inputs: Sequence[SSAValue], axis: int, result_type: Attribute):
        super().__init__(
            operands=[list(inputs)],
            result_types=[result_type],
            properties={"axis": IntegerAttr(axis, i64)},
        )
    assembly_format = "$inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)"

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException("expects at least one input")
        verify_same_dtype([*self.inputs, self.result], "inputs and result")
        shapes = [shape_of(v) for v in self.inputs]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise VerifyException("inputs must have equal rank")
        axis = _axis(self.axis.value.data, rank)
        total = 0
        for s in shapes:
            total = DYNAMIC if DYNAMIC in (total, s[axis]) else total + s[axis]
        expected = list(shapes[0])
        expected[axis] = total
        for s in shapes:
            for i, (a, b) in enumerate(zip(s, shapes[0])):
                if i != axis and not dims_compatible(a, b):
                    raise VerifyException(
                        f"inputs differ in axis {i} ({a} vs {b}), which is not the concat axis"
                    )
        verify_shape_matches(expected, self.result)


@irdl_op_definition
class SplitOp(MlxirOp):
    """`mx.split(x, indices, axis)`: pieces between the split points `indices`."""

    name = "mlx.split"
    input = operand_def(TensorType)
    indices = prop_def(I64Array)
    axis = prop_def(I64Attr)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `at` custom<IntList>($indices) `axis` $axis attr-dict `:` type($input) "
        "`->` type($outputs)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x = shape_of(self.input)
        axis = _axis(self.axis.value.data, len(x))
        points = list(ints(self.indices))
        if points != sorted(points) or any(p < 0 for p in points):
            raise VerifyException(f"split points {points} must be non-negative and sorted")
        if len(points) + 1 != len(self.outputs):
            raise VerifyException(
                f"{len(points)} split points give {len(points) + 1} results, "
                f"not {len(self.outputs)}"
            )
        size = x[axis]
        if size != DYNAMIC:  # like NumPy, MLX clamps split points to the axis size
            points = [min(p, size) for p in points]
        bounds = [0, *points, size]
        for i, out in enumerate(self.outputs):
            expected = list(x)
            expected[axis] = DYNAMIC if size == DYNAMIC and i == len(points) else (
                bounds[i + 1] - bounds[i]
            )
            verify_shape_matches(expected, out, f"result #{i}")
            _verify_result_dtype(self.input, out)


@irdl_op_definition
class SliceOp(MlxirOp):
    """`x[start_0:stop_0:step_0, ...]` over every axis; bounds may be runtime values."""

    name = "mlx.slice"
    input = operand_def(TensorType)
    start = var_operand_def(IndexType)
    stop = var_operand_def(IndexType)
    static_start = prop_def(I64Array)
    static_stop = prop_def(I64Array)
    strides = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        input: SSAValue,
        start: Sequence[SSAValue | int],
        stop: Sequence[SSAValue | int],
        strides: Sequence[int],
        result_type: Attribute,
    ):
        static_start, dynamic_start = index_operands(start)
        static_stop, dynamic_stop = index_operands(stop)
        super().__init__(
            operands=[input, dynamic_start, dynamic_stop],
            result_types=[result_type],
            properties={
                "static_start": int_array(static_start),
                "static_stop": int_array(static_stop),
                "strides": int_array(strides),
            },
        )
    assembly_format = (
        "$input custom<DynamicIndexList>($start, $static_start) `to` "
        "custom<DynamicIndexList>($stop, $static_stop) `step` custom<IntList>($strides) "
        "attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (IntList, DynamicIndexList)

    def verify_(self) -> None:
        x = shape_of(self.input)
        starts, stops, strides = ints(self.static_start), ints(self.static_stop), ints(
            self.strides
        )
        if not len(starts) == len(stops) == len(strides) == len(x):
            raise VerifyException(
                f"start, stop and step need one entry per axis ({len(x)}), got "
                f"{len(starts)}, {len(stops)}, {len(strides)}"
            )
        if starts.count(DYNAMIC) != len(self.start) or stops.count(DYNAMIC) != len(self.stop):
            raise VerifyException("dynamic bounds do not match their index operands")
        if 0 in strides:
            raise VerifyException("step must be non-zero")
        expected: list[int] = []
        for d, a, b, s in zip(x, starts, stops, strides):
            if DYNAMIC in (a, b) or (d == DYNAMIC and (a < 0 or b < 0 or s < 0)):
                expected.append(DYNAMIC)
            elif s > 0:
                lo = max(0, a + d if a < 0 else a) if d != DYNAMIC else a
                hi = min(d, b + d if b < 0 else b) if d != DYNAMIC else b
                expected.append(max(0, (hi - lo + s - 1) // s))
            else:
                lo = min(d - 1, a + d if a < 0 else a)
                hi = max(-1, b + d if b < 0 else b)
                expected.append(max(0, (lo - hi + (-s) - 1) // (-s)))
        verify_shape_matches(expected, self.result)
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class PadOp(MlxirOp):
    """Constant padding: `low[i]` before and `high[i]` after axis `i`."""

    name = "mlx.pad"
    input = operand_def(TensorType)
    low = prop_def(I64Array)
    high = prop_def(I64Array)
    value = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        input: SSAValue,
        low: Sequence[int],
        high: Sequence[int],
        value: float,
        result_type: Attribute,
    ):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={
                "low": int_array(low),
                "high": int_array(high),
                "value": FloatAttr(value, Float64Type()),
            },
        )
    assembly_format = (
        "$input `low` custom<IntList>($low) `high` custom<IntList>($high) `value` $value "
        "attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x = shape_of(self.input)
        low, high = ints(self.low), ints(self.high)
        if len(low) != len(x) or len(high) != len(x):
            raise VerifyException(f"low and high need {len(x)} entries each")
        if any(p < 0 for p in (*low, *high)):
            raise VerifyException("pad widths must be non-negative")
        verify_shape_matches(
            [DYNAMIC if d == DYNAMIC else d + lo + hi for d, lo, hi in zip(x, low, high)],
            self.result,
        )
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class TileOp(MlxirOp):
    name = "mlx.tile"
    input = operand_def(TensorType)
    reps = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, reps: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"reps": int_array(reps)}
        )
    assembly_format = "$input custom<IntList>($reps) attr-dict `:` type($input) `->` type($result)"
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x, reps = shape_of(self.input), ints(self.reps)
        rank = max(len(x), len(reps))
        xs = [1] * (rank - len(x)) + list(x)
        rs = [1] * (rank - len(reps)) + list(reps)
        if any(r < 0 for r in rs):
            raise VerifyException("reps must be non-negative")
        verify_shape_matches(
            [DYNAMIC if d == DYNAMIC else d * r for d, r in zip(xs, rs)], self.result
        )
        _verify_result_dtype(self.input, self.result)


# ---------------------------------------------------------------------------
# Linear algebra and convolution
# ---------------------------------------------------------------------------


def _verify_matmul(a: SSAValue, b: SSAValue, result: SSAValue) -> None:
    x, y = shape_of(a), shape_of(b)
    if len(x) < 2 or len(y) < 2:
        raise VerifyException(
            f"matmul operands must have rank >= 2 at this level, got {len(x)} and {len(y)}"
        )
    if not dims_compatible(x[-1], y[-2]):
        raise VerifyException(f"contracting dims differ: {format_dims(x)} @ {format_dims(y)}")
    verify_same_dtype([a, b, result], "operands and result")
    verify_shape_matches([*broadcast_shapes([x[:-2], y[:-2]]), x[-2], y[-1]], result)


@irdl_op_definition
class MatmulOp(MlxirOp):
    name = "mlx.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def verify_(self) -> None:
        _verify_matmul(self.lhs, self.rhs, self.result)


@irdl_op_definition
class AddmmOp(MlxirOp):
    """`mx.addmm(c, a, b, alpha, beta)` = `beta * c + alpha * (a @ b)`."""

    name = "mlx.addmm"
    c = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    alpha = opt_prop_def(F64Attr)
    beta = opt_prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$c `,` $a `,` $b (`alpha` $alpha^)? (`beta` $beta^)? attr-dict `:` type($c) `,` "
        "type($a) `,` type($b) `->` type($result)"
    )

    def verify_(self) -> None:
        _verify_matmul(self.a, self.b, self.result)
        verify_same_dtype([self.c, self.a, self.b, self.result], "c, a, b and result")
        verify_broadcast_result([shape_of(self.c), shape_of(self.result)], self.result)


QUANTIZATION_BITS = (2, 3, 4, 5, 6, 8)
ACTIVATION_BITS = (8, 16)
"""The widths `mlx.quantized_matmul`'s `activation_bits` quantizes `x` to (int8, int16)."""
QUANTIZATION_GROUP_SIZES = (32, 64, 128)
QUANTIZATION_MODES = ("affine", "mxfp4", "mxfp8")
MXFP_FORMATS = {"mxfp4": (4, 32), "mxfp8": (8, 32)}
"""(bits, group_size) of each microscaling mode: the only pair MLX accepts for it."""


def _verify_quantized_layout(
    w: SSAValue,
    scales: SSAValue,
    biases: SSAValue | None,
    group_size: int,
    bits: int,
    mode: str,
    dtype: Attribute,
    dtype_owner: str,
    check_w: Callable[[tuple[int, ...], int], None] | None = None,
) -> tuple[tuple[int, ...], int]:
    """The packed layout MLX's quantization primitives share (`mx.quantize`'s output):
    the properties name a scheme MLX has; `w` is a rank-2 `ui32` matrix packing
    `32 / bits` elements per word along its last axis, which unpacks to whole groups;
    `scales` (and `biases`) are `[w.shape[0], unpacked / group_size]`. `"affine"` has
    scales and biases of the float `dtype` (that of `dtype_owner`, e.g. "x's"); the
    microscaling modes have `ui8` scales and no biases. `check_w(w's shape, unpacked
    width)` is the op's own check of `w` against its other operands, run before the
    scales are checked: a packed width that lies (with scales that agree with the
    other operands) is blamed on `w`. Returns `w`'s shape and its unpacked width
    (DYNAMIC when the packed width is)."""
    if bits not in QUANTIZATION_BITS:
        raise VerifyException(f"bits must be one of {QUANTIZATION_BITS}, got {bits}")
    if group_size not in QUANTIZATION_GROUP_SIZES:
        raise VerifyException(
            f"group_size must be one of {QUANTIZATION_GROUP_SIZES}, got {group_size}"
        )
    if mode not in QUANTIZATION_MODES:
        raise VerifyException(f"mode must be one of {QUANTIZATION_MODES}, got '{mode}'")
    if mode in MXFP_FORMATS and (bits, group_size) != MXFP_FORMATS[mode]:
        raise VerifyException(
            f"mode '{mode}' needs (bits, group_size) {MXFP_FORMATS[mode]}, got "
            f"({bits}, {group_size})"
        )
    if dtype_of(w) != IntegerType(32, Signedness.UNSIGNED):
        raise VerifyException(f"w must have ui32 element type, got {dtype_of(w)}")
    shape = shape_of(w)
    if len(shape) != 2:
        raise VerifyException(f"w must have rank 2, got {len(shape)}")
    if shape[1] != DYNAMIC and shape[1] * 32 % bits:
        raise VerifyException(
            f"w's packed width {shape[1]} does not hold a whole number of {bits}-bit elements"
        )
    unpacked = DYNAMIC if shape[1] == DYNAMIC else shape[1] * 32 // bits
    if unpacked != DYNAMIC and unpacked % group_size:
        raise VerifyException(
            f"w's unpacked width {unpacked} is not a multiple of group_size {group_size}"
        )
    if check_w is not None:
        check_w(shape, unpacked)
    groups = DYNAMIC if unpacked == DYNAMIC else unpacked // group_size
    verify_shape_matches([shape[0], groups], scales, "scales")
    microscaling = mode in MXFP_FORMATS
    scale_dtype = IntegerType(8, Signedness.UNSIGNED) if microscaling else dtype
    if dtype_of(scales) != scale_dtype:
        owner = "" if microscaling else f"{dtype_owner} "
        raise VerifyException(
            f"scales of mode '{mode}' must have {owner}element type {scale_dtype}, got "
            f"{dtype_of(scales)}"
        )
    if (biases is None) != microscaling:
        raise VerifyException(f"mode '{mode}' {'has no' if microscaling else 'requires'} biases")
    if biases is not None:
        if dtype_of(biases) != dtype:
            raise VerifyException(
                f"biases must have {dtype_owner} element type {dtype}, got {dtype_of(biases)}"
            )
        verify_shape_matches(shape_of(scales), biases, "biases")
    return shape, unpacked


def _quantization_properties(group_size: int, bits: int, mode: str) -> dict[str, Attribute]:
    return {
        "group_size": IntegerAttr(group_size, 64),
        "bits": IntegerAttr(bits, 64),
        "mode": StringAttr(mode),
    }


@irdl_op_definition
class QuantizedMatmulOp(MlxirOp):
    """`mx.quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode)`:
    `x @ dequantize(w).T` with `transpose`, else `x @ dequantize(w)`.

    `w` is a `ui32` matrix packing `32 / bits` elements per word along its last axis;
    `scales` (and `biases`) hold one value per `group_size` unpacked elements of a
    row of `w`, so they are `[w.shape[0], w.shape[1] * 32 / bits / group_size]`
    either way. With `transpose`, `w` unpacks to `[N, K]`; without it to `[K, N]`.
    `"affine"` (`w * scale + bias`) has biases of `x`'s dtype and scales of `x`'s
    dtype; the microscaling modes `"mxfp4"` / `"mxfp8"` have `ui8` scales (shared
    exponents) and no biases. The result is `[..., N]` of `x`'s dtype. The layout rules
    are `_verify_quantized_layout`'s, shared with `mlx.dequantize` and
    `mlx.quantized_take`.

    `activation_bits` (8 or 16; absent: exact) makes the product approximate, as
    llama.cpp's integer dot products are: `x`, in float32, is first quantized per group
    of `group_size` along K, symmetrically: `s = max|x_group| / (2^(b-1) - 1)`, `q =
    clip(round(x / s), -(2^(b-1) - 1), 2^(b-1) - 1)` (round half to even; `q = 0`
    where `s = 0`), `x' = q * s`, and the result is the exact product of `x'` with the
    weight, in `x`'s dtype (`evaluator/linalg.py`). Affine mode with `transpose` only
    (the groups of `x` are then the weight's). Set by `cpu-int8-activations`."""

    name = "mlx.quantized_matmul"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    scales = operand_def(TensorType)
    biases = opt_operand_def(TensorType)
    group_size = prop_def(I64Attr)
    bits = prop_def(I64Attr)
    mode = prop_def(StringAttr)
    transpose = opt_prop_def(UnitAttr)
    activation_bits = opt_prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$x `,` $w `,` $scales (`,` $biases^)? `group_size` $group_size `bits` $bits "
        "`mode` $mode (`transpose` $transpose^)? (`activation_bits` $activation_bits^)? "
        "attr-dict `:` type($x) `,` type($w) `,` "
        "type($scales) (`,` type($biases)^)? `->` type($result)"
    )

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        scales: SSAValue,
        biases: SSAValue | None,
        group_size: int,
        bits: int,
        mode: str,
        transpose: bool,
        result_type: Attribute,
        activation_bits: int | None = None,
    ):
        properties = _quantization_properties(group_size, bits, mode)
        if transpose:
            properties["transpose"] = UnitAttr()
        if activation_bits is not None:
            properties["activation_bits"] = IntegerAttr(activation_bits, 64)
        super().__init__(
            operands=[x, w, scales, [biases] if biases is not None else []],
            result_types=[result_type],
            properties=properties,
        )

    def verify_(self) -> None:
        bits, group_size = self.bits.value.data, self.group_size.value.data
        verify_dtype(self.x, "float", "x")
        x = shape_of(self.x)
        if len(x) < 1:
            raise VerifyException("x must have rank >= 1, got 0")
        transpose = self.transpose is not None

        def contracts_with_x(w: tuple[int, ...], unpacked: int) -> None:
            k = unpacked if transpose else w[0]
            form = "transpose: w is [N, K]" if transpose else "w is [K, N]"
            if not dims_compatible(x[-1], k):
                raise VerifyException(
                    f"x's last dim {_dim(x[-1])} must equal the contracting dim K = {_dim(k)} "
                    f"of w {format_dims(w)} ({bits}-bit, {form})"
                )

        w, unpacked = _verify_quantized_layout(
            self.w, self.scales, self.biases, group_size, bits, self.mode.data,
            dtype_of(self.x), "x's", contracts_with_x,
        )
        n = w[0] if transpose else unpacked
        if dtype_of(self.result) != dtype_of(self.x):
            raise VerifyException(
                f"result element type {dtype_of(self.result)} must equal x's {dtype_of(self.x)}"
            )
        verify_shape_matches([*x[:-1], n], self.result)
        if self.activation_bits is not None:
            activation_bits = self.activation_bits.value.data
            if activation_bits not in ACTIVATION_BITS:
                raise VerifyException(f"activation_bits must be one of {ACTIVATION_BITS}, got {activation_bits}")
            if self.mode.data != "affine" or not transpose:
                raise VerifyException("activation_bits needs mode 'affine' and transpose")


@irdl_op_definition
class DequantizeOp(MlxirOp):
    """`mx.dequantize(w, scales, biases, group_size, bits, mode, dtype)`: the float
    matrix `[rows, packed * 32 / bits]` that `w` (`[rows, packed]` `ui32`) packs.

    The layout is `mlx.quantized_matmul`'s (`_verify_quantized_layout`). In `"affine"`
    mode (`w * scale + bias`) the result has the scales' and biases' dtype; the
    microscaling modes (`ui8` scales, no biases) give any float result type, which the
    kernel passes to MLX as `dtype` (MLX's own default there is bfloat16)."""

    name = "mlx.dequantize"
    w = operand_def(TensorType)
    scales = operand_def(TensorType)
    biases = opt_operand_def(TensorType)
    group_size = prop_def(I64Attr)
    bits = prop_def(I64Attr)
    mode = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$w `,` $scales (`,` $biases^)? `group_size` $group_size `bits` $bits `mode` $mode "
        "attr-dict `:` type($w) `,` type($scales) (`,` type($biases)^)? `->` type($result)"
    )

    def __init__(
        self,
        w: SSAValue,
        scales: SSAValue,
        biases: SSAValue | None,
        group_size: int,
        bits: int,
        mode: str,
        result_type: Attribute,
    ):
        super().__init__(
            operands=[w, scales, [biases] if biases is not None else []],
            result_types=[result_type],
            properties=_quantization_properties(group_size, bits, mode),
        )

    def verify_(self) -> None:
        verify_dtype(self.result, "float", "result")
        w, unpacked = _verify_quantized_layout(
            self.w, self.scales, self.biases, self.group_size.value.data,
            self.bits.value.data, self.mode.data, dtype_of(self.result), "the result's",
        )
        verify_shape_matches([w[0], unpacked], self.result)


@irdl_op_definition
class QuantizedTakeOp(MlxirOp):
    """Rows `indices` of a quantized matrix, dequantized: `mx.dequantize(mx.take(w, i,
    0), mx.take(scales, i, 0), mx.take(biases, i, 0), group_size, bits, mode, dtype)`
    (mlx-lm's `QuantizedEmbedding`). The result is `[*indices.shape, unpacked]` of the
    float result type; the layout and dtype rules are `mlx.dequantize`'s. Like
    `mlx.take`, the kernel clamps out-of-range indices into bounds.

    The optional `biases` sits between `scales` and `indices`; as the op's only
    optional operand it needs no segment sizes (it is present iff there are 4
    operands)."""

    name = "mlx.quantized_take"
    w = operand_def(TensorType)
    scales = operand_def(TensorType)
    biases = opt_operand_def(TensorType)
    indices = operand_def(TensorType)
    group_size = prop_def(I64Attr)
    bits = prop_def(I64Attr)
    mode = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$w `,` $scales (`,` $biases^)? `indices` $indices `:` type($indices) "
        "`group_size` $group_size `bits` $bits `mode` $mode attr-dict `:` type($w) `,` "
        "type($scales) (`,` type($biases)^)? `->` type($result)"
    )

    def __init__(
        self,
        w: SSAValue,
        scales: SSAValue,
        biases: SSAValue | None,
        indices: SSAValue,
        group_size: int,
        bits: int,
        mode: str,
        result_type: Attribute,
    ):
        super().__init__(
            operands=[w, scales, [biases] if biases is not None else [], indices],
            result_types=[result_type],
            properties=_quantization_properties(group_size, bits, mode),
        )

    def verify_(self) -> None:
        _verify_indices([self.indices])
        verify_dtype(self.result, "float", "result")
        _, unpacked = _verify_quantized_layout(
            self.w, self.scales, self.biases, self.group_size.value.data,
            self.bits.value.data, self.mode.data, dtype_of(self.result), "the result's",
        )
        verify_shape_matches([*shape_of(self.indices), unpacked], self.result)


class ConvolutionOp(MlxirOp):
    """What `mx.conv_general` and the ops fused from it share: channels-last input
    `[N, *spatial, C]`, weight `[O, *k, C/g]`, MLX's options and their rules."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    stride = prop_def(I64Array)
    padding_lo = prop_def(I64Array)
    padding_hi = prop_def(I64Array)
    kernel_dilation = prop_def(I64Array)
    input_dilation = prop_def(I64Array)
    groups = prop_def(I64Attr)
    flip = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)

    def verify_(self) -> None:
        x, w = shape_of(self.input), shape_of(self.weight)
        if len(x) < 3 or len(x) != len(w):
            raise VerifyException(
                f"input and weight must have equal rank >= 3, got {len(x)} and {len(w)}"
            )
        spatial = len(x) - 2
        for what, values in (
            ("stride", self.stride),
            ("padding_lo", self.padding_lo),
            ("padding_hi", self.padding_hi),
            ("kernel_dilation", self.kernel_dilation),
            ("input_dilation", self.input_dilation),
        ):
            if len(ints(values)) != spatial:
                raise VerifyException(
                    f"{what} needs {spatial} entries (one per spatial dim), got "
                    f"{len(ints(values))}"
                )
        for what, values in (
            ("stride", self.stride),
            ("kernel_dilation", self.kernel_dilation),
            ("input_dilation", self.input_dilation),
        ):
            if any(v < 1 for v in ints(values)):
                raise VerifyException(f"{what} entries must be positive, got {list(ints(values))}")
        groups = self.groups.value.data
        if groups < 1 or not dims_compatible(x[-1], w[-1] * groups if w[-1] != DYNAMIC else DYNAMIC):
            raise VerifyException(
                f"input channels {_dim(x[-1])} must equal weight channels {_dim(w[-1])} x "
                f"groups {groups}"
            )
        if w[0] != DYNAMIC and w[0] % groups:
            raise VerifyException(f"output channels {w[0]} must be divisible by groups {groups}")
        verify_same_dtype([self.input, self.weight, self.result], "input, weight and result")
        if rank_of(self.result) != len(x):
            raise VerifyException("result must have the input's rank")
        stride, lo, hi = ints(self.stride), ints(self.padding_lo), ints(self.padding_hi)
        k_dil, in_dil = ints(self.kernel_dilation), ints(self.input_dilation)
        expected = [x[0]]
        for i in range(spatial):
            size, k = x[1 + i], w[1 + i]
            if DYNAMIC in (size, k):
                expected.append(DYNAMIC)
                continue
            padded = (size - 1) * in_dil[i] + 1 + lo[i] + hi[i]
            kernel = (k - 1) * k_dil[i] + 1
            if padded < kernel:
                raise VerifyException(
                    f"spatial dim {i} is {padded} after dilation and padding, smaller than "
                    f"the dilated kernel's {kernel}"
                )
            expected.append((padded - kernel) // stride[i] + 1)
        verify_shape_matches([*expected, w[0]], self.result)


_CONV_OPTIONS = (
    "`stride` custom<IntList>($stride) `padding` custom<IntList>($padding_lo) "
    "custom<IntList>($padding_hi) `kernel_dilation` custom<IntList>($kernel_dilation) "
    "`input_dilation` custom<IntList>($input_dilation) `groups` $groups (`flip` $flip^)?"
)


@irdl_op_definition
class ConvGeneralOp(ConvolutionOp):
    """`mx.conv_general`: channels-last input `[N, *spatial, C]`, weight `[O, *k, C/g]`."""

    name = "mlx.conv_general"
    assembly_format = (
        f"$input `,` $weight {_CONV_OPTIONS} attr-dict `:` type($input) `,` type($weight) "
        "`->` type($result)"
    )


CONV_ACTIVATIONS = ("none", "relu", "relu6", "silu")
"""`conv_bias_activation`'s activations: `relu` is `max(y, 0)`, `relu6` `min(max(y, 0),
6)`, `silu` `y * sigmoid(y)` (`evaluator/linalg.py`, `ACTIVATIONS`, computes them)."""


@irdl_op_definition
class ConvBiasActivationOp(ConvolutionOp):
    """`mx.conv_general`, plus a per-channel `bias` `[O]` when given, then `activation`:
    a convolution's epilogue as one op, which a device may compute in the convolution's
    own pass (the CPU's native depthwise kernel). Its meaning is the composition
    (`evaluator/linalg.py`); the CPU target's `cpu-fuse-conv-epilogue` forms it."""

    name = "mlx.conv_bias_activation"
    # Declared again, first: IRDL orders a subclass's own fields before its bases', and
    # the operands are input, weight, bias.
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    activation = prop_def(StringAttr)
    assembly_format = (
        f"$input `,` $weight (`bias` $bias^ `:` type($bias))? {_CONV_OPTIONS} "
        "`activation` $activation attr-dict `:` type($input) `,` type($weight) `->` type($result)"
    )

    def __init__(
        self,
        conv: ConvGeneralOp,
        *,
        bias: SSAValue | None = None,
        activation: str = "none",
    ):
        """The op fused from `conv`: its operands, options and result type."""
        super().__init__(
            operands=[conv.input, conv.weight, [bias] if bias is not None else []],
            result_types=[conv.result.type],
            properties={**conv.properties, "activation": StringAttr(activation)},
        )

    def verify_(self) -> None:
        super().verify_()
        if self.activation.data not in CONV_ACTIVATIONS:
            raise VerifyException(
                f"activation must be one of {CONV_ACTIVATIONS}, got '{self.activation.data}'"
            )
        if self.bias is None:
            return
        channels = shape_of(self.result)[-1]
        if rank_of(self.bias) != 1 or not dims_compatible(shape_of(self.bias)[0], channels):
            raise VerifyException(
                f"bias must be 1-D of the output channels' size {_dim(channels)}, got "
                f"{format_dims(shape_of(self.bias))}"
            )
        verify_same_dtype([self.bias, self.result], "bias and result")


# ---------------------------------------------------------------------------
# Fast ops
# ---------------------------------------------------------------------------

SDPA_MASK_MODES = ("causal",)


@irdl_op_definition
class ScaledDotProductAttentionOp(MlxirOp):
    """`mx.fast.scaled_dot_product_attention` on `[B, H, L, D]`; K/V may have fewer heads
    (grouped-query attention). `mask_mode "causal"` is MLX's lower-right-aligned mask.

    `zero_masked_rows` gives PyTorch's meaning to a query row whose keys are all masked
    (a bool row all false, an additive row all -inf): exact zeros. Without it the row
    is whatever MLX computes (docs/semantics.md, section 3)."""

    name = "mlx.scaled_dot_product_attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(F64Attr)
    mask_mode = opt_prop_def(StringAttr)
    zero_masked_rows = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MlxCanonicalization())

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        result_type: Attribute,
        *,
        scale: float,
        mask: SSAValue | None = None,
        mask_mode: str | None = None,
        zero_masked_rows: bool = False,
    ):
        properties: dict[str, Attribute] = {"scale": FloatAttr(scale, Float64Type())}
        if mask_mode is not None:
            properties["mask_mode"] = StringAttr(mask_mode)
        if zero_masked_rows:
            properties["zero_masked_rows"] = UnitAttr()
        super().__init__(
            operands=[query, key, value, [mask] if mask is not None else []],
            result_types=[result_type],
            properties=properties,
        )
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^ `:` type($mask))? `scale` $scale "
        "(`mask_mode` $mask_mode^)? (`zero_masked_rows` $zero_masked_rows^)? attr-dict "
        "`:` type($query) `,` type($key) `,` type($value) `->` type($result)"
    )

    def verify_(self) -> None:
        for what, v in (("query", self.query), ("key", self.key), ("value", self.value)):
            if rank_of(v) != 4:
                raise VerifyException(f"{what} must be [B, H, L, D], got rank {rank_of(v)}")
        verify_same_dtype([self.query, self.key, self.value, self.result], "q, k, v and result")
        q, k, v = shape_of(self.query), shape_of(self.key), shape_of(self.value)
        if not dims_compatible(q[0], k[0]) or not dims_compatible(k[0], v[0]):
            raise VerifyException(
                f"query, key and value batch sizes differ: {_dim(q[0])}, {_dim(k[0])}, "
                f"{_dim(v[0])}"
            )
        if not dims_compatible(k[1], v[1]):
            raise VerifyException(f"key heads {k[1]} and value heads {v[1]} differ")
        if DYNAMIC not in (q[1], k[1]) and (k[1] == 0 or q[1] % k[1]):
            raise VerifyException(
                f"query heads {q[1]} must be a multiple of key/value heads {k[1]}"
            )
        if not dims_compatible(q[3], k[3]) or not dims_compatible(k[2], v[2]):
            raise VerifyException("query/key head dims or key/value lengths differ")
        if self.mask_mode is not None:
            if self.mask_mode.data not in SDPA_MASK_MODES:
                raise VerifyException(
                    f"mask_mode must be one of {SDPA_MASK_MODES}, got '{self.mask_mode.data}'"
                )
            if self.mask is not None:
                raise VerifyException("mask_mode and an explicit mask are mutually exclusive")
        if self.zero_masked_rows is not None and self.mask is None:
            raise VerifyException("zero_masked_rows needs an explicit mask")
        if self.mask is not None:
            dtype = dtype_of(self.mask)
            if not (is_bool(dtype) or dtype == dtype_of(self.query)):
                raise VerifyException(
                    f"mask must be i1 or the query's element type, got {dtype}"
                )
            mask, scores = shape_of(self.mask), [q[0], q[1], q[2], k[2]]
            if len(mask) > 4 or not all(
                d in (1, DYNAMIC) or dims_compatible(d, s)
                for d, s in zip(reversed(mask), reversed(scores), strict=False)
            ):
                raise VerifyException(
                    f"mask shape {format_dims(mask)} does not broadcast to the scores shape "
                    f"{format_dims(scores)}"
                )
        verify_shape_matches([q[0], q[1], q[2], v[3]], self.result)


def _verify_norm_param(param: SSAValue | None, x: SSAValue, what: str) -> None:
    if param is None:
        return
    if rank_of(param) != 1 or not dims_compatible(shape_of(param)[0], shape_of(x)[-1]):
        raise VerifyException(
            f"{what} must be 1-D of the last dim's size {_dim(shape_of(x)[-1])}, got "
            f"{format_dims(shape_of(param))}"
        )


@irdl_op_definition
class RmsNormOp(MlxirOp):
    """`mx.fast.rms_norm` over the last axis."""

    name = "mlx.rms_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    eps = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, weight: SSAValue | None, eps: float):
        super().__init__(
            operands=[input, [weight] if weight is not None else []],
            result_types=[input.type],
            properties={"eps": FloatAttr(eps, Float64Type())},
        )
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? `eps` $eps attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        if rank_of(self.input) < 1:
            raise VerifyException("input must have rank >= 1")
        _verify_norm_param(self.weight, self.input, "weight")
        verify_same_shape(self.input, self.result)
        verify_dtype(self.input, "float", "input")
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class LayerNormOp(MlxirOp):
    """`mx.fast.layer_norm` over the last axis."""

    name = "mlx.layer_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    eps = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, input: SSAValue, weight: SSAValue | None, bias: SSAValue | None, eps: float
    ):
        super().__init__(
            operands=[
                input,
                [weight] if weight is not None else [],
                [bias] if bias is not None else [],
            ],
            result_types=[input.type],
            properties={"eps": FloatAttr(eps, Float64Type())},
        )
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? (`bias` $bias^ `:` type($bias))? "
        "`eps` $eps attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        if rank_of(self.input) < 1:
            raise VerifyException("input must have rank >= 1")
        _verify_norm_param(self.weight, self.input, "weight")
        _verify_norm_param(self.bias, self.input, "bias")
        verify_same_shape(self.input, self.result)
        verify_dtype(self.input, "float", "input")
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class RopeOp(MlxirOp):
    """`mx.fast.rope`: rotary embedding of the first `dims` features along the
    second-to-last axis, the features after `dims` passed through. The position of
    step `t` of batch row `b` is `offset + row_offsets[b] + t` (`row_offsets`, when
    given, is `[B]` or 0-d, B the first axis). The angle of feature pair `i` is
    `scale * position / freqs[i]` with `freqs` given, else `scale * position *
    base ** (-2i / dims)`: exactly one of `base` and `freqs`. Without `traditional`
    the pairs are `(i, i + dims/2)` (HF's `rotate_half`), with it `(2i, 2i + 1)`."""

    name = "mlx.rope"
    input = operand_def(TensorType)
    offset = var_operand_def(IndexType)
    freqs = opt_operand_def(TensorType)
    row_offsets = opt_operand_def(TensorType)
    static_offset = prop_def(I64Array)
    dims = prop_def(I64Attr)
    traditional = opt_prop_def(UnitAttr)
    base = opt_prop_def(F64Attr)
    scale = prop_def(F64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input `dims` $dims (`traditional` $traditional^)? (`base` $base^)? "
        "(`freqs` $freqs^ `:` type($freqs))? `scale` $scale "
        "`offset` custom<DynamicIndexList>($offset, $static_offset) "
        "(`rows` $row_offsets^ `:` type($row_offsets))? attr-dict `:` "
        "type($input) `->` type($result)"
    )
    custom_directives = (DynamicIndexList,)

    def __init__(
        self,
        input: SSAValue,
        dims: int,
        *,
        freqs: SSAValue | None = None,
        base: float | None = None,
        offset: SSAValue | int = 0,
        row_offsets: SSAValue | None = None,
        traditional: bool = False,
        scale: float = 1.0,
    ):
        properties: dict[str, Attribute] = {
            "dims": IntegerAttr(dims, 64),
            "scale": FloatAttr(scale, Float64Type()),
            "static_offset": int_array([offset if isinstance(offset, int) else DYNAMIC]),
        }
        if base is not None:
            properties["base"] = FloatAttr(base, Float64Type())
        if traditional:
            properties["traditional"] = UnitAttr()
        super().__init__(
            operands=[
                input,
                [] if isinstance(offset, int) else [offset],
                [freqs] if freqs is not None else [],
                [row_offsets] if row_offsets is not None else [],
            ],
            result_types=[input.type],
            properties=properties,
        )

    def verify_(self) -> None:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException("input must have rank >= 2")
        dims = self.dims.value.data
        if dims <= 0 or dims % 2 or (x[-1] != DYNAMIC and dims > x[-1]):
            raise VerifyException(
                f"dims {dims} must be even, positive and at most the feature size "
                f"{_dim(x[-1])}"
            )
        offset = ints(self.static_offset)
        if len(offset) != 1 or offset.count(DYNAMIC) != len(self.offset):
            raise VerifyException("offset must be exactly one integer or index value")
        if (self.base is None) == (self.freqs is None):
            raise VerifyException("exactly one of base and freqs must be given")
        if self.freqs is not None:
            verify_dtype(self.freqs, "float", "freqs")
            if tuple(shape_of(self.freqs)) != (dims // 2,):
                raise VerifyException(
                    f"freqs must have shape [{dims // 2}] (dims / 2), got "
                    f"{list(shape_of(self.freqs))}"
                )
        if self.row_offsets is not None:
            rows = shape_of(self.row_offsets)
            verify_dtype(self.row_offsets, "integer (not bool)", "row_offsets")
            if len(rows) > 1 or (
                len(rows) == 1 and DYNAMIC not in (rows[0], x[0]) and rows[0] != x[0]
            ):
                raise VerifyException(
                    f"row_offsets must be 0-d or [B] with B the input's first dim "
                    f"{_dim(x[0])}, got {list(rows)}"
                )
        verify_same_shape(self.input, self.result)
        _verify_result_dtype(self.input, self.result)


# ---------------------------------------------------------------------------
# Reductions, scans, softmax
# ---------------------------------------------------------------------------


class ReductionOp(MlxirOp):
    """Reduces `axes` (all axes when absent), keeping them as size 1 with `keepdims`."""

    input = operand_def(TensorType)
    axes = opt_prop_def(I64Array)
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        input: SSAValue,
        axes: Sequence[int] | None,
        keepdims: bool,
        result_type: Attribute,
    ):
        properties: dict[str, Attribute] = {}
        if axes is not None:
            properties["axes"] = int_array(axes)
        if keepdims:
            properties["keepdims"] = UnitAttr()
        super().__init__(operands=[input], result_types=[result_type], properties=properties)
    assembly_format = (
        "$input (`axes` custom<IntList>($axes)^)? (`keepdims` $keepdims^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def reduced_axes(self) -> list[int]:
        rank = rank_of(self.input)
        if self.axes is None:
            return list(range(rank))
        return _axes(ints(self.axes), rank)

    def verify_(self) -> None:
        verify_reduced_shape(
            shape_of(self.input), self.reduced_axes(), self.keepdims is not None, self.result
        )
        kind = REDUCTION_OPS.get(self.name.removeprefix("mlx."))
        if kind is ElementwiseKind.PREDICATE:
            verify_dtype(self.result, "bool", "result")
        elif kind is ElementwiseKind.SAME:
            _verify_result_dtype(self.input, self.result)
        elif kind is ElementwiseKind.FLOAT:
            verify_dtype(self.result, "float", "result")


REDUCTION_OPS = MLX_REDUCTION_OPS

REDUCTION_OP_CLASSES: dict[str, type[ReductionOp]] = {
    name: cast(type[ReductionOp], _define(ReductionOp, name, f"`mx.{name}` over axes: {kind.value}."))
    for name, kind in REDUCTION_OPS.items()
}


class VarianceOp(ReductionOp):
    ddof = prop_def(I64Attr)
    assembly_format = (
        "$input (`axes` custom<IntList>($axes)^)? `ddof` $ddof (`keepdims` $keepdims^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


@irdl_op_definition
class VarOp(VarianceOp):
    name = "mlx.var"


@irdl_op_definition
class StdOp(VarianceOp):
    name = "mlx.std"


class ArgReductionOp(MlxirOp):
    input = operand_def(TensorType)
    axis = opt_prop_def(I64Attr)
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`axis` $axis^)? (`keepdims` $keepdims^)? attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        verify_dtype(self.result, "integer (not bool)", "result")
        x = shape_of(self.input)
        keep = self.keepdims is not None
        if self.axis is None:
            verify_shape_matches([1] * len(x) if keep else [], self.result)
            return
        axis = _axis(self.axis.value.data, len(x))
        verify_reduced_shape(x, [axis], keep, self.result)


@irdl_op_definition
class ArgmaxOp(ArgReductionOp):
    name = "mlx.argmax"


@irdl_op_definition
class ArgminOp(ArgReductionOp):
    name = "mlx.argmin"


class SortAlongAxisOp(MlxirOp):
    """Sorts along `axis`, ascending; ties keep their input order (MLX's sort is stable)."""

    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        _axis(self.axis.value.data, rank_of(self.input))
        verify_same_shape(self.input, self.result)


@irdl_op_definition
class SortOp(SortAlongAxisOp):
    """`mx.sort(x, axis)`: the sorted values (NaN last)."""

    name = "mlx.sort"

    def verify_(self) -> None:
        super().verify_()
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class ArgsortOp(SortAlongAxisOp):
    """`mx.argsort(x, axis)`: the indices that sort `x` (MLX gives uint32)."""

    name = "mlx.argsort"

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "integer (not bool)", "result")


class ScanOp(MlxirOp):
    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    reverse = opt_prop_def(UnitAttr)
    exclusive = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `axis` $axis (`reverse` $reverse^)? (`exclusive` $exclusive^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        _axis(self.axis.value.data, rank_of(self.input))
        verify_same_shape(self.input, self.result)
        _verify_result_dtype(self.input, self.result)


@irdl_op_definition
class CumsumOp(ScanOp):
    name = "mlx.cumsum"


@irdl_op_definition
class CumprodOp(ScanOp):
    name = "mlx.cumprod"


@irdl_op_definition
class CummaxOp(ScanOp):
    name = "mlx.cummax"


@irdl_op_definition
class LogcumsumexpOp(ScanOp):
    name = "mlx.logcumsumexp"

    def verify_(self) -> None:
        super().verify_()
        verify_dtype(self.result, "float", "result")


@irdl_op_definition
class CumminOp(ScanOp):
    name = "mlx.cummin"


class SquareMatricesOp(MlxirOp):
    """An `mx.linalg` function of each square matrix of `input` (float32, on MLX's CPU
    stream): by default a matrix of the same shape and type for each."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_square_matrices(self.input)
        verify_same_shape(self.input, self.result)
        verify_same_dtype([self.input, self.result])


@irdl_op_definition
class LinalgInvOp(SquareMatricesOp):
    """`mx.linalg.inv`: each square matrix's inverse."""

    name = "mlx.linalg_inv"


@irdl_op_definition
class LinalgDetOp(SquareMatricesOp):
    """`mx.linalg.det`: each square matrix's determinant."""

    name = "mlx.linalg_det"

    def verify_(self) -> None:
        verify_per_matrix(self.input, self.result)


@irdl_op_definition
class LinalgSlogdetOp(MlxirOp):
    """`mx.linalg.slogdet`: the sign of each square matrix's determinant and the log of
    its absolute value."""

    name = "mlx.linalg_slogdet"
    input = operand_def(TensorType)
    sign = result_def(TensorType)
    logabsdet = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($sign) `,` type($logabsdet)"

    def verify_(self) -> None:
        verify_per_matrix(self.input, self.sign, "sign")
        verify_per_matrix(self.input, self.logabsdet, "logabsdet")


class SolveOp(MlxirOp):
    """X with `a X = b`, for `a` `[..., n, n]` and `b` `[..., n, k]` with the same batch
    dims (MLX's solves broadcast neither, nor take vectors)."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        batch, b_shape = verify_square_matrices(self.a, "a"), shape_of(self.b)
        n = shape_of(self.a)[-1]
        if len(b_shape) != len(batch) + 2 or not all(dims_compatible(x, y) for x, y in zip((*batch, n), b_shape)):
            raise VerifyException(
                f"b {format_dims(b_shape)} must be [..., n, k] with a's batch dims and n, "
                f"a is {format_dims(shape_of(self.a))}"
            )
        verify_same_shape(self.b, self.result)
        verify_same_dtype([self.a, self.b, self.result])


@irdl_op_definition
class LinalgSolveOp(SolveOp):
    """`mx.linalg.solve(a, b)`."""

    name = "mlx.linalg_solve"
    assembly_format = "$a `,` $b attr-dict `:` type($a) `,` type($b) `->` type($result)"


@irdl_op_definition
class LinalgSolveTriangularOp(SolveOp):
    """`mx.linalg.solve_triangular(a, b, upper)`: reading only `a`'s lower (or, with
    `upper`, upper) triangle."""

    name = "mlx.linalg_solve_triangular"
    upper = opt_prop_def(UnitAttr)
    assembly_format = "$a `,` $b (`upper` $upper^)? attr-dict `:` type($a) `,` type($b) `->` type($result)"


@irdl_op_definition
class LinalgCholeskyInvOp(SquareMatricesOp):
    """`mx.linalg.cholesky_inv(l, upper)`: the inverse of `l l^T` (`u^T u` with
    `upper`) for each Cholesky factor."""

    name = "mlx.linalg_cholesky_inv"
    upper = opt_prop_def(UnitAttr)
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($result)"


@irdl_op_definition
class LinalgCholeskyOp(SquareMatricesOp):
    """`mx.linalg.cholesky(a, upper)`: each matrix's lower (`upper`: upper) Cholesky
    factor, the other triangle zero."""

    name = "mlx.linalg_cholesky"
    upper = opt_prop_def(UnitAttr)
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($result)"


@irdl_op_definition
class LinalgLuFactorOp(MlxirOp):
    """`mx.linalg.lu_factor(a)`: each matrix `[..., m, n]`'s LU factors packed in one
    matrix (L below the diagonal, its unit diagonal implicit; U on and above it) and
    the pivots `[..., k]`, k = min(m, n), 0-based (row i was swapped with row
    `pivots[i]`, in order; MLX gives uint32, the kernel casts)."""

    name = "mlx.linalg_lu_factor"
    input = operand_def(TensorType)
    lu = result_def(TensorType)
    pivots = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($lu) `,` type($pivots)"

    def verify_(self) -> None:
        verify_lu(self.input, self.lu, self.pivots)
        verify_dtype(self.pivots, "integer (not bool)", "pivots")


@irdl_op_definition
class LinalgQrOp(MlxirOp):
    """`mx.linalg.qr(a)`: the reduced factorization, Q `[..., m, k]` and R `[..., k, n]`,
    k = min(m, n)."""

    name = "mlx.linalg_qr"
    input = operand_def(TensorType)
    q = result_def(TensorType)
    r = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($q) `,` type($r)"

    def verify_(self) -> None:
        verify_qr(self.input, self.q, self.r)


@irdl_op_definition
class LinalgSvdOp(MlxirOp):
    """`mx.linalg.svd(a)`: the full factorization `a = u diag(s) vt`, u `[..., m, m]`,
    s `[..., k]` descending, vt `[..., n, n]`. Each singular vector's sign is the
    LAPACK build's own: only sign-free products of u and vt match torch."""

    name = "mlx.linalg_svd"
    input = operand_def(TensorType)
    u = result_def(TensorType)
    s = result_def(TensorType)
    vt = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($u) `,` type($s) `,` type($vt)"

    def verify_(self) -> None:
        batch, m, n, _ = verify_matrices(self.input)
        verify_singular_values(self.input, self.s)
        verify_shape_matches([*batch, m, m], self.u, "u")
        verify_shape_matches([*batch, n, n], self.vt, "vt")
        verify_same_dtype([self.input, self.u, self.vt], "input, u and vt")


@irdl_op_definition
class LinalgSvdvalsOp(MlxirOp):
    """`mx.linalg.svd(a, compute_uv=False)`: the singular values `[..., k]`, descending."""

    name = "mlx.linalg_svdvals"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_singular_values(self.input, self.result)


@irdl_op_definition
class LinalgEighOp(MlxirOp):
    """`mx.linalg.eigh(a, UPLO)`: each symmetric matrix's eigenvalues, ascending, and
    eigenvectors (as columns), reading its lower (`upper`: upper) triangle. Each
    eigenvector's sign is the LAPACK build's own: only sign-free products match torch."""

    name = "mlx.linalg_eigh"
    input = operand_def(TensorType)
    upper = opt_prop_def(UnitAttr)
    eigenvalues = result_def(TensorType)
    eigenvectors = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($eigenvalues) `,` type($eigenvectors)"
    )

    def verify_(self) -> None:
        verify_square_matrices(self.input)
        verify_singular_values(self.input, self.eigenvalues, "eigenvalues")
        verify_same_shape(self.input, self.eigenvectors, "eigenvectors")
        verify_same_dtype([self.input, self.eigenvectors], "input and eigenvectors")


@irdl_op_definition
class LinalgEigvalshOp(MlxirOp):
    """`mx.linalg.eigvalsh(a, UPLO)`: each symmetric matrix's eigenvalues, ascending,
    reading its lower (`upper`: upper) triangle."""

    name = "mlx.linalg_eigvalsh"
    input = operand_def(TensorType)
    upper = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`upper` $upper^)? attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_square_matrices(self.input)
        verify_singular_values(self.input, self.result, "eigenvalues")


@irdl_op_definition
class SoftmaxOp(MlxirOp):
    """`mx.softmax(x, axes, precise)`; `precise` accumulates low precision in f32."""

    name = "mlx.softmax"
    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    precise = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axes: Sequence[int], precise: bool):
        properties: dict[str, Attribute] = {"axes": int_array(axes)}
        if precise:
            properties["precise"] = UnitAttr()
        super().__init__(operands=[input], result_types=[input.type], properties=properties)
    assembly_format = (
        "$input `axes` custom<IntList>($axes) (`precise` $precise^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        _axes(ints(self.axes), rank_of(self.input))
        verify_same_shape(self.input, self.result)
        verify_same_dtype([self.input, self.result], "input and result")
        verify_dtype(self.input, "float", "input")


# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------


class CreationOp(MlxirOp):
    shape = var_operand_def(IndexType)
    static_shape = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        verify_size_list(ints(self.static_shape), len(self.shape), shape_of(self.result), "shape")


@irdl_op_definition
class FullOp(CreationOp):
    """`mx.full(shape, value)` with a 0-d `value` of the result's element type."""

    name = "mlx.full"
    value = operand_def(TensorType)
    assembly_format = (
        "custom<DynamicIndexList>($shape, $static_shape) `,` $value attr-dict `:` "
        "type($value) `->` type($result)"
    )
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        super().verify_()
        if rank_of(self.value) != 0:
            raise VerifyException("value must be 0-d")
        verify_same_dtype([self.value, self.result], "value and result")


@irdl_op_definition
class ZerosOp(CreationOp):
    name = "mlx.zeros"
    assembly_format = "custom<DynamicIndexList>($shape, $static_shape) attr-dict `:` type($result)"
    custom_directives = (DynamicIndexList,)


@irdl_op_definition
class OnesOp(CreationOp):
    name = "mlx.ones"
    assembly_format = "custom<DynamicIndexList>($shape, $static_shape) attr-dict `:` type($result)"
    custom_directives = (DynamicIndexList,)


class RandomOp(MlxirOp):
    """Float values drawn from MLX's global generator (`mx.random.state`), a fresh
    draw each time the op runs. Not a `CreationOp` and not `Pure`: nothing may fold,
    merge or hoist a draw (a program holding one runs interpreted, as `mx.compile`
    would fix its values)."""

    shape = var_operand_def(IndexType)
    static_shape = prop_def(I64Array)
    result = result_def(TensorType)
    assembly_format = "custom<DynamicIndexList>($shape, $static_shape) attr-dict `:` type($result)"
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        verify_size_list(ints(self.static_shape), len(self.shape), shape_of(self.result), "shape")
        if not is_float(dtype_of(self.result)):
            raise VerifyException(f"result must be a float tensor, got {dtype_of(self.result)}")


@irdl_op_definition
class RandomUniformOp(RandomOp):
    """`mx.random.uniform(shape=..., dtype=...)`: uniform on [0, 1)."""

    name = "mlx.random_uniform"


@irdl_op_definition
class RandomNormalOp(RandomOp):
    """`mx.random.normal(shape, dtype)`: the standard normal distribution."""

    name = "mlx.random_normal"


@irdl_op_definition
class ArangeOp(MlxirOp):
    """`mx.arange(start, stop, step)` over integers; bounds may be runtime values."""

    name = "mlx.arange"
    bounds = var_operand_def(IndexType)
    static_bounds = prop_def(I64Array)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, bounds: Sequence[SSAValue | int], result_type: Attribute):
        """`bounds` is `[start, stop, step]`, each static or an `index` value."""
        static, dynamic = index_operands(bounds)
        super().__init__(
            operands=[dynamic],
            result_types=[result_type],
            properties={"static_bounds": int_array(static)},
        )
    assembly_format = (
        "custom<DynamicIndexList>($bounds, $static_bounds) attr-dict `:` type($result)"
    )
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        static = ints(self.static_bounds)
        if len(static) != 3:
            raise VerifyException(f"bounds must be [start, stop, step], got {len(static)} entries")
        if static.count(DYNAMIC) != len(self.bounds):
            raise VerifyException("bounds' dynamic entries do not match their index operands")
        if static[2] == 0:
            raise VerifyException("step must be non-zero")
        if rank_of(self.result) != 1:
            raise VerifyException("result must be 1-D")
        start, stop, step = static
        if DYNAMIC not in static:
            verify_shape_matches([max(0, -(-(stop - start) // step))], self.result)


class TriangleOp(MlxirOp):
    input = operand_def(TensorType)
    k = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `k` $k attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        if rank_of(self.input) < 2:
            raise VerifyException("input must have rank >= 2")
        verify_same_shape(self.input, self.result)
        verify_same_dtype([self.input, self.result], "input and result")


@irdl_op_definition
class DiagonalOp(MlxirOp):
    """`mx.diagonal(input, offset, axis1, axis2)`: the diagonal as the last dim."""

    name = "mlx.diagonal"
    input = operand_def(TensorType)
    offset = prop_def(I64Attr)
    axis1 = prop_def(I64Attr)
    axis2 = prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `offset` $offset `axes` $axis1 `,` $axis2 attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        verify_diagonal(
            self.input, self.result, self.offset.value.data, (self.axis1.value.data, self.axis2.value.data)
        )


@irdl_op_definition
class TrilOp(TriangleOp):
    name = "mlx.tril"


@irdl_op_definition
class TriuOp(TriangleOp):
    name = "mlx.triu"


@irdl_op_definition
class ConstantOp(MlxirOp):
    """A small literal array inlined in the IR (large payloads are `mlx.global`s)."""

    name = "mlx.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attributes = parser.parse_optional_attr_dict()
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            # Point at the attribute, not at the token after it.
            parser.raise_error("expected a dense<...> : tensor<...> literal", start, parser.pos)
        op = cls(cast(DenseIntOrFPElementsAttr, value))
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"value type {self.value.type} does not match the result type {self.result.type}"
            )


# ---------------------------------------------------------------------------
# Runtime integers
# ---------------------------------------------------------------------------


@irdl_op_definition
class DimOp(MlxirOp):
    """The runtime size of `axis` of `input`, as an `index`."""

    name = "mlx.dim"
    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$input `axis` $axis attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, axis: int):
        super().__init__(
            operands=[input],
            result_types=[IndexType()],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    def verify_(self) -> None:
        _axis(self.axis.value.data, rank_of(self.input))


@irdl_op_definition
class FromIndexOp(MlxirOp):
    """A 0-d integer or float array holding a runtime `index` (a symbolic Scalar)."""

    name = "mlx.from_index"
    input = operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])
    assembly_format = "$input attr-dict `:` type($result)"

    def verify_(self) -> None:
        if rank_of(self.result) != 0:
            raise VerifyException("result must be 0-d")


# ---------------------------------------------------------------------------
# Weights, buffers and state
# ---------------------------------------------------------------------------

GLOBAL_KINDS = ("parameter", "buffer", "constant", "state")
"""What a global holds, after `ExportedProgram.graph_signature`: a parameter, a buffer
(persistent or not), a lifted constant tensor, or mutable state (a mutated buffer)."""


@irdl_op_definition
class GlobalOp(MlxirOp):
    """A module-level tensor symbol. `value` is absent for payloads that travel beside
    the IR (the usual case), a `dense_resource<...>` handle, or an inline `dense<...>`."""

    name = "mlx.global"
    sym_name = prop_def(SymbolNameConstraint())
    type = prop_def(TensorType)
    kind = prop_def(StringAttr)
    value = opt_prop_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    ranks = opt_prop_def(I64Attr)
    """Split over `ranks` ranks (`shard-tensor-parallel`): `type` is one rank's slice,
    and `value` holds the slices one after another, `[ranks, *type.shape]`, rank 0
    first. Each rank reads only its own (docs/distributed.md)."""
    traits = traits_def(SymbolOpInterface())
    assembly_format = "$sym_name $kind (`ranks` $ranks^)? `:` $type (`=` $value^)? attr-dict"

    def __init__(self, name: str, tensor: TensorType[Attribute], kind: str):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "type": tensor,
                "kind": StringAttr(kind),
            }
        )

    def verify_(self) -> None:
        if self.kind.data not in GLOBAL_KINDS:
            raise VerifyException(f"kind must be one of {GLOBAL_KINDS}, got '{self.kind.data}'")
        if self.ranks is not None and self.ranks.value.data < 2:
            raise VerifyException(f"ranks must be at least 2, got {self.ranks.value.data}")
        if self.ranks is not None and self.kind.data == "state":
            raise VerifyException("mutable state cannot be split over ranks")
        if self.value is not None and self.value.type != self.value_type:
            raise VerifyException(
                f"value type {self.value.type} does not match the global's "
                + (f"{self.ranks.value.data} slices of {self.type}: {self.value_type}" if self.ranks is not None else f"type {self.type}")
            )

    @property
    def value_type(self) -> TensorType[Attribute]:
        """The type of `value`: `type`, or for a global split over ranks, its slices
        stacked on a leading axis."""
        if self.ranks is None:
            return self.type
        return TensorType(
            self.type.get_element_type(), [self.ranks.value.data, *self.type.get_shape()]
        )


def _lookup_global(op: Operation, ref: SymbolRefAttr) -> GlobalOp:
    target = SymbolTable.lookup_symbol(op, ref)
    if not isinstance(target, GlobalOp):
        raise VerifyException(f"'{ref.string_value()}' does not name an mlx.global")
    return target


class GlobalAccessOp(MlxirOp):
    global_name = prop_def(SymbolRefAttr)

    def verify_access(self, value: SSAValue, *, state: bool) -> None:
        target = _lookup_global(self, self.global_name)
        if target.type != value.type:
            raise VerifyException(
                f"type {value.type} does not match @{target.sym_name.data}'s {target.type}"
            )
        if state and target.kind.data != "state":
            raise VerifyException(
                f"@{target.sym_name.data} is a {target.kind.data}, not mutable state"
            )
        if not state and target.kind.data == "state":
            raise VerifyException(
                f"@{target.sym_name.data} is mutable state: read it with mlx.load_state"
            )


@irdl_op_definition
class WeightOp(GlobalAccessOp):
    """The value of an immutable global (parameter, buffer or constant)."""

    name = "mlx.weight"
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, global_name: str | SymbolRefAttr, result_type: Attribute):
        ref = SymbolRefAttr(global_name) if isinstance(global_name, str) else global_name
        super().__init__(properties={"global_name": ref}, result_types=[result_type])
    assembly_format = "$global_name attr-dict `:` type($result)"

    def verify_(self) -> None:
        self.verify_access(self.result, state=False)


@irdl_op_definition
class LoadStateOp(GlobalAccessOp):
    """The current value of a mutable global (e.g. a static KV cache)."""

    name = "mlx.load_state"
    result = result_def(TensorType)
    assembly_format = "$global_name attr-dict `:` type($result)"

    def verify_(self) -> None:
        self.verify_access(self.result, state=True)


@irdl_op_definition
class StoreStateOp(GlobalAccessOp):
    """Sets a mutable global for the next call (a buffer mutation in the signature)."""

    name = "mlx.store_state"
    value = operand_def(TensorType)
    assembly_format = "$value `to` $global_name attr-dict `:` type($value)"

    def verify_(self) -> None:
        self.verify_access(self.value, state=True)


# ---------------------------------------------------------------------------
# Fourier transforms
# ---------------------------------------------------------------------------


@irdl_op_definition
class FftnOp(MlxirOp):
    """MLX's FFT over `axes`: `mx.fft.fftn`, with `inverse` `ifftn` (scaled by 1/n),
    with `real` `rfftn` (float32 in, the last axis' first n/2 + 1 entries out) and with
    both `irfftn`, whose last signal size is `last_size` (the other axes keep the
    input's sizes)."""

    name = "mlx.fftn"
    input = operand_def(TensorType)
    axes = prop_def(I64Array)
    inverse = opt_prop_def(UnitAttr)
    real = opt_prop_def(UnitAttr)
    last_size = opt_prop_def(I64Attr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `axes` custom<IntList>($axes) (`inverse` $inverse^)? (`real` $real^)? "
        "(`last_size` $last_size^)? attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (IntList,)

    def verify_(self) -> None:
        axes = normalize_axes(ints(self.axes), rank_of(self.input))
        if not axes:
            raise VerifyException("axes must name at least one axis")
        real, inverse = self.real is not None, self.inverse is not None
        if (self.last_size is not None) != (real and inverse):
            raise VerifyException("last_size is given exactly for a real inverse (irfftn)")
        input_kind = "float" if real and not inverse else "complex"
        result_kind = "float" if real and inverse else "complex"
        verify_fourier_types(self.input, input_kind, self.result, result_kind)
        expected = list(shape_of(self.input))
        last = expected[axes[-1]]
        if real and not inverse and last != DYNAMIC:
            expected[axes[-1]] = last // 2 + 1
        elif self.last_size is not None:
            size = self.last_size.value.data
            if last != DYNAMIC and last != size // 2 + 1:
                raise VerifyException(
                    f"the input's last axis must be last_size / 2 + 1 = {size // 2 + 1}, got {last}"
                )
            expected[axes[-1]] = size
        if rank_of(self.result) != len(expected):
            raise VerifyException("result must have the input's rank")
        verify_shape_matches(expected, self.result)


# ---------------------------------------------------------------------------
# Collectives (`mx.distributed`, over the world group)
# ---------------------------------------------------------------------------
# Every rank runs the same program; a collective is one step all ranks take together.
# None is `Pure`: removing or merging one on some ranks and not others would leave
# the others waiting. There is no group operand: the world group is the only one the
# ring backend forms (`Group.split` is unsupported there, docs/distributed.md). At
# group size 1 each is the identity (an all_gather's result type names its group size,
# `ranks`, which must then be 1), so a program with collectives runs as one process.


@irdl_op_definition
class AllSumOp(MlxirOp):
    """`mx.distributed.all_sum`: the elementwise sum of `input` over every rank."""

    name = "mlx.all_sum"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        if self.result.type != self.input.type:
            raise VerifyException(
                f"result type {self.result.type} must be the input's {self.input.type}"
            )


@irdl_op_definition
class AllGatherOp(MlxirOp):
    """Every rank's `input` concatenated along `axis`, in rank order, over a group of
    `ranks` ranks (`mx.distributed.all_gather` concatenates along axis 0; the kernel
    moves the axis)."""

    name = "mlx.all_gather"
    input = operand_def(TensorType)
    axis = prop_def(I64Attr)
    ranks = prop_def(I64Attr)
    result = result_def(TensorType)
    assembly_format = (
        "$input `axis` $axis `ranks` $ranks attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        ranks = self.ranks.value.data
        if ranks < 1:
            raise VerifyException(f"ranks must be at least 1, got {ranks}")
        x = shape_of(self.input)
        axis = _axis(self.axis.value.data, len(x))
        expected = list(x)
        if x[axis] != DYNAMIC:
            expected[axis] = x[axis] * ranks
        verify_shape_matches(expected, self.result)
        _verify_result_dtype(self.input, self.result)


class PeerOp(MlxirOp):
    """A point-to-point step with rank `peer`."""

    input = operand_def(TensorType)
    peer = prop_def(I64Attr)
    result = result_def(TensorType)
    assembly_format = "$input `peer` $peer attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        if self.peer.value.data < 0:
            raise VerifyException(f"peer must be a rank (>= 0), got {self.peer.value.data}")
        if self.result.type != self.input.type:
            raise VerifyException(
                f"result type {self.result.type} must be the input's {self.input.type}"
            )


@irdl_op_definition
class SendOp(PeerOp):
    """`mx.distributed.send(input, peer)`; the result is `input`, for ordering."""

    name = "mlx.send"


@irdl_op_definition
class RecvOp(PeerOp):
    """`mx.distributed.recv_like(input, peer)`: an array shaped and typed like `input`,
    received from `peer` (at group size 1, `input` itself)."""

    name = "mlx.recv"


MLX_OPS: list[type[IRDLOperation]] = [
    FftnOp,
    LinalgInvOp,
    LinalgDetOp,
    LinalgSlogdetOp,
    LinalgSolveOp,
    LinalgSolveTriangularOp,
    LinalgCholeskyInvOp,
    LinalgCholeskyOp,
    LinalgLuFactorOp,
    LinalgQrOp,
    LinalgSvdOp,
    LinalgSvdvalsOp,
    LinalgEighOp,
    LinalgEigvalshOp,
    *UNARY_OP_CLASSES.values(),
    *BINARY_OP_CLASSES.values(),
    *REDUCTION_OP_CLASSES.values(),
    AstypeOp,
    ViewOp,
    WhereOp,
    TakeOp,
    NonzeroOp,
    UniqueOp,
    RepeatInterleaveOp,
    ItemOp,
    TakeAlongAxisOp,
    GatherOp,
    ScatterOp,
    SliceUpdateOp,
    DynamicSliceUpdateOp,
    ReshapeOp,
    BroadcastToOp,
    TransposeOp,
    ExpandDimsOp,
    SqueezeOp,
    ConcatenateOp,
    SplitOp,
    SliceOp,
    PadOp,
    TileOp,
    MatmulOp,
    AddmmOp,
    QuantizedMatmulOp,
    DequantizeOp,
    QuantizedTakeOp,
    ConvGeneralOp,
    ConvBiasActivationOp,
    ScaledDotProductAttentionOp,
    RmsNormOp,
    LayerNormOp,
    RopeOp,
    VarOp,
    StdOp,
    ArgmaxOp,
    ArgminOp,
    SortOp,
    ArgsortOp,
    CumsumOp,
    CumprodOp,
    LogcumsumexpOp,
    CummaxOp,
    CumminOp,
    SoftmaxOp,
    FullOp,
    ZerosOp,
    OnesOp,
    RandomUniformOp,
    RandomNormalOp,
    ArangeOp,
    TrilOp,
    TriuOp,
    DiagonalOp,
    ConstantOp,
    DimOp,
    FromIndexOp,
    GlobalOp,
    WeightOp,
    LoadStateOp,
    StoreStateOp,
    AllSumOp,
    AllGatherOp,
    SendOp,
    RecvOp,
]

MLX = Dialect("mlx", [*MLX_OPS], [])
