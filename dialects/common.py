"""Shared pieces of the `aten` and `mlx` dialects.

Type constraints, the shape and dtype rules that verifiers share, and the custom
assembly directives for integer lists. A verifier rule written here is written
once and named once, so its diagnostic reads the same in every op that uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn, cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import DynamicIndexList
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from mlxir.support import xdsl_fixes

xdsl_fixes.apply()

DYNAMIC = DYNAMIC_INDEX
"""Marks an entry of a static list whose value is the next `index` operand."""

TensorConstr = base(TensorType)

ScalarConstr = base(IntegerType) | base(IndexType) | base(Float64Type)
"""A Python/ATen `Scalar`: `f64` (float), `i64` (int), `i1` (bool) or `index` (SymInt)."""

TensorOrScalarConstr = base(TensorType) | ScalarConstr


class MlxirOp(IRDLOperation):
    """Base of every `aten` and `mlx` op: verifier messages name the op, MLIR-style
    (`'aten.exp' op result shape [3] does not match operand shape [2]`)."""

    def emit_error(self, message: str, underlying_error: Exception) -> NoReturn:
        prefix = f"'{self.name}' op "
        if isinstance(underlying_error, VerifyException) and not str(
            underlying_error
        ).startswith(prefix):
            underlying_error = VerifyException(prefix + str(underlying_error))
        super().emit_error(message, underlying_error)


# ---------------------------------------------------------------------------
# Accessors
# ---------------------------------------------------------------------------


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    """The tensor type of `value`; callers have already constrained it."""
    value_type = value.type
    # isinstance, not xdsl's isa(TensorType[Attribute]): that costs ~25 us a call
    assert isinstance(value_type, TensorType)
    return cast(TensorType[Attribute], value_type)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tensor_type(value).get_shape()


def rank_of(value: SSAValue) -> int:
    return len(shape_of(value))


def dtype_of(value: SSAValue) -> Attribute:
    value_type = value.type
    if isinstance(value_type, TensorType):
        return cast(TensorType[Attribute], value_type).get_element_type()
    return value_type


def ints(attr: DenseArrayBase | None) -> tuple[int, ...]:
    if attr is None:
        return ()
    return tuple(int(v) for v in cast(DenseArrayBase[IntegerType], attr).get_values())


def int_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def format_dims(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------
# Dtype categories
# ---------------------------------------------------------------------------


def is_float(dtype: Attribute) -> bool:
    return isinstance(dtype, AnyFloat)


def is_complex(dtype: Attribute) -> bool:
    return isinstance(dtype, ComplexType)


def is_bool(dtype: Attribute) -> bool:
    return isinstance(dtype, IntegerType) and cast(IntegerType, dtype).width.data == 1


def is_integer(dtype: Attribute) -> bool:
    """Integers proper: not bool, not index."""
    return isinstance(dtype, IntegerType) and cast(IntegerType, dtype).width.data > 1


def is_integer_or_bool(dtype: Attribute) -> bool:
    return isinstance(dtype, IntegerType)


# ---------------------------------------------------------------------------
# Verifier rules
# ---------------------------------------------------------------------------


def dims_compatible(a: int, b: int) -> bool:
    return a == DYNAMIC or b == DYNAMIC or a == b


def normalize_axis(axis: int, rank: int, what: str = "dim") -> int:
    """Wraps a negative axis; raises when it lies outside `[-rank, rank)`.

    As in ATen, a 0-d tensor counts as rank 1 here: its `dim` may be 0 or -1 (both
    give 0). Ops that index a dim of their input also check its rank."""
    bound = max(rank, 1)
    if not -bound <= axis < bound:
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis + bound if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int, what: str = "dim") -> list[int]:
    normalized = [normalize_axis(a, rank, what) for a in axes]
    if len(set(normalized)) != len(normalized):
        plural = "axes" if what == "axis" else f"{what}s"
        raise VerifyException(f"{plural} {list(axes)} repeat an axis")
    return normalized


def verify_permutation(perm: Sequence[int], rank: int, what: str = "permutation") -> None:
    if sorted(perm) != list(range(rank)):
        raise VerifyException(
            f"{what} {list(perm)} is not a permutation of [0, {rank})"
        )


def verify_min_rank(value: SSAValue, minimum: int, what: str = "input") -> None:
    rank = rank_of(value)
    if rank < minimum:
        raise VerifyException(f"{what} must have rank >= {minimum}, got {rank}")


def verify_same_shape(
    operand: SSAValue, result: SSAValue, what: str = "result"
) -> None:
    a, b = shape_of(operand), shape_of(result)
    if len(a) != len(b) or not all(dims_compatible(x, y) for x, y in zip(a, b)):
        raise VerifyException(
            f"{what} shape {format_dims(b)} does not match operand shape {format_dims(a)}"
        )


def verify_square_matrices(value: SSAValue, what: str = "input") -> tuple[int, ...]:
    """A stack of square float matrices `[..., n, n]`; returns the batch dims."""
    shape = shape_of(value)
    if len(shape) < 2 or not dims_compatible(shape[-1], shape[-2]):
        raise VerifyException(f"{what} must be square matrices [..., n, n], got {format_dims(shape)}")
    verify_dtype(value, "float", what)
    return shape[:-2]


def verify_per_matrix(matrices: SSAValue, result: SSAValue, what: str = "result") -> None:
    """`result` holds one value per matrix of `matrices`: the batch dims, and its dtype."""
    batch, got = verify_square_matrices(matrices), shape_of(result)
    if len(got) != len(batch) or not all(dims_compatible(a, b) for a, b in zip(batch, got)):
        raise VerifyException(f"{what} shape {format_dims(got)} must be the batch dims {format_dims(batch)}")
    if dtype_of(result) != dtype_of(matrices):
        raise VerifyException(f"{what} element type {dtype_of(result)} must be the input's {dtype_of(matrices)}")


def verify_matrices(value: SSAValue, what: str = "input") -> tuple[list[int], int, int, int]:
    """A stack of float matrices `[..., m, n]`; returns the batch dims, m, n and
    k = min(m, n) (`?` where m or n is)."""
    shape = shape_of(value)
    if len(shape) < 2:
        raise VerifyException(f"{what} must be matrices [..., m, n], got {format_dims(shape)}")
    verify_dtype(value, "float", what)
    *batch, m, n = shape
    return batch, m, n, DYNAMIC if DYNAMIC in (m, n) else min(m, n)


def verify_qr(matrices: SSAValue, q: SSAValue, r: SSAValue, complete: bool = False) -> None:
    """Q `[..., m, k]` and R `[..., k, n]` of matrices `[..., m, n]`, k = min(m, n), or
    k = m for the `complete` factorization."""
    batch, m, n, k = verify_matrices(matrices)
    k = m if complete else k
    verify_shape_matches([*batch, m, k], q, "Q")
    verify_shape_matches([*batch, k, n], r, "R")
    verify_same_dtype([matrices, q, r], "input, Q and R")


def verify_lu(matrices: SSAValue, lu: SSAValue, pivots: SSAValue) -> list[int]:
    """The LU factors of matrices `[..., m, n]` packed in one matrix of their shape and
    type, and pivots `[..., k]`, k = min(m, n); the batch dims."""
    batch, _, _, k = verify_matrices(matrices)
    verify_same_shape(matrices, lu, "LU")
    verify_same_dtype([matrices, lu], "input and LU")
    verify_shape_matches([*batch, k], pivots, "pivots")
    return batch


def verify_fourier_types(input: SSAValue, input_kind: str, result: SSAValue, result_kind: str) -> None:
    """A Fourier transform's element types: each "complex" (complex<f32>) or "float",
    which must be f32, the parts of complex<f32> (MLX transforms in float32)."""
    for value, kind, what in ((input, input_kind, "input"), (result, result_kind, "result")):
        verify_dtype(value, kind, what)
        if kind == "float" and dtype_of(value) != Float32Type():
            raise VerifyException(f"{what} must be f32, the parts of complex<f32>, got {dtype_of(value)}")


def verify_singular_values(matrices: SSAValue, values: SSAValue, what: str = "singular values") -> None:
    """`values` `[..., k]`, k = min(m, n), of matrices `[..., m, n]`, in their type (for
    square matrices, as eigenvalues are, k = n)."""
    batch, _, _, k = verify_matrices(matrices)
    verify_shape_matches([*batch, k], values, what)
    verify_same_dtype([matrices, values], f"input and {what}")


def broadcast_shapes(shapes: Sequence[Sequence[int]]) -> list[int]:
    """Statically broadcasts NumPy-style; `?` stays `?` unless another dim fixes it."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        static = {d for d in dims if d not in (1, DYNAMIC)}
        if len(static) > 1:
            raise VerifyException(
                "operand shapes "
                + ", ".join(format_dims(s) for s in shapes)
                + " are not broadcastable"
            )
        if static:
            out.append(static.pop())
        elif DYNAMIC in dims:
            out.append(DYNAMIC)
        else:
            out.append(1)
    return out


