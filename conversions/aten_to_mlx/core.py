"""Lowering from the `aten` dialect to the `mlx` dialect: pass `convert-aten-to-mlx`.

One rewrite pattern per aten op (the elementwise and reduction families are
instantiated from their tables). ATen's implicit type promotion becomes explicit
`mlx.astype`s here; Scalars become 0-d `mlx.constant`s (or `mlx.from_index` for
symbolic ones); ATen's `-1` sizes and open slice ends become runtime sizes from
`mlx.dim`, never the export-time values. Every new op carries the location of the
aten op it replaces. If an aten op survives, the pass fails listing each leftover
with its location.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

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
    mixed_values,
    normalize_axes,
    normalize_axis,
    rank_of,
    shape_of,
)

Size = SSAValue | int
"""A dimension size: a literal or a runtime `index` value."""


class LoweringError(Exception):
    """An aten op whose operands this lowering cannot handle (e.g. a bool-mask index)."""


# ---------------------------------------------------------------------------
# Dtypes and promotion
# ---------------------------------------------------------------------------

_TORCH_DTYPES: dict[Attribute, torch.dtype] = {
    Float32Type(): torch.float32,
    Float16Type(): torch.float16,
    BFloat16Type(): torch.bfloat16,
    Float64Type(): torch.float64,
    i1: torch.bool,
    IntegerType(8): torch.int8,
    IntegerType(16): torch.int16,
    IntegerType(32): torch.int32,
    i64: torch.int64,
    IntegerType(8, Signedness.UNSIGNED): torch.uint8,
}
_ELEMENT_TYPES = {v: k for k, v in _TORCH_DTYPES.items()}


def _category(dtype: Attribute) -> int:
    return 2 if is_float(dtype) else 0 if is_bool(dtype) else 1


def promoted_dtype(values: Sequence[SSAValue]) -> Attribute:
    """`torch.result_type` over tensors and Scalars: dimensioned tensors, then 0-d
    tensors, then Scalars, each group counting only when its category is higher."""
    groups: list[list[torch.dtype]] = [[], [], []]
    for value in values:
        value_type = value.type
        if isinstance(value_type, TensorType):
            groups[0 if value_type.get_shape() else 1].append(_TORCH_DTYPES[dtype_of(value)])
        elif isinstance(value_type, Float64Type):
            groups[2].append(torch.get_default_dtype())
        elif value_type == i1:
            groups[2].append(torch.bool)
        else:
            groups[2].append(torch.int64)
    result: torch.dtype | None = None
    for group in groups:
        if not group:
            continue
        candidate = group[0]
        for dtype in group[1:]:
            candidate = torch.promote_types(candidate, dtype)
        if result is None or _category(_ELEMENT_TYPES[candidate]) > _category(
            _ELEMENT_TYPES[result]
        ):
            result = candidate
    assert result is not None
    return _ELEMENT_TYPES[result]


def _with_dtype(tensor: Attribute, dtype: Attribute) -> TensorType[Attribute]:
    assert isinstance(tensor, TensorType)
    return TensorType(dtype, tensor.get_shape())


def _tensor(dtype: Attribute, shape: Sequence[int]) -> TensorType[Attribute]:
    return TensorType(dtype, list(shape))


# ---------------------------------------------------------------------------
# The emitter: builds the replacement ops of one aten op
# ---------------------------------------------------------------------------


@dataclass
class Emitter:
    """Collects the ops that replace one aten op, stamping each with its location."""

    location: Attribute
    ops: list[Operation] = field(default_factory=list)

    def emit(self, op: Operation) -> SSAValue:
        if isinstance(self.location, FileLineColLoc):
            op.location = self.location
        self.ops.append(op)
        return op.results[0] if op.results else SSAValue.get(op)

    def emit_all(self, op: Operation) -> list[SSAValue]:
        self.emit(op)
        return list(op.results)

    # --- constants and scalars -------------------------------------------------

    def constant(self, value: float | int | bool, dtype: Attribute) -> SSAValue:
        """A 0-d tensor constant of `dtype`."""
        tensor_type: Any = _tensor(dtype, [])
        if is_float(dtype):
            attr = DenseIntOrFPElementsAttr.from_list(tensor_type, [float(value)])
        else:
            attr = DenseIntOrFPElementsAttr.from_list(tensor_type, [int(value)])
        return self.emit(mlx.ConstantOp(attr))

    def index_constant(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def as_tensor(self, value: SSAValue, dtype: Attribute) -> SSAValue:
        """A tensor operand cast to `dtype`, or a Scalar as a 0-d tensor of `dtype`."""
        if isinstance(value.type, TensorType):
            return self.astype(value, dtype)
        literal = _scalar_literal(value)
        if literal is not None:
            return self.constant(literal, dtype)
        if isinstance(value.type, IndexType):
            as_i64 = self.emit(mlx.FromIndexOp.build(operands=[value], result_types=[_tensor(i64, [])]))
            return self.astype(as_i64, dtype)
        raise LoweringError(f"a {value.type} Scalar that is not a constant cannot be lowered")

    def astype(self, value: SSAValue, dtype: Attribute) -> SSAValue:
        if dtype_of(value) == dtype:
            return value
        return self.emit(mlx.AstypeOp(value, _with_dtype(value.type, dtype)))

    # --- sizes ---------------------------------------------------------------

    def dim(self, value: SSAValue, axis: int) -> Size:
        """The size of `axis`: a literal when static, else `mlx.dim`."""
        size = shape_of(value)[axis]
        if size != DYNAMIC:
            return size
        return self.emit(mlx.DimOp(value, axis))

    def dims(self, value: SSAValue) -> list[Size]:
        return [self.dim(value, i) for i in range(rank_of(value))]

    def index(self, size: Size) -> SSAValue:
        return self.index_constant(size) if isinstance(size, int) else size

    def mul(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1:
            return b
        if b == 1:
            return a
        return self.emit(arith.MuliOp(self.index(a), self.index(b)))

    def add(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if b == 0:
            return a
        return self.emit(arith.AddiOp(self.index(a), self.index(b)))

    def floordiv(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        return self.emit(arith.FloorDivSIOp(self.index(a), self.index(b)))

    # --- ops -----------------------------------------------------------------

    def unary(self, name: str, value: SSAValue, result_type: Attribute | None = None) -> SSAValue:
        op_cls: Any = mlx.UNARY_OP_CLASSES[name]
        return self.emit(op_cls(value, result_type or value.type))

    def binary(self, name: str, lhs: SSAValue, rhs: SSAValue, result_dtype: Attribute | None = None) -> SSAValue:
        shape = broadcast_shapes([shape_of(lhs), shape_of(rhs)])
        kind = mlx.BINARY_OPS[name]
        dtype = (
            i1
            if kind in (mlx.ElementwiseKind.COMPARE, mlx.ElementwiseKind.LOGICAL)
            else (result_dtype or dtype_of(lhs))
        )
        op_cls: Any = mlx.BINARY_OP_CLASSES[name]
        return self.emit(op_cls(lhs, rhs, _tensor(dtype, shape)))

    def reshape(self, value: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
        if list(static) == list(shape_of(value)) and DYNAMIC not in static:
            return value
        return self.emit(mlx.ReshapeOp(value, sizes, _tensor(dtype_of(value), static)))

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return value
        shape = shape_of(value)
        return self.emit(
            mlx.TransposeOp(value, perm, _tensor(dtype_of(value), [shape[p] for p in perm]))
        )

    def expand_dims(self, value: SSAValue, axes: Sequence[int]) -> SSAValue:
        shape = list(shape_of(value))
        out_rank = len(shape) + len(axes)
        norm = sorted(a + out_rank if a < 0 else a for a in axes)
        for a in norm:
            shape.insert(a, 1)
        return self.emit(
            mlx.ExpandDimsOp.build(
                operands=[value],
                result_types=[_tensor(dtype_of(value), shape)],
                properties={"axes": int_array(norm)},
            )
        )

    def squeeze(self, value: SSAValue, axes: Sequence[int]) -> SSAValue:
        if not axes:
            return value
        shape = [d for i, d in enumerate(shape_of(value)) if i not in axes]
        return self.emit(
            mlx.SqueezeOp.build(
                operands=[value],
                result_types=[_tensor(dtype_of(value), shape)],
                properties={"axes": int_array(sorted(axes))},
            )
        )

    def broadcast_to(self, value: SSAValue, sizes: Sequence[Size], dtype: Attribute | None = None) -> SSAValue:
        static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
        if list(static) == list(shape_of(value)) and DYNAMIC not in static:
            return value
        return self.emit(
            mlx.BroadcastToOp(value, sizes, _tensor(dtype or dtype_of(value), static))
        )

    def slice(
        self,
        value: SSAValue,
        starts: Sequence[Size],
        stops: Sequence[Size],
        steps: Sequence[int],
        result_shape: Sequence[int],
    ) -> SSAValue:
        start_static, start_dynamic = index_operands(starts)
        stop_static, stop_dynamic = index_operands(stops)
        return self.emit(
            mlx.SliceOp.build(
                operands=[value, start_dynamic, stop_dynamic],
                result_types=[_tensor(dtype_of(value), result_shape)],
                properties={
                    "static_start": int_array(start_static),
                    "static_stop": int_array(stop_static),
                    "strides": int_array(steps),
                },
            )
        )

    def reduce(
        self, name: str, value: SSAValue, axes: Sequence[int], keepdims: bool, dtype: Attribute
    ) -> SSAValue:
        shape = [
            (1 if keepdims else None) if i in axes else d for i, d in enumerate(shape_of(value))
        ]
        return self.emit(
            mlx.REDUCTION_OP_CLASSES[name].build(
                operands=[value],
                result_types=[_tensor(dtype, [d for d in shape if d is not None])],
                properties={
                    "axes": int_array(axes),
                    **({"keepdims": UnitAttr()} if keepdims else {}),
                },
            )
        )

    def concatenate(self, parts: Sequence[SSAValue], axis: int, result_type: Attribute) -> SSAValue:
        if len(parts) == 1:
            return parts[0]
        return self.emit(
            mlx.ConcatenateOp.build(
                operands=[list(parts)],
                result_types=[result_type],
                properties={"axis": IntegerAttr(axis, i64)},
            )
        )

    def where(self, condition: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        shape = broadcast_shapes([shape_of(condition), shape_of(x), shape_of(y)])
        return self.emit(
            mlx.WhereOp.build(
                operands=[condition, x, y], result_types=[_tensor(dtype_of(x), shape)]
            )
        )


def _scalar_literal(value: SSAValue) -> float | int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
        if isinstance(attr, FloatAttr):
            return attr.value.data
    return None


def _sizes(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Size]:
    return mixed_values(static, dynamic)


# ---------------------------------------------------------------------------
# Pattern base
# ---------------------------------------------------------------------------


class AtenLowering(RewritePattern):
    """Base of the lowering patterns: `lower` returns the replacement values."""

    def replace(
        self, op: Operation, rewriter: PatternRewriter, build: Callable[[Emitter], Sequence[SSAValue] | SSAValue]
    ) -> None:
        emitter = Emitter(op.location)
        results = build(emitter)
        if isinstance(results, SSAValue):
            results = [results]
        for old, new in zip(op.results, results, strict=True):
            if old.type != new.type:
                raise LoweringError(
                    f"lowering {op.name} produced {new.type}, expected {old.type}"
                )
        rewriter.replace(op, emitter.ops, list(results))


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------

UNARY_LOWERINGS: dict[str, str] = {
    "abs": "abs",
    "neg": "negative",
    "sign": "sign",
    "square": "square",
    "floor": "floor",
    "ceil": "ceil",
    "round": "round",
    "exp": "exp",
    "expm1": "expm1",
    "log": "log",
    "log1p": "log1p",
    "log2": "log2",
    "log10": "log10",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "sigmoid": "sigmoid",
    "erf": "erf",
    "erfinv": "erfinv",
    "reciprocal": "reciprocal",
    "isnan": "isnan",
    "isinf": "isinf",
}
"""aten unary op → the MLX op computing it in the result's dtype."""