def verify_nonzero(input: SSAValue, result: SSAValue) -> None:
    """`nonzero`'s result: int64 `[count, rank of the input]` (the count depends on the
    input's values, so it is dynamic unless the input is empty)."""
    shape = shape_of(result)
    if len(shape) != 2:
        raise VerifyException(f"result must be rank 2 [count, {rank_of(input)}], got rank {len(shape)}")
    if shape[1] != rank_of(input):
        raise VerifyException(
            f"result's second dim must be the input's rank {rank_of(input)}, got {shape[1]}"
        )
    if dtype_of(result) != i64:
        raise VerifyException(f"result must have i64 element type, got {dtype_of(result)}")


class UniqueOpBase(MlxirOp):
    """The operands, results, syntax and rules of `aten.unique` and `mlx.unique`."""

    input = operand_def(TensorType)
    consecutive = opt_prop_def(UnitAttr)
    return_inverse = opt_prop_def(UnitAttr)
    return_counts = opt_prop_def(UnitAttr)
    output = result_def(TensorType)
    inverse = result_def(TensorType)
    counts = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input (`consecutive` $consecutive^)? (`return_inverse` $return_inverse^)? "
        "(`return_counts` $return_counts^)? attr-dict `:` type($input) `->` type($output) `,` "
        "type($inverse) `,` type($counts)"
    )

    def verify_(self) -> None:
        """`output` rank 1 of the input's element type; `inverse` i64 of the input's
        shape and `counts` i64 of `output`'s length, each `[0]` when not asked for
        (as ATen returns them)."""
        if rank_of(self.output) != 1 or dtype_of(self.output) != dtype_of(self.input):
            raise VerifyException(
                f"output must be rank 1 of the input's element type {dtype_of(self.input)}, got "
                f"{format_dims(shape_of(self.output))} of {dtype_of(self.output)}"
            )
        has_inverse, has_counts = self.return_inverse is not None, self.return_counts is not None
        verify_shape_matches(shape_of(self.input) if has_inverse else [0], self.inverse, "inverse")
        verify_shape_matches([shape_of(self.output)[0]] if has_counts else [0], self.counts, "counts")
        for value, what in ((self.inverse, "inverse"), (self.counts, "counts")):
            if dtype_of(value) != i64:
                raise VerifyException(f"{what} must have i64 element type, got {dtype_of(value)}")