BINARY_LOWERINGS: dict[str, str] = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "pow": "power",
    "maximum": "maximum",
    "minimum": "minimum",
    "remainder": "remainder",
    "floor_divide": "floor_divide",
    "atan2": "arctan2",
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}
"""aten binary op → MLX op; operands are first cast to the compute dtype."""


class LowerUnary(AtenLowering):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.UnaryElementwiseOp):
            return
        name = op.name.removeprefix("aten.")
        result_type = op.result.type
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            x = op.input
            match name:
                case "clone":
                    return x
                case "relu":
                    return e.binary("maximum", x, e.constant(0, dtype))
                case "silu":
                    return e.binary("multiply", x, e.unary("sigmoid", x))
                case "trunc":
                    if not is_float(dtype):
                        return x
                    negative = e.binary("less", x, e.constant(0, dtype))
                    return e.where(negative, e.unary("ceil", x), e.unary("floor", x))
                case "logical_not":
                    as_bool = _to_bool(e, x)
                    return e.unary("logical_not", as_bool)
                case "bitwise_not":
                    if is_bool(dtype):
                        return e.unary("logical_not", x)
                    return e.unary("bitwise_invert", x)
                case "isnan" | "isinf":
                    if not is_float(dtype_of(x)):
                        return e.binary("not_equal", x, x)  # never true for integers
                    return e.unary(name, x, result_type)
                case _:
                    return e.unary(UNARY_LOWERINGS[name], e.astype(x, dtype), result_type)

        self.replace(op, rewriter, build)


def _to_bool(e: Emitter, x: SSAValue) -> SSAValue:
    if is_bool(dtype_of(x)):
        return x
    return e.binary("not_equal", x, e.constant(0, dtype_of(x)))


class LowerBinary(AtenLowering):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.BinaryElementwiseOp):
            return
        name = op.name.removeprefix("aten.")
        dtype = dtype_of(op.result)
        compute = (
            promoted_dtype([op.input, op.other])
            if aten.BINARY_OPS[name] is aten.DtypeRule.BOOL
            else dtype
        )

        def build(e: Emitter) -> SSAValue:
            lhs = e.as_tensor(op.input, compute)
            rhs = e.as_tensor(op.other, compute)
            match name:
                case "add" | "sub":
                    alpha = op.properties.get("alpha")
                    if isinstance(alpha, FloatAttr) and alpha.value.data != 1.0:
                        rhs = e.binary("multiply", rhs, e.constant(alpha.value.data, compute))
                    return e.binary(BINARY_LOWERINGS[name], lhs, rhs)
                case "div":
                    return _lower_div(e, op, lhs, rhs, compute)
                case "fmod":
                    quotient = _trunc_divide(e, lhs, rhs, compute)
                    return e.binary("subtract", lhs, e.binary("multiply", quotient, rhs))
                case "logical_and" | "logical_or":
                    return e.binary(name, _to_bool(e, lhs), _to_bool(e, rhs))
                case "logical_xor":
                    return e.binary("not_equal", _to_bool(e, lhs), _to_bool(e, rhs))
                case _:
                    return e.binary(BINARY_LOWERINGS[name], lhs, rhs)

        self.replace(op, rewriter, build)


def _trunc_divide(e: Emitter, lhs: SSAValue, rhs: SSAValue, dtype: Attribute) -> SSAValue:
    """`a / b` rounded toward zero (C semantics), exact for integers."""
    if is_float(dtype):
        quotient = e.binary("divide", lhs, rhs)
        negative = e.binary("less", quotient, e.constant(0, dtype))
        return e.where(negative, e.unary("ceil", quotient), e.unary("floor", quotient))
    floor = e.binary("floor_divide", lhs, rhs)
    remainder = e.binary("remainder", lhs, rhs)
    inexact = e.binary("not_equal", remainder, e.constant(0, dtype))
    signs_differ = e.binary(
        "not_equal",
        e.binary("less", lhs, e.constant(0, dtype)),
        e.binary("less", rhs, e.constant(0, dtype)),
    )
    adjust = e.binary("logical_and", inexact, signs_differ)
    return e.where(adjust, e.binary("add", floor, e.constant(1, dtype)), floor)


def _lower_div(e: Emitter, op: Operation, lhs: SSAValue, rhs: SSAValue, dtype: Attribute) -> SSAValue:
    mode = op.properties.get("rounding_mode")
    if mode is None:
        return e.binary("divide", lhs, rhs)
    assert isinstance(mode, StringAttr)
    if mode.data == "floor":
        if is_float(dtype):
            return e.unary("floor", e.binary("divide", lhs, rhs))
        return e.binary("floor_divide", lhs, rhs)
    return _trunc_divide(e, lhs, rhs, dtype)


@dataclass
class LowerGelu(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GeluOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        tanh = op.approximate is not None and op.approximate.data == "tanh"

        def build(e: Emitter) -> SSAValue:
            x = op.input
            half_x = e.binary("multiply", x, e.constant(0.5, dtype))
            if tanh:
                cube = e.binary("multiply", e.unary("square", x), x)
                inner = e.binary("add", x, e.binary("multiply", cube, e.constant(0.044715, dtype)))
                scaled = e.binary("multiply", inner, e.constant(math.sqrt(2 / math.pi), dtype))
                core = e.unary("tanh", scaled)
            else:
                core = e.unary("erf", e.binary("multiply", x, e.constant(1 / math.sqrt(2), dtype)))
            return e.binary("multiply", half_x, e.binary("add", core, e.constant(1, dtype)))

        self.replace(op, rewriter, build)


class LowerWhere(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.WhereOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        self.replace(
            op,
            rewriter,
            lambda e: e.where(
                _to_bool(e, op.condition), e.as_tensor(op.input, dtype), e.as_tensor(op.other, dtype)
            ),
        )


class LowerClamp(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ClampOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            if op.min is not None:
                x = e.binary("maximum", x, e.as_tensor(op.min, dtype))
            if op.max is not None:
                x = e.binary("minimum", x, e.as_tensor(op.max, dtype))
            return e.broadcast_to(x, [*shape_of(op.result)]) if DYNAMIC not in shape_of(op.result) else x

        self.replace(op, rewriter, build)


class LowerToCopy(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ToCopyOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: e.astype(op.input, dtype_of(op.result)))


# ---------------------------------------------------------------------------
# Reductions, scans, softmax
# ---------------------------------------------------------------------------

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


class LowerReduction(AtenLowering):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.ReductionOp) or isinstance(op, aten.VarianceOp):
            return
        name = REDUCTION_LOWERINGS[op.name.removeprefix("aten.")]
        dtype = dtype_of(op.result)
        axes = op.reduced_axes()
        keep = op.keepdim is not None

        def build(e: Emitter) -> SSAValue:
            x = op.input
            x = _to_bool(e, x) if name in ("any", "all") else e.astype(x, dtype)
            return e.reduce(name, x, axes, keep, dtype)

        self.replace(op, rewriter, build)


class LowerVariance(AtenLowering):
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
                    result_types=[_tensor(dtype, [d for d in shape if d is not None])],
                    properties={
                        "axes": int_array(axes),
                        "ddof": IntegerAttr(int(correction), i64),
                        **({"keepdims": UnitAttr()} if keep else {}),
                    },
                )
            )

        self.replace(op, rewriter, build)


class LowerArgReduction(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ArgReductionOp, rewriter: PatternRewriter) -> None:
        op_cls = mlx.ArgmaxOp if op.name == "aten.argmax" else mlx.ArgminOp
        props = {k: v for k, v in (("axis", op.dim), ("keepdims", op.keepdim)) if v is not None}
        # MLX returns uint32 indices; the cast to ATen's int64 is explicit.
        u32 = IntegerType(32, Signedness.UNSIGNED)
        self.replace(
            op,
            rewriter,
            lambda e: e.astype(
                e.emit(
                    op_cls.build(
                        operands=[op.input],
                        result_types=[_with_dtype(op.result.type, u32)],
                        properties=props,
                    )
                ),
                dtype_of(op.result),
            ),
        )


# ---------------------------------------------------------------------------
# Sorting and selection: a stable argsort, then picks with take_along_axis
# ---------------------------------------------------------------------------

_U32 = IntegerType(32, Signedness.UNSIGNED)


def _sort_axis(op: Operation, input: SSAValue, dim: int) -> int:
    if rank_of(input) == 0:
        raise LoweringError(f"{op.name}: a 0-d input is not supported (sort a 1-element tensor)")
    return normalize_axis(dim, rank_of(input))