class RepeatInterleaveOpBase(MlxirOp):
    """The operand, result, syntax and rules of `aten.repeat_interleave` and
    `mlx.repeat_interleave`."""

    repeats = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$repeats attr-dict `:` type($repeats) `->` type($result)"

    def verify_(self) -> None:
        """Rank-1 integer `repeats`, a rank-1 result of its element type (its length,
        the sum of `repeats`, depends on values)."""
        if rank_of(self.repeats) != 1:
            raise VerifyException(f"repeats must be rank 1, got rank {rank_of(self.repeats)}")
        verify_dtype(self.repeats, "integer (not bool)", "repeats")
        if rank_of(self.result) != 1 or dtype_of(self.result) != dtype_of(self.repeats):
            raise VerifyException(
                f"result must be rank 1 of the repeats' element type {dtype_of(self.repeats)}, got "
                f"{format_dims(shape_of(self.result))} of {dtype_of(self.result)}"
            )


class ItemOpBase(MlxirOp):
    """The operand, result, syntax and rules of `aten.item` and `mlx.item`."""

    input = operand_def(TensorType)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[IndexType()])

    def verify_(self) -> None:
        """One element (every static dim 1) of an integer or bool tensor (a float's
        `.item()` stays a 0-d tensor and needs no op)."""
        verify_dtype(self.input, "integer or bool", "input")
        if any(d not in (1, DYNAMIC) for d in shape_of(self.input)):
            raise VerifyException(f"input must hold one element, got shape {format_dims(shape_of(self.input))}")