def _reverse(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    """`x` reversed along `axis` (`x[-1 : -(n+1) : -1]` works for any size n)."""
    return _full_range_slice(e, x, axis, -1, -_INT32_MAX, -1, shape_of(x))


def _argsort(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    return e.emit(
        mlx.ArgsortOp.build(
            operands=[x],
            result_types=[_with_dtype(x.type, _U32)],
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
    return e.emit(
        mlx.TakeAlongAxisOp.build(
            operands=[x, indices],
            result_types=[_tensor(dtype_of(x), shape_of(indices))],
            properties={"axis": IntegerAttr(axis, i64)},
        )
    )


def _pick(e: Emitter, indices: SSAValue, axis: int, position: Size) -> SSAValue:
    """The `position`-th entry of `indices` along `axis`, keeping the axis as size 1."""
    shape = list(shape_of(indices))
    shape[axis] = 1
    return _full_range_slice(e, indices, axis, position, e.add(position, 1), 1, shape)


class LowerSort(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SortOp, rewriter: PatternRewriter) -> None:
        axis = _sort_axis(op, op.input, op.dim.value.data)

        def build(e: Emitter) -> list[SSAValue]:
            indices = _sorting_indices(e, op.input, axis, op.descending is not None)
            values = _take_along(e, op.input, indices, axis)
            return [values, e.astype(indices, dtype_of(op.indices))]

        self.replace(op, rewriter, build)


class LowerTopk(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TopkOp, rewriter: PatternRewriter) -> None:
        axis = _sort_axis(op, op.input, op.dim.value.data)
        k = op.k.value.data

        def build(e: Emitter) -> list[SSAValue]:
            indices = _sorting_indices(e, op.input, axis, op.smallest is None)
            shape = list(shape_of(op.input))
            shape[axis] = k
            first = _full_range_slice(e, indices, axis, 0, k, 1, shape)
            return [_take_along(e, op.input, first, axis), e.astype(first, dtype_of(op.indices))]

        self.replace(op, rewriter, build)


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
    is_nan = e.unary("isnan", last_value, _with_dtype(last_value.type, i1))
    return e.where(is_nan, last_index, middle)


class LowerMedian(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MedianOp, rewriter: PatternRewriter) -> None:
        x = op.input
        dim = op.dim.value.data if op.dim is not None else None
        keep = op.keepdim is not None

        def build(e: Emitter) -> list[SSAValue]:
            if dim is None:
                flat = e.reshape(x, [_numel(e, e.dims(x))])
                indices = _sorting_indices(e, flat, 0, False)
                value = _take_along(e, flat, _lower_middle(e, flat, indices, 0), 0)
                return [e.reshape(value, [])]
            axis = _sort_axis(op, x, dim)
            indices = _sorting_indices(e, x, axis, False)
            middle = _lower_middle(e, x, indices, axis)
            values = _take_along(e, x, middle, axis)
            if not keep:
                values, middle = e.squeeze(values, [axis]), e.squeeze(middle, [axis])
            return [values, e.astype(middle, dtype_of(op.outputs[1]))]

        self.replace(op, rewriter, build)


class LowerKthvalue(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.KthvalueOp, rewriter: PatternRewriter) -> None:
        axis = _sort_axis(op, op.input, op.dim.value.data)
        k = op.k.value.data
        keep = op.keepdim is not None

        def build(e: Emitter) -> list[SSAValue]:
            indices = _pick(e, _sorting_indices(e, op.input, axis, False), axis, k - 1)
            values = _take_along(e, op.input, indices, axis)
            if not keep:
                values, indices = e.squeeze(values, [axis]), e.squeeze(indices, [axis])
            return [values, e.astype(indices, dtype_of(op.indices))]

        self.replace(op, rewriter, build)


SCAN_LOWERINGS: dict[str, type[IRDLOperation]] = {
    "aten.cumsum": mlx.CumsumOp,
    "aten.cumprod": mlx.CumprodOp,
    "aten.logcumsumexp": mlx.LogcumsumexpOp,
}


class LowerScan(AtenLowering):
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
    props: dict[str, Attribute] = {"axes": int_array([axis])}
    if dtype_of(x) != Float32Type():
        props["precise"] = UnitAttr()
    return e.emit(mlx.SoftmaxOp.build(operands=[x], result_types=[x.type], properties=props))


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------


def _resolve_inferred(e: Emitter, x: SSAValue, sizes: list[Size], result_shape: Sequence[int]) -> list[Size]:
    """Replaces ATen's `-1` size by the result's static size or a runtime size."""
    if -1 not in sizes:
        return sizes
    at = sizes.index(-1)
    if result_shape[at] != DYNAMIC:
        sizes[at] = result_shape[at]
        return sizes
    total: Size = 1
    for size in e.dims(x):
        total = e.mul(total, size)
    others: Size = 1
    for i, size in enumerate(sizes):
        if i != at:
            others = e.mul(others, size)
    sizes[at] = e.floordiv(total, others)
    return sizes


class LowerReshape(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ReshapeLikeOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            sizes = _resolve_inferred(
                e, op.input, _sizes(op.size_list(), op.sizes), shape_of(op.result)
            )
            return e.emit(mlx.ReshapeOp(op.input, sizes, op.result.type))

        self.replace(op, rewriter, build)


class LowerExpand(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ExpandOp, rewriter: PatternRewriter) -> None:
        def build(e: Emitter) -> SSAValue:
            sizes = _sizes(op.size_list(), op.sizes)
            lead = len(sizes) - rank_of(op.input)
            for i, size in enumerate(sizes):
                if size == -1:
                    sizes[i] = e.dim(op.input, i - lead)
            return e.emit(mlx.BroadcastToOp(op.input, sizes, op.result.type))

        self.replace(op, rewriter, build)


class LowerPermute(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.PermuteOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        perm = [normalize_axis(d, rank) for d in ints(op.dims)]
        self.replace(op, rewriter, lambda e: e.transpose(op.input, perm))


class LowerTranspose(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TransposeOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        a = normalize_axis(op.dim0.value.data, rank)
        b = normalize_axis(op.dim1.value.data, rank)
        perm = list(range(rank))
        perm[a], perm[b] = perm[b], perm[a]
        self.replace(op, rewriter, lambda e: e.transpose(op.input, perm))


class LowerUnsqueeze(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.UnsqueezeOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input) + 1)
        self.replace(op, rewriter, lambda e: e.expand_dims(op.input, [axis]))


class LowerSqueeze(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SqueezeOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.input)
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


def _full_range_slice(
    e: Emitter,
    x: SSAValue,
    axis: int,
    start: Size,
    stop: Size,
    step: int,
    result_shape: Sequence[int],
) -> SSAValue:
    rank = rank_of(x)
    starts: list[Size] = [0] * rank
    stops: list[Size] = e.dims(x)
    steps = [1] * rank
    starts[axis], stops[axis], steps[axis] = start, stop, step
    return e.slice(x, starts, stops, steps, result_shape)


_INT64_MAX = 2**63 - 1


def _clamp_end(e: Emitter, x: SSAValue, axis: int, end: Size) -> Size:
    """ATen's open end (`INT64_MAX`) as the dim's size."""
    size = shape_of(x)[axis]
    if isinstance(end, int) and (end >= _INT64_MAX or (size != DYNAMIC and end > size)):
        return e.dim(x, axis)
    return end


class LowerSlice(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SliceOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, end, step = _sizes(ints(op.static_bounds), op.bounds)
        if not isinstance(step, int):
            raise LoweringError(f"{op.name}: a runtime step is not supported")

        def build(e: Emitter) -> SSAValue:
            stop = _clamp_end(e, op.input, axis, end)
            return _full_range_slice(e, op.input, axis, start, stop, step, shape_of(op.result))

        self.replace(op, rewriter, build)


class LowerSelect(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SelectOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        (index,) = _sizes(ints(op.static_index), op.index)
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
            sliced = _full_range_slice(e, op.input, axis, index, stop, 1, kept)
            return e.squeeze(sliced, [axis])

        self.replace(op, rewriter, build)


class LowerNarrow(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.NarrowOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, length = _sizes(ints(op.static_bounds), op.bounds)

        def build(e: Emitter) -> SSAValue:
            return _full_range_slice(
                e, op.input, axis, start, e.add(start, length), 1, shape_of(op.result)
            )

        self.replace(op, rewriter, build)


class LowerCat(AtenLowering):
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
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.StackOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.result))
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            parts = [e.expand_dims(e.astype(v, dtype), [axis]) for v in op.inputs]
            return e.concatenate(parts, axis, op.result.type)

        self.replace(op, rewriter, build)


class LowerSplit(AtenLowering):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.SplitOp | aten.SplitWithSizesOp):
            return
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
                stops[a] = -_INT32_MAX
                steps[a] = -1
            return e.slice(op.input, starts, stops, steps, shape_of(op.result))

        self.replace(op, rewriter, build)


_INT32_MAX = 2**31 - 1


class LowerRepeat(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.RepeatOp, rewriter: PatternRewriter) -> None:
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.TileOp.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={"reps": op.repeats},
                )
            ),
        )


class LowerConstantPad(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ConstantPadNdOp, rewriter: PatternRewriter) -> None:
        pad = ints(op.pad)
        rank = rank_of(op.input)
        low, high = [0] * rank, [0] * rank
        for i in range(len(pad) // 2):
            low[rank - 1 - i], high[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
        if any(p < 0 for p in (*low, *high)):
            raise LoweringError(f"{op.name}: negative padding (cropping) is not supported yet")
        value = op.value.value.data if op.value is not None else 0.0
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.PadOp.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={
                        "low": int_array(low),
                        "high": int_array(high),
                        "value": FloatAttr(value, Float64Type()),
                    },
                )
            ),
        )


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _take(e: Emitter, x: SSAValue, indices: SSAValue, axis: int, result_type: Attribute) -> SSAValue:
    return e.emit(
        mlx.TakeOp.build(
            operands=[x, indices],
            result_types=[result_type],
            properties={"axis": IntegerAttr(axis, i64)},
        )
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
                    result_types=[_tensor(dtype_of(x), [*batch, *[s if isinstance(s, int) else DYNAMIC for s in slice_sizes]])],
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
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexSelectOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))

        def build(e: Emitter) -> SSAValue:
            index = op.index if rank_of(op.index) == 1 else e.reshape(op.index, [1])
            return _take(e, op.input, index, axis, op.result.type)

        self.replace(op, rewriter, build)


class LowerEmbedding(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.EmbeddingOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: _take(e, op.weight, op.indices, 0, op.result.type))


class LowerGather(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GatherOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.TakeAlongAxisOp.build(
                    operands=[op.input, op.index],
                    result_types=[op.result.type],
                    properties={"axis": IntegerAttr(axis, i64)},
                )
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
        positions = _arange(e, e.dim(index, d))
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
    torch_dtype = _TORCH_DTYPES[dtype]
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
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MaskedFillOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            filled = e.where(op.mask, e.as_tensor(op.value, dtype), op.input)
            if shape_of(filled) != shape_of(op.result):
                filled = e.broadcast_to(filled, e.dims(op.input))
            return filled

        self.replace(op, rewriter, build)


class LowerIndexPut(AtenLowering):
    """`x[indices] = values` → `mlx.scatter` with updates `broadcast(indices) ++ slice`."""

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
            # The shape `x[indices]` has in PyTorch; values broadcast to it.
            if in_place:
                indexed_shape = [*shape_of(x)[: axes[0]], *batch, *shape_of(x)[axes[-1] + 1 :]]
                indexed_sizes = [*[e.dim(x, d) for d in range(axes[0])], *batch, *[e.dim(x, d) for d in range(axes[-1] + 1, n)]]
            else:
                indexed_shape = [*batch, *[shape_of(x)[d] for d in rest]]
                indexed_sizes = [*batch, *[e.dim(x, d) for d in rest]]
            if DYNAMIC in batch:
                raise LoweringError(f"{op.name}: dynamic index lengths are not supported yet")
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
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.IndexCopyOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        axis = normalize_axis(op.dim.value.data, rank)

        def build(e: Emitter) -> SSAValue:
            source = e.astype(op.source, dtype_of(op.input))
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
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SliceScatterOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        start, _end, step = _sizes(ints(op.static_bounds), op.bounds)
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


# ---------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------


class LowerMatmul(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MatmulLikeOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: _matmul_typed(e, op.input, op.other, op.result.type))


def _matmul_typed(e: Emitter, a: SSAValue, b: SSAValue, result_type: Attribute) -> SSAValue:
    dtype = dtype_of_type(result_type)
    a, b = e.astype(a, dtype), e.astype(b, dtype)
    a1, b1 = rank_of(a) == 1, rank_of(b) == 1
    if a1:
        a = e.expand_dims(a, [0])
    if b1:
        b = e.expand_dims(b, [1])
    sa, sb = shape_of(a), shape_of(b)
    out = [*broadcast_shapes([sa[:-2], sb[:-2]]), sa[-2], sb[-1]]
    product = e.emit(mlx.MatmulOp.build(operands=[a, b], result_types=[_tensor(dtype, out)]))
    rank = len(out)
    squeeze = ([rank - 2] if a1 else []) + ([rank - 1] if b1 else [])
    return e.squeeze(product, squeeze)


def dtype_of_type(t: Attribute) -> Attribute:
    assert isinstance(t, TensorType)
    return t.get_element_type()


class LowerAddmm(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.AddmmOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        props = {k: v for k, v in (("alpha", op.alpha), ("beta", op.beta)) if v is not None}
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.AddmmOp.build(
                    operands=[e.astype(op.bias, dtype), e.astype(op.mat1, dtype), e.astype(op.mat2, dtype)],
                    result_types=[op.result.type],
                    properties=props,
                )
            ),
        )


class LowerLinear(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinearOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            weight = e.astype(op.weight, dtype)
            if rank_of(weight) == 2:
                weight = e.transpose(weight, [1, 0])
            out = _matmul_typed(e, e.astype(op.input, dtype), weight, op.result.type)
            if op.bias is not None:
                out = e.binary("add", out, e.astype(op.bias, dtype))
            return out

        self.replace(op, rewriter, build)


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------


def _expand_list(values: Sequence[int], count: int) -> list[int]:
    return list(values) * count if len(values) == 1 else list(values)


class LowerConvolution(AtenLowering):
    """NCHW convolution → channels-last `mlx.conv_general` between two transposes.

    A transposed convolution is the convolution of the input dilated by `stride` with
    the flipped kernel (MLX's own `conv_transpose`): stride 1, kernel dilation
    `dilation`, padding `dilation * (k - 1) - padding` low and that plus
    `output_padding` high (cropped after the convolution where it is negative), and
    the weight `[in, out/g, *k]` regrouped to `[out, in/g, *k]`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ConvolutionOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        spatial = rank - 2
        dtype = dtype_of(op.result)
        groups = op.groups.value.data
        transposed = op.transposed is not None
        if spatial == 3 and groups != 1:
            raise LoweringError(f"{op.name}: MLX has no grouped 3-d convolution (groups={groups})")
        to_last = [0, *range(2, rank), 1]
        to_first = [0, rank - 1, *range(1, rank - 1)]
        stride = _expand_list(ints(op.stride), spatial)
        padding = _expand_list(ints(op.padding), spatial)
        dilation = _expand_list(ints(op.dilation), spatial)
        out_shape = shape_of(op.result)
        result_shape = [out_shape[p] for p in to_last]
        if not transposed:
            options = {
                "stride": stride,
                "padding_lo": padding,
                "padding_hi": padding,
                "kernel_dilation": dilation,
                "input_dilation": [1] * spatial,
            }
            crop_lo, crop_hi = [0] * spatial, [0] * spatial
        else:
            kernel = shape_of(op.weight)[2:]
            if DYNAMIC in shape_of(op.weight):
                raise LoweringError(f"{op.name}: a transposed convolution needs a static weight shape")
            extra = _expand_list(ints(op.output_padding), spatial) if op.output_padding else [0] * spatial
            low = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
            high = [lo + x for lo, x in zip(low, extra)]
            options = {
                "stride": [1] * spatial,
                "padding_lo": [max(v, 0) for v in low],
                "padding_hi": [max(v, 0) for v in high],
                "kernel_dilation": dilation,
                "input_dilation": stride,
            }
            crop_lo, crop_hi = [max(-v, 0) for v in low], [max(-v, 0) for v in high]
        conv_shape = [
            *result_shape[:1],
            *(DYNAMIC if d == DYNAMIC else d + lo + hi for d, lo, hi in zip(result_shape[1:-1], crop_lo, crop_hi)),
            result_shape[-1],
        ]

        def build(e: Emitter) -> SSAValue:
            x = e.transpose(e.astype(op.input, dtype), to_last)
            weight = e.astype(op.weight, dtype)
            if transposed:
                weight = _regroup_transposed_weight(e, weight, groups)
            w = e.transpose(weight, to_last)
            conv = e.emit(
                mlx.ConvGeneralOp.build(
                    operands=[x, w],
                    result_types=[_tensor(dtype, conv_shape)],
                    properties={
                        **{name: int_array(values) for name, values in options.items()},
                        "groups": op.groups,
                        **({"flip": UnitAttr()} if transposed else {}),
                    },
                )
            )
            if any(crop_lo) or any(crop_hi):
                dims = e.dims(conv)
                stops: list[Size] = [
                    dims[0],
                    *(e.add(size, -hi) for size, hi in zip(dims[1:-1], crop_hi)),
                    dims[-1],
                ]
                conv = e.slice(conv, [0, *crop_lo, 0], stops, [1] * rank, result_shape)
            if op.bias is not None:
                conv = e.binary("add", conv, e.astype(op.bias, dtype))
            return e.transpose(conv, to_first)

        self.replace(op, rewriter, build)


def _regroup_transposed_weight(e: Emitter, weight: SSAValue, groups: int) -> SSAValue:
    """A transposed convolution's weight `[in, out/g, *k]` as the `[out, in/g, *k]`
    weight of the equivalent convolution."""
    rank = rank_of(weight)
    swap = [1, 0, *range(2, rank)]
    if groups == 1:
        return e.transpose(weight, swap)
    cin, cout_g, *kernel = shape_of(weight)
    grouped = e.reshape(weight, [groups, cin // groups, cout_g, *kernel])
    regrouped = e.transpose(grouped, [0, 2, 1, *range(3, rank + 1)])
    return e.reshape(regrouped, [groups * cout_g, cin // groups, *kernel])


def _pool_output(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


class LowerPool(AtenLowering):
    """N-d (2-d, 3-d) max/avg pooling as the max/sum over the kernel's strided slices of
    the padded input (MLX has no pooling primitive). Needs static spatial dims."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.PoolOp, rewriter: PatternRewriter) -> None:
        is_max = isinstance(op, aten.MaxPoolOp)
        n = op.SPATIAL
        shape = shape_of(op.input)
        rank = len(shape)
        lead = rank - n
        sizes = list(shape[lead:])
        if DYNAMIC in sizes:
            raise LoweringError(f"{op.name}: pooling needs static spatial dims")
        kernel = _expand_list(ints(op.kernel_size), n)
        stride = _expand_list(ints(op.stride) or kernel, n)
        pad = _expand_list(ints(op.padding), n)
        dilation = _expand_list(ints(op.dilation), n) if isinstance(op, aten.MaxPoolOp) else [1] * n
        ceil = op.ceil_mode is not None
        out = [_pool_output(*args, ceil) for args in zip(sizes, kernel, stride, pad, dilation)]
        # The window extent each spatial dim needs: (out - 1) * stride + dilated kernel.
        spans = [(o - 1) * s + d * (k - 1) + 1 for o, s, d, k in zip(out, stride, dilation, kernel)]
        # Extra high padding lets ceil-mode windows run past the edge.
        extra = [max(0, span - (size + 2 * p)) for span, size, p in zip(spans, sizes, pad)]
        dtype = dtype_of(op.result)

        def padded(e: Emitter, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
            if not any(low) and not any(high):
                return x
            count = rank_of(x) - n
            x_shape = shape_of(x)
            return e.emit(
                mlx.PadOp.build(
                    operands=[x],
                    result_types=[
                        _tensor(
                            dtype_of(x),
                            [*x_shape[:count], *(d + lo + hi for d, lo, hi in zip(x_shape[count:], low, high))],
                        )
                    ],
                    properties={
                        "low": int_array([0] * count + list(low)),
                        "high": int_array([0] * count + list(high)),
                        "value": FloatAttr(value, Float64Type()),
                    },
                )
            )

        def windows(e: Emitter, x: SSAValue, combine: str) -> SSAValue:
            count = rank_of(x) - n
            leading = e.dims(x)[:count]
            acc: SSAValue | None = None
            for offsets in itertools.product(*(range(k) for k in kernel)):
                starts: list[Size] = [*([0] * count), *(o * d for o, d in zip(offsets, dilation))]
                stops: list[Size] = [
                    *leading,
                    *(o * d + (m - 1) * s + 1 for o, d, m, s in zip(offsets, dilation, out, stride)),
                ]
                part = e.slice(x, starts, stops, [1] * count + stride, [*shape_of(x)[:count], *out])
                acc = part if acc is None else e.binary(combine, acc, part)
            assert acc is not None
            return acc

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            high = [p + x_ for p, x_ in zip(pad, extra)]
            if is_max:
                return windows(e, padded(e, x, pad, high, -math.inf), "maximum")
            total = windows(e, padded(e, x, pad, high, 0.0), "add")
            divisor_attr = op.properties.get("divisor_override")
            if isinstance(divisor_attr, IntegerAttr):
                return e.binary("divide", total, e.constant(divisor_attr.value.data, dtype))
            include_pad = op.properties.get("count_include_pad") is not None
            if include_pad and not any(extra):
                return e.binary("divide", total, e.constant(math.prod(kernel), dtype))
            # Count the window cells that are real input (or real padding with
            # count_include_pad): pool a tensor of ones the same way.
            ones = e.emit(
                mlx.OnesOp.build(
                    operands=[[]],
                    result_types=[_tensor(dtype, sizes)],
                    properties={"static_shape": int_array(sizes)},
                )
            )
            if include_pad:
                counted = padded(e, ones, pad, pad, 1.0)
                counted_pad = [0] * n
            else:
                counted, counted_pad = ones, pad
            counted_sizes = shape_of(counted)
            tail = [max(0, span - c - p) for span, c, p in zip(spans, counted_sizes, counted_pad)]
            counts = windows(e, padded(e, counted, counted_pad, tail, 0.0), "add")
            return e.binary("divide", total, counts)

        self.replace(op, rewriter, build)


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------


def _flatten_trailing(e: Emitter, x: SSAValue, count: int) -> SSAValue:
    if count == 1:
        return x
    dims = e.dims(x)
    flat: Size = 1
    for size in dims[-count:]:
        flat = e.mul(flat, size)
    return e.reshape(x, [*dims[:-count], flat])


def _eps_or_default(eps: FloatAttr | None, dtype: Attribute) -> float:
    if eps is not None:
        return eps.value.data
    return float(torch.finfo(_TORCH_DTYPES[dtype]).eps)


class LowerNorm(AtenLowering):
    """layer_norm / rms_norm over trailing dims → MLX's fast kernels over the last axis."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.LayerNormOp | aten.RmsNormOp):
            return
        count = len(ints(op.normalized_shape))
        dtype = dtype_of(op.result)
        eps = _eps_or_default(op.eps, dtype)
        is_layer = isinstance(op, aten.LayerNormOp)

        def build(e: Emitter) -> SSAValue:
            x = _flatten_trailing(e, e.astype(op.input, dtype), count)
            params = [op.weight] + ([op.bias] if isinstance(op, aten.LayerNormOp) else [])
            flat = [
                [e.reshape(e.astype(p, dtype), [math.prod(ints(op.normalized_shape))])] if p is not None else []
                for p in params
            ]
            op_cls = mlx.LayerNormOp if is_layer else mlx.RmsNormOp
            normed = e.emit(
                op_cls.build(
                    operands=[x, *flat],
                    result_types=[x.type],
                    properties={"eps": FloatAttr(eps, Float64Type())},
                )
            )
            return e.reshape(normed, e.dims(op.input)) if count > 1 else normed

        self.replace(op, rewriter, build)


def _channel_param(e: Emitter, param: SSAValue, rank: int, dtype: Attribute) -> SSAValue:
    """A per-channel `[C]` vector shaped `[C, 1, ...]` to broadcast against `[N, C, ...]`."""
    value = e.astype(param, dtype)
    return e.expand_dims(value, list(range(1, rank - 1))) if rank > 2 else value


class LowerBatchNorm(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.BatchNormOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        rank = rank_of(op.input)

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            mean = _channel_param(e, op.running_mean, rank, dtype)
            var = _channel_param(e, op.running_var, rank, dtype)
            scale = e.unary("rsqrt", e.binary("add", var, e.constant(op.eps.value.data, dtype)))
            if op.weight is not None:
                scale = e.binary("multiply", scale, _channel_param(e, op.weight, rank, dtype))
            out = e.binary("multiply", e.binary("subtract", x, mean), scale)
            if op.bias is not None:
                out = e.binary("add", out, _channel_param(e, op.bias, rank, dtype))
            return out

        self.replace(op, rewriter, build)


class LowerGroupNorm(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GroupNormOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        rank = rank_of(op.input)
        groups = op.num_groups.value.data
        eps = op.eps.value.data

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            dims = e.dims(x)
            grouped = e.reshape(x, [dims[0], groups, e.floordiv(_numel(e, dims[1:]), groups)])
            mean = e.reduce("mean", grouped, [2], True, dtype)
            centered = e.binary("subtract", grouped, mean)
            var = e.reduce("mean", e.unary("square", centered), [2], True, dtype)
            normed = e.binary(
                "multiply", centered, e.unary("rsqrt", e.binary("add", var, e.constant(eps, dtype)))
            )
            out = e.reshape(normed, dims)
            if op.weight is not None:
                out = e.binary("multiply", out, _channel_param(e, op.weight, rank, dtype))
            if op.bias is not None:
                out = e.binary("add", out, _channel_param(e, op.bias, rank, dtype))
            return out

        self.replace(op, rewriter, build)


def _numel(e: Emitter, sizes: Sequence[Size]) -> Size:
    total: Size = 1
    for size in sizes:
        total = e.mul(total, size)
    return total


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


class LowerAttention(AtenLowering):
    """SDPA → `mlx.scaled_dot_product_attention`. PyTorch's `is_causal` is upper-left
    aligned and MLX's `causal` lower-right: they agree only when the query and key
    lengths are provably equal; otherwise an explicit `j <= i` mask is built. A mask
    of the program's own is marked `zero_masked_rows`: PyTorch zeroes a row whose
    keys are all masked, and the lowering alone must keep that meaning."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ScaledDotProductAttentionOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        head_dim = shape_of(op.query)[-1]
        if op.scale is not None:
            scale = op.scale.value.data
        elif head_dim != DYNAMIC:
            scale = 1 / math.sqrt(head_dim)
        else:
            raise LoweringError(f"{op.name}: a dynamic head dim needs an explicit scale")
        rank = rank_of(op.query)
        if rank not in (3, 4):
            raise LoweringError(f"{op.name}: only 3-D and 4-D attention is supported")

        def build(e: Emitter) -> SSAValue:
            q, k, v = (e.astype(t, dtype) for t in (op.query, op.key, op.value))
            if rank == 3:
                q, k, v = (e.expand_dims(t, [0]) for t in (q, k, v))
            operands: list[SSAValue | list[SSAValue]] = [q, k, v]
            props: dict[str, Attribute] = {"scale": FloatAttr(scale, Float64Type())}
            mask: SSAValue | None = op.attn_mask
            if mask is not None:
                if not is_bool(dtype_of(mask)):
                    mask = e.astype(mask, dtype)
                if rank == 3 and rank_of(mask) == 3:
                    mask = e.expand_dims(mask, [0])
                props["zero_masked_rows"] = UnitAttr()
            elif op.is_causal is not None:
                lq, lk = shape_of(q)[2], shape_of(k)[2]
                same_length = (lq == lk and lq != DYNAMIC) or _same_runtime_length(op.query, op.key)
                if same_length:
                    props["mask_mode"] = StringAttr("causal")
                else:
                    mask = _upper_left_causal_mask(e, q, k)
            operands.append([mask] if mask is not None else [])
            out = e.emit(
                mlx.ScaledDotProductAttentionOp.build(
                    operands=operands,
                    result_types=[_tensor(dtype, [*shape_of(q)[:-1], shape_of(v)[-1]])],
                    properties=props,
                )
            )
            return e.squeeze(out, [0]) if rank == 3 else out

        self.replace(op, rewriter, build)


def _same_runtime_length(query: SSAValue, key: SSAValue) -> bool:
    """True when q and k are one SSA value (self-attention without a cache)."""
    return query is key


def _upper_left_causal_mask(e: Emitter, q: SSAValue, k: SSAValue) -> SSAValue:
    lq, lk = e.dim(q, 2), e.dim(k, 2)
    rows = _arange(e, lq)
    cols = _arange(e, lk)
    rows_col = e.expand_dims(rows, [1])
    cols_row = e.expand_dims(cols, [0])
    return e.binary("less_equal", cols_row, rows_col)


def _arange(e: Emitter, stop: Size) -> SSAValue:
    static, dynamic = index_operands([0, stop, 1])
    length = stop if isinstance(stop, int) else DYNAMIC
    return e.emit(
        mlx.ArangeOp.build(
            operands=[dynamic],
            result_types=[_tensor(i64, [length])],
            properties={"static_bounds": int_array(static)},
        )
    )


# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------


class LowerCreation(AtenLowering):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, aten.CreationOp | aten.LikeOp | aten.ScalarTensorOp):
            return
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            if isinstance(op, aten.ScalarTensorOp):
                return e.as_tensor(op.value, dtype)
            if isinstance(op, aten.LikeOp):
                sizes = e.dims(op.input)
            else:
                sizes = _sizes(op.size_list(), op.sizes)
            static, dynamic = index_operands(sizes)
            fill = getattr(op, "fill_value", None)
            if isinstance(op, aten.ZerosOp | aten.ZerosLikeOp):
                op_cls, operands = mlx.ZerosOp, [dynamic]
            elif isinstance(op, aten.OnesOp | aten.OnesLikeOp):
                op_cls, operands = mlx.OnesOp, [dynamic]
            else:
                assert fill is not None
                op_cls, operands = mlx.FullOp, [e.as_tensor(fill, dtype), dynamic]
            return e.emit(
                op_cls.build(
                    operands=operands,
                    result_types=[op.result.type],
                    properties={"static_shape": int_array(static)},
                )
            )

        self.replace(op, rewriter, build)


class LowerArange(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ArangeOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        bounds = [op.start, op.end, op.step]
        literals = [_scalar_literal(b) for b in bounds]
        integral = all(
            isinstance(b.type, IndexType | IntegerType) or (lit is not None and float(lit).is_integer())
            for b, lit in zip(bounds, literals)
        )
        length = shape_of(op.result)[0]

        def build(e: Emitter) -> SSAValue:
            if integral:
                sizes: list[Size] = [
                    int(lit) if lit is not None else b for b, lit in zip(bounds, literals)  # type: ignore[misc]
                ]
                static, dynamic = index_operands(sizes)
                ints_ = e.emit(
                    mlx.ArangeOp.build(
                        operands=[dynamic],
                        result_types=[_tensor(i64, [length])],
                        properties={"static_bounds": int_array(static)},
                    )
                )
                return e.astype(ints_, dtype)
            if length == DYNAMIC or any(lit is None for lit in literals):
                raise LoweringError(f"{op.name}: float bounds need a static length")
            start, _, step = (float(lit) for lit in literals)  # type: ignore[arg-type]
            steps = e.astype(_arange(e, length), Float32Type())
            values = e.binary(
                "add",
                e.binary("multiply", steps, e.constant(step, Float32Type())),
                e.constant(start, Float32Type()),
            )
            return e.astype(values, dtype)

        self.replace(op, rewriter, build)


class LowerDiagonal(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.DiagonalOp, rewriter: PatternRewriter) -> None:
        rank = len(shape_of(op.input))
        axis1, axis2 = (normalize_axis(d.value.data, rank) for d in (op.dim1, op.dim2))
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.DiagonalOp.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={
                        "offset": op.offset,
                        "axis1": IntegerAttr(axis1, i64),
                        "axis2": IntegerAttr(axis2, i64),
                    },
                )
            ),
        )


class LowerTriangle(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TriangleOp, rewriter: PatternRewriter) -> None:
        op_cls = mlx.TrilOp if op.name == "aten.tril" else mlx.TriuOp
        k = op.diagonal.value.data if op.diagonal is not None else 0
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                op_cls.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={"k": IntegerAttr(k, i64)},
                )
            ),
        )


class LowerSymSize(AtenLowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SymSizeOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        self.replace(op, rewriter, lambda e: e.index(e.dim(op.input, axis)))


LOWERING_PATTERNS: tuple[RewritePattern, ...] = (
    LowerUnary(),
    LowerBinary(),
    LowerGelu(),
    LowerWhere(),
    LowerClamp(),
    LowerToCopy(),
    LowerReduction(),
    LowerVariance(),
    LowerArgReduction(),
    LowerSort(),
    LowerTopk(),
    LowerMedian(),
    LowerKthvalue(),
    LowerScan(),
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
    LowerIndex(),
    LowerIndexSelect(),
    LowerEmbedding(),
    LowerGather(),
    LowerScatter(),
    LowerScatterReduce(),
    LowerMaskedFill(),
    LowerIndexPut(),
    LowerIndexCopy(),
    LowerSliceScatter(),
    LowerMatmul(),
    LowerAddmm(),
    LowerLinear(),
    LowerConvolution(),
    LowerPool(),
    LowerNorm(),
    LowerBatchNorm(),
    LowerGroupNorm(),
    LowerAttention(),
    LowerCreation(),
    LowerArange(),
    LowerTriangle(),
    LowerDiagonal(),
    LowerSymSize(),
)


def _describe(op: Operation) -> str:
    loc = op.location
    where = f"{loc.filename.data}:{loc.line.data}" if isinstance(loc, FileLineColLoc) else "unknown location"
    return f"{op.name} at {where}"


@dataclass
class _LocatedLowering(RewritePattern):
    """The lowering patterns, with each `LoweringError` prefixed by where the op that
    raised it comes from (the user's source line, from the importer's locations)."""

    patterns: GreedyRewritePatternApplier

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        try:
            self.patterns.match_and_rewrite(op, rewriter)
        except LoweringError as error:
            loc = op.location
            if not isinstance(loc, FileLineColLoc):
                raise
            raise LoweringError(f"{loc.filename.data}:{loc.line.data}: {error}") from error


@dataclass(frozen=True)
class ConvertAtenToMlxPass(ModulePass):
    """Lowers every aten op to mlx ops; fails listing any op left over."""

    name = "convert-aten-to-mlx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            PatternRewriteWalker(
                _LocatedLowering(GreedyRewritePatternApplier(list(LOWERING_PATTERNS))),
                apply_recursively=False,
            ).rewrite_module(op)
        except LoweringError as error:
            raise PassFailedException(str(error)) from error
        _erase_consumed_scalars(op)
        leftovers = [o for o in op.walk() if o.name.startswith("aten.")]
        if leftovers:
            raise PassFailedException(
                f"{len(leftovers)} aten op(s) could not be lowered:\n"
                + "\n".join("  " + _describe(o) for o in leftovers)
            )