def verify_broadcast_result(
    operand_shapes: Sequence[Sequence[int]], result: SSAValue
) -> None:
    expected = broadcast_shapes(operand_shapes)
    got = shape_of(result)
    if len(got) != len(expected) or not all(
        dims_compatible(e, g) or (e == 1 and g == DYNAMIC)
        for e, g in zip(expected, got)
    ):
        raise VerifyException(
            f"result shape {format_dims(got)} is not the broadcast shape "
            f"{format_dims(expected)} of the operands"
        )


def verify_shape_matches(
    expected: Sequence[int], value: SSAValue, what: str = "result"
) -> None:
    got = shape_of(value)
    if len(got) != len(expected) or not all(
        dims_compatible(e, g) for e, g in zip(expected, got)
    ):
        raise VerifyException(
            f"{what} shape {format_dims(got)} does not match the expected shape "
            f"{format_dims(expected)}"
        )


def diagonal_shape(shape: Sequence[int], offset: int, axis1: int, axis2: int) -> list[int]:
    """`shape` without `axis1` and `axis2`, then the length of diagonal `offset` of the
    planes they span (0 when the offset lies outside the plane)."""
    rest = [d for i, d in enumerate(shape) if i not in (axis1, axis2)]
    rows, cols = shape[axis1], shape[axis2]
    if DYNAMIC in (rows, cols):
        return [*rest, DYNAMIC]
    return [*rest, max(0, min(rows + min(offset, 0), cols - max(offset, 0)))]


def verify_diagonal(input: SSAValue, result: SSAValue, offset: int, axes: Sequence[int]) -> None:
    verify_min_rank(input, 2)
    axis1, axis2 = normalize_axes(axes, rank_of(input))
    verify_shape_matches(diagonal_shape(shape_of(input), offset, axis1, axis2), result)
    if dtype_of(input) != dtype_of(result):
        raise VerifyException("result element type must equal the input's")


def verify_same_dtype(values: Sequence[SSAValue], what: str = "operands") -> None:
    dtypes = {dtype_of(v) for v in values}
    if len(dtypes) > 1:
        raise VerifyException(
            f"{what} must share one element type, got "
            + ", ".join(str(dtype_of(v)) for v in values)
        )


def verify_dtype(value: SSAValue, predicate_name: str, what: str) -> None:
    dtype = dtype_of(value)
    if not DTYPE_PREDICATES[predicate_name](dtype):
        raise VerifyException(f"{what} must have {predicate_name} element type, got {dtype}")


DTYPE_PREDICATES = {
    "float": is_float,
    "complex": is_complex,
    "bool": is_bool,
    "integer": is_integer,
    "integer or bool": is_integer_or_bool,
    "integer (not bool)": is_integer,
}


def verify_reduced_shape(
    input_shape: Sequence[int],
    axes: Sequence[int],
    keepdim: bool,
    result: SSAValue,
) -> None:
    expected = [
        (1 if keepdim else None) if i in axes else d for i, d in enumerate(input_shape)
    ]
    verify_shape_matches([d for d in expected if d is not None], result)


def verify_size_list(
    static_sizes: Sequence[int],
    dynamic_count: int,
    result_shape: Sequence[int],
    what: str = "size",
    allow_infer: bool = False,
    unique_infer: bool = True,
) -> None:
    """A mixed static/dynamic size list against the result shape it produces.

    With `allow_infer`, an entry may be -1: the one inferred size of a reshape, or
    (`unique_infer=False`) any number of kept dims of an expand."""
    markers = sum(1 for s in static_sizes if s == DYNAMIC)
    if markers != dynamic_count:
        raise VerifyException(
            f"{what} list has {markers} dynamic entries but {dynamic_count} index operands"
        )
    if len(static_sizes) != len(result_shape):
        raise VerifyException(
            f"{what} list has {len(static_sizes)} entries but the result has rank "
            f"{len(result_shape)}"
        )
    inferred = 0
    for i, (s, d) in enumerate(zip(static_sizes, result_shape)):
        if s == DYNAMIC:
            continue
        if s == -1 and allow_infer:
            inferred += 1
            continue
        if s < 0:
            raise VerifyException(f"{what} {s} at position {i} is negative")
        if d != DYNAMIC and s != d:
            raise VerifyException(
                f"{what} {s} at position {i} does not match result dim {d}"
            )
        if d == DYNAMIC:
            raise VerifyException(
                f"result dim {i} is dynamic but its {what} is the literal {s}"
            )
    if unique_infer and inferred > 1:
        raise VerifyException(f"at most one {what} may be -1 (inferred)")