def _erase_consumed_scalars(module: ModuleOp) -> None:
    """The aten ops' scalar operands (`arith.constant 2.5 : f64`) are folded into mlx
    constants of the tensor's type; left behind, an f64 scalar is a value no program
    can hold. A float scalar still used is a lowering bug, reported as such."""
    for constant in [o for o in module.walk() if isinstance(o, arith.ConstantOp)]:
        if constant.result.uses:
            if isinstance(constant.result.type, AnyFloat):
                raise PassFailedException(
                    f"{_describe(constant)}: a float scalar is still used after lowering "
                    f"by {', '.join(sorted({u.operation.name for u in constant.result.uses}))}"
                )
            continue
        Rewriter.erase_op(constant)


DEFAULT_PIPELINE = "convert-aten-to-mlx,canonicalize,optimize-mlx,cse,dce"


@dataclass(frozen=True)
class LowerToMlxPass(ModulePass):
    """The default pipeline: convert-aten-to-mlx, canonicalize, optimize-mlx, cse, dce."""

    name = "lower-to-mlx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.transforms.canonicalize import CanonicalizePass
        from xdsl.transforms.common_subexpression_elimination import (
            CommonSubexpressionElimination,
        )
        from xdsl.transforms.dead_code_elimination import DeadCodeElimination

        from mlxir.transforms.pattern_passes import OptimizeMlxPass

        ConvertAtenToMlxPass().apply(ctx, op)
        CanonicalizePass().apply(ctx, op)
        OptimizeMlxPass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)
        DeadCodeElimination().apply(ctx, op)


def lower(module: ModuleOp, pipeline: str | None = None) -> ModuleOp:
    """Lowers an aten-level module in place with `pipeline` (default: lower-to-mlx)."""
    from xdsl.passes import PassPipeline

    from mlxir.context import make_context, registered_passes

    ctx = make_context()
    PassPipeline.parse_spec(registered_passes(), pipeline or LowerToMlxPass.name).apply(ctx, module)
    module.verify()
    return module