def verify_element_count(a: Sequence[int], b: Sequence[int], what: str) -> None:
    if DYNAMIC in a or DYNAMIC in b:
        return
    na, nb = 1, 1
    for d in a:
        na *= d
    for d in b:
        nb *= d
    if na != nb:
        raise VerifyException(
            f"{what} changes the element count from {na} {format_dims(a)} to {nb} "
            f"{format_dims(b)}"
        )


# ---------------------------------------------------------------------------
# Custom assembly directives
# ---------------------------------------------------------------------------


I64_BOUND = 2**63


def parse_i64(parser: Parser) -> int:
    """An integer literal of an `i64` list. `-2^63` is excluded: it is the dynamic
    marker, so a literal must not spell it."""
    start = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    if not -I64_BOUND < value < I64_BOUND:
        parser.raise_error(f"integer {value} is outside (-2^63, 2^63)", start)
    return value


@irdl_custom_directive
class IntList(CustomDirective):
    """A static integer list printed as `[1, 0, 2]` (stored as `array<i64: ...>`)."""

    values: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        values = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: parse_i64(parser)
        )
        self.values.set(state, int_array(values))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.values.get(op)
        assert isa(attr, DenseArrayBase)
        printer.print_string("[" + ", ".join(str(v) for v in ints(attr)) + "]")

    def set_empty(self, state: ParsingState) -> None:
        self.values.set(state, None)  # pyright: ignore[reportArgumentType] (xDSL: None = absent)

    def is_present(self, op: IRDLOperation) -> bool:
        return self.values.get(op) is not None

    def is_anchorable(self) -> bool:
        return True


@irdl_custom_directive
class StringLiteral(CustomDirective):
    """A string property printed as a quoted literal: `approximate "tanh"`.

    A plain `$attr` of builtin `StringAttr` parses as an optional attribute, so in
    `(`kw` $attr^)?` the keyword alone was accepted and the property dropped; here
    the literal is required once its keyword is there."""

    value: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.value.set(state, StringAttr(parser.parse_str_literal()))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.value.get(op)
        assert isinstance(attr, StringAttr)
        printer.print_string_literal(attr.data)

    def is_present(self, op: IRDLOperation) -> bool:
        return self.value.get(op) is not None

    def is_anchorable(self) -> bool:
        return True


@irdl_custom_directive
class MixedIntList(DynamicIndexList):
    """`custom<DynamicIndexList>` (`[2, %n, -1]`) whose literals are checked like
    `IntList`'s: an out-of-range literal is a parse error at its position, not a
    failure without location, and no literal can turn into a dynamic entry."""

    dynamic_position: VariadicOperandVariable
    static_position: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        dynamic: list[UnresolvedOperand] = []
        static: list[int] = []

        def parse_entry() -> None:
            operand = parser.parse_optional_unresolved_operand()
            if operand is None:
                static.append(parse_i64(parser))
            else:
                static.append(DYNAMIC)
                dynamic.append(operand)

        parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parse_entry)
        self.dynamic_position.set(state, dynamic)
        self.static_position.set(state, int_array(static))


def index_operands(values: Sequence[SSAValue | int]) -> tuple[list[int], list[SSAValue]]:
    """Splits a mixed size list into its static part (with markers) and `index` operands."""
    static = [v if isinstance(v, int) else DYNAMIC for v in values]
    dynamic = [v for v in values if isinstance(v, SSAValue)]
    return static, dynamic


def mixed_values(
    static: Sequence[int], dynamic: Sequence[SSAValue]
) -> list[SSAValue | int]:
    it = iter(dynamic)
    return [next(it) if s == DYNAMIC else s for s in static]


INDEX = IndexType()
